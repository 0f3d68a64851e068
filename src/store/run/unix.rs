//! Unix: SIGKILL to this process.

pub(super) fn kill_this_process() {
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
}
