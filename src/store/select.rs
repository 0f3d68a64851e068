//! Which plan a run is about (SPEC §5 step 6).

use crate::model::plan_file::valid_id;
use crate::store::project::Project;
use crate::store::scan;
use crate::store::sessions::{self, SessionId};
use std::io;

/// The plan a run acts on, and why it was chosen (shown by `--dry-run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selected {
    pub id: String,
    pub why: String,
}

/// Why no plan could be used.
#[derive(Debug)]
pub enum SelectError {
    /// `--plan` / `TASKIE_PLAN` is not a valid id or names no plan directory.
    Explicit(String),
    Io(io::Error),
    /// The newest plan is bound to another session active within [`sessions::HELD_FOR`]:
    /// an unbound session's stop leaves it alone (SPEC §17).
    Held {
        plan: String,
        holder: sessions::Holder,
    },
}

impl std::fmt::Display for SelectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SelectError::Explicit(m) => f.write_str(m),
            SelectError::Io(e) => write!(f, "cannot read the plans directory: {e}"),
            SelectError::Held { plan, holder } => write!(
                f,
                "plan {plan} is being worked on by session {} (active {} ago), so this stop \
                 did nothing for it; run /taskie:continue-plan to take it over",
                holder.session,
                ago(holder.ago)
            ),
        }
    }
}

/// Who selects: the hook of a session leaves the newest plan alone while another session
/// is active on it (two live sessions stay on their own plans); a command never hides a
/// plan (SPEC §17), because a session id changes under the user with `/clear`, a crash or
/// a restart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selector {
    Hook,
    /// The hook's rule without its one write (the binding): `--dry-run` writes nothing.
    HookDryRun,
    Command,
}

/// The plan ids in `plans`, sorted (for a message naming what exists; at most 30).
fn existing_plans(plans: &std::path::Path) -> Vec<String> {
    let mut ids: Vec<String> = scan::entries(plans)
        .map(|entries| {
            entries
                .into_iter()
                .filter(|(_, is_dir)| *is_dir)
                .filter_map(|(name, _)| name.into_string().ok())
                .filter(|id| valid_id(id))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids.truncate(30);
    ids
}

/// Selects the plan (SPEC §5 step 6, §17): the one named explicitly, else the one bound
/// to `session`, else the most recently modified plan — for the hook of a session with an
/// id, not one held by another session. `warn` receives one line per skipped directory,
/// and for a command one line when the plan it chose is bound to another session.
pub fn select(
    project: &Project,
    explicit: Option<&str>,
    session: Option<&SessionId>,
    selector: Selector,
    warn: &mut dyn FnMut(String),
) -> Result<Option<Selected>, SelectError> {
    let plans = &project.plans();
    if let Some(id) = explicit {
        if !valid_id(id) {
            return Err(SelectError::Explicit(format!(
                "the plan id \"{}\" (from --plan or TASKIE_PLAN) is not valid: {}",
                crate::model::text::clip(id, 120),
                crate::model::plan_file::ID_RULE
            )));
        }
        let dir = plans.join(id);
        // symlink_metadata: a plan directory that is a link is not followed (it may point anywhere).
        if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            let known = existing_plans(plans);
            let which = if known.is_empty() {
                "there is no plan yet".to_string()
            } else {
                format!(
                    "the plans are: {}{}",
                    known.join(", "),
                    crate::model::text::did_you_mean(id, known.iter().map(String::as_str))
                )
            };
            return Err(SelectError::Explicit(format!(
                "the plan \"{id}\" (from --plan or TASKIE_PLAN) does not exist: no directory {}; {which}",
                dir.display()
            )));
        }
        return Ok(Some(Selected {
            id: id.into(),
            why: "named by --plan or TASKIE_PLAN".into(),
        }));
    }
    if let Some(id) = session.and_then(|s| sessions::bound_plan(project, s)) {
        return Ok(Some(Selected {
            id,
            why: "bound to this Claude Code session".into(),
        }));
    }
    // Bindings matter to a command (one line) and to the hook of a session with an id.
    let held = if selector == Selector::Command || session.is_some() {
        sessions::held_by_others(project, session)
    } else {
        Default::default()
    };
    let best = scan::newest_plan(plans, warn).map_err(SelectError::Io)?;
    // The hook of a session with an id looks only at the newest plan: a restarted session
    // must not start paying for an older one because the newest is taken. It leaves a plan
    // another session is active on alone, and otherwise binds to it, so its next stop
    // needs no scan.
    if selector != Selector::Command
        && let (Some(me), Some(id)) = (session, best.as_ref())
    {
        if let Some(holder) = held.get(id) {
            return Err(SelectError::Held {
                plan: id.clone(),
                holder: holder.clone(),
            });
        }
        if selector == Selector::Hook
            && let Err(e) = sessions::bind(project, me, id)
        {
            warn(format!("could not bind this session to plan {id}: {e}"));
        }
        return Ok(best.map(|id| Selected {
            id,
            why:
                "its *.md or state.json was modified most recently; this session is now bound to it"
                    .into(),
        }));
    }
    // Without a session id the hook reads no bindings: nothing is skipped or announced.
    if selector == Selector::Command
        && let Some(id) = best.as_ref()
        && let Some(h) = held.get(id)
    {
        // Said because it matters to whoever runs the command: an agent session is at
        // work on this plan, so its next stop may run a review of what this command
        // changes (or reads). Another session is told it shares the plan; the user's
        // own terminal (no session) when what it changes takes effect.
        warn(match session {
            Some(_) => format!(
                "note: plan {id} is also bound to session {}, active {} ago: that session's stops review this \
                 plan too (one at a time, under the plan lock)",
                h.session,
                ago(h.ago)
            ),
            None => format!(
                "note: agent session {} (active {} ago) works on plan {id}: its stops run this plan's \
                 reviews, so what you change here takes effect at its next stop",
                h.session,
                ago(h.ago)
            ),
        });
    }
    let why = "its *.md or state.json was modified most recently".to_string();
    Ok(best.map(|id| Selected { id, why }))
}

/// A short human duration: "12 minutes", "3 hours".
fn ago(d: std::time::Duration) -> String {
    let m = d.as_secs() / 60;
    match m {
        0 => "less than a minute".into(),
        1 => "1 minute".into(),
        2..=119 => format!("{m} minutes"),
        _ => format!("{} hours", m / 60),
    }
}
