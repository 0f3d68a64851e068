//! The git side of "the reviewer cannot change the work it reviews" (SPEC §8): before a
//! review, the repository's uncommitted files (tracked and changed, or untracked and not
//! ignored) as `git status` lists them, with their contents' fingerprints, and HEAD and the
//! index entries that differ from HEAD's, from the same `git status`; after it, the same
//! again, compared by `model::worktree`, and the changes' diff saved in the logs.
//! Taskie's own directories are left out, all but the reviewed plan's files
//! ([`Scope`]). Nothing is reverted: another session may be working in the same checkout.

use crate::model::worktree::{Git, Report, Scope, Seen, What};
use crate::reviewer::process::{self, Ending};
use crate::store::atomic;
use crate::store::project::Project;
use std::collections::HashMap;
use std::ffi::OsString;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A git call that takes longer is given up on (the check is then skipped): the hook never
/// waits without end, whatever the file system.
const GIT_TIMEOUT: Duration = Duration::from_secs(60);
/// The most bytes of `git status` read: far more than a repository of 100,000 changed files
/// lists; past it the check is skipped rather than half made.
const STATUS_LIMIT: usize = 64 * 1024 * 1024;
/// A file kept in memory before the review, for its diff, when at most this long…
const KEEP_FILE: u64 = 256 * 1024;
/// …and while the kept files together stay under this.
const KEEP_ALL: usize = 8 * 1024 * 1024;
/// The most bytes of diff saved.
const DIFF_LIMIT: usize = 4 * 1024 * 1024;

/// The project's files before a review, or why they could not be noted.
pub enum Before {
    Noted(Noted),
    Skipped(String),
}

pub struct Noted {
    /// The repository's top directory: `git status` paths are relative to it.
    top: PathBuf,
    scope: Scope,
    seen: Vec<Seen>,
    git: Git,
    /// The contents of short files, for the diff of a change to them.
    kept: HashMap<String, Vec<u8>>,
}

/// Notes the repository's uncommitted files before review `review_file` of `plan`.
pub fn note(project: &Project, plan: &str, review_file: &str) -> Before {
    let (top, scope) = match git(
        &project.root,
        &["rev-parse", "--show-toplevel", "--show-prefix"],
    ) {
        Ok(out) => {
            let out = String::from_utf8_lossy(&out);
            let mut lines = out.split('\n');
            let top = PathBuf::from(lines.next().unwrap_or_default());
            (
                top,
                Scope::new(lines.next().unwrap_or_default(), plan, review_file),
            )
        }
        Err(why) => return Before::Skipped(why),
    };
    let (listed, git) = match status(&project.root, &scope) {
        Ok(listed) => listed,
        Err(why) => return Before::Skipped(why),
    };
    let mut kept = HashMap::new();
    let mut kept_bytes = 0;
    let seen = listed
        .into_iter()
        .map(|(path, tracked)| {
            let (fingerprint, bytes) = read(&top.join(&path), KEEP_ALL.saturating_sub(kept_bytes));
            if let Some(b) = bytes {
                kept_bytes += b.len();
                kept.insert(path.clone(), b);
            }
            Seen {
                path,
                tracked,
                fingerprint,
            }
        })
        .collect();
    Before::Noted(Noted {
        top,
        scope,
        seen,
        git,
        kept,
    })
}

/// Compares the project's files with `before` and saves the diff of what changed as
/// `diff` (under `.taskie/logs/`).
pub fn compare(project: &Project, before: Before, diff: &Path) -> Report {
    let before = match before {
        Before::Skipped(why) => return Report::skipped(why),
        Before::Noted(n) => n,
    };
    let (listed, git) = match status(&project.root, &before.scope) {
        Ok(listed) => listed,
        Err(why) => return Report::skipped(why),
    };
    let mut after: Vec<Seen> = listed
        .into_iter()
        .map(|(path, tracked)| Seen {
            fingerprint: read(&before.top.join(&path), 0).0,
            path,
            tracked,
        })
        .collect();
    // A file listed before but not now: committed content again, deleted, or ignored.
    for b in &before.seen {
        if !after.iter().any(|a| a.path == b.path) {
            after.push(Seen {
                path: b.path.clone(),
                tracked: b.tracked,
                fingerprint: read(&before.top.join(&b.path), 0).0,
            });
        }
    }
    let mut report = Report::of(&before.seen, &after).with_git(&before.git, &git);
    if report.changed.is_empty() {
        return report;
    }
    let text = diff_text(&before, &report);
    match atomic::write_unsynced(diff, text.as_bytes()) {
        Ok(()) => report.diff = Some(project.relative(diff)),
        Err(e) => eprintln!("taskie-hook: could not save {}: {e}", diff.display()),
    }
    report
}

/// The diff of every change: git's for a tracked file that was clean before the review
/// (its content then was the index's), a line diff of the kept content for the others.
fn diff_text(before: &Noted, report: &Report) -> String {
    let mut text = String::new();
    let from_git: Vec<&str> = report
        .changed
        .iter()
        .filter(|c| c.tracked && !before.seen.iter().any(|s| s.path == c.path))
        .map(|c| c.path.as_str())
        .collect();
    if !from_git.is_empty() {
        // Literal: a file named `:!x` or `*.rs` is that file, not a pattern.
        let mut args = vec![
            "--literal-pathspecs",
            "diff",
            "--no-ext-diff",
            "--no-color",
            "--",
        ];
        args.extend(&from_git);
        match git(&before.top, &args) {
            Ok(out) => text.push_str(&String::from_utf8_lossy(&out)),
            Err(why) => text.push_str(&format!("# git diff failed: {why}\n")),
        }
    }
    for c in &report.changed {
        if from_git.contains(&c.path.as_str()) {
            continue;
        }
        let old = match c.what {
            What::Added => Some(Vec::new()),
            _ => before.kept.get(&c.path).cloned(),
        };
        let new = match c.what {
            What::Deleted => Some(Vec::new()),
            _ => std::fs::read(before.top.join(&c.path))
                .ok()
                .filter(|b| b.len() as u64 <= KEEP_FILE),
        };
        match (old.map(String::from_utf8), new.map(String::from_utf8)) {
            (Some(Ok(old)), Some(Ok(new))) => {
                let d = similar::TextDiff::from_lines(&old, &new);
                text.push_str(
                    &d.unified_diff()
                        .header(&format!("a/{}", c.path), &format!("b/{}", c.path))
                        .to_string(),
                );
            }
            _ => text.push_str(&format!(
                "# {}: changed (binary or longer than {} KiB: no diff kept)\n",
                c.path,
                KEEP_FILE / 1024
            )),
        }
        if text.len() > DIFF_LIMIT {
            let mut end = DIFF_LIMIT;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("\n# … cut here: the diff is longer than 4 MiB\n");
            break;
        }
    }
    text
}

/// The uncommitted files of the repository `dir` is in that `scope` holds, as (path from
/// the top, tracked), and git's HEAD and staged entries there. One `git status` of the
/// whole repository (`:/`), wherever the project lies in it; optional locks off: the check
/// never takes the index lock from the agent; ahead/behind counts off: they walk history
/// and say nothing here.
fn status(dir: &Path, scope: &Scope) -> Result<(Vec<(String, bool)>, Git), String> {
    let out = git(
        dir,
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "--no-ahead-behind",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=all",
            "--",
            ":/",
        ],
    )?;
    let (mut listed, mut git) = parse_status(&out);
    listed.retain(|(path, _)| scope.holds(path));
    git.staged.retain(|(path, _)| scope.holds(path));
    Ok((listed, git))
}

/// `git status --porcelain=v2 --branch -z --no-renames` output. Headers:
/// `# branch.oid <commit>|(initial)`, `# branch.head <branch>|(detached)`. Entries:
/// `1 XY sub mH mI mW hH hI path` (changed), `u XY sub m1 m2 m3 mW h1 h2 h3 path`
/// (unmerged), `? path` (untracked). An entry whose X is `.` has the index as HEAD has it;
/// any other X is a staged change, fingerprinted by the entry's index side.
fn parse_status(out: &[u8]) -> (Vec<(String, bool)>, Git) {
    let mut listed = Vec::new();
    let mut git = Git::default();
    for entry in out.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let text = String::from_utf8_lossy(entry);
        if let Some(header) = text.strip_prefix("# ") {
            match header.split_once(' ') {
                Some(("branch.oid", c)) if c != "(initial)" => git.head.commit = Some(c.into()),
                Some(("branch.head", b)) if b != "(detached)" => {
                    git.head.branch = Some(format!("refs/heads/{b}"))
                }
                _ => {}
            }
            continue;
        }
        let (fields, index_side): (usize, std::ops::Range<usize>) = match entry[0] {
            b'1' => (9, 4..8),
            b'u' => (11, 3..10),
            b'?' => {
                listed.push((text[2..].to_string(), false));
                continue;
            }
            _ => continue,
        };
        let parts: Vec<&str> = text.splitn(fields, ' ').collect();
        let [_, xy, .., path] = parts.as_slice() else {
            continue;
        };
        if parts.len() != fields {
            continue;
        }
        listed.push((path.to_string(), true));
        if !xy.starts_with('.') {
            let mut h = std::hash::DefaultHasher::new();
            for p in &parts[index_side] {
                h.write(p.as_bytes());
            }
            h.write(xy.as_bytes());
            git.staged.push((path.to_string(), h.finish()));
        }
    }
    git.staged.sort();
    (listed, git)
}

/// A fingerprint of the file at `path` (its bytes; a link's target), `None` when there is
/// none, and its bytes when it is a regular file of at most `KEEP_FILE` and `room` bytes.
fn read(path: &Path, room: usize) -> (Option<u64>, Option<Vec<u8>>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return (None, None);
    };
    let mut h = std::hash::DefaultHasher::new();
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).unwrap_or_default();
        h.write(target.as_os_str().as_encoded_bytes());
        return (Some(h.finish() ^ 1), None);
    }
    if !meta.is_file() {
        return (Some(0), None);
    }
    // Opened through the one opener of regular files: a FIFO left in the project cannot
    // hold the hook. Read in chunks: an output of gigabytes is hashed, not held.
    let Ok(mut file) = crate::store::fs::open_regular(path, crate::store::fs::Open::Read) else {
        return (Some(meta.len()), None);
    };
    let keep = meta.len() <= KEEP_FILE && meta.len() as usize <= room;
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match std::io::Read::read(&mut file, &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                h.write(&buf[..n]);
                if keep && kept.len() + n <= room {
                    kept.extend_from_slice(&buf[..n]);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return (Some(meta.len()), None),
        }
    }
    (Some(h.finish()), keep.then_some(kept))
}

/// Runs git in `dir` with `args`: its stdout, or why it could not tell (no git program,
/// not a repository, a timeout), in words for the event.
fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let spec = process::Spec {
        program: "git".into(),
        args: args.iter().map(OsString::from).collect(),
        cwd: dir.to_path_buf(),
        env: vec![("GIT_OPTIONAL_LOCKS".into(), "0".into())],
        env_remove: Vec::new(),
        stdin: Vec::new(),
        label: "git",
        timeout: GIT_TIMEOUT,
        term_grace: process::TERM_GRACE,
        stdout_limit: STATUS_LIMIT,
        stderr_limit: 64 * 1024,
        guardian: None,
        sweep: None,
    };
    let out = process::run(&spec).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "no git program".to_string(),
        _ => format!("could not run git: {e}"),
    })?;
    match out.ending {
        Ending::Exited(0) if !out.stdout_truncated => Ok(out.stdout),
        Ending::Exited(0) => Err("git listed more files than the check reads".into()),
        Ending::Exited(_) => {
            let said = String::from_utf8_lossy(&out.stderr);
            let line = said.lines().next().unwrap_or("").trim();
            if line.contains("not a git repository") {
                Err("not a git repository".into())
            } else {
                Err(format!("git {} failed: {line}", command(args)))
            }
        }
        Ending::Signaled(s) => Err(format!("git {} was killed by signal {s}", command(args))),
        Ending::TimedOut => Err(format!(
            "git {} took longer than {} s",
            command(args),
            GIT_TIMEOUT.as_secs()
        )),
    }
}

/// The git command of `args`, past its options.
fn command<'a>(args: &[&'a str]) -> &'a str {
    args.iter()
        .find(|a| !a.starts_with('-'))
        .copied()
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::worktree::Head;

    #[test]
    fn status_entries_are_read_with_their_tracking_head_and_staged_side() {
        let out = b"# branch.oid 1a2b3c\0# branch.head main\0\
            1 .M N... 100644 100644 100644 aaa aaa app/a b.rs\0? out/log.txt\0\
            1 A. N... 000000 100644 100644 000 bbb new.rs\0\
            1 .D N... 100644 100644 000000 ccc ccc gone.rs\0";
        let (listed, git) = parse_status(out);
        assert_eq!(
            listed,
            [
                ("app/a b.rs".to_string(), true),
                ("out/log.txt".to_string(), false),
                ("new.rs".to_string(), true),
                ("gone.rs".to_string(), true)
            ]
        );
        assert_eq!(
            git.head,
            Head {
                branch: Some("refs/heads/main".into()),
                commit: Some("1a2b3c".into())
            }
        );
        assert_eq!(
            git.staged
                .iter()
                .map(|(p, _)| p.as_str())
                .collect::<Vec<_>>(),
            ["new.rs"],
            "only an entry whose index side differs from HEAD is staged"
        );
    }

    #[test]
    fn a_repository_without_commits_on_a_detached_head_has_neither() {
        let (_, git) = parse_status(b"# branch.oid (initial)\0# branch.head (detached)\0");
        assert_eq!(git.head, Head::default());
    }
}
