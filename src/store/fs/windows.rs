//! Opening a file on Windows. Others may read, write, rename and delete it while it is
//! open (`FILE_SHARE_DELETE` included: without it, an atomic replace of a file this
//! process holds open fails). Writers open a symbolic link or junction planted at the path
//! as itself (`FILE_FLAG_OPEN_REPARSE_POINT`), which the type check then refuses, so
//! nothing is written wherever it points. The file system has no FIFOs.

use super::Open;
use std::fs::OpenOptions;
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::path::Path;
use windows_sys::Win32::Storage::FileSystem::{
    FILE_FLAG_OPEN_REPARSE_POINT, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
};

pub(super) fn open(path: &Path, how: Open) -> io::Result<std::fs::File> {
    let mut options = OpenOptions::new();
    options.share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE);
    match how {
        Open::Read => options.read(true),
        // FlushFileBuffers needs a handle with write access.
        Open::Flush => options
            .write(true)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT),
        Open::Write => options
            .write(true)
            .create(true)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT),
        Open::Append => options
            .append(true)
            .create(true)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT),
    };
    options.open(path)
}

/// No FIFO can be opened from the file system.
pub(super) fn refused_as_fifo(_: &io::Error) -> bool {
    false
}

/// What an open file that is neither a file, a directory nor a link is: a device
/// (`NUL`, `CON`), as no other kind can be opened through a path.
pub(super) fn kind_name(_: &std::fs::FileType) -> &'static str {
    "a device"
}
