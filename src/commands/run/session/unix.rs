//! Unix: a session leads a process group of its own.

use std::path::Path;
use std::process::Command;

/// A group of its own: a session a crash of the driver left running is stopped, whole.
pub(super) fn own_group(cmd: &mut Command) {
    std::os::unix::process::CommandExt::process_group(cmd, 0);
}

/// Stops the process group of a session a killed driver left behind in this gate, so two
/// sessions never work in one worktree.
pub(super) fn stop_leftover(pidfile: &Path) {
    use rustix::process::{Pid, Signal, kill_process_group};
    let Some((raw, pid)) = std::fs::read_to_string(pidfile)
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .and_then(|raw| Some((raw, Pid::from_raw(raw)?)))
    else {
        return;
    };
    // Gone once no member runs: members that exited wait for the container's init to reap
    // them, which may take seconds, or never come.
    let running = || crate::store::run::group_alive(raw) == Some(true);
    for (signal, wait) in [(Signal::TERM, 50), (Signal::KILL, 50)] {
        if !running() {
            return;
        }
        let _ = kill_process_group(pid, signal);
        for _ in 0..wait {
            if !running() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}
