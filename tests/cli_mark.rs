//! `taskie mark` (every row of SPEC §14 and its refusals) and `taskie advance`.

use crate::support::{Fake, Project};
use serde_json::{Value, json};

fn state(phase: &str, next: Value, iteration: Value) -> Value {
    json!({"max_reviews": 8, "current_task": 1, "phase": phase, "next_phase": next,
           "phase_iteration": iteration, "review_model": "sonnet", "consecutive_clean": 1,
           "tdd": false, "review_failures": 2, "extra": "kept"})
}

/// A plan with two tasks, in `s`.
fn plan(s: Value) -> Project {
    Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "pending")])
        .state(s)
}

/// Runs a mark expecting success; returns the new state.json.
fn mark_ok(p: &Project, args: &[&str]) -> Value {
    let mut all = vec!["mark"];
    all.extend_from_slice(args);
    let run = p.run_taskie(&all);
    let out = run.ok();
    assert!(out.starts_with("Recorded "), "{out}");
    let s = p.state_json();
    assert_eq!(s["extra"], "kept", "unknown fields survive");
    s
}

/// Runs a mark expecting a refusal; state.json must not change. Returns stderr.
fn mark_refused(p: &Project, args: &[&str]) -> String {
    let before = p.state_bytes();
    let mut all = vec!["mark"];
    all.extend_from_slice(args);
    let err = p.run_taskie(&all).fails_with(1).to_owned();
    assert_eq!(p.state_bytes(), before, "a refused mark writes nothing");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

fn assert_cycle_reset(s: &Value) {
    assert_eq!(s["phase_iteration"], 0);
    assert_eq!(s["review_model"], "opus");
    assert_eq!(s["consecutive_clean"], 0);
    assert_eq!(s["review_failures"], 0);
}

#[test]
fn create_tasks_starts_the_tasks_review_cycle() {
    let p = plan(state("plan-review", json!("create-tasks"), json!(3)));
    let s = mark_ok(&p, &["create-tasks", "--plan", "p"]);
    assert_eq!(s["phase"], "create-tasks");
    assert_eq!(s["next_phase"], "tasks-review");
    assert_eq!(s["current_task"], Value::Null);
    assert_cycle_reset(&s);
}

#[test]
fn create_tasks_is_refused_while_the_plan_review_runs() {
    let p = plan(state("plan-review", json!("post-plan-review"), json!(2)));
    let err = mark_refused(&p, &["create-tasks"]);
    assert!(
        err.contains("plan-review #2 is waiting for its post-review"),
        "{err}"
    );
    assert!(
        err.contains(
            "Current state: phase plan-review, next_phase post-plan-review, phase_iteration 2"
        ),
        "{err}"
    );
    assert!(err.contains("Marks that fit now:"), "{err}");
    assert!(err.contains("post-plan-review"), "{err}");
}

#[test]
fn create_tasks_is_refused_without_tasks_md() {
    let p = Project::new()
        .plan("p")
        .state(state("plan-review", json!("create-tasks"), json!(3)));
    let err = mark_refused(&p, &["create-tasks"]);
    assert!(
        err.contains(".taskie/plans/p/tasks.md does not exist"),
        "{err}"
    );
}

#[test]
fn complete_task_starts_a_code_review_cycle_for_the_task() {
    for (name, tdd) in [("complete-task", false), ("complete-task-tdd", true)] {
        let p = plan(state("tasks-review", json!("complete-task"), json!(2)));
        let s = mark_ok(&p, &[name, "--task", "2", "--plan", "p"]);
        assert_eq!(s["phase"], name);
        assert_eq!(s["current_task"], 2);
        assert_eq!(s["next_phase"], "code-review");
        assert_eq!(s["tdd"], tdd);
        assert_cycle_reset(&s);
    }
}

#[test]
fn complete_task_is_refused_while_a_code_review_cycle_runs() {
    let p = plan(state("post-code-review", json!("code-review"), json!(2)));
    let err = mark_refused(&p, &["complete-task", "--task", "2"]);
    assert!(err.contains("code-review #3 is due"), "{err}");
}

#[test]
fn complete_task_is_refused_for_a_task_tasks_md_does_not_list_or_without_its_file() {
    let p = plan(state("tasks-review", json!("complete-task"), json!(2)));
    let err = mark_refused(&p, &["complete-task", "--task", "7"]);
    assert!(
        err.contains("task 7 is not in .taskie/plans/p/tasks.md (it lists 1, 2)"),
        "{err}"
    );
    std::fs::remove_file(p.plan_dir().join("task-2.md")).unwrap();
    let err = mark_refused(&p, &["complete-task", "--task", "2"]);
    assert!(err.contains("task-2.md does not exist"), "{err}");
}

#[test]
fn a_task_id_that_is_not_a_number_is_a_usage_error_that_says_what_an_id_is() {
    let p = plan(state("tasks-review", json!("complete-task"), json!(2)));
    let err = p
        .run_taskie(&["mark", "complete-task", "--task", "abc"])
        .fails_with(2)
        .to_string();
    assert!(
        err.contains("\"abc\" is not a task id") && !err.contains("invalid digit"),
        "{err}"
    );
}

#[test]
fn create_tasks_needs_a_task_file_for_every_task_and_validate_warns_without_one() {
    let p = plan(state("plan-review", json!("create-tasks"), json!(2)));
    std::fs::remove_file(p.plan_dir().join("task-2.md")).unwrap();
    let err = mark_refused(&p, &["create-tasks"]);
    assert!(
        err.contains(".taskie/plans/p/task-2.md does not exist yet"),
        "{err}"
    );
    let out = p.run_taskie(&["validate"]).ok().to_string();
    assert!(
        out.starts_with("ok:") && out.contains("warning: tasks.md lists the task of task-2.md"),
        "{out}"
    );
}

#[test]
fn marks_about_a_task_need_task_and_others_refuse_it_as_usage_errors() {
    let p = plan(state("tasks-review", json!("complete-task"), json!(2)));
    for args in [
        &["mark", "complete-task"][..],
        &["mark", "next-task-tdd"],
        &["mark", "add-task"],
        &["mark", "continue-task", "--task", "1"],
        &["mark", "complete-task", "--task", "x"],
        &["mark", "new-plan"],
        &["mark"],
    ] {
        let err = p.run_taskie(args).fails_with(2).to_owned();
        assert!(!err.is_empty(), "{args:?}");
    }
}

#[test]
fn next_task_is_a_standalone_step() {
    for name in ["next-task", "next-task-tdd"] {
        let p = plan(state("complete", Value::Null, json!(3)));
        let s = mark_ok(&p, &[name, "--task", "2"]);
        assert_eq!(s["phase"], name);
        assert_eq!(s["current_task"], 2);
        assert_eq!(s["next_phase"], Value::Null);
        assert_eq!(s["phase_iteration"], Value::Null);
    }
}

#[test]
fn next_task_is_refused_while_an_automated_cycle_runs() {
    let p = plan(state("complete-task", json!("code-review"), json!(0)));
    let err = mark_refused(&p, &["next-task", "--task", "2"]);
    assert!(err.contains("automated workflow is running"), "{err}");
}

#[test]
fn continue_task_changes_only_the_phase() {
    let p = plan(state("complete-task", json!("code-review"), json!(0)));
    let mut expected = p.state_json();
    let s = mark_ok(&p, &["continue-task", "--plan", "p"]);
    expected["phase"] = json!("continue-task");
    assert_eq!(s, expected);
}

#[test]
fn continue_task_is_refused_while_a_post_review_is_owed() {
    let p = plan(state("code-review", json!("post-code-review"), json!(1)))
        .file("task-1-code-review-1.md", "x");
    let err = mark_refused(&p, &["continue-task"]);
    assert!(err.contains("perform /taskie:post-code-review"), "{err}");
}

#[test]
fn each_post_review_mark_records_the_post_review() {
    for (r, review_file, post_file) in [
        ("plan-review", "plan-review-1.md", "plan-post-review-1.md"),
        (
            "tasks-review",
            "tasks-review-1.md",
            "tasks-post-review-1.md",
        ),
        (
            "code-review",
            "task-1-code-review-1.md",
            "task-1-code-post-review-1.md",
        ),
        (
            "all-code-review",
            "all-code-review-1.md",
            "all-code-post-review-1.md",
        ),
    ] {
        let post = format!("post-{r}");
        let p = plan(state(r, json!(post), json!(1)))
            .file(review_file, "VERDICT: FAIL\n")
            .file(post_file, "done\n");
        let before = p.state_json();
        let s = mark_ok(&p, &[&post, "--plan", "p"]);
        assert_eq!(s["phase"], post);
        assert_eq!(s["next_phase"], r);
        for kept in [
            "phase_iteration",
            "consecutive_clean",
            "review_model",
            "current_task",
        ] {
            assert_eq!(s[kept], before[kept], "{r}: {kept}");
        }
    }
}

#[test]
fn a_post_review_mark_and_the_hook_detection_lead_to_the_same_state() {
    let build = || {
        plan(state("plan-review", json!("post-plan-review"), json!(1)))
            .file("plan-review-1.md", "VERDICT: FAIL\n")
            .file("plan-post-review-1.md", "done\n")
            .reviewer(&Fake::fail())
    };
    let marked = build();
    mark_ok(&marked, &["post-plan-review"]);
    marked.stop();
    let detected = build();
    detected.stop();
    assert_eq!(marked.state_json(), detected.state_json());
}

#[test]
fn a_post_review_mark_is_refused_outside_its_cycle_and_without_the_file() {
    let p = plan(state("plan-review", json!("post-plan-review"), json!(1)))
        .file("plan-review-1.md", "x");
    let err = mark_refused(&p, &["post-plan-review"]);
    assert!(
        err.contains(".taskie/plans/p/plan-post-review-1.md does not exist"),
        "{err}"
    );
    let err = mark_refused(&p, &["post-tasks-review"]);
    assert!(
        err.contains("post-tasks-review records the post-review of a tasks-review"),
        "{err}"
    );
    let p = plan(state("complete-task", json!("code-review"), json!(0)));
    let err = mark_refused(&p, &["post-code-review"]);
    assert!(err.contains("code-review #1 is due"), "{err}");
}

#[test]
fn a_standalone_review_mark_leaves_automation() {
    for r in [
        "plan-review",
        "tasks-review",
        "code-review",
        "all-code-review",
    ] {
        let p = plan(state("next-task", Value::Null, Value::Null));
        let s = mark_ok(&p, &[r]);
        assert_eq!(s["phase"], r);
        assert_eq!(s["next_phase"], Value::Null);
        assert_eq!(s["phase_iteration"], Value::Null);
    }
}

#[test]
fn a_standalone_review_mark_is_refused_while_an_automated_cycle_runs() {
    let p = plan(state("complete-task", json!("code-review"), json!(0)));
    let err = mark_refused(&p, &["code-review"]);
    assert!(err.contains("automated workflow is running"), "{err}");
    assert!(
        err.contains("next_phase code-review, phase_iteration 0"),
        "{err}"
    );
}

#[test]
fn add_task_sets_current_task_only_when_none_is_set() {
    let mut s = state("tasks-review", json!("complete-task"), json!(2));
    s["current_task"] = Value::Null;
    let p = plan(s);
    let s = mark_ok(&p, &["add-task", "--task", "2"]);
    assert_eq!(s["current_task"], 2);
    assert_eq!(s["phase"], "tasks-review");

    let p = plan(state("complete-task", json!("code-review"), json!(1)));
    let before = p.state_bytes();
    let out = p
        .run_taskie(&["mark", "add-task", "--task", "2"])
        .ok()
        .to_owned();
    assert!(out.contains("current_task stays 1"), "{out}");
    assert_eq!(p.state_bytes(), before);
}

#[test]
fn complete_ends_the_plan_and_is_refused_while_something_is_scheduled() {
    let p = plan(state("all-code-review", json!("complete"), json!(2)));
    let s = mark_ok(&p, &["complete"]);
    assert_eq!(s["phase"], "complete");
    assert_eq!(s["next_phase"], Value::Null);
    let p = plan(state("code-review", json!("all-code-review"), json!(0)));
    let err = mark_refused(&p, &["complete"]);
    assert!(err.contains("all-code-review #1 is due"), "{err}");
}

#[test]
fn mark_needs_a_state_json_and_says_to_run_init() {
    let p = Project::new().plan("p").tasks(&[(1, "pending")]);
    let err = p
        .run_taskie(&["mark", "create-tasks"])
        .fails_with(1)
        .to_owned();
    assert!(err.contains("run `taskie init p`"), "{err}");
    assert!(!p.exists("state.json"));
}

#[test]
fn mark_is_refused_while_a_review_holds_the_plan_lock() {
    let p = plan(state("plan-review", json!("create-tasks"), json!(3)));
    let before = p.state_bytes();
    let _held = taskie::store::lock::try_lock(&p.root().join(".taskie/locks"), "p")
        .unwrap()
        .unwrap();
    let err = p
        .run_taskie(&["mark", "create-tasks"])
        .fails_with(1)
        .to_owned();
    // The test holds the lock without announcing a review: a command-like holder.
    assert!(
        err.contains("is busy") && err.contains("another taskie process"),
        "{err}"
    );
    assert_eq!(p.state_bytes(), before);
}

#[test]
fn advance_moves_each_review_kind_to_its_target() {
    for (next, extra, target) in [
        ("plan-review", json!({}), "create-tasks"),
        ("post-plan-review", json!({}), "create-tasks"),
        ("tasks-review", json!({}), "complete-task"),
        ("tasks-review", json!({"tdd": true}), "complete-task-tdd"),
        ("code-review", json!({"current_task": 1}), "complete-task"),
        ("post-all-code-review", json!({}), "complete"),
        ("all-code-review", json!({}), "complete"),
    ] {
        let mut s = state("post-x", json!(next), json!(8));
        for (k, v) in extra.as_object().unwrap() {
            s[k] = v.clone();
        }
        let p = plan(s);
        let out = p.run_taskie(&["advance", "--plan", "p"]).ok().to_owned();
        let review = next.trim_start_matches("post-");
        assert!(out.contains(&format!("past {review}")), "{out}");
        let s = p.state_json();
        assert_eq!(s["phase"], review, "{next}");
        assert_eq!(s["next_phase"], target, "{next}");
        assert_eq!(s["phase_iteration"], 8, "{next}");
        assert_eq!(s["review_failures"], 0, "{next}");
        assert_eq!(s["consecutive_clean"], 0, "{next}");
        assert_eq!(s["extra"], "kept");
    }
}

#[test]
fn advancing_the_last_code_review_starts_the_all_code_review_cycle() {
    let mut s = state("post-code-review", json!("code-review"), json!(8));
    s["current_task"] = json!(2);
    let p = plan(s);
    p.run_taskie(&["advance"]).ok();
    let s = p.state_json();
    assert_eq!(s["next_phase"], "all-code-review");
    assert_eq!(s["phase_iteration"], 0);
    assert_eq!(s["review_model"], "opus");
}

#[test]
fn advance_is_refused_when_no_review_cycle_is_in_progress() {
    for next in [json!("complete-task"), Value::Null, json!("create-tasks")] {
        let p = plan(state("tasks-review", next.clone(), json!(2)));
        let before = p.state_bytes();
        let err = p.run_taskie(&["advance"]).fails_with(1).to_owned();
        assert!(err.contains("no review cycle is in progress"), "{err}");
        assert_eq!(p.state_bytes(), before);
    }
}

#[test]
fn the_commands_of_a_real_hard_stop_resolve_it() {
    let mut s = crate::support::due("plan-review");
    s["max_reviews"] = json!(1);
    let p = Project::new().plan("p").state(s).reviewer(&Fake::fail());
    assert!(p.stop().is_block(), "review 1 fails");
    std::fs::write(p.plan_dir().join("plan-post-review-1.md"), "addressed\n").unwrap();
    let msg = p.stop().message();
    assert!(msg.contains("hard stop"), "{msg}");

    let status = p.taskie_json(&["status", "--json"]);
    assert_eq!(status["cycle"]["status"], "hard-stop");
    assert_eq!(status["hard_stop"]["stop_reason"], "max_reviews_reached");
    assert_eq!(status["reviews"][0]["verdict"], "FAIL");
    let human = p.run_taskie(&["status"]).ok().to_owned();
    assert!(human.contains("HARD STOP"), "{human}");
    assert!(human.contains("taskie advance --plan p"), "{human}");

    let route = p.taskie_json(&["continue-plan", "--json"]);
    assert_eq!(route["action"], "ask-human");

    p.run_taskie(&["state", "set", "--plan", "p", "max_reviews=2"])
        .ok();
    let status = p.taskie_json(&["status", "--json"]);
    assert_eq!(status["cycle"]["status"], "review-due");
    assert_eq!(status["hard_stop"], Value::Null);

    p.run_taskie(&["state", "set", "--plan", "p", "review_failures=0"])
        .ok();
    p.run_taskie(&["advance", "--plan", "p"]).ok();
    let s = p.state_json();
    assert_eq!(s["next_phase"], "create-tasks");
    assert_eq!(s["phase"], "plan-review");
}
