//! The merge queue (SPEC §23): one reviewed task at a time, `merge --no-ff` of its
//! reviewed commit in the run's own integration worktree, then a compare-and-swap of the
//! integration branch. Each step is journalled before it is done, and every step can be
//! taken again after a crash: "merged" means the reviewed commit is in the branch.

use crate::commands::run::context::Context;
use crate::model::run::journal::{Entry, Lane, RunState};
use crate::store::git::{Git, Merge};

type Result<T> = std::result::Result<T, String>;

/// The integration worktree, made (or adopted) when first needed.
fn integration(ctx: &Context, at: &str) -> Result<Git> {
    let path = ctx.integration_worktree();
    if !ctx.checkout.worktrees().contains(&path) {
        if path.exists() {
            let _ = std::fs::remove_dir_all(&path);
        }
        let _ = ctx.checkout.run(&["worktree", "prune"]);
        ctx.checkout
            .add_detached_worktree(&path, at)
            .map_err(|e| e.to_string())?;
    }
    Ok(Git::new(path))
}

/// Takes `task` (reviewed, or left merging by a crash) through the queue.
pub fn merge(ctx: &Context, state: &mut RunState, task: &str) -> Result<()> {
    let (reviewed, made) = match state.lane(task).clone() {
        Lane::Reviewed { commit, .. } => (commit, None),
        Lane::Merging {
            reviewed,
            onto,
            commit,
            ..
        } => (reviewed, commit.map(|c| (c, onto))),
        _ => return Ok(()),
    };
    let name = ctx.integration_ref();
    let tip = ctx
        .tip()
        .ok_or_else(|| format!("the integration branch {name} is gone"))?;
    // Already in the branch (a crash after the ref moved): never merged twice.
    if ctx.checkout.is_ancestor(&reviewed, &tip) {
        return ctx.record(
            state,
            Entry::Merged {
                task: task.into(),
                commit: tip,
            },
        );
    }
    // A crash between the merge commit and the ref's update: finish the swap.
    if let Some((commit, onto)) = made
        && onto == tip
        && ctx.checkout.commit_of(&commit).is_ok()
        && ctx.checkout.is_ancestor(&reviewed, &commit)
    {
        ctx.checkout
            .update_ref(&name, &commit, &onto)
            .map_err(|e| e.to_string())?;
        return ctx.record(
            state,
            Entry::Merged {
                task: task.into(),
                commit,
            },
        );
    }
    if !matches!(state.lane(task), Lane::Merging { onto, .. } if *onto == tip) {
        ctx.record(
            state,
            Entry::Merge {
                task: task.into(),
                reviewed: reviewed.clone(),
                onto: tip.clone(),
            },
        )?;
    }
    let git = integration(ctx, &tip)?;
    git.reset_to(&tip).map_err(|e| e.to_string())?;
    let message = format!(
        "taskie: merge task {task} of plan {} ({})\n\nReviewed commit {reviewed}.",
        ctx.plan,
        ctx.title(task)
    );
    match git
        .merge_no_ff(&reviewed, &message)
        .map_err(|e| e.to_string())?
    {
        Merge::Conflict(files) => ctx.record(
            state,
            Entry::Conflict {
                task: task.into(),
                files,
            },
        ),
        Merge::Merged(commit) => {
            let commit = mark_done(ctx, &git, task)?.unwrap_or(commit);
            ctx.record(
                state,
                Entry::MergeCommit {
                    task: task.into(),
                    commit: commit.clone(),
                    onto: tip.clone(),
                },
            )?;
            ctx.checkout
                .update_ref(&name, &commit, &tip)
                .map_err(|e| e.to_string())?;
            ctx.record(
                state,
                Entry::Merged {
                    task: task.into(),
                    commit,
                },
            )
        }
    }
}

/// tasks.md's path in the repository, when the user's checkout tracks it (else the
/// statuses are the driver's to write into the checkout at landing).
pub fn tracked_tasks_md(ctx: &Context) -> Option<String> {
    let dir = ctx.project.plan_dir(&ctx.plan);
    Git::new(&dir)
        .run(&["ls-files", "--full-name", "--", "tasks.md"])
        .ok()
        .filter(|p| !p.is_empty())
}

/// The merge commit of `task` also marks it done in tasks.md (amended in, so the status
/// and the merge are one commit): the run's driver is the only writer of statuses, and
/// only ever on the integration branch. `Some(commit)` when tasks.md changed.
fn mark_done(ctx: &Context, git: &Git, task: &str) -> Result<Option<String>> {
    let Some(rel) = tracked_tasks_md(ctx) else {
        return Ok(None);
    };
    let path = git.dir.join(&rel);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let marked = crate::model::tasks::with_status(&text, &[task.to_string()], "done");
    if marked == text {
        return Ok(None);
    }
    let step = |r: crate::store::git::Result<String>| r.map_err(|e| e.to_string());
    crate::store::atomic::write(&path, marked.as_bytes()).map_err(|e| e.to_string())?;
    step(git.run(&["add", "--", &rel]))?;
    step(git.run(&["commit", "-q", "--amend", "--no-edit", "--no-verify"]))?;
    step(git.commit_of("HEAD")).map(Some)
}

/// Removes the worktrees of merged tasks (their commits are in the branch; the branch is
/// kept) and prunes what a crash left registered.
pub fn clean_merged(ctx: &Context, state: &RunState) {
    let registered = ctx.checkout.worktrees();
    for (task, lane) in &state.lanes {
        let path = ctx.worktree(task);
        if matches!(lane, Lane::Merged { .. })
            && registered.contains(&path)
            && let Err(e) = ctx.checkout.remove_worktree(&path)
        {
            ctx.say(&format!(
                "task {task}: its worktree could not be removed: {e}"
            ));
        }
    }
    let _ = ctx.checkout.run(&["worktree", "prune"]);
}
