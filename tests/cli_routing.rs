//! `taskie continue-plan`: every row of SPEC §13, through the real binary.

use crate::support::{Fake, Project};
use serde_json::{Value, json};

fn route(p: &Project) -> Value {
    p.taskie_json(&["continue-plan", "--json"])
}

/// Checks the five fields of the JSON answer; `reason` must contain `why`.
fn assert_route(v: &Value, action: &str, task: Value, why: &str) {
    assert_eq!(v["plan"], "p", "{v:#}");
    assert_eq!(v["action"], action, "{v:#}");
    let command = if ["stop", "complete", "ask-human"].contains(&action) {
        Value::Null
    } else {
        json!(format!("/taskie:{action}"))
    };
    assert_eq!(v["command"], command, "{v:#}");
    assert_eq!(v["task"], task, "{v:#}");
    let reason = v["reason"].as_str().expect("reason is a string");
    assert!(reason.contains(why), "reason {reason:?} lacks {why:?}");
    assert_eq!(v.as_object().unwrap().len(), 5, "{v:#}");
}

fn in_cycle(phase: &str, next: &str, iteration: u64) -> Value {
    json!({"phase": phase, "next_phase": next, "phase_iteration": iteration, "max_reviews": 8,
           "review_model": "sonnet", "consecutive_clean": 1, "current_task": 2, "tdd": false})
}

#[test]
fn an_owed_post_review_is_the_next_action() {
    let p = Project::new()
        .plan("p")
        .state(in_cycle("plan-review", "post-plan-review", 1))
        .file("plan-review-1.md", "VERDICT: FAIL\n");
    assert_route(
        &route(&p),
        "post-plan-review",
        Value::Null,
        "plan-post-review-1.md",
    );
}

#[test]
fn an_owed_code_post_review_names_the_task() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "in progress")])
        .state(in_cycle("code-review", "post-code-review", 2))
        .file("task-2-code-review-1.md", "x")
        .file("task-2-code-post-review-1.md", "x")
        .file("task-2-code-review-2.md", "x");
    assert_route(
        &route(&p),
        "post-code-review",
        json!(2),
        "task-2-code-post-review-2.md",
    );
}

#[test]
fn a_missing_review_file_means_stop_and_the_cycle_is_set_back_so_the_hook_reruns_it() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "in progress")])
        .state(in_cycle("tasks-review", "post-tasks-review", 1));
    assert_route(
        &route(&p),
        "stop",
        Value::Null,
        "the hook runs tasks-review #1 again",
    );
    let s = p.state_json();
    assert_eq!(s["next_phase"], "tasks-review");
    assert_eq!(s["phase_iteration"], 0);
    assert_eq!(s["review_model"], "opus");
    assert_eq!(s["consecutive_clean"], 0);
    // The hook then runs the review again instead of waiting for a post-review.
    let reason = p.stop().reason();
    assert!(reason.contains("tasks-review-1.md"), "{reason}");
}

#[test]
fn a_written_post_review_means_stop_for_the_next_review() {
    let p = Project::new()
        .plan("p")
        .state(in_cycle("plan-review", "post-plan-review", 1))
        .file("plan-review-1.md", "x")
        .file("plan-post-review-1.md", "x");
    assert_route(&route(&p), "stop", Value::Null, "plan-review #2");
}

#[test]
fn a_recorded_post_review_means_stop_now() {
    let p = Project::new()
        .plan("p")
        .state(in_cycle("post-plan-review", "plan-review", 1))
        .file("plan-review-1.md", "x")
        .file("plan-post-review-1.md", "x");
    assert_route(
        &route(&p),
        "stop",
        Value::Null,
        "stop now; the hook runs plan-review #2",
    );
}

#[test]
fn a_due_review_after_any_other_phase_means_continue_task() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "in progress")])
        .state(in_cycle("complete-task", "code-review", 0));
    assert_route(
        &route(&p),
        "continue-task",
        json!(2),
        "task 2 may be unfinished",
    );
    let p = Project::new()
        .plan("p")
        .state(crate::support::due("plan-review"));
    assert_route(
        &route(&p),
        "continue-task",
        Value::Null,
        "plan.md may be unfinished",
    );
}

#[test]
fn a_due_tasks_review_without_tasks_md_means_create_tasks() {
    let p = Project::new()
        .plan("p")
        .state(crate::support::due("tasks-review"));
    assert_route(
        &route(&p),
        "create-tasks",
        Value::Null,
        "tasks.md does not exist yet",
    );
}

#[test]
fn a_hard_stopped_cycle_asks_the_human_with_the_resolving_commands() {
    let mut state = in_cycle("post-plan-review", "plan-review", 3);
    state["max_reviews"] = json!(3);
    let p = Project::new().plan("p").state(state);
    let v = route(&p);
    assert_route(
        &v,
        "ask-human",
        Value::Null,
        "plan-review ran the 3 reviews its cycle allows (max_reviews)",
    );
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("taskie state set --plan p max_reviews=7"),
        "{reason}"
    );
    assert!(reason.contains("taskie advance --plan p"), "{reason}");
}

#[test]
fn create_tasks_is_routed() {
    let p = Project::new()
        .plan("p")
        .state(in_cycle("plan-review", "create-tasks", 2));
    assert_route(&route(&p), "create-tasks", Value::Null, "split the plan");
}

#[test]
fn complete_task_names_the_first_unfinished_task() {
    for next in ["complete-task", "complete-task-tdd"] {
        let p = Project::new()
            .plan("p")
            .tasks(&[(1, "done"), (2, "**Done**"), (3, "pending"), (4, "pending")])
            .state(in_cycle("tasks-review", next, 2));
        assert_route(
            &route(&p),
            next,
            json!(3),
            "task 3 is the first unfinished task",
        );
    }
}

#[test]
fn complete_is_recorded_atomically_and_keeps_unknown_fields() {
    let mut state = in_cycle("all-code-review", "complete", 2);
    state["notes"] = json!("kept");
    let p = Project::new().plan("p").tasks(&[(1, "done")]).state(state);
    assert_route(&route(&p), "complete", Value::Null, "the plan is complete");
    let s = p.state_json();
    assert_eq!(s["phase"], "complete");
    assert_eq!(s["next_phase"], Value::Null);
    assert_eq!(s["notes"], "kept");
    assert_eq!(s["phase_iteration"], 2);
    assert!(p.read("state.json").ends_with("}\n"));
}

#[test]
fn complete_is_not_recorded_while_a_review_holds_the_lock() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done")])
        .state(in_cycle("all-code-review", "complete", 2));
    let before = p.state_bytes();
    let _held = taskie::store::lock::try_lock(&p.root().join(".taskie/locks"), "p")
        .unwrap()
        .unwrap();
    let err = p.run_taskie(&["continue-plan"]).fails_with(1).to_owned();
    assert!(
        err.contains("is busy") && err.contains("another taskie process"),
        "{err}"
    );
    assert_eq!(p.state_bytes(), before);
}

#[test]
fn nothing_scheduled_after_an_implementation_phase_means_continue_task() {
    for phase in [
        "next-task",
        "next-task-tdd",
        "complete-task",
        "complete-task-tdd",
        "continue-task",
    ] {
        let p = Project::new()
            .plan("p")
            .tasks(&[(1, "done"), (2, "pending")])
            .state(json!({"phase": phase, "next_phase": null, "phase_iteration": null, "current_task": 2}));
        assert_route(&route(&p), "continue-task", json!(2), phase);
    }
}

#[test]
fn nothing_scheduled_after_complete_reports_the_plan_complete_without_writing() {
    let p = Project::new()
        .plan("p")
        .state(json!({"phase": "complete", "next_phase": null}));
    let before = p.state_bytes();
    assert_route(&route(&p), "complete", Value::Null, "complete");
    assert_eq!(p.state_bytes(), before);
}

#[test]
fn nothing_scheduled_after_anything_else_asks_the_human_naming_the_phase() {
    let p = Project::new()
        .plan("p")
        .state(json!({"phase": "code-review", "next_phase": null}));
    assert_route(&route(&p), "ask-human", Value::Null, "\"code-review\"");
}

#[test]
fn without_a_plan_md_the_next_step_is_new_plan() {
    let p = Project::new().plan("p");
    std::fs::remove_file(p.plan_dir().join("plan.md")).unwrap();
    std::fs::write(p.plan_dir().join("state.json"), "{}").unwrap();
    assert_route(
        &route(&p),
        "new-plan",
        Value::Null,
        "plan.md does not exist",
    );
}

#[test]
fn without_any_plan_the_next_step_is_new_plan() {
    let p = Project::new();
    let v = route(&p);
    assert_eq!(v["action"], "new-plan");
    assert_eq!(v["plan"], Value::Null);
    assert_eq!(v["command"], "/taskie:new-plan");
}

#[test]
fn a_plan_md_without_state_json_routes_to_taskie_init_so_the_plan_is_reviewed() {
    let p = Project::new().plan("p");
    let v = route(&p);
    assert_eq!(
        (&v["action"], &v["command"]),
        (&json!("init"), &json!("taskie init p")),
        "{v:#}"
    );
    assert!(
        v["reason"].as_str().unwrap().contains("never reviews it"),
        "{v:#}"
    );
    p.taskie(&["init", "p"]).output().unwrap();
    assert_eq!(
        route(&p)["action"],
        "continue-task",
        "after init the plan review is due"
    );
}

#[test]
fn without_state_an_unfinished_task_is_the_next_step() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "blocked")]);
    assert_route(&route(&p), "complete-task", json!(2), "task 2");
}

#[test]
fn without_state_all_tasks_finished_is_done_and_suggests_init() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "cancelled")]);
    assert_route(&route(&p), "complete", Value::Null, "taskie init p");
}

#[test]
fn the_human_answer_names_the_action_the_task_and_why() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "pending")])
        .state(in_cycle("tasks-review", "complete-task", 2));
    let run = p.run_taskie(&["continue-plan"]);
    let out = run.ok();
    assert!(out.contains("plan  p\n"), "{out}");
    assert!(
        out.contains("next  /taskie:complete-task (task 2)"),
        "{out}"
    );
    assert!(out.contains("why   "), "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
}

#[test]
fn an_invalid_plan_is_an_error_that_points_to_validate() {
    let p = Project::new()
        .plan("p")
        .state(crate::support::due("plan-review"))
        .file("notes.md", "x");
    let err = p.run_taskie(&["continue-plan"]).fails_with(1).to_owned();
    assert!(err.contains("Invalid filename: notes.md"), "{err}");
    assert!(err.contains("taskie validate --plan p"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_state_error_is_an_error_naming_the_file_field_and_fix() {
    let p = Project::new()
        .plan("p")
        .state(json!({"max_reviews": "lots", "next_phase": "plan-review"}));
    let before = p.state_bytes();
    let err = p.run_taskie(&["continue-plan"]).fails_with(1).to_owned();
    assert!(err.contains(".taskie/plans/p/state.json"), "{err}");
    assert!(err.contains("taskie state set max_reviews=8"), "{err}");
    assert_eq!(p.state_bytes(), before);
}

// ---------------------------------------------------------------------------
// The audit: every (phase, next_phase) pair the workflow produces, produced by the
// workflow itself (the hook with a fake reviewer, `taskie mark`, `taskie advance`,
// `taskie init`), never written by hand, each routed by the rule behind SPEC §13:
// the work of a step is done when `phase` is a post-review or a review whose cycle
// just passed; only then "stop so the hook runs the review".

/// One plan walked from `taskie init` to `complete`, checking continue-plan at every
/// state it reaches and recording the pairs seen.
struct Walk {
    p: Project,
    seen: Vec<(String, String)>,
}

impl Walk {
    fn pair(&self) -> (String, String) {
        let s = self.p.state_json();
        let name = |v: &Value| v.as_str().unwrap_or("null").to_string();
        (name(&s["phase"]), name(&s["next_phase"]))
    }

    /// continue-plan must answer `action` (for `task`) with `why` in its reason.
    fn expect(&mut self, action: &str, task: Value, why: &str) {
        let pair = self.pair();
        let v = route(&self.p);
        assert_eq!(v["action"], action, "at {pair:?}: {v:#}");
        assert_eq!(v["task"], task, "at {pair:?}: {v:#}");
        let reason = v["reason"].as_str().expect("reason is a string");
        assert!(
            reason.contains(why),
            "at {pair:?}: {reason:?} lacks {why:?}"
        );
        if !self.seen.contains(&pair) {
            self.seen.push(pair);
        }
    }

    fn pairs(&self) -> Vec<(&str, &str)> {
        self.seen
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect()
    }

    fn taskie(&self, args: &[&str]) {
        self.p.run_taskie(args).ok();
    }

    /// Ends a turn with the reviewer answering `verdict`.
    fn stop(&self, verdict: &'static str) -> bool {
        self.p.set_reviewer(&Fake::verdict(verdict));
        self.p.stop().is_block()
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.p.plan_dir().join(name), text).unwrap();
    }

    fn remove(&self, name: &str) {
        std::fs::remove_file(self.p.plan_dir().join(name)).unwrap();
    }

    fn tasks(&self, first: &str, second: &str) {
        self.write(
            "tasks.md",
            &format!(
                "| Id | Title | Status |\n|----|-------|--------|\n| 1 | One | {first} |\n| 2 | Two | {second} |\n"
            ),
        );
    }
}

#[test]
fn every_state_a_whole_plan_passes_through_routes_by_the_rule() {
    let mut w = Walk {
        p: Project::new().plan("p"),
        seen: Vec::new(),
    };
    w.taskie(&["init", "p"]);
    // The plan is written but its review has not run: it may be unfinished.
    w.expect("continue-task", Value::Null, "plan.md may be unfinished");

    // Plan review #1 fails: the post-review is owed.
    assert!(w.stop("FAIL"));
    w.expect("post-plan-review", Value::Null, "plan-post-review-1.md");
    // The review file vanished (an interrupted run): set back, stop, the hook reruns it.
    w.remove("plan-review-1.md");
    w.expect("stop", Value::Null, "runs plan-review #1 again");
    w.expect(
        "stop",
        Value::Null,
        "plan-review #1 was interrupted and is set to run again",
    );
    assert!(w.stop("FAIL"));
    w.expect("post-plan-review", Value::Null, "plan-post-review-1.md");
    // The post-review is written but not recorded: its work is done.
    w.write("plan-post-review-1.md", "Fixed.\n");
    w.expect("stop", Value::Null, "the hook runs plan-review #2");
    // ...and recorded by hand: the same answer.
    w.taskie(&["mark", "post-plan-review"]);
    w.expect("stop", Value::Null, "the hook runs plan-review #2");
    // Two passes in a row end the cycle.
    assert!(w.stop("PASS"));
    w.write("plan-post-review-2.md", "Nothing to do.\n");
    assert!(!w.stop("PASS"));
    w.expect("create-tasks", Value::Null, "plan review passed");

    // Tasks written and recorded: the tasks review is due, their work may be unfinished.
    w.tasks("pending", "pending");
    w.write("task-1.md", "# Task 1\n");
    w.write("task-2.md", "# Task 2\n");
    w.taskie(&["mark", "create-tasks"]);
    w.expect(
        "continue-task",
        Value::Null,
        "tasks.md and the task files may be unfinished",
    );
    // Accepted by hand: the first unfinished task is next.
    w.taskie(&["advance"]);
    w.expect(
        "complete-task",
        json!(1),
        "task 1 is the first unfinished task",
    );

    // Task 1 implemented: its code review is due, the implementation may be unfinished.
    w.taskie(&["mark", "complete-task", "--task", "1"]);
    w.expect("continue-task", json!(1), "task 1 may be unfinished");
    w.taskie(&["mark", "continue-task"]);
    w.expect("continue-task", json!(1), "task 1 may be unfinished");
    assert!(w.stop("FAIL"));
    w.expect("post-code-review", json!(1), "task-1-code-post-review-1.md");
    w.write("task-1-code-post-review-1.md", "Fixed.\n");
    w.taskie(&["mark", "post-code-review"]);
    w.expect("stop", json!(1), "the hook runs code-review #2");
    assert!(w.stop("PASS"));
    w.write("task-1-code-post-review-2.md", "Nothing to do.\n");
    w.tasks("done", "pending");
    assert!(!w.stop("PASS"));
    w.expect(
        "complete-task",
        json!(2),
        "task 2 is the first unfinished task",
    );

    // Task 2: the last one. Its cycle passing moves on to the all-code review, whose
    // work (every task) is done: stop so it runs.
    w.taskie(&["mark", "complete-task", "--task", "2"]);
    w.tasks("done", "done");
    w.taskie(&["advance"]);
    w.expect(
        "stop",
        Value::Null,
        "the code-review cycle ended: stop now; the hook runs all-code-review #1",
    );

    // The all-code review fails once; its post-review is owed, then done.
    assert!(w.stop("FAIL"));
    w.expect(
        "post-all-code-review",
        Value::Null,
        "all-code-post-review-1.md",
    );
    w.write("all-code-post-review-1.md", "Fixed.\n");
    w.taskie(&["mark", "post-all-code-review"]);
    w.expect("stop", Value::Null, "the hook runs all-code-review #2");
    // Out of reviews: a decision for the human, with the commands that resolve it.
    w.taskie(&["state", "set", "max_reviews=1"]);
    w.expect(
        "ask-human",
        Value::Null,
        "taskie state set --plan p max_reviews=5",
    );
    w.taskie(&["state", "set", "max_reviews=8"]);
    assert!(w.stop("PASS"));
    w.write("all-code-post-review-2.md", "Nothing to do.\n");
    assert!(!w.stop("PASS"));
    // The whole implementation passed: complete is recorded, then reported.
    w.expect("complete", Value::Null, "recorded phase complete");
    w.expect(
        "complete",
        Value::Null,
        "the plan is complete; nothing is left to do",
    );

    // Standalone steps outside a cycle.
    w.taskie(&["mark", "next-task", "--task", "2"]);
    w.expect("continue-task", json!(2), "nothing is scheduled after it");
    w.taskie(&["mark", "code-review"]);
    w.expect(
        "ask-human",
        Value::Null,
        "the last phase was \"code-review\"",
    );

    let pairs = w.pairs();
    assert_eq!(
        pairs,
        [
            ("new-plan", "plan-review"),
            ("plan-review", "post-plan-review"),
            ("post-plan-review", "plan-review"),
            ("plan-review", "create-tasks"),
            ("create-tasks", "tasks-review"),
            ("tasks-review", "complete-task"),
            ("complete-task", "code-review"),
            ("continue-task", "code-review"),
            ("code-review", "post-code-review"),
            ("post-code-review", "code-review"),
            ("code-review", "complete-task"),
            ("code-review", "all-code-review"),
            ("all-code-review", "post-all-code-review"),
            ("post-all-code-review", "all-code-review"),
            ("all-code-review", "complete"),
            ("complete", "null"),
            ("next-task", "null"),
            ("code-review", "null"),
        ],
        "the pairs the workflow produced"
    );
}

#[test]
fn with_reviews_disabled_and_tdd_every_advance_routes_to_the_next_step() {
    let mut w = Walk {
        p: Project::new().plan("p"),
        seen: Vec::new(),
    };
    w.taskie(&["init", "p", "--tdd", "--max-reviews", "0"]);
    // Each stop advances without a review (SPEC §5 step 13), never blocking.
    assert!(!w.stop("FAIL"));
    // Not reviewed is never called passed.
    w.expect("create-tasks", Value::Null, "plan was not reviewed");
    w.tasks("pending", "pending");
    w.write("task-1.md", "# Task 1\n");
    w.write("task-2.md", "# Task 2\n");
    w.taskie(&["mark", "create-tasks"]);
    assert!(!w.stop("FAIL"));
    w.expect(
        "complete-task-tdd",
        json!(1),
        "task 1 is the first unfinished task",
    );
    w.taskie(&["mark", "complete-task-tdd", "--task", "1"]);
    w.tasks("done", "pending");
    assert!(!w.stop("FAIL"));
    w.expect(
        "complete-task-tdd",
        json!(2),
        "task 2 is the first unfinished task",
    );
    w.taskie(&["mark", "complete-task-tdd", "--task", "2"]);
    w.tasks("done", "done");
    assert!(!w.stop("FAIL"));
    w.expect(
        "stop",
        Value::Null,
        "the code-review cycle ended: reviews are disabled (max_reviews=0), so the next stop passes over \
         all-code-review",
    );
    assert!(!w.stop("FAIL"));
    w.expect("complete", Value::Null, "recorded phase complete");
    assert_eq!(w.p.reviewer_calls(), 0, "reviews are disabled");
    let pairs = w.pairs();
    assert_eq!(
        pairs,
        [
            ("plan-review", "create-tasks"),
            ("tasks-review", "complete-task-tdd"),
            ("code-review", "complete-task-tdd"),
            ("code-review", "all-code-review"),
            ("all-code-review", "complete"),
        ]
    );
}

// ---------------------------------------------------------------------------
// Routes that tell the truth about odd states.

#[test]
fn a_task_that_passed_while_tasks_md_says_pending_is_named_as_such() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "pending"), (2, "pending")])
        .state(
            json!({"phase": "code-review", "next_phase": "complete-task",
                      "phase_iteration": 2, "current_task": 1}),
        );
    let v = route(&p);
    assert_route(
        &v,
        "complete-task",
        json!(2),
        "task 1 passed its code review but .taskie/plans/p/tasks.md still says \"pending\": mark it done there",
    );
}

/// state.json deleted while the reviews remain: say so and how to resume; the commands
/// given, run as printed, put the plan back where it was.
#[test]
fn a_lost_state_is_reported_with_the_commands_that_resume_it_and_they_work() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "pending")])
        .file("plan-review-1.md", "VERDICT: FAIL\n")
        .file("plan-post-review-1.md", "Fixed.\n")
        .file("plan-review-2.md", "VERDICT: PASS\n")
        .file("task-2-code-review-1.md", "VERDICT: FAIL\n");
    let v = route(&p);
    let reason = v["reason"].as_str().unwrap().to_string();
    assert_eq!(v["action"], "ask-human", "{v:#}");
    assert!(
        reason.contains("state.json is missing") && reason.contains("code-review #1 of task 2"),
        "{reason}"
    );
    let status = p.run_taskie(&["status"]).ok().to_string();
    assert!(status.contains("state.json is missing"), "{status}");
    assert!(!status.contains("has not started"), "{status}");
    // Follow the advice word for word.
    for command in reason.split('`').filter(|c| c.starts_with("taskie ")) {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        p.run_taskie(&args).ok();
    }
    let s = p.state_json();
    assert_eq!(
        (
            &s["phase"],
            &s["next_phase"],
            &s["phase_iteration"],
            &s["current_task"]
        ),
        (
            &json!("code-review"),
            &json!("post-code-review"),
            &json!(1),
            &json!(2)
        )
    );
    assert_eq!(route(&p)["action"], "post-code-review");
}

#[test]
fn continue_plan_outside_any_project_says_where_it_looked() {
    let dir = crate::support::tempdir();
    let out = assert_cmd::Command::cargo_bin("taskie")
        .unwrap()
        .current_dir(dir.path())
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("TASKIE_PLAN")
        .args(["continue-plan", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["action"], "new-plan");
    let reason = v["reason"].as_str().unwrap();
    let here = dir.path().canonicalize().unwrap();
    assert!(
        reason.contains("no .taskie directory") && reason.contains(&here.display().to_string())
            || reason.contains(&dir.path().display().to_string()),
        "{reason}"
    );
}
