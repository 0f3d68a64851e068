//! `taskie mark <phase>` (SPEC §14): the agent records that it finished a phase.
//! [`transition`] is the table as a pure function; it refuses what does not fit the
//! current state, saying why, what the state is, and which marks would fit.

use crate::commands::{Audience, Invocation};
use crate::error::Error;
use crate::model::facts::Facts;
use crate::model::machine;
use crate::model::next_stop::{self, NextStop};
use crate::model::phase::{Phase, Review};
use crate::model::plan_file;
use crate::model::state::State;
use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    CreateTasks,
    CompleteTask {
        tdd: bool,
    },
    NextTask {
        tdd: bool,
    },
    ContinueTask,
    /// `post-R`: the post-review of the current review is written.
    Post(Review),
    /// `R`: a standalone review done by hand, outside automation.
    Review(Review),
    AddTask,
    Complete,
}

impl Mark {
    /// The mark that records phase `p`. `new-plan` has none: `taskie init` records it.
    /// Exhaustive, so a new phase cannot be forgotten here.
    pub fn from_phase(p: Phase) -> Option<Mark> {
        Some(match p {
            Phase::NewPlan => return None,
            Phase::CreateTasks => Mark::CreateTasks,
            Phase::CompleteTask => Mark::CompleteTask { tdd: false },
            Phase::CompleteTaskTdd => Mark::CompleteTask { tdd: true },
            Phase::NextTask => Mark::NextTask { tdd: false },
            Phase::NextTaskTdd => Mark::NextTask { tdd: true },
            Phase::ContinueTask => Mark::ContinueTask,
            Phase::AddTask => Mark::AddTask,
            Phase::Complete => Mark::Complete,
            p => match (p.review(), p.post_review_of()) {
                (Some(r), _) => Mark::Review(r),
                (_, Some(r)) => Mark::Post(r),
                _ => return None,
            },
        })
    }

    /// Every mark, in phase order.
    pub fn all() -> impl Iterator<Item = Mark> {
        Phase::ALL.iter().copied().filter_map(Mark::from_phase)
    }

    /// The phase the mark records.
    pub fn phase(self) -> Phase {
        match self {
            Mark::CreateTasks => Phase::CreateTasks,
            Mark::CompleteTask { tdd } => Phase::implement(tdd),
            Mark::NextTask { tdd: false } => Phase::NextTask,
            Mark::NextTask { tdd: true } => Phase::NextTaskTdd,
            Mark::ContinueTask => Phase::ContinueTask,
            Mark::Post(r) => r.post_phase(),
            Mark::Review(r) => r.phase(),
            Mark::AddTask => Phase::AddTask,
            Mark::Complete => Phase::Complete,
        }
    }

    pub fn name(self) -> &'static str {
        self.phase().name()
    }

    pub fn parse(name: &str) -> Option<Mark> {
        Phase::parse(name).and_then(Mark::from_phase)
    }

    /// For clap: a mark name, or an error listing them all.
    pub fn parse_arg(name: &str) -> Result<Mark, String> {
        Mark::parse(name).ok_or_else(|| {
            format!(
                "\"{name}\" is not a phase taskie mark records{}; use one of: {}",
                crate::model::text::did_you_mean(name, names()),
                names().join(", ")
            )
        })
    }

    /// Whether the mark is about a task given with `--task N`.
    pub fn takes_task(self) -> bool {
        matches!(
            self,
            Mark::CompleteTask { .. } | Mark::NextTask { .. } | Mark::AddTask
        )
    }
}

fn names() -> Vec<&'static str> {
    Mark::all().map(Mark::name).collect()
}

/// What a successful mark leads to.
#[derive(Debug, Clone, PartialEq)]
pub struct Marked {
    pub state: State,
    /// False when the state already was what the mark records (nothing to write).
    pub changed: bool,
    pub message: String,
}

/// SPEC §14. `task` is the `--task` value; the caller has checked it is given exactly
/// for the marks that take one.
pub fn transition(
    f: &Facts,
    s: &State,
    mark: Mark,
    task: Option<u64>,
    audience: Audience,
) -> Result<Marked, String> {
    // The one structure check (SPEC §7, §14): what validate and the hook report, mark
    // refuses, naming the same files.
    if !f.errors.is_empty() {
        return Err(format!(
            "cannot mark {}: plan '{}' is invalid: {}. Fix: {}; then mark again",
            mark.name(),
            f.plan,
            crate::model::validate::joined(f.errors),
            crate::model::validate::fixes(f.plan, f.errors).join("; ")
        ));
    }
    if let Err(why) = fits(s, mark) {
        return Err(refusal(s, mark, &why));
    }
    if let Some(why) = unlisted_task(f, mark, task) {
        return Err(why);
    }
    if let Some(missing) = missing_file(f, s, mark, task) {
        let files: Vec<String> = missing.split(", ").map(|m| f.rel(m)).collect();
        let (verb, them) = if files.len() == 1 {
            ("does", "it")
        } else {
            ("do", "them")
        };
        return Err(format!(
            "cannot mark {}: {} {verb} not exist yet; write {them} first, then mark again",
            mark.name(),
            files.join(", ")
        ));
    }
    let next = match mark {
        Mark::CreateTasks => machine::tasks_created(s),
        Mark::CompleteTask { tdd } => machine::task_completed(s, task, tdd),
        Mark::NextTask { tdd } => machine::next_task(s, task, tdd),
        Mark::ContinueTask => machine::task_continued(s),
        Mark::Post(r) => machine::post_review_done(s, r),
        Mark::Review(r) => machine::standalone_review(s, r),
        Mark::AddTask => machine::task_added(s, task),
        Mark::Complete => machine::complete(s),
    };
    let changed = next != *s;
    let message = success(f, &next, mark, task, changed, audience);
    Ok(Marked {
        state: next,
        changed,
        message,
    })
}

/// A review cycle of the hook is under way (SPEC §14's "automated cycle runs").
fn automated(s: &State) -> bool {
    s.phase_iteration.is_some() && s.next_phase.is_some()
}

/// Whether `mark` fits the state; `Err` says why not.
fn fits(s: &State, mark: Mark) -> Result<(), String> {
    // An unknown next_phase fits only the marks that do not look at it.
    let next = s.next();
    let before_first_review = s.phase_iteration.unwrap_or(0) == 0;
    let owed_post = s.scheduled().and_then(Phase::post_review_of);
    let last = s.last();
    match mark {
        Mark::CreateTasks => match next {
            None | Some(Ok(Phase::CreateTasks)) => Ok(()),
            Some(Ok(Phase::TasksReview)) if before_first_review => Ok(()),
            _ => Err(waiting(s)),
        },
        Mark::CompleteTask { .. } => match next {
            None
            | Some(Ok(
                Phase::CompleteTask
                | Phase::CompleteTaskTdd
                | Phase::NextTask
                | Phase::NextTaskTdd
                | Phase::ContinueTask
                | Phase::AddTask
                | Phase::Complete,
            )) => Ok(()),
            // Re-recording before the first review, or a task added after the last one.
            Some(Ok(Phase::CodeReview | Phase::AllCodeReview)) if before_first_review => Ok(()),
            _ => Err(waiting(s)),
        },
        Mark::NextTask { .. } | Mark::Review(_) if automated(s) => Err(format!(
            "an automated workflow is running ({}), and a standalone step would take the plan out of it",
            waiting(s)
        )),
        Mark::NextTask { .. } | Mark::Review(_) => Ok(()),
        Mark::ContinueTask => match owed_post {
            Some(r) => Err(format!(
                "{}; perform /taskie:{} instead",
                waiting(s),
                r.post_name()
            )),
            None => Ok(()),
        },
        Mark::Post(r) if last == Some(r.phase()) && next == Some(Ok(r.post_phase())) => {
            if s.phase_iteration.unwrap_or(0) == 0 {
                Err("no review of this cycle has run yet (phase_iteration is 0 or null)".into())
            } else {
                Ok(())
            }
        }
        // Recording the same post-review twice is harmless: nothing changes.
        Mark::Post(r) if last == Some(r.post_phase()) && next == Some(Ok(r.phase())) => Ok(()),
        Mark::Post(r) => Err(format!(
            "{} records the post-review of a {r} the hook ran, and {}",
            r.post_name(),
            waiting(s)
        )),
        Mark::AddTask => Ok(()),
        Mark::Complete => match next {
            None | Some(Ok(Phase::Complete)) => Ok(()),
            _ => Err(waiting(s)),
        },
    }
}

/// The file the mark claims was written, when it is missing.
/// A task mark for a task tasks.md does not list: the id is most likely a slip.
fn unlisted_task(f: &Facts, mark: Mark, task: Option<u64>) -> Option<String> {
    let task =
        task.filter(|_| matches!(mark, Mark::CompleteTask { .. } | Mark::NextTask { .. }))?;
    if f.tasks.is_empty() || f.tasks.iter().any(|t| t.number() == Some(task)) {
        return None;
    }
    let ids: Vec<&str> = f.tasks.iter().map(|t| t.id.as_str()).collect();
    Some(format!(
        "cannot mark {}: task {task} is not in {} (it lists {}); use one of those ids, or add the task first \
         (/taskie:add-task)",
        mark.name(),
        f.rel("tasks.md"),
        ids.join(", ")
    ))
}

fn missing_file(f: &Facts, s: &State, mark: Mark, task: Option<u64>) -> Option<String> {
    let need = match mark {
        Mark::CreateTasks if f.has_file("tasks.md") => {
            let missing = f.missing_task_files();
            if missing.is_empty() {
                return None;
            }
            missing.join(", ")
        }
        Mark::CreateTasks => "tasks.md".to_string(),
        Mark::CompleteTask { .. } | Mark::NextTask { .. } | Mark::AddTask => {
            format!("task-{}.md", task?)
        }
        Mark::Post(r) if s.last() == Some(r.phase()) => {
            let task = s.current_task.filter(|_| r == Review::Code);
            match plan_file::post_file(r, s.phase_iteration?, task) {
                Some(post) => post,
                None => "current_task in state.json".to_string(),
            }
        }
        _ => return None,
    };
    (!f.has_file(&need)).then_some(need)
}

/// What the state is waiting for, in words.
fn waiting(s: &State) -> String {
    let k = s.phase_iteration.unwrap_or(0);
    match s.next() {
        None => "no phase is scheduled".into(),
        Some(Ok(n)) => {
            if let Some(r) = n.post_review_of() {
                format!("{r} #{k} is waiting for its post-review ({n})")
            } else if let Some(r) = n.review() {
                format!(
                    "{r} #{} is due: the hook runs it at the agent's next stop",
                    k.saturating_add(1)
                )
            } else {
                format!("the plan is waiting for {n}")
            }
        }
        Some(Err(n)) => format!("the plan is waiting for {n}"),
    }
}

fn refusal(s: &State, mark: Mark, why: &str) -> String {
    let fitting: Vec<&str> = Mark::all()
        .filter(|m| fits(s, *m).is_ok())
        .map(Mark::name)
        .collect();
    format!(
        "cannot mark {}: {why}. Current state: {}. Marks that fit now: {}; `taskie continue-plan` names the next step",
        mark.name(),
        s.describe(),
        fitting.join(", ")
    )
}

fn success(
    f: &Facts,
    after: &State,
    mark: Mark,
    task: Option<u64>,
    changed: bool,
    audience: Audience,
) -> String {
    let plan = f.plan;
    let of_task = task.map(|t| format!(" task {t} of")).unwrap_or_default();
    let head = format!("Recorded {} for{of_task} plan '{plan}'", mark.name());
    if mark == Mark::AddTask && after.current_task != task {
        return format!(
            "{head}: current_task stays {}; /taskie:continue-plan picks the new task up in order.",
            after.current_task.unwrap_or_default()
        );
    }
    // Reaching `complete` names the unfinished tasks (SPEC §13), recorded again or not.
    let open = match mark {
        Mark::Complete => crate::model::tasks::unfinished_at_complete(f.tasks, &f.rel("tasks.md"))
            .map(|o| format!(" But {o}."))
            .unwrap_or_default(),
        _ => String::new(),
    };
    if !changed {
        return format!("{head}: state.json already said so; nothing changed.{open}");
    }
    let what = match (mark, after.next()) {
        (Mark::AddTask, _) if after.current_task == task => {
            format!("current_task is now {}", task.unwrap_or_default())
        }
        (_, Some(Err(n))) => format!("next is {n}"),
        (_, Some(Ok(n))) => match n.review() {
            Some(_) => at_next_stop(f, after, audience),
            None => format!("next is {n}"),
        },
        (_, None) => "nothing is scheduled next (standalone)".into(),
    };
    format!("{head}: {what}.{open}")
}

/// What the next stop does once the mark is written, from the one prediction: a review
/// due after a mark may still be hard-stopped or paused. The agent is told to stop; a
/// person at a terminal, that the agent's stop runs it.
fn at_next_stop(f: &Facts, after: &State, audience: Audience) -> String {
    let written = Ok(Some(after.clone()));
    let facts = Facts {
        state: &written,
        ..*f
    };
    match next_stop::predict(&facts).stop {
        NextStop::Review(d) => match audience {
            Audience::Agent => format!(
                "next is {} #{}. Stop now: the hook runs it when you end your turn",
                d.review, d.iteration
            ),
            Audience::Person => format!(
                "next is {} #{}: the hook runs it at the agent's next stop",
                d.review, d.iteration
            ),
        },
        NextStop::HardStop(h) => {
            let (why, remedies) = next_stop::hard_stop_words(f, after, h.review, h.reason);
            format!(
                "next is {}, but {why}, so the next stop is a hard stop; ask the human: {}",
                h.review, remedies
            )
        }
        NextStop::Paused {
            review,
            iteration,
            until,
            ..
        } => format!(
            "next is {review} #{iteration}, but the plan is paused until {}: the review runs at the first stop \
             after that (`taskie resume --plan {}` lifts the pause)",
            crate::model::pause::when(until, f.now),
            f.plan
        ),
        NextStop::ReviewsDisabled { review, target, .. } => format!(
            "next is {review}, which the next stop passes over (reviews are disabled: max_reviews=0) to {target}"
        ),
        NextStop::Precondition {
            review, missing, ..
        } => match audience {
            Audience::Agent => {
                format!(
                    "next is {review}, but it cannot run without {missing}: create it, then stop"
                )
            }
            Audience::Person => format!(
                "next is {review}, but it cannot run without {missing}: the review runs at the agent's \
                 first stop after it exists"
            ),
        },
        _ => format!("next is {}", after.next_phase.as_deref().unwrap_or("null")),
    }
}

/// `taskie mark <phase> [--task N] [--plan ID]`.
pub fn run(
    inv: &Invocation,
    plan: Option<&str>,
    mark: Mark,
    task: Option<u64>,
    out: &mut dyn Write,
) -> Result<(), Error> {
    match (mark.takes_task(), task) {
        (true, None) => {
            return Err(Error::Usage(format!(
                "`mark {}` needs the task: add --task <N>",
                mark.name()
            )));
        }
        (false, Some(_)) => {
            return Err(Error::Usage(format!(
                "`mark {}` takes no --task (only complete-task, complete-task-tdd, next-task, next-task-tdd \
                 and add-task do)",
                mark.name()
            )));
        }
        _ => {}
    }
    let (target, state) = inv.change_state(plan, out, |read, state| {
        let marked =
            transition(&read.facts(), state, mark, task, inv.audience).map_err(Error::Refused)?;
        Ok((marked.changed.then_some(marked.state), marked.message))
    })?;
    if let Mark::Post(r) = mark
        && let Some(note) = unanswered_note(&target.dir(), r, &state)
    {
        writeln!(out, "{note}")?;
    }
    Ok(())
}

/// SPEC §21: the open findings the post-review of `r` (at the state's iteration) leaves
/// unanswered by id, as a note; `None` when it answers them all (or there is no ledger).
/// The hook records the answers when it runs the next review.
fn unanswered_note(dir: &std::path::Path, r: Review, s: &State) -> Option<String> {
    let n = s.phase_iteration.filter(|n| *n >= 1)?;
    let task = s.current_task.filter(|_| r == Review::Code);
    let post = crate::model::plan_file::post_file(r, n, task)?;
    let text = crate::store::fs::read_regular(&dir.join(&post), crate::store::fs::PLAN_FILE_LIMIT)
        .ok()
        .flatten()?;
    let mut ledger = match crate::store::snapshot::findings(dir) {
        Ok(l) => l,
        Err(e) => return Some(format!("{e}.")),
    };
    let unanswered = ledger.record_post_review(r.name(), task, &String::from_utf8_lossy(&text));
    (!unanswered.is_empty()).then(|| {
        format!(
            "{post} does not answer {} by id: the findings ledger keeps {} open. Add a line per id \
             (`F1: fixed — how` or `F1: won't fix — why`).",
            unanswered.join(", "),
            if unanswered.len() == 1 { "it" } else { "them" }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: &[&str] = &[
        "plan.md",
        "tasks.md",
        "task-1.md",
        "task-2.md",
        "plan-review-1.md",
        "plan-post-review-1.md",
        "task-1-code-review-2.md",
    ];

    fn mark(state: &str, m: Mark, task: Option<u64>) -> Result<Marked, String> {
        mark_with(FILES, state, m, task)
    }

    fn mark_with(
        files: &[&str],
        state: &str,
        m: Mark,
        task: Option<u64>,
    ) -> Result<Marked, String> {
        let b = crate::model::facts::FactsBuilder::new("p")
            .files(files)
            .state_json(state);
        let s = b.read_state().expect("a valid state").clone();
        transition(&b.facts(), &s, m, task, Audience::Agent)
    }

    const IN_CYCLE: &str = r#"{"phase":"plan-review","next_phase":"post-plan-review","phase_iteration":1,
        "review_model":"sonnet","consecutive_clean":1,"review_failures":2}"#;

    #[test]
    fn every_mark_name_parses_back() {
        for m in Mark::all() {
            assert_eq!(Mark::parse(m.name()), Some(m));
            assert_eq!(m.phase().name(), m.name());
        }
        assert_eq!(Mark::all().count(), 16, "every phase but new-plan");
        assert!(
            Mark::parse_arg("new-plan")
                .unwrap_err()
                .contains("create-tasks")
        );
    }

    #[test]
    fn create_tasks_starts_the_tasks_review_cycle() {
        let s = mark(
            r#"{"phase":"plan-review","next_phase":"create-tasks","phase_iteration":3,"current_task":4,
                "review_model":"sonnet","consecutive_clean":2,"review_failures":1}"#,
            Mark::CreateTasks,
            None,
        )
        .unwrap()
        .state;
        assert_eq!(s.phase, "create-tasks");
        assert_eq!(s.next_phase.as_deref(), Some("tasks-review"));
        assert_eq!(s.current_task, None);
        assert_eq!(
            (
                s.phase_iteration,
                s.review_model.as_str(),
                s.consecutive_clean,
                s.review_failures
            ),
            (Some(0), "opus", 0, 0)
        );
    }

    #[test]
    fn create_tasks_is_refused_while_a_plan_review_is_owed() {
        let err = mark(IN_CYCLE, Mark::CreateTasks, None).unwrap_err();
        assert!(
            err.contains("plan-review #1 is waiting for its post-review"),
            "{err}"
        );
        assert!(err.contains("Current state: phase plan-review"), "{err}");
        assert!(
            err.contains("Marks that fit now: continue-task") || err.contains("post-plan-review"),
            "{err}"
        );
    }

    #[test]
    fn create_tasks_needs_tasks_md() {
        let err = mark_with(
            &["plan.md"],
            r#"{"next_phase":"create-tasks"}"#,
            Mark::CreateTasks,
            None,
        )
        .unwrap_err();
        assert!(err.contains("tasks.md does not exist"), "{err}");
    }

    #[test]
    fn complete_task_starts_a_code_review_cycle_with_the_tdd_flag() {
        for (m, tdd) in [
            (Mark::CompleteTask { tdd: false }, false),
            (Mark::CompleteTask { tdd: true }, true),
        ] {
            let s = mark(
                r#"{"phase":"tasks-review","next_phase":"complete-task","phase_iteration":2,"tdd":true}"#,
                m,
                Some(2),
            )
            .unwrap()
            .state;
            assert_eq!(s.phase, m.name());
            assert_eq!(
                (s.current_task, s.next_phase.as_deref(), s.tdd),
                (Some(2), Some("code-review"), tdd)
            );
            assert_eq!(s.phase_iteration, Some(0));
        }
    }

    #[test]
    fn complete_task_is_refused_mid_cycle_and_without_its_task_file() {
        let err = mark(
            r#"{"phase":"post-code-review","next_phase":"code-review","phase_iteration":2,"current_task":1}"#,
            Mark::CompleteTask { tdd: false },
            Some(2),
        )
        .unwrap_err();
        assert!(err.contains("code-review #3 is due"), "{err}");
        let err = mark(
            r#"{"next_phase":"complete-task"}"#,
            Mark::CompleteTask { tdd: false },
            Some(9),
        )
        .unwrap_err();
        assert!(err.contains("task-9.md does not exist"), "{err}");
    }

    #[test]
    fn next_task_is_standalone_and_refused_during_automation() {
        let s = mark(
            r#"{"phase":"complete","next_phase":null,"phase_iteration":4}"#,
            Mark::NextTask { tdd: true },
            Some(1),
        )
        .unwrap()
        .state;
        assert_eq!(
            (
                s.phase.as_str(),
                s.current_task,
                s.next_phase.clone(),
                s.phase_iteration
            ),
            ("next-task-tdd", Some(1), None, None)
        );
        let err = mark(IN_CYCLE, Mark::NextTask { tdd: false }, Some(1)).unwrap_err();
        assert!(err.contains("automated workflow is running"), "{err}");
    }

    #[test]
    fn continue_task_changes_only_the_phase_and_not_while_a_post_review_is_owed() {
        let before = r#"{"phase":"complete-task","next_phase":"code-review","phase_iteration":0,"current_task":1}"#;
        let m = mark(before, Mark::ContinueTask, None).unwrap();
        let mut expected = State::parse(before.as_bytes()).unwrap();
        expected.phase = "continue-task".into();
        assert_eq!(m.state, expected);
        let err = mark(IN_CYCLE, Mark::ContinueTask, None).unwrap_err();
        assert!(err.contains("perform /taskie:post-plan-review"), "{err}");
    }

    #[test]
    fn post_review_marks_need_the_cycle_and_the_file() {
        let s = mark(IN_CYCLE, Mark::Post(Review::Plan), None)
            .unwrap()
            .state;
        assert_eq!(
            (s.phase.as_str(), s.next_phase.as_deref()),
            ("post-plan-review", Some("plan-review"))
        );
        assert_eq!(
            (s.phase_iteration, s.consecutive_clean, s.review_failures),
            (Some(1), 1, 2)
        );
        let again = mark(
            &String::from_utf8(s.to_json().into_bytes()).unwrap(),
            Mark::Post(Review::Plan),
            None,
        )
        .unwrap();
        assert!(!again.changed);
        let err = mark(IN_CYCLE, Mark::Post(Review::Tasks), None).unwrap_err();
        assert!(err.contains("post-tasks-review records"), "{err}");
        let err = mark_with(
            &["plan.md", "plan-review-1.md"],
            IN_CYCLE,
            Mark::Post(Review::Plan),
            None,
        )
        .unwrap_err();
        assert!(
            err.contains("plan-post-review-1.md does not exist"),
            "{err}"
        );
        let code = r#"{"phase":"code-review","next_phase":"post-code-review","phase_iteration":2,"current_task":1}"#;
        let err = mark(code, Mark::Post(Review::Code), None).unwrap_err();
        assert!(err.contains("task-1-code-post-review-2.md"), "{err}");
    }

    #[test]
    fn a_standalone_review_leaves_automation_and_is_refused_inside_it() {
        let s = mark(
            r#"{"phase":"next-task","next_phase":null,"phase_iteration":null}"#,
            Mark::Review(Review::Code),
            None,
        )
        .unwrap()
        .state;
        assert_eq!(
            (s.phase.as_str(), s.next_phase.clone(), s.phase_iteration),
            ("code-review", None, None)
        );
        assert!(mark(IN_CYCLE, Mark::Review(Review::Plan), None).is_err());
        assert!(
            mark(
                r#"{"next_phase":"complete-task","phase_iteration":null}"#,
                Mark::Review(Review::Plan),
                None
            )
            .is_ok(),
            "phase_iteration null is not an automated cycle"
        );
    }

    #[test]
    fn add_task_sets_current_task_only_when_it_is_null() {
        let m = mark(
            r#"{"current_task":null,"next_phase":"code-review","phase_iteration":2}"#,
            Mark::AddTask,
            Some(2),
        )
        .unwrap();
        assert_eq!(m.state.current_task, Some(2));
        let m = mark(r#"{"current_task":1}"#, Mark::AddTask, Some(2)).unwrap();
        assert_eq!((m.state.current_task, m.changed), (Some(1), false));
    }

    #[test]
    fn complete_fits_only_when_nothing_else_is_scheduled() {
        let s = mark(
            r#"{"phase":"all-code-review","next_phase":"complete","phase_iteration":2}"#,
            Mark::Complete,
            None,
        )
        .unwrap()
        .state;
        assert_eq!((s.phase.as_str(), s.next_phase.clone()), ("complete", None));
        let err = mark(
            r#"{"next_phase":"all-code-review","phase_iteration":0}"#,
            Mark::Complete,
            None,
        )
        .unwrap_err();
        assert!(err.contains("all-code-review #1 is due"), "{err}");
    }
}
