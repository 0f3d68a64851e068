//! The plan lock on Unix: a POSIX record lock over the whole file (see the decision in
//! `lock.rs`); the announcement is written into the locked file, which others may read.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Takes the lock without waiting: false when another process holds it.
pub(super) fn try_lock(file: &File) -> io::Result<bool> {
    use rustix::fs::{FlockOperation, fcntl_lock};
    match fcntl_lock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::AGAIN || e == rustix::io::Errno::ACCESS => Ok(false),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn write_at_start(file: &File, bytes: &[u8]) -> io::Result<()> {
    file.write_all_at(bytes, 0)
}
