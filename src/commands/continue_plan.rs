//! `taskie continue-plan` (SPEC §13): the one next step for the agent. [`route`] is the
//! routing table as a pure function of what is on disk; [`run`] does the I/O around it.

use crate::commands::Invocation;
use crate::error::Error;
use crate::model::cycle;
use crate::model::facts::Facts;
use crate::model::machine;
use crate::model::next_stop::{self, Base, NextStop, Prediction, Then};
use crate::model::pause;
use crate::model::phase::{self, Phase, Review};
use crate::model::plan_file;
use crate::model::state::State;
use crate::model::tasks::TaskRow;
use crate::paint::{WIDTH, wrap};
use serde::Serialize;
use std::io::Write;

/// What the agent should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Perform `/taskie:<action>`: every action is named after the phase it performs.
    Action(Phase),
    /// End the turn now: the hook takes it from here.
    Stop,
    /// The plan is complete.
    Complete,
    /// A decision the agent must not take alone.
    AskHuman,
    /// Run `taskie init <plan>`: the plan has no state.json, so nothing reviews it.
    Init,
}

impl Next {
    /// The `action` of the JSON answer.
    pub fn action(self) -> &'static str {
        match self {
            Next::Action(a) => a.name(),
            Next::Stop => "stop",
            Next::Complete => "complete",
            Next::AskHuman => "ask-human",
            Next::Init => "init",
        }
    }

    /// What to run: `/taskie:<action>`, or `taskie init <plan>`.
    pub fn command(self, plan: Option<&str>) -> Option<String> {
        match self {
            Next::Action(a) => Some(format!("/taskie:{a}")),
            Next::Init => plan.map(|p| format!("taskie init {p}")),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub next: Next,
    /// The task the step is about, as tasks.md or state.json names it.
    pub task: Option<String>,
    pub reason: String,
    /// A state to record before answering (atomically, under the plan lock).
    pub write: Option<State>,
}

fn go(action: Phase, task: Option<String>, reason: String) -> Route {
    Route {
        next: Next::Action(action),
        task,
        reason,
        write: None,
    }
}

fn answer(next: Next, task: Option<String>, reason: String) -> Route {
    Route {
        next,
        task,
        reason,
        write: None,
    }
}

/// The answer when there is no plan at all.
pub fn no_plan() -> Route {
    go(
        Phase::NewPlan,
        None,
        "there is no plan in .taskie/plans yet: write one".into(),
    )
}

/// SPEC §13, first match wins. Without plan.md nothing else matters, so that comes first
/// (and an otherwise missing plan.md would only be reported as a structure error).
pub fn route(f: &Facts) -> Result<Route, Error> {
    if !f.has_file("plan.md") {
        return Ok(go(
            Phase::NewPlan,
            None,
            format!("{} does not exist yet: write the plan", f.rel("plan.md")),
        ));
    }
    if !f.errors.is_empty() {
        return Err(Error::Invalid {
            plan: f.plan.into(),
            errors: f.errors.to_vec(),
            listed: false,
        });
    }
    match f.state {
        Err(error) => Err(Error::State {
            plan: f.plan.into(),
            error: error.clone(),
        }),
        Ok(None) => Ok(without_state(f)),
        Ok(Some(s)) => Ok(with_state(f, s)),
    }
}

fn without_state(f: &Facts) -> Route {
    if let Some(back) = cycle::recover_from_files(f.files) {
        return answer(
            Next::AskHuman,
            back.task.map(|t| t.to_string()),
            back.explain(f.plan, &f.rel(crate::model::plan_file::STATE_FILE)),
        );
    }
    if !f.has_file("tasks.md") {
        // A plan just written: without state.json the hook never reviews it.
        return answer(
            Next::Init,
            None,
            format!(
                "plan '{p}' has plan.md but no state.json, so the hook never reviews it: run `taskie init {p}` \
                 (the plan review then runs at the next stop), then `taskie continue-plan` again",
                p = f.plan
            ),
        );
    }
    match first_unfinished(f.tasks, None) {
        Some(t) => go(
            Phase::CompleteTask,
            Some(t.id.clone()),
            format!(
                "task {} is the first unfinished task in tasks.md (status \"{}\"); this plan has no state.json, \
                 so no review cycle runs",
                t.id, t.status
            ),
        ),
        None => answer(
            Next::Complete,
            None,
            format!(
                "every task in tasks.md is finished, so the plan is done; to put plans like it through \
                 Taskie's reviewed workflow, adopt them with `taskie init {}`",
                f.plan
            ),
        ),
    }
}

fn with_state(f: &Facts, s: &State) -> Route {
    let next = match s.next() {
        Some(Ok(p)) => Some(p),
        Some(Err(name)) => {
            return answer(
                Next::AskHuman,
                None,
                format!(
                    "next_phase \"{name}\" in state.json is not a phase, so nothing is scheduled; ask the human, who \
                     can fix it with `taskie state set --plan {} next_phase=<phase>` (phases: {})",
                    f.plan,
                    phase::PHASES.join(", ")
                ),
            );
        }
        None => None,
    };
    if let Some(r) = next.and_then(Phase::post_review_of) {
        return post_review(f, s, r);
    }
    if let Some(r) = next.and_then(Phase::review) {
        return review_due(f, s, r);
    }
    match next {
        Some(Phase::CreateTasks) => {
            let how = cycle_ended(s, "the plan review passed", "the plan");
            go(
                Phase::CreateTasks,
                None,
                format!("{how}: split the plan into tasks.md and task files"),
            )
        }
        Some(
            a @ (Phase::CompleteTask
            | Phase::CompleteTaskTdd
            | Phase::NextTask
            | Phase::NextTaskTdd),
        ) => implement(f, s, a),
        Some(Phase::Complete) => {
            let how = cycle_ended(
                s,
                "the whole implementation passed its review",
                "the whole implementation",
            );
            let open = crate::model::tasks::unfinished_at_complete(f.tasks, &f.rel("tasks.md"))
                .map(|o| format!("; but {o}"))
                .unwrap_or_default();
            Route {
                next: Next::Complete,
                task: None,
                reason: format!(
                    "{how}: the plan is complete (recorded phase complete in state.json){open}"
                ),
                write: Some(machine::complete(s)),
            }
        }
        Some(p) => {
            let task = (p == Phase::ContinueTask)
                .then(|| s.current_task.map(|t| t.to_string()))
                .flatten();
            go(p, task, format!("state.json schedules {p} next"))
        }
        None if s.last().is_some_and(Phase::is_implementation) => {
            let task = s.current_task.map(|t| t.to_string());
            let which = task
                .as_ref()
                .map(|t| format!(" (task {t})"))
                .unwrap_or_default();
            go(
                Phase::ContinueTask,
                task,
                format!(
                    "the last phase was {} and nothing is scheduled after it: finish the current work{which}",
                    s.phase
                ),
            )
        }
        None if s.last() == Some(Phase::Complete) => answer(
            Next::Complete,
            None,
            match crate::model::tasks::unfinished_at_complete(f.tasks, &f.rel("tasks.md")) {
                Some(open) => format!("the plan is recorded complete, but {open}"),
                None => "the plan is complete; nothing is left to do".into(),
            },
        ),
        None => answer(
            Next::AskHuman,
            None,
            format!(
                "the last phase was \"{}\" and nothing is scheduled after it (next_phase is null); ask the human \
                 what to do next, for example /taskie:next-task, /taskie:add-task or a review",
                s.phase
            ),
        ),
    }
}

/// `next_phase` is `post-R`: the agent owes the post-review of review N, unless the
/// next stop (the one prediction) has found it written or the review lost.
fn post_review(f: &Facts, s: &State, r: Review) -> Route {
    let n = s.phase_iteration.unwrap_or(0);
    let task = s.current_task.filter(|_| r == Review::Code);
    let task_text = task.map(|t| t.to_string());
    if s.last() != Some(r.phase()) || n == 0 {
        return answer(
            Next::AskHuman,
            task_text,
            format!(
                "state.json schedules {} but its phase is \"{}\" and phase_iteration {}, so no review is waiting \
                 for it; ask the human, who can have the hook run the review again with \
                 `taskie state set --plan {} next_phase={r}`",
                r.post_name(),
                s.phase,
                show(s.phase_iteration),
                f.plan
            ),
        );
    }
    let prediction = next_stop::predict(f);
    match (&prediction.stop, prediction.base) {
        (NextStop::NoCurrentTask(_), _) => no_current_task(f, r),
        (
            NextStop::PostReviewOwed {
                review_file,
                post_file,
                then,
                ..
            },
            _,
        ) => go(
            r.post_phase(),
            task_text,
            format!(
                "{r} #{n} asked for changes: read {}, address every finding, write {}, then {}",
                f.rel(review_file),
                f.rel(post_file),
                after_post_review(f, s, r, n, *then)
            ),
        ),
        (_, Base::Rewound) => {
            let mut route = at_next_stop(
                f,
                &prediction,
                format!(
                    "{r} #{n} is owed a post-review but {} is missing, so there is nothing to address; state.json \
                     was set back to before that review",
                    plan_file::review_file(r, n, task)
                        .map(|name| f.rel(&name))
                        .unwrap_or_default()
                ),
            );
            // Rewind to just before review N so the hook runs it again.
            route.write = Some(machine::rewind(s, r, n));
            route
        }
        _ => {
            let post = plan_file::post_file(r, n, task).unwrap_or_default();
            at_next_stop(
                f,
                &prediction,
                format!("the post-review {} is written", f.rel(&post)),
            )
        }
    }
}

/// What the agent does once the post-review of review `n` is written, as the next
/// stop will have it.
fn after_post_review(f: &Facts, s: &State, r: Review, n: u64, then: Then) -> String {
    let next = n.saturating_add(1);
    match then {
        Then::Review => format!("stop so review #{next} runs"),
        Then::HardStop(reason) => {
            let (why, remedies) = next_stop::hard_stop_words(f, s, r, reason);
            format!(
                "stop: the next stop is a hard stop and no review #{next} runs by itself ({why}); ask the human: \
                 {remedies}"
            )
        }
        Then::Paused { until } => format!(
            "stop; review #{next} then waits for a reviewer's usage limit: {}",
            paused_words(f, s.paused_by.as_deref(), until)
        ),
    }
}

/// `next_phase` is review R.
fn review_due(f: &Facts, s: &State, r: Review) -> Route {
    let k = s.phase_iteration.unwrap_or(0);
    let task = s.current_task.filter(|_| r == Review::Code);
    let prediction = next_stop::predict(f);
    if s.last() == Some(r.post_phase()) {
        // Iteration 0 after a post-review is a rewound first review (§5 step 10).
        let why = if k == 0 {
            format!("{r} #1 was interrupted and is set to run again")
        } else {
            format!("post-review #{k} of {r} is recorded")
        };
        return at_next_stop(f, &prediction, why);
    }
    // The last phase is a review whose cycle ended and moved on to R (code-review of the
    // last task → all-code-review): that step's work is done, so stopping runs R. Passed
    // or accepted by hand (`taskie advance`) leave the same state, so neither is claimed.
    if let Some(ended) = s.last().and_then(Phase::review).filter(|&p| p != r) {
        return at_next_stop(f, &prediction, format!("the {ended} cycle ended"));
    }
    if let NextStop::HardStop(_) = prediction.stop {
        return at_next_stop(f, &prediction, format!("{r} is due"));
    }
    if r == Review::Tasks && !f.has_file("tasks.md") {
        return go(
            Phase::CreateTasks,
            None,
            format!(
                "{r} is due but {} does not exist yet: write the tasks",
                f.rel("tasks.md")
            ),
        );
    }
    if r == Review::Tasks
        && let missing = f.missing_task_files()
        && !missing.is_empty()
    {
        let files: Vec<String> = missing.iter().map(|m| f.rel(m)).collect();
        return go(
            Phase::CreateTasks,
            None,
            format!(
                "{r} is due but the task files {} lists do not all exist yet: write {}",
                f.rel("tasks.md"),
                files.join(", ")
            ),
        );
    }
    let work = match (r, task) {
        (Review::Plan, _) => "plan.md".to_string(),
        (Review::Tasks, _) => "tasks.md and the task files".to_string(),
        (Review::Code, Some(t)) => format!("task {t}"),
        (Review::Code, None) => return no_current_task(f, r),
        (Review::AllCode, _) => "the implementation".to_string(),
    };
    let then = match &prediction.stop {
        NextStop::Paused { until, .. } => format!(
            "then stop; the review waits for a reviewer's usage limit: {}",
            paused_words(f, s.paused_by.as_deref(), *until)
        ),
        _ => "then stop so the hook runs the review (if it is already finished, just stop)".into(),
    };
    go(
        Phase::ContinueTask,
        task.map(|t| t.to_string()),
        format!(
            "{r} #{} is due and the last phase was \"{}\", so {work} may be unfinished: finish it, {then}",
            k.saturating_add(1),
            s.phase
        ),
    )
}

/// The route when the agent's work for the cycle is done and the next stop decides:
/// worded from the one prediction (SPEC §13). `why` says how the plan got here.
fn at_next_stop(f: &Facts, p: &Prediction, why: String) -> Route {
    let s = p_state(f);
    let task = |r: Review| {
        s.and_then(|s| s.current_task)
            .filter(|_| r == Review::Code)
            .map(|t| t.to_string())
    };
    match &p.stop {
        NextStop::Review(due) => answer(
            Next::Stop,
            task(due.review),
            format!(
                "{why}: stop now; the hook runs {} #{}{} when you end your turn",
                due.review,
                due.iteration,
                if p.base == Base::Rewound {
                    " again"
                } else {
                    ""
                }
            ),
        ),
        NextStop::HardStop(h) => {
            let (what, remedies) = match s {
                Some(s) => next_stop::hard_stop_words(f, s, h.review, h.reason),
                None => (String::new(), String::new()),
            };
            answer(
                Next::AskHuman,
                task(h.review),
                format!(
                    "{why}, but {what}, so reviews are hard-stopped; ask the human: {remedies} (details: `taskie \
                     status --plan {}`)",
                    f.plan
                ),
            )
        }
        NextStop::Paused {
            review,
            iteration,
            until,
            by,
        } => answer(
            Next::Stop,
            task(*review),
            format!(
                "{why}, but {review} #{iteration} waits for a reviewer's usage limit: {}; stopping now runs no \
                 reviewer",
                paused_words(f, by.as_deref(), *until)
            ),
        ),
        NextStop::ReviewsDisabled { review, target, .. } => answer(
            Next::Stop,
            task(*review),
            format!(
                "{why}: reviews are disabled (max_reviews=0), so the next stop passes over {review} and moves on \
                 to {target}: stop now"
            ),
        ),
        NextStop::Precondition {
            review, missing, ..
        } => answer(
            Next::AskHuman,
            task(*review),
            format!("{why}, but {review} cannot run: {missing} is missing; create it, then stop"),
        ),
        NextStop::NoCurrentTask(r) => no_current_task(f, *r),
        // Not reached from a due review: the structure, the state and the schedule were
        // checked before.
        _ => answer(Next::Stop, None, format!("{why}: stop now")),
    }
}

/// How the cycle that just ended ended, as the state shows it: the hook ends a cycle only
/// with its clean streak, so anything short of it was a decision (SPEC §13: a cycle
/// advanced by hand is never called passed).
/// `passed` words a passed cycle; `what` names the reviewed work otherwise.
fn cycle_ended(s: &State, passed: &str, what: &str) -> String {
    if s.consecutive_clean >= s.clean_reviews_required {
        passed.into()
    } else if s.max_reviews == 0 {
        format!("{what} was not reviewed (reviews are disabled: max_reviews=0)")
    } else {
        format!("{what} was accepted by hand (`taskie advance`) without passing its review")
    }
}

fn p_state<'a>(f: &Facts<'a>) -> Option<&'a State> {
    f.state.as_ref().ok().and_then(Option::as_ref)
}

/// A usage-limit pause in words: until when, who hit it, and how to lift it.
fn paused_words(f: &Facts, by: Option<&str>, until: i64) -> String {
    let by = by.map(|b| format!(" ({b})")).unwrap_or_default();
    format!(
        "the plan is paused until {}{by}; `taskie resume --plan {}` lifts the pause",
        pause::when(until, f.now),
        f.plan
    )
}

fn no_current_task(f: &Facts, r: Review) -> Route {
    answer(
        Next::AskHuman,
        None,
        format!(
            "a {r} cycle is running but state.json has no current_task; ask the human, who can set it with \
             `taskie state set --plan {} current_task=<N>`",
            f.plan
        ),
    )
}

/// `next_phase` names an implementation action: it is about the first unfinished task.
fn implement(f: &Facts, s: &State, action: Phase) -> Route {
    // Right after the code review of the current task passed, that task is done even if
    // tasks.md was not updated yet; SPEC §6 skips it the same way.
    let skip = s
        .current_task
        .filter(|_| s.last() == Some(Phase::CodeReview));
    // The task whose review just passed, while tasks.md still calls it unfinished.
    let stale = skip.and_then(|n| {
        f.tasks
            .iter()
            .find(|t| t.number() == Some(n) && !t.is_finished())
    });
    let note = stale
        .map(|t| {
            format!(
                "task {} passed its code review but {} still says \"{}\": mark it done there; ",
                t.id,
                f.rel("tasks.md"),
                t.status
            )
        })
        .unwrap_or_default();
    match first_unfinished(f.tasks, skip) {
        Some(t) => go(
            action,
            Some(t.id.clone()),
            format!(
                "{note}state.json schedules {action} and task {} is the first unfinished task in tasks.md (status \"{}\")",
                t.id, t.status
            ),
        ),
        None => answer(
            Next::AskHuman,
            None,
            format!(
                "state.json schedules {action} but every task in tasks.md is finished; ask the human whether to add \
                 a task (/taskie:add-task) or to review the whole implementation \
                 (`taskie state set --plan {} next_phase=all-code-review`)",
                f.plan
            ),
        ),
    }
}

fn first_unfinished(tasks: &[TaskRow], skip: Option<u64>) -> Option<&TaskRow> {
    tasks
        .iter()
        .find(|t| !t.is_finished() && (skip.is_none() || t.number() != skip))
}

fn show(v: Option<u64>) -> String {
    v.map(|n| n.to_string()).unwrap_or_else(|| "null".into())
}

/// A task id as JSON: a number when it is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum TaskId<'a> {
    Number(u64),
    Text(&'a str),
}

impl<'a> TaskId<'a> {
    pub fn of(task: &'a str) -> TaskId<'a> {
        task.parse().map_or(TaskId::Text(task), TaskId::Number)
    }
}

/// The `--json` answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouteJson<'a> {
    pub plan: Option<&'a str>,
    pub action: &'static str,
    pub command: Option<String>,
    pub task: Option<TaskId<'a>>,
    pub reason: &'a str,
}

pub fn to_json<'a>(plan: Option<&'a str>, r: &'a Route) -> RouteJson<'a> {
    RouteJson {
        plan,
        action: r.next.action(),
        command: r.next.command(plan),
        task: r.task.as_deref().map(TaskId::of),
        reason: &r.reason,
    }
}

pub fn human(plan: Option<&str>, r: &Route) -> String {
    let task = r
        .task
        .as_ref()
        .map(|t| format!(" (task {t})"))
        .unwrap_or_default();
    let next = match r.next {
        Next::Action(a) => format!("/taskie:{a}{task}"),
        Next::Stop => format!("stop now: end your turn{task}"),
        Next::Complete => "nothing: the plan is complete".into(),
        Next::AskHuman => format!("ask the human{task}"),
        Next::Init => format!("run `taskie init {}`", plan.unwrap_or("<plan-id>")),
    };
    let mut out = String::new();
    if let Some(p) = plan {
        out.push_str(&format!("plan  {p}\n"));
    }
    out.push_str(&format!("next  {}\n", wrap(&next, 6, WIDTH)));
    out.push_str(&format!("why   {}\n", wrap(&r.reason, 6, WIDTH)));
    out
}

/// `taskie continue-plan [--plan ID] [--json]`.
pub fn run(
    inv: &Invocation,
    plan: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let target = match inv.target(plan) {
        Ok(t) => t,
        // No plan anywhere: the next step is a new one, saying where taskie looked (the
        // same words `taskie status` uses for the same case).
        Err(e @ (Error::NoProject(_) | Error::NoPlan(_))) => {
            let mut route = no_plan();
            route.reason = format!("{e}");
            return print(out, None, &route, json);
        }
        Err(e) => return Err(e),
    };
    let mut chosen = route(&target.gather()?.facts())?;
    if chosen.write.is_some() {
        // Decide again under the lock, so a hook run in between is never overwritten.
        let held = target.lock()?;
        chosen = route(&target.gather()?.facts())?;
        if let Some(s) = &chosen.write {
            target.write_state(&held, s)?;
        }
    }
    inv.bind(&target);
    print(out, Some(&target.plan), &chosen, json)?;
    // The step is the agent's: a person at a terminal is told who does it, and how.
    if !json && inv.audience == super::Audience::Person {
        let who = match chosen.next {
            Next::Action(_) => {
                "the agent's step: in its session, /taskie:continue-plan makes it do this"
            }
            Next::Stop => "the agent's step: the hook goes on when the agent ends its turn",
            _ => return Ok(()),
        };
        writeln!(out, "who   {who}")?;
    }
    Ok(())
}

fn print(out: &mut dyn Write, plan: Option<&str>, r: &Route, json: bool) -> Result<(), Error> {
    if json {
        let text =
            serde_json::to_string_pretty(&to_json(plan, r)).map_err(std::io::Error::other)?;
        writeln!(out, "{text}")?;
    } else {
        write!(out, "{}", human(plan, r))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::state::StateError;

    use crate::model::facts::FactsBuilder;

    /// Plan `p` with these files.
    struct Plan(FactsBuilder);

    impl Plan {
        fn new(files: &[&str]) -> Plan {
            Plan(FactsBuilder::new("p").files(files))
        }

        fn tasks(self, rows: &[(&str, &str)]) -> Plan {
            Plan(self.0.tasks(rows))
        }

        fn state(self, json: &str) -> Plan {
            Plan(self.0.state_json(json))
        }

        fn route(&self) -> Result<Route, Error> {
            route(&self.0.facts())
        }

        fn ok(&self) -> Route {
            self.route().unwrap()
        }
    }

    const BASE: &[&str] = &["plan.md", "tasks.md", "task-1.md", "task-2.md"];

    #[test]
    fn a_passed_code_review_cycle_on_the_last_task_routes_to_stop_for_the_all_code_review() {
        let r = Plan::new(BASE)
            .tasks(&[("1", "done"), ("2", "done")])
            .state(
                r#"{"phase":"code-review","next_phase":"all-code-review","phase_iteration":0,"current_task":2}"#,
            )
            .ok();
        assert_eq!(r.next, Next::Stop);
        assert!(r.reason.contains("all-code-review #1"), "{}", r.reason);
        assert!(!r.reason.contains("unfinished"), "{}", r.reason);
    }

    #[test]
    fn a_missing_plan_md_routes_to_new_plan_before_anything_else() {
        let r = Plan::new(&[]).state(r#"{"next_phase":"code-review"}"#).ok();
        assert_eq!(r.next, Next::Action(Phase::NewPlan));
    }

    #[test]
    fn structure_and_state_errors_are_errors_not_routes() {
        let p = Plan(FactsBuilder::new("p").files(&["plan.md"]).errors(vec![
            crate::model::validate::StructureError::InvalidFilename {
                name: "x.md".into(),
            },
        ]));
        assert!(matches!(p.route(), Err(Error::Invalid { .. })));
        let p = Plan(
            FactsBuilder::new("p")
                .files(&["plan.md"])
                .state(Err(StateError::NotObject)),
        );
        assert!(matches!(p.route(), Err(Error::State { .. })));
    }

    #[test]
    fn without_state_the_files_decide() {
        let r = Plan::new(&["plan.md"]).ok();
        assert_eq!(
            r.next,
            Next::Init,
            "a plan without state.json is never reviewed"
        );
        assert_eq!(r.next.command(Some("p")).as_deref(), Some("taskie init p"));
        let r = Plan::new(BASE)
            .tasks(&[("1", "done"), ("2", "pending")])
            .ok();
        assert_eq!(
            (r.next, r.task.as_deref()),
            (Next::Action(Phase::CompleteTask), Some("2"))
        );
        let r = Plan::new(BASE)
            .tasks(&[("1", "done"), ("2", "skipped")])
            .ok();
        assert_eq!(r.next, Next::Complete);
        assert!(r.reason.contains("taskie init p"), "{}", r.reason);
    }

    #[test]
    fn an_owed_post_review_is_the_next_action() {
        let r = Plan::new(&["plan.md", "plan-review-2.md"])
            .state(r#"{"phase":"plan-review","next_phase":"post-plan-review","phase_iteration":2}"#)
            .ok();
        assert_eq!(r.next, Next::Action(Phase::PostPlanReview));
        assert!(r.reason.contains("plan-post-review-2.md"), "{}", r.reason);
        assert_eq!(r.write, None);
    }

    #[test]
    fn a_written_post_review_means_stop() {
        let r = Plan::new(&["plan.md", "plan-review-2.md", "plan-post-review-2.md"])
            .state(r#"{"phase":"plan-review","next_phase":"post-plan-review","phase_iteration":2}"#)
            .ok();
        assert_eq!(r.next, Next::Stop);
        assert!(r.reason.contains("plan-review #3"), "{}", r.reason);
    }

    #[test]
    fn a_missing_review_file_rewinds_the_cycle_so_the_hook_runs_it_again() {
        let r = Plan::new(&["plan.md"])
            .state(
                r#"{"phase":"plan-review","next_phase":"post-plan-review","phase_iteration":2,
                   "consecutive_clean":1,"review_model":"opus"}"#,
            )
            .ok();
        assert_eq!(r.next, Next::Stop);
        let back = r.write.unwrap();
        assert_eq!(back.next_phase.as_deref(), Some("plan-review"));
        assert_eq!(back.phase, "post-plan-review");
        assert_eq!(back.phase_iteration, Some(1));
        assert_eq!(back.consecutive_clean, 0);
        assert_eq!(back.review_model, "sonnet");
    }

    #[test]
    fn a_post_review_without_a_review_iteration_asks_the_human() {
        let r = Plan::new(&["plan.md"])
            .state(r#"{"phase":"new-plan","next_phase":"post-plan-review","phase_iteration":0}"#)
            .ok();
        assert_eq!(r.next, Next::AskHuman);
    }

    #[test]
    fn a_recorded_post_review_means_stop_for_the_next_review() {
        let r = Plan::new(BASE)
            .tasks(&[("1", "pending"), ("2", "pending")])
            .state(
                r#"{"phase":"post-tasks-review","next_phase":"tasks-review","phase_iteration":1}"#,
            )
            .ok();
        assert_eq!(r.next, Next::Stop);
        assert!(r.reason.contains("tasks-review #2"), "{}", r.reason);
    }

    #[test]
    fn a_due_review_after_another_phase_means_continue_task() {
        let r = Plan::new(BASE)
            .state(r#"{"phase":"complete-task","next_phase":"code-review","phase_iteration":0,"current_task":2}"#)
            .ok();
        assert_eq!(
            (r.next, r.task.as_deref()),
            (Next::Action(Phase::ContinueTask), Some("2"))
        );
    }

    #[test]
    fn a_due_tasks_review_without_tasks_md_means_create_tasks() {
        let r = Plan::new(&["plan.md"])
            .state(r#"{"phase":"create-tasks","next_phase":"tasks-review","phase_iteration":0}"#)
            .ok();
        assert_eq!(r.next, Next::Action(Phase::CreateTasks));
    }

    #[test]
    fn an_exhausted_cycle_asks_the_human_with_the_commands() {
        let r = Plan::new(&["plan.md", "plan-review-2.md", "plan-post-review-2.md"])
            .state(r#"{"phase":"post-plan-review","next_phase":"plan-review","phase_iteration":2,"max_reviews":2}"#)
            .ok();
        assert_eq!(r.next, Next::AskHuman);
        assert!(r.reason.contains("max_reviews=6"), "{}", r.reason);
        assert!(r.reason.contains("taskie advance --plan p"), "{}", r.reason);
        let r = Plan::new(&["plan.md"])
            .state(r#"{"phase":"post-plan-review","next_phase":"plan-review","phase_iteration":1,"review_failures":3}"#)
            .ok();
        assert!(r.reason.contains("review_failures=0"), "{}", r.reason);
    }

    #[test]
    fn scheduled_implementation_names_the_first_unfinished_task() {
        let r = Plan::new(BASE)
            .tasks(&[("1", "done"), ("2", "pending")])
            .state(
                r#"{"phase":"tasks-review","next_phase":"complete-task-tdd","phase_iteration":2}"#,
            )
            .ok();
        assert_eq!(
            (r.next, r.task.as_deref()),
            (Next::Action(Phase::CompleteTaskTdd), Some("2"))
        );
        let r = Plan::new(BASE)
            .tasks(&[("1", "in progress"), ("2", "pending")])
            .state(r#"{"phase":"code-review","next_phase":"complete-task","phase_iteration":2,"current_task":1}"#)
            .ok();
        assert_eq!(
            r.task.as_deref(),
            Some("2"),
            "the task whose review just passed is skipped"
        );
        let r = Plan::new(BASE)
            .tasks(&[("1", "done"), ("2", "done")])
            .state(r#"{"phase":"tasks-review","next_phase":"complete-task"}"#)
            .ok();
        assert_eq!(r.next, Next::AskHuman);
    }

    #[test]
    fn create_tasks_is_routed() {
        let r = Plan::new(&["plan.md"])
            .state(r#"{"phase":"plan-review","next_phase":"create-tasks"}"#)
            .ok();
        assert_eq!(r.next, Next::Action(Phase::CreateTasks));
    }

    #[test]
    fn complete_is_recorded() {
        let r = Plan::new(BASE)
            .state(r#"{"phase":"all-code-review","next_phase":"complete","phase_iteration":3}"#)
            .ok();
        assert_eq!(r.next, Next::Complete);
        let done = r.write.unwrap();
        assert_eq!((done.phase.as_str(), done.next_phase), ("complete", None));
    }

    #[test]
    fn nothing_scheduled_depends_on_the_last_phase() {
        let p = |phase: &str| {
            Plan::new(BASE)
                .state(&format!(
                    r#"{{"phase":"{phase}","next_phase":null,"current_task":1}}"#
                ))
                .ok()
        };
        assert_eq!(p("next-task").next, Next::Action(Phase::ContinueTask));
        assert_eq!(p("next-task").task.as_deref(), Some("1"));
        assert_eq!(p("complete").next, Next::Complete);
        assert_eq!(p("complete").write, None);
        assert_eq!(p("code-review").next, Next::AskHuman);
    }

    #[test]
    fn an_unknown_next_phase_asks_the_human() {
        let r = Plan::new(&["plan.md"])
            .state(r#"{"next_phase":"bogus"}"#)
            .ok();
        assert_eq!(r.next, Next::AskHuman);
        assert!(r.reason.contains("next_phase=<phase>"));
    }

    #[test]
    fn json_has_the_five_fields() {
        let r = go(Phase::CompleteTask, Some("3".into()), "why".into());
        assert_eq!(
            serde_json::to_string(&to_json(Some("p"), &r)).unwrap(),
            r#"{"plan":"p","action":"complete-task","command":"/taskie:complete-task","task":3,"reason":"why"}"#
        );
        let r = answer(Next::Stop, Some("T1".into()), "x".into());
        assert_eq!(
            serde_json::to_string(&to_json(None, &r)).unwrap(),
            r#"{"plan":null,"action":"stop","command":null,"task":"T1","reason":"x"}"#
        );
    }
}
