//! After a session: may its work be merged? Only with a heartbeat from its hook, its
//! review passed on a named commit that changes something, nothing written outside its
//! worktree, and no change to `.taskie` on its branch.

use crate::commands::run::context::{Context, short};
use crate::commands::run::session::{AGENT_STDERR, AGENT_STDOUT};
use crate::model::host::Client;
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
    agent: Client,
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
    let state_bytes = std::fs::read(ctx.gate_plan(task).state_path()).unwrap_or_default();
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
        let paused = |until, reason, vendor: Option<Client>| Entry::Paused {
            task: task.to_string(),
            until,
            reason,
            agent: vendor.map(|c| c.name().to_string()),
        };
        // The reviewer's limit holds this task's gate only: other sessions go on.
        if let Some(until) = reviewer_until {
            return paused(Some(until), "the reviewer's usage limit".into(), None);
        }
        let local = jiff::tz::TimeZone::system();
        if let Some(limit) = crate::model::limit::agent_limit(agent, &output, now, &local) {
            return paused(
                limit.until,
                format!("{}'s usage limit ({})", agent.name(), limit.words),
                Some(agent),
            );
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
        let diagnostics = ctx.gate_plan(task).diagnostics_path();
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
    let changed = match ctx.checkout.changed(base, &commit) {
        Ok(changed) => changed,
        Err(e) => return blocked(e.to_string()),
    };
    // A session whose work never reached a commit (its writes failed, under a sandbox
    // that made the worktree's git read-only, or went somewhere else) passes a review of
    // nothing; merged, the task would be `done` with none of it done. Never silently: the
    // user decides (docs/run.md, "When things go wrong"). The all-code review may rightly
    // change nothing.
    if task != "all" && changed.is_empty() {
        let what = if commit == base {
            format!("its reviewed commit {} is the task's base", short(&commit))
        } else {
            format!(
                "its commits up to {} change nothing from the task's base {}",
                short(&commit),
                short(base)
            )
        };
        return blocked(format!(
            "the session produced no commit: {what}, so there is nothing to merge. Check its output \
             ({}) for writes that failed (a sandbox that made the worktree or its git read-only) or \
             work done outside its worktree; if the task needs no change, set its status to done \
             in tasks.md and run `taskie run --resume`. The branch {} is kept",
            gate.join(AGENT_STDOUT).display(),
            ctx.branch(task)
        ));
    }
    let plan_files: Vec<String> = changed
        .into_iter()
        .filter(|p| p == ".taskie" || p.starts_with(".taskie/"))
        .collect();
    if plan_files.is_empty() {
        Entry::Reviewed {
            task: task.to_string(),
            commit,
        }
    } else {
        blocked(format!(
            "its commits change {}, which only the run's driver writes",
            plan_files.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
