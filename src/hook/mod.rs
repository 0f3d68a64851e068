//! `taskie-hook`: the I/O around the decision procedure (SPEC §4, §5). Reads the
//! event and the plan, calls `decide`, runs the reviewer when one is due, writes
//! state.json, prints the answer, logs the event — in that order.

use crate::hook::answer::{Answer, Channel};
use crate::hook::input::Event;
use crate::model::cycle::{HardStop, Reviewed};
use crate::model::facts::Facts;
use crate::model::findings::Ledger;
use crate::model::host::Host;
use crate::model::phase::Review;
use crate::model::spend;
use crate::model::state::State;
use crate::reviewer;
use crate::store::event_log::{self, Branch, Record};
use crate::store::lock::{self, PlanLock};
use crate::store::project::{self, Project};
use crate::store::select::{self, SelectError, Selected};
use crate::store::sessions::{self, SessionId};
use crate::store::snapshot::{self, Gathered, escaping_link, state_bytes};
use crate::store::{atomic, blocks, diagnostics};
use decide::{Outcome, Step};

pub(crate) mod answer;
pub(crate) mod cap;
pub(crate) mod client;
pub mod decide;
pub(crate) mod dry_run;
pub mod input;
pub(crate) mod message;
pub(crate) mod notice;
pub(crate) mod run_mode;
use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// An event up to this size is read whole; a larger one is streamed for the fields the
/// hook reads (`input::read`).
pub const STDIN_LIMIT: u64 = 4 * 1024 * 1024;

/// Options shared by `taskie-hook` and `taskie hook`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub plan: Option<String>,
}

/// Runs the hook as Claude Code calls it. Never panics, never fails: the exit status
/// is always 0 (fail open, SPEC §4).
pub fn main(opts: &Options) {
    if crate::hook::input::skip_requested() {
        return;
    }
    let started = Instant::now();
    reviewer::process::reset_child_signal();
    let input = input::read(std::io::stdin().lock(), STDIN_LIMIT);
    let notice = panic::catch_unwind(|| notice::for_stop(&input)).unwrap_or(None);
    panic::set_hook(Box::new(|info| {
        eprintln!("taskie-hook: internal error: {info}")
    }));
    let finished =
        panic::catch_unwind(AssertUnwindSafe(|| run(opts, &input))).unwrap_or_else(|_| Finished {
            answer: Answer::allow(message::panicked()),
            event: None,
            channel: Channel::default(),
            _lock: None,
        });
    finished.emit(started, notice.as_deref());
}

/// What a run decided: the answer, and the event to log after printing it.
pub struct Finished {
    pub answer: Answer,
    pub event: Option<(PathBuf, Record)>,
    /// How a block reaches the client (SPEC §20); an allow prints the same on each.
    pub channel: Channel,
    _lock: Option<PlanLock>,
}

impl Finished {
    fn answer(answer: Answer) -> Finished {
        Finished {
            answer,
            event: None,
            channel: Channel::default(),
            _lock: None,
        }
    }

    /// Prints the answer, with the version notice first in its `systemMessage` when there
    /// is one (`notice.rs`), then logs the event (SPEC §5 step 18).
    pub fn emit(self, started: Instant, notice: Option<&str>) {
        let out = self.answer.to_stdout_on(self.channel, notice);
        if !out.is_empty() {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{out}");
            let _ = stdout.flush();
        }
        if let Some((logs, mut rec)) = self.event {
            rec.ts = crate::clock::stamp();
            rec.duration_ms = started.elapsed().as_millis() as u64;
            // The append opens without following a link (it would write wherever the link
            // points, docs/security.md); the directory is made only when it is missing.
            let mut appended = event_log::append(&logs, &rec);
            if appended
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            {
                appended =
                    project::create_runtime_dir(&logs).and_then(|_| event_log::append(&logs, &rec));
            }
            if let Err(e) = appended {
                let log = logs.join(event_log::FILE);
                if std::fs::symlink_metadata(&log).is_ok_and(|m| m.file_type().is_symlink()) {
                    eprintln!(
                        "taskie-hook: {} is a symbolic link; the event was not logged",
                        log.display()
                    );
                } else {
                    eprintln!("taskie-hook: cannot write the event log: {e}");
                }
            }
            // SPEC §24: what needs a person is sent after the answer, detached.
            if let Some(project) = logs.parent().and_then(Path::parent) {
                crate::store::notify::send_for_stop(&rec, project, &logs);
            }
        }
    }
}

/// Where the run is: the event, the project and the plan (SPEC §5 steps 2–6).
pub struct Located {
    pub event: Event,
    pub project: Project,
    pub selected: Selected,
}

/// Steps 2–6. `Err` carries the answer for the early exit and the branch name.
pub fn locate(
    opts: &Options,
    input: &[u8],
    selector: select::Selector,
) -> Result<Located, (Answer, &'static str)> {
    let event = Event::parse(input).map_err(|m| (Answer::allow(m), "bad-input"))?;
    if event.is_subagent_stop() {
        return Err((Answer::Allow(None), "subagent-stop"));
    }
    let ceiling = project::ceiling_from_env();
    let start = match &event.cwd {
        Some(c) => PathBuf::from(c),
        None => ceiling
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default(),
    };
    if !start.is_dir() {
        return Err((
            Answer::allow(message::no_project_dir(&start)),
            "no-project-dir",
        ));
    }
    // Claude Code reports the session's current directory, which may be below the project.
    let Some(project) = project::find_project(&start, ceiling.as_deref()) else {
        return Err((Answer::Allow(None), "no-plans-dir"));
    };
    if !project.plans().is_dir() {
        return Err((Answer::Allow(None), "no-plans-dir"));
    }
    let session = event.session_id.as_deref().and_then(SessionId::parse);
    let explicit = opts.plan.clone().or_else(|| crate::env::Var::Plan.get());
    let selected = match select::select(
        &project,
        explicit.as_deref(),
        session.as_ref(),
        selector,
        &mut |w| eprintln!("taskie-hook: {w}"),
    ) {
        Ok(Some(s)) => s,
        Ok(None) => return Err((Answer::Allow(None), "no-plan")),
        Err(e @ (SelectError::Explicit(_) | SelectError::Held { .. })) => {
            return Err((
                Answer::allow(message::not_selected(&e.to_string())),
                "no-plan",
            ));
        }
        Err(e) => {
            return Err((
                Answer::allow(message::selection_failed(&e.to_string())),
                "no-plan",
            ));
        }
    };
    Ok(Located {
        event,
        project,
        selected,
    })
}

fn run(opts: &Options, input: &[u8]) -> Finished {
    let Located {
        event,
        project,
        selected,
    } = match locate(opts, input, select::Selector::Hook) {
        Ok(l) => l,
        Err((answer, _)) => return Finished::answer(answer),
    };
    let (host, _) = client::current(&event);
    let key = blocks::Key::new(event.session_id.as_deref(), &selected.id);
    // A session `taskie run` started acts only in its own gate (SPEC §23).
    let run_task = run_mode::RunTask::from_env();
    if let Some(task) = &run_task
        && !task.owns(&project)
    {
        return Finished::answer(Answer::allow(message::outside_run_gate(
            &task.run, &task.task,
        )));
    }
    let mut reviewed = None;
    let mut finished = run_plan(
        &event,
        &project,
        selected.id,
        &host,
        run_task.as_ref(),
        &mut reviewed,
    );
    if let Some(task) = &run_task {
        let record = finished.event.as_ref().map(|(_, r)| r);
        task.heartbeat(&project, event.session_id.as_deref(), record, reviewed);
    }
    // Taskie's own block cap (SPEC §20), over whatever the run decided.
    let before = if finished.answer.is_block() {
        blocks::count(&project, &key)
    } else {
        0
    };
    let mut capped = cap::apply(cap::limit(), before, finished.answer, host.client);
    if let Err(e) = blocks::set(&project, &key, capped.count) {
        eprintln!("taskie-hook: could not record the blocks in a row: {e}");
        capped = cap::unsaved(capped, &e.to_string(), host.client);
    }
    if let Some((_, rec)) = &mut finished.event {
        rec.outcome = capped.answer.outcome();
        if capped.capped {
            rec.block_cap = Some(before);
        }
    }
    finished.answer = capped.answer;
    if finished.answer.is_block() {
        client::provide_own_actions(&host);
    }
    finished
}

/// The run on the selected plan: lock, read, decide, review, write.
fn run_plan(
    event: &Event,
    project: &Project,
    plan: String,
    host: &Host,
    run_task: Option<&run_mode::RunTask>,
    reviewed: &mut Option<String>,
) -> Finished {
    let logs = project.logs();
    let internal = |what: String| {
        let rec = Record {
            plan: plan.clone(),
            outcome: "allow",
            branch: Branch::InternalError,
            ..Record::default()
        };
        Finished {
            answer: Answer::allow(message::internal(&plan, &what)),
            event: Some((logs.clone(), rec)),
            channel: Channel::default(),
            _lock: None,
        }
    };
    // Before anything is created or written (the lock file is the first write).
    // A run session's `.taskie` links to the gate its driver made and marked (checked by
    // the caller); any other link out of `.taskie/` is refused.
    if run_task.is_none()
        && let Some(problem) = escaping_link(project, &plan)
    {
        return Finished::answer(Answer::allow(message::escaping_link(&plan, &problem)));
    }
    let handle = project::PlanRef::new(project.clone(), plan.as_str());
    let lock = match lock::try_lock(&handle.locks(), &plan) {
        Ok(Some(l)) => l,
        Ok(None) => {
            let rec = Record {
                plan: plan.clone(),
                outcome: "allow",
                branch: Branch::Locked,
                ..Record::default()
            };
            let m = message::busy(&plan, &lock::holder_text(&handle.locks(), &plan));
            return Finished {
                answer: Answer::allow(m),
                event: Some((logs, rec)),
                channel: Channel::default(),
                _lock: None,
            };
        }
        Err(e) => return internal(format!("cannot take the plan lock: {e}")),
    };
    let (dir, state_path) = (handle.dir(), handle.state_path());
    let gathered = match Gathered::read_locked(&dir, &plan, event.stop_hook_active) {
        Ok(g) => g,
        Err(e) => return internal(format!("cannot read the plan directory: {e}")),
    };
    let mut facts = gathered.facts();
    facts.host = host;
    // A plan an older taskie ran has no ledger yet, so its spend (for a budget, and for
    // `taskie status`) would be added up from the event log: do that once, here, so no
    // later stop or status reads the log again.
    if let Ok(Some(_)) = &gathered.state
        && std::fs::symlink_metadata(handle.spend_path()).is_err()
    {
        let ledger = snapshot::ledger(&dir, &plan);
        let _ = atomic::write_unsynced(&handle.spend_path(), ledger.to_json().as_bytes());
    }
    // The review file's fsync, under way while the ledgers and the state are written.
    let mut review_sync: Option<atomic::Pending> = None;
    // The ledgers as written with a run pending, to settle once the state is written.
    let mut pending: Option<(Ledger, Option<spend::Ledger>)> = None;
    let outcome = match decide::decide(&facts) {
        Step::Done(outcome) => outcome,
        Step::HardStop(stop, record) => hard_stop(project, &facts, stop, record, true),
        Step::Review(due) if run_task.is_some_and(|t| !t.allows(&due)) => {
            let refusal = run_task.map(|t| t.refusal(&due)).unwrap_or_default();
            return Finished::answer(Answer::allow(refusal));
        }
        Step::Review(due) => {
            if let Some(task) = run_task {
                *reviewed = task.commit_before_review(project, due.iteration);
                // Named before the review runs: a session killed before this stop's own
                // heartbeat still tells the driver which commit its last review saw.
                task.reviewing(project, event.session_id.as_deref(), reviewed.clone());
            }
            if let Err(e) = project::create_runtime_dir(&logs) {
                return internal(format!("cannot create {}: {e}", logs.display()));
            }
            // A due review not started: allowed, and logged as `branch`.
            let not_started = |branch: Branch, text: String| Finished {
                answer: Answer::allow(text),
                event: Some((
                    logs.clone(),
                    Record {
                        plan: plan.clone(),
                        outcome: "allow",
                        branch,
                        review: Some(due.review.name()),
                        iteration: Some(due.iteration),
                        ..Record::default()
                    },
                )),
                channel: Channel::default(),
                _lock: None,
            };
            // A paid review whose outcome cannot be saved would be thrown away, and its
            // failure could not even be counted: check before starting it.
            if let Err(e) = atomic::probe(&dir) {
                let text = message::cannot_save(&plan, &due, &e.to_string());
                return not_started(Branch::InternalError, text);
            }
            // The findings ledger takes this review's ids: one that cannot be read would
            // make them start again, so the review waits until it is fixed (SPEC §21).
            let mut ledger = match snapshot::findings(&dir) {
                Ok(l) => l,
                Err(e) => {
                    let text = message::ledger_unreadable(&plan, &due, &e);
                    return not_started(Branch::LedgerError, text);
                }
            };
            let config = reviewer::Config::from_env(&mut |w| eprintln!("taskie-hook: {w}"));
            let before = state_bytes(&state_path).ok().flatten();
            let start = reviewer::start(project, &facts, &due);
            let log = project.relative(&start.log);
            lock.announce(&lock::Running {
                review: due.review.name().into(),
                iteration: due.iteration,
                model: due.model.clone(),
                since: start.started.strftime(crate::clock::STAMP).to_string(),
                log: log.clone(),
            });
            // This session works on this plan from now on (SPEC §17).
            if let Some(session) = event.session_id.as_deref().and_then(SessionId::parse)
                && let Err(e) = sessions::bind(project, &session, &plan)
            {
                eprintln!("taskie-hook: could not bind the session to plan '{plan}': {e}");
            }
            // SPEC §21: the post-review before this review answers the open findings by
            // id; the ledger is written before the reviewer starts, whose prompt carries it.
            // What a killed hook left pending is settled first, against the state it was
            // written beside.
            if let Err(e) = snapshot::settle_ledgers(&dir) {
                eprintln!("taskie-hook: could not settle the ledgers of plan '{plan}': {e}");
            }
            let read = ledger.clone();
            let unanswered = post_review_answers(&mut ledger, &facts, &due, &dir);
            if ledger != read {
                write_findings(&handle, &ledger);
            }
            let (mut run, worktree) = reviewer::review(project, &facts, &due, &config, &start);
            lock.clear();
            // A state.json changed while the reviewer ran keeps its edit: this review is
            // not recorded (its cost is, as a failed attempt).
            let now = state_bytes(&state_path).ok().flatten();
            let edited = now != before;
            let mut said = None;
            if let Reviewed::Verdict {
                findings, verified, ..
            } = &mut run.reviewed
                && !edited
            {
                let mut preview = ledger.clone();
                let added = preview.record_review(
                    due.review.name(),
                    due.task,
                    due.iteration,
                    findings,
                    &verified.resolved,
                    &verified.reopened,
                );
                if let Err(e) = reviewer::ids_header(&dir.join(&due.review_file), &added) {
                    eprintln!("taskie-hook: could not add the finding ids to the review file: {e}");
                }
                said = Some((findings.clone(), verified.clone()));
                // The block text quotes the findings with their ids.
                *findings = added
                    .iter()
                    .map(|(id, text)| format!("{id}: {text}"))
                    .collect();
            }
            let mut outcome = decide::conclude(&facts, &due, &run.reviewed);
            if !unanswered.is_empty() {
                outcome.answer = outcome
                    .answer
                    .with_note(&message::unanswered(&due.post_file_before(), &unanswered));
            }
            // SPEC §8: what the reviewer changed in the work is named, whatever the verdict.
            if let Some(note) = message::worktree(&worktree) {
                outcome.answer = outcome.answer.with_note(&note);
            }
            outcome.record.worktree = worktree.says_something().then_some(worktree);
            if edited {
                outcome = decide::state_edited(
                    &facts,
                    &due,
                    now.map(|b| State::parse(&b)),
                    &log,
                    outcome.record,
                );
            }
            // SPEC §5 step 18: the review file is on disk before the state that points to
            // it (state.json's own write waits for this sync before its rename, then makes
            // both directory entries durable). The only fsyncs of a review: this one and
            // state.json's, which the disk does at the same time.
            if matches!(run.reviewed, Reviewed::Verdict { .. })
                && !edited
                && outcome.write.is_some()
            {
                review_sync = Some(atomic::sync_file_in_background(dir.join(&due.review_file)));
            }
            // The ledgers record this run before the state does, as pending on the state
            // about to be written: it counts once state.json is that state, so a kill in
            // between, or a state write that fails, leaves no review the state does not
            // record (its cost stays spent, as a failed attempt). With no state to write,
            // the run is recorded as what it was: a failed attempt.
            let tag = outcome
                .write
                .as_ref()
                .map(|s| crate::model::state::tag(s.to_json().as_bytes()));
            if let (Some(tag), Some((new, verified))) = (&tag, said) {
                ledger.record_pending(crate::model::findings::Pending {
                    state: tag.clone(),
                    review: due.review.name().into(),
                    task: due.task,
                    iteration: due.iteration,
                    new,
                    resolved: verified.resolved,
                    reopened: verified.reopened,
                });
                write_findings(&handle, &ledger);
            }
            let failure = match &run.reviewed {
                Reviewed::Failed { reason, log, .. } => Some(format!("{reason} (log {log})")),
                Reviewed::Verdict { .. } | Reviewed::Paused { .. } if edited => Some(format!(
                    "state.json was changed while the reviewer ran (log {log})"
                )),
                Reviewed::Verdict { .. } | Reviewed::Paused { .. } => None,
            };
            let mut spent = None;
            if run.processes > 0 || failure.is_some() {
                let mut ledger = snapshot::ledger(&dir, &plan);
                let entry = spend::Entry {
                    review: due.review.name(),
                    task: due.base.current_task.filter(|_| due.review == Review::Code),
                    iteration: due.iteration,
                    processes: run.processes,
                    reviews: run.reviews,
                    reviewed: matches!(run.reviewed, Reviewed::Verdict { .. }) && !edited,
                    failure: failure.as_deref(),
                    verdict: outcome.record.verdict,
                    advanced: outcome.record.branch == Branch::Advanced,
                    spend: &run.spend,
                };
                match &tag {
                    Some(tag) => ledger.record_pending(&entry, tag),
                    None => ledger.record(&entry),
                }
                write_spend(&handle, &ledger);
                spent = Some(ledger);
            }
            atomic::pause_point("ledgers-pending", &state_path);
            // `reviews`: only who reviewed (SPEC §22); what every process cost, whoever ran.
            if run.reviews > 0 {
                outcome.record.reviews = Some(run.reviews);
            }
            if run.processes > 0 {
                outcome.record.spend = run.spend;
                outcome.record.panel = run.panel;
            }
            pending = tag.map(|_| (ledger, spent));
            outcome
        }
    };
    let mut review_synced = || {
        if let Some(Err(e)) = review_sync.take().map(atomic::Pending::wait) {
            eprintln!("taskie-hook: could not sync the review file: {e}");
        }
    };
    let Outcome {
        answer,
        write,
        mut record,
    } = outcome;
    let answer = match &write {
        Some(state) => {
            if pending.is_none()
                && let Err(e) = snapshot::settle_ledgers(&dir)
            {
                eprintln!("taskie-hook: could not settle the ledgers of plan '{plan}': {e}");
            }
            atomic::pause_point("before-state-write", &state_path);
            let written = atomic::write_durable_after(
                &state_path,
                state.to_json().as_bytes(),
                &mut review_synced,
            );
            if written.is_ok() {
                atomic::pause_point("after-state-write", &state_path);
            }
            // The run pending in the ledgers counts as what the state now on disk says.
            if let Some((mut findings, spent)) = pending.take() {
                let tag = written
                    .is_ok()
                    .then(|| crate::model::state::tag(state.to_json().as_bytes()))
                    .or_else(|| snapshot::state_tag(&dir));
                if findings.settle(tag.as_deref()) {
                    write_findings(&handle, &findings);
                }
                atomic::pause_point("findings-settled", &state_path);
                if let Some(mut spent) = spent
                    && spent.settle(tag.as_deref())
                {
                    write_spend(&handle, &spent);
                }
            }
            match written {
                Ok(()) => answer,
                Err(e) => {
                    // The event says what happened: the state on disk is the one read.
                    record.phase_after = record.phase_before.clone();
                    record.next_phase_after = record.next_phase_before.clone();
                    Answer::allow(message::state_not_written(&plan, &e.to_string()))
                }
            }
        }
        None => answer,
    };
    record.outcome = answer.outcome();
    review_synced();
    Finished {
        answer,
        event: Some((logs, record)),
        channel: Channel::for_client(host.client),
        _lock: Some(lock),
    }
}

/// SPEC §5 step 14 and §10: the answer for a hard stop; writes the diagnostics file
/// when `write` is set (not in a dry run).
pub fn hard_stop(
    project: &Project,
    f: &Facts,
    stop: HardStop,
    record: Record,
    write: bool,
) -> Outcome {
    let logs = project.logs();
    let verdicts = snapshot::cycle_verdicts(
        snapshot::ledger_file(&project.plan_dir(f.plan)).as_ref(),
        &logs,
        f.plan,
        stop.review.name(),
        stop.task,
        stop.iterations,
    );
    let last = stop.last_review.as_ref().and_then(|name| {
        let path = project.plan_dir(f.plan).join(name);
        let bytes =
            crate::store::fs::read_regular(&path, crate::store::fs::PLAN_FILE_LIMIT).ok()??;
        Some((f.rel(name), String::from_utf8_lossy(&bytes).into_owned()))
    });
    let (diag, mut message) = diagnostics::build(
        f.plan,
        &stop,
        f.tasks,
        &verdicts,
        last.as_ref().map(|(p, t)| (p.as_str(), t.as_str())),
    );
    if write {
        let path = logs.join(diagnostics::file_name(f.plan));
        let text = diag.to_json();
        if let Err(e) = project::create_runtime_dir(&logs)
            .and_then(|_| atomic::write_unsynced(&path, text.as_bytes()))
        {
            message.push_str(&format!(
                " (The diagnostics file could not be written: {e}.)"
            ));
        }
    }
    Outcome {
        answer: Answer::allow(message),
        write: None,
        record,
    }
}

/// Records the answers of the post-review that precedes review `due` (SPEC §21) and
/// returns the open ids it left unanswered.
fn post_review_answers(
    ledger: &mut Ledger,
    f: &Facts,
    due: &crate::model::cycle::Due,
    dir: &std::path::Path,
) -> Vec<String> {
    let Some(post) = due.post_file_before() else {
        return Vec::new();
    };
    if !f.has_file(&post) {
        return Vec::new();
    }
    let text = reviewer::log::read_bounded(&dir.join(&post)).unwrap_or_default();
    ledger.record_post_review(due.review.name(), due.task, &text)
}

/// The findings ledger, atomically, beside the state (the caller holds the plan lock).
/// Not forced to disk (docs/reliability.md): a kill leaves the old or the new file, and
/// the fsync is not worth it at every review.
fn write_findings(plan: &project::PlanRef, ledger: &Ledger) {
    if ledger.cycles.is_empty() && ledger.pending.is_none() {
        return;
    }
    let path = plan.findings_path();
    if let Err(e) = atomic::write_unsynced(&path, ledger.to_json().as_bytes()) {
        eprintln!(
            "taskie-hook: could not write the findings ledger {}: {e}",
            path.display()
        );
    }
}

/// The spend ledger, as [`write_findings`].
fn write_spend(plan: &project::PlanRef, ledger: &spend::Ledger) {
    if let Err(e) = atomic::write_unsynced(&plan.spend_path(), ledger.to_json().as_bytes()) {
        eprintln!(
            "taskie-hook: could not write the spend ledger of plan '{}': {e}",
            plan.plan
        );
    }
}
