//! The plan's review budget across a run (SPEC §18, §23): what the plan and every session's
//! gate have spent, checked before a session starts.

use crate::commands::run::context::Context;
use crate::model::plan_file::SPEND_FILE;
use crate::store::snapshot;

/// The plan's budget (`max_cost_usd` of its state.json), if it has one.
fn budget(ctx: &Context) -> Option<f64> {
    match snapshot::read_state(&ctx.target().state_path()) {
        Ok(Some(state)) => state.max_cost_usd,
        _ => None,
    }
}

/// What the plan's own ledger and every gate of the run record as spent.
fn spent(ctx: &Context) -> f64 {
    let mut total = snapshot::ledger(&ctx.project.plan_dir(&ctx.plan), &ctx.plan)
        .plan
        .cost_usd;
    if let Ok(entries) = std::fs::read_dir(&ctx.work) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let dir = crate::store::project::PlanIn::new(entry.path(), &ctx.plan).dir();
            if name.starts_with("gate-") && dir.join(SPEND_FILE).is_file() {
                total += snapshot::ledger(&dir, &ctx.plan).plan.cost_usd;
            }
        }
    }
    total
}

/// What is left of the budget: `None` without one.
pub fn left(ctx: &Context) -> Option<f64> {
    budget(ctx).map(|b| crate::model::spend::remaining(b, spent(ctx)))
}

/// Why no further session may start, if the budget is spent.
pub fn spent_out(ctx: &Context) -> Option<String> {
    let budget = budget(ctx)?;
    let spent = spent(ctx);
    (crate::model::spend::remaining(budget, spent) <= 0.0).then(|| {
        format!(
            "the plan's review budget is spent ({} of {}); raise max_cost_usd in {} to go on",
            crate::model::spend::money(spent),
            crate::model::spend::money(budget),
            ctx.target().rel(crate::model::plan_file::STATE_FILE)
        )
    })
}
