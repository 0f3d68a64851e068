//! The hook's decision procedure (SPEC §5 steps 8–17) as pure functions: facts about
//! the plan in, the new state, the answer and the event record out. All I/O (reading
//! the plan, running the reviewer, writing) happens in `hook`, so `--dry-run` and the
//! tests use exactly this logic.

use crate::hook::answer::Answer;
use crate::hook::message;
use crate::model::cycle::{Due, Failure, HardStop, Reviewed};
use crate::model::facts::Facts;
use crate::model::host::Host;
use crate::model::machine;
use crate::model::next_stop::{self, NextStop};
use crate::model::phase::Phase;
use crate::model::state::{State, StateError};
use crate::model::verdict::Verdict;
use crate::store::event_log::{Branch, Record};

/// The result of the steps before the reviewer.
#[derive(Debug)]
pub enum Step {
    /// Decided without a reviewer.
    Done(Outcome),
    /// The cycle is exhausted; diagnostics are due (SPEC §5 step 14, §10). The record is
    /// the event to log.
    HardStop(HardStop, Record),
    /// A review is due: run the reviewer, then call [`conclude`].
    Review(Due),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub answer: Answer,
    /// The state to write atomically before answering; `None` writes nothing.
    pub write: Option<State>,
    pub record: Record,
}

/// SPEC §5 steps 8–15, with the texts in the form the client can act on (SPEC §20).
pub fn decide(f: &Facts) -> Step {
    match decide_plan(f) {
        Step::Done(o) => Step::Done(o.for_host(f.host)),
        other => other,
    }
}

fn decide_plan(f: &Facts) -> Step {
    let state = f.state.as_ref().ok().and_then(Option::as_ref);
    match next_stop::predict(f).stop {
        NextStop::Invalid => {
            let text = message::invalid_plan(f.plan, f.errors);
            let answer = if f.stop_hook_active {
                Answer::allow(text)
            } else {
                Answer::block(text)
            };
            done(
                answer,
                None,
                record(f, Branch::ValidationFailed, None, None),
            )
        }
        NextStop::NoState => done(
            Answer::Allow(None),
            None,
            record(f, Branch::NoReviewDue, None, None),
        ),
        NextStop::StateError => {
            let answer = match f.state {
                Err(e) => Answer::allow(message::state_error(f.plan, e)),
                Ok(_) => Answer::Allow(None),
            };
            done(answer, None, record(f, Branch::StateError, None, None))
        }
        NextStop::NoCurrentTask(r) => done(
            Answer::allow(message::no_current_task(f.plan, r)),
            None,
            record(f, Branch::StateError, state, None),
        ),
        NextStop::PostReviewOwed {
            review: r,
            iteration: n,
            post_file,
            then,
            ..
        } => {
            let answer =
                Answer::allow(message::post_review_owed(f, r, n, &f.rel(&post_file), then));
            let mut rec = record(f, Branch::PostReviewPending, state, None);
            rec.review = Some(r.name());
            rec.iteration = Some(n);
            done(answer, None, rec)
        }
        NextStop::NothingDue => done(
            Answer::Allow(None),
            None,
            record(f, Branch::NoReviewDue, state, None),
        ),
        NextStop::UnknownNextPhase(unknown) => done(
            Answer::allow(message::unknown_next_phase(f.plan, &unknown)),
            None,
            record(f, Branch::NoReviewDue, state, None),
        ),
        NextStop::ReviewsDisabled {
            review: r,
            target,
            next,
        } => {
            let mut rec = record(f, Branch::ReviewsDisabled, state, Some(&next));
            rec.review = Some(r.name());
            done(
                Answer::allow(message::reviews_disabled(target)),
                Some(next),
                rec,
            )
        }
        NextStop::HardStop(stop) => {
            let mut rec = record(f, Branch::HardStop, state, None);
            rec.outcome = "allow";
            rec.review = Some(stop.review.name());
            rec.iteration = Some(stop.iterations);
            rec.stop_reason = Some(stop.reason.as_str());
            Step::HardStop(stop, rec)
        }
        NextStop::Precondition {
            review: r,
            iteration: n,
            missing,
        } => {
            let mut rec = record(f, Branch::PreconditionMissing, state, None);
            rec.review = Some(r.name());
            rec.iteration = Some(n);
            done(
                Answer::allow(message::precondition(f.plan, r, &missing)),
                None,
                rec,
            )
        }
        NextStop::Paused {
            review: r,
            iteration: n,
            until,
            by,
        } => {
            // SPEC §22: a reviewer's usage limit has not reset yet: no run, no failure.
            let mut rec = record(f, Branch::Paused, state, None);
            rec.review = Some(r.name());
            rec.iteration = Some(n);
            let text = message::still_paused(f.plan, r, n, by.as_deref(), until, f.now);
            done(Answer::allow(text), None, rec)
        }
        NextStop::Review(due) => Step::Review(*due),
    }
}

/// SPEC §5 steps 16–17: the new state and answer once the reviewer has run, with the
/// texts in the form the client can act on (SPEC §20).
pub fn conclude(f: &Facts, due: &Due, reviewed: &Reviewed) -> Outcome {
    conclude_review(f, due, reviewed).for_host(f.host)
}

fn conclude_review(f: &Facts, due: &Due, reviewed: &Reviewed) -> Outcome {
    let r = due.review;
    let mut rec = record(f, Branch::ReviewerFailed, Some(&due.read), None);
    rec.review = Some(r.name());
    rec.iteration = Some(due.iteration);
    rec.model = Some(due.model.clone());
    let (reading, findings, failover) = match reviewed {
        Reviewed::Failed {
            reason,
            log,
            exit,
            failure,
        } => {
            let next = machine::after_failure(&due.read);
            rec.reviewer_exit = *exit;
            rec.after(&next);
            let text =
                message::reviewer_failed(f.plan, due, reason, log, next.review_failures, *failure);
            return finish(Answer::allow(text), Some(next), rec);
        }
        Reviewed::Paused { until, by, log } => {
            let next = machine::after_pause(&due.read, *until, by);
            rec.branch = Branch::Paused;
            rec.paused_until = jiff::Timestamp::from_second(*until)
                .ok()
                .map(|t| t.to_string());
            rec.after(&next);
            let text = message::paused(f.plan, due, by, *until, f.now, log);
            return finish(Answer::allow(text), Some(next), rec);
        }
        Reviewed::Verdict {
            reading,
            exit,
            findings,
            failover,
            verified: _,
        } => {
            rec.reviewer_exit = Some(*exit);
            if failover.happened() {
                rec.reviewed_by = failover.reviewed_by.clone();
                rec.unavailable = failover.unavailable.clone();
            }
            (reading, findings, failover)
        }
    };
    rec.verdict = Some(reading.verdict.as_str());
    rec.verdict_source = Some(reading.source.clone());

    // A panel weighs only who reviewed (SPEC §22).
    let weight = if due.panel && failover.happened() {
        failover.reviewed_by.len() as u64
    } else {
        due.weight()
    };
    let machine::AfterVerdict {
        state: next,
        streak,
        advanced_to,
    } = machine::after_verdict(
        &due.base,
        r,
        due.iteration,
        reading.verdict == Verdict::Pass,
        weight,
        f.tasks,
    );
    if let Some(target) = advanced_to {
        rec.branch = Branch::Advanced;
        rec.after(&next);
        let note = message::failover_note(failover);
        let answer = if next.auto_continue && target != Phase::Complete {
            Answer::block(format!(
                "{}{note}",
                message::auto_continue(r, streak, target)
            ))
        } else {
            Answer::allow(format!(
                "{}{}{note}",
                message::passed(r, streak, target),
                message::unfinished_at_complete(f, target)
            ))
        };
        return finish(answer, Some(next), rec);
    }
    rec.branch = Branch::ReviewBlocked;
    rec.after(&next);
    let reason = message::address_review(
        f,
        due,
        failover,
        reading,
        findings,
        streak,
        next.clean_reviews_required,
    );
    let reason = format!("{reason}{}", message::failover_note(failover));
    finish(Answer::block(reason), Some(next), rec)
}

impl Outcome {
    /// The answer's text for this client: a block names actions the way its model can
    /// perform them, a message the way its user runs them.
    fn for_host(mut self, host: &Host) -> Outcome {
        self.answer = match self.answer {
            Answer::Block { reason } => Answer::block(host.for_model(&reason)),
            Answer::Allow(Some(m)) => Answer::allow(host.for_user(&m)),
            silent => silent,
        };
        self
    }
}

/// state.json changed while the reviewer ran (the reviewer runs with every permission;
/// a person may edit by hand; neither takes the lock). The edit wins: the review is not
/// recorded, and the run counts as a reviewer failure on the edited state when it is
/// valid (nothing is written when it is not), so a reviewer that keeps doing it ends in
/// a hard stop. `now` is the file as it is now (`None`: deleted); `rec` the record of
/// the run as concluded.
pub fn state_edited(
    f: &Facts,
    due: &Due,
    now: Option<Result<State, StateError>>,
    log: &str,
    mut rec: Record,
) -> Outcome {
    let (write, what) = match now {
        Some(Ok(s)) => (Some(machine::after_edit_during_review(s)), "changed"),
        Some(Err(_)) => (None, "changed (to something invalid)"),
        None => (None, "deleted"),
    };
    let failures = write
        .as_ref()
        .map_or(due.read.review_failures.saturating_add(1), |s| {
            s.review_failures
        });
    let reason = format!(
        "state.json was {what} while it ran (by the reviewer, or by hand); the hook kept that edit and did \
         not record this review"
    );
    let mut text =
        message::reviewer_failed(f.plan, due, &reason, log, failures, Failure::StateEdited);
    if write.is_none() {
        text.push_str(" state.json was not written.");
    }
    rec.branch = Branch::ReviewerFailed;
    rec.verdict = None;
    rec.verdict_source = None;
    finish(Answer::allow(text), write, rec)
}

fn done(answer: Answer, write: Option<State>, record: Record) -> Step {
    Step::Done(finish(answer, write, record))
}

fn finish(answer: Answer, write: Option<State>, mut record: Record) -> Outcome {
    if let Some(s) = &write {
        record.after(s);
    }
    record.outcome = answer.outcome();
    Outcome {
        answer,
        write,
        record,
    }
}

fn record(f: &Facts, branch: Branch, before: Option<&State>, after: Option<&State>) -> Record {
    let mut rec = Record {
        plan: f.plan.to_owned(),
        branch,
        ..Record::default()
    };
    if let Some(s) = before {
        rec.phase_before = Some(s.phase.clone());
        rec.next_phase_before = s.next_phase.clone();
        rec.after(s);
    }
    if let Some(s) = after {
        rec.after(s);
    }
    rec
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cycle::StopReason;
    use crate::model::phase::Review;
    use crate::model::verdict::Reading;
    use crate::store::event_log::Branch;

    use crate::model::facts::FactsBuilder;

    fn plan(state: &str) -> FactsBuilder {
        FactsBuilder::plan(state)
    }

    fn done(step: Step) -> Outcome {
        match step {
            Step::Done(o) => o,
            other => panic!("expected a finished outcome, got {other:?}"),
        }
    }

    fn due(step: Step) -> Due {
        match step {
            Step::Review(d) => d,
            other => panic!("expected a due review, got {other:?}"),
        }
    }

    fn verdict(v: Verdict) -> Reviewed {
        Reviewed::Verdict {
            reading: Reading {
                verdict: v,
                source: "structured_output".into(),
            },
            exit: 0,
            findings: vec![],
            failover: Default::default(),
            verified: Default::default(),
        }
    }

    #[test]
    fn structure_errors_block_only_on_a_fresh_stop() {
        let p = plan(r#"{"next_phase":"plan-review"}"#)
            .errors(vec![crate::model::validate::StructureError::MissingPlan]);
        let o = done(decide(&p.facts()));
        assert!(o.answer.is_block());
        assert_eq!(o.record.branch, Branch::ValidationFailed);
        let p = p.active(true);
        let o = done(decide(&p.facts()));
        assert!(!o.answer.is_block());
        assert!(
            o.answer
                .text()
                .unwrap()
                .starts_with("Plan 'p': Missing required file: plan.md")
        );
    }

    #[test]
    fn a_due_review_names_its_files_and_model() {
        let d = due(decide(
            &plan(r#"{"next_phase":"plan-review","review_model":"sonnet"}"#).facts(),
        ));
        assert_eq!(
            (d.review, d.iteration, d.model.as_str()),
            (Review::Plan, 1, "sonnet")
        );
        assert_eq!(
            (d.review_file.as_str(), d.post_file.as_str()),
            ("plan-review-1.md", "plan-post-review-1.md")
        );
    }

    #[test]
    fn a_passing_panel_of_two_counts_twice_and_a_passing_single_reviewer_once() {
        let state = r#"{"next_phase":"plan-review","reviewers":["claude:opus","codex:gpt-5-codex"],"review_mode":"panel"}"#;
        let p = plan(state);
        let f = p.facts();
        let d = due(decide(&f));
        assert!(d.panel);
        assert_eq!(d.model, "claude:opus,codex:gpt-5-codex");
        let o = conclude(&f, &d, &verdict(Verdict::Pass));
        assert_eq!(o.record.branch, Branch::Advanced);
        assert_eq!(o.write.unwrap().next_phase.as_deref(), Some("create-tasks"));

        let p = plan(&state.replace("panel", "alternate"));
        let f = p.facts();
        let d = due(decide(&f));
        assert!(!d.panel);
        assert_eq!(d.model, "claude:opus");
        let o = conclude(&f, &d, &verdict(Verdict::Pass));
        assert_eq!(o.record.branch, Branch::ReviewBlocked);
        assert_eq!(o.write.unwrap().consecutive_clean, 1);
    }

    #[test]
    fn a_spent_budget_is_a_hard_stop_and_what_remains_goes_to_the_reviewer() {
        let p = plan(r#"{"next_phase":"plan-review","max_cost_usd":1.0}"#);
        let mut f = p.facts();
        f.spent_usd = 0.25;
        assert_eq!(due(decide(&f)).budget_left, Some(0.75));
        f.spent_usd = 1.0;
        match decide(&f) {
            Step::HardStop(stop, rec) => {
                assert_eq!(stop.reason, StopReason::BudgetExhausted);
                assert_eq!((stop.spent_usd, rec.branch), (1.0, Branch::HardStop));
            }
            other => panic!("expected a hard stop, got {other:?}"),
        }
    }

    #[test]
    fn post_review_detection_continues_the_cycle() {
        let s = r#"{"phase":"code-review","next_phase":"post-code-review","phase_iteration":2,"current_task":3}"#;
        let p = plan(s)
            .files(&["tasks.md", "task-3.md", "task-3-code-post-review-2.md"])
            .tasks(&[("3", "pending")]);
        let d = due(decide(&p.facts()));
        assert_eq!(
            (d.iteration, d.review_file.as_str()),
            (3, "task-3-code-review-3.md")
        );
        assert_eq!(
            (d.base.phase.as_str(), d.base.next_phase.as_deref()),
            ("post-code-review", Some("code-review"))
        );
        assert_eq!(
            d.read.phase, "code-review",
            "the state as read is kept for a failure write"
        );
    }

    #[test]
    fn hard_stop_reasons_are_checked_before_preconditions() {
        let p = plan(r#"{"next_phase":"code-review","phase_iteration":4,"max_reviews":4}"#);
        match decide(&p.facts()) {
            Step::HardStop(h, _) => {
                assert_eq!((h.reason, h.iterations), (StopReason::MaxReviewsReached, 4))
            }
            other => panic!("{other:?}"),
        }
        let p = plan(r#"{"next_phase":"plan-review","review_failures":3}"#);
        match decide(&p.facts()) {
            Step::HardStop(h, _) => assert_eq!(h.reason, StopReason::ReviewerFailuresExhausted),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_failed_reviewer_changes_only_the_failure_count() {
        let p =
            plan(r#"{"phase":"plan-review","next_phase":"post-plan-review","phase_iteration":1}"#)
                .files(&["plan-review-1.md", "plan-post-review-1.md"]);
        let f = p.facts();
        let d = due(decide(&f));
        let o = conclude(
            &f,
            &d,
            &Reviewed::Failed {
                reason: "boom".into(),
                log: "l".into(),
                exit: Some(2),
                failure: Failure::Reviewer,
            },
        );
        let mut expected = d.read.clone();
        expected.review_failures = 1;
        assert_eq!(o.write, Some(expected));
        assert!(!o.answer.is_block());
        assert_eq!(o.record.branch, Branch::ReviewerFailed);
    }

    const UNTIL: &str = "2026-11-24T23:27:00Z";
    /// 2026-11-24T23:27:00Z in Unix seconds.
    const UNTIL_UNIX: i64 = 1_795_562_820;

    #[test]
    fn a_usage_limit_pauses_without_counting_a_failure() {
        let p = plan(r#"{"next_phase":"plan-review","review_failures":1}"#).now(UNTIL_UNIX - 3600);
        let f = p.facts();
        let d = due(decide(&f));
        let o = conclude(
            &f,
            &d,
            &Reviewed::Paused {
                until: UNTIL_UNIX,
                by: "claude:opus reached its usage limit".into(),
                log: "l".into(),
            },
        );
        let mut expected = d.read.clone();
        expected.paused_until = Some(UNTIL_UNIX);
        expected.paused_by = Some("claude:opus reached its usage limit".into());
        assert_eq!(o.write, Some(expected));
        assert!(!o.answer.is_block());
        assert_eq!(o.record.branch, Branch::Paused);
        let text = o.answer.text().unwrap();
        assert!(
            text.contains("paused until 2026-11-24 23:27 UTC (in 1 h)")
                && text.contains("no failure was counted"),
            "{text}"
        );
    }

    #[test]
    fn a_paused_plan_runs_no_reviewer_until_the_reset_and_then_does() {
        let state = format!(
            r#"{{"next_phase":"plan-review","paused_until":"{UNTIL}","paused_by":"claude:opus reached its usage limit"}}"#
        );
        let o = done(decide(&plan(&state).now(UNTIL_UNIX - 1).facts()));
        assert_eq!((o.record.branch, o.write.clone()), (Branch::Paused, None));
        let text = o.answer.text().unwrap();
        assert!(
            text.contains("claude:opus reached its usage limit")
                && text.contains("No reviewer ran and no failure was counted"),
            "{text}"
        );
        let p = plan(&state).now(UNTIL_UNIX);
        let f = p.facts();
        let d = due(decide(&f));
        // Whatever the review then says, the pause is over.
        let after = conclude(&f, &d, &verdict(Verdict::Fail)).write.unwrap();
        assert_eq!((after.paused_until, after.paused_by), (None, None));
        let failed = conclude(
            &f,
            &d,
            &Reviewed::Failed {
                reason: "boom".into(),
                log: "l".into(),
                exit: Some(1),
                failure: Failure::Reviewer,
            },
        )
        .write
        .unwrap();
        assert_eq!((failed.paused_until, failed.review_failures), (None, 1));
    }

    #[test]
    fn verdicts_move_the_streak_and_toggle_the_model() {
        let p = plan(r#"{"next_phase":"plan-review","consecutive_clean":0}"#);
        let f = p.facts();
        let d = due(decide(&f));
        let pass = conclude(&f, &d, &verdict(Verdict::Pass)).write.unwrap();
        assert_eq!(
            (pass.consecutive_clean, pass.review_model.as_str()),
            (1, "sonnet")
        );
        let unknown = conclude(&f, &d, &verdict(Verdict::Unknown));
        assert_eq!(unknown.write.unwrap().consecutive_clean, 0);
        assert!(unknown.answer.text().unwrap().contains("gave no verdict"));
    }

    #[test]
    fn auto_continue_blocks_only_when_there_is_more_to_do() {
        let p = plan(r#"{"next_phase":"plan-review","consecutive_clean":1,"auto_continue":true}"#);
        let f = p.facts();
        let o = conclude(&f, &due(decide(&f)), &verdict(Verdict::Pass));
        assert!(o.answer.is_block() && o.answer.text().unwrap().contains("taskie continue-plan"));
        let p =
            plan(r#"{"next_phase":"all-code-review","consecutive_clean":1,"auto_continue":true}"#)
                .files(&["tasks.md", "task-1.md"])
                .tasks(&[("1", "done")]);
        let f = p.facts();
        let o = conclude(&f, &due(decide(&f)), &verdict(Verdict::Pass));
        assert!(!o.answer.is_block());
        assert_eq!(o.record.branch, Branch::Advanced);
    }
}
