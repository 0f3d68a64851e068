//! Running the independent reviewer (SPEC §8) and turning what it did into a
//! [`Reviewed`] for the decision. This file is the index and the dispatch: each kind's
//! command line and reading is in its own file (`claude.rs`, `codex.rs`, `gemini.rs`),
//! what they share in `kinds.rs`, the environment and limits in `config.rs`, the failures
//! in `error.rs`, the logs in `log.rs`.

use crate::model::cycle::{Due, Failover, Failure, Reviewed, Unavailable};
use crate::model::facts::Facts;
use crate::model::reviewers::{Kind, Reviewer};
use crate::model::spend::Spend;
use crate::model::worktree::Report;
use crate::store::atomic;
use crate::store::project::Project;

pub(crate) mod claude;
pub mod codex;
pub mod config;
pub(crate) mod error;
pub mod gemini;
pub mod guardian;
pub mod kinds;
pub(crate) mod log;
pub(crate) mod panel;
pub(crate) mod process;
pub mod prompt;
pub mod result;
pub mod sandbox;
pub mod worktree_check;

pub use config::{Config, program_var};
pub use error::ReviewerError;
pub use kinds::ReviewRun;

use std::path::{Path, PathBuf};

/// One reviewer run about to start: when, and its log.
#[derive(Debug, Clone)]
pub struct Start {
    pub started: jiff::Timestamp,
    /// Unique among runs: UTC to the millisecond, then the hook's pid.
    pub stamp: String,
    pub log: PathBuf,
}

/// Names the run of review `due`: its log name holds the time to the millisecond and the
/// hook's pid, so quick runs, and runs of parallel hooks, never share a log.
pub fn start(project: &Project, f: &Facts, due: &Due) -> Start {
    let started = crate::clock::now();
    let stamp = format!(
        "{}-{}",
        started.strftime(crate::clock::COMPACT_MS),
        std::process::id()
    );
    let log = log::path(project, f, due, &stamp, None);
    Start {
        started,
        stamp,
        log,
    }
}

/// Runs review `due` and reads its verdict, and checks that the reviewer changed no file
/// of the work it reviewed (SPEC §8): a change to a tracked file voids the verdict (the
/// attempt is unavailable, SPEC §22); every change is named in the review file's header
/// and in the report, for the answer and the event. The caller holds the plan lock.
pub fn review(
    project: &Project,
    f: &Facts,
    due: &Due,
    config: &Config,
    run: &Start,
) -> (ReviewRun, Report) {
    let before = worktree_check::note(project, f.plan, &due.review_file);
    let mut done = review_once(project, f, due, config, run);
    let diff = project.logs().join(format!(
        "worktree-{}-{}-{}-{}.diff",
        f.plan, due.review, due.iteration, run.stamp
    ));
    let mut report = worktree_check::compare(project, before, &diff);
    report.unsandboxed = done.unsandboxed.take();
    let header = report.header();
    if header.is_empty() {
        return (done, report);
    }
    let review_path = project.plan_dir(f.plan).join(&due.review_file);
    if review_path.exists() {
        let body = log::read_bounded(&review_path).unwrap_or_default();
        let lines: String = header.iter().map(|l| format!("> {l}\n")).collect();
        let text = format!("{lines}\n{body}");
        if let Err(e) = atomic::write_unsynced(&review_path, text.as_bytes()) {
            eprintln!("taskie-hook: could not write the review file's header: {e}");
        }
    }
    if report.voided && matches!(done.reviewed, Reviewed::Verdict { .. }) {
        done.reviewed = Reviewed::Failed {
            reason: report.void_reason(),
            log: report
                .diff
                .clone()
                .unwrap_or_else(|| project.relative(&run.log)),
            exit: Some(0),
            failure: Failure::CheckoutChanged,
        };
        // Unavailable never counts as a review (SPEC §22).
        done.reviews = 0;
    }
    (done, report)
}

/// One run of review `due`: its reviewer, or the panel, with failover.
fn review_once(project: &Project, f: &Facts, due: &Due, config: &Config, run: &Start) -> ReviewRun {
    let plan_dir = project.plan_dir(f.plan);
    let review_path = plan_dir.join(&due.review_file);
    // A review file already there was left by an interrupted run: keep it, but out of
    // the way, so the file found afterwards is this run's.
    if review_path.exists() {
        let aside = project.logs().join(format!(
            "stale-{}-{}-{}",
            f.plan, run.stamp, due.review_file
        ));
        let _ = fs_err::rename(&review_path, aside);
    }
    let stamp = run.stamp.as_str();
    if due.panel {
        return panel::run(project, f, due, config, stamp);
    }
    let Some(reviewer) = due.reviewers.first() else {
        // `decide` always names a reviewer; an empty list is the §8 reviewer.
        return ReviewRun {
            reviewed: Reviewed::Failed {
                reason: "no reviewer is configured".into(),
                log: String::new(),
                exit: None,
                failure: Failure::Reviewer,
            },
            processes: 0,
            reviews: 0,
            spend: Spend::default(),
            panel: Vec::new(),
            unsandboxed: None,
        };
    };
    let review_rel = f.rel(&due.review_file);
    // Alternate mode with several kinds: an unavailable reviewer's iteration goes to the
    // next kind in the list (SPEC §22), never silently.
    let order = failover_order(reviewer, &due.base.reviewers);
    let mut unavailable: Vec<(Reviewer, kinds::FailedRun, String)> = Vec::new();
    let mut spend = Spend::default();
    let mut processes = 0;
    let mut unsandboxed = None;
    for (i, reviewer) in order.iter().enumerate() {
        let log = if i == 0 {
            run.log.clone()
        } else {
            log::path(
                project,
                f,
                due,
                stamp,
                Some(&format!("failover-{}", reviewer.kind.name())),
            )
        };
        let job = kinds::Job {
            project,
            f,
            due,
            config,
            reviewer,
            log: &log,
            budget: due.budget_left,
            gate: None,
            sweep: true,
        };
        let attempt = match reviewer.kind {
            Kind::Claude => claude::attempt(&job, &review_path, &review_rel),
            Kind::Codex => codex::attempt(&job),
            Kind::Gemini => gemini::attempt(&job),
        };
        processes += u64::from(attempt.started);
        unsandboxed = unsandboxed.or(attempt.unsandboxed);
        let ms = spend.reviewer_ms.unwrap_or(0) + attempt.spend.reviewer_ms.unwrap_or(0);
        spend = spend.alongside(&attempt.spend);
        spend.reviewer_ms = (ms > 0).then_some(ms);
        let said = match attempt.result {
            Err(failure) => {
                unavailable.push((reviewer.clone(), failure, attempt.log));
                continue;
            }
            Ok(said) => said,
        };
        let failover = Failover {
            reviewed_by: vec![reviewer.to_string()],
            unavailable: unavailable
                .iter()
                .map(|(r, failure, _)| Unavailable {
                    reviewer: r.to_string(),
                    why: failure.why(),
                })
                .collect(),
        };
        // claude wrote (or was given) the review file; the others answer with text.
        let written = if reviewer.kind != Kind::Claude && !review_path.exists() {
            atomic::write_unsynced(&review_path, said.text.as_bytes())
        } else {
            Ok(())
        };
        let reviewed = match written.and_then(|()| header(&review_path, &failover)) {
            Err(e) => kinds::FailedRun::new(
                ReviewerError::Reported(format!("cannot write the review file: {e}")),
                Some(0),
            )
            .reviewed(&attempt.log),
            Ok(()) => Reviewed::Verdict {
                reading: said.reading,
                exit: 0,
                findings: said.findings,
                failover,
                verified: said.verified,
            },
        };
        // One review, by this reviewer: the unavailable ones before it ran no review.
        let reviews = u64::from(matches!(reviewed, Reviewed::Verdict { .. }));
        return ReviewRun {
            reviewed,
            processes,
            reviews,
            spend,
            panel: Vec::new(),
            unsandboxed,
        };
    }
    ReviewRun {
        reviewed: all_unavailable(&unavailable, f.now),
        processes,
        reviews: 0,
        spend,
        panel: Vec::new(),
        unsandboxed,
    }
}

/// Who reviews an alternate-mode iteration, in order: its own reviewer, then the other
/// kinds of `configured` in list order after it (one entry per kind: another model of a
/// kind that is out is out too). Only the one reviewer when a single kind is configured.
pub fn failover_order(first: &Reviewer, configured: &[Reviewer]) -> Vec<Reviewer> {
    let mut order = vec![first.clone()];
    let at = configured.iter().position(|r| r == first).unwrap_or(0);
    let rotated = configured[at..].iter().chain(&configured[..at]);
    for r in rotated {
        if !order.iter().any(|o| o.kind == r.kind) {
            order.push(r.clone());
        }
    }
    order
}

/// Every reviewer asked was unavailable. When they all hit a usage limit with a reset
/// time, the plan pauses until the first reset; otherwise it is a failure naming each.
pub fn all_unavailable(unavailable: &[(Reviewer, kinds::FailedRun, String)], now: i64) -> Reviewed {
    let concluded: Vec<Reviewed> = unavailable
        .iter()
        .map(|(r, failure, log)| failure.concluded(r, log, now))
        .collect();
    let pauses: Vec<(i64, &str, &str)> = concluded
        .iter()
        .filter_map(|c| match c {
            Reviewed::Paused { until, by, log } => Some((*until, by.as_str(), log.as_str())),
            _ => None,
        })
        .collect();
    if !pauses.is_empty() && pauses.len() == concluded.len() {
        let (until, _, log) = pauses
            .iter()
            .min_by_key(|p| p.0)
            .copied()
            .unwrap_or_default();
        let by: Vec<&str> = pauses.iter().map(|p| p.1).collect();
        return Reviewed::Paused {
            until,
            by: by.join("; "),
            log: log.into(),
        };
    }
    match (unavailable, concluded.into_iter().next()) {
        ([_], Some(only)) => only,
        ([(_, first, log), ..], _) => {
            let each: Vec<String> = unavailable
                .iter()
                .map(|(r, failure, _)| format!("{r} {}", failure.error))
                .collect();
            Reviewed::Failed {
                reason: format!("every reviewer was unavailable: {}", each.join("; ")),
                log: log.clone(),
                exit: first.exit,
                failure: Failure::Reviewer,
            }
        }
        ([], _) => Reviewed::Failed {
            reason: "no reviewer is configured".into(),
            log: String::new(),
            exit: None,
            failure: Failure::Reviewer,
        },
    }
}

/// Puts the ids the ledger gave this review's new findings at the top of the review file
/// (SPEC §21), so the agent answers them by id. Nothing when there are none. The review
/// keeps every byte it had, whatever its size or encoding.
pub fn ids_header(review_path: &Path, added: &[(String, String)]) -> std::io::Result<()> {
    if added.is_empty() {
        return Ok(());
    }
    let mut text =
        String::from("> Finding ids (answer each in the post-review, e.g. `F1: fixed — how`):\n");
    for (id, finding) in added {
        text.push_str(&format!(
            "> - {id}: {}\n",
            crate::model::text::clip(&finding.replace('\n', " "), 200)
        ));
    }
    text.push('\n');
    // A failover header stays the first paragraph.
    atomic::insert(
        review_path,
        failover_header_len(review_path)?,
        text.as_bytes(),
    )
}

/// The length of the failover header that starts the review file (its paragraph and the
/// blank line after it), 0 when there is none. It is ours and one line: the start of the
/// file is enough to find its end.
fn failover_header_len(review_path: &Path) -> std::io::Result<u64> {
    use std::io::Read;
    let mut start = Vec::new();
    match crate::store::fs::open_regular(review_path, crate::store::fs::Open::Read) {
        Ok(f) => f.take(64 * 1024).read_to_end(&mut start)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    if !start.starts_with(b"> Failover:") {
        return Ok(0);
    }
    Ok(start
        .windows(2)
        .position(|w| w == b"\n\n")
        .map_or(0, |at| at as u64 + 2))
}

/// Puts the failover header at the top of the review file (SPEC §22): who reviewed, who
/// was unavailable and why. Nothing when there was no failover.
pub fn header(review_path: &Path, failover: &Failover) -> std::io::Result<()> {
    if !failover.happened() {
        return Ok(());
    }
    let text = format!(
        "> Failover: {}.\n\n",
        failover.sentence().replace('\n', " ")
    );
    atomic::insert(review_path, 0, text.as_bytes())
}

/// The command line of review `due`'s first reviewer, and its prompt (read on stdin)
/// passed through `shorten` (for `--dry-run`).
pub fn command_line(
    project: &Project,
    f: &Facts,
    due: &Due,
    config: &Config,
    shorten: &dyn Fn(&str) -> String,
) -> (Vec<String>, String) {
    let Some(reviewer) = due.reviewers.first() else {
        return (Vec::new(), String::new());
    };
    let review_rel = f.rel(&due.review_file);
    let (args, delivery) = match reviewer.kind {
        Kind::Claude => (
            claude::args_with_budget(
                &reviewer.model,
                claude::budget(due),
                &review_rel,
                sandbox::choice(config.path.as_deref()).enabled,
            ),
            prompt::Delivery::File(&review_rel),
        ),
        Kind::Codex => (
            codex::args(&reviewer.model, &project.logs().join(codex::SCHEMA_FILE)),
            prompt::Delivery::Structured,
        ),
        Kind::Gemini => (gemini::args(&reviewer.model), prompt::Delivery::Response),
    };
    let prompt = prompt::build(&project.root, f, due, delivery);
    let argv = std::iter::once(config.program(reviewer.kind))
        .chain(args.iter())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    (argv, shorten(&prompt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failover_tries_each_other_kind_once_in_list_order_after_the_iterations_own() {
        let list: Vec<Reviewer> = [
            "claude:opus",
            "codex:gpt-5-codex",
            "claude:sonnet",
            "gemini:gemini-2.5-pro",
        ]
        .iter()
        .map(|r| Reviewer::parse(r).unwrap())
        .collect();
        let names = |o: Vec<Reviewer>| o.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(
            names(failover_order(&list[1], &list)),
            [
                "codex:gpt-5-codex",
                "claude:sonnet",
                "gemini:gemini-2.5-pro"
            ]
        );
        assert_eq!(
            names(failover_order(&list[0], &list)),
            ["claude:opus", "codex:gpt-5-codex", "gemini:gemini-2.5-pro"]
        );
        assert_eq!(names(failover_order(&list[0], &[])), ["claude:opus"]);
    }
}
