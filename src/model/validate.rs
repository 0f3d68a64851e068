//! Plan structure validation (SPEC §7). Pure: the caller lists the directory and reads tasks.md.

use std::collections::BTreeMap;

use crate::model::plan_file::{PlanFile, Subject};
use crate::model::tasks;

/// What the hook saw directly inside one plan directory.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Names of regular files (and anything not a directory) directly in the plan dir.
    pub files: Vec<String>,
    /// Some `*.md` exists in a subdirectory (any depth).
    pub nested_md: bool,
}

/// Prefix of the temporary files of atomic writes (§3); they are never structure errors.
use crate::model::plan_file::TEMP_PREFIX as TMP_PREFIX;

/// tasks.md as read: its text, or the line holding its first byte that is not UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TasksText<'a> {
    Text(&'a str),
    NotUtf8 { line: usize },
}

impl<'a> TasksText<'a> {
    pub fn from_bytes(bytes: &'a [u8]) -> TasksText<'a> {
        match std::str::from_utf8(bytes) {
            Ok(t) => TasksText::Text(t),
            Err(e) => TasksText::NotUtf8 {
                line: bytes[..e.valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1,
            },
        }
    }

    pub fn text(&self) -> Option<&'a str> {
        match self {
            TasksText::Text(t) => Some(t),
            TasksText::NotUtf8 { .. } => None,
        }
    }
}

/// One broken rule of SPEC §7. The variants are in rule order and each starts with the
/// file name that orders it, so the derived `Ord` is the order errors are reported in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum StructureError {
    /// Rule 1.
    MissingPlan,
    /// Rule 2: a `.md` file whose name is not a plan file name.
    InvalidFilename { name: String },
    /// Rule 3.
    NestedFiles,
    /// Rule 4: a review of plan.md, design.md or tasks.md without the reviewed file.
    ReviewedFileMissing { review: String, needed: PlanFile },
    /// Rule 5: a post-review answering a review that does not exist.
    ReviewMissing { post: String, needed: PlanFile },
    /// Rule 6: a review followed by a later one, without its post-review.
    PostReviewOwed { review: String, needed: PlanFile },
    /// Rule 7.
    TasksMdMissing,
    /// Rule 8: a code review of a task whose task file is gone.
    TaskFileMissing { review: String, needed: PlanFile },
    /// Rule 9: tasks.md is not UTF-8 (the line of the first bad byte).
    TasksNotUtf8 { line: usize },
    /// Rule 9: tasks.md is not a task table.
    TasksTable(tasks::TasksError),
    /// Rule 9 (SPEC §23): a Depends cell naming no task, or dependencies in a cycle.
    Depends(crate::model::depends::Problem),
    /// Rule 10: anything that is neither a `.md` file nor state.json.
    NotMarkdown { name: String },
}

impl std::fmt::Display for StructureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use StructureError::*;
        match self {
            MissingPlan => f.write_str("Missing required file: plan.md"),
            InvalidFilename { name } => write!(f, "Invalid filename: {name}"),
            NestedFiles => f.write_str("Files found in nested directories"),
            ReviewedFileMissing {
                review: name,
                needed,
            }
            | ReviewMissing { post: name, needed }
            | PostReviewOwed {
                review: name,
                needed,
            }
            | TaskFileMissing {
                review: name,
                needed,
            } => {
                write!(f, "{name} requires {}", needed.file_name())
            }
            TasksMdMissing => f.write_str("Task files exist but tasks.md is missing"),
            TasksNotUtf8 { line } => write!(f, "tasks.md is not UTF-8 text (line {line})"),
            TasksTable(e) => f.write_str(e.message()),
            Depends(p) => write!(f, "{p}"),
            NotMarkdown { name } => write!(
                f,
                "Invalid file in plan directory: {name} (only .md files, state.json and the ledgers spend.json \
                 and findings.json allowed)"
            ),
        }
    }
}

impl StructureError {
    /// How to repair the rule this error breaks, for the plan `plan`. Never "remove a
    /// review file": review history is what the cycle is built on.
    pub fn fix(&self, plan: &str) -> String {
        use StructureError::*;
        let dir = crate::model::plan_file::rel_dir(plan);
        match self {
            MissingPlan => format!("write {dir}/plan.md (/taskie:new-plan)"),
            InvalidFilename { name } => format!(
                "rename {name} to a plan file name (ground-rules.md lists them) or move it out of {dir}/"
            ),
            NestedFiles => {
                format!("move the .md files in subdirectories of {dir}/ out of the plan directory")
            }
            ReviewedFileMissing { needed, .. } | TaskFileMissing { needed, .. } => {
                format!("restore or write {dir}/{}", needed.file_name())
            }
            ReviewMissing { post, needed } => format!(
                "restore {dir}/{} (e.g. from version control), or rename {post} to the iteration it answers",
                needed.file_name()
            ),
            PostReviewOwed { review, needed } => format!(
                "write {dir}/{}: the post-review of {review} (what was done about each finding)",
                needed.file_name()
            ),
            TasksMdMissing => {
                format!("write {dir}/tasks.md listing the tasks (/taskie:create-tasks)")
            }
            TasksNotUtf8 { line } => {
                format!("save {dir}/tasks.md as UTF-8 text (the byte is on line {line})")
            }
            TasksTable(_) => format!(
                "make {dir}/tasks.md a markdown table only (an Id and a Status column, one row per task)"
            ),
            Depends(p) => p.fix(&format!("{dir}/tasks.md")),
            NotMarkdown { name } => {
                format!("move {name} out of {dir}/ (notes belong outside the plan directory)")
            }
        }
    }
}

/// The editor leftovers of a listing (SPEC §2), which validation ignores: for a warning.
pub fn leftovers(files: &[String]) -> Vec<&str> {
    files
        .iter()
        .map(String::as_str)
        .filter(|n| !n.starts_with(TMP_PREFIX) && crate::model::plan_file::is_leftover(n))
        .collect()
}

/// All structure errors, in rule order then file-name order, each once.
pub fn validate(listing: &Listing, tasks_md: Option<&str>) -> Vec<StructureError> {
    validate_read(listing, tasks_md.map(TasksText::Text).as_ref())
}

/// [`validate`] of tasks.md as read from disk, which may not be UTF-8 (rule 9).
pub fn validate_read(listing: &Listing, tasks_md: Option<&TasksText>) -> Vec<StructureError> {
    use StructureError::*;
    let mut errors: Vec<StructureError> = Vec::new();
    let mut plan_files: Vec<(&str, PlanFile)> = Vec::new();

    for name in &listing.files {
        let name = name.as_str();
        if name.starts_with(TMP_PREFIX)
            || crate::model::plan_file::is_leftover(name)
            || crate::model::plan_file::TASKIE_FILES.contains(&name)
        {
            continue;
        }
        if name.ends_with(".md") {
            match PlanFile::parse(name) {
                Some(file) => plan_files.push((name, file)),
                None => errors.push(InvalidFilename { name: name.into() }),
            }
        } else {
            errors.push(NotMarkdown { name: name.into() });
        }
    }

    // Relationships are by identity, so `task-01.md` satisfies a need for `task-1.md`.
    let has = |f: PlanFile| plan_files.iter().any(|&(_, p)| p == f);

    if !has(PlanFile::Plan) {
        errors.push(MissingPlan);
    }
    if listing.nested_md {
        errors.push(NestedFiles);
    }

    // Highest review iteration per series, for rule 6.
    let mut highest: BTreeMap<Subject, u64> = BTreeMap::new();
    for &(_, file) in &plan_files {
        if let PlanFile::Review(subject, i) = file {
            let h = highest.entry(subject).or_insert(i);
            *h = (*h).max(i);
        }
    }

    let mut task_files = false;
    for &(name, file) in &plan_files {
        match file {
            PlanFile::Task(_) => task_files = true,
            PlanFile::Review(subject, i) => {
                let base = match subject {
                    Subject::Plan => Some(PlanFile::Plan),
                    Subject::Design => Some(PlanFile::Design),
                    Subject::Tasks => Some(PlanFile::Tasks),
                    _ => None,
                };
                if let Some(needed) = base.filter(|&b| !has(b)) {
                    errors.push(ReviewedFileMissing {
                        review: name.into(),
                        needed,
                    });
                }
                let post = PlanFile::PostReview(subject, i);
                if highest.get(&subject).is_some_and(|&h| i < h) && !has(post) {
                    errors.push(PostReviewOwed {
                        review: name.into(),
                        needed: post,
                    });
                }
                if let Subject::TaskCode(n) = subject
                    && !has(PlanFile::Task(n))
                {
                    errors.push(TaskFileMissing {
                        review: name.into(),
                        needed: PlanFile::Task(n),
                    });
                }
            }
            PlanFile::PostReview(subject, i) => {
                let review = PlanFile::Review(subject, i);
                if !has(review) {
                    errors.push(ReviewMissing {
                        post: name.into(),
                        needed: review,
                    });
                }
            }
            PlanFile::Plan | PlanFile::Design | PlanFile::Tasks => {}
        }
    }

    if task_files && !has(PlanFile::Tasks) {
        errors.push(TasksMdMissing);
    }
    match tasks_md {
        Some(TasksText::NotUtf8 { line }) => errors.push(TasksNotUtf8 { line: *line }),
        Some(TasksText::Text(t)) => match tasks::parse(t) {
            Err(e) => errors.push(TasksTable(e)),
            Ok(_) => {
                let rows = crate::model::depends::rows(t).unwrap_or_default();
                errors.extend(
                    crate::model::depends::problems(&rows)
                        .into_iter()
                        .map(Depends),
                );
            }
        },
        None => {}
    }

    // Rule order, then file-name order (the derived order); each error once.
    errors.sort();
    errors.dedup();
    errors
}

/// The errors as one line, `; ` between them (how the hook and the CLI list them).
pub fn joined(errors: &[StructureError]) -> String {
    let texts: Vec<String> = errors.iter().map(ToString::to_string).collect();
    texts.join("; ")
}

/// The fix for each rule an error breaks (SPEC §7), each once, in the errors' order.
pub fn fixes(plan: &str, errors: &[StructureError]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in errors {
        let fix = e.fix(plan);
        if !out.contains(&fix) {
            out.push(fix);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASKS: &str = "| Id | Status |\n|----|--------|\n| 1 | pending |\n";

    fn listing(files: &[&str]) -> Listing {
        Listing {
            files: files.iter().map(|f| f.to_string()).collect(),
            nested_md: false,
        }
    }

    /// Validates `files`, reading tasks.md as `TASKS` when it is listed; the messages.
    fn check(files: &[&str]) -> Vec<String> {
        let tasks_md = files.contains(&"tasks.md").then_some(TASKS);
        messages(validate(&listing(files), tasks_md))
    }

    fn messages(errors: Vec<StructureError>) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn editor_leftovers_are_ignored_and_the_ledgers_are_named_as_allowed() {
        let files = [
            "plan.md",
            ".plan.md.swp",
            "plan.md~",
            ".DS_Store",
            "spend.json",
            "findings.json",
            ".taskie-tmp-x",
        ];
        assert_eq!(check(&files), Vec::<String>::new());
        let names: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        assert_eq!(leftovers(&names), [".plan.md.swp", "plan.md~", ".DS_Store"]);
        assert_eq!(
            check(&["plan.md", "notes.txt"]),
            [
                "Invalid file in plan directory: notes.txt (only .md files, state.json and the ledgers spend.json \
              and findings.json allowed)"
            ]
        );
    }

    #[test]
    fn minimal_plan_is_valid() {
        assert!(check(&["plan.md"]).is_empty());
    }

    #[test]
    fn full_plan_is_valid() {
        let files = [
            "state.json",
            "plan.md",
            "design.md",
            "tasks.md",
            "task-1.md",
            "task-2.md",
            "plan-review-1.md",
            "plan-post-review-1.md",
            "plan-review-2.md",
            "design-review-1.md",
            "tasks-review-1.md",
            "tasks-post-review-1.md",
            "tasks-review-2.md",
            "task-1-code-review-1.md",
            "task-1-code-post-review-1.md",
            "task-1-code-review-2.md",
            "task-2-review-1.md",
            "task-2-post-review-1.md",
            "all-code-review-1.md",
            "all-code-post-review-1.md",
            "all-code-review-2.md",
        ];
        assert_eq!(check(&files), Vec::<String>::new());
    }

    #[test]
    fn third_code_review_is_valid() {
        let files = [
            "plan.md",
            "task-1.md",
            "tasks.md",
            "task-1-code-review-1.md",
            "task-1-code-post-review-1.md",
            "task-1-code-review-2.md",
            "task-1-code-post-review-2.md",
        ];
        assert_eq!(check(&files), Vec::<String>::new());
    }

    #[test]
    fn post_reviews_do_not_form_a_series() {
        let files = [
            "plan.md",
            "plan-review-1.md",
            "plan-post-review-1.md",
            "plan-review-3.md",
            "plan-post-review-3.md",
        ];
        // Only review 1 < 3 matters, and it has its post-review; post-review 3 < nothing.
        assert_eq!(check(&files), Vec::<String>::new());
    }

    #[test]
    fn missing_plan_is_reported() {
        assert_eq!(check(&[]), ["Missing required file: plan.md"]);
        assert_eq!(check(&["design.md"]), ["Missing required file: plan.md"]);
    }

    #[test]
    fn invalid_md_names_are_reported() {
        assert_eq!(
            check(&["plan.md", "notes.md", "Plan.md", "task-1-code-review.md"]),
            [
                "Invalid filename: Plan.md",
                "Invalid filename: notes.md",
                "Invalid filename: task-1-code-review.md",
            ]
        );
    }

    #[test]
    fn nested_md_is_reported() {
        let mut l = listing(&["plan.md"]);
        l.nested_md = true;
        assert_eq!(
            messages(validate(&l, None)),
            ["Files found in nested directories"]
        );
    }

    #[test]
    fn review_without_its_base_is_reported() {
        assert_eq!(
            check(&["plan.md", "design-review-1.md", "tasks-review-1.md"]),
            [
                "design-review-1.md requires design.md",
                "tasks-review-1.md requires tasks.md",
            ]
        );
    }

    #[test]
    fn plan_review_without_plan_reports_both_rules() {
        assert_eq!(
            check(&["plan-review-1.md"]),
            [
                "Missing required file: plan.md",
                "plan-review-1.md requires plan.md",
            ]
        );
    }

    #[test]
    fn post_review_of_base_does_not_need_the_base() {
        // Rule 4 is about reviews; the orphan post-review is rule 5's business.
        assert_eq!(
            check(&["plan.md", "design-post-review-1.md"]),
            ["design-post-review-1.md requires design-review-1.md"]
        );
    }

    #[test]
    fn post_review_without_review_is_reported() {
        assert_eq!(
            check(&[
                "plan.md",
                "tasks.md",
                "task-1.md",
                "plan-post-review-1.md",
                "tasks-post-review-2.md",
                "task-1-code-post-review-1.md",
                "task-1-post-review-3.md",
                "all-code-post-review-1.md",
            ]),
            [
                "all-code-post-review-1.md requires all-code-review-1.md",
                "plan-post-review-1.md requires plan-review-1.md",
                "task-1-code-post-review-1.md requires task-1-code-review-1.md",
                "task-1-post-review-3.md requires task-1-review-3.md",
                "tasks-post-review-2.md requires tasks-review-2.md",
            ]
        );
    }

    #[test]
    fn legacy_post_review_is_not_satisfied_by_a_code_review() {
        assert_eq!(
            check(&[
                "plan.md",
                "tasks.md",
                "task-1.md",
                "task-1-code-review-1.md",
                "task-1-post-review-1.md",
            ]),
            ["task-1-post-review-1.md requires task-1-review-1.md"]
        );
    }

    #[test]
    fn earlier_review_without_post_review_is_reported() {
        assert_eq!(
            check(&[
                "plan.md",
                "plan-review-1.md",
                "plan-review-2.md",
                "plan-review-3.md",
                "plan-post-review-2.md",
            ]),
            ["plan-review-1.md requires plan-post-review-1.md"]
        );
    }

    #[test]
    fn review_series_are_per_subject() {
        assert_eq!(
            check(&[
                "plan.md",
                "tasks.md",
                "task-1.md",
                "task-2.md",
                "task-1-code-review-1.md",
                "task-1-code-review-2.md",
                "task-2-code-review-5.md",
                "task-2-review-1.md",
                "all-code-review-1.md",
            ]),
            ["task-1-code-review-1.md requires task-1-code-post-review-1.md"]
        );
    }

    #[test]
    fn legacy_review_series_needs_legacy_post_reviews() {
        assert_eq!(
            check(&[
                "plan.md",
                "tasks.md",
                "task-3.md",
                "task-3-review-1.md",
                "task-3-review-2.md",
            ]),
            ["task-3-review-1.md requires task-3-post-review-1.md"]
        );
    }

    #[test]
    fn task_files_without_tasks_md_are_reported_once() {
        assert_eq!(
            check(&["plan.md", "task-1.md", "task-2.md"]),
            ["Task files exist but tasks.md is missing"]
        );
    }

    #[test]
    fn code_review_without_task_file_is_reported() {
        assert_eq!(
            check(&["plan.md", "tasks.md", "task-4-code-review-1.md"]),
            ["task-4-code-review-1.md requires task-4.md"]
        );
    }

    #[test]
    fn code_post_review_and_legacy_review_do_not_need_the_task_file() {
        assert_eq!(
            check(&["plan.md", "tasks.md", "task-4-review-1.md"]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn tasks_md_problems_are_reported() {
        let files = listing(&["plan.md", "tasks.md"]);
        assert_eq!(
            messages(validate(&files, Some("Tasks:\n| Id | Status |\n"))),
            ["tasks.md contains non-table content"]
        );
        assert_eq!(
            messages(validate(&files, Some("\n\n"))),
            ["tasks.md has no table rows"]
        );
        assert_eq!(
            messages(validate(&files, Some("| Id | Status |\n|---|---|\n"))),
            ["tasks.md has no task rows (header-only table)"]
        );
        assert_eq!(
            messages(validate(
                &files,
                Some("| Id | Status |\r\n|---|---|\r\n| 1 | done |\r\n")
            )),
            Vec::<String>::new()
        );
    }

    #[test]
    fn unknown_dependencies_and_cycles_in_tasks_md_are_structure_errors() {
        let files = listing(&["plan.md", "tasks.md"]);
        let md = "| Id | Status | Depends |\n|-|-|-|\n| 1 | pending | 2 |\n| 2 | pending | 1 |\n| 3 | pending | 7 |\n";
        assert_eq!(
            messages(validate(&files, Some(md))),
            [
                "tasks.md line 5: task 3 depends on 7, which is not a task of the table",
                "tasks.md line 3: the dependencies form a cycle (1 → 2 → 1)",
            ]
        );
    }

    #[test]
    fn tasks_md_is_not_checked_when_not_given() {
        assert!(validate(&listing(&["plan.md"]), None).is_empty());
    }

    #[test]
    fn other_files_are_reported() {
        assert_eq!(
            check(&[
                "plan.md",
                "notes.txt",
                "plan-review-1.md.bak",
                "state.json.bak"
            ]),
            [
                "Invalid file in plan directory: notes.txt (only .md files, state.json and the ledgers spend.json and findings.json allowed)",
                "Invalid file in plan directory: plan-review-1.md.bak (only .md files, state.json and the ledgers spend.json and findings.json allowed)",
                "Invalid file in plan directory: state.json.bak (only .md files, state.json and the ledgers spend.json and findings.json allowed)",
            ]
        );
    }

    #[test]
    fn state_json_and_temporary_files_are_allowed() {
        assert!(
            check(&[
                "plan.md",
                "state.json",
                ".taskie-tmp-abc123",
                ".taskie-tmp-x.md",
                ".taskie-tmp-",
            ])
            .is_empty()
        );
    }

    #[test]
    fn temporary_files_do_not_satisfy_requirements() {
        assert_eq!(
            check(&[".taskie-tmp-plan.md"]),
            ["Missing required file: plan.md"]
        );
    }

    #[test]
    fn relationships_use_parsed_identity_and_canonical_names() {
        // `task-01.md` is task 1; the message names the on-disk review and canonical post.
        assert_eq!(
            check(&[
                "plan.md",
                "tasks.md",
                "task-01.md",
                "task-1-code-review-01.md",
                "task-1-code-review-2.md",
            ]),
            ["task-1-code-review-01.md requires task-1-code-post-review-1.md"]
        );
    }

    #[test]
    fn errors_come_in_rule_order_then_file_name_order() {
        let mut l = listing(&[
            "zz.txt",
            "task-9-code-review-2.md",
            "task-9-code-review-1.md",
            "tasks-post-review-1.md",
            "design-review-1.md",
            "b.md",
            "a.md",
            "task-2.md",
            "aa.txt",
        ]);
        l.nested_md = true;
        assert_eq!(
            messages(validate(&l, None)),
            [
                "Missing required file: plan.md",
                "Invalid filename: a.md",
                "Invalid filename: b.md",
                "Files found in nested directories",
                "design-review-1.md requires design.md",
                "tasks-post-review-1.md requires tasks-review-1.md",
                "task-9-code-review-1.md requires task-9-code-post-review-1.md",
                "Task files exist but tasks.md is missing",
                "task-9-code-review-1.md requires task-9.md",
                "task-9-code-review-2.md requires task-9.md",
                "Invalid file in plan directory: aa.txt (only .md files, state.json and the ledgers spend.json and findings.json allowed)",
                "Invalid file in plan directory: zz.txt (only .md files, state.json and the ledgers spend.json and findings.json allowed)",
            ]
        );
    }

    #[test]
    fn tasks_md_error_comes_between_rule_8_and_rule_10() {
        let l = listing(&["plan.md", "tasks.md", "task-3-code-review-1.md", "x.json"]);
        assert_eq!(
            messages(validate(&l, Some("prose"))),
            [
                "task-3-code-review-1.md requires task-3.md",
                "tasks.md contains non-table content",
                "Invalid file in plan directory: x.json (only .md files, state.json and the ledgers spend.json and findings.json allowed)",
            ]
        );
    }

    #[test]
    fn duplicate_entries_are_reported_once() {
        assert_eq!(
            check(&["notes.md", "notes.md", "plan.md", "x", "x"]),
            [
                "Invalid filename: notes.md",
                "Invalid file in plan directory: x (only .md files, state.json and the ledgers spend.json and findings.json allowed)",
            ]
        );
    }

    #[test]
    fn file_name_order_is_by_name_not_by_message() {
        // A space sorts after a tab, so sorting whole messages would put "a\t" first.
        assert_eq!(
            check(&["plan.md", "a\t", "a"]),
            [
                "Invalid file in plan directory: a (only .md files, state.json and the ledgers spend.json and findings.json allowed)",
                "Invalid file in plan directory: a\t (only .md files, state.json and the ledgers spend.json and findings.json allowed)",
            ]
        );
    }

    #[test]
    fn every_rule_has_its_own_fix_naming_what_to_touch() {
        use StructureError::*;
        let one_of_each = [
            (MissingPlan, "plan.md"),
            (
                InvalidFilename {
                    name: "notes.md".into(),
                },
                "rename notes.md",
            ),
            (NestedFiles, "subdirectories"),
            (
                ReviewedFileMissing {
                    review: "plan-review-1.md".into(),
                    needed: PlanFile::Plan,
                },
                "restore or write .taskie/plans/p/plan.md",
            ),
            (
                ReviewMissing {
                    post: "plan-post-review-2.md".into(),
                    needed: PlanFile::Review(Subject::Plan, 2),
                },
                "restore .taskie/plans/p/plan-review-2.md",
            ),
            (
                PostReviewOwed {
                    review: "plan-review-1.md".into(),
                    needed: PlanFile::PostReview(Subject::Plan, 1),
                },
                "write .taskie/plans/p/plan-post-review-1.md",
            ),
            (TasksMdMissing, "write .taskie/plans/p/tasks.md"),
            (
                TaskFileMissing {
                    review: "task-3-code-review-1.md".into(),
                    needed: PlanFile::Task(3),
                },
                "restore or write .taskie/plans/p/task-3.md",
            ),
            (TasksNotUtf8 { line: 4 }, "line 4"),
            (TasksTable(tasks::TasksError::NoRows), "markdown table only"),
            (
                Depends(crate::model::depends::Problem::Unknown {
                    line: 4,
                    task: "2".into(),
                    missing: "9".into(),
                }),
                "line 4 of .taskie/plans/p/tasks.md",
            ),
            (
                NotMarkdown {
                    name: "x.txt".into(),
                },
                "move x.txt out",
            ),
        ];
        let mut seen = Vec::new();
        for (error, names) in &one_of_each {
            let fix = error.fix("p");
            assert!(fix.contains(names), "{error}: {fix}");
            assert!(!seen.contains(&fix), "{error} shares its fix: {fix}");
            seen.push(fix);
        }
    }
}
