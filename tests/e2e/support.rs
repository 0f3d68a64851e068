//! The slow tier's support: the fast tier's project builder and fakes (tests/support),
//! plus what only the real CLIs need — installing them, a user's home for them, and fake
//! model APIs on loopback with a scripted model behind them.

#[path = "../support/mod.rs"]
mod shared;
pub use shared::*;

pub mod claude_cli;
pub mod claude_user;
pub mod fake_api;
pub mod fake_gemini;
pub mod fake_openai;
pub mod http;
pub mod scripted_model;

use serde_json::{Value, json};

/// Makes review #2 of the plan-review cycle due, with a findings ledger long enough
/// that the prompt passes a pipe's buffer (64 KiB) and the ledger's own bound.
pub fn long_ledger(p: Project) -> Project {
    use taskie::model::findings::Ledger;
    let filler = "so the prompt grows past what a pipe buffers ".repeat(40);
    let findings: Vec<String> = (1..=60).map(|i| format!("Finding {i}: {filler}")).collect();
    let mut ledger = Ledger::default();
    ledger.record_review("plan-review", None, 1, &findings, &[], &[]);
    // The state so far (its reviewers), at review #2.
    let mut state = std::fs::read_to_string(p.plan_dir().join("state.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .unwrap_or_else(|| shared::due("plan-review"));
    state["phase"] = json!("post-plan-review");
    state["next_phase"] = json!("plan-review");
    state["phase_iteration"] = json!(1);
    p.file("findings.json", &ledger.to_json())
        .file("plan-review-1.md", "# Review\n\nVERDICT: FAIL\n")
        .file("plan-post-review-1.md", "# Post-review\n\n- F1: fixed\n")
        .state(state)
}

/// The whole prompt of the only reviewer log, as the hook logged it.
pub fn logged_prompt(p: &Project) -> String {
    let logs: Vec<String> = std::fs::read_dir(p.logs())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|f| f.extension().is_some_and(|x| x == "log"))
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    assert_eq!(logs.len(), 1, "one reviewer log");
    let (_, prompt) = logs[0]
        .split_once("\n--- prompt ---\n")
        .expect("the log holds the prompt");
    prompt.strip_suffix('\n').unwrap_or(prompt).to_owned()
}

/// Every string in `v`, joined by newlines: where a prompt sent to a model API is found,
/// whatever the API's shape.
pub fn strings_in(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}

/// Asserts that a real CLI sent `prompt`, whole, to its model: it read all of its stdin.
pub fn assert_prompt_reached_the_model(prompt: &str, bodies: &[Value]) {
    assert!(
        prompt.len() > 64 * 1024,
        "a long prompt: {} bytes",
        prompt.len()
    );
    assert!(
        prompt.contains("too long to quote here"),
        "the ledger reached its bound"
    );
    let sent = bodies.iter().map(strings_in).collect::<Vec<_>>().join("\n");
    assert!(
        sent.contains(prompt.trim_end()),
        "the model got the whole {}-byte prompt; it got {} bytes of text, starting {:?}",
        prompt.len(),
        sent.len(),
        &sent.chars().take(300).collect::<String>()
    );
}
