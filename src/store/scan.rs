//! The hot part of plan selection (SPEC §5 step 6, §16): find the plan directory whose
//! newest `*.md` / `state.json` is the most recent; and taskie's one way to list a
//! directory. Selection runs on every stop, and its cost is one directory listing per plan
//! plus one `stat` per plan file.
//!
//! Directories are read through [`Lister`], which has two implementations: the plain one,
//! `std::fs` (`scan/plain.rs`), and on Linux a faster one (`scan/linux.rs`: `getdents64`
//! into a buffer of ours, directories opened relative to an open `.taskie/plans`, files
//! `fstatat`-ed relative to theirs). The tests run both on the same directory trees and
//! compare; docs/performance.md has what the fast one saves on a stop.
//!
//! With many plans the directories are shared out to a few scoped threads: almost all of
//! the time is spent in the kernel, so this divides the wall time by the cores used.

use std::ffi::{OsStr, OsString};
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

/// An open directory, as one implementation reads it.
trait Lister: Sized + Sync {
    /// What a listing reads into, reused from one directory to the next.
    type Buf: Send;
    /// What the listing says about an entry's type.
    type Kind: Copy;
    fn buf() -> Self::Buf;
    /// The directory at `path` (a link is followed).
    fn open(path: &Path) -> io::Result<Self>;
    /// A subdirectory; a symbolic link is not followed.
    fn open_dir(&self, name: &OsStr) -> io::Result<Self>;
    /// Calls `f(name, kind)` for every entry but `.` and `..`.
    fn for_each(
        &self,
        buf: &mut Self::Buf,
        f: &mut dyn FnMut(&OsStr, Self::Kind),
    ) -> io::Result<()>;
    /// The modification time of an entry (of a link itself, not its target).
    fn mtime(&self, name: &OsStr) -> Option<Stamp>;
    /// Whether an entry is a directory (not a link to one).
    fn is_dir(&self, name: &OsStr, kind: Self::Kind) -> bool;
}

#[cfg(target_os = "linux")]
mod linux;
// Compiled on Linux too, where the tests hold the fast listing to it.
#[cfg(any(test, not(target_os = "linux")))]
mod plain;

/// The implementation taskie runs.
#[cfg(target_os = "linux")]
type Fast = linux::Dir;
#[cfg(not(target_os = "linux"))]
type Fast = plain::Dir;

/// The plan (name, newest stamp) that wins: the newest stamp, ties to the greatest name.
/// `warn` gets one line per skipped subdirectory with an invalid name, in listing order.
pub fn newest_plan(plans: &Path, warn: &mut dyn FnMut(String)) -> io::Result<Option<String>> {
    newest_plan_with::<Fast>(plans, warn)
}

fn newest_plan_with<D: Lister>(
    plans: &Path,
    warn: &mut dyn FnMut(String),
) -> io::Result<Option<String>> {
    // The error of the listing the hook has always reported, naming the path.
    let root = D::open(plans).map_err(|e| fs_err::read_dir(plans).err().unwrap_or(e))?;
    let mut candidates: Vec<String> = Vec::new();
    let mut buf = D::buf();
    // A read error ends the listing, as it ends `std::fs::ReadDir`.
    let _ = root.for_each(&mut buf, &mut |name, kind| {
        if !root.is_dir(name, kind) {
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
fn newest_of<D: Lister>(root: &D, candidates: &[String], buf: D::Buf) -> Option<(Stamp, usize)> {
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
                    .spawn_scoped(scope, move || work(root, candidates, next, D::buf()))
                    .ok()
            })
            .collect();
        let mut best = work(root, candidates, next, buf);
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
fn work<D: Lister>(
    root: &D,
    candidates: &[String],
    next: &AtomicUsize,
    mut buf: D::Buf,
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
fn newest_file<D: Lister>(root: &D, name: &str, buf: &mut D::Buf) -> Option<Stamp> {
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
/// directory (not a link to one): taskie's one way to list a directory (a plan's own
/// directory is listed at every stop).
pub fn entries(dir: &Path) -> io::Result<Vec<(OsString, bool)>> {
    entries_named(dir, |_| true)
}

/// The [`entries`] whose name passes `wanted`: the others cost no allocation, which
/// matters in a directory of thousands of files where few are looked for.
pub fn entries_named(
    dir: &Path,
    wanted: impl Fn(&[u8]) -> bool,
) -> io::Result<Vec<(OsString, bool)>> {
    entries_with::<Fast>(dir, &wanted)
}

fn entries_with<D: Lister>(
    dir: &Path,
    wanted: &dyn Fn(&[u8]) -> bool,
) -> io::Result<Vec<(OsString, bool)>> {
    let named = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("failed to read directory `{}`: {e}", dir.display()),
        )
    };
    let d = D::open(dir).map_err(named)?;
    let mut buf = D::buf();
    let mut out = Vec::new();
    d.for_each(&mut buf, &mut |name, kind| {
        if wanted(name.as_encoded_bytes()) {
            out.push((name.to_owned(), d.is_dir(name, kind)));
        }
    })
    .map_err(named)?;
    Ok(out)
}

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

    fn at(secs: u64, nanos: u32) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::new(1_700_000_000 + secs, nanos)
    }

    fn touch(path: PathBuf, t: SystemTime) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let f = File::create(&path).unwrap();
        f.set_modified(t).unwrap();
    }

    /// The selection by the implementation taskie runs and by the plain one: the same,
    /// warnings included.
    fn check(plans: &Path) -> Option<String> {
        let mut plain_warn = Vec::new();
        let plain = newest_plan_with::<plain::Dir>(plans, &mut |w| plain_warn.push(w)).unwrap();
        let mut warn = Vec::new();
        let got = newest_plan(plans, &mut |w| warn.push(w)).unwrap();
        assert_eq!(got, plain);
        assert_eq!(warn, plain_warn);
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

    /// Every directory of `root`'s tree, `root` included (links not followed).
    fn dirs_of(root: &Path, out: &mut Vec<PathBuf>) {
        out.push(root.to_path_buf());
        for e in fs::read_dir(root).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                dirs_of(&e.path(), out);
            }
        }
    }

    /// The listing taskie runs and the plain one, on the same directory: the same
    /// entries, or an error of the same kind.
    fn same_entries(dir: &Path) {
        let all = |_: &[u8]| true;
        let sorted = |r: io::Result<Vec<(OsString, bool)>>| {
            r.map(|mut v| {
                v.sort();
                v
            })
            .map_err(|e| e.kind())
        };
        assert_eq!(
            sorted(entries_with::<Fast>(dir, &all)),
            sorted(entries_with::<plain::Dir>(dir, &all)),
            "{}",
            dir.display()
        );
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "Wine lists no entry for a link it made: run it on a real Windows machine"
    )]
    fn the_fast_listing_and_the_plain_one_agree_on_odd_trees() {
        let tmp = tempfile::tempdir().unwrap();
        let plans = tmp.path().join("plans");
        touch(plans.join("ok/plan.md"), at(10, 0));
        touch(plans.join("ok/state.json"), at(10, 5));
        // More names than one 8 KiB read of the directory holds.
        for i in 0..600 {
            let long = format!("task-{i:04}-{}.md", "x".repeat(40));
            touch(plans.join("many").join(long), at(i, 0));
        }
        touch(plans.join("many/notes.txt"), at(9_999, 0));
        touch(
            plans.join("before-1970/plan.md"),
            SystemTime::UNIX_EPOCH - Duration::new(86_400, 250),
        );
        fs::create_dir_all(plans.join("dir-named-md/odd.md")).unwrap();
        fs::create_dir_all(plans.join("state-is-a-dir/state.json")).unwrap();
        fs::create_dir(plans.join("empty")).unwrap();
        touch(plans.join("bad.name/plan.md"), at(99, 0));
        touch(plans.join(".hidden/plan.md"), at(99, 0));
        touch(plans.join("loose.md"), at(99, 0));
        touch(tmp.path().join("elsewhere/plan.md"), at(99, 0));
        link_dir(&tmp.path().join("elsewhere"), &plans.join("linked"));
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            // A name that is not UTF-8, a dangling link, a link named like a plan file,
            // and a FIFO where state.json belongs.
            touch(
                plans
                    .join(std::ffi::OsStr::from_bytes(b"not-utf8-\xff"))
                    .join("plan.md"),
                at(99, 0),
            );
            std::os::unix::fs::symlink(tmp.path().join("nowhere"), plans.join("dangling")).unwrap();
            fs::create_dir(plans.join("link-file")).unwrap();
            std::os::unix::fs::symlink(
                tmp.path().join("elsewhere/plan.md"),
                plans.join("link-file/plan.md"),
            )
            .unwrap();
            fs::create_dir(plans.join("fifo")).unwrap();
            rustix::fs::mknodat(
                rustix::fs::CWD,
                plans.join("fifo/state.json"),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
        }
        check(&plans);
        let mut dirs = Vec::new();
        dirs_of(tmp.path(), &mut dirs);
        for dir in &dirs {
            same_entries(dir);
            // Each directory of the tree taken as a `.taskie/plans` too.
            check(dir);
        }
        // What is not a directory.
        for odd in [
            "plans/missing",
            "plans/loose.md",
            "plans/linked",
            "plans/dangling",
        ] {
            same_entries(&tmp.path().join(odd));
        }
    }
}
