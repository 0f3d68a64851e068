//! The plain way to read directories: `std::fs` only, as any Rust program would. It is what
//! runs everywhere but Linux, and on Linux the reference the fast listing
//! (`scan/linux.rs`) is tested against: both run on the same directory trees and must
//! give the same answers.

use super::Stamp;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

pub struct Dir(PathBuf);

/// Whether an entry is a directory (not a link to one), from its listing.
#[derive(Clone, Copy)]
pub struct IsDir(bool);

impl super::Lister for Dir {
    type Buf = ();
    type Kind = IsDir;

    fn buf() {}

    fn open(path: &Path) -> io::Result<Dir> {
        if std::fs::metadata(path)?.is_dir() {
            Ok(Dir(path.to_path_buf()))
        } else {
            Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            ))
        }
    }

    fn open_dir(&self, name: &OsStr) -> io::Result<Dir> {
        let path = self.0.join(name);
        if std::fs::symlink_metadata(&path)?.is_dir() {
            Ok(Dir(path))
        } else {
            Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            ))
        }
    }

    fn for_each(&self, _: &mut (), f: &mut dyn FnMut(&OsStr, IsDir)) -> io::Result<()> {
        for entry in std::fs::read_dir(&self.0)? {
            // An entry that vanished or cannot be read is skipped, as `getdents64` skips it.
            let Ok(entry) = entry else { continue };
            let kind = IsDir(entry.file_type().is_ok_and(|t| t.is_dir()));
            f(&entry.file_name(), kind);
        }
        Ok(())
    }

    fn mtime(&self, name: &OsStr) -> Option<Stamp> {
        let m = std::fs::symlink_metadata(self.0.join(name)).ok()?;
        // As the system gives it: whole seconds rounded down, then the nanoseconds after.
        Some(match m.modified().ok()?.duration_since(UNIX_EPOCH) {
            Ok(after) => (after.as_secs() as i64, i64::from(after.subsec_nanos())),
            Err(before) => {
                let (secs, nanos) = (
                    before.duration().as_secs() as i64,
                    i64::from(before.duration().subsec_nanos()),
                );
                if nanos == 0 {
                    (-secs, 0)
                } else {
                    (-secs - 1, 1_000_000_000 - nanos)
                }
            }
        })
    }

    fn is_dir(&self, _: &OsStr, kind: IsDir) -> bool {
        kind.0
    }
}
