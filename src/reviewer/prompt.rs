//! The reviewer's prompt (SPEC §8): self-contained, so the reviewer needs no plugin.

use crate::model::cycle::Due;
use crate::model::facts::Facts;
use crate::model::phase::Review;
use crate::model::plan_file;
use std::fmt::Write;
use std::path::Path;

/// The review actions, compiled in so the prompt never depends on an installed plugin.
pub fn action_text(r: Review) -> &'static str {
    let text = match r {
        Review::Plan => include_str!("../../actions/plan-review.md"),
        Review::Tasks => include_str!("../../actions/tasks-review.md"),
        Review::Code => include_str!("../../actions/code-review.md"),
        Review::AllCode => include_str!("../../actions/all-code-review.md"),
    };
    strip_frontmatter(text)
}

/// Where a review action's instructions for a person running it by hand begin.
pub const STANDALONE_HEADING: &str = "\n## Standalone use";

/// What the hook's reviewer is told: the review action without its "Standalone use"
/// section. That section is for a person running the action by hand; read by the hook's
/// reviewer it says not to review while the hook's cycle runs, and to run `taskie mark`,
/// which would record a one-off review and bind the reviewer's throwaway session.
pub fn reviewer_instructions(r: Review) -> &'static str {
    let text = action_text(r);
    text.find(STANDALONE_HEADING)
        .map_or(text, |at| &text[..at])
        .trim_end()
}

/// The body of a markdown file after its `---` YAML frontmatter, if it has one.
pub fn strip_frontmatter(text: &str) -> &str {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return text;
    };
    match rest.find("\n---") {
        Some(end) => {
            let after = &rest[end + 4..];
            after
                .split_once('\n')
                .map_or("", |(_, body)| body)
                .trim_start_matches(['\r', '\n'])
        }
        None => text,
    }
}

/// Where the reviewer puts its review (SPEC §18): claude writes a file (the review file,
/// or its own section file in a panel); codex runs read-only and answers with the
/// structured output; gemini answers with the review as its response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery<'a> {
    /// This file, relative to the project.
    File(&'a str),
    Structured,
    Response,
}

/// The whole prompt for review `due` of the plan in `f`, run from `project`, with the
/// review delivered as `delivery` says.
pub fn build(project: &Path, f: &Facts, due: &Due, delivery: Delivery) -> String {
    let r = due.review;
    let mut p = String::with_capacity(8 * 1024);
    p.push_str(reviewer_instructions(r));
    p.push_str("\n\n---\n\n## Context for this review (from taskie-hook)\n\n");
    let _ = writeln!(
        p,
        "You are an independent reviewer running in a fresh session with no earlier context. \
         Your working directory is the project: {}.",
        project.display()
    );
    let _ = writeln!(p, "- Plan id: {}", f.plan);
    let _ = writeln!(p, "- Plan directory: {}", f.rel(""));
    let _ = writeln!(
        p,
        "- Review: {r}, iteration {} of at most {}",
        due.iteration, due.base.max_reviews
    );
    p.push_str("- Read these files first:\n");
    for name in files_to_read(f, due) {
        let _ = writeln!(p, "  - {}", f.rel(&name));
    }
    let earlier = earlier_reviews(f, due);
    if !earlier.is_empty() {
        p.push_str("- Earlier reviews of this cycle and the answers to them (check that their findings were addressed):\n");
        for name in earlier {
            let _ = writeln!(p, "  - {}", f.rel(&name));
        }
    }
    // SPEC §21: the cycle's findings so far, their status and the agent's answers.
    // The hook does not start a review whose ledger cannot be read.
    let ledger = crate::store::snapshot::findings(&project.join(f.rel("")))
        .unwrap_or_default()
        .for_prompt(
            r.name(),
            due.task,
            due.iteration,
            &f.rel(crate::model::plan_file::FINDINGS_FILE),
        );
    if !ledger.is_empty() {
        p.push_str(&ledger);
        p.push_str(match delivery {
            Delivery::Response => {
                "  Name them in your response on lines of their own: `RESOLVED: F1, F2` and `REOPENED: F3`.\n"
            }
            Delivery::File(_) | Delivery::Structured => {
                "  Give them in the structured output's `resolved` and `reopened` fields (ids only), and name them \
                 in your review too.\n"
            }
        });
    }
    if let Some(t) = due.task {
        let _ = writeln!(
            p,
            "- This is the code review of task {t} ({}). Review the actual source changes made for this task \
             (find them with `git log` and `git diff`), not only the task description, and run the project's \
             build and tests.",
            f.rel(&format!("task-{t}.md"))
        );
    }
    if r == Review::AllCode {
        p.push_str(
            "- This is the review of the whole implementation: all tasks' source changes together (use `git log` \
             and `git diff` from before the first task), and run the project's build and tests.\n",
        );
    }
    match delivery {
        Delivery::File(path) => {
            let _ = writeln!(
                p,
                "- Write your review to exactly this file, creating it: {path}\n  Create or change no other file (build and test outputs aside), and never edit state.json. \
                 Your shell commands may run in a sandbox that writes only the project and /tmp and has no network: \
                 a build or test that fails for that, say so rather than count it against the work."
            );
            p.push_str(
                "- End the review file with a last line that is exactly `VERDICT: PASS` (nothing must be fixed) or \
                 `VERDICT: FAIL` (something must be fixed), and give the same verdict in the structured output \
                 (the `verdict` field).\n",
            );
        }
        Delivery::Structured => p.push_str(
            "- Do not create or change any file (you run in a read-only sandbox, so builds and tests that must \
             write may fail: say so rather than count it against the work); taskie writes the review file \
             from your answer. Answer with the structured output: `summary` (your review in markdown: what you \
             checked and what you found), `findings` (one string per thing that must be fixed; empty when \
             nothing must be fixed) and `verdict`: `PASS` (nothing must be fixed) or `FAIL` (something must be \
             fixed).\n",
        ),
        Delivery::Response => p.push_str(
            "- Do not create or change any file; taskie writes the review file from your response. Give your \
             whole review (markdown, with a `## Findings` section listing what must be fixed) as your response, \
             and end it with a last line that is exactly `VERDICT: PASS` (nothing must be fixed) or \
             `VERDICT: FAIL` (something must be fixed). Where you cannot run a command this review asks \
             for, read the files instead and say so in the review.\n",
        ),
    }
    p
}

/// plan.md, design.md, tasks.md and the task files that exist, in that order.
fn files_to_read(f: &Facts, due: &Due) -> Vec<String> {
    let mut names: Vec<String> = ["plan.md", "design.md", "tasks.md"]
        .into_iter()
        .filter(|n| f.has_file(n))
        .map(str::to_owned)
        .collect();
    if due.review != Review::Plan {
        let mut tasks: Vec<(u64, &String)> = f
            .files
            .iter()
            .filter_map(|n| match crate::model::plan_file::PlanFile::parse(n) {
                Some(crate::model::plan_file::PlanFile::Task(id)) => Some((id, n)),
                _ => None,
            })
            .collect();
        tasks.sort();
        names.extend(tasks.into_iter().map(|(_, n)| n.clone()));
    }
    names
}

/// Review and post-review files of this cycle before iteration N, in order. Found among
/// the files present: counting 1..N would not end when state.json sets N near u64::MAX.
fn earlier_reviews(f: &Facts, due: &Due) -> Vec<String> {
    use crate::model::plan_file::PlanFile;
    let mut found: Vec<(u64, bool, String)> = f
        .files
        .iter()
        .filter_map(|name| {
            let (i, post) = match crate::model::plan_file::PlanFile::parse(name)? {
                PlanFile::Review(_, i) => (i, false),
                PlanFile::PostReview(_, i) => (i, true),
                _ => return None,
            };
            let canonical = if post {
                plan_file::post_file(due.review, i, due.task)
            } else {
                plan_file::review_file(due.review, i, due.task)
            };
            ((1..due.iteration).contains(&i) && canonical.as_ref() == Some(name))
                .then(|| (i, post, name.clone()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, _, name)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_is_removed() {
        assert_eq!(
            strip_frontmatter("---\ndescription: x\n---\n\nBody\n"),
            "Body\n"
        );
        assert_eq!(strip_frontmatter("No frontmatter\n"), "No frontmatter\n");
        assert_eq!(
            strip_frontmatter("---\nunterminated\n"),
            "---\nunterminated\n"
        );
    }

    #[test]
    fn the_reviewer_is_not_given_the_instructions_for_standalone_use() {
        for &r in Review::ALL {
            let text = reviewer_instructions(r);
            assert!(action_text(r).contains(STANDALONE_HEADING), "{r}");
            assert!(!text.contains("Standalone use"), "{r}");
            assert!(!text.contains("taskie mark"), "{r}");
            assert!(text.contains("VERDICT: PASS"), "{r}");
        }
    }

    #[test]
    fn every_review_action_is_embedded_without_frontmatter() {
        for &r in Review::ALL {
            let text = action_text(r);
            assert!(!text.starts_with("---"), "{r}");
            assert!(
                text.contains("VERDICT: PASS"),
                "{r} must tell the reviewer the verdict line"
            );
        }
    }
}
