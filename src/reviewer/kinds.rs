//! What every reviewer kind shares (SPEC §18): the job it is given, and the attempt it
//! comes back with — a review (its text and verdict) or a failure, and its spend.

use crate::model::cycle::{Due, Failure, Reviewed};
use crate::model::facts::Facts;
use crate::model::pause::{self, Implausible};
use crate::model::reviewers::Kind;
use crate::model::reviewers::Reviewer;
use crate::model::spend::Spend;
use crate::model::text::clip;
use crate::model::verdict::Reading;
use crate::reviewer::config::{
    CLI_MAX_RETRIES, Config, PARENT_SESSION_VARS, STDERR_LIMIT, STDOUT_LIMIT,
};
use crate::reviewer::error::ReviewerError;
use crate::reviewer::process::{self, Ending};
use crate::store::event_log::Member;
use crate::store::project::Project;
use std::ffi::OsString;
use std::path::Path;

/// One reviewer to run for review `due`.
pub struct Job<'a> {
    pub project: &'a Project,
    pub f: &'a Facts<'a>,
    pub due: &'a Due,
    pub config: &'a Config,
    pub reviewer: &'a Reviewer,
    pub log: &'a Path,
    /// The dollars this reviewer may spend, when the plan has a budget.
    pub budget: Option<f64>,
    /// A panel's members start together: each waits here, set up, for all the others.
    pub gate: Option<&'a Ticket<'a>>,
    /// This run sweeps the logs directory while it waits (`process::Spec::sweep`): one
    /// run per review, a panel's first member.
    pub sweep: bool,
}

/// Where the members of a panel wait for each other between their setup (prompt, files,
/// arguments) and their start, so that they start together instead of each after its
/// own setup. Every member arrives once: at its start, or when its thread ends
/// without one (a failed setup, a panic; see [`Ticket`]), and one whose thread could not
/// be created is counted out by [`StartLine::leave`], so nobody waits forever.
pub struct StartLine {
    waiting_for: std::sync::Mutex<usize>,
    all_set: std::sync::Condvar,
}

impl StartLine {
    pub fn new(members: usize) -> StartLine {
        StartLine {
            waiting_for: std::sync::Mutex::new(members),
            all_set: std::sync::Condvar::new(),
        }
    }

    /// One member will not start: the others no longer wait for it.
    pub fn leave(&self) {
        let mut n = self
            .waiting_for
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.all_set.notify_all();
        }
    }

    /// Arrives and waits until every member has arrived or left.
    fn arrive(&self) {
        self.leave();
        let n = self
            .waiting_for
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        drop(
            self.all_set
                .wait_while(n, |n| *n > 0)
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
    }
}

/// One member's place at the [`StartLine`]: arrives once, at the latest when dropped.
pub struct Ticket<'a> {
    line: &'a StartLine,
    used: std::cell::Cell<bool>,
}

impl<'a> Ticket<'a> {
    pub fn new(line: &'a StartLine) -> Ticket<'a> {
        Ticket {
            line,
            used: std::cell::Cell::new(false),
        }
    }

    fn arrive(&self) {
        if !self.used.replace(true) {
            self.line.arrive();
        }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        // Not waiting: a member that gives up must not hold up the others' end.
        if !self.used.replace(true) {
            self.line.leave();
        }
    }
}

impl Job<'_> {
    /// Called right before the reviewer process starts: a panel member waits for the others.
    pub fn start(&self) {
        if let Some(ticket) = self.gate {
            ticket.arrive();
        }
    }

    /// An attempt not yet concluded: `outcome` tells whether a process ran.
    pub fn attempt(&self, outcome: Option<&process::Captured>) -> Attempt {
        Attempt {
            reviewer: self.reviewer.clone(),
            log: self.project.relative(self.log),
            started: outcome.is_some(),
            spend: Spend {
                reviewer_ms: outcome.map(|o| o.duration.as_millis() as u64),
                ..Spend::default()
            },
            result: Err(FailedRun::new(ReviewerError::NoReview, None)),
            unsandboxed: None,
        }
    }

    /// The process spec every kind shares: no shell, the project as working directory,
    /// the prompt on stdin, the recursion guard, the time limit and the output bounds of
    /// SPEC §8.
    pub fn spec(&self, program: &OsString, args: Vec<OsString>, prompt: &str) -> process::Spec {
        let mut env: Vec<(OsString, OsString)> =
            vec![(crate::env::Var::HookSkip.name().into(), "1".into())];
        if self.reviewer.kind == Kind::Claude {
            env.push(("CLAUDE_CODE_MAX_RETRIES".into(), CLI_MAX_RETRIES.into()));
        }
        process::Spec {
            program: program.clone(),
            args,
            cwd: self.project.root.clone(),
            env,
            env_remove: PARENT_SESSION_VARS.iter().map(Into::into).collect(),
            // On stdin, never as an argument: an argument is limited in size (128 KiB on
            // Linux) and cannot hold a NUL, and the prompt grows with the ledger.
            stdin: prompt.as_bytes().to_vec(),
            label: "reviewer",
            timeout: self.config.timeout,
            term_grace: process::TERM_GRACE,
            stdout_limit: STDOUT_LIMIT,
            stderr_limit: STDERR_LIMIT,
            guardian: super::guardian::Launch::this_binary(),
            // The reviewer logs' directory, where killed writers leave temporary files.
            sweep: self.sweep.then(|| self.project.logs()),
        }
    }
}

/// The whole run of one due review, whatever ran (one reviewer, a failover, a panel):
/// what it gave the decision ([`Reviewed`]) and what it cost (SPEC §18). Built from the
/// [`Attempt`]s, each of which gave a [`GivenReview`] or a [`FailedRun`].
#[derive(Debug)]
pub struct ReviewRun {
    pub reviewed: Reviewed,
    /// Reviewer processes started (k for a panel of k; 0 when none could start): each may
    /// have cost money.
    pub processes: u64,
    /// Reviews that count (SPEC §22): the reviewers whose review the verdict weighs. An
    /// unavailable reviewer's process is never one, even when it ran.
    pub reviews: u64,
    pub spend: Spend,
    /// A panel's members one by one; empty for a single reviewer.
    pub panel: Vec<Member>,
    /// Why a claude reviewer's shell commands ran without Claude Code's sandbox.
    pub unsandboxed: Option<String>,
}

/// One reviewer's process: who, its log, its cost, and its review or why it gave none.
#[derive(Debug)]
pub struct Attempt {
    pub reviewer: Reviewer,
    /// Its log, relative to the project.
    pub log: String,
    /// A process was started (it counts as a review run, and may have cost money).
    pub started: bool,
    pub spend: Spend,
    pub result: Result<GivenReview, FailedRun>,
    /// Why its shell commands ran without the host's sandbox (claude only).
    pub unsandboxed: Option<String>,
}

/// A review: its text (as the review file holds it), its verdict and its findings (the
/// first of which the block reason quotes).
#[derive(Debug)]
pub struct GivenReview {
    pub reading: Reading,
    pub text: String,
    pub findings: Vec<String>,
    /// Ledger ids it confirmed fixed or reopened (SPEC §21).
    pub verified: crate::model::findings::Verified,
}

/// Why one reviewer's process gave no review, and its exit status when it exited.
#[derive(Debug)]
pub struct FailedRun {
    pub error: ReviewerError,
    pub exit: Option<i32>,
    /// The reviewer's own words when they are its usage-limit answer (SPEC §22), which
    /// may say when the limit resets.
    pub usage_limit: Option<String>,
}

impl FailedRun {
    pub fn new(error: ReviewerError, exit: Option<i32>) -> FailedRun {
        FailedRun {
            error,
            exit,
            usage_limit: None,
        }
    }

    /// Why the reviewer was unavailable, without the retry advice (for a failover note).
    pub fn why(&self) -> String {
        self.error.to_string().replace(RETRY_ADVICE, "")
    }

    /// This failure, marked as `words` being the reviewer's usage-limit answer.
    pub fn usage_limit(mut self, words: &str) -> FailedRun {
        self.usage_limit = Some(words.trim().to_owned());
        self
    }

    /// How the run ended for the decision: a pause until the limit resets when the
    /// answer says when and that is within a pause's reach (SPEC §22), else a failure,
    /// counted. `now` is Unix seconds.
    pub fn concluded(&self, reviewer: &Reviewer, log: &str, now: i64) -> Reviewed {
        let Some(words) = self.usage_limit.as_deref() else {
            return self.reviewed(log);
        };
        let Some(until) =
            crate::model::limit::reset(reviewer.kind, words, now, &jiff::tz::TimeZone::system())
        else {
            return self.reviewed(log);
        };
        let until = pause::within_calendar(until);
        let why = match pause::check_reset(until, now) {
            Ok(()) => {
                return Reviewed::Paused {
                    until,
                    by: format!(
                        "{reviewer} reached its usage limit (\"{}\")",
                        clip(&words.replace('\n', " "), 200)
                    ),
                    log: log.into(),
                };
            }
            Err(Implausible::Passed) => "has already passed".to_owned(),
            Err(Implausible::TooFar) => format!(
                "is more than {} days away",
                pause::LONGEST_PAUSE_SECS / 86_400
            ),
        };
        Reviewed::Failed {
            reason: format!(
                "{}; the reset it names ({}) {why}, so this is no pause: it counts as a failure",
                self.why(),
                pause::at(until)
            ),
            log: log.into(),
            exit: self.exit,
            failure: Failure::Reviewer,
        }
    }

    pub fn reviewed(&self, log: &str) -> Reviewed {
        Reviewed::Failed {
            reason: self.error.to_string(),
            log: log.into(),
            exit: self.exit,
            failure: Failure::Reviewer,
        }
    }
}

/// One run of a kind that the hook does not talk to beyond its argv (codex, gemini):
/// start `program`, log it, sort out the shared failures, and let `read` turn the output
/// of a process that exited (stdout, stderr, exit status) into its spend and review.
pub fn run(
    job: &Job,
    program: &OsString,
    args: Vec<OsString>,
    prompt: &str,
    read: impl FnOnce(&[u8], &[u8], i32) -> (Spend, Result<GivenReview, FailedRun>),
) -> Attempt {
    let spec = job.spec(program, args, prompt);
    job.start();
    let outcome = process::run(&spec);
    crate::reviewer::log::write(job.log, &spec, prompt, &outcome);
    let mut attempt = job.attempt(outcome.as_ref().ok());
    match ended(job, outcome) {
        Err(failure) => attempt.result = Err(failure),
        Ok(out) => {
            let code = match out.ending {
                Ending::Exited(c) => c,
                _ => 0,
            };
            let (spend, result) = read(&out.stdout, &out.stderr, code);
            attempt.spend = Spend {
                reviewer_ms: attempt.spend.reviewer_ms,
                ..spend
            };
            attempt.result = result;
        }
    }
    attempt
}

/// The failures every kind shares: it could not start, timed out or was killed, or
/// printed more than can be read. `Ok` is the outcome of a process that exited.
pub fn ended(
    job: &Job,
    outcome: std::io::Result<process::Captured>,
) -> Result<process::Captured, FailedRun> {
    let program = job.config.program(job.reviewer.kind).clone();
    let out = outcome
        .map_err(|e| FailedRun::new(ReviewerError::Spawn(job.reviewer.kind, program, e), None))?;
    match out.ending {
        Ending::TimedOut => Err(FailedRun::new(
            ReviewerError::Timeout(job.config.timeout),
            None,
        )),
        Ending::Signaled(s) => Err(FailedRun::new(ReviewerError::Signal(s), None)),
        Ending::Exited(_) if out.stdout_truncated => {
            Err(FailedRun::new(ReviewerError::Truncated, None))
        }
        Ending::Exited(_) => Ok(out),
    }
}

/// A failure that quotes the reviewer's own words, naming rate and usage limits as
/// such (SPEC §8); `exit` 0 when it exited successfully but reported an error.
pub fn reported(words: &str, exit: i32) -> FailedRun {
    let words = clip(words.trim(), 301);
    let lower = words.to_ascii_lowercase();
    let limit = [
        "429",
        "too many requests",
        "rate limit",
        "usage limit",
        "quota",
        "resource_exhausted",
    ]
    .iter()
    .any(|k| lower.contains(k));
    if limit {
        return limited(&words, exit);
    }
    let text = if exit != 0 {
        format!("{words} (exit status {exit})")
    } else {
        words
    };
    FailedRun::new(ReviewerError::Reported(text), Some(exit))
}

/// A rate or usage limit (HTTP 429/529, a usage cap), named as such: waiting is the fix,
/// not the reviewer's setup.
pub fn limited(words: &str, exit: i32) -> FailedRun {
    let words = clip(words.trim(), 301);
    FailedRun::new(
        ReviewerError::Reported(format!("hit a rate or usage limit ({words}){RETRY_ADVICE}")),
        Some(exit),
    )
}

/// What a limit's failure tells the agent to do; not said of a reviewer another one
/// replaced (SPEC §22 failover), which needs no retry.
const RETRY_ADVICE: &str = "; it is retried at the next stop, so wait before stopping again";

/// The first stderr line that says error, else the first that is not a warning or
/// chatter: what a CLI said before it died.
pub fn first_error_line(stderr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    // codex prints this on every run, whatever happens.
    let chatter = |l: &&str| l.starts_with("Reading additional input from stdin");
    let lines = || {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .filter(|l| !chatter(l))
    };
    lines()
        .find(|l| {
            let lower = l.to_ascii_lowercase();
            lower.starts_with("error") || lower.contains("error:")
        })
        .or_else(|| lines().find(|l| !l.to_ascii_lowercase().starts_with("warning")))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_named_and_other_errors_quoted_with_the_exit_status() {
        let f = reported(
            "ERROR: exceeded retry limit, last status: 429 Too Many Requests",
            1,
        );
        assert!(
            f.error.to_string().contains("rate or usage limit"),
            "{}",
            f.error
        );
        let f = reported("Invalid auth method selected.", 41);
        assert_eq!(
            f.error.to_string(),
            "reported an error: Invalid auth method selected. (exit status 41)"
        );
        assert_eq!(f.exit, Some(41));
    }

    #[test]
    fn the_first_error_line_skips_warnings() {
        let err = b"warning: no bubblewrap\n\nERROR: exceeded retry limit\nmore\n";
        assert_eq!(
            first_error_line(err).as_deref(),
            Some("ERROR: exceeded retry limit")
        );
        assert_eq!(
            first_error_line(b"warning: x\nboom\n").as_deref(),
            Some("boom")
        );
        assert_eq!(first_error_line(b"\n"), None);
        assert_eq!(
            first_error_line(b"Reading additional input from stdin...\nno auth\n").as_deref(),
            Some("no auth")
        );
    }
}
