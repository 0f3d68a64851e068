//! Which tasks a run starts next, which it skips, and which it merges next (SPEC §23).

use crate::model::run::journal::{Lane, RunState};

/// A task of the plan as the scheduler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The id, normalised (`depends::key`).
    pub id: String,
    pub depends: Vec<String>,
    /// Finished in tasks.md before the run: counts as merged, never started.
    pub finished: bool,
}

/// At most this many sessions of one vendor at once: K sessions on one subscription
/// reach its usage limit K times faster.
pub const PER_VENDOR: usize = 2;

/// The most sessions a run may have at once with `jobs` asked for and one vendor.
pub fn slots(jobs: usize) -> usize {
    jobs.clamp(1, PER_VENDOR)
}

fn merged(tasks: &[Task], state: &RunState, id: &str) -> bool {
    tasks.iter().any(|t| t.id == id && t.finished) || matches!(state.lane(id), Lane::Merged { .. })
}

/// The tasks to start now, in tasks.md order: not started, every dependency merged, no
/// more than the free slots.
pub fn to_start(tasks: &[Task], state: &RunState, running: usize, jobs: usize) -> Vec<String> {
    let free = slots(jobs).saturating_sub(running);
    tasks
        .iter()
        .filter(|t| !t.finished && *state.lane(&t.id) == Lane::Waiting)
        .filter(|t| t.depends.iter().all(|d| merged(tasks, state, d)))
        .take(free)
        .map(|t| t.id.clone())
        .collect()
}

/// Waiting tasks that can never start because a dependency (directly or not) was
/// blocked, conflicted or skipped: each with the dependency that stops it.
pub fn to_skip(tasks: &[Task], state: &RunState) -> Vec<(String, String)> {
    let dead = |id: &str| {
        matches!(
            state.lane(id),
            Lane::Blocked { .. } | Lane::Conflict { .. } | Lane::Skipped { .. }
        )
    };
    tasks
        .iter()
        .filter(|t| !t.finished && *state.lane(&t.id) == Lane::Waiting)
        .filter_map(|t| {
            t.depends
                .iter()
                .find(|d| dead(d))
                .map(|d| (t.id.clone(), d.clone()))
        })
        .collect()
}

/// The next reviewed task to merge: the first in tasks.md order (dependencies come first,
/// since a task starts only once they are merged).
pub fn next_merge(tasks: &[Task], state: &RunState) -> Option<String> {
    tasks
        .iter()
        .find(|t| {
            matches!(
                state.lane(&t.id),
                Lane::Reviewed { .. } | Lane::Merging { .. }
            )
        })
        .map(|t| t.id.clone())
}

/// Every task is settled (merged before or during the run, blocked, skipped).
pub fn all_settled(tasks: &[Task], state: &RunState) -> bool {
    tasks
        .iter()
        .all(|t| t.finished || state.lane(&t.id).is_settled())
}

/// Every task is merged (or was finished before the run).
pub fn all_merged(tasks: &[Task], state: &RunState) -> bool {
    tasks.iter().all(|t| merged(tasks, state, &t.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::run::journal::Entry;

    fn task(id: &str, deps: &[&str]) -> Task {
        Task {
            id: id.into(),
            depends: deps.iter().map(|d| d.to_string()).collect(),
            finished: false,
        }
    }

    fn state(entries: &[Entry]) -> RunState {
        let mut all = vec![crate::model::run::journal::test_start()];
        all.extend_from_slice(entries);
        RunState::replay(&all).unwrap()
    }

    fn session(t: &str) -> Entry {
        Entry::Session {
            task: t.into(),
            branch: format!("b{t}"),
            worktree: format!("w{t}"),
            base: "b".into(),
        }
    }

    #[test]
    fn ready_tasks_start_in_order_up_to_the_free_slots_and_two_per_vendor() {
        let tasks = [
            task("1", &[]),
            task("2", &[]),
            task("3", &[]),
            task("4", &["1"]),
        ];
        let s = state(&[]);
        assert_eq!(to_start(&tasks, &s, 0, 2), ["1", "2"]);
        assert_eq!(to_start(&tasks, &s, 1, 2), ["1"]);
        assert_eq!(
            to_start(&tasks, &s, 0, 8),
            ["1", "2"],
            "one vendor: two at most"
        );
        assert_eq!(to_start(&tasks, &s, 0, 1), ["1"]);
        assert_eq!(to_start(&tasks, &s, 0, 0), ["1"], "-j 0 still runs one");
    }

    #[test]
    fn a_task_waits_until_each_dependency_is_merged_not_merely_reviewed() {
        let tasks = [task("1", &[]), task("2", &["1"])];
        let reviewed = state(&[
            session("1"),
            Entry::Reviewed {
                task: "1".into(),
                commit: "c".into(),
            },
        ]);
        assert!(to_start(&tasks, &reviewed, 0, 2).is_empty());
        assert_eq!(next_merge(&tasks, &reviewed).as_deref(), Some("1"));
        let mut merged = reviewed.clone();
        merged.apply(&Entry::Merged {
            task: "1".into(),
            commit: "m".into(),
        });
        assert_eq!(to_start(&tasks, &merged, 0, 2), ["2"]);
        assert_eq!(next_merge(&tasks, &merged), None);
    }

    #[test]
    fn a_task_finished_before_the_run_counts_as_merged() {
        let mut done = task("1", &[]);
        done.finished = true;
        let tasks = [done, task("2", &["1"])];
        assert_eq!(to_start(&tasks, &state(&[]), 0, 2), ["2"]);
    }

    #[test]
    fn dependents_of_a_blocked_task_are_skipped_and_the_rest_go_on() {
        let tasks = [task("1", &[]), task("2", &["1"]), task("3", &[])];
        let s = state(&[
            session("1"),
            Entry::Blocked {
                task: "1".into(),
                reason: "no heartbeat".into(),
            },
        ]);
        assert_eq!(to_skip(&tasks, &s), [("2".to_string(), "1".to_string())]);
        assert_eq!(to_start(&tasks, &s, 0, 2), ["3"]);
        assert!(!all_settled(&tasks, &s));
    }
}
