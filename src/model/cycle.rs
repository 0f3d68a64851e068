//! The review cycle (SPEC §5 steps 14–17, §6): where a passed review leads, what a
//! new cycle starts from, and when a cycle is hard-stopped. Each rule is written here
//! once; the hook, `continue-plan`, `status`, `mark` and `advance` call it.

use crate::model::phase::{Phase, Review};
use crate::model::reviewers::{self, Mode, Reviewer};
use crate::model::spend;
use crate::model::state::State;
use crate::model::tasks::TaskRow;
use crate::model::verdict::Reading;

/// Review failures in a row that turn into a hard stop (SPEC §5 step 14).
pub const MAX_REVIEW_FAILURES: u64 = 3;

/// The review cycle in progress: `next_phase` is a review or its post-review.
pub fn in_progress(s: &State) -> Option<Review> {
    of_next_phase(s.next_phase.as_deref())
}

/// The cycle a `next_phase` value belongs to: a review or its post-review.
pub fn of_next_phase(next: Option<&str>) -> Option<Review> {
    let next = Phase::parse(next?)?;
    next.review().or_else(|| next.post_review_of())
}

/// Setting `next_phase` from `before` to `after` starts a new cycle (which then takes
/// [`reset`]) when `after` is a review phase and not the cycle already in progress; going
/// back from `post-R` to `R` continues the current one.
pub fn starts_new(before: Option<&str>, after: Option<&str>) -> bool {
    after
        .and_then(Review::from_name)
        .is_some_and(|r| of_next_phase(before) != Some(r))
}

/// Why review N = `phase_iteration + 1` may not run (SPEC §5 step 14), if it may not.
/// Reviewer failures are checked first: they are what the human must fix. An iteration
/// count that cannot grow is a spent cycle too (saturating would repeat the iteration).
/// With reviews disabled there is no cycle to stop. `plan_spent_usd` is what the
/// plan's logged reviews cost: once it reaches `max_cost_usd` no review may start
/// (SPEC §18); that comes before the cycle limit, which raising could not help.
pub fn hard_stop(s: &State, plan_spent_usd: f64) -> Option<StopReason> {
    let done = s.phase_iteration.unwrap_or(0);
    if s.max_reviews == 0 {
        None
    } else if s.review_failures >= MAX_REVIEW_FAILURES {
        Some(StopReason::ReviewerFailuresExhausted)
    } else if s
        .max_cost_usd
        .is_some_and(|budget| plan_spent_usd >= budget)
    {
        Some(StopReason::BudgetExhausted)
    } else if done.checked_add(1).is_none_or(|n| n > s.max_reviews) {
        Some(StopReason::MaxReviewsReached)
    } else {
        None
    }
}

/// Who reviews at iteration `n`, as the event log and `taskie status` name it:
/// `review_model` for the §8 reviewer, else the `reviewers` entries due, comma-separated.
pub fn reviewer_label(s: &State, n: u64) -> String {
    if s.reviewers.is_empty() {
        return s.review_model.clone();
    }
    let (list, _, _) = reviewers_for(s, n, 0.0);
    let names: Vec<String> = list.iter().map(ToString::to_string).collect();
    names.join(",")
}

/// Who reviews at iteration `n` of state `s`, whether as a panel, and what budget is
/// left after `spent_usd` (SPEC §18).
pub fn reviewers_for(s: &State, n: u64, spent_usd: f64) -> (Vec<Reviewer>, bool, Option<f64>) {
    let list = reviewers::for_iteration(&s.reviewers, s.review_mode, n, &s.review_model);
    let panel = s.review_mode == Mode::Panel && list.len() > 1;
    let left = s.max_cost_usd.map(|b| spend::remaining(b, spent_usd));
    (list, panel, left)
}

/// A new cycle (SPEC §14 "cycle reset"): no reviews run, the first reviewer model, no
/// clean streak, no failures.
pub fn reset(s: &mut State) {
    s.phase_iteration = Some(0);
    s.review_model = crate::model::state::FIRST_MODEL.into();
    s.consecutive_clean = 0;
    s.review_failures = 0;
}

/// Why a cycle is hard-stopped; the names are the diagnostics file's `stop_reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum StopReason {
    MaxReviewsReached,
    ReviewerFailuresExhausted,
    BudgetExhausted,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct HardStop {
    pub reason: StopReason,
    pub review: Review,
    pub task: Option<u64>,
    /// Reviews already run in this cycle.
    pub iterations: u64,
    pub state: State,
    /// The newest review file of this cycle, if any was written.
    pub last_review: Option<String>,
    /// What the plan's logged reviews cost (counted only when it has a budget).
    pub spent_usd: f64,
}

/// A command that resolves a hard stop, and what it does.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
#[serde(default)]
pub struct Remedy {
    pub command: String,
    pub description: String,
}

/// Why review `r` of plan `plan` is hard-stopped, and the commands that resolve it, last
/// always `taskie advance`: the one home of this advice for the hook's message, the
/// diagnostics file and `taskie continue-plan`. `target` is where an advance goes.
pub fn explain_stop(
    plan: &str,
    reason: StopReason,
    r: Review,
    s: &State,
    spent_usd: f64,
    target: &str,
) -> (String, Vec<Remedy>) {
    let next = s.phase_iteration.unwrap_or(0).saturating_add(1);
    let (why, first) = match reason {
        StopReason::MaxReviewsReached => {
            let more = s.max_reviews.saturating_add(4);
            (
                format!(
                    "{r} ran the {} its cycle allows (max_reviews) without {} clean reviews in a row",
                    if s.max_reviews == 1 {
                        "1 review".to_string()
                    } else {
                        format!("{} reviews", s.max_reviews)
                    },
                    s.clean_reviews_required
                ),
                Remedy {
                    command: format!("taskie state set --plan {plan} max_reviews={more}"),
                    description: format!(
                        "allow {more} reviews in this cycle; the next stop runs review #{next}"
                    ),
                },
            )
        }
        StopReason::ReviewerFailuresExhausted => (
            format!("the {r} reviewer failed {} times in a row", s.review_failures),
            Remedy {
                command: format!("taskie state set --plan {plan} review_failures=0"),
                // The state keeps no cause: the reviewer, or a change to the checkout or to
                // state.json while it ran (the answer at the last attempt named which).
                description: "after fixing why the attempts failed (the reviewer, or a change made while it \
                              ran: the logs in .taskie/logs/ say which), retry the review at the next stop"
                    .into(),
            },
        ),
        StopReason::BudgetExhausted => {
            let budget = s.max_cost_usd.unwrap_or(0.0);
            // Room for about as many reviews again as the budget has paid for so far.
            let raised = (budget * 2.0).max(spent_usd + 1.0).ceil();
            let more = spend::dollars(raised);
            (
                format!(
                    "the plan's reviews have cost {} of its {} budget (max_cost_usd)",
                    spend::money(spent_usd),
                    spend::money(budget)
                ),
                Remedy {
                    command: format!("taskie state set --plan {plan} max_cost_usd={more}"),
                    description: format!(
                        "raise the plan's review budget to {}; the next stop runs review #{next}",
                        spend::money(raised)
                    ),
                },
            )
        }
    };
    let advance = Remedy {
        command: format!("taskie advance --plan {plan}"),
        description: format!("accept the work as it is and move on to {target}"),
    };
    (why, vec![first, advance])
}

/// Remedies as one sentence: "`cmd` (what it does), or `cmd` (what it does)".
pub fn remedies_text(remedies: &[Remedy]) -> String {
    let parts: Vec<String> = remedies
        .iter()
        .map(|a| format!("`{}` ({})", a.command, a.description))
        .collect();
    parts.join(", or ")
}

#[derive(Debug, Clone, PartialEq)]
pub struct Due {
    pub review: Review,
    pub iteration: u64,
    pub model: String,
    pub task: Option<u64>,
    pub review_file: String,
    pub post_file: String,
    /// The state as read.
    pub read: State,
    /// The state the review starts from (after post-review detection).
    pub base: State,
    /// Who reviews (SPEC §18): one reviewer, or every member of a panel.
    pub reviewers: Vec<Reviewer>,
    /// All of `reviewers` run together and their verdicts make one review.
    pub panel: bool,
    /// What is left of `max_cost_usd`, when the plan has a budget.
    pub budget_left: Option<f64>,
}

impl Due {
    /// The post-review file of the review before this one in the cycle, if any.
    pub fn post_file_before(&self) -> Option<String> {
        let before = self.iteration.checked_sub(1).filter(|n| *n >= 1)?;
        crate::model::plan_file::post_file(self.review, before, self.task)
    }

    /// Clean reviews a PASS counts for: a passing panel of k is k clean reviews.
    pub fn weight(&self) -> u64 {
        weight_of(&self.reviewers, self.panel)
    }
}

fn weight_of(reviewers: &[Reviewer], panel: bool) -> u64 {
    if panel { reviewers.len() as u64 } else { 1 }
}

/// What a PASS at iteration `n` of state `s` adds to the streak (see [`Due::weight`]).
pub fn clean_weight(s: &State, n: u64) -> u64 {
    let (reviewers, panel, _) = reviewers_for(s, n, 0.0);
    weight_of(&reviewers, panel)
}

/// A reviewer that could not review this iteration, and why (SPEC §22 failover).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Unavailable {
    pub reviewer: String,
    pub why: String,
}

/// Who reviewed and who was unavailable, when a reviewer failed over to another (alternate
/// mode) or a panel went on without a member. Empty when everyone asked reviewed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Failover {
    pub reviewed_by: Vec<String>,
    pub unavailable: Vec<Unavailable>,
}

impl Failover {
    pub fn happened(&self) -> bool {
        !self.unavailable.is_empty()
    }

    /// `codex:gpt-5-codex reviewed; claude:opus was unavailable (why)`: for the review
    /// file's header, the answer and the event, so a failover is never silent.
    pub fn sentence(&self) -> String {
        let away: Vec<String> = self
            .unavailable
            .iter()
            .map(|u| {
                format!(
                    "{} was unavailable ({})",
                    u.reviewer,
                    crate::model::text::clip(&u.why, 160)
                )
            })
            .collect();
        format!(
            "{} reviewed; {}",
            self.reviewed_by.join(" and "),
            away.join("; ")
        )
    }
}

/// What made a review attempt fail, for the fix its hard stop names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The reviewer gave no verdict: it failed, timed out, or none could run.
    Reviewer,
    /// The checkout changed while the reviewer ran, so its verdict was voided (SPEC §8).
    CheckoutChanged,
    /// state.json changed while the reviewer ran, so its review was not recorded.
    StateEdited,
}

/// How the reviewer run ended, as far as the decision cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Reviewed {
    Failed {
        reason: String,
        log: String,
        exit: Option<i32>,
        failure: Failure,
    },
    /// The reviewer's usage limit was reached and resets at `until` (Unix seconds): no
    /// review and no failure; the plan waits (SPEC §22).
    Paused {
        until: i64,
        /// Who hit the limit and what it said.
        by: String,
        log: String,
    },
    Verdict {
        reading: Reading,
        exit: i32,
        /// The review's findings, first first, for the block reason.
        findings: Vec<String>,
        /// Set when an unavailable reviewer was replaced or left out (SPEC §22).
        failover: Failover,
        /// Ledger ids the review confirmed fixed or reopened (SPEC §21).
        verified: crate::model::findings::Verified,
    },
}

/// Where a passed review `r` leads (SPEC §6).
pub fn advance_target(r: Review, state: &State, tasks: &[TaskRow]) -> Phase {
    let implement = Phase::implement(state.tdd);
    match r {
        Review::Plan => Phase::CreateTasks,
        Review::Tasks => implement,
        Review::Code => {
            let current = state.current_task.map(|t| t.to_string());
            let other_unfinished = tasks
                .iter()
                .any(|t| !t.is_finished() && current.as_deref() != Some(task_key(t).as_str()));
            if other_unfinished {
                implement
            } else {
                Phase::AllCodeReview
            }
        }
        Review::AllCode => Phase::Complete,
    }
}

/// Applies the advance of SPEC §6 to `state` as if cycle `r` passed at `iteration`.
pub fn apply_advance(state: &mut State, r: Review, tasks: &[TaskRow], iteration: u64) {
    let target = advance_target(r, state, tasks);
    state.set_phase(r.phase());
    state.schedule(Some(target));
    state.phase_iteration = Some(iteration);
    if target == Phase::AllCodeReview {
        // The whole-implementation review is a new cycle (SPEC §6).
        reset(state);
    }
}

/// [`apply_advance`] when a decision ends the cycle rather than a clean streak (`taskie
/// advance`, reviews disabled): the next cycle starts from zero.
pub fn advance_by_decision(state: &mut State, r: Review, tasks: &[TaskRow], iteration: u64) {
    apply_advance(state, r, tasks, iteration);
    state.consecutive_clean = 0;
    state.review_failures = 0;
}

/// A task's id for comparisons: its number when it has one, else its text.
fn task_key(t: &TaskRow) -> String {
    t.number()
        .map(|n| n.to_string())
        .unwrap_or_else(|| t.id.clone())
}

/// Where a plan whose state.json is gone had got to, as its review files show, and the
/// `taskie state set` assignments that put the state back there (after `taskie init`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    pub review: Review,
    pub task: Option<u64>,
    /// The newest review of that cycle.
    pub iteration: u64,
    /// Its file, the evidence.
    pub newest: String,
    /// `FIELD=VALUE` words for `taskie state set`.
    pub assignments: Vec<String>,
}

impl Recovery {
    /// The words for plan `plan`, whose state.json (`state_rel`) is gone.
    pub fn explain(&self, plan: &str, state_rel: &str) -> String {
        let of_task = self
            .task
            .map(|t| format!(" of task {t}"))
            .unwrap_or_default();
        format!(
            "{state_rel} is missing, but the plan's files show it had reached {} #{}{of_task} (the newest review is \
             {}): the state was lost; restore state.json (from version control), or resume there with \
             `taskie init {plan}` then `taskie state set --plan {plan} {}`",
            self.review,
            self.iteration,
            self.newest,
            self.assignments.join(" ")
        )
    }
}

/// The furthest review cycle the plan's files show (the all-code review, else the code
/// review of the highest task, else the tasks review, else the plan review), if any.
pub fn recover_from_files(files: &[String]) -> Option<Recovery> {
    use crate::model::plan_file::{PlanFile, Subject};
    let parsed: Vec<PlanFile> = files.iter().filter_map(|f| PlanFile::parse(f)).collect();
    let rank = |s: Subject| match s {
        Subject::Plan => Some((0, None)),
        Subject::Tasks => Some((1, None)),
        Subject::TaskCode(n) => Some((2 + n, Some(n))),
        Subject::AllCode => Some((u64::MAX, None)),
        Subject::Design | Subject::TaskLegacy(_) => None,
    };
    let (subject, iteration) = parsed
        .iter()
        .filter_map(|f| match f {
            PlanFile::Review(s, i) => rank(*s).map(|(r, _)| (r, *s, *i)),
            _ => None,
        })
        .max()
        .map(|(_, s, i)| (s, i))?;
    let (review, task) = match subject {
        Subject::Plan => (Review::Plan, None),
        Subject::Tasks => (Review::Tasks, None),
        Subject::TaskCode(n) => (Review::Code, Some(n)),
        _ => (Review::AllCode, None),
    };
    let newest = PlanFile::Review(subject, iteration).file_name();
    let answered = parsed.contains(&PlanFile::PostReview(subject, iteration));
    let mut assignments = Vec::new();
    if let Some(n) = task {
        assignments.push(format!("current_task={n}"));
    }
    if answered {
        assignments.push(format!("next_phase={}", review.name()));
    } else {
        assignments.push(format!("phase={}", review.name()));
        assignments.push(format!("next_phase={}", review.post_name()));
    }
    assignments.push(format!("phase_iteration={iteration}"));
    Some(Recovery {
        review,
        task,
        iteration,
        newest,
        assignments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_targets_follow_the_table() {
        let tasks = |rows: &[(&str, &str)]| -> Vec<TaskRow> {
            rows.iter()
                .map(|(id, s)| TaskRow {
                    id: id.to_string(),
                    status: s.to_string(),
                    title: String::new(),
                })
                .collect()
        };
        let mut s = State::default();
        s.current_task = Some(2);
        assert_eq!(advance_target(Review::Plan, &s, &[]), Phase::CreateTasks);
        assert_eq!(advance_target(Review::Tasks, &s, &[]), Phase::CompleteTask);
        assert_eq!(advance_target(Review::AllCode, &s, &[]), Phase::Complete);
        let open = tasks(&[("1", "done"), ("2", "pending"), ("3", "blocked")]);
        assert_eq!(advance_target(Review::Code, &s, &open), Phase::CompleteTask);
        let last = tasks(&[("1", "done"), ("2", "in progress"), ("3", "postponed")]);
        assert_eq!(
            advance_target(Review::Code, &s, &last),
            Phase::AllCodeReview
        );
        s.tdd = true;
        assert_eq!(
            advance_target(Review::Tasks, &s, &[]),
            Phase::CompleteTaskTdd
        );
        assert_eq!(
            advance_target(Review::Code, &s, &open),
            Phase::CompleteTaskTdd
        );
    }

    #[test]
    fn the_all_code_review_cycle_starts_fresh() {
        let mut s = State::default();
        (s.current_task, s.consecutive_clean, s.review_model) = (Some(1), 2, "sonnet".into());
        apply_advance(
            &mut s,
            Review::Code,
            &[TaskRow {
                id: "1".into(),
                status: "done".into(),
                title: String::new(),
            }],
            5,
        );
        assert_eq!(
            (
                s.phase.as_str(),
                s.next_phase.as_deref(),
                s.phase_iteration,
                s.consecutive_clean,
                s.review_model.as_str()
            ),
            ("code-review", Some("all-code-review"), Some(0), 0, "opus")
        );
    }

    #[test]
    fn a_cycle_is_hard_stopped_by_failures_first_then_by_its_limit() {
        let mut s = State::default();
        s.max_reviews = 2;
        s.phase_iteration = Some(1);
        assert_eq!(hard_stop(&s, 0.0), None);
        s.phase_iteration = Some(2);
        assert_eq!(hard_stop(&s, 0.0), Some(StopReason::MaxReviewsReached));
        s.review_failures = MAX_REVIEW_FAILURES;
        assert_eq!(
            hard_stop(&s, 0.0),
            Some(StopReason::ReviewerFailuresExhausted)
        );
        s.phase_iteration = Some(u64::MAX);
        s.review_failures = 0;
        s.max_reviews = u64::MAX;
        assert_eq!(hard_stop(&s, 0.0), Some(StopReason::MaxReviewsReached));
        s.max_reviews = 0;
        assert_eq!(
            hard_stop(&s, 0.0),
            None,
            "reviews disabled: nothing to stop"
        );
    }

    #[test]
    fn a_spent_budget_stops_the_next_review_after_failures_and_before_the_limit() {
        let mut s = State::default();
        s.phase_iteration = Some(1);
        assert_eq!(hard_stop(&s, 1e9), None, "no budget, no budget stop");
        s.max_cost_usd = Some(1.0);
        assert_eq!(hard_stop(&s, 0.99), None);
        assert_eq!(hard_stop(&s, 1.0), Some(StopReason::BudgetExhausted));
        s.phase_iteration = Some(8);
        assert_eq!(hard_stop(&s, 1.5), Some(StopReason::BudgetExhausted));
        s.review_failures = MAX_REVIEW_FAILURES;
        assert_eq!(
            hard_stop(&s, 1.5),
            Some(StopReason::ReviewerFailuresExhausted)
        );
        s.max_reviews = 0;
        assert_eq!(hard_stop(&s, 1.5), None);
    }

    #[test]
    fn the_files_of_a_plan_whose_state_is_gone_show_where_to_resume() {
        let files =
            |names: &[&str]| -> Vec<String> { names.iter().map(|n| n.to_string()).collect() };
        assert_eq!(recover_from_files(&files(&["plan.md"])), None);
        let r = recover_from_files(&files(&[
            "plan.md",
            "plan-review-1.md",
            "plan-post-review-1.md",
            "plan-review-2.md",
            "tasks.md",
            "task-1.md",
            "task-2.md",
            "task-1-code-review-1.md",
            "task-2-code-review-1.md",
            "task-2-code-post-review-1.md",
            "task-2-code-review-2.md",
        ]))
        .unwrap();
        assert_eq!((r.review, r.task, r.iteration), (Review::Code, Some(2), 2));
        assert_eq!(r.newest, "task-2-code-review-2.md");
        assert_eq!(
            r.assignments,
            [
                "current_task=2",
                "phase=code-review",
                "next_phase=post-code-review",
                "phase_iteration=2"
            ]
        );
        let r = recover_from_files(&files(&[
            "plan.md",
            "plan-review-1.md",
            "plan-post-review-1.md",
        ]))
        .unwrap();
        assert_eq!(
            r.assignments,
            ["next_phase=plan-review", "phase_iteration=1"]
        );
    }
}
