//! The reviewer's verdict (SPEC §9), read from up to three sources.

use regex::Regex;
use serde_json::Value;
use std::fmt;
use std::sync::LazyLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    /// No source gave a verdict; counted as FAIL.
    Unknown,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Unknown => "UNKNOWN",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict and the sources that decided it, e.g. `structured_output+review_file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub verdict: Verdict,
    pub source: String,
}

/// PASS only if at least one source says PASS and none says FAIL (SPEC §9).
pub fn read(result: Option<&Value>, review_text: Option<&str>) -> Reading {
    let sources = [
        (
            "structured_output",
            result
                .and_then(|r| r.get("structured_output"))
                .and_then(from_object),
        ),
        (
            "result",
            result.and_then(|r| r.get("result")).and_then(from_object),
        ),
        ("review_file", review_text.and_then(from_text)),
    ];
    let said = |v: bool| -> Vec<&str> {
        sources
            .iter()
            .filter(|(_, s)| *s == Some(v))
            .map(|(name, _)| *name)
            .collect()
    };
    let (fails, passes) = (said(false), said(true));
    if !fails.is_empty() {
        Reading {
            verdict: Verdict::Fail,
            source: fails.join("+"),
        }
    } else if !passes.is_empty() {
        Reading {
            verdict: Verdict::Pass,
            source: passes.join("+"),
        }
    } else {
        Reading {
            verdict: Verdict::Unknown,
            source: "none".into(),
        }
    }
}

/// `{"verdict": "PASS"}` → Some(true); anything else that is not a verdict → None.
fn from_object(v: &Value) -> Option<bool> {
    word(v.as_object()?.get("verdict")?.as_str()?.trim())
}

fn word(s: &str) -> Option<bool> {
    if s.eq_ignore_ascii_case("pass") {
        Some(true)
    } else if s.eq_ignore_ascii_case("fail") {
        Some(false)
    } else {
        None
    }
}

/// The last `VERDICT: PASS|FAIL` line, allowing markdown decoration around it
/// (`**VERDICT:** PASS`, `## Verdict: FAIL`, `> verdict: pass`).
pub fn from_text(text: &str) -> Option<bool> {
    static LINE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^[\s#>*_`~-]*verdict[\s*_`~]*:[\s*_`~]*(pass|fail)[\s*_`~.!]*$")
            .expect("valid regex")
    });
    text.lines()
        .rev()
        .find_map(|line| LINE.captures(line.trim_end_matches('\r')))
        .and_then(|c| word(&c[1]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn structured(v: &str) -> Value {
        json!({"type":"result","subtype":"success","is_error":false,"result":"text","structured_output":{"verdict": v}})
    }

    #[test]
    fn verdict_lines_tolerate_decoration_and_case() {
        for (line, want) in [
            ("VERDICT: PASS", Some(true)),
            ("**VERDICT:** PASS", Some(true)),
            ("## Verdict: FAIL", Some(false)),
            ("verdict: pass", Some(true)),
            ("**VERDICT: FAIL**", Some(false)),
            ("> VERDICT: PASS.", Some(true)),
            ("VERDICT: PASS or FAIL", None),
            ("The verdict: it is fine", None),
            ("VERDICT: MAYBE", None),
        ] {
            assert_eq!(from_text(line), want, "{line}");
        }
    }

    #[test]
    fn the_last_verdict_line_counts() {
        assert_eq!(
            from_text("VERDICT: FAIL\nfixed later\nVERDICT: PASS\r\n"),
            Some(true)
        );
        assert_eq!(
            from_text("VERDICT: PASS\n\n**Verdict:** FAIL\n"),
            Some(false)
        );
    }

    #[test]
    fn pass_needs_one_pass_and_no_fail() {
        let r = read(Some(&structured("PASS")), Some("VERDICT: PASS"));
        assert_eq!(
            r,
            Reading {
                verdict: Verdict::Pass,
                source: "structured_output+review_file".into()
            }
        );
        let r = read(Some(&structured("PASS")), Some("VERDICT: FAIL"));
        assert_eq!(
            r,
            Reading {
                verdict: Verdict::Fail,
                source: "review_file".into()
            }
        );
        let r = read(Some(&structured("FAIL")), Some("VERDICT: PASS"));
        assert_eq!(r.verdict, Verdict::Fail);
        let r = read(Some(&structured("PASS")), Some("no verdict here"));
        assert_eq!(
            r,
            Reading {
                verdict: Verdict::Pass,
                source: "structured_output".into()
            }
        );
        let r = read(None, Some("VERDICT: PASS"));
        assert_eq!(r.verdict, Verdict::Pass);
    }

    #[test]
    fn the_older_result_object_shape_counts() {
        let r = read(Some(&json!({"result": {"verdict": "PASS"}})), None);
        assert_eq!(
            r,
            Reading {
                verdict: Verdict::Pass,
                source: "result".into()
            }
        );
        let r = read(
            Some(&json!({"result": {"verdict": "FAIL"}, "structured_output": {"verdict": "PASS"}})),
            None,
        );
        assert_eq!(r.verdict, Verdict::Fail);
    }

    #[test]
    fn no_source_is_unknown() {
        let r = read(
            Some(&json!({"result": "VERDICT: PASS is not read from the result text"})),
            Some("nothing"),
        );
        assert_eq!(
            r,
            Reading {
                verdict: Verdict::Unknown,
                source: "none".into()
            }
        );
        assert_eq!(
            read(Some(&structured("maybe")), None).verdict,
            Verdict::Unknown
        );
        assert_eq!(read(None, None).verdict, Verdict::Unknown);
    }
}
