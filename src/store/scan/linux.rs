//! Linux: directories as descriptors, read with `getdents64` through `rustix::fs::RawDir`
//! into a buffer of ours, each plan directory opened relative to `.taskie/plans` and each
//! file `fstatat`-ed relative to its directory. `std::fs::read_dir` would have the C library
//! allocate its directory stream (with musl, that one allocation sets up its whole
//! allocator at every stop) and open each directory by its full path. The plain
//! `std::fs` listing (`scan/plain.rs`) gives the same answers; the tests hold this one
//! to it, and docs/performance.md has what this one saves.

use super::Stamp;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub struct Dir(OwnedFd);

/// Retries a call interrupted by a signal.
fn retry<T>(mut f: impl FnMut() -> rustix::io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(Errno::INTR) => continue,
            r => return r.map_err(io::Error::from),
        }
    }
}

impl Dir {
    fn open_at(at: impl std::os::fd::AsFd, path: &[u8], extra: OFlags) -> io::Result<Dir> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | extra;
        retry(|| rustix::fs::openat(&at, path, flags, Mode::empty())).map(Dir)
    }

    /// `lstat` of an entry, relative to this directory.
    fn stat(&self, name: &OsStr) -> Option<rustix::fs::Stat> {
        retry(|| rustix::fs::statat(&self.0, name, AtFlags::SYMLINK_NOFOLLOW)).ok()
    }
}

impl super::Lister for Dir {
    /// `getdents64` output buffer: a plan directory fits many times over, and a large
    /// `.taskie/plans` takes a few calls (the cost is per entry, not per call).
    type Buf = Vec<MaybeUninit<u8>>;
    /// The entry's `d_type`.
    type Kind = FileType;

    fn buf() -> Self::Buf {
        vec![MaybeUninit::uninit(); 8 * 1024]
    }

    fn open(path: &Path) -> io::Result<Dir> {
        Dir::open_at(
            rustix::fs::CWD,
            path.as_os_str().as_encoded_bytes(),
            OFlags::empty(),
        )
    }

    /// A subdirectory; a symbolic link is not followed.
    fn open_dir(&self, name: &OsStr) -> io::Result<Dir> {
        Dir::open_at(&self.0, name.as_bytes(), OFlags::NOFOLLOW)
    }

    fn for_each(&self, buf: &mut Self::Buf, f: &mut dyn FnMut(&OsStr, FileType)) -> io::Result<()> {
        let mut entries = RawDir::new(&self.0, buf);
        while let Some(entry) = entries.next() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                f(OsStr::from_bytes(name), entry.file_type());
            }
        }
        Ok(())
    }

    // The fields are narrower than i64 on 32-bit targets.
    #[allow(clippy::unnecessary_cast)]
    fn mtime(&self, name: &OsStr) -> Option<Stamp> {
        self.stat(name)
            .map(|st| (st.st_mtime as i64, st.st_mtime_nsec as i64))
    }

    /// From `d_type` when the file system fills it in.
    fn is_dir(&self, name: &OsStr, kind: FileType) -> bool {
        match kind {
            FileType::Directory => true,
            FileType::Unknown => self
                .stat(name)
                .is_some_and(|st| FileType::from_raw_mode(st.st_mode).is_dir()),
            _ => false,
        }
    }
}
