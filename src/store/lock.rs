//! The per-plan lock (SPEC §5 step 7): one writer per plan at a time; the kernel
//! releases it if the holder dies, so a crash never leaves a plan locked.

use crate::store::fs;
use serde::{Deserialize, Serialize};
use std::fs::{File, TryLockError};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Held while the guard lives.
#[derive(Debug)]
pub struct PlanLock {
    file: File,
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

impl std::fmt::Display for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} #{} is running (model {}, since {}; log {})",
            self.review, self.iteration, self.model, self.since, self.log
        )
    }
}

impl PlanLock {
    /// Records the review now running (see [`Running`]); best effort.
    pub fn announce(&self, running: &Running) {
        if let Ok(text) = serde_json::to_string(running) {
            let _ = self.file.set_len(0);
            let _ = self.file.write_all_at(text.as_bytes(), 0);
        }
    }

    /// The review ended.
    pub fn clear(&self) {
        let _ = self.file.set_len(0);
    }
}

/// Takes the lock without waiting; `Ok(None)` when another process holds it.
pub fn try_lock(locks: &Path, plan: &str) -> io::Result<Option<PlanLock>> {
    fs_err::create_dir_all(locks)?;
    let path = locks.join(format!("{plan}.lock"));
    // O_NOFOLLOW: a lock file planted as a symbolic link would make `create` write a file
    // wherever it points; opening it fails instead (ELOOP), and the hook changes nothing.
    // Only a regular file is used: opening a FIFO would wait for a reader forever.
    let (file, len) = fs::open_regular_sized(&path, fs::Open::Write)?;
    match file.try_lock() {
        Ok(()) => {
            // A holder killed during its review left its announcement behind.
            if len > 0 {
                let _ = file.set_len(0);
            }
            Ok(Some(PlanLock { file }))
        }
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(io::Error::new(
            e.kind(),
            format!("cannot lock {}: {e}", path.display()),
        )),
    }
}

/// The review announced by the current holder of a plan's lock, if any. Read-only: call it
/// after finding the lock held (or to show a running review in `taskie status`).
pub fn running(locks: &Path, plan: &str) -> Option<Running> {
    let path = locks.join(format!("{plan}.lock"));
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
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

    #[test]
    fn an_announced_review_is_read_back_and_a_new_holder_clears_a_stale_one() {
        let dir = tempfile::tempdir().unwrap();
        let held = try_lock(dir.path(), "p").unwrap().unwrap();
        let r = Running {
            review: "plan-review".into(),
            iteration: 2,
            model: "opus".into(),
            since: "2026-01-01T00:00:00.000Z".into(),
            log: ".taskie/logs/x.log".into(),
        };
        held.announce(&r);
        assert_eq!(running(dir.path(), "p"), Some(r));
        drop(held);
        let again = try_lock(dir.path(), "p").unwrap().unwrap();
        assert_eq!(running(dir.path(), "p"), None);
        drop(again);
    }
}
