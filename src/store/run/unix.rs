//! Unix: SIGKILL to this process.

#[cfg(debug_assertions)]
pub(super) fn kill_this_process() {
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
}

/// Whether the process group `pid` leads still has a process.
pub(super) fn group_alive(pid: i32) -> Option<bool> {
    let pid = rustix::process::Pid::from_raw(pid)?;
    Some(rustix::process::test_kill_process_group(pid).is_ok())
}
