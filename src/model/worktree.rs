//! Whether a reviewer changed the work it reviewed (SPEC §8): the project's files as git
//! listed them before and after a review, compared, and what the comparison means for
//! the verdict. Pure: `reviewer/worktree_check.rs` asks git and reads the files.

use serde::Serialize;

/// One file as `git status` listed it around a review (or, after the review, a file it
/// listed before): its path from the repository's top, whether git tracks it, and a
/// fingerprint of its content (`None`: there is no such file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub path: String,
    pub tracked: bool,
    pub fingerprint: Option<u64>,
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

    /// Worth telling: something changed, or the check was skipped.
    pub fn says_something(&self) -> bool {
        !self.changed.is_empty() || self.skipped.is_some()
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

    /// Why the verdict does not count, for the failure reason.
    pub fn void_reason(&self) -> String {
        format!(
            "changed files git tracks while it reviewed them, so its verdict does not count: {}",
            self.files()
        )
    }

    /// The review file's header line, without the leading `> `.
    pub fn header(&self) -> String {
        let diff = self
            .diff
            .as_deref()
            .map(|d| format!(" Diff: {d}."))
            .unwrap_or_default();
        let meaning = if self.voided {
            "A change to a tracked file voids this review: its verdict is not counted."
        } else {
            "Only untracked files changed (build or test outputs?): the verdict stands."
        };
        format!(
            "Changed while this review ran: {}. {meaning}{diff} Nothing was reverted.",
            self.files()
        )
    }
}

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
        assert!(r.header().contains("voids this review"), "{}", r.header());
    }

    #[test]
    fn untracked_outputs_alone_are_reported_and_the_verdict_stands() {
        let r = Report::of(&[], &[seen("target/out.txt", false, Some(1))]);
        assert!(!r.voided && r.says_something());
        assert!(r.header().contains("the verdict stands"), "{}", r.header());
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

    #[test]
    fn the_event_holds_only_what_was_found() {
        let r = Report::skipped("not a git repository");
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"skipped":"not a git repository"}"#
        );
    }
}
