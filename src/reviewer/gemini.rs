//! The gemini reviewer (SPEC §18): `gemini -p … --output-format json -m <model>` in its
//! default approval mode (read-only tools); the review is its `response`, the verdict its
//! last `VERDICT:` line. Argv and output shapes as found with the real CLI 0.61
//! (docs/reviewers.md).

use crate::model::spend::Spend;
use crate::model::verdict;
use crate::reviewer::error::ReviewerError;
use crate::reviewer::kinds::{self, Attempt, FailedRun, GivenReview, Job};
use crate::reviewer::prompt;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ffi::OsString;

/// The arguments after the program name. The prompt is on stdin: `-p` makes the run
/// headless, and gemini puts what it reads on stdin before the (empty) `-p` text.
pub fn args(model: &str) -> Vec<OsString> {
    [
        "-p",
        "",
        "--output-format",
        "json",
        "-m",
        model,
        // Headless mode refuses an untrusted folder (exit 55); the project is the user's.
        "--skip-trust",
        // Read-only tools only: no shell, no file writes.
        "--approval-mode",
        "default",
    ]
    .into_iter()
    .map(OsString::from)
    .collect()
}

pub fn attempt(job: &Job) -> Attempt {
    let prompt = prompt::build(
        &job.project.root,
        job.f,
        job.due,
        prompt::Delivery::Response,
    );
    kinds::run(
        job,
        &job.config.gemini,
        args(&job.reviewer.model),
        &prompt,
        |stdout, stderr, code| {
            let output = Output::parse(stdout, stderr);
            (output.spend(), output.said(code, stderr))
        },
    )
}

/// The JSON object gemini prints (on stdout when it succeeds, last on stderr when not).
/// Its `stats` are read leniently: an odd amount is skipped, the response kept (SPEC §18).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Output {
    response: Option<String>,
    #[serde(deserialize_with = "crate::reviewer::result::section")]
    stats: Stats,
    error: Option<ErrorInfo>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Stats {
    /// Per model; one whose stats are not an object is left out.
    #[serde(deserialize_with = "models")]
    models: BTreeMap<String, ModelStats>,
}

fn models<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, ModelStats>, D::Error> {
    let all: BTreeMap<String, serde_json::Value> = crate::reviewer::result::section(d)?;
    Ok(all
        .into_iter()
        .filter_map(|(name, v)| Some((name, ModelStats::deserialize(v).ok()?)))
        .collect())
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ModelStats {
    #[serde(deserialize_with = "crate::reviewer::result::section")]
    api: Api,
    #[serde(deserialize_with = "crate::reviewer::result::section")]
    tokens: Tokens,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Api {
    #[serde(
        rename = "totalRequests",
        deserialize_with = "crate::reviewer::result::count"
    )]
    total_requests: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Tokens {
    #[serde(deserialize_with = "crate::reviewer::result::count")]
    prompt: Option<u64>,
    #[serde(deserialize_with = "crate::reviewer::result::count")]
    input: Option<u64>,
    #[serde(deserialize_with = "crate::reviewer::result::count")]
    candidates: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ErrorInfo {
    message: String,
    code: Option<serde_json::Number>,
}

impl Output {
    /// Stdout as the result object; when it is not one, the last `{…}` block on stderr,
    /// where gemini puts its error object.
    pub fn parse(stdout: &[u8], stderr: &[u8]) -> Output {
        if let Ok(o) = crate::reviewer::result::from_slice_taming_numbers::<Output>(stdout) {
            return o;
        }
        let err = String::from_utf8_lossy(stderr);
        err.rmatch_indices('{')
            .filter(|(i, _)| *i == 0 || err[..*i].ends_with('\n'))
            .find_map(|(i, _)| serde_json::from_str::<Output>(err[i..].trim()).ok())
            .unwrap_or_default()
    }

    /// Gemini reports tokens per model, no cost.
    pub fn spend(&self) -> Spend {
        let sum = |f: &dyn Fn(&ModelStats) -> Option<u64>| {
            self.stats
                .models
                .values()
                .filter_map(f)
                .reduce(u64::saturating_add)
        };
        Spend {
            input_tokens: sum(&|m| m.tokens.prompt.or(m.tokens.input)),
            output_tokens: sum(&|m| m.tokens.candidates),
            num_turns: sum(&|m| m.api.total_requests),
            ..Spend::default()
        }
    }

    pub fn said(&self, exit: i32, stderr: &[u8]) -> Result<GivenReview, FailedRun> {
        if let Some(e) = &self.error {
            let words = match &e.code {
                Some(code) => format!("{} (code {code})", e.message),
                None => e.message.clone(),
            };
            if crate::model::limit::is_gemini_usage_limit(&e.message) {
                return Err(kinds::limited(&words, exit).usage_limit(&e.message));
            }
            return Err(kinds::reported(&words, exit));
        }
        if exit != 0 {
            return Err(match kinds::first_error_line(stderr) {
                Some(words) => kinds::reported(&words, exit),
                None => FailedRun::new(ReviewerError::Exit(exit), Some(exit)),
            });
        }
        let Some(text) = self.response.as_deref().filter(|t| !t.trim().is_empty()) else {
            return Err(FailedRun::new(ReviewerError::NoReview, Some(0)));
        };
        Ok(GivenReview {
            reading: verdict::combine(&[("response", verdict::from_text(text))]),
            text: format!("{}\n", text.trim_end()),
            findings: crate::store::diagnostics::findings(text),
            verified: crate::model::findings::Verified::from_text(text),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::verdict::Verdict;

    #[test]
    fn the_response_is_the_review_and_its_last_verdict_line_the_verdict() {
        let out = br#"{"session_id":"s","response":"Review\n\n- fine\n\nVERDICT: PASS",
            "stats":{"models":{"a":{"api":{"totalRequests":2},"tokens":{"input":100,"prompt":100,"candidates":7}},
                               "b":{"api":{"totalRequests":1},"tokens":{"input":5,"candidates":3}}}}}"#;
        let o = Output::parse(out, b"");
        let said = o.said(0, b"").unwrap();
        assert_eq!(said.reading.verdict, Verdict::Pass);
        assert_eq!(said.reading.source, "response");
        assert!(said.text.ends_with("VERDICT: PASS\n"));
        assert_eq!(
            o.spend(),
            Spend {
                input_tokens: Some(105),
                output_tokens: Some(10),
                num_turns: Some(3),
                ..Spend::default()
            }
        );
    }

    #[test]
    fn an_error_object_last_on_stderr_is_quoted_and_a_429_named() {
        let err = b"Attempt 1 failed: Resource exhausted: fake 429. Max attempts reached\n\
            {\"session_id\":\"s\",\"error\":{\"type\":\"Error\",\"message\":\"Resource exhausted: fake 429\",\"code\":429}}\n";
        let f = Output::parse(b"", err).said(173, err).unwrap_err();
        assert!(
            f.error.to_string().contains("rate or usage limit"),
            "{}",
            f.error
        );
        assert!(f.error.to_string().contains("code 429"), "{}", f.error);
        assert_eq!(f.exit, Some(173));
        let f = Output::parse(b"", b"Gemini CLI is not running in a trusted directory\n")
            .said(55, b"Gemini CLI is not running in a trusted directory\n")
            .unwrap_err();
        assert!(
            f.error.to_string().contains("trusted directory"),
            "{}",
            f.error
        );
    }

    #[test]
    fn no_response_is_no_review_and_no_verdict_line_is_unknown() {
        assert!(matches!(
            Output::parse(b"{}", b"").said(0, b"").unwrap_err().error,
            ReviewerError::NoReview
        ));
        let o = Output::parse(br#"{"response":"I looked."}"#, b"");
        assert_eq!(o.said(0, b"").unwrap().reading.verdict, Verdict::Unknown);
    }

    #[test]
    fn the_arguments_are_the_documented_ones() {
        let a: Vec<String> = args("gemini-2.5-pro")
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect();
        assert_eq!(
            a,
            [
                "-p",
                "",
                "--output-format",
                "json",
                "-m",
                "gemini-2.5-pro",
                "--skip-trust",
                "--approval-mode",
                "default"
            ]
        );
    }

    /// SPEC §18: an odd amount in the stats is skipped; the response (the review) and the
    /// other amounts are kept. Before, the whole object was unreadable: no review.
    #[test]
    fn an_odd_amount_in_the_stats_is_skipped_and_the_review_kept() {
        let out = |tokens: &str, requests: &str| {
            format!(
                r#"{{"response":"Fine.\n\nVERDICT: PASS","stats":{{"models":{{
                    "a":{{"api":{{"totalRequests":{requests}}},"tokens":{tokens}}},
                    "b":{{"api":{{"totalRequests":1}},"tokens":{{"prompt":5,"candidates":3}}}}}}}}}}"#
            )
        };
        for odd in [r#""100""#, "-100", "100.5", "null", "[100]"] {
            let o = Output::parse(
                out(&format!(r#"{{"prompt":{odd},"candidates":7}}"#), "2").as_bytes(),
                b"",
            );
            assert_eq!(
                o.said(0, b"").unwrap().reading.verdict,
                Verdict::Pass,
                "{odd}"
            );
            assert_eq!(
                o.spend(),
                Spend {
                    input_tokens: Some(5),
                    output_tokens: Some(10),
                    num_turns: Some(3),
                    ..Spend::default()
                },
                "{odd}"
            );
            let o = Output::parse(out(r#"{"prompt":100,"candidates":7}"#, odd).as_bytes(), b"");
            assert_eq!(o.spend().num_turns, Some(1), "{odd}");
            assert_eq!(o.said(0, b"").unwrap().reading.verdict, Verdict::Pass);
        }
        for odd in [r#""many""#, "[1]", "3"] {
            let o = Output::parse(out(odd, "2").as_bytes(), b"");
            assert_eq!(o.spend().input_tokens, Some(5), "{odd}");
            let o = Output::parse(
                format!(r#"{{"response":"VERDICT: PASS","stats":{odd}}}"#).as_bytes(),
                b"",
            );
            assert_eq!(
                (o.spend(), o.said(0, b"").is_ok()),
                (Spend::default(), true)
            );
            let o = Output::parse(
                format!(r#"{{"response":"VERDICT: PASS","stats":{{"models":{{"a":{odd}}}}}}}"#)
                    .as_bytes(),
                b"",
            );
            assert!(o.said(0, b"").is_ok(), "{odd}");
        }
    }
}
