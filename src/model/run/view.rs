//! A run as people watch it: per task its phase, its reviews so far, how long it has run,
//! what its reviews cost and whether its session is alive. [`view`] is the one home of
//! that view: `taskie run`'s live table, its plain lines, its `--json` events and
//! `taskie status` all ask it, from the journal and what the gates say.

use crate::model::run::journal::{Lane, Line, Outcome, RunState};
use serde::Serialize;
use std::collections::BTreeMap;

/// The lane of the all-code review in a view.
pub const ALL: &str = "all";

fn short(c: &str) -> &str {
    c.get(..12).unwrap_or(c)
}

/// What a session's gate says, beyond the journal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateSeen {
    /// Reviews run, from the gate's spend ledger.
    pub reviews: u64,
    /// What they cost, where the ledger exists (codex and gemini report no cost: 0).
    pub cost_usd: Option<f64>,
    /// The last heartbeat says a review started and its stop has not ended yet.
    pub reviewing: bool,
    /// Whether the session's process group is alive; `None` when nothing says.
    pub session_alive: Option<bool>,
}

/// Everything besides the journal the view is made of.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// Now, in Unix milliseconds.
    pub now_ms: i64,
    /// A driver holds the run's lock.
    pub driver_alive: bool,
    /// By task id (and [`ALL`]).
    pub gates: BTreeMap<String, GateSeen>,
}

/// One task of the run (or the all-code review, task [`ALL`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaneView {
    pub task: String,
    /// `waiting`, `running`, `reviewed`, `merging`, `merged`, `blocked`, `paused`,
    /// `conflict`, `skipped`; for the all-code review also `passed` and `not-passed`.
    pub phase: &'static str,
    /// The lane in words (the reason of a block, the files of a conflict, …).
    pub detail: String,
    /// Reviews its gate ran so far.
    pub reviews: u64,
    /// A review runs now.
    pub reviewing: bool,
    /// Seconds from its first session to its outcome (or to now, or to the journal's
    /// last entry when no driver runs); `None` for a journal written without times.
    pub elapsed_secs: Option<u64>,
    /// What its reviews cost, where its gate has a spend ledger.
    pub cost_usd: Option<f64>,
    /// For a running lane: whether its session's process is alive.
    pub alive: Option<bool>,
}

impl LaneView {
    /// Whether two views of a lane differ in more than the time that passed.
    pub fn changed_from(&self, other: &LaneView) -> bool {
        let strip = |l: &LaneView| LaneView {
            elapsed_secs: None,
            ..l.clone()
        };
        strip(self) != strip(other)
    }
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunView {
    pub run: String,
    pub plan: String,
    pub agent: String,
    /// Sessions at once.
    pub slots: usize,
    pub integration: String,
    /// The integration tip as the journal last recorded it.
    pub tip: String,
    pub outcome: Option<Outcome>,
    /// A `taskie run` drives it now.
    pub driver_alive: bool,
    pub lanes: Vec<LaneView>,
    pub all_code_review: Option<String>,
    pub landed: Option<String>,
    /// The user's branch.
    pub branch: String,
}

fn millis(ts: &Option<String>) -> Option<i64> {
    ts.as_deref()?
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// When a lane began and, once settled, ended (Unix milliseconds).
#[derive(Default, Clone, Copy)]
struct Span {
    start: Option<i64>,
    end: Option<i64>,
}

/// The view of the run the journal's `lines` describe, with what the gates say; `None`
/// without a `start` entry first.
pub fn view(lines: &[Line], seen: &Seen) -> Option<RunView> {
    let entries: Vec<_> = lines.iter().map(|l| l.entry.clone()).collect();
    let mut state = RunState::replay(entries.get(..1)?)?;
    let mut spans: BTreeMap<String, Span> = BTreeMap::new();
    let mut last = None;
    for line in &lines[1..] {
        let at = millis(&line.ts);
        last = at.or(last);
        let task = task_of(&line.entry);
        let was_settled = task.as_ref().map(|t| state.lane(t).is_settled());
        state.apply(&line.entry);
        use crate::model::run::journal::Entry;
        match (&line.entry, task) {
            (Entry::Retry { task }, _) => {
                spans.remove(task);
            }
            (Entry::FinalReview { .. }, _) => {
                spans.entry(ALL.into()).or_insert(Span {
                    start: at,
                    end: None,
                });
            }
            (Entry::FinalPassed { .. }, _) | (Entry::End { .. }, _) => {
                if let Some(s) = spans.get_mut(ALL)
                    && s.end.is_none()
                {
                    s.end = at;
                }
            }
            (_, Some(task)) => {
                let span = spans.entry(task.clone()).or_default();
                if span.start.is_none() && matches!(line.entry, Entry::Session { .. }) {
                    span.start = at;
                }
                let settled = state.lane(&task).is_settled();
                if settled && was_settled != Some(true) {
                    span.end = at;
                } else if !settled {
                    span.end = None;
                }
            }
            _ => {}
        }
    }
    let until = if seen.driver_alive {
        Some(seen.now_ms)
    } else {
        last
    };
    let elapsed = |span: Option<&Span>| {
        let span = span?;
        let (start, end) = (span.start?, span.end.or(until)?);
        Some(u64::try_from(end.saturating_sub(start).max(0) / 1000).unwrap_or(0))
    };
    let gate = |task: &str| seen.gates.get(task).cloned().unwrap_or_default();
    let mut lanes: Vec<LaneView> = state
        .lanes
        .iter()
        .map(|(task, lane)| {
            let g = gate(task);
            let running = matches!(lane, Lane::Running { .. });
            LaneView {
                task: task.clone(),
                phase: lane.name(),
                detail: detail(lane),
                reviews: g.reviews,
                reviewing: running && g.reviewing,
                elapsed_secs: elapsed(spans.get(task)),
                cost_usd: g.cost_usd,
                alive: if running { g.session_alive } else { None },
            }
        })
        .collect();
    if let Some(commit) = &state.final_review {
        let g = gate(ALL);
        let (phase, detail) = match (&state.final_passed, state.outcome) {
            (Some(c), _) => ("passed", format!("all-code review passed on {}", short(c))),
            (None, Some(_)) => ("not-passed", "all-code review did not pass".to_string()),
            (None, None) => ("running", format!("all-code review of {}", short(commit))),
        };
        let running = phase == "running";
        lanes.push(LaneView {
            task: ALL.into(),
            phase,
            detail,
            reviews: g.reviews,
            reviewing: running && g.reviewing,
            elapsed_secs: elapsed(spans.get(ALL)),
            cost_usd: g.cost_usd,
            alive: if running { g.session_alive } else { None },
        });
    }
    Some(RunView {
        slots: crate::model::run::schedule::slots(state.jobs, state.agent.split(',').count()),
        run: state.run,
        plan: state.plan,
        agent: state.agent,
        integration: state.integration,
        tip: state.tip,
        outcome: state.outcome,
        driver_alive: seen.driver_alive,
        lanes,
        all_code_review: state.final_passed,
        landed: state.landed,
        branch: state.branch,
    })
}

/// The task a journal entry is about, if one.
fn task_of(entry: &crate::model::run::journal::Entry) -> Option<String> {
    use crate::model::run::journal::Entry;
    match entry {
        Entry::Session { task, .. }
        | Entry::Reviewed { task, .. }
        | Entry::Blocked { task, .. }
        | Entry::Skipped { task, .. }
        | Entry::Paused { task, .. }
        | Entry::Retry { task }
        | Entry::Merge { task, .. }
        | Entry::MergeCommit { task, .. }
        | Entry::Merged { task, .. }
        | Entry::Conflict { task, .. } => Some(task.clone()),
        _ => None,
    }
}

/// A lane in words.
fn detail(lane: &Lane) -> String {
    match lane {
        Lane::Waiting => "waiting".to_string(),
        Lane::Running {
            branch,
            resolve: Some(files),
            ..
        } => format!("resolving its conflict in {} on {branch}", files.join(", ")),
        Lane::Running { branch, .. } => format!("running on {branch}"),
        Lane::Reviewed { commit, .. } => {
            format!("reviewed on {}, waiting to merge", short(commit))
        }
        Lane::Merging { reviewed, .. } => format!("merging {}", short(reviewed)),
        Lane::Merged { commit } => format!("merged ({})", short(commit)),
        Lane::Blocked { reason } => format!("blocked: {reason}"),
        Lane::Paused { until, reason, .. } => match until {
            Some(t) => format!("paused until {}: {reason}", crate::model::pause::stamp(*t)),
            None => format!("paused: {reason}"),
        },
        Lane::Conflict { files, .. } => format!("conflict in {}", files.join(", ")),
        Lane::Skipped { because } => format!("skipped: depends on task {because}"),
    }
}

fn elapsed_text(secs: Option<u64>) -> String {
    secs.map_or("-".into(), crate::model::text::minutes_seconds)
}

fn cost_text(cost: Option<f64>) -> String {
    cost.map_or("-".into(), crate::model::spend::money)
}

fn reviews_text(l: &LaneView) -> String {
    if l.reviewing {
        format!("{} + 1 running", l.reviews)
    } else {
        l.reviews.to_string()
    }
}

/// The run's headline.
pub fn headline(v: &RunView) -> String {
    let outcome = match (v.outcome, v.driver_alive) {
        (Some(Outcome::Done), _) => "done",
        (Some(Outcome::Partial), _) => "ended partial (`taskie run --resume` goes on)",
        (None, true) => "under way",
        (None, false) => "cut off: no driver runs it (`taskie run --resume` goes on)",
    };
    format!(
        "Run {} ({} × {}): {outcome}; integration branch {} at {}",
        v.run,
        v.slots,
        v.agent,
        v.integration,
        short(&v.tip)
    )
}

/// The lanes as a table (the live table of `taskie run` on a terminal, and `taskie
/// status`): a header, then one row per lane, in the order they were journalled.
pub fn table(v: &RunView) -> Vec<String> {
    let mut rows = vec![[
        "task".to_string(),
        "phase".into(),
        "reviews".into(),
        "elapsed".into(),
        "cost".into(),
        "session".into(),
    ]];
    for l in &v.lanes {
        rows.push([
            l.task.clone(),
            l.phase.to_string(),
            reviews_text(l),
            elapsed_text(l.elapsed_secs),
            cost_text(l.cost_usd),
            match l.alive {
                Some(true) => "alive".into(),
                Some(false) => "gone".into(),
                None => "-".into(),
            },
        ]);
    }
    let mut widths = [0usize; 6];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            format!("  {}", cells.join("  ").trim_end())
        })
        .collect()
}

/// One lane in one line, for output that is not a terminal: what changed, with its
/// reviews, time and cost.
pub fn line(l: &LaneView) -> String {
    let what = if l.task == ALL {
        l.detail.clone()
    } else {
        format!("task {}: {}", l.task, l.detail)
    };
    let reviews = match l.reviews {
        1 => "1 review".to_string(),
        n => format!("{n} reviews"),
    };
    let running = if l.reviewing { ", one running" } else { "" };
    format!(
        "{what} [{reviews}{running}; {}; {}]",
        elapsed_text(l.elapsed_secs),
        cost_text(l.cost_usd)
    )
}

/// `taskie status`: the headline, the table, each lane in words, the end.
pub fn lines(v: &RunView) -> Vec<String> {
    let mut out = vec![headline(v)];
    out.extend(table(v));
    for l in v.lanes.iter().filter(|l| l.task != ALL) {
        out.push(format!("  task {}: {}", l.task, l.detail));
    }
    if let Some(c) = &v.all_code_review {
        out.push(format!("  all-code review passed on {}", short(c)));
    }
    if let Some(c) = &v.landed {
        out.push(format!("  landed: {} at {}", v.branch, short(c)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::run::journal::{Entry, Land};

    fn at(ts: &str, entry: Entry) -> Line {
        Line {
            ts: Some(format!("2026-11-26T13:{ts}.000Z")),
            entry,
        }
    }

    fn start() -> Entry {
        Entry::Start {
            run: "p-1".into(),
            plan: "p".into(),
            agent: "claude".into(),
            jobs: 2,
            land: Land::None,
            branch: "main".into(),
            base: "0123456789abcdef".into(),
            integration: "taskie/p/integration".into(),
        }
    }

    fn session(task: &str) -> Entry {
        Entry::Session {
            task: task.into(),
            branch: format!("taskie/p/task-{task}"),
            worktree: format!("/w/task-{task}"),
            base: "0123456789abcdef".into(),
            agent: None,
            resolve: None,
        }
    }

    fn journal() -> Vec<Line> {
        vec![
            at("00:00", start()),
            at("00:01", session("1")),
            at("00:02", session("2")),
            at(
                "01:03",
                Entry::Blocked {
                    task: "2".into(),
                    reason: "no heartbeat".into(),
                },
            ),
            at(
                "02:00",
                Entry::Reviewed {
                    task: "1".into(),
                    commit: "c1".into(),
                },
            ),
            at(
                "02:05",
                Entry::Merged {
                    task: "1".into(),
                    commit: "fedcba9876543210".into(),
                },
            ),
        ]
    }

    #[test]
    fn a_lane_runs_from_its_first_session_to_its_outcome() {
        let seen = Seen {
            now_ms: 0,
            driver_alive: false,
            gates: BTreeMap::from([(
                "1".into(),
                GateSeen {
                    reviews: 2,
                    cost_usd: Some(0.25),
                    ..GateSeen::default()
                },
            )]),
        };
        let v = view(&journal(), &seen).unwrap();
        let one = &v.lanes[0];
        assert_eq!(
            (one.task.as_str(), one.phase, one.reviews, one.elapsed_secs),
            ("1", "merged", 2, Some(124))
        );
        assert_eq!(v.lanes[1].elapsed_secs, Some(61), "blocked after 61 s");
        assert_eq!(v.lanes[1].cost_usd, None, "no ledger, no cost");
    }

    #[test]
    fn a_running_lane_runs_until_now_while_a_driver_runs_and_until_the_last_entry_when_none_does() {
        let lines = &journal()[..3];
        let now = "2026-11-26T13:10:01Z"
            .parse::<jiff::Timestamp>()
            .unwrap()
            .as_millisecond();
        let mut seen = Seen {
            now_ms: now,
            driver_alive: true,
            ..Seen::default()
        };
        assert_eq!(view(lines, &seen).unwrap().lanes[0].elapsed_secs, Some(600));
        seen.driver_alive = false;
        let v = view(lines, &seen).unwrap();
        assert_eq!(v.lanes[0].elapsed_secs, Some(1));
        assert!(
            headline(&v).contains("cut off: no driver runs it"),
            "{}",
            headline(&v)
        );
    }

    #[test]
    fn a_journal_without_times_has_lanes_without_elapsed_time() {
        let lines: Vec<Line> = journal()
            .into_iter()
            .map(|l| Line { ts: None, ..l })
            .collect();
        let v = view(&lines, &Seen::default()).unwrap();
        assert!(v.lanes.iter().all(|l| l.elapsed_secs.is_none()));
        assert_eq!(v.lanes[0].phase, "merged");
    }

    #[test]
    fn only_a_change_beyond_the_time_that_passed_is_a_change() {
        let v = view(&journal(), &Seen::default()).unwrap();
        let mut later = v.lanes[0].clone();
        later.elapsed_secs = Some(999);
        assert!(!later.changed_from(&v.lanes[0]));
        later.reviews += 1;
        assert!(later.changed_from(&v.lanes[0]));
    }

    #[test]
    fn the_status_lines_are_the_headline_the_table_and_each_lane_in_words() {
        let v = view(&journal(), &Seen::default()).unwrap();
        assert_eq!(
            lines(&v),
            [
                "Run p-1 (2 × claude): cut off: no driver runs it (`taskie run --resume` goes on); integration branch taskie/p/integration at fedcba987654",
                "  task  phase    reviews  elapsed  cost  session",
                "  1     merged   0        2m 04s   -     -",
                "  2     blocked  0        1m 01s   -     -",
                "  task 1: merged (fedcba987654)",
                "  task 2: blocked: no heartbeat",
            ]
        );
        assert_eq!(
            line(&v.lanes[1]),
            "task 2: blocked: no heartbeat [0 reviews; 1m 01s; -]"
        );
    }
}
