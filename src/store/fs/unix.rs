//! Opening a file on Unix: `std`'s `OpenOptions`, non-blocking (a FIFO must not make a
//! read wait forever), close-on-exec (as `std` always opens), and writers with
//! `O_NOFOLLOW`. Calling the `open` system call directly through `rustix` saved musl's
//! extra `fcntl` per open, 4 system calls per stop; measured against this plain version
//! it did not pay (docs/performance.md, "Each trick against plain code").

use super::Open;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

pub(super) fn open(path: &Path, how: Open) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    let nofollow = match how {
        Open::Read | Open::Flush => {
            options.read(true);
            0
        }
        Open::Write => {
            options.write(true).create(true);
            libc::O_NOFOLLOW
        }
        Open::Append => {
            options.append(true).create(true);
            libc::O_NOFOLLOW
        }
    };
    // `std` retries an open interrupted by a signal, and keeps the error code whole, which
    // tells a FIFO apart.
    options
        .mode(0o666)
        .custom_flags(libc::O_NONBLOCK | nofollow)
        .open(path)
}

/// A FIFO nobody reads refuses a non-blocking writer with ENXIO.
pub(super) fn refused_as_fifo(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENXIO)
}

/// What an open file that is neither a file, a directory nor a link is.
pub(super) fn kind_name(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}
