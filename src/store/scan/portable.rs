//! Everywhere but Linux: `std::fs`, with the same results.

use super::Stamp;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

pub struct Buf;

impl Buf {
    pub fn new() -> Buf {
        Buf
    }
}

pub struct Dir(PathBuf);

/// Nothing to do without the Linux scheduler calls.
pub struct StepAside;

impl StepAside {
    pub fn new() -> StepAside {
        StepAside
    }
}

/// `d_type` stand-ins for the fallback.
const DIR: u8 = 1;
const OTHER: u8 = 0;

impl Dir {
    pub fn open(path: &Path) -> io::Result<Dir> {
        fs_err::read_dir(path)?;
        Ok(Dir(path.to_path_buf()))
    }

    pub fn open_dir(&self, name: &OsStr) -> io::Result<Dir> {
        let path = self.0.join(name);
        if std::fs::symlink_metadata(&path)?.is_dir() {
            Ok(Dir(path))
        } else {
            Err(io::Error::other("not a directory"))
        }
    }

    pub fn for_each(&self, _: &mut Buf, f: &mut dyn FnMut(&OsStr, u8)) -> io::Result<()> {
        for entry in fs_err::read_dir(&self.0)? {
            let Ok(entry) = entry else { continue };
            let kind = if entry.file_type().is_ok_and(|t| t.is_dir()) {
                DIR
            } else {
                OTHER
            };
            f(&entry.file_name(), kind);
        }
        Ok(())
    }

    pub fn mtime(&self, name: &OsStr) -> Option<Stamp> {
        let m = std::fs::symlink_metadata(self.0.join(name)).ok()?;
        let since = m.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        Some((since.as_secs() as i64, i64::from(since.subsec_nanos())))
    }

    pub fn is_dir(&self, _: &OsStr, kind: u8) -> bool {
        kind == DIR
    }
}
