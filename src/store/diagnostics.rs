//! What a hard stop leaves for the human (SPEC §10): `<plan>-diagnostics.json` and a
//! compact message with the commands that resolve it.

use crate::model::cycle::{HardStop, Remedy, advance_target, explain_stop, remedies_text};
use crate::model::tasks::TaskRow;
use serde::{Deserialize, Serialize};

/// Findings listed at most, in the file and in the message.
const MAX_FINDINGS: usize = 10;

pub fn file_name(plan: &str) -> String {
    format!("{plan}-diagnostics.json")
}

/// `<plan>-diagnostics.json`: written by the hook, read back by `taskie status`.
/// Reading tolerates missing fields (a file from an older taskie).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Diagnostics {
    pub plan: String,
    /// `max_reviews_reached`, `reviewer_failures_exhausted`, …
    pub stop_reason: String,
    pub review: String,
    pub task: Option<u64>,
    /// Reviews run in the stopped cycle.
    pub iterations: u64,
    pub max_reviews: u64,
    pub review_failures: u64,
    /// The plan's recorded review spend and its budget, when it has one (SPEC §18).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spent_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    pub verdicts: Vec<IterationVerdict>,
    /// The newest review file of the cycle, relative to the project.
    pub last_review: Option<String>,
    pub findings: Vec<String>,
    pub suggested_actions: Vec<Remedy>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct IterationVerdict {
    pub iteration: u64,
    pub verdict: String,
}

impl Diagnostics {
    /// The file's text: pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("diagnostics always serialize") + "\n"
    }

    /// The file's content; `None` when it is not diagnostics.
    pub fn parse(bytes: &[u8]) -> Option<Diagnostics> {
        serde_json::from_slice(bytes).ok()
    }
}

/// The diagnostics and the message for a hard stop.
/// `verdicts` is this cycle's (iteration, verdict) history; `last_review` is the
/// newest review file's path (relative to the project) and text.
pub fn build(
    plan: &str,
    stop: &HardStop,
    tasks: &[TaskRow],
    verdicts: &[(u64, String)],
    last_review: Option<(&str, &str)>,
) -> (Diagnostics, String) {
    let s = &stop.state;
    let r = stop.review;
    let target = advance_target(r, s, tasks);
    let findings = last_review
        .map(|(_, text)| findings(text))
        .unwrap_or_default();
    let (why, actions) = explain_stop(plan, stop.reason, r, s, stop.spent_usd, &target.to_string());

    let mut msg = format!(
        "Taskie: hard stop for plan '{plan}': {why}, so no review runs and state.json is unchanged."
    );
    if !verdicts.is_empty() {
        let list: Vec<String> = verdicts.iter().map(|(i, v)| format!("#{i} {v}")).collect();
        msg.push_str(&format!(" Verdicts: {}.", list.join(", ")));
    }
    if let Some((path, _)) = last_review {
        msg.push_str(&format!(" Last review: {path}"));
        if findings.is_empty() {
            msg.push('.');
        } else {
            // A finding's own full stop would double up with the list's ("untested..").
            let items: Vec<&str> = findings
                .iter()
                .map(|f| f.trim_end().trim_end_matches('.'))
                .collect();
            msg.push_str(&format!(" — findings: {}.", items.join("; ")));
        }
    }
    msg.push_str(&format!(
        " To resolve: {}. Details: .taskie/logs/{}",
        remedies_text(&actions),
        file_name(plan)
    ));
    let diag = Diagnostics {
        plan: plan.into(),
        stop_reason: stop.reason.as_str().into(),
        review: r.name().into(),
        task: stop.task,
        iterations: stop.iterations,
        max_reviews: s.max_reviews,
        review_failures: s.review_failures,
        spent_usd: s.max_cost_usd.map(|_| stop.spent_usd),
        max_cost_usd: s.max_cost_usd,
        verdicts: verdicts
            .iter()
            .map(|(i, v)| IterationVerdict {
                iteration: *i,
                verdict: v.clone(),
            })
            .collect(),
        last_review: last_review.map(|(p, _)| p.to_owned()),
        findings,
        suggested_actions: actions,
    };
    (diag, msg)
}

/// The headings and list items under the review's issues/findings section.
pub fn findings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut section: Option<usize> = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        let trimmed = line.trim_start();
        let level = trimmed.bytes().take_while(|b| *b == b'#').count();
        if level > 0 && trimmed[level..].starts_with(' ') {
            let title = trimmed[level..].trim();
            match section {
                Some(l) if level > l => out.push(clean(title)),
                _ => {
                    let lower = title.to_lowercase();
                    section =
                        (lower.contains("issue") || lower.contains("finding")).then_some(level);
                }
            }
        } else if section.is_some() {
            let item = trimmed
                .strip_prefix("- ")
                .or_else(|| trimmed.strip_prefix("* "))
                .or_else(|| numbered(trimmed));
            // Only top-level items: an indented item elaborates the one above it.
            if let Some(item) = item.filter(|_| line.len() - trimmed.len() < 2) {
                out.push(clean(item));
            }
        }
        if out.len() >= MAX_FINDINGS {
            break;
        }
    }
    out.retain(|f| !f.is_empty());
    out
}

fn numbered(s: &str) -> Option<&str> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0)
        .then(|| {
            s[digits..]
                .strip_prefix(". ")
                .or_else(|| s[digits..].strip_prefix(") "))
        })
        .flatten()
}

fn clean(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() > 160 {
        format!("{}…", s.chars().take(160).collect::<String>())
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::state::State;

    #[test]
    fn findings_come_from_the_issues_section_only() {
        let review = "# Review\n\n## Summary\n- not a finding\n\n## Issues\n\n- Missing test for X\n  - detail\n\
                      2. Wrong error text\n### Data loss on crash\n\n## Suggestions\n- nice to have\n\nVERDICT: FAIL\n";
        assert_eq!(
            findings(review),
            [
                "Missing test for X",
                "Wrong error text",
                "Data loss on crash"
            ]
        );
    }

    #[test]
    fn findings_are_capped_at_ten() {
        let review: String = std::iter::once("## Findings\n".to_string())
            .chain((0..20).map(|i| format!("- f{i}\n")))
            .collect();
        assert_eq!(findings(&review).len(), MAX_FINDINGS);
    }

    #[test]
    fn findings_that_end_in_a_full_stop_are_listed_without_a_double_one() {
        let s = State::parse(
            br#"{"phase":"plan-review","next_phase":"post-plan-review","phase_iteration":2,"max_reviews":2}"#,
        )
        .unwrap();
        let stop = HardStop {
            reason: crate::model::cycle::StopReason::MaxReviewsReached,
            review: crate::model::phase::Review::Plan,
            task: None,
            iterations: 2,
            state: s,
            last_review: None,
            spent_usd: 0.0,
        };
        let review = "## Findings\n- The parser is untested.\n- Name the config file.\n";
        let (_, msg) = build(
            "p",
            &stop,
            &[],
            &[],
            Some((".taskie/plans/p/plan-review-2.md", review)),
        );
        assert!(
            msg.contains("findings: The parser is untested; Name the config file."),
            "{msg}"
        );
        assert!(!msg.contains(".."), "{msg}");
    }
}
