//! A due review as the hook runs it (SPEC §5 steps 16–18, §21, §22): a pipeline whose
//! steps own their order. [`Review::prepare`] does what must happen before the reviewer
//! starts, [`Prepared::run`] runs it, [`Ran::conclude`] turns its answer into the new state,
//! [`Concluded::record_ledgers`] writes the ledgers as pending on that state, and
//! [`Persist::write`] writes the state and settles the ledgers against it. Each step
//! consumes the one before, so the order cannot be changed by accident; a decision without
//! a reviewer enters at [`Persist::decided`].
//!
//! The commit order the kill-point tests prove (docs/reliability.md): the review file is
//! synced before state.json is renamed; the ledgers record a run as pending on the state
//! about to be written before it is written, and are settled after it.

use crate::hook::decide::{self, Outcome};
use crate::hook::input::Event;
use crate::hook::{Finished, message};
use crate::model::cycle::{Due, Reviewed};
use crate::model::facts::Facts;
use crate::model::findings::{Ledger, Verified};
use crate::model::phase::Review as ReviewKind;
use crate::model::spend;
use crate::model::state::{self, State};
use crate::model::worktree::Report;
use crate::reviewer::{self, ReviewRun};
use crate::store::atomic;
use crate::store::event_log::{Branch, Record};
use crate::store::lock::{self, PlanLock};
use crate::store::project::{self, PlanRef, Project};
use crate::store::sessions::{self, SessionId};
use crate::store::snapshot::{self, state_bytes};

/// The plan a review runs on, as the hook holds it: its handle, its facts and its lock.
pub(crate) struct Review<'a> {
    pub(crate) project: &'a Project,
    pub(crate) handle: &'a PlanRef,
    pub(crate) facts: &'a Facts<'a>,
    pub(crate) event: &'a Event,
    pub(crate) lock: &'a PlanLock,
    /// The reviewer programs and time limit, from the hook's settings.
    pub(crate) config: &'a reviewer::Config,
}

/// Step 1 done: the reviewer may start. The findings ledger holds the post-review's
/// answers; `before` is state.json as it was, to tell an edit during the run.
pub(crate) struct Prepared<'r, 'a> {
    review: &'r Review<'a>,
    due: Due,
    ledger: Ledger,
    config: reviewer::Config,
    before: Option<Vec<u8>>,
    start: reviewer::Start,
    /// The run's log, relative to the project.
    log: String,
    /// Open findings the post-review before this review left unanswered.
    unanswered: Vec<String>,
}

/// Step 2 done: the reviewer ran, the lock's announcement is cleared.
pub(crate) struct Ran<'r, 'a> {
    prepared: Prepared<'r, 'a>,
    run: ReviewRun,
    worktree: Report,
    /// state.json as it is now (`None`: gone or unreadable).
    now: Option<Vec<u8>>,
}

/// Step 3 done: the outcome to write and answer, and what the reviewer said, for the
/// ledgers (`None` when the review is not recorded).
pub(crate) struct Concluded<'r, 'a> {
    prepared: Prepared<'r, 'a>,
    run: ReviewRun,
    outcome: Outcome,
    said: Option<(Vec<String>, Verified)>,
    /// The review is not recorded: state.json changed while it ran.
    edited: bool,
}

/// The ledgers as written with a run pending on the state about to be written, to settle
/// once it is written.
struct PendingLedgers {
    findings: Ledger,
    spend: Option<spend::Ledger>,
}

/// The last step: what is written, in order, before the answer.
pub(crate) struct Persist {
    outcome: Outcome,
    pending: Option<PendingLedgers>,
    /// The review file's fsync, under way while the ledgers and the state are written.
    review_sync: Option<atomic::Pending>,
}

impl<'a> Review<'a> {
    fn plan(&self) -> &str {
        self.facts.plan
    }

    /// Before the reviewer starts: the logs directory, a probe that the outcome can be
    /// saved, the findings ledger (readable, with the post-review's answers recorded), the
    /// log name announced in the lock, the session bound. `Err` is the answer of a review
    /// that did not start.
    pub(crate) fn prepare<'r>(&'r self, due: Due) -> Result<Prepared<'r, 'a>, Box<Finished>> {
        let logs = self.project.logs();
        let dir = self.handle.dir();
        let plan = self.plan();
        if let Err(e) = project::create_runtime_dir(&logs) {
            let what = format!("cannot create {}: {e}", logs.display());
            return Err(Box::new(Finished::internal(logs, plan, &what)));
        }
        // A paid review whose outcome cannot be saved would be thrown away, and its failure
        // could not even be counted: check before starting it.
        if let Err(e) = atomic::probe(&dir) {
            let text = message::cannot_save(plan, &due, &e.to_string());
            return Err(Box::new(Finished::not_started(
                logs,
                plan,
                &due,
                Branch::InternalError,
                text,
            )));
        }
        // The findings ledger takes this review's ids: one that cannot be read would make
        // them start again, so the review waits until it is fixed (SPEC §21).
        let mut ledger = match snapshot::findings(&dir) {
            Ok(l) => l,
            Err(e) => {
                let text = message::ledger_unreadable(plan, &due, &e);
                return Err(Box::new(Finished::not_started(
                    logs,
                    plan,
                    &due,
                    Branch::LedgerError,
                    text,
                )));
            }
        };
        let config = self.config.clone();
        for w in &config.warnings {
            eprintln!("taskie-hook: {w}");
        }
        let before = state_bytes(&self.handle.state_path()).ok().flatten();
        let start = reviewer::start(self.project, self.facts, &due);
        let log = self.project.relative(&start.log);
        self.lock.announce(&lock::Running {
            review: due.review.name().into(),
            iteration: due.iteration,
            model: due.model.clone(),
            since: start.started.strftime(crate::clock::STAMP).to_string(),
            log: log.clone(),
        });
        // This session works on this plan from now on (SPEC §17).
        if let Some(session) = self.event.session_id.as_deref().and_then(SessionId::parse)
            && let Err(e) = sessions::bind(self.project, &session, plan)
        {
            eprintln!("taskie-hook: could not bind the session to plan '{plan}': {e}");
        }
        // SPEC §21: the post-review before this review answers the open findings by id; the
        // ledger is written before the reviewer starts, whose prompt carries it. What a
        // killed hook left pending is settled first, against the state it was written
        // beside.
        if let Err(e) = snapshot::settle_ledgers(&dir) {
            eprintln!("taskie-hook: could not settle the ledgers of plan '{plan}': {e}");
        }
        let read = ledger.clone();
        let unanswered = self.post_review_answers(&mut ledger, &due);
        if ledger != read {
            write_findings(self.handle, &ledger);
        }
        Ok(Prepared {
            review: self,
            due,
            ledger,
            config,
            before,
            start,
            log,
            unanswered,
        })
    }

    /// Records the answers of the post-review that precedes review `due` (SPEC §21) and
    /// returns the open ids it left unanswered.
    fn post_review_answers(&self, ledger: &mut Ledger, due: &Due) -> Vec<String> {
        let Some(post) = due.post_file_before() else {
            return Vec::new();
        };
        if !self.facts.has_file(&post) {
            return Vec::new();
        }
        let text = reviewer::log::read_bounded(&self.handle.file(&post)).unwrap_or_default();
        ledger.record_post_review(due.review.name(), due.task, &text)
    }
}

impl<'r, 'a> Prepared<'r, 'a> {
    /// Runs the reviewer, then clears the lock's announcement and reads state.json again.
    pub(crate) fn run(self) -> Ran<'r, 'a> {
        let r = self.review;
        let (run, worktree) =
            reviewer::review(r.project, r.facts, &self.due, &self.config, &self.start);
        r.lock.clear();
        let now = state_bytes(&r.handle.state_path()).ok().flatten();
        Ran {
            prepared: self,
            run,
            worktree,
            now,
        }
    }
}

impl<'r, 'a> Ran<'r, 'a> {
    /// The new state and the answer (`decide::conclude`), with the findings' ids in the
    /// review file and in the answer, the notes on unanswered findings and on what the
    /// reviewer changed. A state.json changed while the reviewer ran keeps its edit: this
    /// review is not recorded (its cost is, as a failed attempt).
    pub(crate) fn conclude(self) -> Concluded<'r, 'a> {
        let Ran {
            prepared: p,
            mut run,
            worktree,
            now,
        } = self;
        let f = p.review.facts;
        let edited = now != p.before;
        let mut said = None;
        if let Reviewed::Verdict {
            findings, verified, ..
        } = &mut run.reviewed
            && !edited
        {
            let mut preview = p.ledger.clone();
            let added = preview.record_review(
                p.due.review.name(),
                p.due.task,
                p.due.iteration,
                findings,
                &verified.resolved,
                &verified.reopened,
            );
            let review_file = p.review.handle.file(&p.due.review_file);
            if let Err(e) = reviewer::ids_header(&review_file, &added) {
                eprintln!("taskie-hook: could not add the finding ids to the review file: {e}");
            }
            said = Some((findings.clone(), verified.clone()));
            // The block text quotes the findings with their ids.
            *findings = added
                .iter()
                .map(|(id, text)| format!("{id}: {text}"))
                .collect();
        }
        let mut outcome = decide::conclude(f, &p.due, &run.reviewed);
        if !p.unanswered.is_empty() {
            let note = message::unanswered(&p.due.post_file_before(), &p.unanswered);
            outcome.answer = outcome.answer.with_note(&note);
        }
        // SPEC §8: what the reviewer changed in the work is named, whatever the verdict.
        if let Some(note) = message::worktree(&worktree) {
            outcome.answer = outcome.answer.with_note(&note);
        }
        outcome.record.worktree = worktree.says_something().then_some(worktree);
        if edited {
            let now = now.map(|b| State::parse(&b));
            outcome = decide::state_edited(f, &p.due, now, &p.log, outcome.record);
        }
        Concluded {
            prepared: p,
            run,
            outcome,
            said,
            edited,
        }
    }
}

impl Concluded<'_, '_> {
    /// Whether this run's review counts: a verdict on a state.json nobody changed.
    fn recorded(&self) -> bool {
        matches!(self.run.reviewed, Reviewed::Verdict { .. }) && !self.edited
    }

    /// Starts the review file's sync, then writes the ledgers: the run is recorded as
    /// pending on the state about to be written. It counts once state.json is that state,
    /// so a kill in between, or a state write that fails, leaves no review the state does
    /// not record (its cost stays spent, as a failed attempt). With no state to write, the
    /// run is recorded as what it was: a failed attempt.
    pub(crate) fn record_ledgers(self) -> Persist {
        let recorded = self.recorded();
        let Concluded {
            prepared: p,
            run,
            mut outcome,
            said,
            edited,
        } = self;
        let (handle, due, plan) = (p.review.handle, &p.due, p.review.plan());
        let dir = handle.dir();
        // SPEC §5 step 18: the review file is on disk before the state that points to it
        // (state.json's own write waits for this sync before its rename, then makes both
        // directory entries durable). The only fsyncs of a review: this one and
        // state.json's, which the disk does at the same time.
        let review_sync = (recorded && outcome.write.is_some())
            .then(|| atomic::sync_file_in_background(dir.join(&due.review_file)));
        let tag = outcome
            .write
            .as_ref()
            .map(|s| state::tag(s.to_json().as_bytes()));
        let mut findings = p.ledger;
        if let (Some(tag), Some((new, verified))) = (&tag, said) {
            findings.record_pending(crate::model::findings::Pending {
                state: tag.clone(),
                review: due.review.name().into(),
                task: due.task,
                iteration: due.iteration,
                new,
                resolved: verified.resolved,
                reopened: verified.reopened,
            });
            write_findings(handle, &findings);
        }
        let log = &p.log;
        let failure = match &run.reviewed {
            Reviewed::Failed { reason, log, .. } => Some(format!("{reason} (log {log})")),
            Reviewed::Verdict { .. } | Reviewed::Paused { .. } if edited => Some(format!(
                "state.json was changed while the reviewer ran (log {log})"
            )),
            Reviewed::Verdict { .. } | Reviewed::Paused { .. } => None,
        };
        let mut spent = None;
        if run.processes > 0 || failure.is_some() {
            let mut ledger = snapshot::ledger(&dir, plan);
            let entry = spend::Entry {
                review: due.review.name(),
                task: due
                    .base
                    .current_task
                    .filter(|_| due.review == ReviewKind::Code),
                iteration: due.iteration,
                processes: run.processes,
                reviews: run.reviews,
                reviewed: recorded,
                failure: failure.as_deref(),
                verdict: outcome.record.verdict,
                advanced: outcome.record.branch == Branch::Advanced,
                spend: &run.spend,
            };
            match &tag {
                Some(tag) => ledger.record_pending(&entry, tag),
                None => ledger.record(&entry),
            }
            write_spend(handle, &ledger);
            spent = Some(ledger);
        }
        atomic::pause_point("ledgers-pending", &handle.state_path());
        // `reviews`: only who reviewed (SPEC §22); what every process cost, whoever ran.
        if run.reviews > 0 {
            outcome.record.reviews = Some(run.reviews);
        }
        if run.processes > 0 {
            outcome.record.spend = run.spend;
            outcome.record.panel = run.panel;
        }
        Persist {
            outcome,
            pending: tag.map(|_| PendingLedgers {
                findings,
                spend: spent,
            }),
            review_sync,
        }
    }
}

impl Persist {
    /// An outcome decided without a reviewer: nothing is pending in the ledgers.
    pub(crate) fn decided(outcome: Outcome) -> Persist {
        Persist {
            outcome,
            pending: None,
            review_sync: None,
        }
    }

    /// Writes the state, if there is one to write, and settles the ledgers against the
    /// state then on disk; the answer and the record of what happened. A state that could
    /// not be written turns the answer into an allow that says so, and the record says the
    /// state on disk is the one read.
    pub(crate) fn write(self, handle: &PlanRef) -> (crate::hook::answer::Answer, Record) {
        let Persist {
            outcome:
                Outcome {
                    mut answer,
                    write,
                    mut record,
                },
            mut pending,
            mut review_sync,
        } = self;
        let mut review_synced = || {
            if let Some(Err(e)) = review_sync.take().map(atomic::Pending::wait) {
                eprintln!("taskie-hook: could not sync the review file: {e}");
            }
        };
        let (dir, state_path, plan) = (handle.dir(), handle.state_path(), &handle.plan);
        if let Some(state) = &write {
            if pending.is_none()
                && let Err(e) = snapshot::settle_ledgers(&dir)
            {
                eprintln!("taskie-hook: could not settle the ledgers of plan '{plan}': {e}");
            }
            let json = state.to_json();
            atomic::pause_point("before-state-write", &state_path);
            let written =
                atomic::write_durable_after(&state_path, json.as_bytes(), &mut review_synced);
            if written.is_ok() {
                atomic::pause_point("after-state-write", &state_path);
            }
            // The run pending in the ledgers counts as what the state now on disk says.
            if let Some(PendingLedgers {
                mut findings,
                spend,
            }) = pending.take()
            {
                let tag = written
                    .is_ok()
                    .then(|| state::tag(json.as_bytes()))
                    .or_else(|| snapshot::state_tag(&dir));
                if findings.settle(tag.as_deref()) {
                    write_findings(handle, &findings);
                }
                atomic::pause_point("findings-settled", &state_path);
                if let Some(mut spend) = spend
                    && spend.settle(tag.as_deref())
                {
                    write_spend(handle, &spend);
                }
            }
            if let Err(e) = written {
                // The event says what happened: the state on disk is the one read.
                record.phase_after = record.phase_before.clone();
                record.next_phase_after = record.next_phase_before.clone();
                answer = crate::hook::answer::Answer::allow(message::state_not_written(
                    plan,
                    &e.to_string(),
                ));
            }
        }
        review_synced();
        (answer, record)
    }
}

/// The findings ledger, atomically, beside the state (the caller holds the plan lock).
/// Not forced to disk (docs/reliability.md): a kill leaves the old or the new file, and
/// the fsync is not worth it at every review.
fn write_findings(plan: &PlanRef, ledger: &Ledger) {
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
fn write_spend(plan: &PlanRef, ledger: &spend::Ledger) {
    if let Err(e) = atomic::write_unsynced(&plan.spend_path(), ledger.to_json().as_bytes()) {
        eprintln!(
            "taskie-hook: could not write the spend ledger of plan '{}': {e}",
            plan.plan
        );
    }
}
