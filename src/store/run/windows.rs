//! Windows: the process terminated by the system, as `taskkill /f` does: no code of ours
//! runs after it.

#[cfg(debug_assertions)]
pub(super) fn kill_this_process() {
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, TerminateProcess};
    // SAFETY: the pseudo handle of the current process is always valid.
    unsafe {
        TerminateProcess(GetCurrentProcess(), 1);
    }
}

/// Windows: a session is not a process group here; nothing says whether it lives.
pub(super) fn group_alive(_pid: i32) -> Option<bool> {
    None
}
