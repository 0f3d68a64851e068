//! `taskie resume` (SPEC §22): lifts a usage-limit pause, so the next stop runs the
//! review instead of waiting for the reset time.

use crate::commands::Invocation;
use crate::error::Error;
use crate::model::pause;
use crate::model::state::State;
use std::io::Write;

/// The state without its pause, and what to tell the human; `None` when the plan is not
/// paused (nothing to write).
pub fn resume(plan: &str, s: &State, now: i64) -> (Option<State>, String) {
    let Some(until) = s.paused_until else {
        return (
            None,
            format!(
                "Plan '{plan}' is not paused: the next stop runs the review that is due, if any."
            ),
        );
    };
    let mut next = s.clone();
    next.paused_until = None;
    next.paused_by = None;
    let was = if pause::is_paused(Some(until), now) {
        format!("was paused until {}", pause::when(until, now))
    } else {
        format!("had a pause that ended at {}", pause::when(until, now))
    };
    (
        Some(next),
        format!(
            "Resumed plan '{plan}' (it {was}): the next stop runs the review. If the reviewer's limit has \
             not reset, that stop pauses the plan again, with no failure counted."
        ),
    )
}

/// `taskie resume [--plan ID]`.
pub fn run(inv: &Invocation, plan: Option<&str>, out: &mut dyn Write) -> Result<(), Error> {
    inv.change_state(plan, out, |read, state| {
        Ok(resume(&read.plan, state, read.now))
    })?;
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
        let (next, text) = resume("p", &s, 0);
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
        let (next, text) = resume("p", &State::default(), 0);
        assert!(next.is_none());
        assert!(text.contains("is not paused"), "{text}");
    }
}
