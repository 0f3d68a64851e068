//! Windows: a file has no permission bits to keep (its ACL is inherited from the
//! directory). NTFS journals a rename, and a directory cannot be flushed through a handle
//! opened for reading, so nothing syncs it. A rename over a file fails while anyone holds
//! that file open without `FILE_SHARE_DELETE` (an editor, a virus scanner, the search
//! indexer, the agent's client reading state.json): those let go within moments, so the
//! rename is tried again a few times before the error stands.

use super::with_path;
use crate::model::plan_file::TEMP_PREFIX;
use std::io;
use std::path::Path;
use std::time::Duration;
use windows_sys::Win32::Foundation::{ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION};

pub(super) fn temp_file_for(_target: &Path, dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
        .map_err(|e| with_path(e, dir))
}

/// The waits between tries: about a third of a second in all, far less than a stop's
/// budget, longer than a scanner's look at a small file.
pub(super) const REPLACE_RETRIES: &[Duration] = &[
    Duration::from_millis(10),
    Duration::from_millis(20),
    Duration::from_millis(40),
    Duration::from_millis(80),
    Duration::from_millis(160),
];

/// The errors a holder of the target causes, which pass when it lets go.
pub(super) fn may_pass(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(|c| c as u32),
        Some(ERROR_ACCESS_DENIED | ERROR_SHARING_VIOLATION)
    )
}

pub(super) fn directory_handle(_: &Path) -> io::Result<Option<std::fs::File>> {
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::super::write_unsynced;
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::{FILE_SHARE_READ, FILE_SHARE_WRITE};

    #[test]
    fn a_replace_waits_for_a_reader_that_forbids_it_to_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("state.json");
        std::fs::write(&target, b"old").unwrap();
        // As an editor or a scanner holds it: no FILE_SHARE_DELETE, so no rename over it.
        let held = std::fs::OpenOptions::new()
            .read(true)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
            .open(&target)
            .unwrap();
        let holder = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(held);
        });
        write_unsynced(&target, b"new").unwrap();
        holder.join().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    #[test]
    fn a_replace_that_stays_refused_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("state.json");
        std::fs::write(&target, b"old").unwrap();
        let _held = std::fs::OpenOptions::new()
            .read(true)
            .share_mode(FILE_SHARE_READ)
            .open(&target)
            .unwrap();
        let err = write_unsynced(&target, b"new").unwrap_err();
        assert!(err.to_string().contains("state.json"), "{err}");
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
    }
}
