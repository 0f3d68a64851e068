//! `taskie plans` (SPEC §12): every plan of the project, one entry each: its phase →
//! next_phase, whether it is paused or hard-stopped, which session works on it, and when
//! its files last changed. The plan the other commands act on without `--plan` is marked.

use crate::commands::Invocation;
use crate::error::Error;
use crate::model::{cycle, pause};
use crate::store::select::{self, Selector};
use crate::store::sessions;
use crate::store::snapshot::Gathered;
use serde::Serialize;
use std::io::Write;
use std::time::SystemTime;

/// One plan as `taskie plans` shows it; `--json` prints a list of these.
#[derive(Debug, Serialize)]
struct Entry {
    id: String,
    /// `null` when the plan has no (usable) state.json.
    phase: Option<String>,
    next_phase: Option<String>,
    /// Why the plan's reviews wait, when they do: a hard stop's reason, a pause, a
    /// missing or unusable state.json, structure errors.
    condition: Option<String>,
    /// `paused_until` while the pause lasts (RFC 3339).
    paused_until: Option<String>,
    /// The hard stop's reason (`max_reviews_reached`, …), when the cycle is stopped.
    hard_stop: Option<&'static str>,
    /// The session that used this plan in the last 30 minutes, if any.
    session: Option<String>,
    session_active_seconds_ago: Option<u64>,
    /// When a plan file (`*.md`, state.json) last changed (RFC 3339).
    changed: Option<String>,
    /// The plan the other commands act on without `--plan`.
    default: bool,
}

/// When the newest `*.md` or state.json of a plan changed.
fn last_change(dir: &std::path::Path) -> Option<SystemTime> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".md") || name == crate::model::plan_file::STATE_FILE
        })
        .filter_map(|e| e.metadata().ok()?.modified().ok())
        .max()
}

/// A file's time in the shape of `paused_until` beside it (to the second, UTC).
fn stamp(t: SystemTime) -> String {
    jiff::Timestamp::try_from(t)
        .map(|t| pause::stamp(t.as_second()))
        .unwrap_or_default()
}

/// "3 min ago", "2 h ago", "4 days ago".
fn ago(secs: u64) -> String {
    match secs / 60 {
        0 => "just now".into(),
        m @ 1..=59 => format!("{m} min ago"),
        m @ 60..=2879 => format!("{} h ago", m / 60),
        m => format!("{} days ago", m / 1440),
    }
}

fn entry(project: &crate::store::project::Project, id: &str) -> Entry {
    let dir = project.plan_dir(id);
    let gathered = Gathered::read(&dir, id, false);
    let (state, errors, spent, now) = match &gathered {
        Ok(g) => (
            g.state.as_ref().ok().and_then(Option::as_ref),
            g.errors.len(),
            g.spent_usd,
            g.now,
        ),
        Err(_) => (None, 0, 0.0, crate::clock::now_unix()),
    };
    let hard_stop = state
        .and_then(|s| cycle::hard_stop(s, spent))
        .filter(|_| state.is_some_and(|s| cycle::in_progress(s).is_some()))
        .map(cycle::StopReason::as_str);
    let paused = state
        .and_then(|s| s.paused_until)
        .filter(|u| pause::is_paused(Some(*u), now));
    let condition = match (&gathered, state) {
        (Err(e), _) => Some(format!("cannot be read: {e}")),
        (Ok(g), None) => Some(match &g.state {
            Err(e) => format!("state.json cannot be used: {e}"),
            Ok(_) => format!("no state.json yet: `taskie init {id}` starts its reviews"),
        }),
        _ if hard_stop.is_some() => Some(format!(
            "hard stop ({}): `taskie status --plan {id}` says how to go on",
            hard_stop.unwrap_or_default()
        )),
        _ if paused.is_some() => Some(format!(
            "paused until {} (a reviewer's usage limit): `taskie resume --plan {id}` lifts it",
            pause::when(paused.unwrap_or_default(), now)
        )),
        _ if errors > 0 => Some(format!(
            "{errors} structure error(s): `taskie validate --plan {id}` lists them"
        )),
        _ => None,
    };
    let holder = sessions::held_by_others(project, None).remove(id);
    Entry {
        id: id.into(),
        phase: state.map(|s| s.phase.clone()),
        next_phase: state.and_then(|s| s.next_phase.clone()),
        condition,
        paused_until: paused.map(pause::stamp),
        hard_stop,
        session: holder.as_ref().map(|h| h.session.clone()),
        session_active_seconds_ago: holder.map(|h| h.ago.as_secs()),
        changed: last_change(&dir).map(stamp),
        default: false,
    }
}

/// `env_plan`: `TASKIE_PLAN`, the plan marked as the one a command would act on.
pub fn run(
    inv: &Invocation,
    env_plan: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let project = inv.project()?;
    let mut ids: Vec<String> = match crate::store::scan::entries(&project.plans()) {
        Ok(entries) => entries
            .into_iter()
            .filter(|(_, is_dir)| *is_dir)
            .filter_map(|(name, _)| name.into_string().ok())
            .filter(|n| crate::model::plan_file::valid_id(n))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::Io(e)),
    };
    let default = select::select(
        &project,
        env_plan,
        inv.session.as_ref(),
        Selector::Command,
        &mut |_| {},
    )
    .ok()
    .flatten()
    .map(|s| s.id);
    let mut entries: Vec<Entry> = ids
        .drain(..)
        .map(|id| {
            let mut e = entry(&project, &id);
            e.default = default.as_deref() == Some(id.as_str());
            e
        })
        .collect();
    // Newest first: the plan a command picks by age heads the list.
    entries.sort_by(|a, b| b.changed.cmp(&a.changed).then(a.id.cmp(&b.id)));
    if json {
        let text = serde_json::to_string_pretty(&entries).map_err(std::io::Error::other)?;
        writeln!(out, "{text}")?;
        return Ok(());
    }
    if entries.is_empty() {
        writeln!(
            out,
            "No plans in {}: start one with /taskie:new-plan (it writes .taskie/plans/<plan-id>/plan.md).",
            project.plans().display()
        )?;
        return Ok(());
    }
    let now = SystemTime::now();
    let width = entries.iter().map(|e| e.id.len()).max().unwrap_or(0);
    for e in &entries {
        let phases = match &e.phase {
            Some(p) => format!(
                "{} → {}",
                if p.is_empty() { "\"\"" } else { p },
                e.next_phase.as_deref().unwrap_or("null")
            ),
            None => "-".into(),
        };
        writeln!(
            out,
            "{} {:width$}  {phases}",
            if e.default { "*" } else { " " },
            e.id
        )?;
        let mut facts = Vec::new();
        if let Some(changed) = e
            .changed
            .as_deref()
            .and_then(|c| c.parse::<jiff::Timestamp>().ok())
        {
            let secs = jiff::Timestamp::try_from(now)
                .ok()
                .map_or(0, |n| (n.as_second() - changed.as_second()).max(0) as u64);
            facts.push(format!("changed {}", ago(secs)));
        }
        if let (Some(s), Some(a)) = (&e.session, e.session_active_seconds_ago) {
            facts.push(format!("session {s} works on it (active {})", ago(a)));
        }
        if let Some(c) = &e.condition {
            facts.push(c.clone());
        }
        if !facts.is_empty() {
            let text = crate::paint::wrap(&facts.join("; "), 4, crate::paint::WIDTH);
            writeln!(out, "    {text}")?;
        }
    }
    if entries.iter().any(|e| e.default) {
        writeln!(
            out,
            "* {}",
            crate::paint::wrap(
                "the plan taskie commands act on without --plan (TASKIE_PLAN, else this session's plan, else \
                 the newest)",
                2,
                crate::paint::WIDTH
            )
        )?;
    }
    Ok(())
}
