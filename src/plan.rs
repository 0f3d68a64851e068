//! Where things live in a project (SPEC §2), which plan a run is about (SPEC §5 step 6),
//! and what is in a plan directory.

use crate::validate::Listing;
use std::io;
use std::path::{Path, PathBuf};

mod scan;

/// A plan id is used in paths and prompts, so it is restricted to `^[A-Za-z0-9_-]+$`.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The project directory and the paths under `.taskie/`.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
}

impl Project {
    pub fn new(root: impl Into<PathBuf>) -> Project {
        Project { root: root.into() }
    }

    pub fn taskie(&self) -> PathBuf {
        self.root.join(".taskie")
    }

    pub fn plans(&self) -> PathBuf {
        self.root.join(".taskie/plans")
    }

    pub fn plan_dir(&self, id: &str) -> PathBuf {
        self.plans().join(id)
    }

    pub fn logs(&self) -> PathBuf {
        self.root.join(".taskie/logs")
    }

    pub fn locks(&self) -> PathBuf {
        self.root.join(".taskie/locks")
    }
}

/// The project containing `start`: the nearest directory from `start` upwards that has a
/// `.taskie/` directory, found the way git finds `.git/`, so `taskie` works from any
/// subdirectory of the project. `start` should be absolute.
pub fn find_project(start: &Path) -> Option<Project> {
    start
        .ancestors()
        .find(|dir| dir.join(".taskie").is_dir())
        .map(Project::new)
}

/// The plan a run acts on, and why it was chosen (shown by `--dry-run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    pub id: String,
    pub why: String,
}

/// Why no plan could be used.
#[derive(Debug)]
pub enum SelectError {
    /// `--plan` / `TASKIE_PLAN` is not a valid id or names no plan directory.
    Explicit(String),
    Io(io::Error),
}

impl std::fmt::Display for SelectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SelectError::Explicit(m) => f.write_str(m),
            SelectError::Io(e) => write!(f, "cannot read the plans directory: {e}"),
        }
    }
}

/// Selects the plan (SPEC §5 step 6). `warn` receives one line per skipped directory.
pub fn select(
    plans: &Path,
    explicit: Option<&str>,
    warn: &mut dyn FnMut(String),
) -> Result<Option<Selected>, SelectError> {
    if let Some(id) = explicit {
        if !valid_id(id) {
            return Err(SelectError::Explicit(format!(
                "the plan id \"{id}\" (from --plan or TASKIE_PLAN) is not valid: use letters, digits, '_' and '-' only"
            )));
        }
        let dir = plans.join(id);
        // symlink_metadata: a plan directory that is a link is not followed (it may point anywhere).
        if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            return Err(SelectError::Explicit(format!(
                "the plan \"{id}\" (from --plan or TASKIE_PLAN) does not exist: no directory {}",
                dir.display()
            )));
        }
        return Ok(Some(Selected {
            id: id.into(),
            why: "named by --plan or TASKIE_PLAN".into(),
        }));
    }
    let best = scan::newest_plan(plans, warn).map_err(SelectError::Io)?;
    Ok(best.map(|id| Selected {
        id,
        why: "its *.md or state.json was modified most recently".into(),
    }))
}

/// What is directly in a plan directory, for validation (SPEC §7).
pub fn list(dir: &Path) -> io::Result<Listing> {
    let mut listing = Listing::default();
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_dir() {
            listing.nested_md = listing.nested_md || contains_md(&entry.path(), 0);
        } else {
            listing.files.push(name);
        }
    }
    listing.files.sort();
    Ok(listing)
}

/// Whether a `*.md` exists anywhere below `dir`; links are not followed and the
/// depth is bounded so a pathological tree cannot stall the hook.
fn contains_md(dir: &Path, depth: u32) -> bool {
    if depth > 8 {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            contains_md(&e.path(), depth + 1)
        } else {
            e.file_name().as_encoded_bytes().ends_with(b".md")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_is_found_from_a_subdirectory() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(root.join(".taskie/plans")).unwrap();
        std::fs::create_dir_all(root.join("src/deep/er")).unwrap();
        let found = find_project(&root.join("src/deep/er")).unwrap();
        assert_eq!(found.root, root);
        assert_eq!(find_project(&root).unwrap().root, root);
        assert!(find_project(tmp.path()).is_none());
    }

    #[test]
    fn plan_ids_allow_only_safe_characters() {
        for ok in ["p", "my-plan_2", "A9"] {
            assert!(valid_id(ok), "{ok}");
        }
        for bad in ["", "..", "a/b", "a b", "ü", "a.b", "-\n"] {
            assert!(!valid_id(bad), "{bad:?}");
        }
    }
}
