//! Where things live in a project (SPEC §2): the project directory, found upwards from
//! where a run starts, and the paths under `.taskie/`.

use std::path::{Path, PathBuf};

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

    /// `path` relative to the project directory, as messages show it.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
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
}
