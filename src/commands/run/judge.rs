//! After a session: may its work be merged? Only with a heartbeat from its hook, its
//! review passed on a named commit, nothing written outside its worktree, and no
//! change to `.taskie` on its branch.

use crate::commands::run::context::Context;
use crate::commands::run::session::{AGENT_STDERR, AGENT_STDOUT};
use crate::model::phase::Phase;
use crate::model::run::journal::Entry;
use crate::store::run::heartbeats;

/// Whether the gate's state says the session's review cycle passed: the hook advanced
/// past it (SPEC §6).
fn passed(gate_state: &[u8], task: &str) -> bool {
    let Ok(state) = crate::model::state::State::parse(gate_state) else {
        return false;
    };
    let next = state.next_phase.as_deref().and_then(Phase::parse);
    if task == "all" {
        state.phase == Phase::AllCodeReview.name() && next == Some(Phase::Complete)
    } else {
        state.phase == Phase::CodeReview.name()
            && matches!(
                next,
                Some(Phase::CompleteTask | Phase::CompleteTaskTdd | Phase::AllCodeReview)
            )
    }
}

/// The entry that records what the session came to (`Reviewed` or `Blocked`).
/// `outside`: what changed in the user's checkout while it ran.
pub fn judge(
    ctx: &Context,
    task: &str,
    base: &str,
    status: &Result<i32, String>,
    outside: &[String],
) -> Entry {
    let blocked = |reason: String| Entry::Blocked {
        task: task.to_string(),
        reason,
    };
    let gate = ctx.gate(task);
    if let Err(why) = status {
        return blocked(why.clone());
    }
    if !outside.is_empty() {
        return blocked(format!(
            "the user's checkout changed while the session ran, outside its worktree: {}",
            outside.join(", ")
        ));
    }
    let state_bytes =
        std::fs::read(gate.join("plans").join(&ctx.plan).join("state.json")).unwrap_or_default();
    if !passed(&state_bytes, task) {
        // A usage limit pauses the task instead of failing it (SPEC §22): its reviewer's,
        // which the hook recorded in the gate's state, or the agent's own, in its output.
        let now = crate::clock::now_unix();
        let reviewer_until = crate::model::state::State::parse(&state_bytes)
            .ok()
            .and_then(|s| s.paused_until)
            .filter(|&t| crate::model::pause::is_paused(Some(t), now));
        let output = [AGENT_STDOUT, AGENT_STDERR]
            .map(|f| std::fs::read_to_string(gate.join(f)).unwrap_or_default())
            .join("\n");
        let paused = |until, reason| Entry::Paused {
            task: task.to_string(),
            until,
            reason,
        };
        if let Some(until) = reviewer_until {
            return paused(Some(until), "the reviewer's usage limit".into());
        }
        if let Some(words) = agent_limit(&output) {
            return paused(None, format!("the agent's usage limit ({words})"));
        }
    }
    let beats = heartbeats(&gate);
    if beats.is_empty() {
        return blocked(format!(
            "the session ended without a heartbeat: none of its stops reached Taskie's hook, so its work \
             was never reviewed (exit status {}; its output is in {})",
            status.as_ref().map_or(-1, |c| *c),
            gate.join(AGENT_STDOUT).display()
        ));
    }
    if !passed(&state_bytes, task) {
        let diagnostics = gate
            .join("logs")
            .join(format!("{}-diagnostics.json", ctx.plan));
        let why = if diagnostics.exists() {
            format!(
                "its review hard-stopped (diagnostics: {})",
                diagnostics.display()
            )
        } else {
            "its review did not pass before the session ended".to_string()
        };
        return blocked(format!("{why}; the branch {} is kept", ctx.branch(task)));
    }
    // The commit of the last review that started: the one that passed the cycle (no
    // review of this task runs after it), even if its stop's own heartbeat was cut off.
    let Some(commit) = beats.iter().rev().find_map(|b| b.commit.clone()) else {
        return blocked("its review passed but no heartbeat names the reviewed commit".into());
    };
    match ctx.checkout.changed_under(base, &commit, ".taskie") {
        Ok(changed) if changed.is_empty() => Entry::Reviewed {
            task: task.to_string(),
            commit,
        },
        Ok(changed) => blocked(format!(
            "its commits change {}, which only the run's driver writes",
            changed.join(", ")
        )),
        Err(e) => blocked(e.to_string()),
    }
}

/// The words of an agent's output that say it reached a usage limit: claude's result
/// object (`is_error` with HTTP 429, or a result naming a limit), or a line of any CLI's
/// output naming one.
fn agent_limit(output: &str) -> Option<String> {
    let says_limit = |t: &str| {
        let t = t.to_lowercase();
        [
            "usage limit",
            "rate limit",
            "hit your limit",
            "quota exceeded",
            "resource_exhausted",
        ]
        .iter()
        .any(|w| t.contains(w))
    };
    for line in output.lines() {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(line)
            && v["is_error"] == true
        {
            let result = v["result"].as_str().unwrap_or_default();
            if v["api_error_status"] == 429 || says_limit(result) {
                return Some(crate::model::text::clip(result, 200));
            }
        }
    }
    output
        .lines()
        .find(|l| says_limit(l))
        .map(|l| crate::model::text::clip(l.trim(), 200))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_usage_limit_is_read_from_its_result_or_its_words() {
        let claude = r#"{"type":"result","is_error":true,"api_error_status":429,"result":"Claude AI usage limit reached|1767000000"}"#;
        assert_eq!(
            agent_limit(claude).as_deref(),
            Some("Claude AI usage limit reached|1767000000")
        );
        assert!(agent_limit("ERROR: You've hit your usage limit. Try again at 5pm.").is_some());
        assert_eq!(agent_limit(r#"{"is_error":false,"result":"done"}"#), None);
        assert_eq!(agent_limit("all good\n"), None);
    }

    #[test]
    fn a_passed_code_review_is_one_the_hook_advanced_past() {
        let s = |phase: &str, next: &str| {
            format!(r#"{{"phase":"{phase}","next_phase":"{next}"}}"#).into_bytes()
        };
        assert!(passed(&s("code-review", "complete-task"), "1"));
        assert!(passed(&s("code-review", "all-code-review"), "1"));
        assert!(!passed(&s("code-review", "post-code-review"), "1"));
        assert!(!passed(&s("post-code-review", "code-review"), "1"));
        assert!(!passed(&s("complete-task", "code-review"), "1"));
        assert!(passed(&s("all-code-review", "complete"), "all"));
        assert!(!passed(&s("code-review", "complete-task"), "all"));
        assert!(!passed(b"not json", "1"));
    }
}
