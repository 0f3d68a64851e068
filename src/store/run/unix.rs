//! Unix: SIGKILL to this process.

#[cfg(debug_assertions)]
pub(super) fn kill_this_process() {
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
}

/// Whether the process group `pid` leads still has a process that runs. A member that has
/// exited and waits to be reaped (a zombie) does not count: a session whose driver died is
/// reaped by the container's init, which may do so seconds later or never.
pub(super) fn group_alive(pid: i32) -> Option<bool> {
    let group = rustix::process::Pid::from_raw(pid)?;
    if rustix::process::test_kill_process_group(group).is_err() {
        return Some(false);
    }
    Some(running_member(pid).unwrap_or(true))
}

/// Whether a member of group `pid` runs, from `/proc`; `None` where that cannot be told.
#[cfg(target_os = "linux")]
fn running_member(pid: i32) -> Option<bool> {
    let group = pid.to_string();
    let mut seen = false;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        if !entry
            .file_name()
            .as_encoded_bytes()
            .iter()
            .all(u8::is_ascii_digit)
        {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (name) state ppid pgrp …`: the name may hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let mut fields = rest.split(' ');
        let (Some(state), Some(_ppid), Some(pgrp)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if pgrp == group {
            seen = true;
            if !matches!(state, "Z" | "X") {
                return Some(true);
            }
        }
    }
    // The group answered a signal, yet no member was seen: /proc hides it.
    seen.then_some(false)
}

/// Elsewhere the system's init reaps at once; a member that answers a signal runs.
#[cfg(not(target_os = "linux"))]
fn running_member(_pid: i32) -> Option<bool> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    #[cfg(target_os = "linux")]
    fn a_group_whose_members_have_all_exited_unreaped_is_not_alive() {
        let mut child = Command::new("sh")
            .args(["-c", "exit 0"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        // Not reaped yet: the exited leader stays a zombie until `wait`.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the child never exited"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(group_alive(pid), Some(false));
        child.wait().unwrap();
        assert_eq!(group_alive(pid), Some(false));
    }

    #[test]
    fn a_group_with_a_running_member_is_alive() {
        let mut child = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let alive = group_alive(pid);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(alive, Some(true));
    }
}
