//! The hot part of plan selection (SPEC §5 step 6, §16): find the plan directory whose
//! newest `*.md` / `state.json` is the most recent. It runs on every stop, and its cost
//! is one directory listing per plan plus one `stat` per plan file, so it is written to
//! make exactly those system calls and no others:
//!
//! - on Linux the directories are opened relative to an open `.taskie/plans` (no path
//!   walk per plan) and read with `getdents64` directly (no `fstat` per `opendir`);
//!   each file is `fstatat`-ed relative to its directory's descriptor;
//! - with many plans the directories are shared out to a few threads: almost all of the
//!   time is spent in the kernel, so this divides the wall time by the cores used.
//!
//! Elsewhere it falls back to `std::fs` with the same results.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Modification time as (seconds, nanoseconds) since the epoch: orders like `SystemTime`.
pub type Stamp = (i64, i64);

/// Plans per thread below which another thread costs more than it saves.
const PLANS_PER_THREAD: usize = 24;
/// More threads than this stop paying off: the directories share one file system.
const MAX_THREADS: usize = 8;
/// The scanning threads need little stack: their buffers are on the heap.
const THREAD_STACK: usize = 256 * 1024;
/// Plans a thread takes at a time: small enough to share the tail evenly.
const BATCH: usize = 4;

/// The plan (name, newest stamp) that wins: the newest stamp, ties to the greatest name.
/// `warn` gets one line per skipped subdirectory with an invalid name, in listing order.
/// Plans for which `skip` is true are not candidates (plans held by another session).
pub fn newest_plan(
    plans: &Path,
    skip: &dyn Fn(&str) -> bool,
    warn: &mut dyn FnMut(String),
) -> io::Result<Option<String>> {
    // The error of the listing the hook has always reported, naming the path.
    let root = sys::Dir::open(plans).map_err(|e| fs_err::read_dir(plans).err().unwrap_or(e))?;
    let mut candidates: Vec<Vec<u8>> = Vec::new();
    let mut buf = sys::Buf::new();
    // A read error ends the listing, as it ends `std::fs::ReadDir`.
    let _ = root.for_each(&mut buf, &mut |name, kind| {
        if name == b"." || name == b".." || !root.is_dir(name, kind) {
            return;
        }
        match std::str::from_utf8(name) {
            Ok(n) if crate::model::plan_file::valid_id(n) => {
                if !skip(n) {
                    candidates.push(name.to_vec())
                }
            }
            _ => warn(format!(
                "skipping {}: not a valid plan id",
                plans.join(OsStr::from_bytes(name)).display()
            )),
        }
    });
    let candidates = Arc::new(candidates);
    let best = newest_of(Arc::new(root), Arc::clone(&candidates), buf);
    Ok(best.map(|(_, i)| String::from_utf8_lossy(&candidates[i]).into_owned()))
}

/// The best of `candidates` (its stamp and index), scanned on up to [`MAX_THREADS`]
/// threads. The threads take small batches from a shared counter rather than fixed
/// shares, so a helper that starts late leaves its work to the others instead of making
/// them wait: the scan is never slower than alone by more than the cost of starting it.
fn newest_of(
    root: Arc<sys::Dir>,
    candidates: Arc<Vec<Vec<u8>>>,
    buf: sys::Buf,
) -> Option<(Stamp, usize)> {
    let threads = if candidates.len() < 2 * PLANS_PER_THREAD {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(candidates.len() / PLANS_PER_THREAD)
            .min(MAX_THREADS)
    };
    let next = Arc::new(AtomicUsize::new(0));
    // A helper that cannot be started is simply not there: the others take its share.
    let helpers: Vec<_> = (1..threads)
        .filter_map(|_| {
            let (root, candidates, next) = (root.clone(), candidates.clone(), next.clone());
            let helper = std::thread::Builder::new()
                .stack_size(THREAD_STACK)
                .spawn(move || work(&root, &candidates, &next, sys::Buf::new()))
                .ok()?;
            sys::move_off_this_cpu(&helper);
            Some(helper)
        })
        .collect();
    let mut best = work(&root, &candidates, &next, buf);
    for h in helpers {
        let theirs = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        best = newer(&candidates, best, theirs);
    }
    best
}

/// The newer of two (stamp, index) picks; a tie goes to the greatest name.
fn newer(
    candidates: &[Vec<u8>],
    a: Option<(Stamp, usize)>,
    b: Option<(Stamp, usize)>,
) -> Option<(Stamp, usize)> {
    match (a, b) {
        (Some((ta, ia)), Some((tb, ib))) => {
            if (tb, &candidates[ib]) > (ta, &candidates[ia]) {
                b
            } else {
                a
            }
        }
        (a, None) => a,
        (None, b) => b,
    }
}

/// Scans batches of plans until none is left; the best seen, as (stamp, index).
fn work(
    root: &sys::Dir,
    candidates: &[Vec<u8>],
    next: &AtomicUsize,
    mut buf: sys::Buf,
) -> Option<(Stamp, usize)> {
    let to = |from: usize| (from + BATCH).min(candidates.len());
    let mut best = None;
    loop {
        let from = next.fetch_add(BATCH, Ordering::Relaxed);
        if from >= candidates.len() {
            return best;
        }
        for (i, name) in candidates.iter().enumerate().take(to(from)).skip(from) {
            if let Some(stamp) = newest_file(root, name, &mut buf) {
                best = newer(candidates, best, Some((stamp, i)));
            }
        }
    }
}

/// The newest stamp of a `*.md` or `state.json` directly in plan directory `name`;
/// `None` when there is none or the directory cannot be read.
fn newest_file(root: &sys::Dir, name: &[u8], buf: &mut sys::Buf) -> Option<Stamp> {
    let dir = root.open_dir(name).ok()?;
    let mut newest = None;
    let _ = dir.for_each(buf, &mut |file, _| {
        if (file.ends_with(b".md") || file == b"state.json")
            && let Some(t) = dir.mtime(file)
        {
            newest = newest.max(Some(t));
        }
    });
    newest
}

#[cfg(target_os = "linux")]
mod sys {
    //! Directories as raw descriptors, read with `getdents64`.

    use super::Stamp;
    use std::ffi::CString;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    /// `getdents64` output buffer: a plan directory fits many times over, and a large
    /// `.taskie/plans` takes a few calls (the cost is per entry, not per call).
    pub struct Buf(Vec<u8>);

    impl Buf {
        pub fn new() -> Buf {
            Buf(vec![0; 8 * 1024])
        }
    }

    pub struct Dir(OwnedFd);

    /// Lets a just-started helper thread run on another CPU than this thread's. A new
    /// thread tends to be queued on its creator's CPU and to wait there, idle CPUs or
    /// not, until the creator blocks or the scheduler rebalances (measured here: a
    /// quarter to half of the starts took 1.5-2 ms instead of 60 µs), which would
    /// serialise the scan. Best effort: on any failure the thread runs where it is.
    pub fn move_off_this_cpu<T>(helper: &std::thread::JoinHandle<T>) {
        use std::os::unix::thread::JoinHandleExt;
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: sched_getcpu has no preconditions; `set` is a plain C bit set for
        // which all-zero is valid; the pthread_t belongs to a thread not yet joined.
        unsafe {
            let cpu = libc::sched_getcpu();
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if cpu < 0 || libc::sched_getaffinity(0, size, &mut set) != 0 {
                return;
            }
            libc::CPU_CLR(cpu as usize, &mut set);
            if libc::CPU_COUNT(&set) > 0 {
                libc::pthread_setaffinity_np(helper.as_pthread_t(), size, &set);
            }
        }
    }

    /// Retries a call interrupted by a signal.
    fn retry(mut f: impl FnMut() -> libc::c_long) -> io::Result<libc::c_long> {
        loop {
            let r = f();
            if r >= 0 {
                return Ok(r);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    fn c_name(name: &[u8]) -> io::Result<CString> {
        CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    }

    impl Dir {
        pub fn open(path: &Path) -> io::Result<Dir> {
            let p = c_name(path.as_os_str().as_bytes())?;
            Dir::open_at(libc::AT_FDCWD, &p, 0)
        }

        /// A subdirectory; a symbolic link is not followed.
        pub fn open_dir(&self, name: &[u8]) -> io::Result<Dir> {
            Dir::open_at(self.0.as_raw_fd(), &c_name(name)?, libc::O_NOFOLLOW)
        }

        fn open_at(at: libc::c_int, path: &CString, extra: libc::c_int) -> io::Result<Dir> {
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC | extra;
            // SAFETY: `path` is a valid NUL-terminated string for the duration of the call.
            let fd = retry(|| unsafe { libc::openat(at, path.as_ptr(), flags) }.into())?;
            // SAFETY: openat returned a new descriptor that nothing else owns.
            Ok(Dir(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) }))
        }

        /// Calls `f(name, d_type)` for every entry, `.` and `..` included.
        pub fn for_each(&self, buf: &mut Buf, f: &mut dyn FnMut(&[u8], u8)) -> io::Result<()> {
            loop {
                let b = &mut buf.0;
                // SAFETY: the kernel writes at most `b.len()` bytes into `b`.
                let n = retry(|| unsafe {
                    libc::syscall(
                        libc::SYS_getdents64,
                        self.0.as_raw_fd(),
                        b.as_mut_ptr(),
                        b.len(),
                    )
                })? as usize;
                if n == 0 {
                    return Ok(());
                }
                // struct linux_dirent64 { u64 d_ino; i64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
                let mut at = 0;
                while at + 19 <= n {
                    let reclen = u16::from_ne_bytes([b[at + 16], b[at + 17]]) as usize;
                    if reclen < 19 || at + reclen > n {
                        return Err(io::Error::other("malformed directory entry"));
                    }
                    let kind = b[at + 18];
                    let raw = &b[at + 19..at + reclen];
                    let len = raw.iter().position(|&c| c == 0).unwrap_or(raw.len());
                    f(&raw[..len], kind);
                    at += reclen;
                }
            }
        }

        /// `lstat` of an entry, relative to this directory.
        fn stat(&self, name: &[u8]) -> Option<libc::stat> {
            let name = c_name(name).ok()?;
            // SAFETY: all-zero is a valid `stat`; the kernel fills it.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: valid descriptor, NUL-terminated name and writable `st`.
            let r = retry(|| unsafe {
                libc::fstatat(
                    self.0.as_raw_fd(),
                    name.as_ptr(),
                    &mut st,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
                .into()
            });
            r.ok().map(|_| st)
        }

        // The fields are narrower than i64 on 32-bit targets.
        #[allow(clippy::unnecessary_cast)]
        pub fn mtime(&self, name: &[u8]) -> Option<Stamp> {
            self.stat(name)
                .map(|st| (st.st_mtime as i64, st.st_mtime_nsec as i64))
        }

        /// Whether an entry is a directory (not a link to one), from `d_type` when the
        /// file system fills it in.
        pub fn is_dir(&self, name: &[u8], kind: u8) -> bool {
            match kind {
                libc::DT_DIR => true,
                libc::DT_UNKNOWN => self
                    .stat(name)
                    .is_some_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR),
                _ => false,
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    //! Portable fallback on `std::fs`, with the same results.

    use super::Stamp;
    use std::ffi::OsStr;
    use std::io;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};

    pub struct Buf;

    impl Buf {
        pub fn new() -> Buf {
            Buf
        }
    }

    pub struct Dir(PathBuf);

    pub fn move_off_this_cpu<T>(_: &std::thread::JoinHandle<T>) {}

    /// `d_type` stand-ins for the fallback.
    const DIR: u8 = 1;
    const OTHER: u8 = 0;

    impl Dir {
        pub fn open(path: &Path) -> io::Result<Dir> {
            fs_err::read_dir(path)?;
            Ok(Dir(path.to_path_buf()))
        }

        pub fn open_dir(&self, name: &[u8]) -> io::Result<Dir> {
            let path = self.0.join(OsStr::from_bytes(name));
            if std::fs::symlink_metadata(&path)?.is_dir() {
                Ok(Dir(path))
            } else {
                Err(io::Error::other("not a directory"))
            }
        }

        pub fn for_each(&self, _: &mut Buf, f: &mut dyn FnMut(&[u8], u8)) -> io::Result<()> {
            for entry in fs_err::read_dir(&self.0)? {
                let Ok(entry) = entry else { continue };
                let kind = if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    DIR
                } else {
                    OTHER
                };
                f(entry.file_name().as_bytes(), kind);
            }
            Ok(())
        }

        pub fn mtime(&self, name: &[u8]) -> Option<Stamp> {
            let m = std::fs::symlink_metadata(self.0.join(OsStr::from_bytes(name))).ok()?;
            Some((m.mtime(), m.mtime_nsec()))
        }

        pub fn is_dir(&self, _: &[u8], kind: u8) -> bool {
            kind == DIR
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{self, File};
    use std::path::PathBuf;
    use std::time::{Duration, SystemTime};

    /// The selection as first written with `std::fs`: the reference for the fast one.
    fn reference(plans: &Path, warn: &mut Vec<String>) -> Option<String> {
        let mut best: Option<(SystemTime, String)> = None;
        for entry in fs::read_dir(plans).unwrap().flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = entry.file_name();
            let Some(name) = name
                .to_str()
                .filter(|n| crate::model::plan_file::valid_id(n))
            else {
                warn.push(format!(
                    "skipping {}: not a valid plan id",
                    entry.path().display()
                ));
                continue;
            };
            let mut newest = None;
            for f in fs::read_dir(entry.path()).unwrap().flatten() {
                let n = f.file_name();
                let n = n.as_encoded_bytes();
                if (n.ends_with(b".md") || n == b"state.json")
                    && let Ok(t) = f.metadata().and_then(|m| m.modified())
                {
                    newest = newest.max(Some(t));
                }
            }
            let Some(newest) = newest else { continue };
            if best
                .as_ref()
                .is_none_or(|(t, n)| (newest, name) > (*t, n.as_str()))
            {
                best = Some((newest, name.to_owned()));
            }
        }
        best.map(|(_, n)| n)
    }

    fn at(secs: u64, nanos: u32) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::new(1_700_000_000 + secs, nanos)
    }

    fn touch(path: PathBuf, t: SystemTime) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let f = File::create(&path).unwrap();
        f.set_modified(t).unwrap();
    }

    /// Both implementations agree, warnings included.
    fn check(plans: &Path) -> Option<String> {
        let mut want_warn = Vec::new();
        let want = reference(plans, &mut want_warn);
        let mut got_warn = Vec::new();
        let got = newest_plan(plans, &|_| false, &mut |w| got_warn.push(w)).unwrap();
        assert_eq!(got, want);
        assert_eq!(got_warn, want_warn);
        got
    }

    #[test]
    fn the_newest_plan_file_wins_and_ties_go_to_the_greatest_name() {
        let tmp = tempfile::tempdir().unwrap();
        let plans = tmp.path();
        touch(plans.join("a/plan.md"), at(10, 0));
        touch(plans.join("b/plan.md"), at(5, 0));
        touch(plans.join("b/state.json"), at(10, 1));
        assert_eq!(check(plans).as_deref(), Some("b"), "nanoseconds count");
        touch(plans.join("c/tasks.md"), at(10, 1));
        assert_eq!(
            check(plans).as_deref(),
            Some("c"),
            "a tie goes to the greatest name"
        );
    }

    #[test]
    fn only_md_and_state_json_count() {
        let tmp = tempfile::tempdir().unwrap();
        let plans = tmp.path();
        touch(plans.join("a/plan.md"), at(10, 0));
        touch(plans.join("b/plan.md"), at(1, 0));
        touch(plans.join("b/notes.txt"), at(99, 0));
        touch(plans.join("b/state.json.bak"), at(99, 0));
        touch(plans.join("b/sub/deep.md"), at(99, 0));
        touch(plans.join("c/readme.txt"), at(99, 0));
        assert_eq!(check(plans).as_deref(), Some("a"));
        // A directory whose name ends in .md is stat-ed like a file, as it always was.
        fs::create_dir(plans.join("b/odd.md")).unwrap();
        File::open(plans.join("b/odd.md"))
            .unwrap()
            .set_modified(at(50, 0))
            .unwrap();
        assert_eq!(check(plans).as_deref(), Some("b"));
    }

    #[test]
    fn invalid_names_links_and_files_are_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let plans = tmp.path().join("plans");
        touch(plans.join("ok/plan.md"), at(1, 0));
        touch(plans.join("bad.name/plan.md"), at(99, 0));
        touch(plans.join("with space/plan.md"), at(99, 0));
        touch(plans.join("loose-file.md"), at(99, 0));
        touch(tmp.path().join("elsewhere/plan.md"), at(99, 0));
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), plans.join("linked")).unwrap();
        fs::create_dir(plans.join("empty")).unwrap();
        assert_eq!(check(&plans).as_deref(), Some("ok"));
    }

    #[test]
    fn no_candidate_is_none_and_a_missing_dir_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(check(tmp.path()), None);
        fs::create_dir(tmp.path().join("empty")).unwrap();
        assert_eq!(check(tmp.path()), None);
        let err = newest_plan(&tmp.path().join("nope"), &|_| false, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }

    #[test]
    fn many_plans_scanned_in_parallel_agree_with_the_reference() {
        let tmp = tempfile::tempdir().unwrap();
        let plans = tmp.path();
        let n = 4 * PLANS_PER_THREAD + 7;
        for winner in [0, n / 2, n - 1] {
            for i in 0..n {
                let t = if i == winner {
                    at(500, 0)
                } else {
                    at(i as u64 % 17, 0)
                };
                touch(plans.join(format!("p{i:03}/plan.md")), at(0, 0));
                touch(plans.join(format!("p{i:03}/state.json")), t);
            }
            assert_eq!(check(plans), Some(format!("p{winner:03}")));
        }
    }
}
