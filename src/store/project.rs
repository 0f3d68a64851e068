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
        plans_in(&self.taskie())
    }

    pub fn plan_dir(&self, id: &str) -> PathBuf {
        plan_dir_in(&self.taskie(), id)
    }

    pub fn logs(&self) -> PathBuf {
        logs_in(&self.taskie())
    }

    pub fn locks(&self) -> PathBuf {
        self.root.join(".taskie/locks")
    }

    /// Blocks in a row per session (SPEC §20).
    pub fn blocks(&self) -> PathBuf {
        self.root.join(".taskie/blocks")
    }

    /// Session bindings (SPEC §17).
    pub fn sessions(&self) -> PathBuf {
        self.root.join(".taskie/sessions")
    }

    /// `path` relative to the project directory, as messages show it.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

/// The plans of a `.taskie`-shaped directory: a project's own, or a run's gate.
pub fn plans_in(taskie: &Path) -> PathBuf {
    taskie.join("plans")
}

/// The logs of a `.taskie`-shaped directory: events, reviewer logs, diagnostics.
pub fn logs_in(taskie: &Path) -> PathBuf {
    taskie.join("logs")
}

/// Plan `plan`'s directory in a `.taskie`-shaped directory (see [`plans_in`]).
pub fn plan_dir_in(taskie: &Path, plan: &str) -> PathBuf {
    plans_in(taskie).join(plan)
}

/// A plan in a `.taskie`-shaped directory that is not a project's own (a run's gate, made
/// before any worktree links to it): the paths [`PlanRef`] gives a project's plan.
#[derive(Debug, Clone)]
pub struct PlanIn {
    taskie: PathBuf,
    plan: String,
}

impl PlanIn {
    pub fn new(taskie: impl Into<PathBuf>, plan: impl Into<String>) -> PlanIn {
        PlanIn {
            taskie: taskie.into(),
            plan: plan.into(),
        }
    }

    pub fn dir(&self) -> PathBuf {
        plan_dir_in(&self.taskie, &self.plan)
    }

    pub fn state_path(&self) -> PathBuf {
        self.dir().join(crate::model::plan_file::STATE_FILE)
    }

    /// What a hard stop leaves for the human (`logs/<plan>-diagnostics.json`).
    pub fn diagnostics_path(&self) -> PathBuf {
        logs_in(&self.taskie).join(crate::store::diagnostics::file_name(&self.plan))
    }
}

/// One plan of a project, the handle the hook and the commands share: its directory,
/// its state file, its files as people see them, and where its lock and logs are. No
/// layer joins `.taskie/plans/<id>/…` or "state.json" by hand.
#[derive(Debug, Clone)]
pub struct PlanRef {
    pub project: Project,
    /// The plan id (a valid one: selection checked it).
    pub plan: String,
}

impl PlanRef {
    pub fn new(project: Project, plan: impl Into<String>) -> PlanRef {
        PlanRef {
            project,
            plan: plan.into(),
        }
    }

    pub fn dir(&self) -> PathBuf {
        self.project.plan_dir(&self.plan)
    }

    pub fn state_path(&self) -> PathBuf {
        self.file(crate::model::plan_file::STATE_FILE)
    }

    /// The findings ledger (SPEC §21), beside the state.
    pub fn findings_path(&self) -> PathBuf {
        self.file(crate::model::plan_file::FINDINGS_FILE)
    }

    /// The spend ledger (SPEC §18), beside the state.
    pub fn spend_path(&self) -> PathBuf {
        self.file(crate::model::plan_file::SPEND_FILE)
    }

    /// A file of the plan directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir().join(name)
    }

    /// A plan file's path relative to the project, as people and the agent see it.
    pub fn rel(&self, name: &str) -> String {
        crate::model::plan_file::rel(&self.plan, name)
    }

    /// The plan directory relative to the project.
    pub fn rel_dir(&self) -> String {
        crate::model::plan_file::rel_dir(&self.plan)
    }

    /// `.taskie/logs`, where the plan's events, reviewer logs and diagnostics go.
    pub fn logs(&self) -> PathBuf {
        self.project.logs()
    }

    /// `.taskie/locks`, where the plan's lock file is.
    pub fn locks(&self) -> PathBuf {
        self.project.locks()
    }
}

/// What Taskie writes into each runtime directory it creates (`logs`, `locks`, `blocks`,
/// `sessions` under `.taskie/`): their files are this machine's, not the project's, and
/// a `git add -A` must not commit them. An ignore file inside the directory covers it
/// (and itself) without touching the user's own `.gitignore`.
pub const RUNTIME_IGNORE: &str =
    "# Written by Taskie: this directory holds runtime files, not project history.\n*\n";

/// Creates a runtime directory (and its parents) like `create_dir_all`, writing
/// [`RUNTIME_IGNORE`] as its `.gitignore` when this call created it. An existing
/// directory is left as it is: the user may have chosen to commit it. The ignore file
/// is a courtesy: failing to write it (a full disk) never fails what needed the directory.
pub fn create_runtime_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    fs_err::create_dir_all(dir)?;
    // create_new: never overwrite, and never follow a link planted in its place.
    let path = dir.join(".gitignore");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        && std::io::Write::write_all(&mut f, RUNTIME_IGNORE.as_bytes()).is_err()
    {
        // A cut-off rule could ignore too little or too much: better none.
        let _ = std::fs::remove_file(&path);
    }
    Ok(())
}

/// The project containing `start` (SPEC §5 step 4): the nearest directory from `start`
/// upwards that has a `.taskie/` directory, found the way git finds `.git/`, so the hook
/// and `taskie` work from any subdirectory. The search goes no higher than `ceiling`
/// when `ceiling` is `start` or one of its ancestors (Claude Code's
/// `CLAUDE_PROJECT_DIR`): a session never picks up the plans of an enclosing directory.
/// `start` should be absolute.
pub fn find_project(start: &Path, ceiling: Option<&Path>) -> Option<Project> {
    let ceiling = ceiling.filter(|c| start.starts_with(c));
    for dir in start.ancestors() {
        if dir.join(".taskie").is_dir() {
            return Some(Project::new(dir));
        }
        if Some(dir) == ceiling {
            break;
        }
    }
    None
}

/// Whether `TASKIE_HOOK_SKIP`, as the process has it, says it runs inside a reviewer: set
/// to anything but empty, `0` or `false`.
pub fn inside_reviewer(hook_skip: Option<&std::ffi::OsStr>) -> bool {
    // The hook sets it for the reviewer it starts (SPEC §4), so that neither the hook nor a
    // session binding (SPEC §17) is ever entered from inside a review.
    hook_skip.is_some_and(|v| !(v.is_empty() || v == "0" || v == "false"))
}

/// The highest directory a search may reach (SPEC §20): `CLAUDE_PROJECT_DIR` (Claude
/// Code), else `GEMINI_PROJECT_DIR` (Gemini CLI); Codex CLI sets neither.
pub fn ceiling(
    claude_project_dir: Option<std::ffi::OsString>,
    gemini_project_dir: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    claude_project_dir.or(gemini_project_dir).map(PathBuf::from)
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
        let found = find_project(&root.join("src/deep/er"), None).unwrap();
        assert_eq!(found.root, root);
        assert_eq!(find_project(&root, None).unwrap().root, root);
        assert!(find_project(tmp.path(), None).is_none());
    }

    #[test]
    fn the_search_stops_at_the_ceiling_when_it_is_an_ancestor() {
        let tmp = tempfile::tempdir().unwrap();
        let outer = tmp.path().join("outer");
        let inner = outer.join("inner");
        std::fs::create_dir_all(outer.join(".taskie/plans")).unwrap();
        std::fs::create_dir_all(inner.join("src")).unwrap();
        let start = inner.join("src");
        assert_eq!(find_project(&start, None).unwrap().root, outer);
        assert!(find_project(&start, Some(&inner)).is_none());
        assert_eq!(
            find_project(&start, Some(Path::new("/elsewhere")))
                .unwrap()
                .root,
            outer,
            "a ceiling that is not an ancestor does not limit the search"
        );
    }
}
