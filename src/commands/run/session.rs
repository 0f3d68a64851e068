//! Starting an agent session for one task: the agent CLI called exactly as it is called
//! by hand for a headless run, the prompt on stdin, the hook configured for that CLI,
//! and `TASKIE_RUN` naming the run and the task.

use crate::commands::run::agent;
use crate::commands::run::context::Context;
use crate::commands::run::gate::EXCLUDES;
use crate::model::host::Client;
use crate::store::run::AGENT_PID;
use std::io::Write;
use std::path::Path;

// A session's process group, and stopping one a crash left behind, differ per platform.
#[cfg(unix)]
#[path = "session/unix.rs"]
mod os;
#[cfg(windows)]
#[path = "session/windows.rs"]
mod os;
use std::process::{Command, Stdio};

/// How a session ended.
#[derive(Debug)]
pub struct Ended {
    pub task: String,
    /// The exit status, or why the agent could not run.
    pub status: Result<i32, String>,
}

/// The review a session cut off by a crash left unanswered in the gate: its file and
/// the post-review file the new session must write, relative to the worktree.
fn owed(ctx: &Context, task: &str) -> Option<(String, String)> {
    use crate::model::phase::Review;
    let copy = ctx.gate_plan(task);
    let dir = copy.dir();
    let state = crate::model::state::State::parse(&std::fs::read(copy.state_path()).ok()?).ok()?;
    let review = Review::from_name(&state.phase)?;
    if state.next_phase.as_deref() != Some(review.post_name()) {
        return None;
    }
    let n = state.phase_iteration?;
    let number = (review == Review::Code)
        .then(|| crate::model::text::decimal(task))
        .flatten();
    let file = crate::model::plan_file::review_file(review, n, number)?;
    let post = crate::model::plan_file::post_file(review, n, number)?;
    (dir.join(&file).exists() && !dir.join(&post).exists()).then(|| {
        let rel = |f: &str| crate::model::plan_file::rel(&ctx.plan, f);
        (rel(&file), rel(&post))
    })
}

/// The files still in conflict when a merge is under way in the task's worktree (a
/// session resolving the task's conflict with the integration branch).
fn conflicts(ctx: &Context, task: &str) -> Option<Vec<String>> {
    let git = crate::store::git::Git::new(ctx.worktree(task));
    if task == "all" || !git.succeeds(&["rev-parse", "-q", "--verify", "MERGE_HEAD"]) {
        return None;
    }
    let files = git
        .run(&["diff", "--name-only", "--diff-filter=U"])
        .unwrap_or_default();
    Some(files.lines().map(str::to_string).collect())
}

/// What the agent is asked to do. `resolve`: the files of the conflict the session
/// resolves, when it is a resolution session.
pub fn prompt(ctx: &Context, task: &str, resolve: Option<&[String]>) -> String {
    let plan = crate::model::plan_file::rel_dir(&ctx.plan);
    // A session cut off by a crash of the driver may leave a review waiting for its answer.
    let owed = match owed(ctx, task) {
        Some((review, post)) => format!(
            "- First: an earlier session of this task was cut off while the review {review} waited for its \
             answer. Read {review}, address every finding (fix it, or explain why not), and write what you did to \
             {post}. Answer each finding by its id, one line each. Then stop.\n"
        ),
        None => String::new(),
    };
    if let Some(files) = conflicts(ctx, task) {
        return format!(
            "You are resolving a merge conflict for task {task} of plan '{}' in this directory, a git worktree \
             `taskie run` made for this task alone. The task's reviewed work could not be merged into the run's \
             integration branch, so the merge of that branch into this one is under way here.\n{owed}\
             - It conflicts in: {}. Resolve each conflict keeping both the task's change (see \
             {plan}/task-{task}.md) and the integration branch's: read both sides. Never delete a file or drop \
             a side to make the merge pass, and leave no conflict marker.\n\
             - Then `git add` the files and `git commit --no-edit` to finish the merge. Work only inside this \
             directory; never switch branches or rewrite history; do not edit {plan}/tasks.md or \
             {plan}/state.json.\n\
             - Then stop. Taskie's hook reviews the result; when it hands you a review, do what it asks (fix, \
             then write the post-review file it names) and stop again, until it lets you stop.\n",
            ctx.plan,
            files.join(", ")
        );
    }
    // A resolution session cut off by a crash after it committed the merge: its successor
    // (adopted in the same worktree) is told so, not asked to implement the task anew.
    if let Some(files) = resolve {
        return format!(
            "You are finishing the resolution of a merge conflict for task {task} of plan '{}' in this \
             directory, a git worktree `taskie run` made for this task alone. An earlier session merged the \
             run's integration branch into this branch, resolved the conflicts in {} and committed the merge; \
             it was cut off before its review.\n{owed}\
             - Check that the merge kept both the task's change (see {plan}/task-{task}.md) and the integration \
             branch's in those files, with no conflict marker and no file deleted; fix and commit if not. Work \
             only inside this directory; never switch branches or rewrite history; do not edit {plan}/tasks.md \
             or {plan}/state.json.\n\
             - Then stop. Taskie's hook reviews the result; when it hands you a review, do what it asks (fix, \
             then write the post-review file it names) and stop again, until it lets you stop.\n",
            ctx.plan,
            files.join(", ")
        );
    }
    if task == "all" {
        return format!(
            "You are finishing plan '{}' in this directory, where `taskie run` merged every task.\n{owed}\
             Stop now: Taskie's hook runs the all-code review of the whole implementation at your stop. \
             When it hands you a review, do what it asks (fix the findings here, then write the post-review \
             file it names) and stop again. Do not edit {plan}/tasks.md or {plan}/state.json, and do not \
             switch branches.\n",
            ctx.plan
        );
    }
    format!(
        "You are implementing task {task} of plan '{}' in this directory, a git worktree `taskie run` made \
         for this task alone.\n{owed}\
         - The task: {plan}/task-{task}.md. The plan: {plan}/plan.md (and {plan}/tasks.md for context).\n\
         - Implement the task here, with tests. Work only inside this directory: a write anywhere else fails \
         the task.\n\
         - Commit your work if you can (Taskie commits whatever you leave uncommitted before each review). \
         Never commit .taskie, never switch branches, never rewrite history.\n\
         - Do not edit {plan}/tasks.md or {plan}/state.json and do not run `taskie mark`: the run's driver \
         keeps them.\n\
         - When the task is done, stop. Taskie's hook then runs the code review; when it hands you a review, \
         do what it asks (fix, then write the post-review file it names) and stop again, until it lets you \
         stop.\n",
        ctx.plan
    )
}

/// Where a session's output is kept, in its gate.
pub const AGENT_STDOUT: &str = "agent-stdout.log";
pub const AGENT_STDERR: &str = "agent-stderr.log";

/// Stops the process group of a session a killed driver left behind in this gate, so two
/// sessions never work in one worktree.
pub fn stop_leftover(gate: &Path) {
    os::stop_leftover(&gate.join(AGENT_PID));
}

/// Runs one session of the `agent` CLI for `task` to its end (call it on a thread of its
/// own): the one place a run starts an agent.
pub fn run(
    ctx: &Context,
    task: &str,
    worktree: &Path,
    agent: Client,
    resolve: Option<&[String]>,
) -> Ended {
    let gate = ctx.gate(task);
    let ended = |status| Ended {
        task: task.to_string(),
        status,
    };
    // The hook configured, trusted and checked before the session starts: a lane whose
    // hook would not run is never started.
    let launch = match agent::prepare(agent, &ctx.settings, worktree, &gate) {
        Ok(l) => l,
        Err(e) => {
            return ended(Err(format!("the lane's hook is not armed: {e}")));
        }
    };
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args)
        .current_dir(worktree)
        .env("TASKIE_RUN", format!("{}:{task}", ctx.run))
        .env("TASKIE_PLAN", &ctx.plan)
        .env_remove("TASKIE_HOOK_SKIP")
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("CODEX_THREAD_ID")
        // The session's git ignores the `.taskie` link (and only it: the user's own
        // excludes file is replaced for this session's git commands).
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "core.excludesFile")
        .env("GIT_CONFIG_VALUE_0", gate.join(EXCLUDES))
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own process group: a session a crash of the driver left running is stopped,
    // whole, before its task's next session starts (see `stop_leftover`).
    os::own_group(&mut cmd);
    stop_leftover(&gate);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return ended(Err(format!(
                "cannot start the agent {}: {e}",
                launch.program.display()
            )));
        }
    };
    let _ = std::fs::write(gate.join(AGENT_PID), child.id().to_string());
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(prompt(ctx, task, resolve).as_bytes());
    }
    match child.wait_with_output() {
        Ok(out) => {
            let _ = std::fs::write(gate.join(AGENT_STDOUT), &out.stdout);
            let _ = std::fs::write(gate.join(AGENT_STDERR), &out.stderr);
            ended(Ok(out.status.code().unwrap_or(-1)))
        }
        Err(e) => ended(Err(format!("the agent's output could not be read: {e}"))),
    }
}
