//! What every part of the driver needs: the project and plan, the user's checkout, the
//! run's directories and names, and the plan's tasks.

use crate::model::host::Client;
use crate::model::run::journal::{Entry, RunState};
use crate::model::run::schedule::Task;
use crate::store::git::Git;
use crate::store::project::Project;
use crate::store::run::Journal;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

pub struct Context {
    pub project: Project,
    pub plan: String,
    pub run: String,
    /// The user's checkout (its top level).
    pub checkout: Git,
    /// Outside the checkout: the worktrees and the gates.
    pub work: PathBuf,
    pub journal: Journal,
    pub tasks: Vec<Task>,
    /// Task id → title, for commit messages and reports.
    pub titles: Vec<(String, String)>,
    /// The CLIs of the run (`--agent`), in the order given.
    pub agents: Vec<Client>,
    /// Progress lines go to stderr with `--json`, else to stdout.
    pub json: bool,
    /// The live table, plain lines or JSON events of the run's lanes.
    pub progress: crate::commands::run::progress::Progress,
    /// What the run reads from the environment (`Options::settings`).
    pub settings: crate::commands::settings::RunSettings,
    /// The repository's registered worktrees: read once (after pruning those whose
    /// directories are gone), then kept as the driver adds and removes its own.
    pub registered: Mutex<Option<Vec<PathBuf>>>,
    /// tasks.md's path in the repository when the checkout tracks it (asked once).
    pub tracked_tasks_md: OnceLock<Option<String>>,
}

/// Where a worktree's HEAD is.
pub enum At<'a> {
    /// On `branch`: the branch as it is when it `exists`, else made at `base`.
    Branch {
        name: &'a str,
        exists: bool,
        base: &'a str,
    },
    /// Detached at a commit.
    Detached(&'a str),
}

impl Context {
    pub fn worktree(&self, task: &str) -> PathBuf {
        self.work.join(format!("task-{task}"))
    }

    /// The `.taskie` of a session: where its hook keeps the state, reviews and heartbeats.
    /// The plan in the project itself (not in a gate).
    pub fn target(&self) -> crate::store::project::PlanRef {
        crate::store::project::PlanRef::new(self.project.clone(), self.plan.as_str())
    }

    pub fn gate(&self, task: &str) -> PathBuf {
        self.work.join(format!("gate-{task}"))
    }

    /// The plan's copy in the gate of `task`.
    pub fn gate_plan(&self, task: &str) -> crate::store::project::PlanIn {
        crate::store::project::PlanIn::new(self.gate(task), &self.plan)
    }

    pub fn integration_worktree(&self) -> PathBuf {
        self.work.join("integration")
    }

    pub fn branch(&self, task: &str) -> String {
        format!("taskie/{}/task-{task}", self.plan)
    }

    pub fn integration_branch(&self) -> String {
        format!("taskie/{}/integration", self.plan)
    }

    pub fn integration_ref(&self) -> String {
        format!("refs/heads/{}", self.integration_branch())
    }

    /// Keeps a reviewed commit reachable whatever happens to its branch and worktree.
    pub fn pin(&self, task: &str) -> String {
        format!("refs/taskie/{}/reviewed/task-{task}", self.plan)
    }

    pub fn title(&self, task: &str) -> &str {
        self.titles
            .iter()
            .find(|(t, _)| t == task)
            .map_or("", |(_, title)| title.as_str())
    }

    /// The CLI a task's session runs or ran: the one its lane names, else the run's first.
    pub fn agent_of(&self, lane: &crate::model::run::journal::Lane) -> Client {
        use crate::model::run::journal::Lane;
        match lane {
            Lane::Running { agent, .. } | Lane::Paused { agent, .. } => agent.as_deref(),
            _ => None,
        }
        .and_then(Client::from_name)
        .unwrap_or(self.agents[0])
    }

    /// Makes the worktree at `path` unless the repository has it registered: a directory
    /// there that git does not know (a crash's leftover) is removed first.
    pub fn ensure_worktree(&self, path: &Path, at: At) -> Result<(), String> {
        let mut registered = self.registry();
        let list = registered.get_or_insert_default();
        if list.iter().any(|p| p == path) {
            return Ok(());
        }
        if path.exists() {
            std::fs::remove_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        let made = match at {
            At::Branch { name, exists, base } => {
                self.checkout.add_worktree(path, name, exists, base)
            }
            At::Detached(commit) => self.checkout.add_detached_worktree(path, commit),
        };
        match made {
            Ok(()) => {
                list.push(path.to_path_buf());
                Ok(())
            }
            Err(e) => {
                // What git registered of a failed add is read again next time.
                *registered = None;
                Err(e.to_string())
            }
        }
    }

    /// Whether the worktree at `path` is registered (as the run knows it).
    pub fn has_worktree(&self, path: &Path) -> bool {
        self.registry().iter().flatten().any(|p| p == path)
    }

    /// The registry of worktrees, read from git when the run does not know it.
    fn registry(&self) -> std::sync::MutexGuard<'_, Option<Vec<PathBuf>>> {
        let mut registered = self.registered.lock().unwrap_or_else(|p| p.into_inner());
        if registered.is_none() {
            self.checkout.prune_worktrees();
            *registered = Some(self.checkout.worktrees());
        }
        registered
    }

    /// Removes the worktree at `path` (directory and registration).
    pub fn remove_worktree(&self, path: &Path) -> Result<(), String> {
        let mut registered = self.registered.lock().unwrap_or_else(|p| p.into_inner());
        let removed = self.checkout.remove_worktree(path);
        match (&removed, registered.as_mut()) {
            (Ok(()), Some(list)) => list.retain(|p| p != path),
            _ => *registered = None,
        }
        removed.map_err(|e| e.to_string())
    }

    /// The integration branch's commit now.
    pub fn tip(&self) -> Option<String> {
        self.checkout.ref_target(&self.integration_ref())
    }

    /// Puts a journal entry down, then applies it to the state: the driver's one way of
    /// changing the run.
    pub fn record(&self, state: &mut RunState, entry: Entry) -> Result<(), String> {
        self.journal.append(&entry).map_err(|e| {
            format!(
                "cannot write the journal {}: {e}",
                self.journal.path.display()
            )
        })?;
        state.apply(&entry);
        let root = &self.project.root;
        if let Some(n) = crate::store::notify::for_run_entry(&entry, &self.plan, &self.run, root) {
            crate::store::notify::send(&n, &self.project.logs(), &self.settings.notify);
        }
        self.progress.update();
        Ok(())
    }

    /// A message of the driver (see `Progress::say`: stderr under `--json`).
    pub fn say(&self, line: &str) {
        self.progress.say(line);
    }
}

/// A commit as people read it.
pub fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}
