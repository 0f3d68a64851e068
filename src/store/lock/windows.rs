//! The plan lock on Windows: `LockFileEx` on one byte far past any content. Windows
//! byte-range locks are mandatory: with the whole file locked, `taskie status` (another
//! process) could not read the announcement the holder writes at its start. The lock
//! belongs to the handle, and the system releases it when the holder's process ends.

use std::fs::File;
use std::io;
use std::os::windows::fs::FileExt;
use std::os::windows::io::AsRawHandle;
use windows_sys::Win32::Foundation::{ERROR_IO_PENDING, ERROR_LOCK_VIOLATION, HANDLE};
use windows_sys::Win32::Storage::FileSystem::{
    LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, LockFileEx,
};
use windows_sys::Win32::System::IO::OVERLAPPED;

/// The locked byte: no announcement (a few hundred bytes) ever reaches it.
const LOCKED_BYTE: u64 = 1 << 62;

/// Takes the lock without waiting: false when another handle holds it.
pub(super) fn try_lock(file: &File) -> io::Result<bool> {
    let mut at = OVERLAPPED::default();
    at.Anonymous.Anonymous.Offset = LOCKED_BYTE as u32;
    at.Anonymous.Anonymous.OffsetHigh = (LOCKED_BYTE >> 32) as u32;
    // SAFETY: the handle is open for the call's whole length (borrowed from `file`), and
    // `at` outlives the call, which does not keep it (the handle is not asynchronous, and
    // LOCKFILE_FAIL_IMMEDIATELY never leaves the request pending).
    let locked = unsafe {
        LockFileEx(
            file.as_raw_handle() as HANDLE,
            LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY,
            0,
            1,
            0,
            &mut at,
        )
    };
    if locked != 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error().map(|c| c as u32) {
        Some(ERROR_LOCK_VIOLATION | ERROR_IO_PENDING) => Ok(false),
        _ => Err(e),
    }
}

pub(super) fn write_at_start(file: &File, mut bytes: &[u8]) -> io::Result<()> {
    let mut at = 0u64;
    while !bytes.is_empty() {
        match file.seek_write(bytes, at) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                bytes = &bytes[n..];
                at += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Running, try_lock};

    /// Windows locks are mandatory: had the lock covered the announcement, this read (as
    /// `taskie status` makes it, through a handle of its own) would fail. Wine does not
    /// enforce byte-range locks, so only a real Windows machine proves it.
    #[test]
    fn the_announcement_reads_through_another_handle_while_the_lock_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let held = try_lock(dir.path(), "p").unwrap().unwrap();
        let running = Running {
            review: "plan-review".into(),
            iteration: 1,
            model: "opus".into(),
            since: "2026-01-01T00:00:00.000Z".into(),
            log: ".taskie/logs/x.log".into(),
        };
        held.announce(&running);
        let bytes = std::fs::read(dir.path().join("p.lock")).unwrap();
        assert_eq!(serde_json::from_slice::<Running>(&bytes).unwrap(), running);
        assert!(try_lock(dir.path(), "p").unwrap().is_none(), "still held");
    }
}
