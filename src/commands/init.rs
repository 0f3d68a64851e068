//! `taskie init <plan-id>` (SPEC §12): the state.json that starts a plan's reviewed
//! workflow, for a plan whose plan.md is written.

use crate::commands::{Invocation, Target};
use crate::error::Error;
use crate::model::state::State;
use std::io::Write;

/// A cycle passes after `clean_reviews_required` clean reviews in a row, so fewer
/// reviews than that (but not 0, which disables reviews) can only end in a hard stop.
pub fn too_few_reviews(s: &State) -> Option<String> {
    (s.max_reviews > 0 && s.max_reviews < s.clean_reviews_required).then(|| {
        format!(
            "max_reviews {} is below clean_reviews_required {}: no review cycle can pass, each ends in a hard stop \
             where a human runs `taskie advance`; use --max-reviews {} or more (or 0 to disable reviews)",
            s.max_reviews, s.clean_reviews_required, s.clean_reviews_required
        )
    })
}

/// `taskie init <plan-id> [--max-reviews N] [--tdd] [--force] [--reviewer K:M]…
/// [--review-mode M] [--max-cost-usd USD]`; `options` are the optional fields of SPEC
/// §18 as (field, text), checked by the rules `taskie state set` uses.
pub fn run(
    inv: &Invocation,
    plan: &str,
    max_reviews: u64,
    tdd: bool,
    force: bool,
    options: &[(&str, String)],
    out: &mut dyn Write,
) -> Result<(), Error> {
    let mut state = crate::model::machine::initial(max_reviews, tdd);
    for (field, text) in options {
        state.set_from_text(field, text).map_err(Error::Usage)?;
    }
    let write_first = |path: &str| {
        Error::Refused(format!(
            "{path} does not exist: write the plan there first (the agent does it with /taskie:new-plan), then \
             run `taskie init {plan}`"
        ))
    };
    // No .taskie anywhere above: the plan would start here.
    let project = inv.project().map_err(|e| match e {
        Error::NoProject(dir) => write_first(
            &Target::new(crate::store::project::Project::new(dir), plan)
                .file("plan.md")
                .display()
                .to_string(),
        ),
        e => e,
    })?;
    let target = Target {
        project,
        plan: plan.into(),
    };
    if !target.file("plan.md").is_file() {
        return Err(write_first(&target.rel("plan.md")));
    }
    let held = target.lock()?;
    // symlink_metadata: even a dangling link is something --force must be asked to replace.
    if !force && std::fs::symlink_metadata(target.state_path()).is_ok() {
        let now = match target.state() {
            Ok(Some(s)) => s.describe(),
            Ok(None) => "unreadable".into(),
            Err(e) => e.to_string(),
        };
        return Err(Error::Refused(format!(
            "{} already exists ({now}); nothing was changed. `taskie init {plan} --force` starts the plan's state over",
            target.rel(crate::model::plan_file::STATE_FILE)
        )));
    }
    if let Some(w) = too_few_reviews(&state) {
        eprintln!("taskie: warning: {w}");
    }
    target.write_state(&held, &state)?;
    // The plan's spend ledger starts empty (SPEC §18); a restarted plan keeps what it spent.
    let ledger = target.spend_path();
    if std::fs::symlink_metadata(&ledger).is_err() {
        crate::store::atomic::write_durable(
            &ledger,
            crate::model::spend::Ledger::default().to_json().as_bytes(),
        )?;
    }
    inv.bind(&target);
    // What the next stop does, by the hook's own rule: never promise a review it refuses.
    let next = if max_reviews == 0 {
        "Reviews are disabled (max_reviews 0): the hook moves past each review without running it."
            .to_string()
    } else if let Some(reason) = crate::model::cycle::hard_stop(&state, 0.0) {
        format!(
            "No review can run yet ({}): the next stop is a hard stop. {}",
            reason.as_str(),
            match reason {
                crate::model::cycle::StopReason::BudgetExhausted => format!(
                    "A budget of {} pays for nothing; set one with `taskie state set --plan {plan} max_cost_usd=<dollars>`.",
                    crate::model::spend::money(state.max_cost_usd.unwrap_or(0.0))
                ),
                _ => format!("`taskie status --plan {plan}` says how to resolve it."),
            }
        )
    } else if inv.audience == super::Audience::Person {
        "The hook runs plan-review #1 at the agent's next stop.".to_string()
    } else {
        "Stop now: the hook runs plan-review #1 when you end your turn.".to_string()
    };
    writeln!(
        out,
        "Initialised {}: phase new-plan, next_phase plan-review, max_reviews {max_reviews}, tdd {tdd}. {next}",
        target.rel(crate::model::plan_file::STATE_FILE)
    )?;
    Ok(())
}
