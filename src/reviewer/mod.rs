//! Running the independent reviewer (SPEC §8) and turning what it did into a
//! [`Reviewed`] for the decision.

use crate::clock::Utc;
use crate::model::cycle::{Due, Reviewed};
use crate::model::facts::Facts;
use crate::model::text::clip;
use crate::model::verdict;
use crate::store::atomic;
use crate::store::project::Project;
use process::Ending;

pub mod process;
pub mod prompt;
pub mod result;

use crate::store::diagnostics;
use result::CliResult;
use std::ffi::OsString;
use std::fmt;
use std::path::Path;
use std::time::Duration;

pub const DEFAULT_TIMEOUT_SECS: u64 = 1500;
/// Enough for any real review; a runaway reviewer cannot exhaust memory.
pub const STDOUT_LIMIT: usize = 32 * 1024 * 1024;
pub const STDERR_LIMIT: usize = 1024 * 1024;
/// The structured answer asked of every reviewer (SPEC §8): the verdict, and the review in
/// short, so the review file can be written even when the reviewer wrote none.
pub const JSON_SCHEMA: &str = r#"{"type":"object","properties":{"verdict":{"type":"string","enum":["PASS","FAIL"]},"summary":{"type":"string"},"findings":{"type":"array","items":{"type":"string"}}},"required":["verdict"]}"#;
/// What a reviewer may do without asking (it cannot ask: it runs with `--print`): read and
/// search the project, run commands such as `git diff`, and write its review file. An
/// allow-list instead of a permission bypass, which Claude Code refuses to root (SPEC §8).
/// One `=` argument, because the option takes a list and would swallow the prompt.
pub const ALLOWED_TOOLS: &str = "--allowedTools=Bash,Read,Write,Edit,Grep,Glob";
/// The CLI retries a failing API for about three minutes by default; a review that cannot
/// reach the API should fail within seconds, so the next stop is not held up.
pub const CLI_MAX_RETRIES: &str = "2";
/// Claude Code's variables for the session that runs the hook. The reviewer is a session
/// of its own: it must not talk to the parent's socket or bind the parent's session.
pub const PARENT_SESSION_VARS: [&str; 5] = [
    "CLAUDECODE",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_MESSAGING_SOCKET",
    "CLAUDE_CODE_MESSAGING_TOKEN",
];

/// The reviewer program and its time limit, from the environment.
#[derive(Debug, Clone)]
pub struct Config {
    pub program: OsString,
    pub timeout: Duration,
}

impl Config {
    /// `TASKIE_REVIEWER` and `TASKIE_REVIEW_TIMEOUT`; a bad timeout falls back to the
    /// default with a warning, because a review should not be lost to a typo.
    pub fn from_env(warn: &mut dyn FnMut(String)) -> Config {
        let program = std::env::var_os("TASKIE_REVIEWER")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "claude".into());
        let timeout = match std::env::var("TASKIE_REVIEW_TIMEOUT") {
            Err(_) => Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            Ok(text) => match text.trim().parse::<f64>() {
                Ok(secs) if secs > 0.0 && secs.is_finite() => Duration::from_secs_f64(secs),
                _ => {
                    warn(format!(
                        "TASKIE_REVIEW_TIMEOUT=\"{text}\" is not a positive number of seconds; using {DEFAULT_TIMEOUT_SECS}"
                    ));
                    Duration::from_secs(DEFAULT_TIMEOUT_SECS)
                }
            },
        };
        Config { program, timeout }
    }
}

/// Why a reviewer run produced no usable review. A failure never blocks the agent.
#[derive(Debug)]
pub enum ReviewerError {
    Spawn(OsString, std::io::Error),
    Timeout(Duration),
    /// A non-zero exit with nothing on stdout that says why.
    Exit(i32, Option<String>),
    Signal(i32),
    Reported(String),
    /// HTTP 429/529 or a usage limit: waiting is the fix.
    RateLimited(String),
    /// Stdout is not the CLI's result object.
    NotAResult(result::Unreadable),
    NoReview,
    /// More stdout than [`STDOUT_LIMIT`]: the result object cannot be read whole, and
    /// a verdict it held (possibly FAIL) would be lost.
    Truncated,
}

impl fmt::Display for ReviewerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReviewerError::Spawn(p, e) => write!(
                f,
                "could not start `{}` ({e}); install Claude Code so `claude` is on PATH, or set TASKIE_REVIEWER",
                p.to_string_lossy()
            ),
            ReviewerError::Timeout(t) => {
                write!(
                    f,
                    "timed out after {} s and was stopped (TASKIE_REVIEW_TIMEOUT)",
                    t.as_secs_f64()
                )
            }
            ReviewerError::Exit(c, None) => write!(f, "exited with status {c}"),
            ReviewerError::Exit(c, Some(line)) => write!(f, "exited with status {c}: {line}"),
            ReviewerError::Signal(s) => write!(f, "was killed by signal {s}"),
            ReviewerError::Reported(m) => write!(f, "reported an error: {m}"),
            ReviewerError::RateLimited(m) => write!(
                f,
                "hit a rate or usage limit of the API ({m}); it is retried at the next stop, so wait before stopping again"
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
            ReviewerError::NoReview => f.write_str(
                "no review produced (no review file, and no summary or findings in its structured output)",
            ),
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
    [
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
        prompt,
    ]
    .into_iter()
    .map(OsString::from)
    .collect()
}

/// Runs review `due` and reads its verdict. The caller holds the plan lock.
pub fn review(project: &Project, f: &Facts, due: &Due, config: &Config) -> Reviewed {
    let plan_dir = project.plan_dir(f.plan);
    let review_path = plan_dir.join(&due.review_file);
    let started = Utc::now();
    // A review file already there was left by an interrupted run: keep it, but out of
    // the way, so the file found afterwards is this run's.
    if review_path.exists() {
        let aside = project.logs().join(format!(
            "stale-{}-{}-{}",
            f.plan,
            started.compact(),
            due.review_file
        ));
        let _ = fs_err::rename(&review_path, aside);
    }
    let prompt = prompt::build(&project.root, f, due);
    let spec = process::Spec {
        program: config.program.clone(),
        args: args(&due.model, &prompt),
        cwd: project.root.clone(),
        env: vec![
            (crate::store::project::SKIP_VAR.into(), "1".into()),
            ("CLAUDE_CODE_MAX_RETRIES".into(), CLI_MAX_RETRIES.into()),
        ],
        env_remove: PARENT_SESSION_VARS.iter().map(Into::into).collect(),
        timeout: config.timeout,
        stdout_limit: STDOUT_LIMIT,
        stderr_limit: STDERR_LIMIT,
    };
    let log = project.logs().join(format!(
        "review-{}-{}-{}-{}.log",
        f.plan,
        due.review,
        due.iteration,
        started.compact()
    ));
    let log_rel = project.relative(&log);
    let outcome = process::run(&spec);
    write_log(&log, &spec, &prompt, &outcome);
    let fail = |e: ReviewerError, exit: Option<i32>| Reviewed::Failed {
        reason: e.to_string(),
        log: log_rel.clone(),
        exit,
    };
    let out = match outcome {
        Err(e) => return fail(ReviewerError::Spawn(spec.program.clone(), e), None),
        Ok(out) => out,
    };
    match out.ending {
        Ending::TimedOut => return fail(ReviewerError::Timeout(config.timeout), None),
        Ending::Signaled(s) => return fail(ReviewerError::Signal(s), None),
        Ending::Exited(c) if c != 0 => {
            // The CLI still prints its result object, with the cause, on a failed run.
            let e = match CliResult::parse(&out.stdout).ok() {
                Some(r) if r.failure().is_some() && r.is_rate_limit() => {
                    ReviewerError::RateLimited(clip(&r.failure().unwrap_or_default(), 301))
                }
                Some(r) if r.failure().is_some() => {
                    ReviewerError::Reported(clip(&r.failure().unwrap_or_default(), 301))
                }
                _ => ReviewerError::Exit(c, first_line(&out.stderr)),
            };
            return fail(e, Some(c));
        }
        Ending::Exited(_) => {}
    }
    // Reading the review file alone would let a PASS there outvote a FAIL in the lost result.
    if out.stdout_truncated {
        return fail(ReviewerError::Truncated, Some(0));
    }
    let result = match CliResult::parse(&out.stdout) {
        Ok(r) => r,
        Err(e) => return fail(ReviewerError::NotAResult(e), Some(0)),
    };
    if let Some(words) = result.failure() {
        let e = if result.is_rate_limit() {
            ReviewerError::RateLimited(clip(&words, 301))
        } else {
            ReviewerError::Reported(clip(&words, 301))
        };
        return fail(e, Some(0));
    }
    let structured = result.structured().unwrap_or_default();
    if !review_path.exists() {
        // With --json-schema the CLI's `result` is the structured output as JSON text,
        // never the review: the file is written from the summary and findings instead.
        match result::review_text(&structured) {
            Some(t) => {
                if let Err(e) = atomic::write(&review_path, t.as_bytes()) {
                    return fail(
                        ReviewerError::Reported(format!("cannot write the review file: {e}")),
                        Some(0),
                    );
                }
            }
            None => return fail(ReviewerError::NoReview, Some(0)),
        }
    }
    let text = read_bounded(&review_path);
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
    Reviewed::Verdict {
        reading: verdict::read(&claims),
        exit: 0,
        findings,
    }
}

/// The first non-empty line of stderr, shortened: the CLI's own words for a failure
/// that left no result object.
fn first_line(stderr: &[u8]) -> Option<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| clip(l, 301))
}

fn read_bounded(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(STDOUT_LIMIT as u64)
        .read_to_end(&mut buf)
        .ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

fn write_log(
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
