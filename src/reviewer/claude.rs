//! The claude reviewer (SPEC §8): its command line, its run, and what its result object
//! says (the verdict, a failure, the spend: `total_cost_usd`, `usage`, `num_turns`).

use crate::model::cycle::Due;
use crate::model::reviewers::Kind;
use crate::model::spend::{self, Spend};
use crate::model::verdict;
use crate::reviewer::error::ReviewerError;
use crate::reviewer::kinds;
use crate::reviewer::log;
use crate::reviewer::process::{self, Captured, Ending};
use crate::reviewer::prompt;
use crate::reviewer::result::{self, CliResult};
use crate::reviewer::sandbox;
use crate::store::atomic;
use crate::store::diagnostics;
use std::ffi::OsString;
use std::path::Path;

/// What a claude reviewer may do without asking (it cannot ask: it runs with `--print`):
/// read and search the project, run commands such as `git diff`, and write its review
/// file (`review_rel`, relative to the project, its working directory) — no other file.
/// Claude Code honours only `Edit(<path>)` as a file-path rule, and it covers every
/// file-editing tool (a `Write(<path>)` rule is ignored); a bare `Edit` or `Write` would
/// let the reviewer change the work it judges (SPEC §8). An allow-list instead of a
/// permission bypass, which Claude Code refuses to root. One `=` argument, because the
/// option takes a list.
pub fn allowed_tools(review_rel: &str) -> String {
    format!("--allowedTools=Bash,Read,Grep,Glob,Edit({review_rel})")
}

/// The reviewer's `--settings`: no hooks (a reviewer never re-enters Taskie's), and,
/// when `sandbox` is on, Claude Code's sandbox around every Bash command. Sandboxed
/// commands may write the project (the git check after the review sees what they
/// changed) and `/tmp`, where builds and tests put their files; nothing else. No way out:
/// `allowUnsandboxedCommands: false` makes the CLI ignore a command's request to run
/// unsandboxed, and a sandbox that cannot start is no error (`failIfUnavailable: false`):
/// the CLI then says so on stderr and the review says it too ([`sandbox::cli_warning`]).
pub fn settings(sandbox: bool) -> String {
    serde_json::json!({
        "disableAllHooks": true,
        "sandbox": {
            "enabled": sandbox,
            "failIfUnavailable": false,
            "allowUnsandboxedCommands": false,
            "filesystem": {"allowWrite": ["/tmp"]},
        },
    })
    .to_string()
}

/// The exact arguments of SPEC §8, for a reviewer writing `review_rel`, with
/// `--max-budget-usd` when the plan has a budget (SPEC §18), and Claude Code's sandbox as
/// `sandbox` says. The prompt goes on stdin: `--print` without a prompt argument reads it
/// there.
pub fn args_with_budget(
    model: &str,
    budget: Option<f64>,
    review_rel: &str,
    sandbox: bool,
) -> Vec<OsString> {
    let schema = result::answer_schema(false);
    let tools = allowed_tools(review_rel);
    let settings = settings(sandbox);
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
        schema.as_str(),
        tools.as_str(),
        "--settings",
        settings.as_str(),
    ];
    head.into_iter()
        .chain(budget_args)
        .map(OsString::from)
        .collect()
}

/// The `--max-budget-usd` of each claude reviewer: what is left of the plan's budget,
/// shared equally by the claude members of a panel (only claude can be capped).
pub fn budget(due: &Due) -> Option<f64> {
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

/// The claude reviewer (SPEC §8), writing its review to `review_path` (`review_rel` as
/// the prompt names it).
pub fn attempt(job: &kinds::Job, review_path: &Path, review_rel: &str) -> kinds::Attempt {
    let (project, f, due, config) = (job.project, job.f, job.due, job.config);
    let prompt = prompt::build(&project.root, f, due, prompt::Delivery::File(review_rel));
    let sandboxed = sandbox::choice(config.path.as_deref());
    let spec = job.spec(
        &config.claude,
        args_with_budget(
            &job.reviewer.model,
            job.budget,
            review_rel,
            sandboxed.enabled,
        ),
        &prompt,
    );
    job.start();
    let outcome = process::run(&spec);
    log::write(job.log, &spec, &prompt, &outcome);
    let mut attempt = job.attempt(outcome.as_ref().ok());
    attempt.spend = spend(outcome.as_ref().ok());
    attempt.unsandboxed = sandboxed.unavailable.clone().or_else(|| {
        let out = outcome.as_ref().ok()?;
        sandbox::cli_warning(&out.stderr)
    });
    attempt.result = said(job, &spec, outcome, review_path);
    attempt
}

fn said(
    job: &kinds::Job,
    spec: &process::Spec,
    outcome: std::io::Result<process::Captured>,
    review_path: &Path,
) -> Result<kinds::GivenReview, kinds::FailedRun> {
    use kinds::FailedRun;
    let out = outcome.map_err(|e| {
        FailedRun::new(
            ReviewerError::Spawn(Kind::Claude, spec.program.clone(), e),
            None,
        )
    })?;
    match out.ending {
        Ending::TimedOut => {
            return Err(FailedRun::new(
                ReviewerError::Timeout(job.config.timeout),
                None,
            ));
        }
        Ending::Signaled(s) => return Err(FailedRun::new(ReviewerError::Signal(s), None)),
        Ending::Exited(c) if c != 0 => {
            // The CLI still prints its result object, with the cause, on a failed run.
            return Err(match CliResult::parse(&out.stdout).ok() {
                Some(r) if r.failure().is_some() => failure(&r, c),
                _ => match kinds::first_error_line(&out.stderr) {
                    Some(words) => kinds::reported(&words, c),
                    None => FailedRun::new(ReviewerError::Exit(c), Some(c)),
                },
            });
        }
        Ending::Exited(_) => {}
    }
    // Reading the review file alone would let a PASS there outvote a FAIL in the lost result.
    if out.stdout_truncated {
        return Err(FailedRun::new(ReviewerError::Truncated, Some(0)));
    }
    let result = CliResult::parse(&out.stdout)
        .map_err(|e| FailedRun::new(ReviewerError::NotAResult(e), Some(0)))?;
    if result.failure().is_some() {
        return Err(failure(&result, 0));
    }
    let structured = result.structured().unwrap_or_default();
    if !review_path.exists() {
        // With --json-schema the CLI's `result` is the structured output as JSON text,
        // never the review: the file is written from the summary and findings instead.
        match result::review_text(&structured) {
            Some(t) => {
                if let Err(e) = atomic::write_unsynced(review_path, t.as_bytes()) {
                    return Err(FailedRun::new(
                        ReviewerError::Reported(format!("cannot write the review file: {e}")),
                        Some(0),
                    ));
                }
            }
            None => return Err(FailedRun::new(ReviewerError::NoReview, Some(0))),
        }
    }
    let text = log::read_bounded(review_path);
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
    // The structured answer's ids, else the review file's `RESOLVED:`/`REOPENED:` lines.
    let mut verified = structured.verified();
    if verified == Default::default() {
        verified = crate::model::findings::Verified::from_text(text.as_deref().unwrap_or(""));
    }
    Ok(kinds::GivenReview {
        reading: verdict::read(&claims),
        text: text.unwrap_or_default(),
        findings,
        verified,
    })
}

/// A failure the CLI reported, in its own words; HTTP 429/529 and usage limits named.
fn failure(r: &CliResult, exit: i32) -> kinds::FailedRun {
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

/// The spend of a claude run: what its result object reports (read with the one type for
/// that object, `CliResult`), and the process's wall time. Output that is not a result
/// object reports only the time.
pub fn spend(out: Option<&Captured>) -> Spend {
    let Some(out) = out else {
        return Spend::default();
    };
    let r = CliResult::parse(&out.stdout).unwrap_or_default();
    let usage = r.usage.unwrap_or_default();
    Spend {
        cost_usd: r.total_cost_usd,
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        num_turns: r.num_turns,
        reviewer_ms: Some(out.duration.as_millis() as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reviewer::process::Ending;
    use std::time::Duration;

    fn outcome(stdout: &str) -> Captured {
        Captured {
            ending: Ending::Exited(0),
            stdout: stdout.as_bytes().to_vec(),
            stdout_truncated: false,
            stderr: Vec::new(),
            stderr_truncated: false,
            stragglers_terminated: false,
            duration: Duration::from_millis(1500),
            pid: 1,
        }
    }

    #[test]
    fn the_result_object_gives_cost_tokens_and_turns() {
        let s = spend(Some(&outcome(
            r#"{"type":"result","subtype":"success","total_cost_usd":0.1234,"num_turns":7,"duration_ms":1400,
                "usage":{"input_tokens":12,"output_tokens":345,"cache_read_input_tokens":9}}"#,
        )));
        assert_eq!(
            s,
            Spend {
                cost_usd: Some(0.1234),
                input_tokens: Some(12),
                output_tokens: Some(345),
                num_turns: Some(7),
                reviewer_ms: Some(1500)
            }
        );
    }

    #[test]
    fn output_that_is_not_a_result_reports_only_the_time() {
        let s = spend(Some(&outcome("not json")));
        assert_eq!(
            (s.cost_usd, s.input_tokens, s.reviewer_ms),
            (None, None, Some(1500))
        );
        assert_eq!(spend(None), Spend::default());
    }

    #[test]
    fn a_budget_adds_max_budget_usd_at_the_end() {
        let a: Vec<String> = args_with_budget("opus", Some(0.75000000001), "r.md", true)
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect();
        let plain: Vec<String> = args_with_budget("opus", None, "r.md", true)
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect();
        assert_eq!(a[..a.len() - 2], plain[..]);
        assert_eq!(a[a.len() - 2..], ["--max-budget-usd", "0.75"]);
    }

    #[test]
    fn arguments_are_exactly_the_documented_ones() {
        let a: Vec<String> =
            args_with_budget("opus", None, ".taskie/plans/p/plan-review-1.md", true)
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
                &result::answer_schema(false),
                // No bare Edit or Write: only the review file may be edited.
                "--allowedTools=Bash,Read,Grep,Glob,Edit(.taskie/plans/p/plan-review-1.md)",
                "--settings",
                r#"{"disableAllHooks":true,"sandbox":{"enabled":true,"failIfUnavailable":false,"allowUnsandboxedCommands":false,"filesystem":{"allowWrite":["/tmp"]}}}"#,
            ]
        );
    }

    #[test]
    fn without_a_working_sandbox_the_settings_ask_for_none() {
        let off: serde_json::Value = serde_json::from_str(&settings(false)).unwrap();
        assert_eq!(off["sandbox"]["enabled"], false);
        assert_eq!(off["disableAllHooks"], true);
    }
}
