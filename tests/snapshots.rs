//! Snapshots of the texts people read: `taskie status`, `taskie continue-plan`,
//! `taskie-hook --dry-run`, the hook's answers and `taskie mark` refusals. A wording
//! change fails here until its new snapshot is accepted, so it is reviewed as a diff
//! (tests/snapshots/*.snap; docs/architecture.md says how to accept one).
//!
//! Each scenario is reached the way a user reaches it: real binaries, a real temporary
//! project, the fake reviewer. Temporary paths and timestamps are masked.

use crate::support::{Fake, Project, Run, due};
use serde_json::json;

/// Asserts snapshot `name` of `text`, with this project's temporary paths and every
/// timestamp replaced by placeholders.
pub fn check(p: &Project, name: &str, text: &str) {
    let tmp = p.root().parent().unwrap().display().to_string();
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.add_filter(&regex::escape(&p.root().display().to_string()), "[PROJECT]");
    settings.add_filter(&regex::escape(&tmp), "[TMP]");
    settings.add_filter(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", "[TIME]");
    // Reviewer logs are named to the millisecond, then the hook's pid.
    settings.add_filter(r"\d{8}T\d{6}(\d{3})?Z(-\d+)?", "[TIME]");
    // The prompt names the project's absolute path, so its length varies with it.
    settings.add_filter(r"… \(\d+ bytes\)", "… ([N] bytes)");
    // Review time is the reviewer processes' wall time, which the machine decides.
    settings.add_filter(r"\b\d+m \d\ds\b", "[DURATION]");
    settings.add_filter(
        r#""review_seconds": [0-9.e-]+"#,
        r#""review_seconds": [SECONDS]"#,
    );
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// The hook's answer as a person reads it: the kind, then the text.
fn answer(run: &Run) -> String {
    let a = run.answer();
    match (crate::support::block_text(&a), a.get("systemMessage")) {
        (Some(reason), _) => format!("block\n\n{reason}\n"),
        (None, Some(m)) => format!("allow\n\n{}\n", m.as_str().unwrap()),
        (None, None) => "allow silently\n".into(),
    }
}

fn plan_review_due() -> Project {
    Project::new().plan("p").state(due("plan-review"))
}

/// A plan-review cycle with review #1 failed: its post-review is owed.
fn after_one_fail() -> Project {
    let p = plan_review_due().reviewer(&Fake::fail());
    assert!(p.stop().is_block());
    p
}

/// A code-review cycle of task 2: review #1 failed and was addressed, review #2 passed,
/// its post-review is owed.
fn mid_code_review() -> Project {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "in progress"), (3, "pending")])
        .state(
            json!({"phase": "complete-task", "next_phase": "code-review", "phase_iteration": 0,
                      "max_reviews": 8, "current_task": 2, "review_model": "opus",
                      "consecutive_clean": 0, "tdd": false}),
        )
        .reviewer(&Fake::fail());
    assert!(p.stop().is_block());
    std::fs::write(
        p.plan_dir().join("task-2-code-post-review-1.md"),
        "Fixed both.\n",
    )
    .unwrap();
    p.set_reviewer(&Fake::pass());
    assert!(p.stop().is_block());
    p
}

/// A plan-review cycle with max_reviews 2 whose two reviews failed and were addressed:
/// the next stop is a hard stop. `stop` runs it, writing the diagnostics.
fn exhausted(stop: bool) -> (Project, Option<Run>) {
    let p = Project::new()
        .plan("p")
        .state(
            json!({"phase": "new-plan", "next_phase": "plan-review", "phase_iteration": 0,
                      "max_reviews": 2, "review_model": "opus", "consecutive_clean": 0,
                      "current_task": null, "tdd": false}),
        )
        .reviewer(&Fake::fail());
    for n in 1..=2 {
        assert!(p.stop().is_block());
        std::fs::write(
            p.plan_dir().join(format!("plan-post-review-{n}.md")),
            "Addressed.\n",
        )
        .unwrap();
    }
    let run = stop.then(|| p.stop());
    (p, run)
}

// ---- taskie status ----

#[test]
fn status_of_a_fresh_plan() {
    let p = Project::new().plan("p");
    p.run_taskie(&["init", "p"]).ok();
    check(&p, "status_fresh_plan", p.run_taskie(&["status"]).ok());
}

#[test]
fn status_without_state_json() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "pending")]);
    check(&p, "status_no_state", p.run_taskie(&["status"]).ok());
}

#[test]
fn status_in_the_middle_of_a_code_review_cycle() {
    let p = mid_code_review();
    check(&p, "status_mid_code_review", p.run_taskie(&["status"]).ok());
}

#[test]
fn status_after_a_hard_stop_shows_the_diagnostics() {
    let (p, _) = exhausted(true);
    check(&p, "status_hard_stop", p.run_taskie(&["status"]).ok());
    check(
        &p,
        "status_hard_stop_json",
        p.run_taskie(&["status", "--json"]).ok(),
    );
}

#[test]
fn status_after_taskie_advance_says_the_cycle_was_advanced_by_hand() {
    let (p, _) = exhausted(true);
    p.run_taskie(&["advance"]).ok();
    let text = p.run_taskie(&["status"]).ok().to_owned();
    assert!(
        text.contains("advanced by hand") && !text.contains(", passed"),
        "{text}"
    );
    check(&p, "status_advanced_by_hand", &text);
}

/// Hard-stopped at max_reviews, raised by the human, then three reviewer failures: the
/// old stop is history, and the reason of the newest failure is shown.
#[test]
fn status_drops_a_lifted_stop_and_shows_why_the_reviewer_failed() {
    let (p, _) = exhausted(true);
    p.run_taskie(&["state", "set", "max_reviews=6"]).ok();
    p.set_reviewer(&Fake::pass().file(None).exit(3));
    for _ in 0..3 {
        assert!(!p.stop().is_block());
    }
    let text = p.run_taskie(&["status"]).ok().to_owned();
    assert!(!text.contains("max_reviews_reached"), "{text}");
    assert!(text.contains("last attempt:"), "{text}");
    check(&p, "status_reviewer_failures", &text);
    let json: serde_json::Value =
        serde_json::from_str(p.run_taskie(&["status", "--json"]).ok()).unwrap();
    assert_eq!(
        json["hard_stop"]["stop_reason"], "reviewer_failures_exhausted",
        "{json}"
    );
    assert!(json["last_failure"].is_string(), "{json}");
}

#[test]
fn status_of_a_plan_with_structure_errors() {
    let p = plan_review_due()
        .file("notes.md", "x\n")
        .file("plan-post-review-1.md", "x\n");
    check(
        &p,
        "status_structure_errors",
        p.run_taskie(&["status"]).ok(),
    );
}

// ---- taskie continue-plan ----

#[test]
fn continue_plan_routes() {
    let empty = Project::new();
    std::fs::create_dir_all(empty.root().join(".taskie/plans")).unwrap();
    check(
        &empty,
        "continue_plan_no_plan",
        empty.run_taskie(&["continue-plan"]).ok(),
    );

    let p = plan_review_due();
    check(
        &p,
        "continue_plan_review_due",
        p.run_taskie(&["continue-plan"]).ok(),
    );

    let p = after_one_fail();
    check(
        &p,
        "continue_plan_post_review_owed",
        p.run_taskie(&["continue-plan"]).ok(),
    );
    check(
        &p,
        "continue_plan_post_review_owed_json",
        p.run_taskie(&["continue-plan", "--json"]).ok(),
    );
    std::fs::write(p.plan_dir().join("plan-post-review-1.md"), "Done.\n").unwrap();
    check(
        &p,
        "continue_plan_stop_for_the_next_review",
        p.run_taskie(&["continue-plan"]).ok(),
    );

    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "pending"), (3, "pending")])
        .state(
            json!({"phase": "tasks-review", "next_phase": "complete-task", "phase_iteration": 2}),
        );
    check(
        &p,
        "continue_plan_complete_task",
        p.run_taskie(&["continue-plan"]).ok(),
    );

    let (p, _) = exhausted(false);
    check(
        &p,
        "continue_plan_hard_stop",
        p.run_taskie(&["continue-plan"]).ok(),
    );

    let p = Project::new()
        .plan("p")
        .state(json!({"phase": "plan-review", "next_phase": "lunch"}));
    check(
        &p,
        "continue_plan_unknown_next_phase",
        p.run_taskie(&["continue-plan"]).ok(),
    );
}

// ---- taskie-hook --dry-run ----

fn dry_run(p: &Project, json: bool) -> String {
    let mut cmd = p.hook_command();
    cmd.arg("--dry-run").arg("--cwd").arg(p.root());
    if json {
        cmd.arg("--json");
    }
    let run = Run::from(cmd.output().unwrap());
    run.ok().to_owned()
}

#[test]
fn dry_run_reports() {
    let p = plan_review_due();
    check(&p, "dry_run_review_due", &dry_run(&p, false));
    let v: serde_json::Value = serde_json::from_str(&dry_run(&p, true)).unwrap();
    check(
        &p,
        "dry_run_review_due_json",
        &serde_json::to_string_pretty(&v).unwrap(),
    );
    let p = after_one_fail();
    check(&p, "dry_run_post_review_owed", &dry_run(&p, false));
    let (p, _) = exhausted(false);
    check(&p, "dry_run_hard_stop", &dry_run(&p, false));
}

// ---- the hook's answers ----

#[test]
fn hook_answers() {
    let p = plan_review_due().reviewer(&Fake::fail());
    check(&p, "hook_block_after_fail", &answer(&p.stop()));
    check(&p, "hook_post_review_owed", &answer(&p.stop()));

    let (p, stop) = exhausted(true);
    check(&p, "hook_hard_stop", &answer(&stop.unwrap()));

    let p = plan_review_due().reviewer(&Fake::fail().exit(3));
    check(&p, "hook_reviewer_failed", &answer(&p.stop()));

    let p = plan_review_due()
        .file("notes.md", "x\n")
        .file("plan-post-review-1.md", "x\n");
    check(&p, "hook_structure_errors", &answer(&p.stop()));
    check(
        &p,
        "hook_structure_errors_active",
        &answer(&p.stop_active()),
    );

    let p = plan_review_due().reviewer(&Fake::pass());
    p.stop();
    std::fs::write(p.plan_dir().join("plan-post-review-1.md"), "Done.\n").unwrap();
    check(&p, "hook_cycle_passed", &answer(&p.stop()));
}

/// Another process holds the plan while its review has run for 75 seconds: the busy
/// answer says how long, not when it started.
#[test]
fn hook_busy_says_how_long_the_review_has_run() {
    use taskie::store::lock;
    let p = plan_review_due();
    let held = lock::try_lock(&p.root().join(".taskie/locks"), "p")
        .unwrap()
        .expect("free");
    let since = (taskie::clock::now() - jiff::SignedDuration::from_secs(75))
        .strftime(taskie::clock::STAMP)
        .to_string();
    held.announce(&lock::Running {
        review: "plan-review".into(),
        iteration: 1,
        model: "claude:opus".into(),
        since,
        log: ".taskie/logs/p-review.log".into(),
    });
    let text = answer(&p.stop());
    assert!(text.contains("is running for 1m 1"), "{text}");
    assert!(!text.contains(" since "), "{text}");
    check(&p, "hook_busy", &text);
}

// ---- taskie mark refusals ----

#[test]
fn mark_refusals() {
    let p = after_one_fail();
    let refused = |args: &[&str]| p.run_taskie(args).fails_with(1).to_owned();
    check(
        &p,
        "mark_create_tasks_while_post_review_owed",
        &refused(&["mark", "create-tasks"]),
    );
    check(
        &p,
        "mark_next_task_during_automation",
        &refused(&["mark", "next-task", "--task", "1"]),
    );
    check(
        &p,
        "mark_post_review_without_its_file",
        &refused(&["mark", "post-plan-review"]),
    );
    check(
        &p,
        "mark_post_review_of_another_cycle",
        &refused(&["mark", "post-code-review"]),
    );
    check(
        &p,
        "mark_complete_task_without_task",
        p.run_taskie(&["mark", "complete-task"]).fails_with(2),
    );
    check(
        &p,
        "mark_unknown_phase",
        p.run_taskie(&["mark", "new-plan"]).fails_with(2),
    );
}
