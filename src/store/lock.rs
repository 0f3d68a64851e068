//! The per-plan lock (SPEC §5 step 7): one writer per plan at a time; the kernel
//! releases it if the holder dies, so a crash never leaves a plan locked.

use fs_err::os::unix::fs::OpenOptionsExt;
use std::fs::{File, TryLockError};
use std::io;
use std::path::Path;

/// Held while the guard lives.
#[derive(Debug)]
pub struct PlanLock {
    _file: File,
}

/// Takes the lock without waiting; `Ok(None)` when another process holds it.
pub fn try_lock(locks: &Path, plan: &str) -> io::Result<Option<PlanLock>> {
    fs_err::create_dir_all(locks)?;
    let path = locks.join(format!("{plan}.lock"));
    // O_NOFOLLOW: a lock file planted as a symbolic link would make `create` write a file
    // wherever it points; opening it fails instead (ELOOP), and the hook changes nothing.
    let file = fs_err::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)?
        .into_parts()
        .0;
    match file.try_lock() {
        Ok(()) => Ok(Some(PlanLock { _file: file })),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(io::Error::new(
            e.kind(),
            format!("cannot lock {}: {e}", path.display()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = try_lock(dir.path(), "p").unwrap();
        assert!(first.is_some());
        assert!(try_lock(dir.path(), "p").unwrap().is_none());
        assert!(
            try_lock(dir.path(), "other").unwrap().is_some(),
            "plans lock independently"
        );
        drop(first);
        assert!(try_lock(dir.path(), "p").unwrap().is_some());
    }
}
