//! Which tasks a run starts next, which it skips, and which it merges next (SPEC §23).

use crate::model::host::Client;
use crate::model::run::journal::{Lane, RunState};

/// A task of the plan as the scheduler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The id, normalised (`depends::key`).
    pub id: String,
    pub depends: Vec<String>,
    /// Finished in tasks.md before the run: counts as merged, never started.
    pub finished: bool,
    /// The CLI its Agent cell names; `None`: whichever of the run's is least busy.
    pub agent: Option<Client>,
}

/// At most this many sessions of one vendor at once: K sessions on one subscription
/// reach its usage limit K times faster.
pub const PER_VENDOR: usize = 2;

/// The most sessions a run may have at once with `jobs` asked for and `vendors` CLIs.
pub fn slots(jobs: usize, vendors: usize) -> usize {
    jobs.max(1).min(PER_VENDOR * vendors.max(1))
}

/// The run's vendors as the scheduler sees them at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Vendors<'a> {
    /// The CLIs of the run (`--agent`), in the order given.
    pub run: &'a [Client],
    /// One entry per session under way: its CLI.
    pub live: &'a [Client],
    /// CLIs waiting for a usage limit to reset: none of their sessions starts.
    pub paused: &'a [Client],
}

/// How many sessions may try to resolve one task's conflicts with the integration
/// branch before the conflict stops the task (each is reviewed like the task itself).
pub const RESOLUTIONS: usize = 2;

/// A task in conflict that a session may still resolve.
pub fn resolvable(state: &RunState, id: &str) -> bool {
    matches!(state.lane(id), Lane::Conflict { .. })
        && state.resolutions.get(id).copied().unwrap_or(0) < RESOLUTIONS
}

/// A task that may start a session: not started, or in conflict and resolvable.
fn startable(state: &RunState, id: &str) -> bool {
    *state.lane(id) == Lane::Waiting || resolvable(state, id)
}

fn merged(tasks: &[Task], state: &RunState, id: &str) -> bool {
    tasks.iter().any(|t| t.id == id && t.finished) || matches!(state.lane(id), Lane::Merged { .. })
}

/// The tasks to start now, in tasks.md order, each with its CLI: not started, every
/// dependency merged, at most `jobs` sessions in all and [`PER_VENDOR`] of one CLI, none
/// of a paused CLI. A task naming its CLI waits for that one; another goes to the least
/// busy CLI of the run (the first given on a tie).
pub fn to_start(
    tasks: &[Task],
    state: &RunState,
    vendors: Vendors,
    jobs: usize,
) -> Vec<(String, Client)> {
    let mut live = vendors.live.to_vec();
    let busy = |live: &[Client], c: Client| live.iter().filter(|&&l| l == c).count();
    let free =
        |live: &[Client], c: Client| !vendors.paused.contains(&c) && busy(live, c) < PER_VENDOR;
    let mut out = Vec::new();
    for t in tasks
        .iter()
        .filter(|t| !t.finished && startable(state, &t.id))
        .filter(|t| t.depends.iter().all(|d| merged(tasks, state, d)))
    {
        if live.len() >= jobs.max(1) {
            break;
        }
        let vendor = match t.agent {
            Some(c) => free(&live, c).then_some(c),
            None => vendors
                .run
                .iter()
                .copied()
                .filter(|&c| free(&live, c))
                .min_by_key(|&c| busy(&live, c)),
        };
        if let Some(c) = vendor {
            live.push(c);
            out.push((t.id.clone(), c));
        }
    }
    out
}

/// Waiting tasks that can never start because a dependency (directly or not) was
/// blocked, skipped, or in a conflict no session may resolve any more: each with the
/// dependency that stops it.
pub fn to_skip(tasks: &[Task], state: &RunState) -> Vec<(String, String)> {
    let dead = |id: &str| {
        matches!(state.lane(id), Lane::Blocked { .. } | Lane::Skipped { .. })
            || (matches!(state.lane(id), Lane::Conflict { .. }) && !resolvable(state, id))
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
            agent: None,
        }
    }

    const CLAUDE: &[Client] = &[Client::Claude];

    /// `to_start` with one CLI, `running` sessions of it under way, and the ids only.
    fn ids(tasks: &[Task], s: &RunState, running: usize, jobs: usize) -> Vec<String> {
        let live = vec![Client::Claude; running];
        let v = Vendors {
            run: CLAUDE,
            live: &live,
            paused: &[],
        };
        to_start(tasks, s, v, jobs)
            .into_iter()
            .map(|(t, _)| t)
            .collect()
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
            agent: None,
            resolve: None,
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
        assert_eq!(ids(&tasks, &s, 0, 2), ["1", "2"]);
        assert_eq!(ids(&tasks, &s, 1, 2), ["1"]);
        assert_eq!(ids(&tasks, &s, 0, 8), ["1", "2"], "one vendor: two at most");
        assert_eq!(ids(&tasks, &s, 0, 1), ["1"]);
        assert_eq!(ids(&tasks, &s, 0, 0), ["1"], "-j 0 still runs one");
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
        assert!(ids(&tasks, &reviewed, 0, 2).is_empty());
        assert_eq!(next_merge(&tasks, &reviewed).as_deref(), Some("1"));
        let mut merged = reviewed.clone();
        merged.apply(&Entry::Merged {
            task: "1".into(),
            commit: "m".into(),
        });
        assert_eq!(ids(&tasks, &merged, 0, 2), ["2"]);
        assert_eq!(next_merge(&tasks, &merged), None);
    }

    #[test]
    fn a_task_finished_before_the_run_counts_as_merged() {
        let mut done = task("1", &[]);
        done.finished = true;
        let tasks = [done, task("2", &["1"])];
        assert_eq!(ids(&tasks, &state(&[]), 0, 2), ["2"]);
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
        assert_eq!(ids(&tasks, &s, 0, 2), ["3"]);
    }

    #[test]
    fn several_clis_share_the_sessions_two_each_and_a_named_cli_is_honoured() {
        use crate::model::vendor::Vendor::{Claude, Codex, Gemini};
        let mut tasks: Vec<Task> = (1..=6).map(|i| task(&i.to_string(), &[])).collect();
        tasks[4].agent = Some(Gemini);
        let s = state(&[]);
        let both = [Claude, Codex];
        let v = |live: &'static [Client], paused: &'static [Client]| Vendors {
            run: &both,
            live,
            paused,
        };
        let all = |v| to_start(&tasks, &s, v, 8);
        // The least busy CLI takes the next task; task 5 names gemini, not of the run.
        assert_eq!(
            all(v(&[], &[])),
            [
                ("1".to_string(), Claude),
                ("2".to_string(), Codex),
                ("3".to_string(), Claude),
                ("4".to_string(), Codex),
                ("5".to_string(), Gemini),
            ],
            "two per CLI, and task 6 waits for a free one"
        );
        assert_eq!(
            to_start(&tasks, &s, v(&[], &[]), 3).len(),
            3,
            "-j caps the total"
        );
        // A paused CLI starts nothing; the others take its share.
        let started = all(v(&[Codex], &[Claude]));
        assert_eq!(
            started,
            [("1".to_string(), Codex), ("5".to_string(), Gemini),]
        );
        tasks[0].agent = Some(Claude);
        let started = to_start(&tasks, &s, v(&[], &[Claude]), 8);
        assert_eq!(
            started[0],
            ("2".to_string(), Codex),
            "task 1 waits for claude"
        );
    }

    #[test]
    fn a_conflict_is_resolved_by_at_most_two_sessions_then_its_dependents_are_skipped() {
        let tasks = [task("1", &[]), task("2", &["1"])];
        let conflict = Entry::Conflict {
            task: "1".into(),
            files: vec!["f".into()],
        };
        let resolving = Entry::Session {
            task: "1".into(),
            branch: "b1".into(),
            worktree: "w1".into(),
            base: "t".into(),
            agent: None,
            resolve: Some(vec!["f".into()]),
        };
        let mut s = state(&[session("1"), conflict.clone()]);
        assert_eq!(ids(&tasks, &s, 0, 2), ["1"], "a session resolves it");
        assert!(to_skip(&tasks, &s).is_empty());
        for _ in 0..RESOLUTIONS {
            s.apply(&resolving);
            s.apply(&conflict);
        }
        assert!(ids(&tasks, &s, 0, 2).is_empty(), "no third resolution");
        assert_eq!(to_skip(&tasks, &s), [("2".to_string(), "1".to_string())]);
        s.apply(&Entry::Retry { task: "1".into() });
        assert_eq!(
            s.resolutions.get("1"),
            None,
            "a retry starts the count again"
        );
    }
}
