//! `taskie run` (SPEC §23): drives a plan's tasks through agent sessions in worktrees of
//! their own, merges what passed review, and ends with the all-code review. This file
//! reads the options and the plan and hands over to the driver; docs/run.md tells the
//! whole story.

use crate::commands::Invocation;
use crate::error::Error;
use crate::model::host::Client;
use crate::model::run::journal::{Entry, Land, Lane, Outcome, RunState};
use crate::model::run::schedule;
use crate::store::git::Git;
use std::io::Write;

pub mod agent;
pub mod budget;
pub mod context;
pub mod driver;
pub mod gate;
pub mod judge;
pub mod merge;
pub mod progress;
pub mod report;
pub mod session;
pub mod setup;

/// The command line of `taskie run`.
#[derive(Debug, Clone)]
pub struct Options {
    pub plan: Option<String>,
    pub jobs: usize,
    /// The CLIs sessions run (at least one).
    pub agents: Vec<Client>,
    pub land: Land,
    pub json: bool,
    pub resume: bool,
    /// What the run reads from the environment, resolved where it was entered.
    pub settings: crate::commands::settings::RunSettings,
}

pub fn run(inv: &Invocation, opts: &Options, out: &mut dyn Write) -> Result<(), Error> {
    let target = inv.target(opts.plan.as_deref())?;
    let gathered = target.gather()?;
    if !gathered.errors.is_empty() {
        return Err(Error::Invalid {
            plan: target.plan,
            errors: gathered.errors,
            listed: false,
        });
    }
    let (top, common) = Git::new(&target.project.root)
        .top_and_common_dir()
        .map_err(|e| Error::Refused(format!("taskie run needs a git repository: {e}")))?;
    let checkout = Git::new(top);
    // One driver per plan.
    let run_lock = crate::store::run::run_lock(&target.plan);
    let _held = match crate::store::lock::try_lock(&target.project.locks(), &run_lock)? {
        Some(held) => held,
        None => {
            return Err(Error::Locked {
                plan: target.plan.clone(),
                holder: format!(
                    "another `taskie run` drives it ({})",
                    crate::store::lock::holder_text(&target.project.locks(), &run_lock)
                ),
            });
        }
    };
    let (ctx, mut state) = setup::open(&target, checkout, &common, opts)?;
    let fail = |e: String| Error::Refused(format!("run {}: {e}", ctx.run));
    // A run that ended partial goes on with what was left: blocked, conflicted and
    // skipped tasks wait again (their branches, worktrees and gates kept).
    if opts.resume && state.outcome == Some(Outcome::Partial) {
        let left: Vec<String> = state
            .lanes
            .iter()
            .filter(|(_, l)| l.is_settled() && !matches!(l, Lane::Merged { .. }))
            .map(|(t, _)| t.clone())
            .collect();
        let paused: Vec<String> = state
            .lanes
            .iter()
            .filter(|(_, l)| matches!(l, Lane::Paused { .. }))
            .map(|(t, _)| t.clone())
            .collect();
        for task in left {
            ctx.say(&format!("task {task}: tried again"));
            ctx.record(&mut state, Entry::Retry { task: task.clone() })
                .map_err(fail)?;
            // A fresh review cycle (but a paused one goes on where it was): the old gate
            // is kept beside, for the record.
            let gate = ctx.gate(&task);
            if gate.exists() && !paused.contains(&task) {
                crate::commands::run::gate::set_aside(&gate)?;
            }
        }
    }
    if state.outcome == Some(Outcome::Done) {
        ctx.say(&format!("run {} already ended: nothing to resume", ctx.run));
    } else {
        ctx.progress.update();
        // The gates change between journal entries (a review starts, its cost comes in):
        // looked at every second while the driver works.
        let working = progress::Working::default();
        std::thread::scope(|scope| {
            scope.spawn(|| working.watch(&ctx.progress));
            // Dropped however `drive` ends (a panic too), which ends the watch.
            let _done = working.done_on_drop();
            drive(&ctx, &mut state)
        })
        .map_err(fail)?;
    }
    ctx.progress.finish();
    report::print(&ctx, &state, out)?;

    match state.outcome {
        Some(Outcome::Done) => Ok(()),
        _ => Err(Error::Refused(format!(
            "run {} ended partial: {}",
            ctx.run,
            report::left(&ctx, &state)
        ))),
    }
}

/// The run from where its state stands to its end: the tasks, the all-code review, the
/// landing, the outcome journalled.
fn drive(ctx: &context::Context, state: &mut RunState) -> Result<(), String> {
    driver::tasks(ctx, state)?;
    let mut note = None;
    let outcome = if schedule::all_merged(&ctx.tasks, state) && driver::final_review(ctx, state)? {
        note = driver::land(ctx, state)?;
        Outcome::Done
    } else {
        Outcome::Partial
    };
    driver::end(ctx, state, outcome)?;
    if let Some(note) = note {
        ctx.say(&note);
    }
    Ok(())
}
