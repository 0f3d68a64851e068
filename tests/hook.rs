//! SPEC §5, step by step, against the real `taskie-hook` binary.

use crate::support::{Fake, Project, due};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime};

fn set_mtime(path: &std::path::Path, secs_ago: u64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

// Step 1: recursion guard.

#[test]
fn skip_variable_exits_silently_without_reviewing() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .env("TASKIE_HOOK_SKIP", "1");
    let before = p.snapshot();
    p.stop().assert_silent();
    assert_eq!(p.reviewer_calls(), 0);
    assert_eq!(p.snapshot(), before, "nothing written");
}

#[test]
fn skip_values_empty_zero_and_false_do_not_skip() {
    for v in ["", "0", "false"] {
        let p = Project::new()
            .plan("p")
            .state(due("plan-review"))
            .env("TASKIE_HOOK_SKIP", v);
        assert!(p.stop().is_block(), "TASKIE_HOOK_SKIP={v:?} must not skip");
        assert_eq!(p.reviewer_calls(), 1);
    }
}

// Step 2: input.

#[test]
fn empty_or_malformed_input_allows_with_a_message_naming_the_problem() {
    let p = Project::new().plan("p").state(due("plan-review"));
    for (input, says) in [
        ("", "no input"),
        ("{not json", "not JSON"),
        ("[1,2]", "not a JSON object"),
        ("\"s\"", "not a JSON object"),
    ] {
        let run: crate::support::Run = p.hook_command().write_stdin(input).output().unwrap().into();
        assert!(run.message().contains(says), "{input:?}: {}", run.stdout);
    }
    assert_eq!(p.reviewer_calls(), 0);
}

#[test]
fn the_event_is_read_even_when_the_client_never_closes_stdin() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let p = Project::new().plan("p").state(due("plan-review"));
    let mut hook = p
        .hook_process()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The event, and then nothing: the pipe stays open until the test ends.
    let mut stdin = hook.stdin.take().unwrap();
    let event = json!({"hook_event_name": "Stop", "cwd": p.root()}).to_string();
    stdin.write_all(event.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let mut stdout = hook.stdout.take().unwrap();
    let answer = std::thread::spawn(move || {
        let mut out = String::new();
        stdout.read_to_string(&mut out).map(|_| out)
    });
    // Only a hook that waited for the end of input would still run after this long (the
    // review itself is a fake's: a few milliseconds); it is then ended, and the test fails.
    let limit = std::time::Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = hook.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() > limit {
            hook.kill().unwrap();
            hook.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        status.is_some_and(|s| s.success()),
        "the hook waited for stdin to close"
    );
    drop(stdin);
    let answer: Value = serde_json::from_str(&answer.join().unwrap().unwrap()).unwrap();
    assert!(crate::support::block_text(&answer).is_some(), "{answer}");
    assert_eq!(p.reviewer_calls(), 1);
}

// Step 3.

#[test]
fn subagent_stop_is_allowed_silently_and_runs_nothing() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let before = p.snapshot();
    p.run_hook(json!({"hook_event_name": "SubagentStop"}))
        .assert_silent();
    assert_eq!(p.reviewer_calls(), 0);
    assert_eq!(p.snapshot(), before);
}

// Step 4.

#[test]
fn missing_project_directory_allows_with_a_message() {
    let p = Project::new();
    let run = p.run_hook(json!({"cwd": "/nonexistent/taskie-project"}));
    assert!(run.message().contains("/nonexistent/taskie-project"));
}

#[test]
fn without_cwd_the_project_comes_from_claude_project_dir() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let mut cmd = p.hook_command();
    cmd.env("CLAUDE_PROJECT_DIR", p.root()).current_dir("/");
    let run: crate::support::Run = cmd.write_stdin("{}").output().unwrap().into();
    assert!(run.is_block(), "{}", run.stdout);
    assert_eq!(p.reviewer_calls(), 1);
}

#[test]
fn without_cwd_or_variable_the_working_directory_is_the_project() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let mut cmd = p.hook_command();
    cmd.current_dir(p.root());
    let run: crate::support::Run = cmd.write_stdin("{}").output().unwrap().into();
    assert!(run.is_block(), "{}", run.stdout);
}

// Step 5.

#[test]
fn project_without_taskie_is_silent_and_creates_nothing() {
    let p = Project::new();
    p.stop().assert_silent();
    assert!(!p.root().join(".taskie").exists());
}

// Step 6: plan selection.

#[test]
fn the_plan_with_the_newest_file_is_selected() {
    let p = Project::new()
        .plan("old")
        .state(due("plan-review"))
        .plan("new")
        .state(json!({"phase": "x"}));
    set_mtime(&p.root().join(".taskie/plans/old/plan.md"), 100);
    set_mtime(&p.root().join(".taskie/plans/old/state.json"), 100);
    set_mtime(&p.root().join(".taskie/plans/new/plan.md"), 50);
    set_mtime(&p.root().join(".taskie/plans/new/state.json"), 50);
    p.stop().assert_silent();
    assert_eq!(p.last_event()["plan"], "new");
    set_mtime(&p.root().join(".taskie/plans/old/plan.md"), 10);
    assert!(
        p.stop().is_block(),
        "old is newest now and has a review due"
    );
    assert_eq!(p.last_event()["plan"], "old");
}

#[test]
fn ties_go_to_the_greatest_name() {
    let p = Project::new()
        .plan("a")
        .state(json!({}))
        .plan("b")
        .state(json!({}));
    for plan in ["a", "b"] {
        for f in ["plan.md", "state.json"] {
            let f = std::fs::File::options()
                .write(true)
                .open(p.root().join(".taskie/plans").join(plan).join(f))
                .unwrap();
            f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000))
                .unwrap();
        }
    }
    p.stop().assert_silent();
    assert_eq!(p.last_event()["plan"], "b");
}

#[test]
fn taskie_plan_selects_explicitly() {
    let p = Project::new()
        .plan("chosen")
        .state(due("plan-review"))
        .plan("newer")
        .state(json!({}));
    set_mtime(&p.root().join(".taskie/plans/chosen/plan.md"), 100);
    set_mtime(&p.root().join(".taskie/plans/chosen/state.json"), 100);
    let p = p.env("TASKIE_PLAN", "chosen");
    assert!(p.stop().is_block());
    assert_eq!(p.last_event()["plan"], "chosen");
}

#[test]
fn an_explicit_plan_that_does_not_exist_or_is_invalid_is_reported() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .env("TASKIE_PLAN", "ghost");
    assert!(p.stop().message().contains("ghost"));
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .env("TASKIE_PLAN", "../p");
    assert!(p.stop().message().contains("not valid"));
    assert_eq!(p.reviewer_calls(), 0);
}

#[test]
fn directories_with_invalid_names_are_skipped_with_one_stderr_line_each() {
    let p = Project::new().plan("p").state(json!({}));
    std::fs::create_dir_all(p.root().join(".taskie/plans/bad name")).unwrap();
    std::fs::write(p.root().join(".taskie/plans/bad name/plan.md"), "x").unwrap();
    let run = p.stop();
    run.assert_silent();
    assert_eq!(run.stderr.matches("bad name").count(), 1, "{}", run.stderr);
    assert_eq!(p.last_event()["plan"], "p");
}

#[test]
fn no_candidate_plan_is_silent() {
    let p = Project::new();
    std::fs::create_dir_all(p.root().join(".taskie/plans/empty")).unwrap();
    p.stop().assert_silent();
    assert!(!p.logs().exists(), "no plan selected, nothing logged");
}

// Step 7: lock.

#[test]
fn a_held_lock_allows_with_an_already_running_message() {
    let p = Project::new().plan("p").state(due("plan-review"));
    // Held by this test process, as another taskie process would hold it.
    let _lock = taskie::store::lock::try_lock(&p.root().join(".taskie/locks"), "p")
        .unwrap()
        .expect("free");
    let before = p.state_bytes();
    let msg = p.stop().message();
    // Held without an announced review: the message does not claim one runs.
    assert!(
        msg.contains("is busy") && msg.contains("another taskie process"),
        "{msg}"
    );
    assert_eq!(p.reviewer_calls(), 0);
    assert_eq!(p.state_bytes(), before);
    assert_eq!(p.last_event()["path"], "locked");
}

#[test]
fn leftover_temp_files_are_deleted_under_the_lock() {
    let p = Project::new()
        .plan("p")
        .state(json!({}))
        .file(".taskie-tmp-abc123", "half");
    p.stop().assert_silent();
    assert!(!p.exists(".taskie-tmp-abc123"));
}

// Step 8: structure.

#[test]
fn an_invalid_plan_blocks_with_every_error_and_the_fix() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .file("notes.txt", "x")
        .file("draft.md", "x");
    let reason = p.stop().reason();
    assert!(
        reason.starts_with(
            "Plan 'p': Invalid filename: draft.md; Invalid file in plan directory: notes.txt"
        ),
        "{reason}"
    );
    assert!(reason.contains("taskie validate --plan p"), "{reason}");
    assert_eq!(
        p.reviewer_calls(),
        0,
        "nothing else happens while the plan is invalid"
    );
    assert_eq!(p.last_event()["path"], "validation-failed");
}

#[test]
fn an_invalid_plan_only_warns_while_stop_hook_active() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .file("notes.txt", "x");
    let msg = p.stop_active().message();
    assert!(
        msg.starts_with("Plan 'p': Invalid file in plan directory: notes.txt"),
        "{msg}"
    );
    assert_eq!(p.reviewer_calls(), 0);
}

#[test]
fn the_third_code_review_case_stays_valid() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "pending")])
        .file("task-1-code-review-1.md", "VERDICT: FAIL\n")
        .file("task-1-code-post-review-1.md", "fixed\n")
        .file("task-1-code-review-2.md", "VERDICT: FAIL\n")
        .file("task-1-code-post-review-2.md", "fixed\n")
        .state(json!({"phase": "code-review", "next_phase": "post-code-review", "phase_iteration": 2,
                      "current_task": 1, "review_model": "opus", "consecutive_clean": 0, "max_reviews": 8}));
    let reason = p.stop().reason();
    assert!(reason.contains("task-1-code-review-3.md"), "{reason}");
    assert_eq!(p.state_json()["phase_iteration"], 3);
}

// Step 9: state.

#[test]
fn a_plan_without_state_is_silent() {
    let p = Project::new().plan("p");
    p.stop().assert_silent();
    assert!(!p.exists("state.json"));
}

#[test]
fn broken_state_json_allows_with_a_message_and_is_left_byte_identical() {
    for (text, says) in [
        ("{\"phase\": ", "not valid JSON"),
        ("[]", "must hold a JSON object"),
        (
            "{\"next_phase\":\"plan-review\",\"max_reviews\":\"lots\"}",
            "\"max_reviews\" is \"lots\"",
        ),
        (
            "{\"next_phase\":\"plan-review\",\"max_reviews\":-1}",
            "taskie state set max_reviews=8",
        ),
        (
            "{\"next_phase\":\"plan-review\",\"tdd\":\"yes\"}",
            "\"tdd\" is \"yes\", expected true or false",
        ),
        (
            "{\"next_phase\":\"plan-review\",\"current_task\":\"x\"}",
            "current_task",
        ),
    ] {
        let p = Project::new().plan("p").file("state.json", text);
        let msg = p.stop().message();
        assert!(msg.contains(says), "{text}: {msg}");
        assert!(
            msg.contains(".taskie/plans/p/state.json"),
            "names the file: {msg}"
        );
        assert_eq!(p.read("state.json"), text, "byte-identical");
        assert_eq!(p.reviewer_calls(), 0);
        assert_eq!(p.last_event()["path"], "state-error");
    }
}

#[test]
fn unknown_fields_and_key_order_survive_a_write_and_numbers_become_canonical() {
    let text = r#"{"zeta":{"nested":[1,2]},"next_phase":"plan-review","phase":"new-plan","max_reviews":"8","phase_iteration":"0","alpha":true}"#;
    let p = Project::new()
        .plan("p")
        .file("state.json", text)
        .reviewer(&Fake::fail());
    assert!(p.stop().is_block());
    let written = p.read("state.json");
    let v: serde_json::Map<String, Value> = serde_json::from_str(&written).unwrap();
    let keys: Vec<&str> = v.keys().map(String::as_str).collect();
    assert_eq!(
        &keys[..6],
        [
            "zeta",
            "next_phase",
            "phase",
            "max_reviews",
            "phase_iteration",
            "alpha"
        ]
    );
    assert_eq!(v["zeta"], json!({"nested": [1, 2]}));
    assert_eq!(v["max_reviews"], json!(8), "numbers are written as numbers");
    assert!(
        written.ends_with("}\n") && written.contains("\n  \"zeta\""),
        "pretty with trailing newline"
    );
}

// Step 10: post-review detection.

fn after_failed(review: &str, post: &str, n: u64) -> Value {
    json!({"phase": review, "next_phase": post, "phase_iteration": n, "max_reviews": 8,
           "review_model": "sonnet", "consecutive_clean": 0, "current_task": null, "tdd": false})
}

#[test]
fn a_written_post_review_starts_the_next_review() {
    let p = Project::new()
        .plan("p")
        .file("plan-review-1.md", "VERDICT: FAIL\n")
        .file("plan-post-review-1.md", "done\n")
        .state(after_failed("plan-review", "post-plan-review", 1));
    let reason = p.stop_active().reason();
    assert!(reason.contains("plan-review #2"), "{reason}");
    assert!(p.exists("plan-review-2.md"));
    let s = p.state_json();
    assert_eq!(
        (
            s["phase"].as_str(),
            s["next_phase"].as_str(),
            s["phase_iteration"].as_u64()
        ),
        (Some("plan-review"), Some("post-plan-review"), Some(2))
    );
    assert_eq!(p.last_event()["phase_before"], "plan-review");
}

#[test]
fn a_missing_post_review_reminds_which_file_is_owed() {
    let p = Project::new()
        .plan("p")
        .file("plan-review-1.md", "VERDICT: FAIL\n")
        .state(after_failed("plan-review", "post-plan-review", 1));
    let before = p.state_bytes();
    let msg = p.stop().message();
    assert!(
        msg.contains(".taskie/plans/p/plan-post-review-1.md")
            && msg.contains("/taskie:post-plan-review"),
        "{msg}"
    );
    assert_eq!(p.state_bytes(), before);
    assert_eq!(p.reviewer_calls(), 0);
    assert_eq!(p.last_event()["path"], "post-review-pending");
}

#[test]
fn a_post_review_recorded_with_mark_leads_to_the_same_review() {
    // `taskie mark post-plan-review` writes phase post-R / next_phase R.
    let p = Project::new()
        .plan("p")
        .file("plan-review-1.md", "VERDICT: FAIL\n")
        .file("plan-post-review-1.md", "done\n")
        .state(
            json!({"phase": "post-plan-review", "next_phase": "plan-review", "phase_iteration": 1,
                      "review_model": "sonnet", "consecutive_clean": 0, "max_reviews": 8}),
        );
    assert!(p.stop().reason().contains("plan-review #2"));
    assert_eq!(p.reviewer_args()[2], "sonnet");
}

// Step 11.

#[test]
fn no_review_due_is_silent_and_writes_no_state() {
    for next in [
        json!(null),
        json!("create-tasks"),
        json!("complete-task"),
        json!("post-code-review"),
    ] {
        let p = Project::new()
            .plan("p")
            .state(json!({"phase": "x", "next_phase": next}));
        let before = p.state_bytes();
        p.stop().assert_silent();
        assert_eq!(p.state_bytes(), before);
        assert_eq!(p.last_event()["path"], "no-review-due");
    }
}

#[test]
fn an_unknown_next_phase_lists_the_valid_names() {
    let p = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-reveiw"}));
    let msg = p.stop().message();
    assert!(
        msg.contains("plan-reveiw")
            && msg.contains("all-code-review")
            && msg.contains("taskie state set --plan p next_phase="),
        "{msg}"
    );
}

// Step 13.

#[test]
fn disabled_reviews_advance_without_running_a_reviewer() {
    let p = Project::new().plan("p").state(
        json!({"phase": "new-plan", "next_phase": "plan-review", "max_reviews": 0,
        "phase_iteration": 3, "consecutive_clean": 1, "review_failures": 2}),
    );
    let msg = p.stop().message();
    assert_eq!(
        msg,
        "Reviews are disabled (max_reviews=0): advanced to create-tasks. Run /taskie:continue-plan."
    );
    assert_eq!(p.reviewer_calls(), 0);
    let s = p.state_json();
    assert_eq!(
        (
            &s["phase"],
            &s["next_phase"],
            &s["phase_iteration"],
            &s["consecutive_clean"],
            &s["review_failures"]
        ),
        (
            &json!("plan-review"),
            &json!("create-tasks"),
            &json!(0),
            &json!(0),
            &json!(0)
        )
    );
    assert_eq!(p.last_event()["path"], "reviews-disabled");
}

// Step 14: hard stops.

#[test]
fn max_reviews_reached_is_a_hard_stop_with_diagnostics_and_unchanged_state() {
    let p = Project::new()
        .plan("p")
        .file("plan-review-1.md", "# R\n\n## Issues\n\n- first\n\nVERDICT: FAIL\n")
        .file("plan-post-review-1.md", "x\n")
        .file("plan-review-2.md", "# R\n\n## Issues\n\n- The plan has no rollback section\n\nVERDICT: FAIL\n")
        .file("plan-post-review-2.md", "x\n")
        .state(json!({"phase": "post-plan-review", "next_phase": "plan-review", "phase_iteration": 2, "max_reviews": 2}));
    let before = p.state_bytes();
    let msg = p.stop().message();
    assert!(
        msg.contains("hard stop") && msg.contains("plan-review-2.md"),
        "{msg}"
    );
    assert!(
        msg.contains("The plan has no rollback section"),
        "lists the last findings: {msg}"
    );
    assert!(
        msg.contains("taskie state set --plan p max_reviews=6")
            && msg.contains("taskie advance --plan p"),
        "{msg}"
    );
    assert_eq!(p.state_bytes(), before);
    assert_eq!(p.reviewer_calls(), 0);
    let diag: Value = serde_json::from_str(
        &std::fs::read_to_string(p.logs().join("p-diagnostics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(diag["stop_reason"], "max_reviews_reached");
    assert_eq!(diag["review"], "plan-review");
    assert_eq!(diag["iterations"], 2);
    assert_eq!(
        diag["findings"],
        json!(["The plan has no rollback section"])
    );
    assert!(
        diag["suggested_actions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["command"].is_string() && a["description"].is_string())
    );
    assert_eq!(p.last_event()["path"], "hard-stop");
}

/// A plan whose two allowed plan reviews both failed, each answered by a post-review:
/// its next stop is the hard stop.
fn two_failed_plan_reviews() -> Project {
    let p = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-review", "max_reviews": 2}))
        .reviewer(&Fake::fail());
    assert!(p.stop().is_block());
    let p = p.file("plan-post-review-1.md", "addressed\n");
    assert!(p.stop_active().reason().contains("plan-review #2"));
    p.file("plan-post-review-2.md", "addressed\n")
}

#[test]
fn hard_stop_diagnostics_carry_the_verdict_history_of_the_cycle() {
    let p = two_failed_plan_reviews();
    let msg = p.stop_active().message();
    assert!(msg.contains("Verdicts: #1 FAIL, #2 FAIL."), "{msg}");
    assert!(
        msg.contains("The error message does not name the file"),
        "{msg}"
    );
    let diag: Value = serde_json::from_str(
        &std::fs::read_to_string(p.logs().join("p-diagnostics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        diag["verdicts"],
        json!([{"iteration": 1, "verdict": "FAIL"}, {"iteration": 2, "verdict": "FAIL"}])
    );
    assert_eq!(diag["last_review"], ".taskie/plans/p/plan-review-2.md");
    assert_eq!(p.reviewer_calls(), 2);
}

/// The verdicts of a hard stop come from the plan's ledger, not from the event log: a
/// stop reads no log (it would cost O(log size) at every stop of a stopped plan), and a
/// forged or stale log line cannot change what the stop reports.
#[test]
fn hard_stop_verdicts_come_from_the_ledger_not_the_event_log() {
    let p = two_failed_plan_reviews();
    let forged = json!({"ts": "2026-01-01T00:00:00.000Z", "plan": "p", "path": "review-blocked",
        "review": "plan-review", "iteration": 2, "verdict": "PASS"});
    let mut log = std::fs::read_to_string(p.logs().join("events.jsonl")).unwrap();
    log.push_str(&format!("{forged}\n"));
    std::fs::write(p.logs().join("events.jsonl"), log).unwrap();
    let msg = p.stop_active().message();
    assert!(msg.contains("Verdicts: #1 FAIL, #2 FAIL."), "{msg}");
    // Without a ledger (a plan an older taskie ran), the end of the log is read.
    std::fs::remove_file(p.plan_dir().join("spend.json")).unwrap();
    let msg = p.stop_active().message();
    assert!(msg.contains("Verdicts: #1 FAIL, #2 PASS."), "{msg}");
}

#[test]
fn three_reviewer_failures_in_a_row_become_a_hard_stop() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail().exit(3));
    for attempt in 1..=3 {
        let msg = p.stop().message();
        assert!(msg.contains("exited with status 3"), "{msg}");
        if attempt < 3 {
            assert!(msg.contains("retried at the next stop"), "{msg}");
        } else {
            assert!(
                msg.contains("hard-stopped")
                    && msg.contains("taskie state set --plan p review_failures=0"),
                "{msg}"
            );
        }
        assert_eq!(p.state_json()["review_failures"], attempt);
    }
    let before = p.state_bytes();
    let msg = p.stop().message();
    assert!(
        msg.contains("failed 3 times in a row") && msg.contains("review_failures=0"),
        "{msg}"
    );
    assert_eq!(p.reviewer_calls(), 3, "no fourth attempt");
    assert_eq!(p.state_bytes(), before);
    let diag: Value = serde_json::from_str(
        &std::fs::read_to_string(p.logs().join("p-diagnostics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(diag["stop_reason"], "reviewer_failures_exhausted");
}

// Step 15: preconditions.

#[test]
fn a_code_review_without_its_task_file_is_a_missing_precondition() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "pending")])
        .state(json!({"phase": "complete-task", "next_phase": "code-review", "phase_iteration": 0, "current_task": 2}));
    let before = p.state_bytes();
    let msg = p.stop().message();
    assert!(msg.contains("task-2.md"), "{msg}");
    assert_eq!(p.state_bytes(), before);
    assert_eq!(p.reviewer_calls(), 0);
    assert_eq!(p.last_event()["path"], "precondition-missing");
}

#[test]
fn a_code_review_without_current_task_is_a_missing_precondition() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "pending")])
        .state(json!({"next_phase": "code-review"}));
    assert!(p.stop().message().contains("current_task"));
    assert_eq!(p.reviewer_calls(), 0);
}

#[test]
fn tasks_and_all_code_reviews_need_a_listed_task_with_its_file() {
    for review in ["tasks-review", "all-code-review"] {
        let p = Project::new()
            .plan("p")
            .file("tasks.md", "| Id | Status |\n|---|---|\n| 1 | pending |\n")
            .state(json!({"next_phase": review}));
        let msg = p.stop().message();
        assert!(
            msg.contains("tasks.md") && msg.contains("cannot run"),
            "{review}: {msg}"
        );
        assert_eq!(p.reviewer_calls(), 0);
    }
}

// Step 17 and §6.

#[test]
fn blocks_after_a_failing_review_with_everything_the_agent_needs() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail());
    let reason = p.stop().reason();
    for needle in [
        "Verdict: FAIL",
        ".taskie/plans/p/plan-review-1.md",
        "independent reviewer",
        "/taskie:post-plan-review",
        ".taskie/plans/p/plan-post-review-1.md",
        "Do not edit state.json",
        "stop",
    ] {
        assert!(reason.contains(needle), "missing {needle:?}: {reason}");
    }
    let s = p.state_json();
    assert_eq!(
        (&s["phase"], &s["next_phase"], &s["phase_iteration"]),
        (&json!("plan-review"), &json!("post-plan-review"), &json!(1))
    );
    assert_eq!(
        (&s["review_model"], &s["consecutive_clean"]),
        (&json!("sonnet"), &json!(0))
    );
    let e = p.last_event();
    assert_eq!(
        (&e["outcome"], &e["path"], &e["verdict"], &e["model"]),
        (
            &json!("block"),
            &json!("review-blocked"),
            &json!("FAIL"),
            &json!("opus")
        )
    );
}

#[test]
fn one_pass_is_not_enough_and_still_asks_for_a_post_review() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let reason = p.stop().reason();
    assert!(reason.contains("Verdict: PASS (1 of 2"), "{reason}");
    assert_eq!(p.state_json()["consecutive_clean"], 1);
    assert_eq!(p.state_json()["next_phase"], "post-plan-review");
}

#[test]
fn a_fail_resets_the_clean_streak() {
    let p = Project::new()
        .plan("p")
        .file("plan-review-1.md", "VERDICT: PASS\n")
        .file("plan-post-review-1.md", "x\n")
        .state(json!({"phase": "plan-review", "next_phase": "post-plan-review", "phase_iteration": 1, "consecutive_clean": 1, "review_model": "sonnet"}))
        .reviewer(&Fake::fail());
    assert!(p.stop().is_block());
    assert_eq!(p.state_json()["consecutive_clean"], 0);
    assert_eq!(p.state_json()["review_model"], "opus");
}

fn second_pass(review: &str, extra: Value) -> Project {
    let post = format!("post-{review}");
    let mut state = json!({"phase": review, "next_phase": post, "phase_iteration": 1, "consecutive_clean": 1,
                           "review_model": "sonnet", "max_reviews": 8, "current_task": null, "tdd": false});
    for (k, v) in extra.as_object().unwrap() {
        state[k] = v.clone();
    }
    let task = state["current_task"].as_u64();
    let (r1, p1) = match review {
        "plan-review" => (
            "plan-review-1.md".to_string(),
            "plan-post-review-1.md".to_string(),
        ),
        "tasks-review" => ("tasks-review-1.md".into(), "tasks-post-review-1.md".into()),
        "code-review" => (
            format!("task-{}-code-review-1.md", task.unwrap()),
            format!("task-{}-code-post-review-1.md", task.unwrap()),
        ),
        _ => (
            "all-code-review-1.md".into(),
            "all-code-post-review-1.md".into(),
        ),
    };
    Project::new()
        .plan("p")
        .file(&r1, "VERDICT: PASS\n")
        .file(&p1, "nothing to do\n")
        .state(state)
}

#[test]
fn two_passes_in_a_row_advance_plan_review_to_create_tasks() {
    let p = second_pass("plan-review", json!({}));
    let msg = p.stop_active().message();
    assert_eq!(
        msg,
        "plan-review passed (2 clean reviews in a row). Next: create-tasks. Run /taskie:continue-plan."
    );
    let s = p.state_json();
    assert_eq!(
        (&s["phase"], &s["next_phase"], &s["phase_iteration"]),
        (&json!("plan-review"), &json!("create-tasks"), &json!(2))
    );
    assert_eq!(p.last_event()["path"], "advanced");
}

#[test]
fn tasks_review_advances_to_complete_task_or_its_tdd_variant() {
    for (tdd, target) in [(false, "complete-task"), (true, "complete-task-tdd")] {
        let p = second_pass("tasks-review", json!({"tdd": tdd}));
        let p = p.tasks(&[(1, "pending")]);
        assert!(p.stop().message().contains(&format!("Next: {target}.")));
        assert_eq!(p.state_json()["next_phase"], target);
    }
}

#[test]
fn code_review_advances_to_the_next_task_while_another_is_unfinished() {
    let p = second_pass("code-review", json!({"current_task": 1}))
        .tasks(&[(1, "in progress"), (2, "pending")]);
    assert!(p.stop().message().contains("Next: complete-task."));
    let s = p.state_json();
    assert_eq!(
        (
            &s["next_phase"],
            &s["phase_iteration"],
            &s["consecutive_clean"]
        ),
        (&json!("complete-task"), &json!(2), &json!(2))
    );
}

#[test]
fn code_review_of_the_last_task_starts_the_all_code_review_cycle() {
    let p = second_pass(
        "code-review",
        json!({"current_task": 2, "review_model": "opus"}),
    )
    .tasks(&[(1, "**Done**"), (2, "pending"), (3, "cancelled")]);
    assert!(p.stop().message().contains("Next: all-code-review."));
    let s = p.state_json();
    assert_eq!(
        (
            &s["next_phase"],
            &s["phase_iteration"],
            &s["consecutive_clean"],
            &s["review_model"]
        ),
        (
            &json!("all-code-review"),
            &json!(0),
            &json!(0),
            &json!("opus")
        )
    );
}

#[test]
fn all_code_review_advances_to_complete() {
    let p = second_pass("all-code-review", json!({})).tasks(&[(1, "done")]);
    assert!(p.stop().message().contains("Next: complete."));
    assert_eq!(p.state_json()["next_phase"], "complete");
}

#[test]
fn auto_continue_blocks_after_a_passed_cycle_except_before_complete() {
    let p = second_pass("plan-review", json!({"auto_continue": true}));
    assert!(p.stop().reason().contains("taskie continue-plan"));
    let p = second_pass("all-code-review", json!({"auto_continue": true})).tasks(&[(1, "done")]);
    assert!(p.stop().message().contains("Next: complete."));
}

#[test]
fn clean_reviews_required_sets_the_streak_that_ends_a_cycle() {
    let p = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-review", "clean_reviews_required": 1}));
    assert!(
        p.stop()
            .message()
            .contains("plan-review passed (1 clean reviews in a row)")
    );
}

// §10 event log.

#[test]
fn each_run_that_selected_a_plan_logs_one_event_with_the_documented_fields() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail());
    p.stop();
    let e = p.last_event();
    for field in [
        "ts",
        "plan",
        "outcome",
        "path",
        "review",
        "iteration",
        "model",
        "verdict",
        "verdict_source",
        "reviewer_exit",
        "duration_ms",
        "phase_before",
        "next_phase_before",
        "phase_after",
        "next_phase_after",
    ] {
        assert!(e.get(field).is_some(), "missing {field}: {e}");
    }
    assert!(e["ts"].as_str().unwrap().ends_with('Z'));
    assert_eq!(e["verdict_source"], "structured_output+review_file");
    assert_eq!(e["reviewer_exit"], 0);
    assert_eq!(p.events().len(), 1);
}

// §4: fail open.

// The pause point exists only in debug builds, as `cargo test` makes them.
#[cfg(debug_assertions)]
#[test]
fn a_panic_inside_the_hook_still_answers_allow_and_exits_zero() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail())
        .env(
            "TASKIE_TEST_PAUSE_AT",
            "panic:before-state-write:state.json",
        );
    let before = p.state_bytes();
    let run = p.stop();
    let msg = run.message();
    assert!(msg.contains("internal error"), "{msg}");
    assert!(
        run.stderr.contains("taskie-hook: internal error"),
        "{}",
        run.stderr
    );
    assert_eq!(p.state_bytes(), before, "the panic came before the write");
}

/// A plugin directory whose plugin.json says `version`.
fn plugin_of_version(version: &str) -> tempfile::TempDir {
    let dir = crate::support::tempdir();
    std::fs::create_dir_all(dir.path().join(".claude-plugin")).unwrap();
    std::fs::write(
        dir.path().join(".claude-plugin/plugin.json"),
        json!({"name": "taskie", "version": version}).to_string(),
    )
    .unwrap();
    dir
}

#[test]
fn the_version_notice_names_the_update_of_the_client_whose_copy_of_the_plugin_launched_it() {
    for (manifest, update, hook_event) in [
        (
            ".codex-plugin/plugin.json",
            "codex plugin add taskie@taskie",
            "Stop",
        ),
        (
            "gemini-extension.json",
            "gemini extensions update taskie",
            "AfterAgent",
        ),
    ] {
        let plugin = crate::support::tempdir();
        let path = plugin.path().join(manifest);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            json!({"name": "taskie", "version": "9.9.9"}).to_string(),
        )
        .unwrap();
        let cache = crate::support::tempdir();
        let p = Project::new();
        let out = p
            .hook_command()
            .env("TASKIE_PLUGIN_ROOT", plugin.path())
            .env("XDG_CACHE_HOME", cache.path())
            .write_stdin(json!({"hook_event_name": hook_event, "cwd": p.root()}).to_string())
            .output()
            .unwrap();
        let answer = crate::support::Run::from(out).answer();
        let msg = answer["systemMessage"].as_str().unwrap_or_default();
        assert!(
            msg.contains("9.9.9") && msg.contains(update),
            "{manifest}: {answer}"
        );
        assert!(!msg.contains("claude plugin"), "{manifest}: {answer}");
    }
}

#[test]
fn the_version_notice_reaches_the_user_once_per_session_in_the_hooks_one_answer() {
    let plugin = plugin_of_version("9.9.9");
    let cache = crate::support::tempdir();
    let p = Project::new();
    let stop = |session: &str| {
        let out = p
            .hook_command()
            .env("TASKIE_PLUGIN_ROOT", plugin.path())
            .env("XDG_CACHE_HOME", cache.path())
            .write_stdin(
                json!({"hook_event_name": "Stop", "cwd": p.root(), "session_id": session})
                    .to_string(),
            )
            .output()
            .unwrap();
        crate::support::Run::from(out).answer()
    };
    let first = stop("s-1");
    let msg = first["systemMessage"].as_str().unwrap_or_default();
    assert!(
        msg.contains(&format!("taskie-hook {}", env!("CARGO_PKG_VERSION")))
            && msg.contains("does not match the Taskie plugin 9.9.9"),
        "a silent allow becomes the notice: {first}"
    );
    assert_eq!(first.as_object().unwrap().len(), 1, "{first}");
    assert_eq!(stop("s-1"), Value::Null, "once per session: silent again");
    assert!(
        stop("s-2")["systemMessage"].as_str().is_some(),
        "another session is told again"
    );

    // A block keeps its instruction and gains the notice.
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail());
    let out = p
        .hook_command()
        .env("TASKIE_PLUGIN_ROOT", plugin.path())
        .env("XDG_CACHE_HOME", cache.path())
        .write_stdin(json!({"hook_event_name": "Stop", "cwd": p.root()}).to_string())
        .output()
        .unwrap();
    let run = crate::support::Run::from(out);
    assert!(
        run.reason().contains("Verdict: FAIL"),
        "the block is unchanged"
    );
    assert!(
        run.answer()["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("9.9.9")),
        "without a session id every stop carries it"
    );

    // The same version: nothing.
    let same = plugin_of_version(env!("CARGO_PKG_VERSION"));
    let p = Project::new();
    let out = p
        .hook_command()
        .env("TASKIE_PLUGIN_ROOT", same.path())
        .write_stdin(json!({"hook_event_name": "Stop", "cwd": p.root()}).to_string())
        .output()
        .unwrap();
    assert_eq!(crate::support::Run::from(out).answer(), Value::Null);
}

/// A command the hook hands over for one plan names it: run as printed while a newer plan
/// exists, it acts on the plan it was about (issue: with two plans, the commands acted on
/// the newest one).
#[test]
fn the_commands_a_message_hands_over_name_their_plan_and_work_as_printed() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail().exit(3));
    let mut msg = String::new();
    for _ in 0..3 {
        msg = p.stop().message();
    }
    // A second, newer plan: the default target of a command without --plan.
    let q = p.plan_dir().parent().unwrap().join("q");
    std::fs::create_dir_all(&q).unwrap();
    std::fs::write(q.join("plan.md"), "# Q\n").unwrap();
    let reset = msg
        .split('`')
        .find(|c| c.starts_with("taskie state set") && c.contains("review_failures=0"))
        .unwrap_or_else(|| panic!("no reset command in {msg}"))
        .to_string();
    let args: Vec<&str> = reset.split_whitespace().skip(1).collect();
    p.run_taskie(&args).ok();
    assert_eq!(p.state_json()["review_failures"], 0, "{reset} reset plan p");

    let bad = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-reveiw"}));
    let msg = bad.stop().message();
    assert!(
        msg.contains("taskie state set --plan p next_phase=<phase>"),
        "{msg}"
    );
}
