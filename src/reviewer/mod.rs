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

mod guardian;
pub mod process;
pub mod prompt;
use serde_json::Value;
use std::ffi::OsString;
use std::fmt;
use std::path::Path;
use std::time::Duration;

pub const DEFAULT_TIMEOUT_SECS: u64 = 1500;
/// Enough for any real review; a runaway reviewer cannot exhaust memory.
pub const STDOUT_LIMIT: usize = 32 * 1024 * 1024;
pub const STDERR_LIMIT: usize = 1024 * 1024;
const JSON_SCHEMA: &str = r#"{"type":"object","properties":{"verdict":{"type":"string","enum":["PASS","FAIL"]}},"required":["verdict"]}"#;

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
    Exit(i32),
    Signal(i32),
    Reported(String),
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
            ReviewerError::Exit(c) => write!(f, "exited with status {c}"),
            ReviewerError::Signal(s) => write!(f, "was killed by signal {s}"),
            ReviewerError::Reported(m) => write!(f, "reported an error: {m}"),
            ReviewerError::NoReview => {
                f.write_str("no review produced (no review file and no result text)")
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
    [
        "--print",
        "--model",
        model,
        "--output-format",
        "json",
        "--json-schema",
        JSON_SCHEMA,
        "--dangerously-skip-permissions",
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
        env: vec![("TASKIE_HOOK_SKIP".into(), "1".into())],
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
        Ending::Exited(c) if c != 0 => return fail(ReviewerError::Exit(c), Some(c)),
        Ending::Exited(_) => {}
    }
    // Reading the review file alone would let a PASS there outvote a FAIL in the lost result.
    if out.stdout_truncated {
        return fail(ReviewerError::Truncated, Some(0));
    }
    let result: Option<Value> = serde_json::from_slice::<Value>(&out.stdout)
        .ok()
        .filter(Value::is_object);
    if let Some(r) = &result {
        let is_error = r.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        let subtype = r
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or("success");
        if is_error || subtype != "success" {
            let text = r.get("result").and_then(Value::as_str).unwrap_or(subtype);
            return fail(ReviewerError::Reported(clip(text, 301)), Some(0));
        }
    }
    if !review_path.exists() {
        let text = result
            .as_ref()
            .and_then(|r| r.get("result"))
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty());
        match text {
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
    Reviewed::Verdict {
        reading: verdict::read(result.as_ref(), text.as_deref()),
        exit: 0,
    }
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
                r#"{"type":"object","properties":{"verdict":{"type":"string","enum":["PASS","FAIL"]}},"required":["verdict"]}"#,
                "--dangerously-skip-permissions",
                "--settings",
                r#"{"disableAllHooks":true}"#,
                "PROMPT"
            ]
        );
    }
}
