//! `taskie validate [--plan ID]` (SPEC §7, §12): the structure errors of a plan, one per
//! line; exit status 1 when there is any.

use crate::commands::Invocation;
use crate::error::Error;
use std::io::Write;

pub fn run(inv: &Invocation, plan: Option<&str>, out: &mut dyn Write) -> Result<(), Error> {
    let target = inv.target(plan)?;
    let gathered = target.gather()?;
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
