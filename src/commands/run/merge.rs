//! The merge queue (SPEC §23): one reviewed task at a time, `merge --no-ff` of its
//! reviewed commit in the run's own integration worktree, then a compare-and-swap of the
//! integration branch. Each step is journalled before it is done, and every step can be
//! taken again after a crash: "merged" means the reviewed commit is in the branch.

use crate::commands::run::context::{At, Context, short};
use crate::model::run::journal::{Entry, Lane, RunState};
use crate::store::git::{Git, Merge};

type Result<T> = std::result::Result<T, String>;

/// The integration worktree, made (or adopted) when first needed.
fn integration(ctx: &Context, at: &str) -> Result<Git> {
    let path = ctx.integration_worktree();
    ctx.ensure_worktree(&path, At::Detached(at))?;
    Ok(ctx.checkout.at(path))
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
        Merge::Merged => {
            mark_done(ctx, &git, task)?;
            let commit = git.commit_of("HEAD").map_err(|e| e.to_string())?;
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

/// Starts, in the task's worktree, the merge of the integration tip `onto` into the
/// task's branch, for a session to resolve (a conflict of its own, SPEC §23). Done once:
/// a merge under way or made is left as it is. The gate's link is taken out of the way
/// first, so the merge can bring the tip's plan files (the statuses) in.
pub fn start_resolution(worktree: &std::path::Path, onto: &str) -> Result<()> {
    let git = Git::new(worktree);
    if git.is_ancestor(onto, "HEAD") || git.succeeds(&["rev-parse", "-q", "--verify", "MERGE_HEAD"])
    {
        return Ok(());
    }
    let at = worktree.join(".taskie");
    if std::fs::symlink_metadata(&at).is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(&at).map_err(|e| e.to_string())?;
    }
    let tracked = git.tracked_under(".taskie").map_err(|e| e.to_string())?;
    if !tracked.is_empty() {
        let mut args = vec!["update-index", "--no-skip-worktree", "--"];
        args.extend(tracked.iter().map(String::as_str));
        git.run(&args).map_err(|e| e.to_string())?;
        git.run(&["checkout", "--", ".taskie"])
            .map_err(|e| e.to_string())?;
    }
    // Conflicts are what this merge is for: its failure is the session's work.
    let _ = git.run(&["merge", "--no-ff", "--no-commit", onto]);
    if git.succeeds(&["rev-parse", "-q", "--verify", "MERGE_HEAD"]) || git.is_ancestor(onto, "HEAD")
    {
        Ok(())
    } else {
        Err(format!(
            "git could not start the merge of {onto} in {}",
            worktree.display()
        ))
    }
}

/// Why the commit `resolved` of a resolution session may not be merged: it must hold
/// both the integration tip `onto` and the task's reviewed commit `reviewed`, add no
/// conflict marker, and delete no file that both had (a deletion to make a merge pass).
pub fn check_resolution(
    ctx: &Context,
    onto: &str,
    reviewed: &str,
    resolved: &str,
) -> Option<String> {
    let git = &ctx.checkout;
    if !git.is_ancestor(onto, resolved) {
        return Some(format!(
            "its resolution does not hold the integration tip {}",
            short(onto)
        ));
    }
    if !git.is_ancestor(reviewed, resolved) {
        return Some(format!(
            "its resolution does not hold its reviewed work {}",
            short(reviewed)
        ));
    }
    let diff = git
        .run(&["diff", "-U0", "--no-color", "--no-ext-diff", onto, resolved])
        .unwrap_or_default();
    let marked = with_markers(&diff);
    if !marked.is_empty() {
        return Some(format!(
            "its resolution left conflict markers in {}",
            marked.join(", ")
        ));
    }
    let deleted: Vec<String> = git
        .run(&[
            "diff",
            "--name-only",
            "--no-renames",
            "--diff-filter=D",
            onto,
            resolved,
        ])
        .unwrap_or_default()
        .lines()
        .filter(|p| git.succeeds(&["cat-file", "-e", &format!("{reviewed}:{p}")]))
        .map(str::to_string)
        .collect();
    (!deleted.is_empty()).then(|| {
        format!(
            "its resolution deletes {}, which both sides have",
            deleted.join(", ")
        )
    })
}

/// The files of a `git diff -U0` whose added lines include a conflict marker.
fn with_markers(diff: &str) -> Vec<String> {
    let mut file = None;
    let mut out: Vec<String> = Vec::new();
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            file = Some(path.strip_prefix("b/").unwrap_or(path).to_string());
            continue;
        }
        let Some(added) = line.strip_prefix('+') else {
            continue;
        };
        let marker = ["<<<<<<<", ">>>>>>>", "|||||||"]
            .iter()
            .any(|m| added.starts_with(m) && added[7..].chars().next().is_none_or(|c| c == ' '))
            || added == "=======";
        if let Some(f) = file.as_ref().filter(|_| marker)
            && !out.contains(f)
        {
            out.push(f.clone());
        }
    }
    out
}

/// tasks.md's path in the repository, when the user's checkout tracks it (else the
/// statuses are the driver's to write into the checkout at landing). Asked once a run.
pub fn tracked_tasks_md(ctx: &Context) -> Option<String> {
    ctx.tracked_tasks_md
        .get_or_init(|| {
            let dir = ctx.project.plan_dir(&ctx.plan);
            Git::new(&dir)
                .run(&["ls-files", "--full-name", "--", "tasks.md"])
                .ok()
                .filter(|p| !p.is_empty())
        })
        .clone()
}

/// The merge commit of `task` (HEAD of `git`) also marks it done in tasks.md (amended
/// in, so the status and the merge are one commit): the run's driver is the only writer
/// of statuses, and only ever on the integration branch.
fn mark_done(ctx: &Context, git: &Git, task: &str) -> Result<()> {
    let Some(rel) = tracked_tasks_md(ctx) else {
        return Ok(());
    };
    let path = git.dir.join(&rel);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(());
    };
    let marked = crate::model::tasks::with_status(&text, &[task.to_string()], "done");
    if marked == text {
        return Ok(());
    }
    let step = |r: crate::store::git::Result<String>| r.map(drop).map_err(|e| e.to_string());
    crate::store::atomic::write_durable(&path, marked.as_bytes()).map_err(|e| e.to_string())?;
    step(git.run(&["add", "--", &rel]))?;
    step(git.run(&["commit", "-q", "--amend", "--no-edit", "--no-verify"]))
}

/// Removes the worktrees of merged tasks (their commits are in the branch; the branch is
/// kept). What a crash left registered is pruned when the run first reads the registry.
pub fn clean_merged(ctx: &Context, state: &RunState) {
    for (task, lane) in &state.lanes {
        let path = ctx.worktree(task);
        if matches!(lane, Lane::Merged { .. })
            && ctx.has_worktree(&path)
            && let Err(e) = ctx.remove_worktree(&path)
        {
            ctx.say(&format!(
                "task {task}: its worktree could not be removed: {e}"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_markers_are_found_in_added_lines_only() {
        let diff = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,5 @@\n+<<<<<<< HEAD\n+one\n+=======\n+two\n+>>>>>>> task\n\
                    diff --git a/b.md b/b.md\n--- a/b.md\n+++ b/b.md\n@@ -1 +1 @@\n-<<<<<<< gone\n+Title\n+========\n\
                    diff --git a/c.txt b/c.txt\n--- a/c.txt\n+++ b/c.txt\n@@ -1 +1 @@\n+=======\n";
        assert_eq!(with_markers(diff), ["a.txt", "c.txt"]);
        assert!(with_markers("+++ b/x\n+<<<<<<<<< not one\n").is_empty());
    }
}
