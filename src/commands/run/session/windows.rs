//! Windows: a session gets a console process group of its own; one a crash of the
//! driver left running is ended by its pid (its leader only: Windows has no kill of a
//! process group).

use std::path::Path;
use std::process::Command;

pub(super) fn own_group(cmd: &mut Command) {
    use std::os::windows::process::CommandExt;
    use windows_sys::Win32::System::Threading::CREATE_NEW_PROCESS_GROUP;
    cmd.creation_flags(CREATE_NEW_PROCESS_GROUP);
}

/// Ends the session whose pid `pidfile` holds, if it still runs.
pub(super) fn stop_leftover(pidfile: &Path) {
    use windows_sys::Win32::Foundation::CloseHandle;
    use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_TERMINATE, TerminateProcess};
    let Some(pid) = std::fs::read_to_string(pidfile)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
    else {
        return;
    };
    // SAFETY: opening a process by id has no precondition; the handle, when it opened, is
    // used while open and closed once.
    unsafe {
        let h = OpenProcess(PROCESS_TERMINATE, 0, pid);
        if !h.is_null() {
            TerminateProcess(h, 1);
            CloseHandle(h);
        }
    }
}
