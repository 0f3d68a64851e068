//! SPEC §20: one hook for Claude Code, Codex CLI and Gemini CLI, told apart by the event,
//! answered in the shape each accepts; the real binary, events as each client sends them
//! (docs/hosts.md has the measured shapes).

use crate::support::{Fake, Project, due};
use serde_json::{Value, json};

/// Codex CLI 0.169.0's Stop event (shared/clients.md).
pub fn codex_stop(p: &Project, session: &str, active: bool) -> Value {
    json!({
        "session_id": session,
        "turn_id": "019a-turn",
        "transcript_path": null,
        "cwd": p.root(),
        "hook_event_name": "Stop",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "stop_hook_active": active,
        "last_assistant_message": "done"
    })
}

/// Gemini CLI 0.61.0's AfterAgent event.
pub fn gemini_stop(p: &Project, session: &str, active: bool) -> Value {
    json!({
        "session_id": session,
        "transcript_path": "/tmp/t.json",
        "cwd": p.root(),
        "hook_event_name": "AfterAgent",
        "timestamp": "2026-11-24T10:00:00.000Z",
        "prompt": "go on",
        "prompt_response": "done",
        "stop_hook_active": active
    })
}

fn claude_stop(p: &Project) -> Value {
    json!({"session_id": "c1", "cwd": p.root(), "hook_event_name": "Stop", "stop_hook_active": false})
}

fn failing_review() -> Project {
    Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail())
}

#[test]
fn codex_and_gemini_get_the_classic_block_and_never_hook_specific_output() {
    for (name, event) in [
        ("codex", codex_stop as fn(&Project, &str, bool) -> Value),
        ("gemini", gemini_stop),
    ] {
        let p = failing_review();
        let run = p.run_hook(event(&p, "s1", false));
        let a = run.answer();
        assert_eq!(a["decision"], "block", "{name}: {a}");
        assert!(
            a["reason"].as_str().unwrap().contains("plan-review-1.md"),
            "{name}: {a}"
        );
        assert!(a.get("hookSpecificOutput").is_none(), "{name}: {a}");
    }
}

#[test]
fn claude_code_keeps_additional_context_by_default() {
    let p = failing_review();
    let a = p.run_hook(claude_stop(&p)).answer();
    assert!(a.get("decision").is_none(), "{a}");
    assert_eq!(a["hookSpecificOutput"]["hookEventName"], "Stop");
}

#[test]
fn the_block_style_variable_does_not_change_what_codex_gets() {
    let p = failing_review().env("TASKIE_BLOCK_STYLE", "context");
    let a = p.run_hook(codex_stop(&p, "s1", false)).answer();
    assert_eq!(a["decision"], "block", "{a}");
}

#[test]
fn taskie_client_overrides_what_the_event_says() {
    let p = failing_review().env("TASKIE_CLIENT", "gemini");
    let a = p.run_hook(claude_stop(&p)).answer();
    assert_eq!(a["decision"], "block", "{a}");
    let p = failing_review().env("TASKIE_CLIENT", "claude");
    let a = p.run_hook(codex_stop(&p, "s1", false)).answer();
    assert!(a.get("hookSpecificOutput").is_some(), "{a}");
}

#[test]
fn an_allow_to_codex_or_gemini_carries_only_a_system_message() {
    for event in [codex_stop as fn(&Project, &str, bool) -> Value, gemini_stop] {
        let p = Project::new()
            .plan("p")
            .state(due("plan-review"))
            .reviewer(&Fake::pass())
            .env("TASKIE_BLOCK_STYLE", "decision");
        // Already one clean review: this PASS ends the cycle with an allow.
        p.taskie(&["state", "set", "consecutive_clean=1"])
            .assert()
            .success();
        let a = p.run_hook(event(&p, "s1", false)).answer();
        let keys: Vec<&String> = a.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["systemMessage"], "{a}");
    }
}

fn dry_run(p: &Project, event: Value) -> Value {
    let out = p
        .hook_command()
        .args(["--dry-run", "--json"])
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn the_dry_run_says_which_client_it_assumed_why_and_how_it_would_block() {
    let p = failing_review();
    let r = dry_run(&p, codex_stop(&p, "s1", false));
    assert_eq!(
        r["client"],
        json!({"name": "codex", "why": "the Stop event has a turn_id and a model", "block": "decision"})
    );
    assert_eq!(r["if_fail"]["answer"]["decision"], "block", "{r}");
    let r = dry_run(&p, gemini_stop(&p, "s1", false));
    assert_eq!(r["client"]["name"], "gemini");
    assert_eq!(r["client"]["why"], "the event is AfterAgent");
    let r = dry_run(&p, claude_stop(&p));
    assert_eq!(r["client"]["name"], "claude");
    assert_eq!(r["client"]["block"], "additionalContext");
    assert!(r["if_fail"]["answer"].get("hookSpecificOutput").is_some());
    let human = p
        .hook_command()
        .arg("--dry-run")
        .write_stdin(gemini_stop(&p, "s1", false).to_string())
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human
            .contains("client:      gemini (the event is AfterAgent; a block is sent as decision)"),
        "{human}"
    );
}

#[test]
fn the_dry_run_names_a_wrong_taskie_client_and_goes_by_the_event() {
    let p = failing_review().env("TASKIE_CLIENT", "cursor");
    let r = dry_run(&p, codex_stop(&p, "s1", false));
    assert_eq!(r["client"]["name"], "codex");
    assert!(
        r["client"]["why"]
            .as_str()
            .unwrap()
            .contains("TASKIE_CLIENT=\"cursor\" is not claude, codex or gemini"),
        "{r}"
    );
}

// Taskie's own block cap.

type EventFn = fn(&Project, &str, bool) -> Value;

fn claude_event(p: &Project, session: &str, active: bool) -> Value {
    json!({"session_id": session, "cwd": p.root(), "hook_event_name": "Stop", "stop_hook_active": active})
}

/// The post-review file a block reason asks for.
fn post_review_named_in(reason: &str) -> String {
    let start =
        reason.find("write what you did to ").expect(reason) + "write what you did to ".len();
    let rest = &reason[start..];
    rest[..rest.find(". ").unwrap()].to_owned()
}

#[test]
fn an_endless_fail_loop_is_allowed_at_the_cap_in_every_client_and_the_count_starts_again() {
    for (name, event) in [
        ("codex", codex_stop as EventFn),
        ("gemini", gemini_stop),
        ("claude", claude_event),
    ] {
        let p = Project::new()
            .plan("p")
            .state(json!({"next_phase": "plan-review", "max_reviews": 20}))
            .reviewer(&Fake::fail())
            .env("TASKIE_BLOCK_CAP", "3");
        let mut active = false;
        for i in 1..=3 {
            let run = p.run_hook(event(&p, "s1", active));
            let reason = run.reason();
            std::fs::write(p.root().join(post_review_named_in(&reason)), "Fixed.\n").unwrap();
            assert_eq!(p.reviewer_calls(), i, "{name}");
            active = true;
        }
        // The fourth block in a row is not sent: the stop is allowed and says why.
        let message = p.run_hook(event(&p, "s1", active)).message();
        assert!(
            message.contains("3 times in a row") && message.contains("TASKIE_BLOCK_CAP=3"),
            "{name}: {message}"
        );
        assert!(message.contains("plan-review-4.md"), "{name}: {message}");
        let last = p.last_event();
        assert_eq!(
            (&last["outcome"], &last["path"], &last["block_cap"]),
            (&json!("allow"), &json!("review-blocked"), &json!(3)),
            "{name}"
        );
        // The agent goes on (the user resumed it) and writes the post-review: the next
        // review blocks again, since an allowed stop started the count again.
        std::fs::write(p.plan_dir().join("plan-post-review-4.md"), "Fixed.\n").unwrap();
        assert!(p.run_hook(event(&p, "s1", false)).is_block(), "{name}");
        assert_eq!(p.reviewer_calls(), 5, "{name}");
    }
}

#[test]
fn a_structure_error_loop_under_gemini_ends_at_the_default_cap_of_eight() {
    // Gemini sets stop_hook_active back to false after a tool call, so the structure-error
    // block (which waits for stop_hook_active) would loop for ever without the cap.
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .file("draft.md", "x");
    for i in 1..=8 {
        let run = p.run_hook(gemini_stop(&p, "g1", false));
        assert!(
            run.reason()
                .starts_with("Plan 'p': Invalid filename: draft.md"),
            "stop {i}"
        );
    }
    let message = p.run_hook(gemini_stop(&p, "g1", false)).message();
    assert!(message.contains("8 times in a row"), "{message}");
    assert!(p.run_hook(gemini_stop(&p, "g1", false)).is_block());
}

#[test]
fn each_session_has_its_own_count() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .file("draft.md", "x")
        .env("TASKIE_BLOCK_CAP", "1")
        // Named, so that neither session's stop leaves the plan to the other (SPEC §17).
        .env("TASKIE_PLAN", "p");
    assert!(p.run_hook(codex_stop(&p, "a", false)).is_block());
    assert!(p.run_hook(codex_stop(&p, "b", false)).is_block());
    assert!(!p.run_hook(codex_stop(&p, "a", false)).is_block());
    assert!(!p.run_hook(codex_stop(&p, "b", false)).is_block());
}
