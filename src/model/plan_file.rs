//! Names of the files that may live directly in a plan directory (SPEC §2, §7, §8).

use crate::model::phase::Review;

/// Prefix of the temporary files; the plan-lock holder deletes leftovers (SPEC §5 step 7).
pub const TEMP_PREFIX: &str = ".taskie-tmp-";

/// The plan's state (SPEC §3).
pub const STATE_FILE: &str = "state.json";

/// The plan's spend ledger (SPEC §18), beside the state.
pub const SPEND_FILE: &str = "spend.json";

/// The plan's findings ledger (SPEC §21), beside the state.
pub const FINDINGS_FILE: &str = "findings.json";

/// The files of a plan directory that taskie writes and that are not plan files.
pub const TASKIE_FILES: [&str; 3] = [STATE_FILE, SPEND_FILE, FINDINGS_FILE];

/// A file of plan `plan` as people and the agent see it, relative to the project
/// directory: the one place `.taskie/plans/<id>/<name>` is spelled.
pub fn rel(plan: &str, name: &str) -> String {
    format!("{}/{name}", rel_dir(plan))
}

/// Plan `plan`'s directory relative to the project directory.
pub fn rel_dir(plan: &str) -> String {
    format!(".taskie/plans/{plan}")
}

/// What a person's tools leave beside the plan (SPEC §2): dotfiles (`.plan.md.swp`,
/// `.DS_Store`) and backups ending in `~`. Not the plan's: validation ignores them. Taskie's
/// own temporary files start with a dot too, and are ignored as well.
pub fn is_leftover(name: &str) -> bool {
    name.starts_with('.') || name.ends_with('~')
}

/// What a review is about; part of every review / post-review file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Subject {
    Plan,
    Design,
    Tasks,
    /// `task-<N>-code-review-<i>.md`
    TaskCode(u64),
    /// `task-<N>-review-<i>.md` (older naming, still valid)
    TaskLegacy(u64),
    AllCode,
}

/// A recognised `*.md` name directly in a plan directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PlanFile {
    Plan,
    Design,
    Tasks,
    Task(u64),
    Review(Subject, u64),
    PostReview(Subject, u64),
}

impl Subject {
    /// The part of a review file name before `-review-` / `-post-review-`.
    fn prefix(&self) -> String {
        match self {
            Subject::Plan => "plan".to_string(),
            Subject::Design => "design".to_string(),
            Subject::Tasks => "tasks".to_string(),
            Subject::TaskCode(n) => format!("task-{n}-code"),
            Subject::TaskLegacy(n) => format!("task-{n}"),
            Subject::AllCode => "all-code".to_string(),
        }
    }

    fn parse_prefix(prefix: &str) -> Option<Subject> {
        match prefix {
            "plan" => Some(Subject::Plan),
            "design" => Some(Subject::Design),
            "tasks" => Some(Subject::Tasks),
            "all-code" => Some(Subject::AllCode),
            _ => {
                let rest = prefix.strip_prefix("task-")?;
                match rest.strip_suffix("-code") {
                    Some(n) => crate::model::text::decimal(n).map(Subject::TaskCode),
                    None => crate::model::text::decimal(rest).map(Subject::TaskLegacy),
                }
            }
        }
    }
}

impl PlanFile {
    /// Parses a file name; `None` means it is not a valid plan file name.
    pub fn parse(name: &str) -> Option<PlanFile> {
        let stem = name.strip_suffix(".md")?;
        match stem {
            "plan" => return Some(PlanFile::Plan),
            "design" => return Some(PlanFile::Design),
            "tasks" => return Some(PlanFile::Tasks),
            _ => {}
        }
        if let Some(n) = stem
            .strip_prefix("task-")
            .and_then(crate::model::text::decimal)
        {
            return Some(PlanFile::Task(n));
        }
        // Every review name is `<prefix>-review-<i>` or `<prefix>-post-review-<i>`.
        let (head, iteration) = stem.rsplit_once('-')?;
        let iteration = crate::model::text::decimal(iteration)?;
        // `-post-review` must be tried first: it also ends in `-review`.
        if let Some(prefix) = head.strip_suffix("-post-review") {
            return Subject::parse_prefix(prefix).map(|s| PlanFile::PostReview(s, iteration));
        }
        let prefix = head.strip_suffix("-review")?;
        Subject::parse_prefix(prefix).map(|s| PlanFile::Review(s, iteration))
    }

    /// The canonical file name, e.g. `task-3-code-post-review-2.md`.
    pub fn file_name(&self) -> String {
        match self {
            PlanFile::Plan => "plan.md".to_string(),
            PlanFile::Design => "design.md".to_string(),
            PlanFile::Tasks => "tasks.md".to_string(),
            PlanFile::Task(n) => format!("task-{n}.md"),
            PlanFile::Review(s, i) => format!("{}-review-{i}.md", s.prefix()),
            PlanFile::PostReview(s, i) => format!("{}-post-review-{i}.md", s.prefix()),
        }
    }
}

/// A plan id is used in paths and prompts, so it is restricted to `^[A-Za-z0-9_-]+$`.
/// Longest plan id: ids become file names (`<id>.lock`, `<id>-diagnostics.json`, review
/// logs) that must stay well below the 255-byte name limit of common file systems.
pub const MAX_ID_LEN: usize = 100;

/// The rule [`valid_id`] checks, in words, for error messages.
pub const ID_RULE: &str = "a plan id is 1 to 100 characters: letters, digits, '_' and '-'";

pub fn valid_id(id: &str) -> bool {
    id.len() <= MAX_ID_LEN && safe_name(id)
}

/// Letters, digits, `_` and `-`, not empty: safe as a file name. Plan ids add a length
/// limit ([`MAX_ID_LEN`]); session ids have their own.
pub fn safe_name(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// What the review files of `r` are about; `None` for a code review without a task.
pub fn subject(r: Review, task: Option<u64>) -> Option<Subject> {
    Some(match r {
        Review::Plan => Subject::Plan,
        Review::Tasks => Subject::Tasks,
        Review::Code => Subject::TaskCode(task?),
        Review::AllCode => Subject::AllCode,
    })
}

/// The review file for (R, N) (SPEC §8); `None` for a code review without a task.
pub fn review_file(r: Review, n: u64, task: Option<u64>) -> Option<String> {
    Some(PlanFile::Review(subject(r, task)?, n).file_name())
}

/// The post-review file for (R, N) (SPEC §8).
pub fn post_file(r: Review, n: u64, task: Option<u64>) -> Option<String> {
    Some(PlanFile::PostReview(subject(r, task)?, n).file_name())
}

#[cfg(test)]
mod tests {
    use super::PlanFile::*;
    use super::Subject::{AllCode, TaskCode, TaskLegacy};
    use super::*;

    fn all_valid_forms() -> Vec<(&'static str, PlanFile)> {
        vec![
            ("plan.md", Plan),
            ("design.md", Design),
            ("tasks.md", Tasks),
            ("task-1.md", Task(1)),
            ("task-42.md", Task(42)),
            ("plan-review-1.md", Review(Subject::Plan, 1)),
            ("plan-post-review-1.md", PostReview(Subject::Plan, 1)),
            ("design-review-2.md", Review(Subject::Design, 2)),
            ("design-post-review-2.md", PostReview(Subject::Design, 2)),
            ("tasks-review-3.md", Review(Subject::Tasks, 3)),
            ("tasks-post-review-3.md", PostReview(Subject::Tasks, 3)),
            ("task-3-code-review-2.md", Review(TaskCode(3), 2)),
            ("task-3-code-post-review-2.md", PostReview(TaskCode(3), 2)),
            ("task-7-review-1.md", Review(TaskLegacy(7), 1)),
            ("task-7-post-review-1.md", PostReview(TaskLegacy(7), 1)),
            ("all-code-review-10.md", Review(AllCode, 10)),
            ("all-code-post-review-10.md", PostReview(AllCode, 10)),
        ]
    }

    #[test]
    fn every_valid_name_form_parses_to_its_identity() {
        for (name, expected) in all_valid_forms() {
            assert_eq!(PlanFile::parse(name), Some(expected), "{name}");
        }
    }

    #[test]
    fn file_name_round_trips_every_valid_form() {
        for (name, file) in all_valid_forms() {
            assert_eq!(file.file_name(), name);
        }
    }

    #[test]
    fn invalid_names_are_rejected() {
        for name in [
            "",
            ".md",
            "notes.md",
            "Plan.md",
            "PLAN.md",
            "plan.MD",
            "plan",
            "plan.md.md",
            "plan-review-1.md.bak",
            "task-.md",
            "task-1a.md",
            "task-a.md",
            "task--1.md",
            "task-+1.md",
            "task-1 .md",
            " task-1.md",
            "task-1-code-review.md",
            "task-1-code-review-.md",
            "task-1-code-review-x.md",
            "task-1-code-post-review.md",
            "task--code-review-1.md",
            "task-code-review-1.md",
            "task-1-post-code-review-1.md",
            "task-1-review-1-2.md",
            "plan-review.md",
            "plan-review-+1.md",
            "plan-post-review-.md",
            "post-review-1.md",
            "review-1.md",
            "plan-1.md",
            "tasks-1.md",
            "design-code-review-1.md",
            "all-review-1.md",
            "all-code-1.md",
            "code-review-1.md",
            "task-1-code.md",
            "plan-Review-1.md",
            "task-١.md",
        ] {
            assert_eq!(PlanFile::parse(name), None, "{name:?}");
        }
    }

    #[test]
    fn numbers_overflowing_u64_are_invalid() {
        assert_eq!(
            PlanFile::parse("task-18446744073709551615.md"),
            Some(Task(u64::MAX))
        );
        assert_eq!(PlanFile::parse("task-18446744073709551616.md"), None);
        assert_eq!(PlanFile::parse("plan-review-99999999999999999999.md"), None);
        assert_eq!(
            PlanFile::parse("task-99999999999999999999-code-review-1.md"),
            None
        );
    }

    #[test]
    fn leading_zeros_parse_to_the_same_number() {
        assert_eq!(PlanFile::parse("task-01.md"), Some(Task(1)));
        assert_eq!(Task(1).file_name(), "task-1.md");
        assert_eq!(
            PlanFile::parse("plan-review-007.md"),
            Some(Review(Subject::Plan, 7))
        );
    }

    #[test]
    fn task_zero_is_a_valid_task() {
        assert_eq!(PlanFile::parse("task-0.md"), Some(Task(0)));
        assert_eq!(
            PlanFile::parse("task-0-code-review-0.md"),
            Some(Review(TaskCode(0), 0))
        );
    }

    #[test]
    fn code_and_legacy_reviews_of_one_task_are_different_subjects() {
        let code = PlanFile::parse("task-1-code-review-1.md").unwrap();
        let legacy = PlanFile::parse("task-1-review-1.md").unwrap();
        assert_ne!(code, legacy);
    }

    #[test]
    fn plan_ids_allow_only_safe_characters() {
        for ok in ["p", "my-plan_2", "A9"] {
            assert!(valid_id(ok), "{ok}");
        }
        for bad in ["", "..", "a/b", "a b", "ü", "a.b", "-\n"] {
            assert!(!valid_id(bad), "{bad:?}");
        }
    }
}
