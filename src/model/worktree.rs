//! Whether a reviewer changed the work it reviewed (SPEC §8): the project's files, git's
//! HEAD and its index as git listed them before and after a review, compared, and what the
//! comparison means for the verdict. Pure: `reviewer/worktree_check.rs` asks git and reads
//! the files.

use crate::model::plan_file;
use serde::Serialize;

/// Which of the repository's paths are the reviewed work: all of them, wherever the project
/// lies in the repository, but Taskie's own directories (`.taskie` anywhere: states,
/// ledgers and logs, and other projects' and other plans' files, which other sessions
/// write) — except the reviewed plan's own files (its plan, tasks and answers, which a
/// plan or tasks review judges), less the review file the reviewer writes and Taskie's
/// files beside them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The reviewed plan's directory from the repository's top, ending in `/`.
    plan_dir: String,
    review_file: String,
}

impl Scope {
    /// `prefix`: the project directory from the repository's top (`git rev-parse
    /// --show-prefix`: empty at the top, else ending in `/`).
    pub fn new(prefix: &str, plan: &str, review_file: &str) -> Scope {
        Scope {
            plan_dir: format!("{prefix}{}/", plan_file::rel_dir(plan)),
            review_file: review_file.to_string(),
        }
    }

    /// Whether a change to `path` (from the repository's top) is a change to the work.
    pub fn holds(&self, path: &str) -> bool {
        if let Some(name) = path.strip_prefix(&self.plan_dir) {
            return !name.contains('/')
                && name != self.review_file
                && !plan_file::TASKIE_FILES.contains(&name)
                && !plan_file::is_leftover(name);
        }
        !path.split('/').any(|part| part == ".taskie")
    }
}

/// One file as `git status` listed it around a review (or, after the review, a file it
/// listed before): its path from the repository's top, whether git tracks it, and a
/// fingerprint of its content (`None`: there is no such file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub path: String,
    pub tracked: bool,
    pub fingerprint: Option<u64>,
}

/// Where HEAD pointed: its branch (`None`: detached) and its commit (`None`: none yet).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Head {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl Head {
    /// `main at 1a2b3c4d`, `a detached HEAD at 1a2b3c4d`, `main (no commit yet)`.
    pub fn words(&self) -> String {
        let commit = match &self.commit {
            Some(c) => format!(" at {}", &c[..c.len().min(8)]),
            None => " (no commit yet)".to_string(),
        };
        match &self.branch {
            Some(b) => format!("{}{commit}", b.strip_prefix("refs/heads/").unwrap_or(b)),
            None => format!("a detached HEAD{commit}"),
        }
    }
}

/// Git's side of the project around a review: HEAD, and the index entries that differ
/// from HEAD's (path and a fingerprint of mode, object and stage), in path order. A
/// commit moves HEAD; `git add` or `git rm --cached` changes an entry; neither has to
/// change a file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Git {
    pub head: Head,
    pub staged: Vec<(String, u64)>,
}

/// HEAD before and after a review that moved it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Moved {
    pub before: Head,
    pub after: Head,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum What {
    Added,
    Modified,
    Deleted,
}

/// One file the review changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub path: String,
    /// Tracked by git (before or after): a change to it voids the verdict.
    pub tracked: bool,
    pub what: What,
}

/// What the check found, for the answer, the review file's header and the event.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Report {
    /// Every file the review changed (empty when none, or when the check was skipped).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<Change>,
    /// A tracked file changed: the verdict does not count (SPEC §22: unavailable).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub voided: bool,
    /// HEAD moved (a commit, a reset, a checkout): the verdict does not count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<Moved>,
    /// Paths whose index entry changed (staged or unstaged): the verdict does not count.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub staged: Vec<String>,
    /// Why the reviewer's shell commands ran without the host's sandbox, when the host
    /// has one (Claude Code) and it could not start. The verdict stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsandboxed: Option<String>,
    /// The changes' diff, relative to the project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Why no comparison could be made; the review stands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl Report {
    /// A check that could not be made, and why.
    pub fn skipped(why: impl Into<String>) -> Report {
        Report {
            skipped: Some(why.into()),
            ..Report::default()
        }
    }

    /// The changes found between `before` and `after`, and whether they void the verdict.
    pub fn of(before: &[Seen], after: &[Seen]) -> Report {
        let changed = compare(before, after);
        Report {
            voided: changed.iter().any(|c| c.tracked),
            changed,
            ..Report::default()
        }
    }

    /// Adds what changed in git itself between `before` and `after`: a moved HEAD or a
    /// changed index entry voids the verdict like a changed tracked file.
    pub fn with_git(mut self, before: &Git, after: &Git) -> Report {
        if before.head != after.head {
            self.head = Some(Moved {
                before: before.head.clone(),
                after: after.head.clone(),
            });
        }
        let entry =
            |git: &Git, path: &str| git.staged.iter().find(|(p, _)| p == path).map(|(_, f)| *f);
        let mut staged: Vec<String> = before
            .staged
            .iter()
            .chain(&after.staged)
            .map(|(p, _)| p)
            .filter(|p| entry(before, p) != entry(after, p))
            .cloned()
            .collect();
        staged.sort();
        staged.dedup();
        self.staged = staged;
        self.voided |= self.head.is_some() || !self.staged.is_empty();
        self
    }

    /// Something of git's changed: files, HEAD or the index.
    pub fn found_something(&self) -> bool {
        !self.changed.is_empty() || self.head.is_some() || !self.staged.is_empty()
    }

    /// Worth telling: something changed, the check was skipped, or the reviewer's
    /// commands ran without the sandbox.
    pub fn says_something(&self) -> bool {
        self.found_something() || self.skipped.is_some() || self.unsandboxed.is_some()
    }

    /// Everything that changed, in words: the moved HEAD, the changed index entries,
    /// then the files ([`Report::files`]).
    pub fn what(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = &self.head {
            parts.push(format!(
                "HEAD moved from {} to {}",
                m.before.words(),
                m.after.words()
            ));
        }
        if !self.staged.is_empty() {
            let mut names: Vec<&str> = self.staged.iter().take(NAMED).map(String::as_str).collect();
            let more = format!("and {} more", self.staged.len().saturating_sub(NAMED));
            if self.staged.len() > NAMED {
                names.push(&more);
            }
            parts.push(format!("the index changed for {}", names.join(", ")));
        }
        if !self.changed.is_empty() {
            parts.push(self.files());
        }
        parts.join("; ")
    }

    /// The changed files in words, at most [`NAMED`] of them:
    /// `app/a.rs (tracked, modified), out.log (untracked, added)`.
    pub fn files(&self) -> String {
        let mut words: Vec<String> = self
            .changed
            .iter()
            .take(NAMED)
            .map(|c| {
                let tracked = if c.tracked { "tracked" } else { "untracked" };
                let what: &str = c.what.into();
                format!("{} ({tracked}, {what})", c.path)
            })
            .collect();
        if self.changed.len() > NAMED {
            words.push(format!("and {} more", self.changed.len() - NAMED));
        }
        words.join(", ")
    }

    /// Why the verdict does not count, for the failure reason. The hook cannot tell who
    /// made the change: the reviewer, or another session working in the same checkout.
    pub fn void_reason(&self) -> String {
        format!(
            "the work changed in git while it ran ({WHO}), so its verdict does not count: {}",
            self.what()
        )
    }

    /// The review file's header lines, each without its leading `> `: what changed, and
    /// the sandbox the reviewer's commands ran without.
    pub fn header(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.found_something() {
            let diff = self
                .diff
                .as_deref()
                .map(|d| format!(" Diff: {d}."))
                .unwrap_or_default();
            let meaning = if self.voided {
                "A commit, a staged change or a change to a tracked file voids this review: its verdict is not counted."
            } else {
                "Only untracked files changed (build or test outputs?): the verdict stands."
            };
            lines.push(format!(
                "Worktree: Changed while this review ran: {}. {meaning}{diff} Nothing was reverted.",
                self.what()
            ));
        }
        if let Some(why) = &self.unsandboxed {
            lines.push(format!(
                "Sandbox: the reviewer's shell commands ran without Claude Code's sandbox ({why}); \
                 the check of the project's files, HEAD and index before and after still applied."
            ));
        }
        lines
    }
}

/// Who may have changed the work during a review: the hook cannot tell which.
pub const WHO: &str = "by the reviewer, or by another session working in this checkout";

/// How many changed files a text names; the diff and the event have them all.
pub const NAMED: usize = 10;

/// The files that differ between `before` and `after`, in path order. A file listed only
/// after the review was clean before (tracked: its content was the committed one) or did
/// not exist (untracked); one listed in both changed when its fingerprint did.
pub fn compare(before: &[Seen], after: &[Seen]) -> Vec<Change> {
    let mut changed: Vec<Change> = Vec::new();
    for a in after {
        let what = match before.iter().find(|b| b.path == a.path) {
            Some(b) if b.fingerprint == a.fingerprint => continue,
            Some(b) => match (b.fingerprint, a.fingerprint) {
                (None, _) => What::Added,
                (_, None) => What::Deleted,
                _ => What::Modified,
            },
            None => match a.fingerprint {
                None => What::Deleted,
                Some(_) if a.tracked => What::Modified,
                Some(_) => What::Added,
            },
        };
        let tracked = a.tracked || before.iter().any(|b| b.path == a.path && b.tracked);
        changed.push(Change {
            path: a.path.clone(),
            tracked,
            what,
        });
    }
    changed.sort_by(|x, y| x.path.cmp(&y.path));
    changed.dedup_by(|x, y| x.path == y.path);
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(path: &str, tracked: bool, fingerprint: Option<u64>) -> Seen {
        Seen {
            path: path.into(),
            tracked,
            fingerprint,
        }
    }

    #[test]
    fn a_tracked_file_changed_voids_the_verdict_and_every_change_is_named() {
        let before = [
            seen("dirty.rs", true, Some(1)),
            seen("same.rs", true, Some(2)),
            seen("old.log", false, Some(3)),
        ];
        let after = [
            seen("dirty.rs", true, Some(9)),
            seen("same.rs", true, Some(2)),
            seen("old.log", false, None),
            seen("clean.rs", true, Some(4)),
            seen("gone.rs", true, None),
            seen("new.log", false, Some(5)),
        ];
        let r = Report::of(&before, &after);
        assert!(r.voided);
        assert_eq!(
            r.files(),
            "clean.rs (tracked, modified), dirty.rs (tracked, modified), gone.rs (tracked, deleted), \
             new.log (untracked, added), old.log (untracked, deleted)"
        );
        assert!(
            r.header()[0].contains("voids this review"),
            "{:?}",
            r.header()
        );
    }

    #[test]
    fn untracked_outputs_alone_are_reported_and_the_verdict_stands() {
        let r = Report::of(&[], &[seen("target/out.txt", false, Some(1))]);
        assert!(!r.voided && r.says_something());
        assert!(
            r.header()[0].contains("the verdict stands"),
            "{:?}",
            r.header()
        );
        let quiet = Report::of(&[seen("a", true, Some(1))], &[seen("a", true, Some(1))]);
        assert!(!quiet.says_something() && !quiet.voided);
    }

    #[test]
    fn a_long_list_names_the_first_files_and_counts_the_rest() {
        let after: Vec<Seen> = (0..25)
            .map(|i| seen(&format!("f{i:02}"), false, Some(1)))
            .collect();
        let r = Report::of(&[], &after);
        assert!(r.files().ends_with(", and 15 more"), "{}", r.files());
        assert_eq!(r.changed.len(), 25);
    }

    fn git(branch: &str, commit: &str, staged: &[(&str, u64)]) -> Git {
        Git {
            head: Head {
                branch: Some(format!("refs/heads/{branch}")),
                commit: Some(commit.into()),
            },
            staged: staged.iter().map(|(p, f)| (p.to_string(), *f)).collect(),
        }
    }

    #[test]
    fn a_moved_head_voids_the_verdict_and_names_both_commits() {
        let r = Report::of(&[], &[]).with_git(
            &git("main", "1a2b3c4d5e6f", &[]),
            &git("main", "9f8e7d6c5b4a", &[]),
        );
        assert!(r.voided && r.found_something());
        assert_eq!(
            r.what(),
            "HEAD moved from main at 1a2b3c4d to main at 9f8e7d6c"
        );
        assert!(
            r.void_reason()
                .contains("its verdict does not count: HEAD moved")
        );
    }

    #[test]
    fn a_changed_index_entry_voids_the_verdict_and_an_unchanged_one_does_not() {
        let before = git("main", "c1", &[("kept.rs", 1), ("unstaged.rs", 2)]);
        let after = git("main", "c1", &[("kept.rs", 1), ("new.txt", 3)]);
        let r = Report::of(&[], &[]).with_git(&before, &after);
        assert!(r.voided);
        assert_eq!(r.staged, ["new.txt", "unstaged.rs"]);
        assert_eq!(r.what(), "the index changed for new.txt, unstaged.rs");
        let same = Report::of(&[], &[]).with_git(&before, &before);
        assert!(!same.voided && !same.found_something());
    }

    #[test]
    fn a_reviewer_without_its_sandbox_is_said_in_the_header_and_the_verdict_stands() {
        let r = Report {
            unsandboxed: Some("bubblewrap (bwrap) not installed".into()),
            ..Report::default()
        };
        assert!(r.says_something() && !r.found_something() && !r.voided);
        assert_eq!(
            r.header(),
            [
                "Sandbox: the reviewer's shell commands ran without Claude Code's sandbox \
              (bubblewrap (bwrap) not installed); the check of the project's files, HEAD and \
              index before and after still applied."
            ]
        );
    }

    #[test]
    fn the_work_is_the_whole_repository_but_taskies_directories_and_the_plans_own_files_are_in_it()
    {
        let s = Scope::new("app/", "p", "plan-review-1.md");
        for work in [
            "src/lib.rs",
            "app/main.rs",
            "app/.taskie/plans/p/plan.md",
            "app/.taskie/plans/p/task-1.md",
            "app/.taskie/plans/p/plan-post-review-1.md",
        ] {
            assert!(s.holds(work), "{work}");
        }
        for taskies in [
            ".taskie/plans/p/plan.md",
            "app/.taskie/plans/p/plan-review-1.md",
            "app/.taskie/plans/p/state.json",
            "app/.taskie/plans/p/findings.json",
            "app/.taskie/plans/p/.taskie-tmp-1",
            "app/.taskie/plans/p/sub/x.md",
            "app/.taskie/plans/q/plan.md",
            "app/.taskie/logs/events.jsonl",
            "other/.taskie/plans/p/state.json",
            ".taskie",
        ] {
            assert!(!s.holds(taskies), "{taskies}");
        }
        assert!(Scope::new("", "p", "r.md").holds(".taskie/plans/p/plan.md"));
    }

    #[test]
    fn the_event_holds_only_what_was_found() {
        let r = Report::skipped("not a git repository");
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"skipped":"not a git repository"}"#
        );
    }
}
