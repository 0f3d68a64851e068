//! The run's crash journal (`.taskie/runs/<run>/journal.jsonl`, SPEC §23): one entry per
//! step, written before the step's side effect, and the run's state as the entries say it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the integration branch reaches the user's branch at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Land {
    /// Leave the integration branch and print its name.
    #[default]
    None,
    /// Fast-forward the user's branch (never a force).
    Ff,
}

/// One step of a run. Each is journalled before what it names is done, so after a crash
/// the last entry says what may be half done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum Entry {
    /// The run began: the plan, the agent, and the commits it starts from.
    Start {
        run: String,
        plan: String,
        agent: String,
        jobs: usize,
        land: Land,
        /// The user's branch and its commit when the run began.
        branch: String,
        base: String,
        integration: String,
    },
    /// A session for `task` is about to start in `worktree`, on `branch` cut from `base`,
    /// run by the `agent` CLI (absent in journals of single-agent runs: the run's agent).
    Session {
        task: String,
        branch: String,
        worktree: String,
        base: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        /// A session resolving the task's conflict with the integration tip `base`: the
        /// files that conflicted (the merge is under way in the worktree).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resolve: Option<Vec<String>>,
    },
    /// The task's code review passed on `commit` (pinned under refs/taskie/…).
    Reviewed { task: String, commit: String },
    /// The task cannot be merged: why, with the branch kept.
    Blocked { task: String, reason: String },
    /// The task will not start: a task it depends on will not merge.
    Skipped { task: String, because: String },
    /// A usage limit stopped the session: the agent's (then `agent` names its CLI, whose
    /// lanes all wait) or its reviewer's. With `until` (Unix seconds) the run starts the
    /// task again after it; without, the task waits for `--resume`. Its gate is kept.
    Paused {
        task: String,
        until: Option<i64>,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// `--resume` of a run that ended partial: the task goes back to waiting, its branch,
    /// worktree and gate kept for its next session.
    Retry { task: String },
    /// About to merge `reviewed` onto the integration tip `onto`.
    Merge {
        task: String,
        reviewed: String,
        onto: String,
    },
    /// The merge commit exists; the compare-and-swap of the integration ref comes next.
    MergeCommit {
        task: String,
        commit: String,
        onto: String,
    },
    /// The integration branch points at `commit`, which holds the task.
    Merged { task: String, commit: String },
    /// The merge conflicted in `files`; nothing was merged, the branch is kept.
    Conflict { task: String, files: Vec<String> },
    /// The all-code review session is about to start on `commit`.
    FinalReview { commit: String },
    /// The all-code review passed on `commit` (the integration tip).
    FinalPassed { commit: String },
    /// About to fast-forward the user's branch to `commit`.
    Land { branch: String, commit: String },
    /// The run is over.
    End { outcome: Outcome },
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every task merged and the all-code review passed.
    Done,
    /// Some tasks are blocked, in conflict or skipped; what merged is on the branch.
    Partial,
}

impl Entry {
    /// The name written as `step`, which `TASKIE_TEST_KILL_AT` names too.
    pub fn step(&self) -> &'static str {
        match self {
            Entry::Start { .. } => "start",
            Entry::Session { .. } => "session",
            Entry::Reviewed { .. } => "reviewed",
            Entry::Blocked { .. } => "blocked",
            Entry::Skipped { .. } => "skipped",
            Entry::Retry { .. } => "retry",
            Entry::Paused { .. } => "paused",
            Entry::Merge { .. } => "merge",
            Entry::MergeCommit { .. } => "merge-commit",
            Entry::Merged { .. } => "merged",
            Entry::Conflict { .. } => "conflict",
            Entry::FinalReview { .. } => "final-review",
            Entry::FinalPassed { .. } => "final-passed",
            Entry::Land { .. } => "land",
            Entry::End { .. } => "end",
        }
    }

    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a journal entry always serializes") + "\n"
    }

    /// The entries of a journal, without their times (see [`Line::parse_all`]).
    pub fn parse_all(text: &str) -> Vec<Entry> {
        Line::parse_all(text).into_iter().map(|l| l.entry).collect()
    }
}

/// A journal line as written: the entry and when it was written (`ts`, RFC 3339 UTC as
/// Taskie stamps instants), so any reader can tell how long a lane has run. Journals
/// written before timestamps have none; their lines still read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts: Option<String>,
    #[serde(flatten)]
    pub entry: Entry,
}

impl Line {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a journal line always serializes") + "\n"
    }

    /// The lines of a journal; a torn last line (a crash during its write) is dropped.
    pub fn parse_all(text: &str) -> Vec<Line> {
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// Where one task stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum Lane {
    /// Not started.
    Waiting,
    /// A session was started (and may have been cut off by a crash).
    Running {
        branch: String,
        worktree: String,
        base: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        /// Resolving its conflict in these files (see `Entry::Session`).
        #[serde(skip_serializing_if = "Option::is_none")]
        resolve: Option<Vec<String>>,
    },
    /// Its code review passed on `commit`; waiting for the merge queue.
    Reviewed {
        branch: String,
        commit: String,
    },
    /// In the merge queue: `merge` journalled (and maybe the merge commit made).
    Merging {
        branch: String,
        reviewed: String,
        onto: String,
        commit: Option<String>,
    },
    Merged {
        commit: String,
    },
    Blocked {
        reason: String,
    },
    /// A usage limit: starts again after `until`, when known, else with `--resume`.
    /// `agent`: the CLI whose limit it is (its lanes wait too); none for a reviewer's.
    Paused {
        until: Option<i64>,
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    Conflict {
        branch: String,
        files: Vec<String>,
    },
    /// A dependency was blocked or in conflict.
    Skipped {
        because: String,
    },
}

impl Lane {
    pub fn name(&self) -> &'static str {
        match self {
            Lane::Waiting => "waiting",
            Lane::Running { .. } => "running",
            Lane::Reviewed { .. } => "reviewed",
            Lane::Merging { .. } => "merging",
            Lane::Merged { .. } => "merged",
            Lane::Blocked { .. } => "blocked",
            Lane::Paused { .. } => "paused",
            Lane::Conflict { .. } => "conflict",
            Lane::Skipped { .. } => "skipped",
        }
    }

    /// Nothing more will happen to it in this run.
    pub fn is_settled(&self) -> bool {
        matches!(
            self,
            Lane::Merged { .. }
                | Lane::Blocked { .. }
                | Lane::Paused { .. }
                | Lane::Conflict { .. }
                | Lane::Skipped { .. }
        )
    }
}

/// The run as its journal tells it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunState {
    pub run: String,
    pub plan: String,
    pub agent: String,
    pub jobs: usize,
    pub land: Land,
    pub branch: String,
    pub base: String,
    pub integration: String,
    /// The integration tip as the journal last recorded it.
    pub tip: String,
    /// Lanes by task id, in the order sessions or outcomes were first journalled.
    pub lanes: Vec<(String, Lane)>,
    pub final_review: Option<String>,
    pub final_passed: Option<String>,
    pub landed: Option<String>,
    pub outcome: Option<Outcome>,
    /// How many sessions resolved each task's conflicts (since its last retry).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub resolutions: BTreeMap<String, usize>,
}

impl RunState {
    pub fn lane(&self, task: &str) -> &Lane {
        self.lanes
            .iter()
            .find(|(t, _)| t == task)
            .map(|(_, l)| l)
            .unwrap_or(&Lane::Waiting)
    }

    fn set(&mut self, task: &str, lane: Lane) {
        match self.lanes.iter_mut().find(|(t, _)| t == task) {
            Some((_, l)) => *l = lane,
            None => self.lanes.push((task.to_string(), lane)),
        }
    }

    /// Folds one entry into the state.
    pub fn apply(&mut self, entry: &Entry) {
        match entry.clone() {
            Entry::Start { .. } => {}
            Entry::Session {
                task,
                branch,
                worktree,
                base,
                agent,
                resolve,
            } => {
                if resolve.is_some() {
                    *self.resolutions.entry(task.clone()).or_default() += 1;
                }
                self.set(
                    &task,
                    Lane::Running {
                        branch,
                        worktree,
                        base,
                        agent,
                        resolve,
                    },
                )
            }
            Entry::Reviewed { task, commit } => {
                let branch = self.branch_of(&task);
                self.set(&task, Lane::Reviewed { branch, commit })
            }
            Entry::Blocked { task, reason } => self.set(&task, Lane::Blocked { reason }),
            Entry::Skipped { task, because } => self.set(&task, Lane::Skipped { because }),
            Entry::Paused {
                task,
                until,
                reason,
                agent,
            } => self.set(
                &task,
                Lane::Paused {
                    until,
                    reason,
                    agent,
                },
            ),
            Entry::Retry { task } => {
                self.outcome = None;
                self.resolutions.remove(&task);
                self.set(&task, Lane::Waiting)
            }
            Entry::Merge {
                task,
                reviewed,
                onto,
            } => {
                let branch = self.branch_of(&task);
                self.set(
                    &task,
                    Lane::Merging {
                        branch,
                        reviewed,
                        onto,
                        commit: None,
                    },
                )
            }
            Entry::MergeCommit { task, commit, .. } => {
                if let Some((_, Lane::Merging { commit: c, .. })) =
                    self.lanes.iter_mut().find(|(t, _)| *t == task)
                {
                    *c = Some(commit);
                }
            }
            Entry::Merged { task, commit } => {
                self.tip = commit.clone();
                self.set(&task, Lane::Merged { commit })
            }
            Entry::Conflict { task, files } => {
                let branch = self.branch_of(&task);
                self.set(&task, Lane::Conflict { branch, files })
            }
            Entry::FinalReview { commit } => self.final_review = Some(commit),
            Entry::FinalPassed { commit } => {
                self.tip = commit.clone();
                self.final_passed = Some(commit)
            }
            Entry::Land { commit, .. } => self.landed = Some(commit),
            Entry::End { outcome } => self.outcome = Some(outcome),
        }
    }

    fn branch_of(&self, task: &str) -> String {
        match self.lane(task) {
            Lane::Running { branch, .. }
            | Lane::Reviewed { branch, .. }
            | Lane::Merging { branch, .. }
            | Lane::Conflict { branch, .. } => branch.clone(),
            _ => String::new(),
        }
    }

    /// The state the entries describe; `None` without a `start` entry first.
    pub fn replay(entries: &[Entry]) -> Option<RunState> {
        let Some(Entry::Start {
            run,
            plan,
            agent,
            jobs,
            land,
            branch,
            base,
            integration,
        }) = entries.first().cloned()
        else {
            return None;
        };
        let mut state = RunState {
            run,
            plan,
            agent,
            jobs,
            land,
            branch,
            tip: base.clone(),
            base,
            integration,
            lanes: Vec::new(),
            final_review: None,
            final_passed: None,
            landed: None,
            outcome: None,
            resolutions: BTreeMap::new(),
        };
        for e in &entries[1..] {
            state.apply(e);
        }
        Some(state)
    }
}

/// The start of a run for the unit tests of `model/run`.
#[cfg(test)]
pub(crate) fn test_start() -> Entry {
    Entry::Start {
        run: "r".into(),
        plan: "p".into(),
        agent: "claude".into(),
        jobs: 2,
        land: Land::None,
        branch: "main".into(),
        base: "b0".into(),
        integration: "taskie/p/integration".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start() -> Entry {
        test_start()
    }

    #[test]
    fn a_journal_replays_into_lanes_and_the_integration_tip() {
        let entries = [
            start(),
            Entry::Session {
                task: "1".into(),
                branch: "taskie/p/task-1".into(),
                worktree: "/w/1".into(),
                base: "b0".into(),
                agent: None,
                resolve: None,
            },
            Entry::Reviewed {
                task: "1".into(),
                commit: "c1".into(),
            },
            Entry::Merge {
                task: "1".into(),
                reviewed: "c1".into(),
                onto: "b0".into(),
            },
            Entry::MergeCommit {
                task: "1".into(),
                commit: "m1".into(),
                onto: "b0".into(),
            },
        ];
        let s = RunState::replay(&entries).unwrap();
        assert_eq!(
            s.lane("1"),
            &Lane::Merging {
                branch: "taskie/p/task-1".into(),
                reviewed: "c1".into(),
                onto: "b0".into(),
                commit: Some("m1".into())
            }
        );
        assert_eq!(s.tip, "b0", "the tip moves only with a merged entry");
        let mut s2 = s.clone();
        s2.apply(&Entry::Merged {
            task: "1".into(),
            commit: "m1".into(),
        });
        assert_eq!(s2.tip, "m1");
        assert!(s2.lane("1").is_settled());
        assert_eq!(s2.lane("2"), &Lane::Waiting);
    }

    #[test]
    fn lines_round_trip_and_a_torn_last_line_is_dropped() {
        let e = Entry::Conflict {
            task: "3".into(),
            files: vec!["shared.txt".into()],
        };
        let line = e.to_line();
        assert!(line.starts_with("{\"step\":\"conflict\""), "{line}");
        let text = format!("{}{}{}", start().to_line(), line, &line[..10]);
        assert_eq!(Entry::parse_all(&text), [start(), e]);
    }

    #[test]
    fn a_retry_reopens_a_partial_run_and_puts_the_task_back_to_waiting() {
        let entries = [
            start(),
            Entry::Blocked {
                task: "2".into(),
                reason: "no heartbeat".into(),
            },
            Entry::End {
                outcome: Outcome::Partial,
            },
            Entry::Retry { task: "2".into() },
        ];
        let s = RunState::replay(&entries).unwrap();
        assert_eq!(s.lane("2"), &Lane::Waiting);
        assert_eq!(s.outcome, None);
    }

    #[test]
    fn a_line_carries_its_time_and_a_line_written_before_times_still_reads() {
        let e = Entry::Merged {
            task: "1".into(),
            commit: "m1".into(),
        };
        let timed = Line {
            ts: Some("2026-11-26T13:00:00.000Z".into()),
            entry: e.clone(),
        };
        let text = timed.to_line();
        assert_eq!(
            text,
            "{\"ts\":\"2026-11-26T13:00:00.000Z\",\"step\":\"merged\",\"task\":\"1\",\"commit\":\"m1\"}\n"
        );
        let old = e.to_line();
        assert_eq!(
            Line::parse_all(&format!("{text}{old}")),
            [
                timed,
                Line {
                    ts: None,
                    entry: e.clone()
                }
            ]
        );
        assert_eq!(
            Entry::parse_all(&text),
            [e],
            "a reader of entries alone skips the time"
        );
    }

    #[test]
    fn without_a_start_entry_there_is_no_run() {
        assert_eq!(
            RunState::replay(&[Entry::End {
                outcome: Outcome::Done
            }]),
            None
        );
    }
}
