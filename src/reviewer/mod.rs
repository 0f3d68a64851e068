//! Running the independent reviewer (SPEC §8) and turning what it did into a
//! [`Reviewed`] for the decision.

use crate::clock::Utc;
use crate::model::cycle::{Due, Reviewed};
use crate::model::facts::Facts;
use crate::model::reviewers::Kind;
use crate::model::spend::{self, Spend};
use crate::model::verdict;
use crate::store::atomic;
use crate::store::event_log::Member;
use crate::store::project::Project;
use process::Ending;

pub mod claude;
pub mod codex;
pub mod gemini;
pub mod guardian;
pub mod kinds;
pub mod limit;
pub mod panel;
pub mod process;
pub mod prompt;
pub mod result;

use crate::store::diagnostics;
use result::CliResult;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const DEFAULT_TIMEOUT_SECS: u64 = 1500;
/// Enough for any real review; a runaway reviewer cannot exhaust memory.
pub const STDOUT_LIMIT: usize = 32 * 1024 * 1024;
pub const STDERR_LIMIT: usize = 1024 * 1024;
/// The structured answer asked of every reviewer (SPEC §8): the verdict, and the review in
/// short, so the review file can be written even when the reviewer wrote none.
pub const JSON_SCHEMA: &str = r#"{"type":"object","properties":{"verdict":{"type":"string","enum":["PASS","FAIL"]},"summary":{"type":"string"},"findings":{"type":"array","items":{"type":"string"}}},"required":["verdict"]}"#;
/// What a claude reviewer may do without asking (it cannot ask: it runs with `--print`):
/// read and search the project, run commands such as `git diff`, and write its review
/// file. An allow-list instead of a permission bypass, which Claude Code refuses to root
/// (SPEC §8). One `=` argument, because the option takes a list and would swallow the
/// prompt.
pub const ALLOWED_TOOLS: &str = "--allowedTools=Bash,Read,Write,Edit,Grep,Glob";
/// The claude CLI retries a failing API for about three minutes by default; a review that
/// cannot reach the API should fail within seconds, so the next stop is not held up.
pub const CLI_MAX_RETRIES: &str = "2";
/// Claude Code's variables for the session that runs the hook. A reviewer is a session of
/// its own: it must not talk to the parent's socket or bind the parent's session.
pub const PARENT_SESSION_VARS: [&str; 5] = [
    "CLAUDECODE",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_MESSAGING_SOCKET",
    "CLAUDE_CODE_MESSAGING_TOKEN",
];

/// The reviewer programs and the time limit, from the environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// The claude reviewer (`TASKIE_REVIEWER`).
    pub program: OsString,
    /// `TASKIE_CODEX`, `TASKIE_GEMINI` (SPEC §18).
    pub codex: OsString,
    pub gemini: OsString,
    pub timeout: Duration,
}

/// The variable naming a kind's program (its default is the program's usual name).
pub fn program_var(kind: Kind) -> crate::env::Var {
    match kind {
        Kind::Claude => crate::env::Var::Reviewer,
        Kind::Codex => crate::env::Var::Codex,
        Kind::Gemini => crate::env::Var::Gemini,
    }
}

impl Config {
    /// `TASKIE_REVIEWER` and `TASKIE_REVIEW_TIMEOUT`; a bad timeout falls back to the
    /// default with a warning, because a review should not be lost to a typo.
    pub fn from_env(warn: &mut dyn FnMut(String)) -> Config {
        let program_of = |kind: Kind| program_var(kind).get_or_default().unwrap_or_default();
        let program = program_of(Kind::Claude);
        let timeout = match crate::env::Var::ReviewTimeout
            .raw()
            .map(|v| v.to_string_lossy().into_owned())
        {
            None => Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            // try_from: a finite value too large for a Duration (above ~1.8e19 s) is out of
            // range, not a panic.
            Some(text) => match text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| *s > 0.0)
                .map(Duration::try_from_secs_f64)
            {
                Some(Ok(timeout)) => timeout,
                _ => {
                    warn(format!(
                        "TASKIE_REVIEW_TIMEOUT=\"{text}\" is not a positive number of seconds a timer can hold; using {DEFAULT_TIMEOUT_SECS}"
                    ));
                    Duration::from_secs(DEFAULT_TIMEOUT_SECS)
                }
            },
        };
        Config {
            program,
            codex: program_of(Kind::Codex),
            gemini: program_of(Kind::Gemini),
            timeout,
        }
    }

    pub fn program(&self, kind: Kind) -> &OsString {
        match kind {
            Kind::Claude => &self.program,
            Kind::Codex => &self.codex,
            Kind::Gemini => &self.gemini,
        }
    }
}

/// Why a reviewer run produced no usable review. A failure never blocks the agent.
#[derive(Debug)]
pub enum ReviewerError {
    Spawn(Kind, OsString, std::io::Error),
    Timeout(Duration),
    Exit(i32),
    Signal(i32),
    Reported(String),
    NoReview,
    /// Stdout is not the CLI's result object.
    NotAResult(result::Unreadable),
    /// More stdout than [`STDOUT_LIMIT`]: the result object cannot be read whole, and
    /// a verdict it held (possibly FAIL) would be lost.
    Truncated,
}

impl fmt::Display for ReviewerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReviewerError::Spawn(kind, p, e) => {
                let var = program_var(*kind).name();
                let default = program_var(*kind).default().unwrap_or_default();
                let product = match kind {
                    Kind::Claude => "Claude Code",
                    Kind::Codex => "the Codex CLI",
                    Kind::Gemini => "the Gemini CLI",
                };
                write!(
                    f,
                    "could not start `{}` ({e}); install {product} so `{default}` is on PATH, or set {var}",
                    p.to_string_lossy()
                )
            }
            ReviewerError::Timeout(t) => {
                write!(
                    f,
                    "timed out after {} s and was stopped (TASKIE_REVIEW_TIMEOUT)",
                    t.as_secs_f64()
                )
            }
            ReviewerError::Exit(c) => write!(f, "exited with status {c}"),
            ReviewerError::Signal(s) => write!(f, "was killed by signal {s}"),
            ReviewerError::Reported(m) => write!(f, "reported an error: {m}"),
            ReviewerError::NoReview => f.write_str(
                "no review produced (no review file, and no summary or findings in its structured output)",
            ),
            ReviewerError::NotAResult(result::Unreadable::NotJson) => f.write_str(
                "printed no JSON result object (is TASKIE_REVIEWER a Claude Code CLI?)",
            ),
            ReviewerError::NotAResult(result::Unreadable::NotAnObject) => f.write_str(
                "printed JSON that is not a result object, so no verdict can be read from it",
            ),
            ReviewerError::NotAResult(result::Unreadable::Malformed(e)) => {
                write!(f, "printed a result object that could not be read ({e})")
            }
            ReviewerError::Truncated => write!(
                f,
                "printed more than the {} MiB of output the hook reads, so its result could not be read",
                STDOUT_LIMIT / (1024 * 1024)
            ),
        }
    }
}

/// The exact arguments of SPEC §8.
pub fn args(model: &str, prompt: &str) -> Vec<OsString> {
    args_with_budget(model, prompt, None)
}

/// [`args`], with `--max-budget-usd` when the plan has a budget (SPEC §18).
pub fn args_with_budget(model: &str, prompt: &str, budget: Option<f64>) -> Vec<OsString> {
    let budget = budget.map(spend::dollars);
    let budget_args = budget
        .as_deref()
        .map(|b| ["--max-budget-usd", b])
        .into_iter()
        .flatten();
    let head = [
        "--print",
        "--model",
        model,
        "--output-format",
        "json",
        "--json-schema",
        JSON_SCHEMA,
        ALLOWED_TOOLS,
        "--settings",
        r#"{"disableAllHooks":true}"#,
    ];
    head.into_iter()
        .chain(budget_args)
        .chain([prompt])
        .map(OsString::from)
        .collect()
}

/// What a reviewer run gave the decision, and what it cost (SPEC §18).
#[derive(Debug)]
pub struct Run {
    pub reviewed: Reviewed,
    /// Reviewer processes started (k for a panel of k; 0 when none could start).
    pub reviews: u64,
    pub spend: Spend,
    /// A panel's members one by one; empty for a single reviewer.
    pub panel: Vec<Member>,
}

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
    let log = log_path(project, f, due, &stamp, None);
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
    };
    let attempt = match reviewer.kind {
        Kind::Claude => claude_attempt(&job, &review_path, &review_rel),
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
                && let Err(e) = atomic::write(&review_path, said.text.as_bytes())
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
            args_with_budget(&reviewer.model, &shorten(&prompt), claude_budget(due))
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

/// The `--max-budget-usd` of each claude reviewer: what is left of the plan's budget,
/// shared equally by the claude members of a panel (only claude can be capped).
pub fn claude_budget(due: &Due) -> Option<f64> {
    let claudes = if due.panel {
        due.reviewers
            .iter()
            .filter(|r| r.kind == Kind::Claude)
            .count()
            .max(1)
    } else {
        1
    };
    due.budget_left.map(|b| b / claudes as f64)
}

/// `.taskie/logs/review-<plan>-<R>-<N>-<stamp>[-<member>].log`.
pub fn log_path(
    project: &Project,
    f: &Facts,
    due: &Due,
    stamp: &str,
    member: Option<&str>,
) -> PathBuf {
    let member = member.map(|m| format!("-{m}")).unwrap_or_default();
    project.logs().join(format!(
        "review-{}-{}-{}-{stamp}{member}.log",
        f.plan, due.review, due.iteration
    ))
}

/// The claude reviewer (SPEC §8), writing its review to `review_path` (`review_rel` as
/// the prompt names it).
pub fn claude_attempt(job: &kinds::Job, review_path: &Path, review_rel: &str) -> kinds::Attempt {
    let (project, f, due, config) = (job.project, job.f, job.due, job.config);
    let prompt = prompt::build_for(&project.root, f, due, prompt::Delivery::File(review_rel));
    let spec = job.spec(
        &config.program,
        args_with_budget(&job.reviewer.model, &prompt, job.budget),
    );
    let outcome = process::run(&spec);
    write_log(job.log, &spec, &prompt, &outcome);
    let mut attempt = job.attempt(outcome.as_ref().ok());
    attempt.spend = claude::spend(outcome.as_ref().ok());
    attempt.result = claude_said(job, &spec, outcome, review_path);
    attempt
}

fn claude_said(
    job: &kinds::Job,
    spec: &process::Spec,
    outcome: std::io::Result<process::Outcome>,
    review_path: &Path,
) -> Result<kinds::Said, kinds::Failure> {
    use kinds::Failure;
    let out = outcome.map_err(|e| {
        Failure::new(
            ReviewerError::Spawn(Kind::Claude, spec.program.clone(), e),
            None,
        )
    })?;
    match out.ending {
        Ending::TimedOut => {
            return Err(Failure::new(
                ReviewerError::Timeout(job.config.timeout),
                None,
            ));
        }
        Ending::Signaled(s) => return Err(Failure::new(ReviewerError::Signal(s), None)),
        Ending::Exited(c) if c != 0 => {
            // The CLI still prints its result object, with the cause, on a failed run.
            return Err(match CliResult::parse(&out.stdout).ok() {
                Some(r) if r.failure().is_some() => claude_failure(&r, c),
                _ => match kinds::first_error_line(&out.stderr) {
                    Some(words) => kinds::reported(&words, c),
                    None => Failure::new(ReviewerError::Exit(c), Some(c)),
                },
            });
        }
        Ending::Exited(_) => {}
    }
    // Reading the review file alone would let a PASS there outvote a FAIL in the lost result.
    if out.stdout_truncated {
        return Err(Failure::new(ReviewerError::Truncated, Some(0)));
    }
    let result = CliResult::parse(&out.stdout)
        .map_err(|e| Failure::new(ReviewerError::NotAResult(e), Some(0)))?;
    if result.failure().is_some() {
        return Err(claude_failure(&result, 0));
    }
    let structured = result.structured().unwrap_or_default();
    if !review_path.exists() {
        // With --json-schema the CLI's `result` is the structured output as JSON text,
        // never the review: the file is written from the summary and findings instead.
        match result::review_text(&structured) {
            Some(t) => {
                if let Err(e) = atomic::write(review_path, t.as_bytes()) {
                    return Err(Failure::new(
                        ReviewerError::Reported(format!("cannot write the review file: {e}")),
                        Some(0),
                    ));
                }
            }
            None => return Err(Failure::new(ReviewerError::NoReview, Some(0))),
        }
    }
    let text = read_bounded(review_path);
    let result_verdict = result.result_verdict();
    let claims = verdict::Claims {
        structured: structured.verdict.as_deref(),
        result: result_verdict.as_deref(),
        review_file: text.as_deref(),
    };
    let findings = if structured.findings.is_empty() {
        text.as_deref()
            .map(diagnostics::findings)
            .unwrap_or_default()
    } else {
        structured.findings.clone()
    };
    Ok(kinds::Said {
        reading: verdict::read(&claims),
        text: text.unwrap_or_default(),
        findings,
    })
}

/// A failure the CLI reported, in its own words; HTTP 429/529 and usage limits named.
fn claude_failure(r: &CliResult, exit: i32) -> kinds::Failure {
    let words = r.failure().unwrap_or_default();
    if r.is_usage_limit() {
        let said = r.result_text().unwrap_or(&words);
        kinds::limited(&words, exit).usage_limit(said)
    } else if r.is_rate_limit() {
        kinds::limited(&words, exit)
    } else {
        kinds::reported(&words, exit)
    }
}

/// The review file as written: through the one reader, so a reviewer that leaves a FIFO
/// or a device there cannot hold the hook.
pub fn read_bounded(path: &Path) -> Option<String> {
    let bytes = crate::store::fs::read_regular(path, STDOUT_LIMIT as u64).ok()??;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

pub fn write_log(
    log: &Path,
    spec: &process::Spec,
    prompt: &str,
    outcome: &std::io::Result<process::Outcome>,
) {
    let mut text = String::new();
    let shown: Vec<String> = spec
        .args
        .iter()
        .map(|a| a.to_string_lossy())
        .map(|a| {
            if a == prompt {
                format!("<prompt: {} bytes>", prompt.len())
            } else {
                a.into_owned()
            }
        })
        .collect();
    text.push_str(&format!(
        "command: {} {}\n",
        spec.program.to_string_lossy(),
        shown.join(" ")
    ));
    text.push_str(&format!(
        "cwd: {}\ntimeout_s: {}\n",
        spec.cwd.display(),
        spec.timeout.as_secs_f64()
    ));
    match outcome {
        Err(e) => text.push_str(&format!("spawn error: {e}\n")),
        Ok(o) => {
            let ending = match o.ending {
                Ending::Exited(c) => format!("exited with status {c}"),
                Ending::Signaled(s) => format!("killed by signal {s}"),
                Ending::TimedOut => "timed out; process group terminated".into(),
            };
            text.push_str(&format!(
                "pid: {}\nending: {ending}\nduration_ms: {}\n",
                o.pid,
                o.duration.as_millis()
            ));
            if o.stragglers_terminated {
                text.push_str(
                    "note: processes it started still held its output after it exited; their process group was terminated\n",
                );
            }
            let trunc = |t: bool| if t { " (truncated)" } else { "" };
            text.push_str(&format!(
                "--- stdout ({} bytes kept{}) ---\n",
                o.stdout.len(),
                trunc(o.stdout_truncated)
            ));
            text.push_str(&String::from_utf8_lossy(&o.stdout));
            text.push_str(&format!(
                "\n--- stderr ({} bytes kept{}) ---\n",
                o.stderr.len(),
                trunc(o.stderr_truncated)
            ));
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            text.push('\n');
        }
    }
    text.push_str(&format!("--- prompt ---\n{prompt}\n"));
    if let Err(e) = atomic::write(log, text.as_bytes()) {
        eprintln!("taskie-hook: cannot write the reviewer log: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_adds_max_budget_usd_before_the_prompt() {
        let a: Vec<String> = args_with_budget("opus", "PROMPT", Some(0.75000000001))
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect();
        let plain: Vec<String> = args("opus", "PROMPT")
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect();
        assert_eq!(a[..a.len() - 3], plain[..plain.len() - 1]);
        assert_eq!(a[a.len() - 3..], ["--max-budget-usd", "0.75", "PROMPT"]);
    }

    #[test]
    fn arguments_are_exactly_the_documented_ones() {
        let a: Vec<String> = args("opus", "PROMPT")
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect();
        assert_eq!(
            a,
            [
                "--print",
                "--model",
                "opus",
                "--output-format",
                "json",
                "--json-schema",
                r#"{"type":"object","properties":{"verdict":{"type":"string","enum":["PASS","FAIL"]},"summary":{"type":"string"},"findings":{"type":"array","items":{"type":"string"}}},"required":["verdict"]}"#,
                "--allowedTools=Bash,Read,Write,Edit,Grep,Glob",
                "--settings",
                r#"{"disableAllHooks":true}"#,
                "PROMPT"
            ]
        );
    }
}
