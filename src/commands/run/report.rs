//! What `taskie run` says at the end: each task's lane, the integration branch, whether it
//! landed, and what is left with how to continue (`--json`: all of it as one object).

use crate::commands::run::context::{Context, short};
use crate::model::run::journal::{Lane, Outcome, RunState};
use serde_json::json;
use std::io::Write;

/// What is left, in one sentence, with how to continue.
pub fn left(ctx: &Context, state: &RunState) -> String {
    let mut parts = Vec::new();
    for (task, lane) in &state.lanes {
        match lane {
            Lane::Blocked { reason } => parts.push(format!("task {task} is blocked ({reason})")),
            Lane::Conflict { files, .. } => parts.push(format!(
                "task {task} conflicts with {} in {}: merge that branch into {} in {}, resolve and commit there",
                ctx.integration_branch(),
                files.join(", "),
                ctx.branch(task),
                ctx.worktree(task).display()
            )),
            Lane::Skipped { because } => {
                parts.push(format!("task {task} waits for task {because}"))
            }
            Lane::Paused { until, reason, .. } => parts.push(match until {
                Some(t) => format!(
                    "task {task} is paused until {} ({reason})",
                    crate::model::pause::stamp(*t)
                ),
                None => format!("task {task} is paused ({reason}): resume after the limit resets"),
            }),
            _ => {}
        }
    }
    for t in &ctx.tasks {
        if !t.finished && *state.lane(&t.id) == Lane::Waiting {
            parts.push(format!("task {} has not started", t.id));
        }
    }
    if parts.is_empty() && state.final_passed.is_none() {
        parts.push(format!(
            "the all-code review did not pass (its reviews are in {})",
            ctx.gate_plan("all").dir().display()
        ));
    }
    format!(
        "{}; what merged is on {}. Then `taskie run --resume --plan {}` retries what is left",
        parts.join("; "),
        ctx.integration_branch(),
        ctx.plan
    )
}

pub fn print(ctx: &Context, state: &RunState, out: &mut dyn Write) -> std::io::Result<()> {
    let tip = ctx.tip().unwrap_or_default();
    if ctx.json {
        let lanes: Vec<_> = ctx
            .tasks
            .iter()
            .map(|t| {
                let lane = if t.finished {
                    json!({"state": "finished-before"})
                } else {
                    serde_json::to_value(state.lane(&t.id)).unwrap_or_default()
                };
                json!({"task": t.id, "branch": ctx.branch(&t.id), "lane": lane})
            })
            .collect();
        // The last line of `--json`, after the events (docs/run.md).
        let value = json!({
            "event": "summary",
            "run": state.run,
            "plan": state.plan,
            "outcome": state.outcome,
            "journal": ctx.journal.path,
            "integration": {"branch": ctx.integration_branch(), "commit": tip},
            "all_code_review": state.final_passed,
            "landed": state.landed,
            "branch": state.branch,
            "tasks": lanes,
        });
        return writeln!(out, "{value}");
    }
    let outcome = match state.outcome {
        Some(Outcome::Done) => "done",
        Some(Outcome::Partial) => "partial",
        None => "unfinished",
    };
    writeln!(out, "run {} of plan '{}': {outcome}", state.run, state.plan)?;
    for t in &ctx.tasks {
        let line = match state.lane(&t.id) {
            _ if t.finished => "finished before the run".to_string(),
            Lane::Merged { commit } => format!("merged ({})", short(commit)),
            Lane::Blocked { reason } => format!("blocked: {reason}"),
            Lane::Paused { reason, .. } => format!("paused: {reason}"),
            Lane::Conflict { files, .. } => format!("conflict in {}", files.join(", ")),
            Lane::Skipped { because } => format!("skipped: depends on task {because}"),
            other => other.name().to_string(),
        };
        writeln!(out, "  task {}: {line}", t.id)?;
    }
    match &state.final_passed {
        Some(c) => writeln!(
            out,
            "{} at {}: the all-code review passed on this commit",
            ctx.integration_branch(),
            short(c)
        )?,
        None => writeln!(out, "{} at {}", ctx.integration_branch(), short(&tip))?,
    }
    match &state.landed {
        Some(c) => writeln!(
            out,
            "landed: {} fast-forwarded to {}",
            state.branch,
            short(c)
        )?,
        None if state.outcome == Some(Outcome::Done) => writeln!(
            out,
            "to land it: git checkout {} && git merge --ff-only {}",
            state.branch,
            ctx.integration_branch()
        )?,
        None => {}
    }
    Ok(())
}
