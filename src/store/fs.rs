//! The one way taskie opens a file it did not just create (a leaf of `store`: it imports
//! nothing of ours). Everything under `.taskie/` can be tampered with, so a file is opened
//! non-blocking and checked with `fstat` on the open handle before it is used: a FIFO would
//! make a plain read wait forever and a device such as /dev/zero would never end.

use std::io::{self, Read};
use std::path::Path;

// The system calls differ: each platform's open and its names for what is not a file.
#[cfg(unix)]
#[path = "fs/unix.rs"]
mod os;
#[cfg(windows)]
#[path = "fs/windows.rs"]
mod os;

/// How a file is opened. Writers never follow a symbolic link planted at the path (it could
/// point anywhere the user can write) and create the file when it is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// Read an existing file.
    Read,
    /// Write from the start, creating the file.
    Write,
    /// Append, creating the file.
    Append,
    /// An existing file, to force its content to disk: Windows flushes only a handle
    /// opened for writing; elsewhere it is opened for reading. Never created.
    Flush,
}

/// The most taskie reads of one plan file (tasks.md, state.json, a review file): far
/// beyond any real one, small enough that a runaway file costs little at every stop.
pub const PLAN_FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// Reads a whole file: `Ok(None)` when it does not exist; an error naming the file when it
/// is not a regular file or holds more than `limit` bytes.
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let (file, len) = match open_regular_sized(path, Open::Read) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    // Sized from the same fstat: one read for the whole file, one to see its end.
    let mut bytes = Vec::with_capacity(len.min(limit) as usize + 1);
    fs_err::File::from_parts(file, path)
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::other(format!(
            "{} is larger than the {} MiB taskie reads; shorten it (or move what does not belong there out \
             of .taskie/)",
            path.display(),
            limit / (1024 * 1024)
        )));
    }
    Ok(Some(bytes))
}

/// Opens `path` as `how` says, and refuses anything that is not a regular file, naming it.
pub fn open_regular(path: &Path, how: Open) -> io::Result<std::fs::File> {
    open_regular_sized(path, how).map(|(file, _)| file)
}

/// [`open_regular`], with the file's size from the same `fstat` (one system call less for
/// the callers that need it, on the every-stop path).
pub fn open_regular_sized(path: &Path, how: Open) -> io::Result<(std::fs::File, u64)> {
    let file = os::open(path, how).map_err(|e| {
        if os::refused_as_fifo(&e) {
            not_regular(path, "a FIFO or device")
        } else {
            io::Error::new(
                e.kind(),
                format!("failed to open file `{}`: {e}", path.display()),
            )
        }
    })?;
    let file = fs_err::File::from_parts(file, path);
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else if kind.is_symlink() {
            "a link"
        } else {
            os::kind_name(&kind)
        };
        return Err(not_regular(path, what));
    }
    Ok((file.into_file(), meta.len()))
}

fn not_regular(path: &Path, what: &str) -> io::Error {
    io::Error::other(format!(
        "{} is {what}, not a regular file; taskie never reads or writes such a file, so replace it with \
         a regular file (or remove it)",
        path.display()
    ))
}
