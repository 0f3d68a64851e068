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

use std::io;
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
pub fn newest_plan(plans: &Path, warn: &mut dyn FnMut(String)) -> io::Result<Option<String>> {
    // The error of the listing the hook has always reported, naming the path.
    let root = sys::Dir::open(plans).map_err(|e| fs_err::read_dir(plans).err().unwrap_or(e))?;
    let mut candidates: Vec<String> = Vec::new();
    let mut buf = sys::Buf::new();
    // A read error ends the listing, as it ends `std::fs::ReadDir`.
    let _ = root.for_each(&mut buf, &mut |name, kind| {
        if name == "." || name == ".." || !root.is_dir(name, kind) {
            return;
        }
        match name.to_str() {
            Some(n) if crate::model::plan_file::valid_id(n) => candidates.push(n.to_owned()),
            _ => warn(format!(
                "skipping {}: not a valid plan id",
                plans.join(name).display()
            )),
        }
    });
    let best = newest_of(&root, &candidates, buf);
    Ok(best.map(|(_, i)| candidates[i].clone()))
}

/// The best of `candidates` (its stamp and index), scanned on up to [`MAX_THREADS`]
/// scoped threads. They take small batches from a shared counter rather than fixed
/// shares, so a helper that starts late (another process has its CPU) leaves its work
/// to the others instead of making them wait: never much slower than one thread.
fn newest_of(root: &sys::Dir, candidates: &[String], buf: sys::Buf) -> Option<(Stamp, usize)> {
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
        let mut best = {
            let _aside = (!helpers.is_empty()).then(sys::StepAside::new);
            work(root, candidates, next, buf)
        };
        for h in helpers {
            let theirs = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            best = newer(candidates, best, theirs);
        }
        best
    })
}

/// The newer of two (stamp, index) picks; a tie goes to the greatest name.
fn newer(
    candidates: &[String],
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
    candidates: &[String],
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
fn newest_file(root: &sys::Dir, name: &str, buf: &mut sys::Buf) -> Option<Stamp> {
    let dir = root.open_dir(name.as_ref()).ok()?;
    let mut newest = None;
    let _ = dir.for_each(buf, &mut |file, _| {
        let bytes = file.as_encoded_bytes();
        if (bytes.ends_with(b".md") || bytes == b"state.json")
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
        if name != "." && name != ".." && wanted(name.as_encoded_bytes()) {
            out.push((name.to_owned(), d.is_dir(name, kind)));
        }
    })
    .map_err(named)?;
    Ok(out)
}

// Linux lists with `getdents64` into a buffer of ours; elsewhere `std::fs` does it.
#[cfg(target_os = "linux")]
#[path = "scan/linux.rs"]
mod sys;
#[cfg(not(target_os = "linux"))]
#[path = "scan/portable.rs"]
mod sys;

#[cfg(test)]
mod tests {
    use super::*;

    /// A symbolic link to directory `to` at `at`.
    fn link_dir(to: &Path, at: &Path) {
        #[cfg(unix)]
        std::os::unix::fs::symlink(to, at).unwrap();
        #[cfg(windows)]
        std::os::windows::fs::symlink_dir(to, at).unwrap();
    }

    /// A directory opened so that its times can be set.
    fn open_dir_to_touch(dir: &Path) -> File {
        #[cfg(unix)]
        return File::open(dir).unwrap();
        #[cfg(windows)]
        {
            use std::os::windows::fs::OpenOptionsExt;
            // Windows opens a directory only with backup semantics, and sets its times
            // only through a handle that may write its attributes.
            const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
            fs::OpenOptions::new()
                .write(true)
                .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
                .open(dir)
                .unwrap()
        }
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "Wine lists no entry for a link it made: run it on a real Windows machine"
    )]
    fn entries_lists_files_and_directories_but_not_links_to_them_as_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("a.md"), "").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        link_dir(&d.join("sub"), &d.join("link"));
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
        let got = newest_plan(plans, &mut |w| got_warn.push(w)).unwrap();
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
        open_dir_to_touch(&plans.join("b/odd.md"))
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
        link_dir(&tmp.path().join("elsewhere"), &plans.join("linked"));
        fs::create_dir(plans.join("empty")).unwrap();
        assert_eq!(check(&plans).as_deref(), Some("ok"));
    }

    #[test]
    fn no_candidate_is_none_and_a_missing_dir_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(check(tmp.path()), None);
        fs::create_dir(tmp.path().join("empty")).unwrap();
        assert_eq!(check(tmp.path()), None);
        let err = newest_plan(&tmp.path().join("nope"), &mut |_| {}).unwrap_err();
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
