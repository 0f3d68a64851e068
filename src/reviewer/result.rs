//! The result object the claude CLI prints with `--output-format json` (SPEC §8, §9),
//! read into types: what the review said, how it ended, and what it cost.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// The fields Taskie uses; everything else the CLI prints is ignored. Fields whose shape
/// differs between CLI versions (`result` is text now, an object in older versions) stay
/// JSON values and are read by the accessors below. What it cost is read leniently
/// ([`count`], [`dollars`], [`section`]): an odd amount is skipped, the review is kept.
#[derive(Debug, Default, Deserialize)]
pub struct CliResult {
    #[serde(default)]
    pub subtype: Option<String>,
    #[serde(default)]
    pub is_error: Option<bool>,
    #[serde(default)]
    pub result: Option<Value>,
    #[serde(default)]
    pub structured_output: Option<Value>,
    #[serde(default)]
    pub errors: Vec<Value>,
    #[serde(default)]
    pub api_error_status: Option<Value>,
    /// The kind of API error: `usage_limit_reached` for a subscription's usage limit
    /// (SPEC §22), whose `result` says when it resets.
    #[serde(default)]
    pub api_error: Option<Value>,
    #[serde(default, deserialize_with = "dollars")]
    pub total_cost_usd: Option<f64>,
    #[serde(default, deserialize_with = "section")]
    pub usage: Option<Usage>,
    #[serde(default, deserialize_with = "count")]
    pub num_turns: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Usage {
    #[serde(default, deserialize_with = "count")]
    pub input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "count")]
    pub output_tokens: Option<u64>,
}

// What a reviewer reports it spent (SPEC §18), read so that one odd amount never costs the
// review it came with: an amount that is not a finite number ≥ 0 (`"3"`, `-5`, a decimal
// count of tokens or turns) is skipped (`None`), and an accounting object of the wrong
// shape is read as empty. Every kind's result type reads its amounts through these.

/// A count (tokens, turns): a whole number ≥ 0 within u64, else nothing.
pub fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|x| x.is_finite() && *x >= 0.0 && x.fract() == 0.0)
                .filter(|x| *x < u64::MAX as f64)
                .map(|x| x as u64)
        }),
        _ => None,
    })
}

/// Dollars: a finite number ≥ 0, else nothing.
pub fn dollars<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(v.as_f64().filter(|x| x.is_finite() && *x >= 0.0))
}

/// An accounting object (`usage`, `stats`): as its type reads it, or empty when it has
/// another shape.
pub fn section<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
    d: D,
) -> Result<T, D::Error> {
    // Only an object: serde would also read a struct from an array, field by field.
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::Object(_) => T::deserialize(v).unwrap_or_default(),
        _ => T::default(),
    })
}

/// The structured answer the reviewer gives through `--json-schema`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
pub struct Structured {
    #[serde(default)]
    pub verdict: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub findings: Vec<String>,
    #[serde(default)]
    pub resolved: Vec<String>,
    #[serde(default)]
    pub reopened: Vec<String>,
}

impl Structured {
    pub fn verified(&self) -> crate::model::findings::Verified {
        crate::model::findings::Verified {
            resolved: self.resolved.clone(),
            reopened: self.reopened.clone(),
        }
    }
}

/// Parses JSON whose numbers may lie beyond f64 (`1e400` in a token count): serde_json
/// refuses the whole text for one such number, which would lose the review it came with
/// (SPEC §18: an insane amount is skipped, the review kept). Only when the plain parse
/// fails, each out-of-range number outside a string becomes `null`, which the amount
/// readers skip.
pub(crate) fn from_slice_taming_numbers<T: serde::de::DeserializeOwned>(
    json: &[u8],
) -> serde_json::Result<T> {
    serde_json::from_slice(json).or_else(|e| match tame_numbers(json) {
        Some(tamed) => serde_json::from_slice(&tamed),
        None => Err(e),
    })
}

/// `json` with every number token outside strings that overflows f64 replaced by `null`;
/// `None` when there is none.
fn tame_numbers(json: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(json.len());
    let (mut i, mut in_string, mut changed) = (0, false, false);
    while i < json.len() {
        let b = json[i];
        if in_string {
            out.push(b);
            if b == b'\\' && i + 1 < json.len() {
                out.push(json[i + 1]);
                i += 1;
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
        } else if b == b'"' {
            in_string = true;
            out.push(b);
            i += 1;
        } else if b == b'-' || b.is_ascii_digit() {
            let end = json[i..]
                .iter()
                .position(|c| !matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                .map_or(json.len(), |n| i + n);
            let token = &json[i..end];
            let overflows = std::str::from_utf8(token)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(|v| v.is_infinite());
            if overflows {
                out.extend_from_slice(b"null");
                changed = true;
            } else {
                out.extend_from_slice(token);
            }
            i = end;
        } else {
            out.push(b);
            i += 1;
        }
    }
    changed.then_some(out)
}

/// Why stdout could not be used at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    NotJson,
    NotAnObject,
    /// An object, but with fields of the wrong types.
    Malformed(String),
}

impl CliResult {
    /// Stdout as a result object. Anything else is a reviewer failure, never a PASS.
    pub fn parse(stdout: &[u8]) -> Result<CliResult, Unreadable> {
        let value: Value = from_slice_taming_numbers(stdout).map_err(|_| Unreadable::NotJson)?;
        if !value.is_object() {
            return Err(Unreadable::NotAnObject);
        }
        CliResult::deserialize(value).map_err(|e| Unreadable::Malformed(e.to_string()))
    }

    /// The CLI's own words when it reports a failure (SPEC §8): `None` when the run
    /// succeeded.
    pub fn failure(&self) -> Option<String> {
        let subtype = self.subtype.as_deref().unwrap_or("success");
        if !self.is_error.unwrap_or(false) && subtype == "success" {
            return None;
        }
        let first_error = self.errors.first().map(|e| match e {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let words = first_error
            .or_else(|| self.result_text().map(str::to_owned))
            .unwrap_or_else(|| subtype.to_owned());
        let status = self.api_status();
        let mut text = match status {
            Some(s) if !words.contains(&s.to_string()) => format!("{words} (HTTP {s})"),
            _ => words,
        };
        if subtype != "success" && !text.contains(subtype) {
            text.push_str(&format!(" [{subtype}]"));
        }
        Some(text)
    }

    /// A rate or usage limit (HTTP 429/529, "usage limit"): named as such, because
    /// waiting is the fix, not the reviewer's setup.
    pub fn is_rate_limit(&self) -> bool {
        matches!(self.api_status(), Some(429 | 529))
            || self
                .failure()
                .is_some_and(|t| t.to_ascii_lowercase().contains("usage limit"))
    }

    /// The usage limit of a subscription (`api_error: "usage_limit_reached"`), not a plain
    /// throttle: its words say when the limit resets (SPEC §22).
    pub fn is_usage_limit(&self) -> bool {
        self.api_error
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|e| e == "usage_limit_reached")
    }

    fn api_status(&self) -> Option<u64> {
        match self.api_error_status.as_ref()? {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        }
    }

    /// `result` when it is text (the current CLI).
    pub fn result_text(&self) -> Option<&str> {
        self.result.as_ref()?.as_str()
    }

    /// The structured output, or `result` when it is an object (older CLIs).
    pub fn structured(&self) -> Option<Structured> {
        self.structured_output
            .as_ref()
            .and_then(|v| Structured::deserialize(v).ok())
    }

    /// The verdict in an object-shaped `result` (older CLIs, SPEC §9 source b).
    pub fn result_verdict(&self) -> Option<String> {
        let obj = self.result.as_ref()?.as_object()?;
        obj.get("verdict")?.as_str().map(str::to_owned)
    }
}

/// The review file written from the structured output when the reviewer wrote none:
/// the summary, the findings as a list, and the verdict line (FAIL unless it says PASS).
/// `None` when there is neither a summary nor a finding.
pub fn review_text(s: &Structured) -> Option<String> {
    let pass =
        matches!(s.verdict.as_deref().map(str::trim), Some(v) if v.eq_ignore_ascii_case("pass"));
    let summary = s.summary.as_deref().unwrap_or("");
    if summary.trim().is_empty() && s.findings.iter().all(|f| f.trim().is_empty()) {
        return None;
    }
    Some(review_markdown(summary, &s.findings, Some(pass)))
}

/// The markdown of a structured review: a heading, the summary, the findings as a list,
/// and the verdict line when there is a verdict (`Some(true)` for PASS). Blank summary
/// and findings are left out; a finding stays one list item.
pub fn review_markdown(summary: &str, findings: &[String], pass: Option<bool>) -> String {
    let findings: Vec<&str> = findings
        .iter()
        .map(|f| f.trim())
        .filter(|f| !f.is_empty())
        .collect();
    let mut text = String::from("# Review\n\n");
    if !summary.trim().is_empty() {
        text.push_str(summary.trim());
        text.push_str("\n\n");
    }
    if !findings.is_empty() {
        text.push_str("## Findings\n\n");
        for f in &findings {
            text.push_str(&format!("- {}\n", f.replace('\n', " ")));
        }
        text.push('\n');
    }
    if let Some(pass) = pass {
        let verdict = if pass { "PASS" } else { "FAIL" };
        text.push_str(&format!("VERDICT: {verdict}\n"));
    }
    text
}

/// The structured answer asked of every reviewer kind (SPEC §8), as a JSON schema: the
/// verdict, and the review in short (so the review file can be written even when the
/// reviewer wrote none). `strict`: the form OpenAI's strict structured outputs require
/// (codex): every property required, no others allowed. The one home of the schema.
pub fn answer_schema(strict: bool) -> String {
    let mut schema = serde_json::json!({
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["PASS", "FAIL"]},
            "summary": {"type": "string"},
            "findings": {"type": "array", "items": {"type": "string"}},
            "resolved": {"type": "array", "items": {"type": "string"}},
            "reopened": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["verdict"]
    });
    if strict {
        schema["required"] =
            serde_json::json!(["verdict", "summary", "findings", "resolved", "reopened"]);
        schema["additionalProperties"] = serde_json::json!(false);
    }
    schema.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_schema_asks_for_a_verdict_and_strict_mode_for_every_field_and_no_other() {
        let loose: Value = serde_json::from_str(&answer_schema(false)).unwrap();
        assert_eq!(
            loose["properties"]["verdict"]["enum"],
            serde_json::json!(["PASS", "FAIL"])
        );
        assert_eq!(loose["required"], serde_json::json!(["verdict"]));
        let strict: Value = serde_json::from_str(&answer_schema(true)).unwrap();
        assert_eq!(strict["properties"], loose["properties"]);
        assert_eq!(
            strict["required"],
            serde_json::json!(["verdict", "summary", "findings", "resolved", "reopened"])
        );
        // SPEC §21: every kind may name the ledger ids it confirmed or reopened.
        for field in ["resolved", "reopened"] {
            assert_eq!(loose["properties"][field]["type"], "array");
        }
        assert_eq!(strict["additionalProperties"], false);
    }

    #[test]
    fn anything_but_a_json_object_is_unreadable() {
        assert_eq!(CliResult::parse(b"nope").unwrap_err(), Unreadable::NotJson);
        assert_eq!(
            CliResult::parse(br#"[{"structured_output":{"verdict":"FAIL"}}]"#).unwrap_err(),
            Unreadable::NotAnObject
        );
        assert!(matches!(
            CliResult::parse(br#"{"is_error":"many"}"#),
            Err(Unreadable::Malformed(_))
        ));
    }

    #[test]
    fn an_api_error_is_quoted_in_the_clis_words() {
        let r = CliResult::parse(
            br#"{"type":"result","subtype":"success","is_error":true,"api_error_status":500,
                "result":"API Error: 500 boom. This is a server-side issue"}"#,
        )
        .unwrap();
        assert_eq!(
            r.failure().unwrap(),
            "API Error: 500 boom. This is a server-side issue"
        );
        assert!(!r.is_rate_limit());
    }

    #[test]
    fn errors_come_first_and_the_subtype_is_named() {
        let r = CliResult::parse(
            br#"{"subtype":"error_max_budget_usd","is_error":true,"errors":["Reached maximum budget ($0.005)"]}"#,
        )
        .unwrap();
        assert_eq!(
            r.failure().unwrap(),
            "Reached maximum budget ($0.005) [error_max_budget_usd]"
        );
    }

    #[test]
    fn overload_and_rate_limits_are_recognised() {
        for status in ["429", "529"] {
            let r = CliResult::parse(
                format!(r#"{{"is_error":true,"api_error_status":{status},"result":"API Error"}}"#)
                    .as_bytes(),
            )
            .unwrap();
            assert!(r.is_rate_limit(), "{status}");
            assert_eq!(r.failure().unwrap(), format!("API Error (HTTP {status})"));
        }
        let r = CliResult::parse(br#"{"is_error":true,"result":"Claude AI usage limit reached"}"#)
            .unwrap();
        assert!(r.is_rate_limit());
    }

    #[test]
    fn a_successful_result_has_no_failure_and_reports_its_spend() {
        let r = CliResult::parse(
            br#"{"subtype":"success","is_error":false,"result":"{\"verdict\":\"PASS\"}",
                "structured_output":{"verdict":"PASS","summary":"ok","findings":[]},
                "total_cost_usd":0.02,"usage":{"input_tokens":10,"output_tokens":3},"num_turns":2,"duration_ms":900}"#,
        )
        .unwrap();
        assert_eq!(r.failure(), None);
        assert_eq!(r.structured().unwrap().verdict.as_deref(), Some("PASS"));
        assert_eq!(r.total_cost_usd, Some(0.02));
        assert_eq!(r.usage.as_ref().unwrap().output_tokens, Some(3));
    }

    #[test]
    fn the_review_file_is_written_from_summary_and_findings() {
        let s = Structured {
            verdict: Some("FAIL".into()),
            summary: Some("Two problems.".into()),
            findings: vec!["No tests for X".into(), "Typo in\nY".into()],
            ..Structured::default()
        };
        assert_eq!(
            review_text(&s).unwrap(),
            "# Review\n\nTwo problems.\n\n## Findings\n\n- No tests for X\n- Typo in Y\n\nVERDICT: FAIL\n"
        );
        let empty = Structured {
            verdict: Some("PASS".into()),
            ..Structured::default()
        };
        assert_eq!(review_text(&empty), None);
    }

    /// SPEC §18: a value that is not a finite number ≥ 0 is never added, and one odd
    /// amount never makes a finished review unreadable (it would count as a failure and
    /// its cost would be lost).
    #[test]
    fn an_odd_amount_is_skipped_and_the_review_kept() {
        let with = |field: &str| {
            let text = format!(
                r#"{{"subtype":"success","is_error":false,"structured_output":{{"verdict":"PASS","summary":"ok"}},
                    "total_cost_usd":0.02,"num_turns":2,"usage":{{"input_tokens":10,"output_tokens":3}},{field}}}"#
            );
            CliResult::parse(text.as_bytes()).unwrap_or_else(|e| panic!("{field}: {e:?}"))
        };
        for odd in [
            r#""3""#,
            "-1",
            "2.5",
            "null",
            "true",
            "[3]",
            "{}",
            "1.8446744073709552e19",
            "1e400",
            "-1e999",
        ] {
            let r = with(&format!(r#""num_turns":{odd}"#));
            assert_eq!(r.num_turns, None, "num_turns {odd}");
            assert_eq!(r.structured().unwrap().verdict.as_deref(), Some("PASS"));
            assert_eq!(r.total_cost_usd, Some(0.02), "the other amounts stay");
            let r = with(&format!(
                r#""usage":{{"input_tokens":{odd},"output_tokens":3}}"#
            ));
            let usage = r.usage.unwrap();
            assert_eq!(
                (usage.input_tokens, usage.output_tokens),
                (None, Some(3)),
                "{odd}"
            );
            let r = with(&format!(
                r#""usage":{{"input_tokens":10,"output_tokens":{odd}}}"#
            ));
            assert_eq!(r.usage.unwrap().output_tokens, None, "{odd}");
        }
        for odd in [r#""0.02""#, "-0.5", "null", "[0.1]", "1e400"] {
            let r = with(&format!(r#""total_cost_usd":{odd}"#));
            assert_eq!((r.total_cost_usd, r.num_turns), (None, Some(2)), "{odd}");
        }
        for odd in [r#""lots""#, "[1,2]", "7"] {
            let r = with(&format!(r#""usage":{odd}"#));
            assert!(r.usage.is_none(), "{odd}");
            assert_eq!(r.failure(), None);
        }
        // A number beyond f64 is tamed outside strings only: the review's text is not.
        let text =
            br#"{"subtype":"success","is_error":false,"result":"1e400 \" 1e400","num_turns":1e400,
            "structured_output":{"verdict":"PASS","summary":"1e400 tokens"}}"#;
        let r = CliResult::parse(text).unwrap();
        assert_eq!(r.num_turns, None);
        assert_eq!(r.result, Some(serde_json::json!(r#"1e400 " 1e400"#)));
        assert_eq!(
            r.structured().unwrap().summary.as_deref(),
            Some("1e400 tokens")
        );
        assert_eq!(
            tame_numbers(br#"{"a":[1,2.5e3,-4]}"#),
            None,
            "nothing to tame"
        );
        // A whole number written as a decimal is that number; zero is an amount.
        assert_eq!(with(r#""num_turns":3.0"#).num_turns, Some(3));
        assert_eq!(with(r#""total_cost_usd":0"#).total_cost_usd, Some(0.0));
    }
}
