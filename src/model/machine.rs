//! The plan's state machine (SPEC §5, §6, §14, §22): every change Taskie makes to a
//! `State`, each a named function from the state before to the state after. The hook,
//! `mark`, `advance`, `resume` and `continue-plan` decide *whether* a change happens;
//! *what* it writes is decided here only.

use crate::model::cycle;
use crate::model::phase::{self, Phase, Review};
use crate::model::state::State;
use crate::model::tasks::TaskRow;

/// `taskie init` (SPEC §12): the state of a plan whose plan.md is written and whose plan
/// review is due.
pub fn initial(max_reviews: u64, tdd: bool) -> State {
    let mut s = State::default();
    s.max_reviews = max_reviews;
    s.tdd = tdd;
    s.current_task = None;
    s.set_phase(Phase::NewPlan);
    s.schedule(Some(Phase::PlanReview));
    cycle::reset(&mut s);
    s
}

/// The agent's post-review of review `r` is written (SPEC §5 step 10, `taskie mark
/// post-R`): the cycle goes on with the next review.
pub fn post_review_done(s: &State, r: Review) -> State {
    let mut next = s.clone();
    next.set_phase(r.post_phase());
    next.schedule(Some(r.phase()));
    next
}

/// The state just before review `n` of `r` ran (SPEC §5 step 10): used when that review's
/// file is missing, so the review was interrupted or lost and runs again. The streak and
/// the model go back to what they were: the streak loses exactly what iteration `n` added
/// (k for a passing panel of k); an unknown earlier streak counts as 0, the safe side (one
/// more review, never one fewer).
pub fn rewind(s: &State, r: Review, n: u64) -> State {
    let mut back = post_review_done(s, r);
    back.phase_iteration = Some(n.saturating_sub(1));
    back.consecutive_clean = s
        .consecutive_clean
        .saturating_sub(cycle::clean_weight(s, n));
    back.review_model = phase::toggle_model(&s.review_model).into();
    back
}

/// A reviewer run that produced no review (SPEC §5 step 16): only the failure count
/// changes, since the agent cannot fix a broken reviewer; a pause it waited for is over.
pub fn after_failure(read: &State) -> State {
    let mut next = lift_pause(read);
    next.review_failures = next.review_failures.saturating_add(1);
    next
}

/// A reviewer's usage limit, resetting at `until` (SPEC §22): no failure is counted and
/// the first stop after the reset runs the review again.
pub fn after_pause(read: &State, until: i64, by: &str) -> State {
    let mut next = read.clone();
    next.paused_until = Some(until);
    next.paused_by = Some(by.into());
    next
}

/// `taskie resume` (SPEC §22): the pause is lifted, nothing else changes.
pub fn lift_pause(s: &State) -> State {
    let mut next = s.clone();
    next.paused_until = None;
    next.paused_by = None;
    next
}

/// state.json was edited while the reviewer ran (the edit wins): the run counts as a
/// failure on the edited state.
pub fn after_edit_during_review(edited: State) -> State {
    let mut next = edited;
    next.review_failures = next.review_failures.saturating_add(1);
    next
}

/// `taskie state set next_phase=R` scheduled another review than the one scheduled
/// (SPEC §14): its cycle starts afresh, or the old cycle's streak would end the new one
/// early. The caller keeps the fields the human assigned.
pub fn rescheduled(s: &State) -> State {
    let mut next = s.clone();
    cycle::reset(&mut next);
    next
}

/// Where a verdict leads.
#[derive(Debug, Clone, PartialEq)]
pub struct AfterVerdict {
    pub state: State,
    /// The streak after this verdict.
    pub streak: u64,
    /// `Some(target)` when the streak ended the cycle (SPEC §6); `None` when the agent
    /// owes the post-review.
    pub advanced_to: Option<Phase>,
}

/// Review `iteration` of `r` gave a verdict (SPEC §5 step 17). `weight` is what a PASS
/// adds to the streak (a passing panel of k counts k).
pub fn after_verdict(
    base: &State,
    r: Review,
    iteration: u64,
    pass: bool,
    weight: u64,
    tasks: &[TaskRow],
) -> AfterVerdict {
    let mut next = lift_pause(base);
    next.consecutive_clean = if pass {
        next.consecutive_clean.saturating_add(weight)
    } else {
        0
    };
    next.review_model = phase::toggle_model(&next.review_model).to_owned();
    next.review_failures = 0;
    let streak = next.consecutive_clean;
    if streak >= next.clean_reviews_required {
        let target = cycle::advance_target(r, &next, tasks);
        cycle::apply_advance(&mut next, r, tasks, iteration);
        return AfterVerdict {
            state: next,
            streak,
            advanced_to: Some(target),
        };
    }
    next.set_phase(r.phase());
    next.schedule(Some(r.post_phase()));
    next.phase_iteration = Some(iteration);
    AfterVerdict {
        state: next,
        streak,
        advanced_to: None,
    }
}

/// Reviews are disabled (`max_reviews == 0`, SPEC §5 step 13): the cycle of `r` is
/// passed over without running anything.
pub fn reviews_disabled(base: &State, r: Review, tasks: &[TaskRow]) -> State {
    let mut next = base.clone();
    cycle::advance_by_decision(&mut next, r, tasks, 0);
    next
}

/// `taskie advance` (SPEC §12): the human accepts the cycle of `r` as it is.
pub fn advanced_by_hand(s: &State, r: Review, tasks: &[TaskRow]) -> State {
    let mut next = s.clone();
    cycle::advance_by_decision(&mut next, r, tasks, s.phase_iteration.unwrap_or(0));
    next
}

/// The plan is complete (`taskie mark complete`, continue-plan reaching `complete`).
pub fn complete(s: &State) -> State {
    let mut next = s.clone();
    next.set_phase(Phase::Complete);
    next.schedule(None);
    next
}

/// `taskie mark create-tasks`: the tasks review cycle starts.
pub fn tasks_created(s: &State) -> State {
    let mut next = s.clone();
    next.set_phase(Phase::CreateTasks);
    next.schedule(Some(Phase::TasksReview));
    next.current_task = None;
    cycle::reset(&mut next);
    next
}

/// `taskie mark complete-task[-tdd] --task N`: the code review cycle of task N starts.
pub fn task_completed(s: &State, task: Option<u64>, tdd: bool) -> State {
    let mut next = s.clone();
    next.set_phase(Phase::implement(tdd));
    next.current_task = task;
    next.schedule(Some(Phase::CodeReview));
    next.tdd = tdd;
    cycle::reset(&mut next);
    next
}

/// `taskie mark next-task[-tdd] --task N`: a standalone step, outside automation.
pub fn next_task(s: &State, task: Option<u64>, tdd: bool) -> State {
    let mut next = s.clone();
    next.set_phase(if tdd {
        Phase::NextTaskTdd
    } else {
        Phase::NextTask
    });
    next.current_task = task;
    next.schedule(None);
    next.phase_iteration = None;
    next
}

/// `taskie mark continue-task`: only the phase changes.
pub fn task_continued(s: &State) -> State {
    let mut next = s.clone();
    next.set_phase(Phase::ContinueTask);
    next
}

/// `taskie mark R`: a review done by hand, outside automation.
pub fn standalone_review(s: &State, r: Review) -> State {
    let mut next = s.clone();
    next.set_phase(r.phase());
    next.schedule(None);
    next.phase_iteration = None;
    next
}

/// `taskie mark add-task --task N`: the new task becomes current only when none is.
pub fn task_added(s: &State, task: Option<u64>) -> State {
    let mut next = s.clone();
    if next.current_task.is_none() {
        next.current_task = task;
    }
    next
}

/// `taskie run` (SPEC §23): the state a lane's session starts from in its gate, made from
/// the plan's state: the task is being implemented and the code review of `task` (`None`:
/// the all-code review) is due at its stop, in a fresh cycle, with no pause and no
/// automatic continuation, and with what is left of the plan's review budget, if it has
/// one, as its own.
pub fn run_session(s: &State, task: Option<u64>, budget_left: Option<f64>) -> State {
    let mut next = lift_pause(s);
    next.set_phase(Phase::CompleteTask);
    next.schedule(Some(match task {
        Some(_) => Phase::CodeReview,
        None => Phase::AllCodeReview,
    }));
    next.current_task = task;
    cycle::reset(&mut next);
    next.auto_continue = false;
    if budget_left.is_some() {
        next.max_cost_usd = budget_left;
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(json: &str) -> State {
        State::parse(json.as_bytes()).unwrap()
    }

    #[test]
    fn a_run_session_starts_a_fresh_unpaused_cycle_of_its_review_keeping_the_plans_settings() {
        let plan = state(
            r#"{"phase":"post-code-review","next_phase":"code-review","current_task":1,
                "phase_iteration":3,"consecutive_clean":1,"review_model":"sonnet",
                "review_failures":2,"auto_continue":true,"paused_until":"2100-01-01T00:00:00Z",
                "paused_by":"claude","max_reviews":5,"tdd":true,"max_cost_usd":10,
                "my_note":"kept"}"#,
        );
        let code = run_session(&plan, Some(3), Some(2.5));
        assert_eq!(code.phase, "complete-task");
        assert_eq!(code.next_phase.as_deref(), Some("code-review"));
        assert_eq!(code.current_task, Some(3));
        assert_eq!(code.phase_iteration, Some(0));
        assert_eq!(code.consecutive_clean, 0);
        assert_eq!(code.review_failures, 0);
        assert_eq!(code.review_model, crate::model::state::FIRST_MODEL);
        assert!(!code.auto_continue);
        assert_eq!((code.paused_until, code.paused_by.as_deref()), (None, None));
        assert_eq!(code.max_cost_usd, Some(2.5));
        assert_eq!((code.max_reviews, code.tdd), (5, true));
        assert!(
            code.to_json().contains("\"my_note\": \"kept\""),
            "{}",
            code.to_json()
        );

        let all = run_session(&plan, None, None);
        assert_eq!(all.next_phase.as_deref(), Some("all-code-review"));
        assert_eq!(all.current_task, None);
        assert_eq!(
            all.max_cost_usd,
            Some(10.0),
            "no budget left given: the plan's own"
        );
    }

    #[test]
    fn the_initial_state_is_the_one_the_spec_lists_with_the_established_fields_only() {
        let v: serde_json::Value = serde_json::from_str(&initial(5, true).to_json()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"max_reviews":5,"current_task":null,"phase":"new-plan",
                   "next_phase":"plan-review","phase_iteration":0,"review_model":"opus",
                   "consecutive_clean":0,"tdd":true})
        );
    }

    #[test]
    fn a_fail_owes_a_post_review_and_a_pass_streak_advances() {
        let s = state(r#"{"next_phase":"plan-review","phase_iteration":1,"consecutive_clean":1}"#);
        let fail = after_verdict(&s, Review::Plan, 2, false, 1, &[]);
        assert_eq!(fail.advanced_to, None);
        assert_eq!(
            (
                fail.state.phase.as_str(),
                fail.state.next_phase.as_deref(),
                fail.state.phase_iteration,
                fail.streak
            ),
            ("plan-review", Some("post-plan-review"), Some(2), 0)
        );
        let pass = after_verdict(&s, Review::Plan, 2, true, 1, &[]);
        assert_eq!(pass.advanced_to, Some(Phase::CreateTasks));
        assert_eq!(pass.state.review_model, "sonnet");
    }

    #[test]
    fn a_failure_counts_and_ends_a_pause_and_a_pause_counts_nothing() {
        let s = state(r#"{"next_phase":"plan-review","paused_until":"2026-11-24T23:27:00Z"}"#);
        let failed = after_failure(&s);
        assert_eq!((failed.review_failures, failed.paused_until), (1, None));
        let paused = after_pause(&State::default(), 5, "limit");
        assert_eq!((paused.paused_until, paused.review_failures), (Some(5), 0));
    }

    #[test]
    fn rewinding_a_passing_panel_takes_back_all_it_added() {
        let mut s = State::parse(
            br#"{"phase":"plan-review","next_phase":"post-plan-review","phase_iteration":1,
                 "consecutive_clean":2,"clean_reviews_required":3,
                 "reviewers":["claude:opus","codex:gpt-5-codex"],"review_mode":"panel"}"#,
        )
        .unwrap();
        assert_eq!(cycle::clean_weight(&s, 1), 2);
        assert_eq!(rewind(&s, Review::Plan, 1).consecutive_clean, 0);
        // One reviewer at a time: a PASS added one.
        s.review_mode = crate::model::reviewers::Mode::Alternate;
        assert_eq!(rewind(&s, Review::Plan, 1).consecutive_clean, 1);
    }
}
