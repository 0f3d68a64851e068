//! A stop of a session that `taskie run` started (SPEC §23). The session runs with
//! `TASKIE_RUN=<run>:<task>`; its `.taskie` is a gate the driver made outside the
//! worktree (a link to it from the worktree's top). At each of its stops the hook leaves a
//! heartbeat in the gate, runs only that task's code review (or, for `all`, the all-code
//! review), and commits what the agent left uncommitted before reviewing, so the verdict
//! names a commit.

use crate::model::cycle::Due;
use crate::model::phase::Review;
use crate::store::event_log::Record;
use crate::store::git::Git;
use crate::store::project::Project;
use crate::store::run::{self, GateMark, Heartbeat, REVIEWING};

/// The run and the task a session works on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunTask {
    pub run: String,
    /// A task id, or `all` for the all-code review of the merged result.
    pub task: String,
}

impl RunTask {
    /// From `TASKIE_RUN`'s `value`, when it is well formed.
    pub fn parse(value: &str) -> Option<RunTask> {
        let (run, task) = value.rsplit_once(':')?;
        let ok = |s: &str| crate::model::plan_file::valid_id(s);
        (ok(run) && ok(task)).then(|| RunTask {
            run: run.into(),
            task: task.into(),
        })
    }

    /// The project's `.taskie` is this session's gate: its mark names this run and task.
    /// Only then may it be a link out of the worktree (the driver made both).
    pub fn owns(&self, project: &Project) -> bool {
        run::gate_mark(&project.taskie())
            == Some(GateMark {
                run: self.run.clone(),
                task: self.task.clone(),
            })
    }

    /// Whether this session may run the review that is due: only its own.
    pub fn allows(&self, due: &Due) -> bool {
        if self.task == "all" {
            return due.review == Review::AllCode;
        }
        due.review == Review::Code
            && due.task.map(|t| t.to_string()) == Some(crate::model::depends::key(&self.task))
    }

    /// What the hook says instead of running another review.
    pub fn refusal(&self, due: &Due) -> String {
        crate::hook::message::run_refusal(&self.run, &self.task, due.review.name())
    }

    /// Commits what the agent left in the worktree (the gate aside) before review
    /// `iteration`; the commit that will be reviewed.
    pub fn commit_before_review(&self, project: &Project, iteration: u64) -> Option<String> {
        let git = Git::new(&project.root);
        let message = format!(
            "taskie: task {} as submitted for review {iteration}",
            self.task
        );
        git.commit_all(&message, ".taskie")
            .inspect_err(|e| {
                eprintln!("taskie-hook: could not commit the task's work before its review: {e}")
            })
            .ok()
            .or_else(|| git.commit_of("HEAD").ok())
    }

    /// Records that a review of `commit` starts now.
    pub fn reviewing(&self, project: &Project, session: Option<&str>, commit: Option<String>) {
        self.write_beat(
            project,
            Heartbeat {
                ts: crate::clock::stamp(),
                session: session.map(str::to_string),
                branch: REVIEWING.into(),
                review: None,
                iteration: None,
                verdict: None,
                commit,
            },
        );
    }

    /// Records this stop in the gate: the driver merges nothing without it.
    pub fn heartbeat(
        &self,
        project: &Project,
        session: Option<&str>,
        record: Option<&Record>,
        commit: Option<String>,
    ) {
        let beat = Heartbeat {
            ts: crate::clock::stamp(),
            session: session.map(str::to_string),
            branch: record.map_or("none", |r| r.branch.as_str()).to_string(),
            review: record.and_then(|r| r.review).map(str::to_string),
            iteration: record.and_then(|r| r.iteration),
            verdict: record.and_then(|r| r.verdict).map(str::to_string),
            commit,
        };
        self.write_beat(project, beat);
    }

    fn write_beat(&self, project: &Project, beat: Heartbeat) {
        if let Err(e) = run::beat(&project.taskie(), &beat) {
            eprintln!("taskie-hook: could not record the run's heartbeat: {e}");
        }
    }
}
