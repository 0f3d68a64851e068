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
