//! How many times in a row the hook has blocked one session (SPEC §20, Taskie's own
//! block cap): one tiny file per session, `.taskie/blocks/<key>`, holding the count. It
//! lives on disk because every stop is a new process; it is deleted by the first stop
//! the hook allows, so the usual stop costs one failed `unlink`.

use crate::model::plan_file::safe_name;
use crate::store::project::Project;
use crate::store::{atomic, fs};
use std::path::PathBuf;

/// Whose blocks are counted: the stopping session, or, when the client sends no session
/// id, the plan (every such stop of one plan counts together).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key(String);

impl Key {
    /// `session` when it is safe as a file name, else the plan.
    pub fn new(session: Option<&str>, plan: &str) -> Key {
        match session.filter(|s| s.len() <= 128 && safe_name(s)) {
            Some(s) => Key(format!("session-{s}")),
            None => Key(format!("plan-{plan}")),
        }
    }

    fn file(&self, project: &Project) -> PathBuf {
        project.blocks().join(&self.0)
    }
}

/// The blocks in a row so far; 0 when none is recorded or the file is not a count.
pub fn count(project: &Project, key: &Key) -> u64 {
    fs::read_regular(&key.file(project), 64)
        .ok()
        .flatten()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Records `n` blocks in a row; 0 removes the record.
pub fn set(project: &Project, key: &Key, n: u64) -> std::io::Result<()> {
    let path = key.file(project);
    if n == 0 {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let dir = project.blocks();
    // A link would take the count wherever it points (docs/security.md).
    let what = match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.file_type().is_symlink() => Some("a symbolic link"),
        Ok(m) if !m.is_dir() => Some("not a directory"),
        _ => None,
    };
    if let Some(what) = what {
        return Err(std::io::Error::other(format!(
            "{} is {what}; remove it (taskie makes the directory itself)",
            project.relative(&dir)
        )));
    }
    crate::store::project::create_runtime_dir(&dir)?;
    atomic::write_unsynced(&path, format!("{n}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_kept_per_session_and_removed_at_zero() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Project::new(tmp.path());
        std::fs::create_dir_all(p.taskie()).unwrap();
        let (a, b) = (Key::new(Some("s1"), "p"), Key::new(Some("s2"), "p"));
        assert_eq!(count(&p, &a), 0);
        set(&p, &a, 3).unwrap();
        assert_eq!((count(&p, &a), count(&p, &b)), (3, 0));
        set(&p, &a, 0).unwrap();
        assert_eq!(count(&p, &a), 0);
        assert!(!p.blocks().join("session-s1").exists());
        set(&p, &a, 0).unwrap();
    }

    #[test]
    fn without_a_usable_session_id_the_plan_is_counted() {
        assert_eq!(Key::new(None, "p"), Key("plan-p".into()));
        assert_eq!(Key::new(Some("../x"), "p"), Key("plan-p".into()));
        assert_eq!(Key::new(Some("abc"), "p"), Key("session-abc".into()));
    }
}
