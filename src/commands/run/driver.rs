//! The run's loop: start sessions for ready tasks, judge each that ends, merge what
//! passed one at a time, then the all-code review, the landing and the clean-up.

use crate::commands::run::budget;
use crate::commands::run::context::{At, Context, short};
use crate::commands::run::gate::{self, Due};
use crate::commands::run::judge::judge;
use crate::commands::run::merge;
use crate::commands::run::session::{self, Ended};
use crate::model::host::Client;
use crate::model::run::journal::{Entry, Land, Lane, Outcome, RunState};
use crate::model::run::schedule;
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, String>;

/// A session under way: its base, its CLI, and what the user's checkout looked like when
/// it began.
struct Live {
    base: String,
    checkout: Vec<String>,
    agent: Client,
    /// A session resolving the task's conflicts.
    resolving: bool,
}

/// The longest the driver waits in place for a usage limit to reset (a night); a later
/// reset ends the run partial, saying when `--resume` can go on.
pub const LONGEST_WAIT_SECS: i64 = 8 * 3600;

/// Makes (or adopts) the worktree and gate of `task` and journals the session of `agent`;
/// `None` when the plan's budget is spent (the task is then blocked, saying so).
fn begin(ctx: &Context, state: &mut RunState, task: &str, agent: Client) -> Result<Option<Live>> {
    if let Some(why) = budget::spent_out(ctx) {
        ctx.record(
            state,
            Entry::Blocked {
                task: task.into(),
                reason: why,
            },
        )?;
        return Ok(None);
    }
    let worktree = ctx.worktree(task);
    let branch = ctx.branch(task);
    // A task in conflict gets a session that merges the integration tip into its branch
    // and resolves the conflicts, reviewed like the task (its own review cycle).
    let (resolve, fresh) = match state.lane(task) {
        Lane::Conflict { files, .. } => (Some(files.clone()), true),
        Lane::Running { resolve, .. } => (resolve.clone(), false),
        _ => (None, false),
    };
    // A session cut off by a crash keeps its worktree, branch and base: adopted. A task
    // started again (after a pause, or on `--resume`) keeps its branch, cut where it was.
    let branch_at = ctx.checkout.ref_target(&format!("refs/heads/{branch}"));
    let base = match state.lane(task) {
        Lane::Running { base, .. } => base.clone(),
        Lane::Conflict { .. } => state.tip.clone(),
        _ => match &branch_at {
            Some(at) => ctx
                .checkout
                .run(&["merge-base", at, &state.tip])
                .unwrap_or_else(|_| state.tip.clone()),
            None => state.tip.clone(),
        },
    };
    ctx.record(
        state,
        Entry::Session {
            task: task.into(),
            branch: branch.clone(),
            worktree: worktree.display().to_string(),
            base: base.clone(),
            agent: Some(agent.name().into()),
            resolve: resolve.clone(),
        },
    )?;
    ctx.ensure_worktree(
        &worktree,
        At::Branch {
            name: &branch,
            exists: branch_at.is_some(),
            base: &base,
        },
    )?;
    if resolve.is_some() {
        let gate = ctx.gate(task);
        if fresh && gate.exists() {
            gate::set_aside(&gate).map_err(|e| e.to_string())?;
        }
        merge::start_resolution(&worktree, &base)?;
    }
    let number = crate::model::text::decimal(task).unwrap_or_default();
    gate::prepare(ctx, task, &worktree, Due::Code(number), budget::left(ctx))
        .map_err(|e| format!("cannot prepare the gate of task {task}: {e}"))?;
    Ok(Some(Live {
        base,
        checkout: ctx.checkout.status().unwrap_or_default(),
        agent,
        resolving: resolve.is_some(),
    }))
}

/// One session, on a lane's thread of its own. Whatever happens there, the driver hears
/// of the lane's end: a panic (a bug of Taskie's, never the agent's doing) is caught and
/// becomes the session's failure, with its agent stopped, so the task is blocked naming
/// it (its branch kept) instead of the driver waiting forever for a lane that is gone.
fn lane(
    ctx: &Context,
    task: &str,
    worktree: &Path,
    agent: Client,
    resolve: Option<&[String]>,
) -> Ended {
    std::panic::catch_unwind(AssertUnwindSafe(|| {
        test_panic(task);
        session::run(ctx, task, worktree, agent, resolve)
    }))
    .unwrap_or_else(|panic| {
        session::stop_leftover(&ctx.gate(task));
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into());
        Ended {
            task: task.to_string(),
            status: Err(format!(
                "Taskie's lane for it panicked ({what}), a bug of Taskie's: its agent was stopped and \
                 the branch {} is kept; `taskie run --resume` tries it again",
                ctx.branch(task)
            )),
        }
    })
}

/// Test builds only: `TASKIE_TEST_PANIC_LANE=<task>` makes that task's lane panic, as a
/// bug there would.
#[cfg(debug_assertions)]
fn test_panic(task: &str) {
    if crate::env::test_switches().panic_lane.as_deref() == Some(task) {
        panic!("TASKIE_TEST_PANIC_LANE names task {task}");
    }
}

/// Release builds: never.
#[cfg(not(debug_assertions))]
#[inline(always)]
fn test_panic(_: &str) {}

/// What a session of `task` came to; a resolution's passed review also needs the merge
/// it made to be a true one (SPEC §23: never a conflict marker or a deletion landed).
fn verdict(
    ctx: &Context,
    task: &str,
    agent: Client,
    base: &str,
    status: &std::result::Result<i32, String>,
    outside: &[String],
    resolving: bool,
) -> Entry {
    let entry = judge(ctx, task, agent, base, status, outside);
    match &entry {
        Entry::Reviewed { commit, .. } if resolving => {
            let reviewed = ctx.checkout.ref_target(&ctx.pin(task)).unwrap_or_default();
            match merge::check_resolution(ctx, base, &reviewed, commit) {
                None => entry,
                Some(why) => Entry::Blocked {
                    task: task.into(),
                    reason: format!(
                        "its conflict with {} was not resolved: {why}; the branch {} is kept",
                        ctx.integration_branch(),
                        ctx.branch(task)
                    ),
                },
            }
        }
        _ => entry,
    }
}

/// When each paused task may start again, as an instant of this process's clock: a
/// reset the journal names that is at most [`LONGEST_WAIT_SECS`] away. Once known, kept
/// (the clock a test fixes with `TASKIE_TEST_NOW` does not move).
fn note_waits(state: &RunState, waits: &mut BTreeMap<String, Instant>) {
    let now = crate::clock::now_unix();
    for (task, lane) in &state.lanes {
        if let Lane::Paused {
            until: Some(until), ..
        } = lane
            && !waits.contains_key(task)
            && until - now <= LONGEST_WAIT_SECS
        {
            let secs = u64::try_from(until - now).unwrap_or(0);
            waits.insert(task.clone(), Instant::now() + Duration::from_secs(secs));
        }
    }
}

/// The CLIs waiting for their usage limit: those of paused lanes.
fn paused_clis(ctx: &Context, state: &RunState) -> Vec<Client> {
    state
        .lanes
        .iter()
        .filter(|(_, l)| matches!(l, Lane::Paused { agent: Some(_), .. }))
        .map(|(_, l)| ctx.agent_of(l))
        .collect()
}

/// What changed in the user's checkout between two `git status` listings.
fn changed(before: &[String], after: &[String]) -> Vec<String> {
    after
        .iter()
        .filter(|l| !before.contains(l))
        .chain(before.iter().filter(|l| !after.contains(l)))
        .map(|l| l.get(3..).unwrap_or(l).to_string())
        .collect()
}

/// Runs tasks until every one is merged, blocked, in conflict or skipped.
pub fn tasks(ctx: &Context, state: &mut RunState) -> Result<()> {
    // Sessions a crash cut off: what they left is judged as it stands, and a session
    // that had not passed is started again in the same worktree.
    let cut_off: Vec<String> = state
        .lanes
        .iter()
        .filter(|(_, l)| matches!(l, Lane::Running { .. }))
        .map(|(t, _)| t.clone())
        .collect();
    let (tx, rx) = mpsc::channel::<Ended>();
    let mut waits: BTreeMap<String, Instant> = BTreeMap::new();
    std::thread::scope(|scope| -> Result<()> {
        let mut live: BTreeMap<String, Live> = BTreeMap::new();
        let start = |state: &mut RunState,
                     task: &str,
                     agent: Client,
                     live: &mut BTreeMap<String, Live>|
         -> Result<()> {
            let Some(l) = begin(ctx, state, task, agent)? else {
                ctx.say(&format!(
                    "task {task}: blocked before it started: the review budget is spent"
                ));
                return Ok(());
            };
            let what = if l.resolving {
                "session resolving its conflict"
            } else {
                "session"
            };
            ctx.say(&format!(
                "task {task}: {} {what} started in {} (branch {})",
                agent.name(),
                ctx.worktree(task).display(),
                ctx.branch(task)
            ));
            live.insert(task.to_string(), l);
            let tx = tx.clone();
            let task = task.to_string();
            let worktree = ctx.worktree(&task);
            let resolve = match state.lane(&task) {
                Lane::Running { resolve, .. } => resolve.clone(),
                _ => None,
            };
            scope.spawn(move || {
                let _ = tx.send(lane(ctx, &task, &worktree, agent, resolve.as_deref()));
            });
            Ok(())
        };
        for task in cut_off {
            let (base, agent, resolving) = match state.lane(&task) {
                l @ Lane::Running { base, resolve, .. } => {
                    (base.clone(), ctx.agent_of(l), resolve.is_some())
                }
                _ => continue,
            };
            // The cut-off session's agent may still be running: stopped first, so what it
            // left is final when judged.
            session::stop_leftover(&ctx.gate(&task));
            match verdict(ctx, &task, agent, &base, &Ok(0), &[], resolving) {
                e @ Entry::Reviewed { .. } => ctx.record(state, e)?,
                _ => start(state, &task, agent, &mut live)?,
            }
        }
        loop {
            for (task, because) in schedule::to_skip(&ctx.tasks, state) {
                ctx.say(&format!(
                    "task {task}: skipped (it depends on task {because}, which will not merge)"
                ));
                ctx.record(state, Entry::Skipped { task, because })?;
            }
            while let Some(task) = schedule::next_merge(&ctx.tasks, state) {
                merge::merge(ctx, state, &task)?;
                match state.lane(&task) {
                    Lane::Merged { commit } => ctx.say(&format!(
                        "task {task}: merged into {} as {}",
                        ctx.integration_branch(),
                        short(commit)
                    )),
                    Lane::Conflict { files, .. } => ctx.say(&format!(
                        "task {task}: conflicts with the integration branch in {}; nothing merged, branch {} kept{}",
                        files.join(", "),
                        ctx.branch(&task),
                        if schedule::resolvable(state, &task) {
                            "; a session resolves it"
                        } else {
                            ""
                        }
                    )),
                    _ => {}
                }
            }
            merge::clean_merged(ctx, state);
            // Paused tasks whose limit has reset wait again, first in line.
            note_waits(state, &mut waits);
            let now = Instant::now();
            for task in waits
                .iter()
                .filter(|(_, at)| **at <= now)
                .map(|(t, _)| t.clone())
                .collect::<Vec<_>>()
            {
                waits.remove(&task);
                if let Lane::Paused { agent, .. } = state.lane(&task) {
                    ctx.say(&format!("task {task}: the usage limit has reset"));
                    // A reviewer's pause was waited out: lifted in the gate (as `taskie
                    // resume` does), so the next session's hook runs the review.
                    if agent.is_none() {
                        gate::lift_pause(ctx, &task).map_err(|e| {
                            format!("cannot lift the pause of task {task}'s gate: {e}")
                        })?;
                    }
                    ctx.record(state, Entry::Retry { task })?;
                }
            }
            let busy: Vec<Client> = live.values().map(|l| l.agent).collect();
            let paused = paused_clis(ctx, state);
            let vendors = schedule::Vendors {
                run: &ctx.agents,
                live: &busy,
                paused: &paused,
            };
            for (task, agent) in schedule::to_start(&ctx.tasks, state, vendors, state.jobs) {
                start(state, &task, agent, &mut live)?;
            }
            let wake = waits.values().min().copied();
            if live.is_empty() {
                if schedule::to_skip(&ctx.tasks, state).is_empty()
                    && schedule::next_merge(&ctx.tasks, state).is_none()
                {
                    let Some(at) = wake else {
                        return Ok(());
                    };
                    ctx.say(&format!(
                        "waiting {}s for a usage limit to reset",
                        at.saturating_duration_since(Instant::now()).as_secs()
                    ));
                    std::thread::sleep(at.saturating_duration_since(Instant::now()));
                }
                continue;
            }
            let ended = match wake {
                Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                    Ok(ended) => ended,
                    Err(mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(e) => return Err(e.to_string()),
                },
                None => rx.recv().map_err(|e| e.to_string())?,
            };
            let Some(l) = live.remove(&ended.task) else {
                continue;
            };
            let outside = changed(&l.checkout, &ctx.checkout.status().unwrap_or_default());
            let entry = verdict(
                ctx,
                &ended.task,
                l.agent,
                &l.base,
                &ended.status,
                &outside,
                l.resolving,
            );
            match &entry {
                Entry::Reviewed { task, commit } => {
                    ctx.say(&format!(
                        "task {task}: code review passed on {}",
                        short(commit)
                    ));
                    let _ = ctx.checkout.run(&["update-ref", &ctx.pin(task), commit]);
                }
                Entry::Blocked { task, reason } => {
                    ctx.say(&format!("task {task}: blocked: {reason}"))
                }
                Entry::Paused {
                    task,
                    until,
                    reason,
                    agent,
                } => {
                    let whose = agent.as_deref().map_or(String::new(), |a| {
                        format!("; no {a} session starts until then")
                    });
                    ctx.say(&format!(
                        "task {task}: paused: {reason}, {}",
                        pause_words(*until, &whose)
                    ));
                }
                _ => {}
            }
            ctx.record(state, entry)?;
        }
    })
}

/// The all-code review of the merged result, in the integration worktree, by a session
/// like the others; `Ok(true)` when it passed (the integration tip is then its commit).
pub fn final_review(ctx: &Context, state: &mut RunState) -> Result<bool> {
    if state.final_passed.is_some() {
        return Ok(true);
    }
    let tip = ctx.tip().ok_or("the integration branch is gone")?;
    let worktree = ctx.integration_worktree();
    if state.final_review.as_deref() != Some(tip.as_str()) {
        ctx.record(
            state,
            Entry::FinalReview {
                commit: tip.clone(),
            },
        )?;
    }
    ctx.ensure_worktree(&worktree, At::Detached(&tip))?;
    let git = ctx.checkout.at(&worktree);
    // A session cut off by a crash may have committed fixes on top: keep them.
    let head = git.commit_of("HEAD").map_err(|e| e.to_string())?;
    if !ctx.checkout.is_ancestor(&tip, &head) {
        git.reset_to(&tip).map_err(|e| e.to_string())?;
    }
    let agent = ctx.agents[0];
    // A usage limit (the agent's or the reviewer's) pauses the review as it pauses a
    // task: the run waits for a reset it can wait for, then starts the session again in
    // the same gate (its review cycle where it was).
    loop {
        gate::prepare(ctx, "all", &worktree, Due::AllCode, budget::left(ctx))
            .map_err(|e| format!("cannot prepare the all-code review: {e}"))?;
        ctx.say(&format!(
            "all-code review: session started on {}",
            short(&tip)
        ));
        let before = ctx.checkout.status().unwrap_or_default();
        let ended = session::run(ctx, "all", &worktree, agent, None);
        let outside = changed(&before, &ctx.checkout.status().unwrap_or_default());
        return match judge(ctx, "all", agent, &tip, &ended.status, &outside) {
            Entry::Reviewed { commit, .. } => {
                if commit != tip {
                    // Fixes the review asked for, committed on top of the tip: a fast-forward.
                    ctx.checkout
                        .update_ref(&ctx.integration_ref(), &commit, &tip)
                        .map_err(|e| e.to_string())?;
                }
                ctx.say(&format!("all-code review passed on {}", short(&commit)));
                ctx.record(state, Entry::FinalPassed { commit })?;
                Ok(true)
            }
            Entry::Blocked { reason, .. } => {
                ctx.say(&format!("all-code review: {reason}"));
                Ok(false)
            }
            Entry::Paused {
                until,
                reason,
                agent: whose,
                ..
            } => {
                ctx.say(&format!(
                    "all-code review: paused: {reason}, {}",
                    pause_words(until, "")
                ));
                match until.map(|t| t - crate::clock::now_unix()) {
                    Some(secs) if secs <= LONGEST_WAIT_SECS => {
                        std::thread::sleep(Duration::from_secs(u64::try_from(secs).unwrap_or(0)));
                        ctx.say("all-code review: the usage limit has reset");
                        // A reviewer's pause waited out is lifted, as for a task.
                        if whose.is_none() {
                            gate::lift_pause(ctx, "all").map_err(|e| {
                                format!("cannot lift the pause of the all-code review's gate: {e}")
                            })?;
                        }
                        continue;
                    }
                    _ => Ok(false),
                }
            }
            _ => Ok(false),
        };
    }
}

/// When a paused session starts again, as the run says it: `until <time><whose>; …`.
fn pause_words(until: Option<i64>, whose: &str) -> String {
    match until {
        Some(t) if t - crate::clock::now_unix() <= LONGEST_WAIT_SECS => format!(
            "until {}{whose}; the run starts it again then",
            crate::model::pause::at(t)
        ),
        Some(t) => format!(
            "until {}{whose}; that is too far to wait for: `taskie run --resume` after it",
            crate::model::pause::at(t)
        ),
        None => {
            format!("with no reset time given{whose}: `taskie run --resume` once the limit resets")
        }
    }
}

/// `--land ff`: the user's branch fast-forwards to the reviewed tip; anything else is
/// refused with the reason (never a force).
pub fn land(ctx: &Context, state: &mut RunState) -> Result<Option<String>> {
    let Some(commit) = state.final_passed.clone() else {
        return Ok(None);
    };
    if state.land != Land::Ff {
        return Ok(None);
    }
    let branch = state.branch.clone();
    if ctx
        .checkout
        .ref_target(&format!("refs/heads/{branch}"))
        .as_deref()
        == Some(commit.as_str())
    {
        return Ok(None);
    }
    let by_hand = format!(
        "run `git checkout {branch} && git merge --ff-only {}`",
        ctx.integration_branch()
    );
    if ctx.checkout.current_branch().as_deref() != Some(branch.as_str()) {
        return Ok(Some(format!(
            "not landed: the checkout is no longer on {branch}; {by_hand}"
        )));
    }
    let dirty = ctx
        .checkout
        .run(&["status", "--porcelain", "--untracked-files=no"])
        .map_err(|e| e.to_string())?;
    if !dirty.is_empty() {
        return Ok(Some(format!(
            "not landed: the checkout has uncommitted changes; commit or stash them, then {by_hand}"
        )));
    }
    if state.landed.is_none() {
        ctx.record(
            state,
            Entry::Land {
                branch: branch.clone(),
                commit: commit.clone(),
            },
        )?;
    }
    // A fast-forward or nothing: git refuses anything else.
    if let Err(e) = ctx.checkout.run(&["merge", "--ff-only", "-q", &commit]) {
        return Ok(Some(format!("not landed: {e}")));
    }
    // A plan git does not track got no statuses on the integration branch: they are
    // written into the checkout now, at landing.
    if merge::tracked_tasks_md(ctx).is_none() {
        let path = ctx.project.plan_dir(&ctx.plan).join("tasks.md");
        let merged: Vec<String> = state
            .lanes
            .iter()
            .filter(|(_, l)| matches!(l, Lane::Merged { .. }))
            .map(|(t, _)| t.clone())
            .collect();
        if let Ok(text) = std::fs::read_to_string(&path) {
            let marked = crate::model::tasks::with_status(&text, &merged, "done");
            if marked != text {
                crate::store::atomic::write_durable(&path, marked.as_bytes())
                    .map_err(|e| format!("landed, but {} was not updated: {e}", path.display()))?;
            }
        }
    }
    Ok(None)
}

/// Ends the run: the worktrees of merged work go, the outcome is journalled.
pub fn end(ctx: &Context, state: &mut RunState, outcome: Outcome) -> Result<()> {
    merge::clean_merged(ctx, state);
    if outcome == Outcome::Done {
        let _ = ctx.remove_worktree(&ctx.integration_worktree());
    }
    ctx.record(state, Entry::End { outcome })
}
