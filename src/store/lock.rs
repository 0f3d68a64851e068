//! The per-plan lock (SPEC §5 step 7): one writer per plan at a time; the kernel
//! releases it the moment the holder dies, so a crash never leaves a plan locked.
//!
//! Decision: a POSIX record lock (`fcntl(F_SETLK)`), not `flock`. A `flock` belongs to
//! the open file, which every child shares from `fork` until its `exec` closes the
//! descriptor: a hook killed in that window left the lock held by a child for a moment.
//! A record lock belongs to the process: children never hold it, and it goes with the
//! process. Two rules come with it, kept here: one process must not take the same lock
//! twice (the kernel would grant it), so holders are also registered in-process; and
//! closing any descriptor of the file drops the lock, so this process never opens a lock
//! file it holds (see [`running`]).

use crate::model::text::minutes_seconds;
use crate::store::fs;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

// Taking the lock and writing the announcement beside it differ per platform.
#[cfg(unix)]
#[path = "lock/unix.rs"]
mod os;
#[cfg(windows)]
#[path = "lock/windows.rs"]
mod os;

/// The lock files this process holds: one or two, so a list (a hash set would be the
/// only hashing of a stop, and its randomly keyed hasher costs a system call).
static HELD: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn held(path: &Path) -> bool {
    let guard = HELD.lock().unwrap_or_else(|e| e.into_inner());
    guard.iter().any(|p| p == path)
}

/// Registers `path` as held; false when this process holds it already.
fn register(path: &Path) -> bool {
    let mut guard = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if guard.iter().any(|p| p == path) {
        return false;
    }
    guard.push(path.to_path_buf());
    true
}

fn unregister(path: &Path) {
    let mut guard = HELD.lock().unwrap_or_else(|e| e.into_inner());
    guard.retain(|p| p != path);
}

/// Held while the guard lives.
#[derive(Debug)]
pub struct PlanLock {
    /// Always `Some` until dropped.
    file: Option<File>,
    path: PathBuf,
}

impl Drop for PlanLock {
    fn drop(&mut self) {
        // Close first (that releases the record lock), then forget it: the other order
        // would let another thread of this process take the lock in between, and the
        // close would then silently drop that one.
        drop(self.file.take());
        unregister(&self.path);
    }
}

/// What the holder is doing, when that takes long: a review. The hook writes it into the
/// lock file when it starts the reviewer and empties the file when the review ends, so
/// `taskie status` can say a review runs and a busy command can say who holds the plan.
/// A process that holds the lock without announcing anything is a short command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Running {
    pub review: String,
    pub iteration: u64,
    pub model: String,
    /// RFC 3339, UTC.
    pub since: String,
    /// The reviewer log, relative to the project.
    pub log: String,
}

impl Running {
    /// The review in words at instant `now_ms` (Unix milliseconds): how long it has run,
    /// not when it started, which a person would have to subtract from the clock.
    pub fn text_at(&self, now_ms: i64) -> String {
        let ran = match self.since.parse::<jiff::Timestamp>() {
            // A clock set back since the start is not a negative run.
            Ok(t) => format!(
                "running for {}",
                minutes_seconds((now_ms.saturating_sub(t.as_millisecond()).max(0) / 1000) as u64)
            ),
            Err(_) => format!("running since {}", self.since),
        };
        format!(
            "{} #{} is {ran} (model {}; log {})",
            self.review, self.iteration, self.model, self.log
        )
    }
}

impl std::fmt::Display for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text_at(crate::clock::now().as_millisecond()))
    }
}

impl PlanLock {
    /// Records the review now running (see [`Running`]); best effort.
    pub fn announce(&self, running: &Running) {
        if let (Ok(text), Some(file)) = (serde_json::to_string(running), &self.file) {
            let _ = file.set_len(0);
            let _ = os::write_at_start(file, text.as_bytes());
        }
    }

    /// The review ended.
    pub fn clear(&self) {
        if let Some(file) = &self.file {
            let _ = file.set_len(0);
        }
    }
}

/// Takes the lock without waiting; `Ok(None)` when another process holds it.
pub fn try_lock(locks: &Path, plan: &str) -> io::Result<Option<PlanLock>> {
    crate::store::project::create_runtime_dir(locks)?;
    let path = locks.join(format!("{plan}.lock"));
    // O_NOFOLLOW: a lock file planted as a symbolic link would make `create` write a file
    // wherever it points; opening it fails instead (ELOOP), and the hook changes nothing.
    // Only a regular file is used: opening a FIFO would wait for a reader forever.
    if !register(&path) {
        // Opening the file again would drop the lock this process holds.
        return Ok(None);
    }
    let taken = fs::open_regular_sized(&path, fs::Open::Write).and_then(|(file, len)| {
        match os::try_lock(&file) {
            Ok(true) => Ok(Some((file, len))),
            Ok(false) => Ok(None),
            Err(e) => Err(io::Error::new(
                e.kind(),
                format!("cannot lock {}: {e}", path.display()),
            )),
        }
    });
    match taken {
        Ok(Some((file, len))) => {
            // A holder killed during its review left its announcement behind.
            if len > 0 {
                let _ = file.set_len(0);
            }
            Ok(Some(PlanLock {
                file: Some(file),
                path,
            }))
        }
        other => {
            unregister(&path);
            other.map(|_| None)
        }
    }
}

/// The review announced by the current holder of a plan's lock, if any. Read-only: call it
/// after finding the lock held (or to show a running review in `taskie status`).
pub fn running(locks: &Path, plan: &str) -> Option<Running> {
    let path = locks.join(format!("{plan}.lock"));
    // This process's own lock: opening the file would drop it, and nothing runs under it
    // that this process does not already know.
    if held(&path) || std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return None;
    }
    let bytes = fs::read_regular(&path, 64 * 1024).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// Who holds a busy plan lock, in words, for the messages of the hook and the commands.
pub fn holder_text(locks: &Path, plan: &str) -> String {
    match running(locks, plan) {
        Some(r) => r.to_string(),
        None => format!(
            "another taskie process (a command such as `taskie mark`, or a hook deciding) holds \
             .taskie/locks/{plan}.lock"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = try_lock(dir.path(), "p").unwrap();
        assert!(first.is_some());
        assert!(try_lock(dir.path(), "p").unwrap().is_none());
        assert!(
            try_lock(dir.path(), "other").unwrap().is_some(),
            "plans lock independently"
        );
        drop(first);
        assert!(try_lock(dir.path(), "p").unwrap().is_some());
    }

    /// A review announced as running, for the tests below.
    fn sample_running() -> Running {
        Running {
            review: "plan-review".into(),
            iteration: 2,
            model: "opus".into(),
            since: "2026-01-01T00:00:00.000Z".into(),
            log: ".taskie/logs/x.log".into(),
        }
    }

    #[test]
    fn an_announced_review_is_read_back_and_a_new_holder_clears_a_stale_one() {
        let dir = tempfile::tempdir().unwrap();
        let held = try_lock(dir.path(), "p").unwrap().unwrap();
        let r = sample_running();
        held.announce(&r);
        // Never read by its own holder: opening the file would drop the record lock.
        assert_eq!(running(dir.path(), "p"), None);
        assert!(try_lock(dir.path(), "p").unwrap().is_none(), "still held");
        // Let go without clearing, as a killed holder does: the announcement stays.
        drop(held);
        assert_eq!(running(dir.path(), "p"), Some(r));
        let again = try_lock(dir.path(), "p").unwrap().unwrap();
        drop(again);
        assert_eq!(running(dir.path(), "p"), None);
    }

    #[test]
    fn a_running_review_says_how_long_it_has_run() {
        let r = sample_running();
        let start = r.since.parse::<jiff::Timestamp>().unwrap().as_millisecond();
        assert_eq!(
            r.text_at(start + 184_900),
            "plan-review #2 is running for 3m 04s (model opus; log .taskie/logs/x.log)"
        );
        assert!(r.text_at(start - 5_000).contains("running for 0m 00s"));
        let odd = Running {
            since: "yesterday".into(),
            ..r
        };
        assert!(odd.text_at(start).contains("running since yesterday"));
    }
}
