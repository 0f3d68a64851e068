//! `taskie validate [--plan ID]` (SPEC §7, §12): the structure errors of a plan, one per
//! line; exit status 1 when there is any.

use crate::commands::Invocation;
use crate::error::Error;
use crate::store::snapshot;
use std::io::Write;

pub fn run(inv: &Invocation, plan: Option<&str>, out: &mut dyn Write) -> Result<(), Error> {
    let target = inv.target(plan)?;
    let gathered = target.gather()?;
    // SPEC §2: what a person's tools leave beside the plan is not the plan's.
    let leftovers = crate::model::validate::leftovers(&gathered.files);
    if !leftovers.is_empty() {
        writeln!(
            out,
            "note: ignored {} (editor or system files, not the plan's)",
            leftovers.join(", ")
        )?;
    }
    // taskie's own files are not structure (SPEC §7), but one taskie cannot use is an
    // error all the same: its text would otherwise be read through a link, or lost.
    let unusable = snapshot::own_file_problems(&target.dir(), &|name| target.rel(name));
    for problem in &unusable {
        writeln!(out, "{problem}")?;
    }
    if gathered.errors.is_empty() && !unusable.is_empty() {
        return Err(Error::Refused(format!(
            "plan '{}' has files taskie cannot use (listed above); fix them, then run `taskie validate --plan {}` \
             again",
            target.plan, target.plan
        )));
    }
    // state.json through the one reader status and the hook use: a misspelt field gets the
    // same "did you mean" here as there.
    if let Err(error) = &gathered.state {
        for e in &gathered.errors {
            writeln!(out, "{e}")?;
        }
        return Err(Error::State {
            plan: target.plan.clone(),
            error: error.clone(),
        });
    }
    if gathered.errors.is_empty() {
        writeln!(
            out,
            "ok: plan '{}' ({}) has a valid structure",
            target.plan,
            target.rel_dir()
        )?;
        for missing in gathered.facts().missing_task_files() {
            writeln!(
                out,
                "warning: tasks.md lists the task of {missing}, which does not exist (one task file per task: \
                 write {})",
                target.rel(&missing)
            )?;
        }
        return Ok(());
    }
    for e in &gathered.errors {
        writeln!(out, "{e}")?;
    }
    Err(Error::Invalid {
        plan: target.plan,
        errors: gathered.errors,
        listed: true,
    })
}
