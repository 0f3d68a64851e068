//! A session's gate: the `.taskie` its hook works in, made by the driver outside the
//! worktree and linked from the worktree's top. It holds a copy of the plan's files, the
//! task's own state.json (its code review due), the reviews, logs and heartbeats; nothing
//! of it is ever on a task branch, and the plan's own files are written only by the driver.

use crate::commands::run::context::Context;
use crate::model::machine;
use crate::store::git::Git;
use crate::store::run::{GATE_MARK, GateMark};

// A link to a directory differs per platform.
#[cfg(unix)]
#[path = "gate/unix.rs"]
mod os;
#[cfg(windows)]
#[path = "gate/windows.rs"]
mod os;
use std::path::Path;

/// The file of git ignore rules a session's git commands get, so `.taskie` (the link)
/// is never added by an agent's `git add -A`.
pub const EXCLUDES: &str = "git-excludes";

/// What the session's gate starts with.
pub enum Due {
    /// The code review of this task.
    Code(u64),
    /// The all-code review of the merged result.
    AllCode,
}

/// Makes (or adopts, after a crash) the gate of `task` and links it from `worktree`.
/// `budget_left`: what is left of the plan's review budget, which becomes the session's
/// own (`max_cost_usd`), so its hook stops reviewing once the plan's money is spent.
pub fn prepare(
    ctx: &Context,
    task: &str,
    worktree: &Path,
    due: Due,
    budget_left: Option<f64>,
) -> std::io::Result<()> {
    let gate = ctx.gate(task);
    let copy = ctx.gate_plan(task);
    let plan_dir = copy.dir();
    fs_err::create_dir_all(&plan_dir)?;
    let source = ctx.project.plan_dir(&ctx.plan);
    // The plan's files as the driver read them; a copy, so a session never writes the
    // plan itself.
    for entry in fs_err::read_dir(&source)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let wanted = matches!(name.as_str(), "plan.md" | "design.md" | "tasks.md")
            || (name.starts_with("task-")
                && name.ends_with(".md")
                && crate::model::text::decimal(&name[5..name.len() - 3]).is_some());
        if wanted && entry.file_type()?.is_file() && !plan_dir.join(&name).exists() {
            fs_err::copy(entry.path(), plan_dir.join(&name))?;
        }
    }
    let state_path = copy.state_path();
    // An adopted gate keeps its state: the session's review cycle goes on where it was.
    if !state_path.exists() {
        // The plan's state (its reviewers, limits and budget); a plan without one runs
        // with the defaults. One that cannot be used stops the session naming the file:
        // the defaults would silently review with what the user did not choose.
        let target = ctx.target();
        let plan = crate::store::snapshot::read_state(&target.state_path())
            .map_err(|e| {
                std::io::Error::other(format!(
                    "{}: {e}; fix it (`taskie validate` names each field)",
                    target.rel(crate::model::plan_file::STATE_FILE)
                ))
            })?
            .unwrap_or_default();
        let task = match due {
            Due::Code(n) => Some(n),
            Due::AllCode => None,
        };
        crate::store::atomic::write_durable(
            &state_path,
            machine::run_session(&plan, task, budget_left)
                .to_json()
                .as_bytes(),
        )?;
    }
    let mark = GateMark {
        run: ctx.run.clone(),
        task: task.to_string(),
    };
    crate::store::atomic::write_durable(
        &gate.join(GATE_MARK),
        serde_json::to_string(&mark).expect("json").as_bytes(),
    )?;
    std::fs::write(gate.join(EXCLUDES), "/.taskie\n")?;
    link(worktree, &gate)
}

/// Lifts a reviewer's usage-limit pause (SPEC §22) from the gate of `task`, as `taskie
/// resume` does for a plan: the driver waited for the reset, so the task's next session
/// runs its review, whatever the hook's clock says.
pub fn lift_pause(ctx: &Context, task: &str) -> std::io::Result<()> {
    let path = ctx.gate_plan(task).state_path();
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(());
    };
    match crate::model::state::State::parse(&bytes) {
        Ok(state) if state.paused_until.is_some() => crate::store::atomic::write_durable(
            &path,
            crate::model::machine::lift_pause(&state)
                .to_json()
                .as_bytes(),
        ),
        _ => Ok(()),
    }
}

/// Keeps a gate beside, as `gate-<N>.before-<time>`, so the task's next session starts a
/// fresh review cycle and the old one stays for the record.
pub fn set_aside(gate: &Path) -> std::io::Result<()> {
    let name = gate
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let aside = gate.with_file_name(format!(
        "{name}.before-{}",
        crate::clock::now().strftime(crate::clock::COMPACT)
    ));
    std::fs::rename(gate, aside)
}

/// `<worktree>/.taskie` → the gate. Plan files the repository tracks under `.taskie` are
/// first marked skip-worktree in the worktree's own index, so replacing the directory by
/// the link changes nothing git would commit.
fn link(worktree: &Path, gate: &Path) -> std::io::Result<()> {
    let at = worktree.join(".taskie");
    if std::fs::read_link(&at).is_ok_and(|target| target == gate) {
        return Ok(());
    }
    let git = Git::new(worktree);
    let tracked = git
        .tracked_under(".taskie")
        .map_err(std::io::Error::other)?;
    if !tracked.is_empty() {
        let mut args = vec!["update-index", "--skip-worktree", "--"];
        args.extend(tracked.iter().map(String::as_str));
        git.run(&args).map_err(std::io::Error::other)?;
    }
    match std::fs::symlink_metadata(&at) {
        Ok(m) if m.is_dir() => fs_err::remove_dir_all(&at)?,
        Ok(_) => fs_err::remove_file(&at)?,
        Err(_) => {}
    }
    os::link_dir(gate, &at)
}
