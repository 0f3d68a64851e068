//! SPEC §13: continue-plan, `status`, `resume`, `--dry-run` and the hook answer from one
//! prediction of what the next stop does, so on one plan they tell one story. Each test
//! asks every surface about the same plan and compares.

use crate::support::{Fake, Project, due};
use serde_json::{Value, json};

/// 2026-11-24T10:00:00Z.
const NOW: i64 = 1_795_514_400;

/// What every surface says about one plan. `resume` runs last: it may lift a pause.
struct Story {
    route: Value,
    status: Value,
    dry_run: Value,
    resume: String,
}

impl Story {
    fn of(p: &Project) -> Story {
        let route = p.taskie_json(&["continue-plan", "--json"]);
        let status = p.taskie_json(&["status", "--json"]);
        let dry_run = p.taskie_json(&["hook", "--dry-run", "--json"]);
        let resume = p.run_taskie(&["resume"]).ok().to_string();
        Story {
            route,
            status,
            dry_run,
            resume,
        }
    }

    fn reason(&self) -> &str {
        self.route["reason"].as_str().unwrap()
    }

    fn next_stop(&self) -> &str {
        self.status["next_stop"].as_str().unwrap()
    }

    fn branch(&self) -> &str {
        self.dry_run["branch"].as_str().unwrap()
    }

    /// The text the hook would show (dry run).
    fn answer(&self) -> String {
        self.dry_run["answer"].to_string()
    }

    /// Every surface's words contain `word`, and none contains `never`.
    fn all_say(&self, word: &str, never: &str) {
        for (surface, text) in [
            ("continue-plan", self.reason().to_string()),
            ("status", self.next_stop().to_string()),
            ("resume", self.resume.clone()),
        ] {
            assert!(
                text.contains(word),
                "{surface} does not say {word:?}: {text}"
            );
            assert!(!text.contains(never), "{surface} says {never:?}: {text}");
        }
    }
}

#[test]
fn a_paused_plan_is_paused_on_every_surface_and_no_surface_says_the_review_runs() {
    let mut state = due("plan-review");
    state["paused_until"] = json!("2026-11-24T12:14:00Z");
    state["paused_by"] = json!("claude:opus reached its usage limit");
    let p = Project::new()
        .plan("p")
        .state(state)
        .env("TASKIE_TEST_NOW", &NOW.to_string())
        .env("TZ", "UTC");
    let until = "2026-11-24 12:14 UTC";
    // The hook itself, and `mark`, before `resume` lifts the pause.
    let stop = p.stop();
    assert!(!stop.is_block(), "{}", stop.stdout);
    assert!(stop.message().contains(until), "{}", stop.message());
    assert!(stop.message().contains("taskie resume --plan p"));
    let mark = p.run_taskie(&["mark", "continue-task"]);
    let marked = mark.ok();
    assert!(
        marked.contains(&format!("paused until {until}")) && !marked.contains("Stop now"),
        "{marked}"
    );
    let s = Story::of(&p);
    assert_eq!(s.branch(), "paused", "{:#}", s.dry_run);
    assert_eq!(s.status["cycle"]["status"], "paused", "{:#}", s.status);
    for (surface, text) in [("continue-plan", s.reason()), ("status", s.next_stop())] {
        assert!(
            text.contains("2026-11-24 12:14 UTC"),
            "{surface} does not say until when: {text}"
        );
        assert!(
            !text.contains("the hook runs plan-review #1 when you end your turn"),
            "{surface} promises the review: {text}"
        );
    }
    assert!(
        s.reason().contains("taskie resume --plan p"),
        "{}",
        s.reason()
    );
    assert!(s.resume.contains("was paused until"), "{}", s.resume);
    assert!(p.state_json()["paused_until"].is_null(), "resume lifted it");
}

#[test]
fn after_the_last_review_a_cycle_allows_every_surface_says_the_next_stop_is_a_hard_stop() {
    let mut state = due("plan-review");
    state["max_reviews"] = json!(1);
    let p = Project::new()
        .plan("p")
        .state(state)
        .reviewer(&Fake::fail());
    let block = p.stop();
    assert!(block.is_block());
    assert!(block.reason().contains("the next stop is a hard stop"));
    // The post-review is owed: every surface says what comes after it.
    let s = Story::of(&p);
    assert_eq!(s.branch(), "post-review-pending");
    assert_eq!(s.route["action"], "post-plan-review");
    s.all_say("hard stop", "so review #2 runs");
    assert!(s.answer().contains("hard stop"), "{}", s.answer());
    assert!(s.reason().contains("max_reviews=5"), "{}", s.reason());
    // Written: the next stop is the hard stop, and every surface names the commands.
    std::fs::write(p.plan_dir().join("plan-post-review-1.md"), "Fixed.\n").unwrap();
    let s = Story::of(&p);
    assert_eq!(s.branch(), "hard-stop");
    assert_eq!(s.route["action"], "ask-human");
    assert_eq!(s.status["cycle"]["status"], "hard-stop");
    s.all_say("hard", "the next stop runs the review");
    for text in [s.reason(), s.resume.as_str()] {
        assert!(text.contains("taskie advance --plan p"), "{text}");
    }
    assert_eq!(p.reviewer_calls(), 1, "no surface ran a review");
}

#[test]
fn a_hard_stopped_plan_is_hard_stopped_for_taskie_resume_too() {
    let mut state = due("plan-review");
    state["review_failures"] = json!(3);
    let p = Project::new().plan("p").state(state);
    let s = Story::of(&p);
    assert_eq!(s.branch(), "hard-stop");
    assert_eq!(s.status["cycle"]["status"], "hard-stop", "{:#}", s.status);
    assert!(s.next_stop().contains("a hard stop"), "{}", s.next_stop());
    assert!(s.answer().contains("review_failures=0"), "{}", s.answer());
    let stop = p.stop();
    assert!(stop.message().contains("hard stop"), "{}", stop.message());
    assert!(stop.message().contains("review_failures=0"));
    let mark = p.run_taskie(&["mark", "continue-task"]);
    let marked = mark.ok();
    assert!(
        marked.contains("the next stop is a hard stop") && marked.contains("review_failures=0"),
        "{marked}"
    );
    assert!(s.resume.contains("hard-stopped"), "{}", s.resume);
    assert!(s.resume.contains("review_failures=0"), "{}", s.resume);
    assert!(!s.resume.contains("runs the review"), "{}", s.resume);
    assert_eq!(s.route["action"], "ask-human");
    assert!(s.reason().contains("review_failures=0"), "{}", s.reason());
}

#[test]
fn task_files_missing_are_named_alike_by_validate_mark_continue_plan_and_the_hook() {
    let p = Project::new()
        .plan("p")
        .state(json!({"phase": "create-tasks", "next_phase": "tasks-review", "phase_iteration": 0}))
        .file(
            "tasks.md",
            "| Id | Status |\n|----|--------|\n| 1 | pending |\n| 2 | pending |\n",
        );
    let missing = ".taskie/plans/p/task-1.md";
    let validate = p.run_taskie(&["validate"]);
    assert!(validate.stdout.contains(missing), "{}", validate.stdout);
    let mark = p.run_taskie(&["mark", "create-tasks"]);
    assert!(mark.fails_with(1).contains(missing), "{}", mark.stderr);
    let s = Story::of(&p);
    assert_eq!(s.route["action"], "create-tasks", "{:#}", s.route);
    assert!(s.reason().contains(missing), "{}", s.reason());
    assert_eq!(s.branch(), "precondition-missing");
    assert!(s.answer().contains(missing), "{}", s.answer());
    assert!(s.next_stop().contains(missing), "{}", s.next_stop());
    let stop = p.stop();
    assert!(!stop.is_block());
    assert!(stop.message().contains(missing), "{}", stop.message());
}

#[test]
fn a_bullet_list_tasks_md_is_refused_by_mark_as_validate_and_the_hook_report_it() {
    let p = Project::new()
        .plan("p")
        .state(json!({"phase": "plan-review", "next_phase": "create-tasks", "phase_iteration": 2}))
        .file("tasks.md", "- task 1: parse\n- task 2: rank\n")
        .file("task-1.md", "x\n")
        .file("task-2.md", "x\n");
    let error = "tasks.md contains non-table content";
    let validate = p.run_taskie(&["validate"]);
    assert_eq!(validate.code, Some(1));
    assert!(validate.stdout.contains(error), "{}", validate.stdout);
    let mark = p.run_taskie(&["mark", "create-tasks"]);
    assert!(mark.fails_with(1).contains(error), "{}", mark.stderr);
    assert_eq!(
        p.state_json()["next_phase"],
        "create-tasks",
        "nothing written"
    );
    let route = p.run_taskie(&["continue-plan"]);
    assert!(route.fails_with(1).contains(error), "{}", route.stderr);
    let status = p.taskie_json(&["status", "--json"]);
    assert_eq!(status["errors"], json!([error]), "{status:#}");
    let dry_run = p.taskie_json(&["hook", "--dry-run", "--json"]);
    assert_eq!(dry_run["branch"], "validation-failed", "{dry_run:#}");
    assert!(dry_run["answer"].to_string().contains(error), "{dry_run:#}");
    // `resume` says what the next stop does: it blocks on the error, not "no review is due".
    let resume = p.run_taskie(&["resume"]);
    let resumed = resume.ok();
    assert!(
        resumed.contains(error) && !resumed.contains("no review is due"),
        "{resumed}"
    );
    let stop = p.stop();
    assert!(stop.is_block() && stop.reason().contains(error));
}

#[test]
fn a_plan_without_state_json_routes_to_init_and_status_says_it_is_never_reviewed() {
    let p = Project::new().plan("p");
    let route = p.taskie_json(&["continue-plan", "--json"]);
    assert_eq!(route["command"], "taskie init p", "{route:#}");
    let status = p.taskie_json(&["status", "--json"]);
    assert!(
        status["next_stop"]
            .as_str()
            .unwrap()
            .contains("never reviews"),
        "{status:#}"
    );
    let dry_run = p.taskie_json(&["hook", "--dry-run", "--json"]);
    assert_eq!(dry_run["branch"], "no-review-due", "{dry_run:#}");
    let dry_run = p.run_taskie(&["hook", "--dry-run"]);
    assert!(
        dry_run.ok().contains("`taskie init p`"),
        "{}",
        dry_run.stdout
    );
    for command in [
        &["resume"][..],
        &["mark", "continue-task"],
        &["state", "get"],
    ] {
        let run = p.run_taskie(command);
        let err = run.fails_with(1);
        assert!(err.contains("taskie init p"), "{command:?}: {err}");
    }
    p.stop().assert_silent();
    assert!(!p.exists("state.json"), "no surface wrote a state");
}

#[test]
fn reaching_complete_with_an_unfinished_task_names_it() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "pending")])
        .state(
            json!({"phase": "all-code-review", "next_phase": "complete", "phase_iteration": 2,
                      "consecutive_clean": 2}),
        );
    let route = p.taskie_json(&["continue-plan", "--json"]);
    let reason = route["reason"].as_str().unwrap();
    assert!(
        reason.contains("task 2 (\"pending\")") && reason.contains("passed its review"),
        "{reason}"
    );
    assert_eq!(p.state_json()["phase"], "complete");
    let again = p.taskie_json(&["continue-plan", "--json"]);
    assert!(
        again["reason"].as_str().unwrap().contains("task 2"),
        "{again:#}"
    );
    let status = p.taskie_json(&["status", "--json"]);
    let next_stop = status["next_stop"].as_str().unwrap();
    assert!(
        next_stop.contains("task 2 (\"pending\") as unfinished"),
        "{next_stop}"
    );
    let mark = p.run_taskie(&["mark", "complete"]);
    assert!(mark.ok().contains("task 2"), "{}", mark.stdout);
    p.stop().assert_silent();
}

#[test]
fn a_plan_scheduled_to_complete_names_its_unfinished_task_in_status_before_continue_plan_records_it()
 {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "pending")])
        .state(json!({"phase": "all-code-review", "next_phase": "complete", "phase_iteration": 2}));
    let status = p.taskie_json(&["status", "--json"]);
    let next_stop = status["next_stop"].as_str().unwrap();
    assert!(next_stop.contains("task 2"), "{next_stop}");
    assert_eq!(
        p.state_json()["next_phase"],
        "complete",
        "status wrote nothing"
    );
}

#[test]
fn a_cycle_advanced_by_hand_is_never_called_passed() {
    let p = Project::new().plan("p").tasks(&[(1, "done")]).state(
        json!({"phase": "post-all-code-review", "next_phase": "all-code-review",
                      "phase_iteration": 8, "max_reviews": 8}),
    );
    p.run_taskie(&["advance"]).ok();
    let route = p.taskie_json(&["continue-plan", "--json"]);
    let reason = route["reason"].as_str().unwrap();
    assert!(
        reason.contains("accepted by hand") && !reason.contains("passed its review"),
        "{reason}"
    );
}

#[test]
fn editor_leftovers_in_the_plan_directory_never_block_and_validate_only_notes_them() {
    let p = Project::new()
        .plan("p")
        .state(json!({"phase": "new-plan", "next_phase": null}))
        .file(".plan.md.swp", "swap")
        .file("plan.md~", "backup")
        .file(".DS_Store", "x");
    std::fs::create_dir(p.plan_dir().join(".obsidian")).unwrap();
    std::fs::write(p.plan_dir().join(".obsidian/notes.md"), "x\n").unwrap();
    let validate = p.run_taskie(&["validate"]);
    let out = validate.ok();
    assert!(out.contains("has a valid structure"), "{out}");
    assert!(
        out.contains("note: ignored .DS_Store, .plan.md.swp, plan.md~"),
        "{out}"
    );
    p.stop().assert_silent();
    let route = p.taskie_json(&["continue-plan", "--json"]);
    assert!(!route.to_string().contains("move"), "{route:#}");
    let status = p.taskie_json(&["status", "--json"]);
    assert_eq!(status["errors"], json!([]), "{status:#}");
    let dry_run = p.taskie_json(&["hook", "--dry-run", "--json"]);
    assert_ne!(dry_run["branch"], "validation-failed", "{dry_run:#}");
    p.run_taskie(&["mark", "continue-task"]).ok();
    assert!(
        p.exists(".plan.md.swp"),
        "nothing moved the user's swap file"
    );
}

#[test]
fn a_stray_file_is_refused_naming_the_ledgers_as_allowed() {
    let p = Project::new()
        .plan("p")
        .state(json!({"phase": "new-plan", "next_phase": null}))
        .file("spend.json", "{}\n")
        .file("notes.txt", "x");
    let validate = p.run_taskie(&["validate"]);
    assert_eq!(validate.code, Some(1));
    assert!(
        validate.stdout.contains(
            "notes.txt (only .md files, state.json and the ledgers spend.json and findings.json allowed)"
        ),
        "{}",
        validate.stdout
    );
    assert!(
        !validate.stdout.contains("spend.json ("),
        "{}",
        validate.stdout
    );
}

#[test]
fn state_set_refuses_a_phase_that_is_not_one_and_a_task_tasks_md_does_not_list() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "pending"), (2, "pending")])
        .state(
            json!({"phase": "complete-task", "next_phase": "code-review", "current_task": 1,
                      "phase_iteration": 0}),
        );
    let before = p.state_bytes();
    let err = p.run_taskie(&["state", "set", "phase=bogus"]);
    assert!(
        err.fails_with(1).contains("phase \"bogus\" is not a phase"),
        "{}",
        err.stderr
    );
    let err = p.run_taskie(&["state", "set", "current_task=99"]);
    let text = err.fails_with(1);
    assert!(
        text.contains("current_task 99 is not a task of .taskie/plans/p/tasks.md (it lists 1, 2)"),
        "{text}"
    );
    assert_eq!(p.state_bytes(), before, "an invalid value changes nothing");
    p.run_taskie(&["state", "set", "current_task=2", "phase=continue-task"])
        .ok();
    assert_eq!(p.state_json()["current_task"], 2);
}
