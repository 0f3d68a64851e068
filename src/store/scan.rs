//! The hot part of plan selection (SPEC §5 step 6, §16): find the plan directory whose
//! newest `*.md` / `state.json` is the most recent. It runs on every stop, and its cost
//! is one directory listing per plan plus one `stat` per plan file, so it is written to
//! make exactly those system calls and no others:
//!
//! - on Linux the directories are opened relative to an open `.taskie/plans` (no path
//!   walk per plan) and read with `getdents64` through `rustix::fs::RawDir` (no `fstat`
//!   per `opendir`); each file is `fstatat`-ed relative to its directory's descriptor;
//! - with many plans the directories are shared out to a few scoped threads: almost all
//!   of the time is spent in the kernel, so this divides the wall time by the cores used;
//!   the creating thread steps off its CPU so that the helpers start at once.
//!
//! Elsewhere it falls back to `std::fs` with the same results.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
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
    let best = newest_of(&root, &candidates, buf);
    Ok(best.map(|(_, i)| String::from_utf8_lossy(&candidates[i]).into_owned()))
}

/// The best of `candidates` (its stamp and index), scanned on up to [`MAX_THREADS`]
/// scoped threads. They take small batches from a shared counter rather than fixed
/// shares, so a helper that starts late (another process has its CPU) leaves its work
/// to the others instead of making them wait: never much slower than one thread.
fn newest_of(root: &sys::Dir, candidates: &[Vec<u8>], buf: sys::Buf) -> Option<(Stamp, usize)> {
    let threads = if candidates.len() < 2 * PLANS_PER_THREAD {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(candidates.len() / PLANS_PER_THREAD)
            .min(MAX_THREADS)
    };
    let next = AtomicUsize::new(0);
    let next = &next;
    std::thread::scope(|scope| {
        // A helper that cannot be started is simply not there: the others take its share.
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .stack_size(THREAD_STACK)
                    .spawn_scoped(scope, move || work(root, candidates, next, sys::Buf::new()))
                    .ok()
            })
            .collect();
        // Only once helpers exist: this thread leaves their CPU (see `StepAside`).
        let aside = (!helpers.is_empty()).then(sys::StepAside::new);
        let mut best = work(root, candidates, next, buf);
        drop(aside);
        for h in helpers {
            let theirs = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            best = newer(candidates, best, theirs);
        }
        best
    })
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
    let mut best = None;
    loop {
        let from = next.fetch_add(BATCH, Ordering::Relaxed);
        if from >= candidates.len() {
            return best;
        }
        let to = (from + BATCH).min(candidates.len());
        for (i, name) in candidates.iter().enumerate().take(to).skip(from) {
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

/// The entries of directory `dir` (without `.` and `..`), each with whether it is a
/// directory (not a link to one): taskie's one way to list a directory. On Linux read
/// with `getdents64` into a buffer of ours, where `std::fs::read_dir` has the C library
/// allocate one (musl sets up its whole allocator for it): a plan's own directory is
/// listed at every stop.
pub fn entries(dir: &Path) -> io::Result<Vec<(std::ffi::OsString, bool)>> {
    entries_named(dir, |_| true)
}

/// The [`entries`] whose name passes `wanted`: the others cost no allocation, which
/// matters in a directory of thousands of files where few are looked for.
pub fn entries_named(
    dir: &Path,
    wanted: impl Fn(&[u8]) -> bool,
) -> io::Result<Vec<(std::ffi::OsString, bool)>> {
    let named = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("failed to read directory `{}`: {e}", dir.display()),
        )
    };
    let d = sys::Dir::open(dir).map_err(named)?;
    let mut buf = sys::Buf::new();
    let mut out = Vec::new();
    d.for_each(&mut buf, &mut |name, kind| {
        if name != b"." && name != b".." && wanted(name) {
            out.push((OsStr::from_bytes(name).to_owned(), d.is_dir(name, kind)));
        }
    })
    .map_err(named)?;
    Ok(out)
}

#[cfg(target_os = "linux")]
mod sys {
    //! Directories as descriptors, read with `getdents64` through `rustix::fs::RawDir`.

    use super::Stamp;
    use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};
    use rustix::io::Errno;
    use std::io;
    use std::mem::MaybeUninit;
    use std::os::fd::OwnedFd;
    use std::path::Path;

    /// `getdents64` output buffer: a plan directory fits many times over, and a large
    /// `.taskie/plans` takes a few calls (the cost is per entry, not per call).
    pub struct Buf(Vec<MaybeUninit<u8>>);

    impl Buf {
        pub fn new() -> Buf {
            Buf(vec![MaybeUninit::uninit(); 8 * 1024])
        }
    }

    pub struct Dir(OwnedFd);

    /// Moves the scanning thread off the CPU it runs on, for the length of the scan, and
    /// back to all its CPUs on drop. A just-started helper thread tends to be queued on
    /// its creator's CPU and to wait there, idle CPUs or not, until the creator blocks or
    /// the scheduler rebalances (measured here: a quarter to half of the starts took
    /// 1.5-2 ms instead of 60 µs), which would serialise the scan. Leaving that CPU to the
    /// helpers lets them start at once. Best effort: on any failure nothing moves.
    pub struct StepAside(Option<rustix::thread::CpuSet>);

    impl StepAside {
        pub fn new() -> StepAside {
            let Ok(all) = rustix::thread::sched_getaffinity(None) else {
                return StepAside(None);
            };
            let mut others = all;
            others.unset(rustix::thread::sched_getcpu());
            let moved =
                others.count() > 0 && rustix::thread::sched_setaffinity(None, &others).is_ok();
            StepAside(moved.then_some(all))
        }
    }

    impl Drop for StepAside {
        fn drop(&mut self) {
            // Restored before anything else runs on this thread: the reviewer, started
            // later, inherits this thread's CPU set.
            if let Some(all) = &self.0 {
                let _ = rustix::thread::sched_setaffinity(None, all);
            }
        }
    }

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
        pub fn open(path: &Path) -> io::Result<Dir> {
            Dir::open_at(
                rustix::fs::CWD,
                path.as_os_str().as_encoded_bytes(),
                OFlags::empty(),
            )
        }

        /// A subdirectory; a symbolic link is not followed.
        pub fn open_dir(&self, name: &[u8]) -> io::Result<Dir> {
            Dir::open_at(&self.0, name, OFlags::NOFOLLOW)
        }

        fn open_at(at: impl std::os::fd::AsFd, path: &[u8], extra: OFlags) -> io::Result<Dir> {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | extra;
            retry(|| rustix::fs::openat(&at, path, flags, Mode::empty())).map(Dir)
        }

        /// Calls `f(name, type)` for every entry, `.` and `..` included.
        pub fn for_each(
            &self,
            buf: &mut Buf,
            f: &mut dyn FnMut(&[u8], FileType),
        ) -> io::Result<()> {
            let mut entries = RawDir::new(&self.0, &mut buf.0);
            while let Some(entry) = entries.next() {
                let entry = entry?;
                f(entry.file_name().to_bytes(), entry.file_type());
            }
            Ok(())
        }

        /// `lstat` of an entry, relative to this directory.
        fn stat(&self, name: &[u8]) -> Option<rustix::fs::Stat> {
            retry(|| rustix::fs::statat(&self.0, name, AtFlags::SYMLINK_NOFOLLOW)).ok()
        }

        // The fields are narrower than i64 on 32-bit targets.
        #[allow(clippy::unnecessary_cast)]
        pub fn mtime(&self, name: &[u8]) -> Option<Stamp> {
            self.stat(name)
                .map(|st| (st.st_mtime as i64, st.st_mtime_nsec as i64))
        }

        /// Whether an entry is a directory (not a link to one), from `d_type` when the
        /// file system fills it in.
        pub fn is_dir(&self, name: &[u8], kind: FileType) -> bool {
            match kind {
                FileType::Directory => true,
                FileType::Unknown => self
                    .stat(name)
                    .is_some_and(|st| FileType::from_raw_mode(st.st_mode).is_dir()),
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

    #[test]
    fn entries_lists_files_and_directories_but_not_links_to_them_as_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("a.md"), "").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::os::unix::fs::symlink(d.join("sub"), d.join("link")).unwrap();
        let mut got = entries(d).unwrap();
        got.sort();
        let want: Vec<(std::ffi::OsString, bool)> = vec![
            ("a.md".into(), false),
            ("link".into(), false),
            ("sub".into(), true),
        ];
        assert_eq!(got, want);
        let missing = entries(&d.join("none")).unwrap_err().to_string();
        assert!(missing.contains("none"), "names the directory: {missing}");
    }
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
