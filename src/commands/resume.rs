//! `taskie resume` (SPEC §22): lifts a usage-limit pause, so the next stop runs the
//! review instead of waiting for the reset time.

use crate::commands::Invocation;
use crate::error::Error;
use crate::model::facts::Facts;
use crate::model::machine;
use crate::model::next_stop::{self, NextStop, Then};
use crate::model::pause;
use crate::model::state::State;
use std::io::Write;

/// The state without its pause, and what to tell the human: what the next stop then
/// does, from the one prediction (a hard-stopped plan is said to be one, with the
/// commands that resolve it). `None` when the plan is not paused (nothing to write).
pub fn resume(f: &Facts, s: &State) -> (Option<State>, String) {
    let plan = f.plan;
    let Some(until) = s.paused_until else {
        return (
            None,
            format!("Plan '{plan}' is not paused: {}.", next_stop(f, s)),
        );
    };
    let next = machine::lift_pause(s);
    let was = if pause::is_paused(Some(until), f.now) {
        format!("was paused until {}", pause::when(until, f.now))
    } else {
        format!("had a pause that ended at {}", pause::when(until, f.now))
    };
    let lifted = Ok(Some(next.clone()));
    let after = Facts {
        state: &lifted,
        ..*f
    };
    let mut text = format!(
        "Resumed plan '{plan}' (it {was}): {}.",
        next_stop(&after, &next)
    );
    if matches!(next_stop::predict(&after).stop, NextStop::Review(_)) {
        text.push_str(
            " If the reviewer's limit has not reset, that stop pauses the plan again, with no failure counted.",
        );
    }
    (Some(next), text)
}

/// The next stop in words, for the human who ran `taskie resume`.
fn next_stop(f: &Facts, s: &State) -> String {
    let p = next_stop::predict(f);
    match &p.stop {
        NextStop::Review(d) => format!("the next stop runs {} #{}", d.review, d.iteration),
        NextStop::HardStop(h) => {
            let (why, remedies) = next_stop::hard_stop_words(f, s, h.review, h.reason);
            format!(
                "it is hard-stopped, so the next stop runs no review: {why}; {}",
                remedies
            )
        }
        NextStop::PostReviewOwed {
            review,
            iteration,
            post_file,
            then,
            ..
        } => {
            let after = match then {
                Then::HardStop(_) => {
                    "; after it the next stop is a hard stop (the cycle's last review ran)"
                }
                _ => "",
            };
            format!(
                "{review} #{iteration} is waiting for its post-review ({}){after}",
                f.rel(post_file)
            )
        }
        NextStop::Precondition {
            review, missing, ..
        } => format!("{review} is due but cannot run without {missing}"),
        NextStop::ReviewsDisabled { review, target, .. } => format!(
            "reviews are disabled (max_reviews=0): the next stop passes over {review} to {target}"
        ),
        NextStop::Paused { until, .. } => {
            format!(
                "the plan is still paused until {}",
                pause::when(*until, f.now)
            )
        }
        // The next stop blocks on the structure errors (SPEC §5 step 8): never "no review
        // is due", which would send the human away from what stops the plan.
        NextStop::Invalid => format!(
            "the next stop runs no review: the plan's structure is invalid ({}); `taskie validate --plan {}` \
             lists the fixes",
            crate::model::validate::joined(f.errors),
            f.plan
        ),
        NextStop::NoCurrentTask(r) => format!(
            "the next stop runs no review: the {r} cycle has no current_task (`taskie state set --plan {} \
             current_task=<N>`)",
            f.plan
        ),
        NextStop::UnknownNextPhase(n) => format!(
            "the next stop runs no review: next_phase \"{n}\" is not a phase; `taskie continue-plan` names the \
             next step"
        ),
        NextStop::NoState | NextStop::StateError | NextStop::NothingDue => {
            "no review is due; `taskie continue-plan` names the next step".into()
        }
    }
}

/// `taskie resume [--plan ID]`.
pub fn run(inv: &Invocation, plan: Option<&str>, out: &mut dyn Write) -> Result<(), Error> {
    inv.change_state(plan, out, |read, state| Ok(resume(&read.facts(), state)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resuming_clears_the_pause_and_only_the_pause() {
        let s = State::parse(
            br#"{"next_phase":"plan-review","review_failures":1,"paused_until":"2026-11-24T23:27:00Z",
                "paused_by":"claude:opus reached its usage limit"}"#,
        )
        .unwrap();
        let b = crate::model::facts::FactsBuilder::new("p")
            .files(&["plan.md"])
            .state(Ok(Some(s.clone())));
        let (next, text) = resume(&b.facts(), &s);
        let next = next.unwrap();
        assert_eq!((next.paused_until, next.paused_by.as_deref()), (None, None));
        assert_eq!(next.review_failures, 1);
        assert_eq!(next.next_phase, s.next_phase);
        assert!(
            text.contains("was paused until 2026-11-24 23:27 UTC"),
            "{text}"
        );
    }

    #[test]
    fn a_plan_that_is_not_paused_is_left_alone() {
        let b = crate::model::facts::FactsBuilder::new("p").state(Ok(Some(State::default())));
        let (next, text) = resume(&b.facts(), &State::default());
        assert!(next.is_none());
        assert!(text.contains("is not paused"), "{text}");
    }
}
