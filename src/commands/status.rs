//! `taskie status` (SPEC §12): the plan at a glance for a person. [`build`] is pure (the
//! facts, the cycle's verdicts and the diagnostics in, a [`Report`] out); [`run`] reads
//! the plan, the event log and the diagnostics file and prints the report.

use crate::commands::Invocation;
use crate::error::Error;
use crate::model::cycle::{self, MAX_REVIEW_FAILURES};
use crate::model::facts::Facts;
use crate::model::next_stop::{self, Base, NextStop, Prediction, Then};
use crate::model::pause;
use crate::model::phase::{Phase, Review};
use crate::model::plan_file;
use crate::model::plan_file::PlanFile;
use crate::model::spend;
use crate::model::state::State;
use crate::model::text::{clip, minutes_seconds};
use crate::paint::{Paint, WIDTH, wrap};
use crate::store::diagnostics::{self, Diagnostics};
use crate::store::lock::{self, Running};
use crate::store::snapshot;
use serde::Serialize;
use serde_json::Value;
use std::io::Write;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub plan: String,
    pub dir: String,
    /// Every field with defaults filled in; null without state.json or with a state error.
    pub state: Option<Value>,
    pub state_error: Option<String>,
    pub phase: Option<String>,
    pub next_phase: Option<String>,
    pub current_task: Option<u64>,
    pub cycle: Option<Cycle>,
    pub tasks: Vec<TaskLine>,
    /// The reviews of the current (or just passed) cycle, oldest first.
    pub reviews: Vec<ReviewLine>,
    /// The hook's diagnostics (SPEC §10) while the plan is hard-stopped in their cycle;
    /// while the file is missing or explains an earlier stop, the same built from the
    /// state (without the last review's findings).
    pub hard_stop: Option<Diagnostics>,
    /// `hard_stop` is the diagnostics file's.
    #[serde(skip)]
    pub hard_stop_recorded: bool,
    /// Structure errors (SPEC §7).
    pub errors: Vec<String>,
    /// What the reviews cost (SPEC §18).
    pub spend: SpendReport,
    /// Why the newest reviewer attempt of the cycle failed, while failures are counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
    /// The review the hook is running now, as it announced it in the plan lock file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running: Option<Running>,
    /// A reviewer's usage-limit pause (SPEC §22), while it lasts.
    pub paused: Option<Paused>,
    /// What the next stop does, as the hook will decide it (SPEC §13).
    pub next_stop: String,
    /// The findings ledger of the cycle shown (SPEC §21): opened, fixed, dismissed,
    /// reopened, still open.
    pub findings: Option<crate::model::findings::Counts>,
    /// The plan's newest `taskie run` (SPEC §23), as its journal tells it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<crate::model::run::journal::RunState>,
    /// That run as `taskie run` shows it while it runs: per lane its phase, reviews,
    /// elapsed time, cost and whether its session is alive; whether a driver runs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_view: Option<crate::model::run::view::RunView>,
}

/// A usage-limit pause still in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Paused {
    /// RFC 3339, as state.json holds it.
    pub until: String,
    /// Who hit the limit and what it said.
    pub by: Option<String>,
    /// The time as people read it, with what is left.
    pub when: String,
}

/// The spend of the current (or just passed) cycle and of the whole plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SpendReport {
    pub cycle: spend::Totals,
    pub plan: spend::Totals,
    /// `max_cost_usd`, when set.
    pub budget_usd: Option<f64>,
}

impl SpendReport {
    /// From the plan's ledger and its state (pure).
    pub fn of(ledger: &spend::Ledger, state: Option<&State>, cycle: Option<&Cycle>) -> SpendReport {
        let cycle = cycle
            .and_then(|c| {
                ledger_cycle(ledger, c.review, c.task)
                    // A closed cycle in the ledger is this one only while it just passed.
                    .filter(|l| !l.closed || c.status == CycleStatus::Passed)
            })
            .map(|c| c.totals)
            .unwrap_or_default();
        SpendReport {
            cycle,
            plan: ledger.plan,
            budget_usd: state.and_then(|s| s.max_cost_usd),
        }
    }
}

/// The ledger's cycle when it is the cycle of review `r` (of task `task`) status shows.
fn ledger_cycle(
    ledger: &spend::Ledger,
    r: Review,
    task: Option<u64>,
) -> Option<&spend::CycleLedger> {
    ledger
        .cycle
        .as_ref()
        .filter(|c| c.review == r.name() && c.task == task)
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cycle {
    pub review: Review,
    pub task: Option<u64>,
    /// Reviews already run in this cycle.
    pub iteration: u64,
    pub max_reviews: u64,
    /// The model of the next review.
    pub model: String,
    pub consecutive_clean: u64,
    pub clean_reviews_required: u64,
    pub review_failures: u64,
    pub status: CycleStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CycleStatus {
    /// The hook runs the next review at the next stop.
    ReviewDue,
    /// The agent owes the post-review of the last review.
    PostReviewOwed,
    /// The hook will not run another review until a human decides.
    HardStop,
    /// A reviewer's usage limit: the review runs at the first stop after it resets.
    Paused,
    /// max_reviews is 0: the hook moves past the review without running it.
    ReviewsDisabled,
    /// The cycle ended with its clean streak; the plan has moved on.
    Passed,
    /// The cycle ended without its clean streak: a human accepted it (`taskie advance`).
    AdvancedByHand,
}

impl CycleStatus {
    fn text(self) -> &'static str {
        match self {
            CycleStatus::ReviewDue => "review due at the next stop",
            CycleStatus::PostReviewOwed => "post-review owed",
            CycleStatus::HardStop => "HARD STOP",
            CycleStatus::Paused => "paused: a reviewer's usage limit",
            CycleStatus::ReviewsDisabled => "reviews disabled",
            CycleStatus::Passed => "passed",
            CycleStatus::AdvancedByHand => "advanced by hand, not passed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskLine {
    pub id: String,
    /// From tasks.md's title column; empty when it has none.
    pub title: String,
    pub status: String,
    pub finished: bool,
    pub current: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewLine {
    pub iteration: u64,
    pub file: String,
    pub exists: bool,
    /// From the event log; null when the log has no record of it.
    pub verdict: Option<String>,
    pub post_review: bool,
    /// Findings this review raised that were new to the cycle (SPEC §21).
    pub new_findings: Option<u64>,
}

/// The review cycle the state is in, or has just passed: (review, reviews run).
pub fn cycle_of(s: &State) -> Option<(Review, u64)> {
    let k = s.phase_iteration.unwrap_or(0);
    match cycle::in_progress(s) {
        Some(r) => Some((r, k)),
        None => s
            .last()
            .and_then(Phase::review)
            .filter(|_| k >= 1)
            .map(|r| (r, k)),
    }
}

fn status_of(f: &Facts, s: &State, r: Review, k: u64, p: &Prediction) -> CycleStatus {
    let next = s.scheduled();
    let task = s.current_task.filter(|_| r == Review::Code);
    let post_written = plan_file::post_file(r, k, task).is_some_and(|p| f.has_file(&p));
    let review_next = next == Some(r.phase()) || (next == Some(r.post_phase()) && post_written);
    if next == Some(r.post_phase()) && !post_written {
        CycleStatus::PostReviewOwed
    } else if !review_next {
        // The hook ends a cycle only with its clean streak; anything short of it was a
        // decision (`taskie advance`, or reviews disabled).
        if s.consecutive_clean >= s.clean_reviews_required {
            CycleStatus::Passed
        } else if s.max_reviews == 0 {
            CycleStatus::ReviewsDisabled
        } else {
            CycleStatus::AdvancedByHand
        }
    } else {
        // What the next stop does, as the hook will decide it.
        match p.stop {
            NextStop::ReviewsDisabled { .. } => CycleStatus::ReviewsDisabled,
            NextStop::HardStop(_) => CycleStatus::HardStop,
            NextStop::Paused { .. } => CycleStatus::Paused,
            _ => CycleStatus::ReviewDue,
        }
    }
}

/// What the next stop does (the one prediction), in words for a person.
pub fn next_stop_words(f: &Facts, p: &Prediction) -> String {
    match &p.stop {
        NextStop::Invalid => "nothing until the structure errors below are fixed".into(),
        NextStop::NoState => "nothing: without state.json the hook never reviews this plan".into(),
        NextStop::StateError => "nothing until state.json is fixed".into(),
        NextStop::NoCurrentTask(r) => {
            format!(
                "nothing: the {r} cycle has no current_task (`taskie state set current_task=<N>`)"
            )
        }
        NextStop::PostReviewOwed {
            iteration,
            post_file,
            then,
            ..
        } => {
            let next = iteration.saturating_add(1);
            let then = match then {
                Then::Review => format!("review #{next} runs at the first stop after it exists"),
                Then::HardStop(_) => format!(
                    "the first stop after it exists is a hard stop: the cycle allows no review #{next}"
                ),
                Then::Paused { until } => format!(
                    "review #{next} then waits for the pause (until {})",
                    pause::when(*until, f.now)
                ),
            };
            format!("reminds the agent of {}; {then}", f.rel(post_file))
        }
        // Reaching `complete` with unfinished tasks names them (SPEC §13), here as in
        // continue-plan and `mark complete`.
        NextStop::NothingDue => match unfinished_at_complete(f) {
            Some(open) => format!("nothing: no review is scheduled; but {open}"),
            None => "nothing: no review is scheduled".into(),
        },
        NextStop::UnknownNextPhase(n) => format!("nothing: next_phase \"{n}\" is not a phase"),
        NextStop::ReviewsDisabled { review, target, .. } => {
            format!(
                "passes over {review} without a review (max_reviews=0) and moves on to {target}"
            )
        }
        NextStop::HardStop(h) => format!("a hard stop: no {} runs until a human decides", h.review),
        NextStop::Precondition {
            review, missing, ..
        } => format!("nothing: {review} cannot run without {missing}"),
        NextStop::Paused {
            review,
            iteration,
            until,
            ..
        } => format!(
            "no reviewer before {}; then {review} #{iteration} runs",
            pause::when(*until, f.now)
        ),
        NextStop::Review(d) => {
            let rerun = if p.base == Base::Rewound {
                " again (its file is missing)"
            } else {
                ""
            };
            format!("runs {} #{}{rerun} ({})", d.review, d.iteration, d.model)
        }
    }
}

/// The unfinished tasks of a plan that is, or is about to be, `complete`.
fn unfinished_at_complete(f: &Facts) -> Option<String> {
    let s = f.state.as_ref().ok()?.as_ref()?;
    let complete = s.last() == Some(Phase::Complete) || s.next() == Some(Ok(Phase::Complete));
    complete
        .then(|| crate::model::tasks::unfinished_at_complete(f.tasks, &f.rel("tasks.md")))
        .flatten()
}

/// Who does the next review (SPEC §18).
fn next_reviewers(s: &State, k: u64) -> String {
    cycle::reviewer_label(s, k.saturating_add(1))
}

/// Whether a diagnostics object explains the state as it is now: this cycle at this
/// iteration, stopped for the same reason with the same limits. A stop the human has
/// since lifted (`state set max_reviews=6`) is history, even if the cycle stopped again
/// for another reason.
fn diagnostics_match(diag: &Diagnostics, c: &Cycle, reason: Option<cycle::StopReason>) -> bool {
    diag.review == c.review.name()
        && diag.iterations == c.iteration
        && (c.review != Review::Code || diag.task == c.task)
        && reason.is_some_and(|r| r.as_str() == diag.stop_reason)
        && diag.max_reviews == c.max_reviews
        && diag.review_failures == c.review_failures
}

/// The report. `verdicts` are the cycle's (iteration, verdict) from the event log;
/// `diag` is the diagnostics file's content, if there is one.
pub fn build(
    f: &Facts,
    dir: &str,
    verdicts: &[(u64, String)],
    diag: Option<Diagnostics>,
) -> Report {
    let (state, state_error) = match f.state {
        Ok(Some(s)) => (Some(s), None),
        // Gone while the reviews remain: say so, and how to resume, not "not started".
        Ok(None) => (
            None,
            cycle::recover_from_files(f.files)
                .map(|back| back.explain(f.plan, &f.rel(crate::model::plan_file::STATE_FILE))),
        ),
        Err(e) => (None, Some(format!("{dir}/{}", e.explain(f.plan)))),
    };
    let prediction = next_stop::predict(f);
    let current = state.and_then(|s| s.current_task);
    let tasks = f
        .tasks
        .iter()
        .map(|t| TaskLine {
            id: t.id.clone(),
            title: t.title.clone(),
            status: t.status.clone(),
            finished: t.is_finished(),
            current: current.is_some() && t.number() == current,
        })
        .collect();
    let cycle = state.and_then(|s| {
        let (r, k) = cycle_of(s)?;
        Some(Cycle {
            review: r,
            task: s.current_task.filter(|_| r == Review::Code),
            iteration: k,
            max_reviews: s.max_reviews,
            model: next_reviewers(s, k),
            consecutive_clean: s.consecutive_clean,
            clean_reviews_required: s.clean_reviews_required,
            review_failures: s.review_failures,
            status: status_of(f, s, r, k, &prediction),
        })
    });
    let reviews = cycle
        .as_ref()
        .map(|c| {
            let r = c.review;
            // Only iterations that left a file or a verdict: counting up to
            // phase_iteration would take forever for a huge (but valid) value.
            let mut seen: Vec<u64> = f
                .files
                .iter()
                .filter_map(|n| match PlanFile::parse(n) {
                    Some(PlanFile::Review(s, i) | PlanFile::PostReview(s, i))
                        if Some(s) == plan_file::subject(r, c.task) =>
                    {
                        Some(i)
                    }
                    _ => None,
                })
                .chain(verdicts.iter().map(|(i, _)| *i))
                .filter(|i| (1..=c.iteration).contains(i))
                .collect();
            seen.sort_unstable();
            seen.dedup();
            seen.into_iter()
                .filter_map(|i| {
                    let file = plan_file::review_file(r, i, c.task)?;
                    let post = plan_file::post_file(r, i, c.task)?;
                    Some(ReviewLine {
                        iteration: i,
                        exists: f.has_file(&file),
                        post_review: f.has_file(&post),
                        verdict: verdicts
                            .iter()
                            .find(|(n, _)| *n == i)
                            .map(|(_, v)| v.clone()),
                        file,
                        new_findings: None,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let reason = state.and_then(|s| cycle::hard_stop(s, f.spent_usd));
    let recorded = cycle.as_ref().and_then(|c| {
        diag.filter(|d| c.status == CycleStatus::HardStop && diagnostics_match(d, c, reason))
    });
    let hard_stop_recorded = recorded.is_some();
    let hard_stop = recorded.or_else(|| {
        let (c, s, reason) = (cycle.as_ref()?, state?, reason?);
        let stop = cycle::HardStop {
            reason,
            review: c.review,
            task: c.task,
            iterations: c.iteration,
            state: s.clone(),
            last_review: None,
            spent_usd: f.spent_usd,
        };
        (c.status == CycleStatus::HardStop)
            .then(|| diagnostics::build(f.plan, &stop, f.tasks, verdicts, None).0)
    });
    Report {
        plan: f.plan.into(),
        dir: dir.into(),
        state: state.map(|s| s.all_fields()),
        state_error,
        phase: state.map(|s| s.phase.clone()),
        next_phase: state.and_then(|s| s.next_phase.clone()),
        current_task: current,
        cycle,
        tasks,
        reviews,
        hard_stop,
        hard_stop_recorded,
        errors: f.errors.iter().map(ToString::to_string).collect(),
        spend: SpendReport::default(),
        last_failure: None,
        running: None,
        next_stop: next_stop_words(f, &prediction),
        findings: None,
        run: None,
        run_view: None,
        paused: state.and_then(|s| {
            let until = s
                .paused_until
                .filter(|u| pause::is_paused(Some(*u), f.now))?;
            Some(Paused {
                until: pause::stamp(until),
                by: s.paused_by.clone(),
                when: pause::when(until, f.now),
            })
        }),
    }
}

const LABEL: usize = 10;

fn reviews(n: u64) -> String {
    format!("{n} review{}", if n == 1 { "" } else { "s" })
}

fn line(out: &mut String, p: &Paint, label: &str, text: &str) {
    out.push_str(&p.bold(&format!("{label:<LABEL$}")));
    out.push_str(&wrap(text, LABEL, WIDTH));
    out.push('\n');
}

/// The report for a person, in 80 columns.
pub fn human(r: &Report, p: &Paint) -> String {
    let mut out = String::new();
    line(&mut out, p, "Plan", &format!("{}  ({})", r.plan, r.dir));
    if let Some(e) = &r.state_error {
        line(&mut out, p, "State", &p.red(e));
    } else if r.state.is_none() {
        line(
            &mut out,
            p,
            "State",
            &format!(
                "no state.json: the reviewed workflow has not started (`taskie init {}` starts it)",
                r.plan
            ),
        );
    } else {
        let phase = r
            .phase
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or("\"\"");
        let next = r.next_phase.as_deref().unwrap_or("nothing scheduled");
        line(&mut out, p, "Phase", &format!("{phase} → {next}"));
    }
    if let Some(c) = &r.cycle {
        cycle_lines(&mut out, p, r, c);
    }
    line(&mut out, p, "Next stop", &r.next_stop);
    if let Some(paused) = &r.paused {
        let by = paused
            .by
            .as_deref()
            .map(|b| format!(" ({b})"))
            .unwrap_or_default();
        line(
            &mut out,
            p,
            "Paused",
            &p.yellow(&format!(
                "until {}{by}: no reviewer runs before then; `taskie resume --plan {}` lifts the pause",
                paused.when, r.plan
            )),
        );
    }
    spend_line(&mut out, p, &r.spend);
    tasks_lines(&mut out, p, r);
    if let Some(diag) = &r.hard_stop {
        hard_stop_lines(&mut out, p, diag, r.hard_stop_recorded);
    }
    if !r.errors.is_empty() {
        let n = r.errors.len();
        line(
            &mut out,
            p,
            "Problems",
            &p.red(&format!(
                "{n} structure error{} (the hook does nothing else until they are fixed):",
                if n == 1 { "" } else { "s" }
            )),
        );
        for e in &r.errors {
            out.push_str(&format!("  - {}\n", wrap(e, 4, WIDTH)));
        }
    }
    out
}

/// `Spend     cycle 2 reviews, 3m 04s, $0.42 · plan 7 reviews, 12m 10s, $1.90 of $5`.
fn spend_line(out: &mut String, p: &Paint, s: &SpendReport) {
    if s.plan.reviews == 0 && s.plan.failed_attempts == 0 && s.budget_usd.is_none() {
        return;
    }
    let totals = |t: &spend::Totals| {
        let secs = t.review_seconds.round() as u64;
        let failed = match t.failed_attempts {
            0 => String::new(),
            1 => " and 1 failed attempt".into(),
            n => format!(" and {n} failed attempts"),
        };
        format!(
            "{}{failed}, {}, {}",
            reviews(t.reviews),
            minutes_seconds(secs),
            spend::money(t.cost_usd)
        )
    };
    let mut text = format!("cycle {} · plan {}", totals(&s.cycle), totals(&s.plan));
    if let Some(b) = s.budget_usd {
        text.push_str(&format!(" of {} (max_cost_usd)", spend::money(b)));
    }
    line(out, p, "Spend", &text);
}

fn cycle_lines(out: &mut String, p: &Paint, r: &Report, c: &Cycle) {
    let of_task = c.task.map(|t| format!(" of task {t}")).unwrap_or_default();
    let status = match (c.status, &r.running) {
        (_, Some(run)) => p.yellow(&format!("review {run}")),
        (CycleStatus::HardStop, _) => p.red(c.status.text()),
        (CycleStatus::Passed, _) => p.green(c.status.text()),
        _ => p.yellow(c.status.text()),
    };
    line(
        out,
        p,
        "Cycle",
        &format!(
            "{}{of_task}: {}/{} reviews run, {status}",
            c.review, c.iteration, c.max_reviews
        ),
    );
    let mut reviewer = format!(
        "next model {}, clean streak {}/{}",
        c.model, c.consecutive_clean, c.clean_reviews_required
    );
    if c.review_failures > 0 {
        reviewer.push_str(&format!(
            ", reviewer failures {}/{MAX_REVIEW_FAILURES}",
            c.review_failures
        ));
    }
    line(out, p, "Reviewer", &reviewer);
    if let Some(why) = r.last_failure.as_deref().filter(|_| c.review_failures > 0) {
        line(out, p, "Failure", &p.red(&format!("last attempt: {why}")));
    }
    if r.reviews.is_empty() {
        return;
    }
    line(out, p, "Reviews", &format!("{} (this cycle)", c.review));
    for rv in &r.reviews {
        let verdict = match rv.verdict.as_deref() {
            Some("PASS") => p.green("PASS   "),
            Some(v) => p.red(&format!("{v:<7}")),
            None => p.dim("?      "),
        };
        let file = if rv.exists {
            clip(&rv.file, 36)
        } else {
            format!("{} (missing)", clip(&rv.file, 26))
        };
        let post = if rv.post_review {
            "post-review written"
        } else {
            "no post-review"
        };
        let new = match rv.new_findings {
            Some(1) => ", 1 new finding".to_string(),
            Some(n) => format!(", {n} new findings"),
            None => String::new(),
        };
        out.push_str(&format!(
            "  #{:<3} {verdict} {file:<37} {post}{new}\n",
            rv.iteration
        ));
    }
    if let Some(n) = &r.findings {
        line(
            out,
            p,
            "Findings",
            &format!(
                "{} opened, {} fixed, {} dismissed, {} reopened, {} open (findings.json)",
                n.opened, n.fixed, n.dismissed, n.reopened, n.open
            ),
        );
    }
}

fn tasks_lines(out: &mut String, p: &Paint, r: &Report) {
    if r.tasks.is_empty() {
        line(out, p, "Tasks", "none yet (no usable tasks.md)");
        return;
    }
    let done = r.tasks.iter().filter(|t| t.finished).count();
    line(
        out,
        p,
        "Tasks",
        &format!("{done}/{} finished", r.tasks.len()),
    );
    // Columns: id, status, title, each as wide as its longest entry (within limits), so
    // the titles line up and a line fits the report's width.
    let id_of = |t: &TaskLine| clip(&t.id, 8);
    let status_of = |t: &TaskLine| {
        if t.status.is_empty() {
            "(no status)".to_string()
        } else {
            clip(&t.status, 16)
        }
    };
    let width = |f: &dyn Fn(&TaskLine) -> String| {
        r.tasks
            .iter()
            .map(|t| f(t).chars().count())
            .max()
            .unwrap_or(0)
    };
    let (id_w, status_w) = (width(&id_of), width(&status_of));
    let current_mark = "  ← current";
    // "  [ ] " + id + "  " + status + "  " + title (+ the current marker).
    let room = WIDTH
        .saturating_sub(6 + id_w + 2 + status_w + 2 + current_mark.chars().count())
        .max(12);
    for t in &r.tasks {
        let mark = if t.finished {
            p.green("[x]")
        } else {
            p.yellow("[ ]")
        };
        let current = if t.current {
            p.bold(current_mark)
        } else {
            String::new()
        };
        let row = format!(
            "{:<id_w$}  {:<status_w$}  {}",
            id_of(t),
            status_of(t),
            clip(&t.title, room)
        );
        out.push_str(&format!("  {mark} {}{current}\n", row.trim_end()));
    }
}

fn hard_stop_lines(out: &mut String, p: &Paint, d: &Diagnostics, recorded: bool) {
    let details = if recorded {
        format!("see .taskie/logs/{}", diagnostics::file_name(&d.plan))
    } else {
        format!(
            "the next stop writes .taskie/logs/{}",
            diagnostics::file_name(&d.plan)
        )
    };
    line(
        out,
        p,
        "Stopped",
        &p.red(&format!(
            "{} after {}; {details}",
            d.stop_reason,
            reviews(d.iterations)
        )),
    );
    if let Some(last) = &d.last_review {
        line(out, p, "Last", last);
    }
    for f in &d.findings {
        out.push_str(&format!("  - {}\n", wrap(f, 4, WIDTH)));
    }
    line(out, p, "Resolve", "one of:");
    for a in &d.suggested_actions {
        out.push_str(&format!("  {}\n", clip(&a.command, WIDTH - 2)));
        out.push_str(&format!("      {}\n", wrap(&a.description, 6, WIDTH)));
    }
}

/// `taskie status [--plan ID] [--json]`: a read-only report, so it takes no lock.
pub fn run(
    inv: &Invocation,
    plan: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let target = inv.target(plan)?;
    let gathered = target.gather()?;
    let facts = gathered.facts();
    let logs = target.logs();
    // What the reviews cost and said, from the plan's small ledger (SPEC §18): O(1)
    // whatever the size of the event log.
    let ledger = snapshot::ledger(&target.dir(), &target.plan);
    let (verdicts, diag) = match &gathered.state {
        Ok(Some(s)) => match cycle_of(s) {
            Some((r, k)) => {
                let task = s.current_task.filter(|_| r == Review::Code);
                let verdicts =
                    snapshot::cycle_verdicts(Some(&ledger), &logs, &target.plan, r.name(), task, k);
                let diag = crate::store::fs::read_regular(
                    &logs.join(diagnostics::file_name(&target.plan)),
                    crate::store::fs::PLAN_FILE_LIMIT,
                )
                .ok()
                .flatten()
                .and_then(|b| Diagnostics::parse(&b));
                (verdicts, diag)
            }
            None => (Vec::new(), None),
        },
        _ => (Vec::new(), None),
    };
    let mut report = build(&facts, &target.rel_dir(), &verdicts, diag);
    let state = gathered.state.as_ref().ok().and_then(Option::as_ref);
    report.spend = SpendReport::of(&ledger, state, report.cycle.as_ref());
    report.last_failure = report
        .cycle
        .as_ref()
        .filter(|c| c.review_failures > 0)
        .and_then(|c| ledger_cycle(&ledger, c.review, c.task))
        .and_then(|l| l.last_failure.clone());
    report.running = lock::running(&target.locks(), &target.plan);
    match snapshot::findings(&target.dir()) {
        Ok(ledger) => findings_of(&mut report, &ledger),
        Err(e) => eprintln!("taskie: {e}"),
    }
    report.run = crate::store::run::latest_state(&target.project.taskie(), &target.plan);
    report.run_view = crate::store::run::latest(&target.project.taskie(), &target.plan)
        .and_then(|dir| crate::store::run::observe(&dir, &target.locks()));
    if json {
        let text = serde_json::to_string_pretty(&report).map_err(std::io::Error::other)?;
        writeln!(out, "{text}")?;
    } else {
        write!(out, "{}", human(&report, &inv.paint))?;
        if let Some(run) = &report.run_view {
            writeln!(out, "\n{}", crate::model::run::view::lines(run).join("\n"))?;
        }
    }
    Ok(())
}

/// The ledger's counts for the cycle shown, and each review's new findings (SPEC §21).
fn findings_of(report: &mut Report, ledger: &crate::model::findings::Ledger) {
    let Some(c) = &report.cycle else {
        return;
    };
    let Some(cycle) = ledger.cycle(c.review.name(), c.task) else {
        return;
    };
    report.findings = Some(ledger.counts(c.review.name(), c.task));
    for rv in &mut report.reviews {
        rv.new_findings = cycle
            .new_per_review
            .iter()
            .find(|(i, _)| *i == rv.iteration)
            .map(|(_, n)| *n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::state::StateError;
    use crate::model::tasks::TaskRow;

    fn report(
        files: &[&str],
        state: &str,
        verdicts: &[(u64, &str)],
        diag: Option<Diagnostics>,
    ) -> Report {
        let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        let st: Result<Option<State>, StateError> =
            Ok(Some(State::parse(state.as_bytes()).unwrap()));
        let tasks = vec![
            TaskRow {
                id: "1".into(),
                status: "done".into(),
                title: String::new(),
            },
            TaskRow {
                id: "2".into(),
                status: "in progress".into(),
                title: String::new(),
            },
        ];
        let v: Vec<(u64, String)> = verdicts.iter().map(|(i, v)| (*i, v.to_string())).collect();
        let f = Facts {
            plan: "p",
            stop_hook_active: false,
            errors: &[],
            state: &st,
            files: &files,
            tasks: &tasks,
            spent_usd: 0.0,
            now: 0,
            host: &crate::model::host::CLAUDE,
        };
        build(&f, ".taskie/plans/p", &v, diag)
    }

    const OWED: &str = r#"{"phase":"code-review","next_phase":"post-code-review","phase_iteration":2,
        "current_task":2,"review_model":"opus","consecutive_clean":1}"#;

    #[test]
    fn the_cycle_lists_its_reviews_with_verdicts_and_post_reviews() {
        let r = report(
            &[
                "task-2-code-review-1.md",
                "task-2-code-post-review-1.md",
                "task-2-code-review-2.md",
            ],
            OWED,
            &[(1, "FAIL"), (2, "PASS")],
            None,
        );
        let c = r.cycle.as_ref().unwrap();
        assert_eq!(
            (c.review, c.task, c.iteration, c.status),
            (Review::Code, Some(2), 2, CycleStatus::PostReviewOwed)
        );
        assert_eq!(r.reviews.len(), 2);
        assert_eq!(
            (r.reviews[0].verdict.as_deref(), r.reviews[0].post_review),
            (Some("FAIL"), true)
        );
        assert_eq!(
            (r.reviews[1].verdict.as_deref(), r.reviews[1].post_review),
            (Some("PASS"), false)
        );
        assert!(r.tasks[1].current && !r.tasks[1].finished && r.tasks[0].finished);
    }

    #[test]
    fn a_hard_stop_shows_the_diagnostics_of_its_cycle_only() {
        let state = r#"{"phase":"post-plan-review","next_phase":"plan-review","phase_iteration":2,"max_reviews":2}"#;
        let diag = Diagnostics::parse(
            br#"{"plan":"p","review":"plan-review","task":null,"iterations":2,"max_reviews":2,"stop_reason":"max_reviews_reached"}"#,
        )
        .unwrap();
        let r = report(&[], state, &[], Some(diag.clone()));
        assert_eq!(r.cycle.as_ref().unwrap().status, CycleStatus::HardStop);
        assert_eq!(r.hard_stop, Some(diag.clone()));
        let mut older = diag.clone();
        older.iterations = 1;
        // An earlier stop's file: the stop shown is built from the state.
        let r = report(&[], state, &[], Some(older));
        assert_eq!(
            (r.hard_stop.map(|d| d.iterations), r.hard_stop_recorded),
            (Some(2), false)
        );
        let raised = state.replace("\"max_reviews\":2", "\"max_reviews\":6");
        let r = report(&[], &raised, &[], None);
        assert_eq!(r.cycle.unwrap().status, CycleStatus::ReviewDue);
        // Raised, then stopped again by three reviewer failures: the old stop's
        // diagnostics no longer explain the state.
        let failing = raised.replace('}', r#","review_failures":3}"#);
        let r = report(&[], &failing, &[], Some(diag.clone()));
        let live = r.hard_stop.unwrap();
        assert_eq!(
            (live.stop_reason.as_str(), r.hard_stop_recorded),
            ("reviewer_failures_exhausted", false)
        );
    }

    #[test]
    fn a_cycle_ended_without_its_clean_streak_was_advanced_by_hand() {
        let advanced = r#"{"phase":"plan-review","next_phase":"create-tasks","phase_iteration":2,
            "max_reviews":2,"consecutive_clean":0}"#;
        let r = report(&[], advanced, &[(1, "FAIL"), (2, "FAIL")], None);
        assert_eq!(r.cycle.unwrap().status, CycleStatus::AdvancedByHand);
        let disabled = advanced.replace("\"max_reviews\":2", "\"max_reviews\":0");
        let r = report(&[], &disabled, &[], None);
        assert_eq!(r.cycle.unwrap().status, CycleStatus::ReviewsDisabled);
    }

    #[test]
    fn a_passed_cycle_is_shown_until_the_next_one_starts() {
        let r = report(
            &[],
            r#"{"phase":"plan-review","next_phase":"create-tasks","phase_iteration":3,"consecutive_clean":2}"#,
            &[],
            None,
        );
        let c = r.cycle.unwrap();
        assert_eq!(
            (c.review, c.status, c.iteration),
            (Review::Plan, CycleStatus::Passed, 3)
        );
        let r = report(
            &[],
            r#"{"phase":"next-task","next_phase":null,"phase_iteration":null}"#,
            &[],
            None,
        );
        assert!(r.cycle.is_none());
    }

    #[test]
    fn the_human_report_fits_80_columns_and_has_no_colour_when_off() {
        let r = report(&["task-2-code-review-1.md"], OWED, &[(1, "FAIL")], None);
        let text = human(&r, &Paint::new(false));
        assert!(!text.contains('\x1b'));
        for l in text.lines() {
            assert!(l.chars().count() <= 80, "{l}");
        }
        assert!(text.contains("code-review → post-code-review"), "{text}");
        assert!(text.contains("[x] 1"), "{text}");
        assert!(text.contains("[ ] 2"), "{text}");
        assert!(human(&r, &Paint::new(true)).contains('\x1b'));
    }
}
