//! What the next stop will do (SPEC §5 steps 8–15, §13): one prediction, a pure function
//! of the plan's facts. The hook acts on it; `--dry-run`, `continue-plan`, `status`,
//! `resume` and `mark` word it for their readers, so no surface tells another story.

use crate::model::cycle::{self, Due, HardStop, StopReason};
use crate::model::facts::Facts;
use crate::model::machine;
use crate::model::pause;
use crate::model::phase::{Phase, Review};
use crate::model::plan_file::{PlanFile, post_file, review_file};
use crate::model::state::State;

/// The state the next stop starts from (SPEC §5 step 10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// As state.json holds it.
    AsRead,
    /// The post-review file of the last review exists: the cycle goes on.
    PostReviewDone,
    /// The last review's file is missing: it runs again, from the state before it.
    Rewound,
}

/// What happens at a stop once an owed post-review is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// The next review runs.
    Review,
    /// The cycle is spent: a hard stop, for this reason.
    HardStop(StopReason),
    /// A reviewer's usage limit: no review runs before `until` (Unix seconds).
    Paused { until: i64 },
}

/// The branch of SPEC §5 the next stop takes, with what each surface needs to say it.
#[derive(Debug, Clone, PartialEq)]
pub enum NextStop {
    /// Step 8: the plan's structure is invalid.
    Invalid,
    /// Step 9: there is no state.json: the hook does nothing.
    NoState,
    /// Step 9: state.json cannot be used.
    StateError,
    /// Step 10: a code-review cycle without `current_task`.
    NoCurrentTask(Review),
    /// Step 10: the agent owes the post-review of review `iteration`.
    PostReviewOwed {
        review: Review,
        iteration: u64,
        task: Option<u64>,
        review_file: String,
        post_file: String,
        /// What the stop after the post-review does.
        then: Then,
    },
    /// Step 11: nothing is scheduled that the hook runs.
    NothingDue,
    /// Step 11: `next_phase` is not a phase name.
    UnknownNextPhase(String),
    /// Step 13: the cycle is passed over; `next` is the state written.
    ReviewsDisabled {
        review: Review,
        target: Phase,
        next: State,
    },
    /// Step 14.
    HardStop(HardStop),
    /// Step 15: the review cannot run; `missing` names what (a path, or words).
    Precondition {
        review: Review,
        iteration: u64,
        missing: String,
    },
    /// SPEC §22: a reviewer's usage limit has not reset yet.
    Paused {
        review: Review,
        iteration: u64,
        until: i64,
        by: Option<String>,
    },
    /// Step 16: the reviewer runs.
    Review(Box<Due>),
}

/// The prediction: the branch, and the state it starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub stop: NextStop,
    pub base: Base,
}

impl Prediction {
    fn of(stop: NextStop) -> Prediction {
        Prediction {
            stop,
            base: Base::AsRead,
        }
    }
}

/// Why review `r` of state `s` is hard-stopped, and the commands that resolve it as one
/// sentence: how `continue-plan`, `mark` and `resume` say a hard stop.
pub fn hard_stop_words(f: &Facts, s: &State, r: Review, reason: StopReason) -> (String, String) {
    let target = cycle::advance_target(r, s, f.tasks);
    let (why, remedies) =
        cycle::explain_stop(f.plan, reason, r, s, f.spent_usd, &target.to_string());
    (why, cycle::remedies_text(&remedies))
}

/// SPEC §5 steps 8–15 over `f`: what the next stop does.
pub fn predict(f: &Facts) -> Prediction {
    if !f.errors.is_empty() {
        return Prediction::of(NextStop::Invalid);
    }
    let state = match f.state {
        Ok(Some(s)) => s,
        Ok(None) => return Prediction::of(NextStop::NoState),
        Err(_) => return Prediction::of(NextStop::StateError),
    };
    // Step 10: post-review detection.
    let mut base = state.clone();
    let mut how = Base::AsRead;
    if let Some(r) = state.last().and_then(Phase::review)
        && state.scheduled() == Some(r.post_phase())
        && let Some(n) = state.phase_iteration.filter(|n| *n >= 1)
    {
        let task = state.current_task;
        let (Some(post), Some(review)) = (post_file(r, n, task), review_file(r, n, task)) else {
            return Prediction::of(NextStop::NoCurrentTask(r));
        };
        if f.has_file(&post) {
            base = machine::post_review_done(state, r);
            how = Base::PostReviewDone;
        } else if !f.has_file(&review) {
            // Review N was interrupted (its file is gone): there is nothing to write a
            // post-review about, so review N runs again now, from the state before it.
            base = machine::rewind(state, r, n);
            how = Base::Rewound;
        } else {
            let then = match cycle::hard_stop(state, f.spent_usd) {
                Some(reason) => Then::HardStop(reason),
                None => match state
                    .paused_until
                    .filter(|u| pause::is_paused(Some(*u), f.now))
                {
                    Some(until) => Then::Paused { until },
                    None => Then::Review,
                },
            };
            return Prediction::of(NextStop::PostReviewOwed {
                review: r,
                iteration: n,
                task: task.filter(|_| r == Review::Code),
                review_file: review,
                post_file: post,
                then,
            });
        }
    }
    let stop = due_review(f, state, base);
    Prediction { stop, base: how }
}

/// Steps 11–15 from the state `base` the stop starts from.
fn due_review(f: &Facts, read: &State, base: State) -> NextStop {
    let Some(r) = base.scheduled().and_then(Phase::review) else {
        return match base.next() {
            Some(Err(unknown)) => NextStop::UnknownNextPhase(unknown.to_owned()),
            _ => NextStop::NothingDue,
        };
    };
    let done_so_far = base.phase_iteration.unwrap_or(0);
    if base.max_reviews == 0 {
        return NextStop::ReviewsDisabled {
            review: r,
            target: cycle::advance_target(r, &base, f.tasks),
            next: machine::reviews_disabled(&base, r, f.tasks),
        };
    }
    let n = done_so_far.saturating_add(1);
    if let Some(reason) = cycle::hard_stop(&base, f.spent_usd) {
        return NextStop::HardStop(HardStop {
            reason,
            review: r,
            task: base.current_task.filter(|_| r == Review::Code),
            iterations: done_so_far,
            state: read.clone(),
            last_review: newest_review(f, r, base.current_task, done_so_far.max(1)),
            spent_usd: f.spent_usd,
        });
    }
    if let Some(missing) = missing_precondition(f, r, &base) {
        return NextStop::Precondition {
            review: r,
            iteration: n,
            missing,
        };
    }
    if pause::is_paused(base.paused_until, f.now) {
        return NextStop::Paused {
            review: r,
            iteration: n,
            until: base.paused_until.unwrap_or_default(),
            by: base.paused_by.clone(),
        };
    }
    let task = base.current_task.filter(|_| r == Review::Code);
    let (reviewers, panel, budget_left) = cycle::reviewers_for(&base, n, f.spent_usd);
    let (Some(review_file), Some(post_file)) = (review_file(r, n, task), post_file(r, n, task))
    else {
        // Unreachable: step 15 names a code review without a task.
        return NextStop::NoCurrentTask(r);
    };
    NextStop::Review(Box::new(Due {
        review: r,
        iteration: n,
        model: cycle::reviewer_label(&base, n),
        reviewers,
        panel,
        budget_left,
        task,
        review_file,
        post_file,
        read: read.clone(),
        base,
    }))
}

/// The newest review file of cycle `r` at or below iteration `upto`, found among the
/// files present: counting down from `upto` (which state.json may set near u64::MAX)
/// would not end.
fn newest_review(f: &Facts, r: Review, task: Option<u64>, upto: u64) -> Option<String> {
    f.files
        .iter()
        .filter_map(|name| match PlanFile::parse(name)? {
            PlanFile::Review(_, i) if (1..=upto).contains(&i) => {
                (review_file(r, i, task).as_ref() == Some(name)).then(|| (i, name.clone()))
            }
            _ => None,
        })
        .max()
        .map(|(_, name)| name)
}

/// SPEC §5 step 15: what a review needs before it can run, named as the agent can
/// create it.
fn missing_precondition(f: &Facts, r: Review, state: &State) -> Option<String> {
    match r {
        Review::Plan if !f.has_file("plan.md") => Some(f.rel("plan.md")),
        Review::Plan => None,
        Review::Code => match state.current_task {
            None => Some(
                "current_task in state.json (set it with `taskie state set current_task=<N>`)"
                    .into(),
            ),
            Some(t) if !f.has_file(&format!("task-{t}.md")) => Some(f.rel(&format!("task-{t}.md"))),
            Some(_) => None,
        },
        Review::Tasks | Review::AllCode => {
            let any = f.tasks.iter().any(|t| {
                t.number()
                    .is_some_and(|n| f.has_file(&format!("task-{n}.md")))
            });
            if any {
                return None;
            }
            let missing: Vec<String> = f
                .missing_task_files()
                .iter()
                .map(|name| f.rel(name))
                .collect();
            Some(if missing.is_empty() {
                format!("a task row in {}", f.rel("tasks.md"))
            } else {
                format!(
                    "the task files {} lists: {}",
                    f.rel("tasks.md"),
                    missing.join(", ")
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::facts::FactsBuilder;

    fn plan(state: &str) -> FactsBuilder {
        FactsBuilder::plan(state)
    }

    #[test]
    fn an_owed_post_review_on_the_last_allowed_review_leads_to_a_hard_stop() {
        let p = plan(
            r#"{"phase":"plan-review","next_phase":"post-plan-review","phase_iteration":1,"max_reviews":1}"#,
        )
        .files(&["plan-review-1.md"]);
        match predict(&p.facts()).stop {
            NextStop::PostReviewOwed { then, .. } => {
                assert_eq!(then, Then::HardStop(StopReason::MaxReviewsReached))
            }
            other => panic!("{other:?}"),
        }
        let p = p.files(&["plan-post-review-1.md"]);
        let got = predict(&p.facts());
        assert_eq!(got.base, Base::PostReviewDone);
        assert!(matches!(got.stop, NextStop::HardStop(_)), "{got:?}");
    }

    #[test]
    fn task_files_missing_are_named_when_a_tasks_review_cannot_run() {
        let p = plan(r#"{"phase":"create-tasks","next_phase":"tasks-review","phase_iteration":0}"#)
            .files(&["tasks.md"])
            .tasks(&[("1", "pending"), ("2", "pending")]);
        match predict(&p.facts()).stop {
            NextStop::Precondition { missing, .. } => assert_eq!(
                missing,
                "the task files .taskie/plans/p/tasks.md lists: .taskie/plans/p/task-1.md, \
                 .taskie/plans/p/task-2.md"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_lost_review_is_rewound_and_runs_again() {
        let p =
            plan(r#"{"phase":"plan-review","next_phase":"post-plan-review","phase_iteration":2}"#);
        let got = predict(&p.facts());
        assert_eq!(got.base, Base::Rewound);
        match got.stop {
            NextStop::Review(d) => assert_eq!(d.iteration, 2),
            other => panic!("{other:?}"),
        }
    }
}
