//! `taskie-hook`: the I/O around the decision procedure (SPEC §4, §5). Reads the
//! event and the plan, calls `decide`, runs the reviewer when one is due, writes
//! state.json, prints the answer, logs the event — in that order.

use crate::hook::answer::{Answer, Channel};
use crate::hook::input::Event;
use crate::model::cycle::{Due, HardStop};
use crate::model::facts::Facts;
use crate::model::host::Host;
use crate::reviewer;
use crate::store::event_log::{self, Branch, Record};
use crate::store::lock::{self, PlanLock};
use crate::store::project::{self, Project};
use crate::store::select::{self, SelectError, Selected};
use crate::store::sessions::SessionId;
use crate::store::snapshot::{self, Gathered, escaping_link};
use crate::store::{atomic, blocks, diagnostics};
use decide::{Outcome, Step};
use review::{Persist, Review};
pub use settings::Settings;

pub(crate) mod answer;
pub(crate) mod cap;
pub(crate) mod client;
pub mod decide;
pub(crate) mod dry_run;
pub mod input;
pub(crate) mod message;
pub(crate) mod notice;
pub(crate) mod review;
pub(crate) mod run_mode;
pub mod settings;
use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// An event up to this size is read whole; a larger one is streamed for the fields the
/// hook reads (`input::read`).
pub const STDIN_LIMIT: u64 = 4 * 1024 * 1024;

/// Runs the hook as Claude Code calls it. Never panics, never fails: the exit status
/// is always 0 (fail open, SPEC §4).
pub fn main(settings: &Settings) {
    // The recursion guard (SPEC §4).
    if settings.skip {
        return;
    }
    let started = Instant::now();
    reviewer::process::reset_child_signal();
    let input = input::read(std::io::stdin().lock(), STDIN_LIMIT);
    let notice = panic::catch_unwind(|| notice::for_stop(&input, settings)).unwrap_or(None);
    panic::set_hook(Box::new(|info| {
        eprintln!("taskie-hook: internal error: {info}")
    }));
    let finished =
        panic::catch_unwind(AssertUnwindSafe(|| run(settings, &input))).unwrap_or_else(|_| {
            Finished {
                answer: Answer::allow(message::panicked()),
                event: None,
                channel: Channel::default(),
                _lock: None,
            }
        });
    finished.emit(started, notice.as_deref(), &settings.notify);
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
    /// An answer with nothing to log: the hook found no plan of its own to act on.
    fn answer(answer: Answer) -> Finished {
        Finished {
            answer,
            event: None,
            channel: Channel::default(),
            _lock: None,
        }
    }

    /// An answer decided before the plan was read, logged with `record`.
    fn logged(answer: Answer, logs: PathBuf, record: Record) -> Finished {
        Finished {
            answer,
            event: Some((logs, record)),
            channel: Channel::default(),
            _lock: None,
        }
    }

    /// Something the hook needs failed (`what`): the stop is allowed and says so.
    pub(crate) fn internal(logs: PathBuf, plan: &str, what: &str) -> Finished {
        let answer = Answer::allow(message::internal(plan, what));
        Finished::logged(answer, logs, record(plan, Branch::InternalError))
    }

    /// A due review not started (`branch` says why): allowed with `text`.
    pub(crate) fn not_started(
        logs: PathBuf,
        plan: &str,
        due: &Due,
        branch: Branch,
        text: String,
    ) -> Finished {
        let rec = Record {
            review: Some(due.review.name()),
            iteration: Some(due.iteration),
            ..record(plan, branch)
        };
        Finished::logged(Answer::allow(text), logs, rec)
    }

    /// Prints the answer, with the version notice first in its `systemMessage` when there
    /// is one (`notice.rs`), then logs the event (SPEC §5 step 18).
    pub fn emit(
        self,
        started: Instant,
        notice: Option<&str>,
        notify: &crate::store::notify::Settings,
    ) {
        let out = self.answer.to_stdout_on(self.channel, notice);
        if !out.is_empty() {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{out}");
            let _ = stdout.flush();
        }
        if let Some((logs, mut rec)) = self.event {
            // The record's outcome is the answer's, as finally printed.
            rec.outcome = self.answer.outcome();
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
                crate::store::notify::send_for_stop(&rec, project, &logs, notify);
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
    settings: &Settings,
    input: &[u8],
    selector: select::Selector,
) -> Result<Located, (Answer, &'static str)> {
    let event = Event::parse(input).map_err(|m| (Answer::allow(m), "bad-input"))?;
    if event.is_subagent_stop() {
        return Err((Answer::Allow(None), "subagent-stop"));
    }
    let ceiling = settings.ceiling.clone();
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
    let explicit = settings.plan.as_deref();
    let selected = match select::select(&project, explicit, session.as_ref(), selector, &mut |w| {
        eprintln!("taskie-hook: {w}")
    }) {
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

fn run(settings: &Settings, input: &[u8]) -> Finished {
    let Located {
        event,
        project,
        selected,
    } = match locate(settings, input, select::Selector::Hook) {
        Ok(l) => l,
        Err((answer, _)) => return Finished::answer(answer),
    };
    let (host, _) = client::current(&event, settings);
    let key = blocks::Key::new(event.session_id.as_deref(), &selected.id);
    // A session `taskie run` started acts only in its own gate (SPEC §23).
    let run_task = settings.run.clone();
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
        settings,
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
    let mut capped = cap::apply(settings.block_cap, before, finished.answer, host.client);
    if let Err(e) = blocks::set(&project, &key, capped.count) {
        eprintln!("taskie-hook: could not record the blocks in a row: {e}");
        capped = cap::unsaved(capped, &e.to_string(), host.client);
    }
    if let Some((_, rec)) = &mut finished.event
        && capped.capped
    {
        rec.block_cap = Some(before);
    }
    finished.answer = capped.answer;
    if finished.answer.is_block() {
        client::provide_own_actions(&host, settings);
    }
    finished
}

/// The run on the selected plan: lock, read, decide, review, write.
fn run_plan(
    event: &Event,
    project: &Project,
    plan: String,
    host: &Host,
    settings: &Settings,
    reviewed: &mut Option<String>,
) -> Finished {
    let run_task = settings.run.as_ref();
    let logs = project.logs();
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
            let m = message::busy(&plan, &lock::holder_text(&handle.locks(), &plan));
            let rec = record(&plan, Branch::Locked);
            return Finished::logged(Answer::allow(m), logs, rec);
        }
        Err(e) => {
            return Finished::internal(logs, &plan, &format!("cannot take the plan lock: {e}"));
        }
    };
    let dir = handle.dir();
    let gathered = match Gathered::read_locked(&dir, &plan, event.stop_hook_active) {
        Ok(g) => g,
        Err(e) => {
            let what = format!("cannot read the plan directory: {e}");
            return Finished::internal(logs, &plan, &what);
        }
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
    let persist = match decide::decide(&facts) {
        Step::Done(outcome) => Persist::decided(outcome),
        Step::HardStop(stop, record) => {
            Persist::decided(hard_stop(project, &facts, stop, record, true))
        }
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
            let review = Review {
                project,
                handle: &handle,
                facts: &facts,
                event,
                lock: &lock,
                config: &settings.reviewer,
            };
            match review.prepare(due) {
                Ok(prepared) => prepared.run().conclude().record_ledgers(),
                Err(finished) => return *finished,
            }
        }
    };
    let (answer, record) = persist.write(&handle);
    Finished {
        answer,
        event: Some((logs, record)),
        channel: Channel::for_client(host.client, settings.block_style),
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
    let handle = project::PlanRef::new(project.clone(), f.plan);
    let verdicts = snapshot::cycle_verdicts(
        snapshot::ledger_file(&handle.dir()).as_ref(),
        &logs,
        f.plan,
        stop.review.name(),
        stop.task,
        stop.iterations,
    );
    let last = stop.last_review.as_ref().and_then(|name| {
        let path = handle.file(name);
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

/// The record of a stop on `plan` that took `branch`; its outcome is the answer's.
fn record(plan: &str, branch: Branch) -> Record {
    Record {
        plan: plan.to_owned(),
        branch,
        ..Record::default()
    }
}
