//! One plan as read from disk, the same way for the hook and every command: the
//! listing, the structure errors, the task rows and state.json (SPEC §5 steps 7–9).
//! The rules for links and non-regular files live here and nowhere else.

use crate::model::plan_file::SPEND_FILE;
use crate::model::spend::Ledger;
use crate::model::state::{State, StateError};
use crate::model::tasks;
use crate::model::validate::{self, Listing};
use crate::store::atomic;
use crate::store::fs::{PLAN_FILE_LIMIT, read_regular};
use crate::store::project::Project;
use std::io;
use std::path::{Path, PathBuf};

/// Everything read from the plan directory (the struct lives with [`Facts`], which
/// borrows from it); read here.
pub use crate::model::facts::Gathered;

impl Gathered {
    pub fn read(dir: &Path, plan: &str, stop_hook_active: bool) -> std::io::Result<Gathered> {
        Gathered::gather(dir, plan, stop_hook_active, false)
    }

    /// [`Gathered::read`] for a caller holding the plan lock: the leftover temporary files
    /// of atomic writes (SPEC §5 step 7) are deleted on the way, found by the same
    /// directory listing instead of a second one.
    pub fn read_locked(
        dir: &Path,
        plan: &str,
        stop_hook_active: bool,
    ) -> std::io::Result<Gathered> {
        Gathered::gather(dir, plan, stop_hook_active, true)
    }

    fn gather(
        dir: &Path,
        plan: &str,
        stop_hook_active: bool,
        clean: bool,
    ) -> std::io::Result<Gathered> {
        let mut listing = list(dir)?;
        if clean {
            let leftover = |f: &String| f.starts_with(crate::model::plan_file::TEMP_PREFIX);
            if listing
                .files
                .iter()
                .any(|f| leftover(f) && f.contains('\u{FFFD}'))
            {
                // A name that is not UTF-8 is listed lossily: delete by the raw names.
                atomic::remove_leftovers(dir);
                listing = list(dir)?;
            } else {
                listing
                    .files
                    .retain(|f| !(leftover(f) && std::fs::remove_file(dir.join(f)).is_ok()));
            }
        }
        let tasks_bytes = if listing.files.iter().any(|f| f == "tasks.md") {
            read_regular(&dir.join("tasks.md"), PLAN_FILE_LIMIT)?
        } else {
            None
        };
        // Not UTF-8 is a structure error of rule 9 naming the line, not an I/O error.
        let tasks_md = tasks_bytes.as_deref().map(validate::TasksText::from_bytes);
        let errors = validate::validate_read(&listing, tasks_md.as_ref());
        let tasks = tasks_md
            .as_ref()
            .and_then(validate::TasksText::text)
            .and_then(|t| tasks::parse(t).ok())
            .unwrap_or_default();
        let state = read_state(&dir.join(crate::model::plan_file::STATE_FILE));
        let spent_usd = match &state {
            Ok(Some(s)) if s.max_cost_usd.is_some() => plan_spent_usd(dir, plan),
            _ => 0.0,
        };
        Ok(Gathered {
            plan: plan.into(),
            stop_hook_active,
            files: listing.files,
            errors,
            tasks,
            state,
            spent_usd,
            now: crate::clock::now_unix(),
        })
    }
}

/// The plan's findings ledger (SPEC §21): `findings.json` in the plan directory `dir`,
/// empty when there is none yet, with a review it holds pending settled against the state
/// on disk. A ledger that cannot be read is an error naming the file and the fix, never a
/// new ledger: that would give its ids again.
// The ledger the plan writes is always one its reader takes.
const _: () = assert!(crate::model::findings::LEDGER_MAX as u64 <= PLAN_FILE_LIMIT / 2);

pub fn findings(dir: &Path) -> Result<crate::model::findings::Ledger, String> {
    let mut ledger = findings_as_written(dir)?.unwrap_or_default();
    if ledger.pending.is_some() {
        ledger.settle(state_tag(dir).as_deref());
    }
    Ok(ledger)
}

fn findings_as_written(dir: &Path) -> Result<Option<crate::model::findings::Ledger>, String> {
    let path = dir.join(crate::model::plan_file::FINDINGS_FILE);
    let unreadable = |why: String| {
        format!(
            "the findings ledger {} cannot be read ({why}); taskie does not start a new one by itself, as that \
             would give its ids again: repair it, or move it out of the plan directory (for example into \
             .taskie/logs/) to start a new ledger whose ids begin at F1",
            path.display()
        )
    };
    let Some(bytes) = own_file_bytes(&path).map_err(|e| unreadable(e.to_string()))? else {
        return Ok(None);
    };
    crate::model::findings::Ledger::parse(&bytes)
        .map(Some)
        .map_err(unreadable)
}

/// The tag of the plan's state.json as it is on disk (`None`: there is none, or it cannot
/// be read), which a ledger's pending entry is settled against.
pub fn state_tag(dir: &Path) -> Option<String> {
    state_bytes(&dir.join(crate::model::plan_file::STATE_FILE))
        .ok()
        .flatten()
        .map(|b| crate::model::state::tag(&b))
}

/// Settles what the ledgers of the plan in `dir` hold pending against the state on disk,
/// and writes them back. Called holding the plan lock before state.json is written: a
/// pending entry waits for the state it was written beside, so it must be settled before
/// that state is replaced by the next one. Reads two small files; writes only when
/// something was pending (a hook killed between the state and the ledgers).
pub fn settle_ledgers(dir: &Path) -> io::Result<()> {
    let mut cached: Option<Option<String>> = None;
    let mut tag = || cached.get_or_insert_with(|| state_tag(dir)).clone();
    if let Ok(Some(mut l)) = findings_as_written(dir)
        && l.pending.is_some()
    {
        l.settle(tag().as_deref());
        atomic::write_unsynced(
            &dir.join(crate::model::plan_file::FINDINGS_FILE),
            l.to_json().as_bytes(),
        )?;
    }
    if let Some(mut l) = spend_as_written(dir).filter(|l| l.pending.is_some()) {
        l.settle(tag().as_deref());
        atomic::write_unsynced(&dir.join(SPEND_FILE), l.to_json().as_bytes())?;
    }
    Ok(())
}

/// The recorded cost of plan `plan`'s reviews, from its ledger (SPEC §18).
fn plan_spent_usd(dir: &Path, plan: &str) -> f64 {
    ledger(dir, plan).plan.cost_usd
}

/// The plan's spend ledger: `spend.json` in the plan directory `dir`; for a plan an older
/// taskie ran, which has none yet, built from the event log (once: the hook writes it
/// with the next review). The plan directory is `.taskie/plans/<plan>`, so the logs are
/// two levels up.
/// A ledger that cannot be read or parsed is rebuilt the same way: never a reason to
/// count less than was spent.
pub fn ledger(dir: &Path, plan: &str) -> Ledger {
    ledger_file(dir).unwrap_or_else(|| match dir.parent().and_then(Path::parent) {
        Some(taskie) => Ledger::from_runs(&crate::store::event_log::spend_runs(
            &crate::store::project::logs_in(taskie),
            plan,
        )),
        None => Ledger::default(),
    })
}

/// `spend.json` of the plan directory `dir` as it is, `None` when it is missing or
/// unreadable (never rebuilt from the log: for the texts that can do without it).
pub fn ledger_file(dir: &Path) -> Option<Ledger> {
    let mut ledger = spend_as_written(dir)?;
    if ledger.pending.is_some() {
        ledger.settle(state_tag(dir).as_deref());
    }
    Some(ledger)
}

fn spend_as_written(dir: &Path) -> Option<Ledger> {
    own_file_bytes(&dir.join(SPEND_FILE))
        .ok()
        .flatten()
        .and_then(|bytes| Ledger::parse(&bytes))
}

/// The verdicts of the cycle of review `review` (of task `task`) up to iteration `upto`,
/// as (iteration, verdict): from the plan's ledger when it holds that cycle; a cycle an
/// older taskie ran has them only in the event log, of which only the end is read, so
/// this costs the same at any log size. The one home of this rule for the hook's hard
/// stop and `taskie status`.
pub fn cycle_verdicts(
    ledger: Option<&Ledger>,
    logs: &Path,
    plan: &str,
    review: &str,
    task: Option<u64>,
    upto: u64,
) -> Vec<(u64, String)> {
    match ledger
        .and_then(|l| l.cycle.as_ref())
        .filter(|c| c.review == review && c.task == task)
    {
        Some(c) => c
            .verdicts
            .iter()
            .filter(|v| v.iteration <= upto)
            .map(|v| (v.iteration, v.verdict.clone()))
            .collect(),
        None => crate::store::event_log::cycle_verdicts(
            &crate::store::event_log::recent_history(logs, plan, review),
            upto,
        ),
    }
}

/// state.json: `Ok(None)` when there is none.
pub fn read_state(path: &Path) -> Result<Option<State>, StateError> {
    match state_bytes(path) {
        Ok(Some(bytes)) => State::parse(&bytes).map(Some),
        Ok(None) => Ok(None),
        Err(e) => Err(StateError::Unreadable(e.to_string())),
    }
}

/// The bytes of state.json, `None` when there is none. A symbolic link is refused: reading
/// through it would take state from wherever it points, and the atomic write would then
/// replace the link with a regular file (docs/security.md).
pub fn state_bytes(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    own_file_bytes(path)
}

/// The bytes of one of taskie's own files beside the plan (state.json and the ledgers,
/// `TASKIE_FILES`), `None` when there is none; a link or anything but a regular file is an
/// error saying what it is and how to fix it. Their text goes into the reviewer's prompt
/// and the hook's decisions, so it is never taken from wherever a link points.
pub fn own_file_bytes(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Ok(m) if m.file_type().is_symlink() => {
            return Err(std::io::Error::other(
                "it is a symbolic link; taskie neither reads nor writes its files through a link, so replace the \
                 link with the file it points to",
            ));
        }
        _ => {}
    }
    read_regular(path, PLAN_FILE_LIMIT)
}

/// What is wrong with taskie's own files of the plan in `dir` (state.json and the ledgers)
/// that keeps taskie from using them: a link or a directory where the file belongs. One
/// text per file, naming it (as `shown` names a file) and the fix.
pub fn own_file_problems(dir: &Path, shown: &dyn Fn(&str) -> String) -> Vec<String> {
    crate::model::plan_file::TASKIE_FILES
        .iter()
        .filter_map(|name| {
            let m = std::fs::symlink_metadata(dir.join(name)).ok()?;
            let kind = m.file_type();
            let what = if kind.is_symlink() {
                "is a symbolic link; taskie neither reads nor writes its files through a link, so replace the \
                 link with the file it points to (or remove it)"
            } else if kind.is_dir() {
                "is a directory; taskie keeps a file there, so move the directory out of the plan directory"
            } else if !kind.is_file() {
                "is not a regular file; replace it with a regular file (or remove it)"
            } else {
                return None;
            };
            Some(format!("{} {what}", shown(name)))
        })
        .collect()
}

/// The one link rule, for the hook and every command (docs/security.md): taskie never
/// follows a link out of `.taskie/`. `.taskie` itself must resolve inside the project, and
/// `.taskie/plans`, the plan directory, `.taskie/logs` and `.taskie/locks`, where they
/// exist, inside the real `.taskie`. Returns what is wrong, if anything.
pub fn escaping_link(project: &Project, plan: &str) -> Option<String> {
    let dirs = [
        project.taskie(),
        project.plans(),
        project.plan_dir(plan),
        project.logs(),
        project.locks(),
        project.sessions(),
    ];
    // Every stop (SPEC §16): when none of them is a link, each is the project directory
    // plus a relative path and resolves inside it; one `lstat` each answers that, where
    // resolving them all would read every link of every ancestor.
    let is_link =
        |d: &PathBuf| std::fs::symlink_metadata(d).is_ok_and(|m| m.file_type().is_symlink());
    if !dirs.iter().any(is_link) {
        return None;
    }
    let resolve = |dir: &Path| {
        dir.canonicalize()
            .map_err(|e| format!("{} cannot be resolved ({e})", project.relative(dir)))
    };
    let root = match resolve(&project.root) {
        Ok(r) => r,
        Err(e) => return Some(e),
    };
    let taskie = match resolve(&project.taskie()) {
        Ok(t) if t.starts_with(&root) => t,
        Ok(t) => {
            return Some(format!(
                ".taskie is a symbolic link to {}, outside the project",
                t.display()
            ));
        }
        Err(e) => return Some(e),
    };
    for dir in &dirs[1..] {
        if std::fs::symlink_metadata(dir).is_err() {
            continue;
        }
        match resolve(dir) {
            Ok(real) if real.starts_with(&taskie) => {}
            Ok(real) => {
                return Some(format!(
                    "{} is a symbolic link to {}, outside .taskie/",
                    project.relative(dir),
                    real.display()
                ));
            }
            Err(e) => return Some(e),
        }
    }
    None
}

/// What is directly in a plan directory, for validation (SPEC §7).
pub fn list(dir: &Path) -> io::Result<Listing> {
    let mut listing = Listing::default();
    for (name, is_dir) in crate::store::scan::entries(dir)? {
        if is_dir {
            // A dot-directory (an editor's or a system's) is not the plan's (SPEC §2).
            let theirs = crate::model::plan_file::is_leftover(&name.to_string_lossy());
            listing.nested_md = listing.nested_md || (!theirs && contains_md(&dir.join(&name), 0));
        } else {
            listing.files.push(name.to_string_lossy().into_owned());
        }
    }
    listing.files.sort();
    Ok(listing)
}

/// Whether a `*.md` exists anywhere below `dir`; links are not followed and the
/// depth is bounded so a pathological tree cannot stall the hook.
fn contains_md(dir: &Path, depth: u32) -> bool {
    if depth > 8 {
        return false;
    }
    let Ok(entries) = crate::store::scan::entries(dir) else {
        return false;
    };
    entries.into_iter().any(|(name, is_dir)| {
        if is_dir {
            contains_md(&dir.join(name), depth + 1)
        } else {
            name.as_encoded_bytes().ends_with(b".md")
        }
    })
}
