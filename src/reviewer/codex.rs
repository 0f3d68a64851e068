//! The codex reviewer (SPEC §18): `codex exec` in a read-only sandbox, answering with
//! the structured output of `--output-schema`; taskie writes the review file from it.
//! Argv, output shapes and failure rules as found with the real CLI 0.169
//! (docs/reviewers.md).

use crate::model::spend::Spend;
use crate::model::verdict;
#[cfg(test)]
use crate::model::verdict::Reading;
use crate::reviewer::error::ReviewerError;
use crate::reviewer::kinds::{self, Attempt, FailedRun, GivenReview, Job};
use crate::reviewer::prompt;
use crate::store::atomic;
use serde::Deserialize;
use std::ffi::OsString;
use std::path::Path;

/// Where the schema file is written, in the logs directory.
pub const SCHEMA_FILE: &str = "codex-output-schema.json";

/// The arguments after the program name; `-` reads the prompt from stdin.
pub fn args(model: &str, schema: &Path) -> Vec<OsString> {
    let mut a: Vec<OsString> = ["exec", "--json", "--output-schema"]
        .into_iter()
        .map(OsString::from)
        .collect();
    a.push(schema.as_os_str().to_owned());
    a.extend(
        [
            "-m",
            model,
            "--sandbox",
            "read-only",
            "-c",
            r#"approval_policy="never""#,
            "--skip-git-repo-check",
            "--ephemeral",
            "--color",
            "never",
            "-",
        ]
        .into_iter()
        .map(OsString::from),
    );
    a
}

pub fn attempt(job: &Job) -> Attempt {
    let prompt = prompt::build(
        &job.project.root,
        job.f,
        job.due,
        prompt::Delivery::Structured,
    );
    let schema = job.project.logs().join(SCHEMA_FILE);
    if let Err(e) = atomic::write_unsynced(
        &schema,
        crate::reviewer::result::answer_schema(true).as_bytes(),
    ) {
        let mut a = job.attempt(None);
        a.result = Err(FailedRun::new(
            ReviewerError::Reported(format!("cannot write {}: {e}", schema.display())),
            None,
        ));
        return a;
    }
    kinds::run(
        job,
        &job.config.codex,
        args(&job.reviewer.model, &schema),
        &prompt,
        |stdout, stderr, code| {
            let events = Events::parse(stdout);
            (events.spend(), events.said(code, stderr))
        },
    )
}

/// One line of `codex exec --json`; only what taskie reads.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "item.completed")]
    ItemCompleted { item: Item },
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        #[serde(default, deserialize_with = "crate::reviewer::result::section")]
        usage: Usage,
    },
    #[serde(rename = "turn.failed")]
    TurnFailed { error: Message },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

/// Read leniently: an odd amount is skipped, the turn still counts (SPEC §18).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Usage {
    #[serde(deserialize_with = "crate::reviewer::result::count")]
    input_tokens: Option<u64>,
    #[serde(deserialize_with = "crate::reviewer::result::count")]
    output_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct Message {
    message: String,
}

/// The structured answer (the schema above).
#[derive(Debug, Deserialize)]
struct Answer {
    verdict: Option<String>,
    #[serde(default)]
    summary: String,
    #[serde(default)]
    findings: Vec<String>,
    #[serde(default)]
    resolved: Vec<String>,
    #[serde(default)]
    reopened: Vec<String>,
}

/// What a run's JSONL said.
#[derive(Debug, Default)]
pub struct Events {
    final_message: Option<String>,
    failed: Option<String>,
    turns: u64,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

impl Events {
    /// Unknown and unreadable lines are skipped: `error` lines and items can be retries
    /// and warnings, never a failure alone.
    pub fn parse(stdout: &[u8]) -> Events {
        let mut e = Events::default();
        for line in String::from_utf8_lossy(stdout).lines() {
            match crate::reviewer::result::from_slice_taming_numbers::<Event>(line.as_bytes()) {
                Ok(Event::ItemCompleted { item }) if item.kind == "agent_message" => {
                    e.final_message = item.text;
                }
                Ok(Event::TurnCompleted { usage }) => {
                    e.turns += 1;
                    let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
                        (Some(x), Some(y)) => Some(x.saturating_add(y)),
                        (x, y) => x.or(y),
                    };
                    e.input_tokens = add(e.input_tokens, usage.input_tokens);
                    e.output_tokens = add(e.output_tokens, usage.output_tokens);
                }
                Ok(Event::TurnFailed { error }) => e.failed = Some(error.message),
                _ => {}
            }
        }
        e
    }

    /// Codex reports tokens, no cost.
    pub fn spend(&self) -> Spend {
        Spend {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            num_turns: (self.turns > 0).then_some(self.turns),
            ..Spend::default()
        }
    }

    /// The review, or why there is none: a non-zero exit or a failed turn, quoted.
    pub fn said(&self, exit: i32, stderr: &[u8]) -> Result<GivenReview, FailedRun> {
        if exit != 0 || self.failed.is_some() {
            return Err(
                match self
                    .failed
                    .clone()
                    .or_else(|| kinds::first_error_line(stderr))
                {
                    Some(words) if crate::model::limit::is_codex_usage_limit(&words) => {
                        kinds::limited(&words, exit).usage_limit(&words)
                    }
                    Some(words) => kinds::reported(&words, exit),
                    None => FailedRun::new(ReviewerError::Exit(exit), Some(exit)),
                },
            );
        }
        let Some(text) = self
            .final_message
            .as_deref()
            .filter(|t| !t.trim().is_empty())
        else {
            return Err(FailedRun::new(ReviewerError::NoReview, Some(0)));
        };
        Ok(review_of(text))
    }
}

/// The review file text and verdict from the final message: the structured answer as
/// markdown ending with its verdict line (none when the verdict is not PASS or FAIL), or
/// the message as it is when it is not one.
fn review_of(text: &str) -> GivenReview {
    match serde_json::from_str::<Answer>(text) {
        Ok(a) => {
            let said = a.verdict.as_deref().and_then(verdict::word);
            GivenReview {
                reading: verdict::combine(&[("structured_output", said)]),
                text: crate::reviewer::result::review_markdown(&a.summary, &a.findings, said),
                findings: a.findings.iter().map(|f| f.trim().to_owned()).collect(),
                verified: crate::model::findings::Verified {
                    resolved: a.resolved,
                    reopened: a.reopened,
                },
            }
        }
        Err(_) => GivenReview {
            reading: verdict::combine(&[("review_file", verdict::from_text(text))]),
            text: text.to_owned(),
            findings: crate::store::diagnostics::findings(text),
            verified: crate::model::findings::Verified::from_text(text),
        },
    }
}

#[cfg(test)]
fn reading_of(final_message: &str) -> Reading {
    review_of(final_message).reading
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"{"type":"thread.started","thread_id":"t"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata not found"}}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"{\"findings\":[\"fix the parser\"],\"summary\":\"Mostly fine.\",\"verdict\":\"FAIL\"}"}}
{"type":"turn.completed","usage":{"input_tokens":1234,"cached_input_tokens":0,"output_tokens":56}}
"#;

    #[test]
    fn the_final_structured_message_is_the_review_and_its_verdict() {
        let e = Events::parse(OK.as_bytes());
        let said = e.said(0, b"").unwrap();
        assert_eq!(said.reading.verdict, verdict::Verdict::Fail);
        assert_eq!(said.reading.source, "structured_output");
        assert!(said.text.contains("Mostly fine."), "{}", said.text);
        assert!(said.text.contains("- fix the parser\n"), "{}", said.text);
        assert!(said.text.trim_end().ends_with("VERDICT: FAIL"));
        assert_eq!(
            e.spend(),
            Spend {
                input_tokens: Some(1234),
                output_tokens: Some(56),
                num_turns: Some(1),
                ..Spend::default()
            }
        );
    }

    #[test]
    fn a_failed_turn_is_a_failure_quoting_codex_and_naming_a_rate_limit() {
        let out = r#"{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests"}
{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}"#;
        let err = Events::parse(out.as_bytes()).said(1, b"").unwrap_err();
        assert!(
            err.error.to_string().contains("rate or usage limit"),
            "{}",
            err.error
        );
        let err = Events::parse(b"")
            .said(2, b"warning: x\nERROR: no auth\n")
            .unwrap_err();
        assert!(
            err.error.to_string().contains("ERROR: no auth"),
            "{}",
            err.error
        );
        assert_eq!(err.exit, Some(2));
    }

    #[test]
    fn a_retry_notice_alone_is_not_a_failure_and_no_message_is_no_review() {
        let out = r#"{"type":"error","message":"Reconnecting... 1/5"}"#;
        let err = Events::parse(out.as_bytes()).said(0, b"").unwrap_err();
        assert!(matches!(err.error, ReviewerError::NoReview));
    }

    #[test]
    fn a_final_message_that_is_not_json_is_read_for_a_verdict_line() {
        assert_eq!(
            reading_of("looks good\nVERDICT: PASS").verdict,
            verdict::Verdict::Pass
        );
        assert_eq!(reading_of("no idea").verdict, verdict::Verdict::Unknown);
        assert_eq!(
            reading_of(r#"{"verdict":"maybe","summary":"","findings":[]}"#).verdict,
            verdict::Verdict::Unknown
        );
    }

    #[test]
    fn a_structured_answer_without_a_verdict_word_gets_no_verdict_line() {
        let said = review_of(r#"{"verdict":"maybe","summary":"Looked.","findings":[]}"#);
        assert_eq!(said.text, "# Review\n\nLooked.\n\n");
        let said = review_of(r#"{"verdict":"PASS","summary":"","findings":[" a\nb "]}"#);
        assert_eq!(
            said.text,
            "# Review\n\n## Findings\n\n- a b\n\nVERDICT: PASS\n"
        );
        assert_eq!(said.findings, ["a\nb"]);
    }

    #[test]
    fn the_arguments_are_the_documented_ones() {
        let a: Vec<String> = args("gpt-5-codex", Path::new("/s.json"))
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect();
        assert_eq!(
            a,
            [
                "exec",
                "--json",
                "--output-schema",
                "/s.json",
                "-m",
                "gpt-5-codex",
                "--sandbox",
                "read-only",
                "-c",
                "approval_policy=\"never\"",
                "--skip-git-repo-check",
                "--ephemeral",
                "--color",
                "never",
                "-"
            ]
        );
    }

    /// SPEC §18: an odd amount in a turn's usage is skipped; the turn, the other amounts
    /// and the review are kept.
    #[test]
    fn an_odd_token_count_is_skipped_and_the_turn_and_review_kept() {
        for odd in [r#""1234""#, "-5", "12.5", "null", "[1]", r#"{"n":1}"#] {
            let out = OK.replace(
                r#""input_tokens":1234"#,
                &format!(r#""input_tokens":{odd}"#),
            );
            let e = Events::parse(out.as_bytes());
            assert_eq!(
                e.spend(),
                Spend {
                    output_tokens: Some(56),
                    num_turns: Some(1),
                    ..Spend::default()
                },
                "{odd}"
            );
            assert_eq!(
                e.said(0, b"").unwrap().reading.verdict,
                verdict::Verdict::Fail
            );
            let out = OK.replace(
                r#""output_tokens":56"#,
                &format!(r#""output_tokens":{odd}"#),
            );
            let s = Events::parse(out.as_bytes()).spend();
            assert_eq!(
                (s.input_tokens, s.output_tokens),
                (Some(1234), None),
                "{odd}"
            );
        }
        let out = OK.replace(
            r#""usage":{"input_tokens":1234,"cached_input_tokens":0,"output_tokens":56}"#,
            r#""usage":"lots""#,
        );
        assert_eq!(
            Events::parse(out.as_bytes()).spend(),
            Spend {
                num_turns: Some(1),
                ..Spend::default()
            }
        );
    }
}
