//! The reviewer's verdict (SPEC §9), read from up to three sources.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "UPPERCASE")]
pub enum Verdict {
    Pass,
    Fail,
    /// No source gave a verdict; counted as FAIL.
    Unknown,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        self.into()
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

/// What each source of SPEC §9 says, as text (`"PASS"`, `"fail"`, …); `None` where a
/// source is absent. The reviewer fills it from its typed output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Claims<'a> {
    /// (a) `structured_output.verdict` (a′ for other reviewer kinds: their structured answer).
    pub structured: Option<&'a str>,
    /// (b) `result.verdict` when `result` is an object (older CLIs).
    pub result: Option<&'a str>,
    /// (c) the review file's text, scanned for its last `VERDICT:` line.
    pub review_file: Option<&'a str>,
}

/// PASS only if at least one source says PASS and none says FAIL (SPEC §9).
pub fn read(claims: &Claims) -> Reading {
    let sources = [
        (
            "structured_output",
            claims.structured.and_then(|v| word(v.trim())),
        ),
        ("result", claims.result.and_then(|v| word(v.trim()))),
        ("review_file", claims.review_file.and_then(from_text)),
    ];
    combine(&sources)
}

/// The rule of SPEC §9 over named sources (`None`: that source gave no verdict). Also
/// what the other reviewer kinds' structured answers and review texts go through (§9 a').
pub fn combine(sources: &[(&str, Option<bool>)]) -> Reading {
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

/// `PASS` → Some(true), `FAIL` → Some(false), in any case.
pub fn word(s: &str) -> Option<bool> {
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
    text.lines()
        .rev()
        .find_map(|line| verdict_line(line.trim_end_matches('\r')))
        .and_then(|word| word)
}

/// Whether `line` is a verdict line, and if so what it says. Matches exactly what
/// `(?i)^[\s#>*_`~-]*verdict[\s*_`~]*:[\s*_`~]*(pass|fail)[\s*_`~.!]*$` matches (the
/// definition before this hand-written form, which spares every review a regex
/// compilation): `Some(None)` is a line that matches but whose word only matches
/// through Unicode case folding (`PAſſ`), which the reading never took as a verdict.
fn verdict_line(line: &str) -> Option<Option<bool>> {
    let decoration = |extra: &'static str| move |c: char| c.is_whitespace() || extra.contains(c);
    let rest = line.trim_start_matches(decoration("#>*_`~-"));
    let rest = strip_word(rest, "verdict")?.0;
    let rest = rest.trim_start_matches(decoration("*_`~"));
    let rest = rest.strip_prefix(':')?;
    let rest = rest.trim_start_matches(decoration("*_`~"));
    let (said, rest, exact) = match strip_word(rest, "pass") {
        Some((rest, exact)) => (true, rest, exact),
        None => {
            let (rest, exact) = strip_word(rest, "fail")?;
            (false, rest, exact)
        }
    };
    rest.chars()
        .all(decoration("*_`~.!"))
        .then_some(exact.then_some(said))
}

/// Strips `word` (lower-case ASCII) from the start of `s`, case-insensitively as the
/// regex crate's `(?i)` does (simple Unicode case folding: `s` also matches `ſ`, U+017F).
/// The flag tells whether every letter matched as ASCII.
fn strip_word<'a>(s: &'a str, word: &str) -> Option<(&'a str, bool)> {
    let mut chars = s.char_indices();
    let mut exact = true;
    for want in word.chars() {
        let (_, c) = chars.next()?;
        if c.to_ascii_lowercase() == want {
            continue;
        }
        if want == 's' && c == '\u{17F}' {
            exact = false;
            continue;
        }
        return None;
    }
    let at = chars.next().map_or(s.len(), |(i, _)| i);
    Some((&s[at..], exact))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn structured<'a>(v: &'a str, file: Option<&'a str>) -> Claims<'a> {
        Claims {
            structured: Some(v),
            result: None,
            review_file: file,
        }
    }

    fn file(text: &str) -> Claims<'_> {
        Claims {
            review_file: Some(text),
            ..Claims::default()
        }
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

    /// The regular expression the hand-written matcher replaces.
    fn by_regex(line: &str) -> Option<Option<bool>> {
        let re = regex::Regex::new(
            r"(?i)^[\s#>*_`~-]*verdict[\s*_`~]*:[\s*_`~]*(pass|fail)[\s*_`~.!]*$",
        )
        .unwrap();
        re.captures(line).map(|c| word(&c[1]))
    }

    #[test]
    fn only_ascii_letters_and_long_s_fold_to_the_letters_of_the_words() {
        let re = regex::Regex::new("(?i)^[verdictpasfl]$").unwrap();
        let folding: Vec<char> = (0..=0x10FFFF)
            .filter_map(char::from_u32)
            .filter(|c| !c.is_ascii() && re.is_match(c.encode_utf8(&mut [0; 4])))
            .collect();
        assert_eq!(folding, ['\u{17F}']);
    }

    proptest::proptest! {
        #[test]
        fn the_matcher_agrees_with_the_regex(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "verdict", "VERDICT", "Verdict", "vErDiCt", "verdic", ":", " ", "\t", "\u{a0}", "\u{2028}",
                "pass", "PASS", "Pass", "pa\u{17f}s", "fail", "FAIL", "fai", "pas", "#", ">", "*", "_", "`",
                "~", "-", ".", "!", "x", "é", "VERDICT: PASS", "**VERDICT:** FAIL", "\r",
            ]), 0..9)
        ) {
            let line = parts.concat();
            proptest::prop_assert_eq!(verdict_line(&line), by_regex(&line), "{:?}", line);
        }
    }

    #[test]
    fn the_matcher_agrees_with_the_regex_on_known_lines() {
        for line in [
            "VERDICT: PASS",
            "**VERDICT:** PASS",
            "## Verdict: FAIL",
            "> VERDICT: PASS.",
            "VERDICT: PA\u{17f}\u{17f}",
            "VERDICT: PASS or FAIL",
            "VERDICT:PASS",
            "- verdict : fail !",
            "VERDICT: PASSED",
            "xVERDICT: PASS",
            "VERDICT PASS",
            "VERDICT: ",
            "",
            "\u{a0}VERDICT:\u{2028}FAIL\u{a0}",
            "VERDICT: FAIL\r",
        ] {
            assert_eq!(verdict_line(line), by_regex(line), "{line:?}");
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
        let r = read(&structured("PASS", Some("VERDICT: PASS")));
        assert_eq!(
            r,
            Reading {
                verdict: Verdict::Pass,
                source: "structured_output+review_file".into()
            }
        );
        let r = read(&structured("PASS", Some("VERDICT: FAIL")));
        assert_eq!(
            r,
            Reading {
                verdict: Verdict::Fail,
                source: "review_file".into()
            }
        );
        let r = read(&structured("FAIL", Some("VERDICT: PASS")));
        assert_eq!(r.verdict, Verdict::Fail);
        let r = read(&structured("PASS", Some("no verdict here")));
        assert_eq!(
            r,
            Reading {
                verdict: Verdict::Pass,
                source: "structured_output".into()
            }
        );
        let r = read(&file("VERDICT: PASS"));
        assert_eq!(r.verdict, Verdict::Pass);
    }

    #[test]
    fn the_older_result_object_shape_counts() {
        let r = read(&Claims {
            result: Some("PASS"),
            ..Claims::default()
        });
        assert_eq!(
            r,
            Reading {
                verdict: Verdict::Pass,
                source: "result".into()
            }
        );
        let r = read(&Claims {
            structured: Some("PASS"),
            result: Some("FAIL"),
            review_file: None,
        });
        assert_eq!(r.verdict, Verdict::Fail);
    }

    #[test]
    fn no_source_is_unknown() {
        let r = read(&file("nothing"));
        assert_eq!(
            r,
            Reading {
                verdict: Verdict::Unknown,
                source: "none".into()
            }
        );
        assert_eq!(read(&structured("maybe", None)).verdict, Verdict::Unknown);
        assert_eq!(read(&Claims::default()).verdict, Verdict::Unknown);
    }
}
