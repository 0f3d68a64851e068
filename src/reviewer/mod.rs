//! Running the independent reviewer (SPEC §8) and turning what it did into a
//! [`Reviewed`] for the decision. This file is the index and the dispatch: each kind's
//! command line and reading is in its own file (`claude.rs`, `codex.rs`, `gemini.rs`),
//! what they share in `kinds.rs`, the environment and limits in `config.rs`, the failures
//! in `error.rs`, the logs in `log.rs`.

use crate::clock::Utc;
use crate::model::cycle::{Due, Reviewed};
use crate::model::facts::Facts;
use crate::model::reviewers::Kind;
use crate::model::spend::Spend;
use crate::store::atomic;
use crate::store::project::Project;

pub mod claude;
pub mod codex;
pub mod config;
pub mod error;
pub mod gemini;
pub mod guardian;
pub mod kinds;
pub mod limit;
pub mod log;
pub mod panel;
pub mod process;
pub mod prompt;
pub mod result;

pub use config::{Config, program_var};
pub use error::ReviewerError;
pub use kinds::Run;

use std::path::PathBuf;

/// One reviewer run about to start: when, and its log.
#[derive(Debug, Clone)]
pub struct Start {
    pub started: Utc,
    /// Unique among runs: UTC to the millisecond, then the hook's pid.
    pub stamp: String,
    pub log: PathBuf,
}

/// Names the run of review `due`: its log name holds the time to the millisecond and the
/// hook's pid, so quick runs, and runs of parallel hooks, never share a log.
pub fn start(project: &Project, f: &Facts, due: &Due) -> Start {
    let started = Utc::now();
    let second = started.compact();
    let stamp = format!(
        "{}{:03}Z-{}",
        second.trim_end_matches('Z'),
        started.millis,
        std::process::id()
    );
    let log = log::path(project, f, due, &stamp, None);
    Start {
        started,
        stamp,
        log,
    }
}

/// Runs review `due` and reads its verdict. The caller holds the plan lock.
pub fn review(project: &Project, f: &Facts, due: &Due, config: &Config, run: &Start) -> Run {
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
        return Run {
            reviewed: Reviewed::Failed {
                reason: "no reviewer is configured".into(),
                log: String::new(),
                exit: None,
            },
            reviews: 0,
            spend: Spend::default(),
            panel: Vec::new(),
        };
    };
    let log = run.log.clone();
    let review_rel = f.rel(&due.review_file);
    let job = kinds::Job {
        project,
        f,
        due,
        config,
        reviewer,
        log: &log,
        budget: due.budget_left,
        gate: None,
    };
    let attempt = match reviewer.kind {
        Kind::Claude => claude::attempt(&job, &review_path, &review_rel),
        Kind::Codex => codex::attempt(&job),
        Kind::Gemini => gemini::attempt(&job),
    };
    let reviews = u64::from(attempt.started);
    let reviewed = match attempt.result {
        Err(failure) => failure.concluded(reviewer, &attempt.log, f.now),
        Ok(said) => {
            // claude wrote (or was given) the review file; the others answer with text.
            if reviewer.kind != Kind::Claude
                && !review_path.exists()
                && let Err(e) = atomic::replace(&review_path, said.text.as_bytes())
            {
                kinds::Failure::new(
                    ReviewerError::Reported(format!("cannot write the review file: {e}")),
                    Some(0),
                )
                .reviewed(&attempt.log)
            } else {
                Reviewed::Verdict {
                    reading: said.reading,
                    exit: 0,
                    findings: said.findings,
                }
            }
        }
    };
    Run {
        reviewed,
        reviews,
        spend: attempt.spend,
        panel: Vec::new(),
    }
}

/// The command line of review `due`'s first reviewer, its prompt passed through
/// `shorten` (for `--dry-run`).
pub fn command_line(
    project: &Project,
    f: &Facts,
    due: &Due,
    config: &Config,
    shorten: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let Some(reviewer) = due.reviewers.first() else {
        return Vec::new();
    };
    let args = match reviewer.kind {
        Kind::Claude => {
            let prompt = prompt::build(&project.root, f, due);
            claude::args_with_budget(&reviewer.model, &shorten(&prompt), claude::budget(due))
        }
        Kind::Codex => {
            let prompt = prompt::build_for(&project.root, f, due, prompt::Delivery::Structured);
            codex::args(
                &reviewer.model,
                &project.logs().join(codex::SCHEMA_FILE),
                &shorten(&prompt),
            )
        }
        Kind::Gemini => {
            let prompt = prompt::build_for(&project.root, f, due, prompt::Delivery::Response);
            gemini::args(&reviewer.model, &shorten(&prompt))
        }
    };
    std::iter::once(config.program(reviewer.kind))
        .chain(args.iter())
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}
