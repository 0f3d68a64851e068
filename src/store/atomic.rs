//! The one way taskie rewrites a file (SPEC §3): temp file in the same directory,
//! write, rename over the target, so a kill at any instant leaves the old or the new
//! content. Only what must survive a crash of the machine is also forced to disk
//! ([`write_durable`]: fsync the file, rename, fsync the directory): state.json, and the review
//! file it points to, synced by the hook just before ([`sync_file`], SPEC §5 step 18).
//! The rest ([`write_unsynced`]: bindings, logs, the block count, the spend ledger) is not worth
//! an fsync at every stop: each fsync costs more than the whole hook's own work.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

// What a replacement keeps of the old file, making a rename durable, and what may
// briefly stand in a rename's way differ per platform.
#[cfg(unix)]
#[path = "atomic/unix.rs"]
mod os;
#[cfg(windows)]
#[path = "atomic/windows.rs"]
mod os;

use crate::model::plan_file::TEMP_PREFIX;

/// Replaces `path` with `bytes` so that a crash at any instant, of the process or of the
/// machine, leaves either the old or the new content, and the new one once this returns.
///
/// The new file keeps the permission bits of the file it replaces; a file that did not
/// exist gets 0666 less the umask, as any newly created file does.
pub fn write_durable(path: &Path, bytes: &[u8]) -> io::Result<()> {
    rewrite(path, bytes, true, || {})
}

/// [`write_durable`], calling `before_rename` once the new content is on disk and before it
/// replaces the old: there the caller waits for what must be durable before the file that
/// points to it (a review file being synced meanwhile, [`sync_file_in_background`]).
pub fn write_durable_after(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(),
) -> io::Result<()> {
    rewrite(path, bytes, true, before_rename)
}

/// Replaces `path` with `bytes` so that a kill of the process at any instant leaves either
/// the old or the new content; nothing is forced to disk, so a crash of the machine soon
/// after may leave the old one. Same permission rules as [`write_durable`].
pub fn write_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    rewrite(path, bytes, false, || {})
}

/// Forces the content of an existing regular file to disk (a review file the reviewer
/// wrote, before the state that points to it). Its directory entry is made durable by the
/// directory sync of the [`write_durable`] that follows in the same directory.
pub fn sync_file(path: &Path) -> io::Result<()> {
    let file = crate::store::fs::open_regular(path, crate::store::fs::Open::Flush)?;
    sync(&file, path)
}

/// A [`sync_file`] under way on a thread of its own, so that the disk flushes it and the
/// caller's next writes at the same time; [`Pending::wait`] gives its outcome.
pub enum Pending {
    Running(std::thread::JoinHandle<io::Result<()>>),
    /// No thread could start: synced on the caller's thread.
    Done(io::Result<()>),
}

/// Starts [`sync_file`] of `path` on another thread (on this one if no thread can start).
pub fn sync_file_in_background(path: PathBuf) -> Pending {
    let sync = {
        let path = path.clone();
        move || sync_file(&path)
    };
    match std::thread::Builder::new()
        .name("taskie-sync".into())
        .spawn(sync)
    {
        Ok(handle) => Pending::Running(handle),
        Err(_) => Pending::Done(sync_file(&path)),
    }
}

impl Pending {
    pub fn wait(self) -> io::Result<()> {
        match self {
            Pending::Running(handle) => handle
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the sync thread panicked"))),
            Pending::Done(done) => done,
        }
    }
}

/// Inserts `bytes` into the file at `path` at byte offset `at`, keeping every byte it held,
/// whatever its size and whether or not it is text: the file is streamed into the new one,
/// never read whole, and the new file replaces it (as [`write_unsynced`] does) only when it holds
/// all of the old one. A missing file becomes `bytes`.
pub fn insert(path: &Path, at: u64, bytes: &[u8]) -> io::Result<()> {
    let (mut old, len) =
        match crate::store::fs::open_regular_sized(path, crate::store::fs::Open::Read) {
            Ok(opened) => opened,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return write_unsynced(path, bytes),
            Err(e) => return Err(e),
        };
    rewrite_with(
        path,
        false,
        || {},
        // `move`: the old file is closed once copied, before the rename over it (Windows
        // refuses to replace a file that is open).
        move |new| {
            let head = io::copy(&mut io::Read::take(&mut old, at), new)?;
            new.write_all(bytes)?;
            let tail = io::copy(&mut old, new)?;
            if head + tail != len {
                return Err(io::Error::other(format!(
                    "{} changed while taskie rewrote it ({len} bytes before, {} copied); it was left as it was",
                    path.display(),
                    head + tail
                )));
            }
            Ok(())
        },
    )
}

fn rewrite(
    path: &Path,
    bytes: &[u8],
    durable: bool,
    before_rename: impl FnOnce(),
) -> io::Result<()> {
    rewrite_with(path, durable, before_rename, |f| f.write_all(bytes))
}

fn rewrite_with(
    path: &Path,
    durable: bool,
    before_rename: impl FnOnce(),
    fill: impl FnOnce(&mut std::fs::File) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = os::temp_file_for(path, dir)?;
    fill(tmp.as_file_mut()).map_err(|e| with_path(e, tmp.path()))?;
    if durable {
        sync(tmp.as_file(), path)?;
    }
    before_rename();
    pause_point("before-rename", path);
    fail_point("before-rename", path)?;
    persist(tmp, path)?;
    if durable {
        trace("rename", path);
    }
    pause_point("after-rename", path);
    if durable {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Renames `tmp` over `path`, trying again for a moment while something holds `path` open
/// in a way that forbids it (on Windows: an editor, a virus scanner, the search indexer).
fn persist(mut tmp: tempfile::NamedTempFile, path: &Path) -> io::Result<()> {
    let mut waits = os::REPLACE_RETRIES.iter();
    loop {
        match tmp.persist(path) {
            Ok(_) => return Ok(()),
            Err(e) => match waits.next() {
                Some(wait) if os::may_pass(&e.error) => {
                    std::thread::sleep(*wait);
                    tmp = e.file;
                }
                _ => return Err(with_path(e.error, path)),
            },
        }
    }
}

/// fsync, naming `path` (the file the data is for) in its error.
fn sync(file: &std::fs::File, path: &Path) -> io::Result<()> {
    pause_point("fsync", path);
    let synced = file.sync_all().map_err(|e| with_path(e, path));
    trace("fsync", path);
    synced
}

/// Test builds announce each finished fsync, and each durable rename, on stderr when
/// `TASKIE_TEST_PAUSE_AT` is `trace:fsync`, so a test can check which files a stop forces
/// to disk, and what is on disk before a rename.
fn trace(what: &str, path: &Path) {
    #[cfg(debug_assertions)]
    if crate::env::test_switches()
        .pause_at
        .as_deref()
        .is_some_and(|v| v.split(',').any(|d| d == "trace:fsync"))
    {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        eprintln!("taskie-hook: test {what} {name}");
    }
    #[cfg(not(debug_assertions))]
    let _ = (what, path);
}

/// Test-only: when `TASKIE_TEST_PAUSE_AT` is `<point>:<file name>` (e.g.
/// `before-rename:state.json`), announce it on stderr and sleep, so a test can `kill -9`
/// the process at exactly that instant: there is no other way to hit a window that lasts
/// microseconds, and proving crash consistency there is the point. `panic:<point>:<file
/// name>` panics there instead, to prove that a panic never reaches the user
/// (tests/hook.rs). `mark:<point>:<file name>` only announces it and goes on, so a test can
/// aim kills at the instants that follow (tests/e2e/kill_soak.rs). `slow:<point>:<file name>`
/// makes that step take 300 ms longer, so a test can tell what waits for it. Several
/// directives may be given, separated by commas. Compiled only with debug assertions, as
/// `cargo test` builds the binaries; a release build ignores the variable
/// (docs/reliability.md).
#[cfg(debug_assertions)]
pub fn pause_point(point: &str, path: &Path) {
    let Some(wants) = &crate::env::test_switches().pause_at else {
        return;
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let here = format!("{point}:{name}");
    // Several directives, comma-separated: e.g. a slow step while fsyncs are traced.
    for want in wants.split(',') {
        pause_at(want, &here);
    }
}

#[cfg(debug_assertions)]
fn pause_at(want: &str, here: &str) {
    if want == here {
        eprintln!("taskie-hook: test pause at {here}");
        std::thread::sleep(Duration::from_secs(60));
    } else if want.strip_prefix("panic:") == Some(here) {
        panic!("test panic at {here}");
    } else if want.strip_prefix("mark:") == Some(here) {
        eprintln!("taskie-hook: test mark at {here}");
    } else if want.strip_prefix("slow:") == Some(here) {
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Release builds: nothing.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn pause_point(_point: &str, _path: &Path) {}

/// Test-only, beside [`pause_point`]: `fail:<point>:<file name>` in `TASKIE_TEST_PAUSE_AT`
/// makes the write fail there, as a full disk would, so a test can see what the hook does
/// when a write it cannot skip fails (running as root, permissions cannot make it fail).
#[cfg(debug_assertions)]
fn fail_point(point: &str, path: &Path) -> io::Result<()> {
    let Some(wants) = &crate::env::test_switches().pause_at else {
        return Ok(());
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let here = format!("{point}:{name}");
    match wants
        .split(',')
        .any(|w| w.strip_prefix("fail:") == Some(&here))
    {
        true => Err(io::Error::other(format!("test failure at {here}"))),
        false => Ok(()),
    }
}

/// Release builds: nothing.
#[cfg(not(debug_assertions))]
#[inline(always)]
fn fail_point(_point: &str, _path: &Path) -> io::Result<()> {
    Ok(())
}

/// Makes a rename in `dir` durable.
fn sync_dir(dir: &Path) -> io::Result<()> {
    match os::directory_handle(dir)? {
        Some(handle) => sync(&handle, dir),
        None => Ok(()),
    }
}

fn with_path(err: io::Error, path: &Path) -> io::Error {
    io::Error::new(err.kind(), format!("{err} (file: {})", path.display()))
}

/// Deletes temporary files left in `dir` by a crashed writer. Only call it while holding
/// the plan lock, so no live writer's file is removed.
pub fn remove_leftovers(dir: &Path) {
    let Ok(entries) = crate::store::scan::entries_named(dir, is_temporary) else {
        return;
    };
    for (name, _) in entries {
        let _ = std::fs::remove_file(dir.join(name));
    }
}

/// A temporary file of ours, by its name.
fn is_temporary(name: &[u8]) -> bool {
    name.starts_with(TEMP_PREFIX.as_bytes())
}

/// Whether a file can be written in `dir` now: creates a temporary file (with the atomic
/// write prefix, so a crash leaves nothing the rules object to), writes a byte and removes
/// it. A read-only directory or a full disk shows up here (the file system reserves the
/// byte's block at the write; no fsync is needed to see ENOSPC).
pub fn probe(dir: &Path) -> io::Result<()> {
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
        .map_err(|e| with_path(e, dir))?;
    tmp.write_all(b"\n").map_err(|e| with_path(e, dir))?;
    tmp.close().map_err(|e| with_path(e, dir))
}

/// A temporary file in a shared directory older than this belongs to no live writer.
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(3600);

/// Deletes temporary files in `dir` (a directory several plans share, such as
/// `.taskie/logs`) older than `age` (in use: [`STALE_TEMP_AGE`]): no plan lock covers it,
/// so only files no live writer can still own, as each write lasts moments.
pub fn remove_stale_leftovers(dir: &Path, age: Duration) {
    // The name first: a log directory holds a file per review run, and only the rare
    // temporary one is worth a copy and a stat.
    let Ok(entries) = crate::store::scan::entries_named(dir, is_temporary) else {
        return;
    };
    for (name, _) in entries {
        let path = dir.join(name);
        let stale = std::fs::symlink_metadata(&path)
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|e| e > age);
        if stale {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("state.json");
        std::fs::write(&target, b"old").unwrap();
        write_durable(&target, b"new\n").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new\n");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("state.json")]);
    }

    #[test]
    fn removes_only_leftover_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".taskie-tmp-abc"), b"x").unwrap();
        std::fs::write(dir.path().join("plan.md"), b"x").unwrap();
        remove_leftovers(dir.path());
        assert!(!dir.path().join(".taskie-tmp-abc").exists());
        assert!(dir.path().join("plan.md").exists());
    }

    #[test]
    fn an_insert_keeps_every_byte_the_file_held() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("review.md");
        let mut old = b"> Failover: x.\n\n\xff\xfe not UTF-8 \x00".to_vec();
        old.extend(std::iter::repeat_n(b'y', 5 * 1024 * 1024));
        std::fs::write(&target, &old).unwrap();
        insert(&target, 16, b"> ids\n\n").unwrap();
        let new = std::fs::read(&target).unwrap();
        assert_eq!(new.len(), old.len() + 7);
        assert_eq!(&new[..16], &old[..16]);
        assert_eq!(&new[16..23], b"> ids\n\n");
        assert_eq!(&new[23..], &old[16..]);
        let missing = dir.path().join("new.md");
        insert(&missing, 0, b"head").unwrap();
        assert_eq!(std::fs::read(&missing).unwrap(), b"head");
    }

    #[test]
    fn names_the_path_when_the_directory_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("nope").join("state.json");
        let err = write_durable(&target, b"x").unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }
}
