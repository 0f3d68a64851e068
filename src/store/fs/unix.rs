//! Opening a file on Unix: the `open` system call through `rustix`, non-blocking (a FIFO
//! must not make a read wait forever), close-on-exec, and writers with `O_NOFOLLOW`.

use super::Open;
use std::io;
use std::path::Path;

pub(super) fn open(path: &Path, how: Open) -> io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    if std::env::var_os("TASKIE_MEASURE_PLAIN_OPEN").is_some() {
        use std::os::unix::fs::OpenOptionsExt;
        let mut o = std::fs::OpenOptions::new();
        let nofollow = match how {
            Open::Read | Open::Flush => {
                o.read(true);
                0
            }
            Open::Write => {
                o.write(true).create(true);
                libc::O_NOFOLLOW
            }
            Open::Append => {
                o.append(true).create(true);
                libc::O_NOFOLLOW
            }
        };
        return o.custom_flags(libc::O_NONBLOCK | nofollow).open(path);
    }
    let flags = OFlags::NONBLOCK
        | OFlags::CLOEXEC
        | match how {
            Open::Read | Open::Flush => OFlags::RDONLY,
            Open::Write => OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW,
            Open::Append => OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE | OFlags::NOFOLLOW,
        };
    // The system call itself (the C library's open adds an fcntl for close-on-exec at
    // every call), and its error code kept whole to tell a FIFO apart.
    loop {
        match rustix::fs::open(path, flags, Mode::from_bits_truncate(0o666)) {
            Err(rustix::io::Errno::INTR) => continue,
            other => return other.map(std::fs::File::from).map_err(io::Error::from),
        }
    }
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
