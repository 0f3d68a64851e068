//! `taskie advance` (SPEC §12): the human's override after a hard stop. The current
//! review cycle is treated as passed and the plan moves on as SPEC §6 says.

use crate::commands::Invocation;
use crate::error::Error;
use crate::model::cycle;
use crate::model::facts::Facts;
use crate::model::machine;
use crate::model::phase::Review;
use crate::model::state::State;
use std::io::Write;

/// The state after accepting the current cycle, and what to tell the human.
pub fn advance(f: &Facts, s: &State) -> Result<(State, String), Error> {
    let Some(r) = cycle::in_progress(s) else {
        return Err(Error::Refused(format!(
            "no review cycle is in progress in plan '{}', so there is nothing to advance (current state: {}); \
             `taskie continue-plan` names the next step",
            f.plan,
            s.describe()
        )));
    };
    // The code-review target depends on tasks.md; an unreadable one would look like
    // "no task left" and skip the remaining tasks.
    if !f.errors.is_empty() {
        return Err(Error::Invalid {
            plan: f.plan.into(),
            errors: f.errors.to_vec(),
            listed: false,
        });
    }
    let iterations = s.phase_iteration.unwrap_or(0);
    let next = machine::advanced_by_hand(s, r, f.tasks);
    let task = s
        .current_task
        .filter(|_| r == Review::Code)
        .map(|t| format!(" (task {t})"))
        .unwrap_or_default();
    let s_ = if iterations == 1 { "" } else { "s" };
    let open = match next.scheduled() {
        Some(crate::model::phase::Phase::Complete) => {
            crate::model::tasks::unfinished_at_complete(f.tasks, &f.rel("tasks.md"))
                .map(|o| format!(" Note: {o}."))
                .unwrap_or_default()
        }
        _ => String::new(),
    };
    let message = format!(
        "Advanced plan '{}' past {r}{task} after {iterations} review{s_}: next_phase is now {}. \
         Run /taskie:continue-plan to go on.{open}",
        f.plan,
        next.next_phase.as_deref().unwrap_or("null")
    );
    Ok((next, message))
}

/// `taskie advance [--plan ID]`.
pub fn run(inv: &Invocation, plan: Option<&str>, out: &mut dyn Write) -> Result<(), Error> {
    inv.change_state(plan, out, |read, state| {
        let (next, message) = advance(&read.facts(), state)?;
        Ok((Some(next), message))
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::phase::Phase;

    fn run_advance(
        state: &str,
        tasks: &[(&str, &str)],
        errors: &[crate::model::validate::StructureError],
    ) -> Result<State, Error> {
        let b = crate::model::facts::FactsBuilder::new("p")
            .state_json(state)
            .tasks(tasks)
            .errors(errors.to_vec());
        let s = b.read_state().expect("a valid state").clone();
        advance(&b.facts(), &s).map(|(s, _)| s)
    }

    fn at(next: &str, extra: &str) -> String {
        format!(
            r#"{{"phase":"post-x","next_phase":"{next}","phase_iteration":8,"max_reviews":8,
                "consecutive_clean":1,"review_failures":3,"review_model":"sonnet"{extra}}}"#
        )
    }

    #[test]
    fn each_review_advances_to_its_target() {
        let tasks = [("1", "done"), ("2", "pending")];
        for (next, extra, target) in [
            ("plan-review", "", "create-tasks"),
            ("post-plan-review", "", "create-tasks"),
            ("tasks-review", "", "complete-task"),
            ("tasks-review", r#","tdd":true"#, "complete-task-tdd"),
            ("code-review", r#","current_task":1"#, "complete-task"),
            ("post-all-code-review", "", "complete"),
        ] {
            let s = run_advance(&at(next, extra), &tasks, &[]).unwrap();
            assert_eq!(s.next_phase.as_deref(), Some(target), "{next}{extra}");
            assert_eq!(
                s.phase,
                Phase::parse(next)
                    .and_then(|p| p.review().or(p.post_review_of()))
                    .unwrap()
                    .name()
            );
            assert_eq!(
                (s.phase_iteration, s.consecutive_clean, s.review_failures),
                (Some(8), 0, 0)
            );
        }
    }

    #[test]
    fn the_last_code_review_starts_a_fresh_all_code_review_cycle() {
        let s = run_advance(
            &at("code-review", r#","current_task":2"#),
            &[("1", "done"), ("2", "pending")],
            &[],
        )
        .unwrap();
        assert_eq!(s.next_phase.as_deref(), Some("all-code-review"));
        assert_eq!(
            (s.phase_iteration, s.review_model.as_str()),
            (Some(0), "opus")
        );
    }

    #[test]
    fn nothing_to_advance_outside_a_cycle() {
        let err = run_advance(
            r#"{"phase":"complete-task","next_phase":"complete"}"#,
            &[],
            &[],
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("no review cycle is in progress"),
            "{err}"
        );
        assert!(err.to_string().contains("next_phase complete"), "{err}");
    }

    #[test]
    fn an_invalid_plan_is_not_advanced() {
        let err = run_advance(
            &at("code-review", ""),
            &[],
            &[crate::model::validate::StructureError::TasksTable(
                crate::model::tasks::TasksError::NoRows,
            )],
        )
        .unwrap_err();
        assert!(matches!(err, Error::Invalid { .. }));
    }
}
