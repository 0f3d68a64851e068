//! The `git` program, for `taskie run` (SPEC §23) and the hook's commit before a run
//! session's review: every git operation Taskie performs goes through here, started
//! without a shell, with the directory it acts on.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};

/// A git command that failed: what ran, and git's own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitError(pub String);

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GitError {}

pub type Result<T> = std::result::Result<T, GitError>;

/// The outcome of a merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merge {
    /// Merged: the merge commit is HEAD.
    Merged,
    /// The paths git could not merge; the merge was aborted.
    Conflict(Vec<String>),
}

/// One ref update of a push that happens only if the remote's ref holds what is expected
/// (`--force-with-lease=<name>:<expect>`): a compare-and-swap on the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease<'a> {
    /// The ref on the remote.
    pub name: &'a str,
    /// What it should point at afterwards; `None` deletes it.
    pub new: Option<&'a str>,
    /// What it must point at now; `None`: it must not exist.
    pub expect: Option<&'a str>,
}

/// What the remote did with a leased push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// Every update happened.
    Accepted,
    /// None happened: a ref no longer held what was expected (git's words for the first).
    Rejected(String),
}

/// Why a push's refs were refused, from its `--porcelain` report.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    /// A ref no longer held what the lease expected: another push came first.
    Race(String),
    /// Anything else (a hook, a host's rule, a permission): not a race to lose.
    Other(String),
}

/// The refusal in a `git push --porcelain` report (`<flag>\t<from>:<to>\t<summary>` per
/// ref, `!` for refused), if any. A lease that failed on the client's check reads
/// `[rejected] (stale info)`; one that passed it but failed on the server's, because the
/// ref moved in between, reads `(atomic transaction failed)` (or, without `--atomic`,
/// `(failed to update ref)`). The other refs of an atomic push read `(atomic push failed)`
/// or `(atomic push failure)`, and say nothing of the cause.
fn refusal(porcelain: &str) -> Option<Refusal> {
    const RACE: [&str; 3] = [
        "(stale info)",
        "(atomic transaction failed)",
        "(failed to update ref)",
    ];
    const SIBLING: [&str; 2] = ["(atomic push failed)", "(atomic push failure)"];
    let refused: Vec<String> = porcelain
        .lines()
        .filter_map(|l| l.strip_prefix("!\t"))
        .map(|l| l.replace('\t', " "))
        .collect();
    let first = refused.first()?.clone();
    let cause = refused
        .iter()
        .find(|l| !SIBLING.iter().any(|s| l.ends_with(s)))
        .cloned()
        .unwrap_or(first);
    Some(if RACE.iter().any(|r| cause.ends_with(r)) {
        Refusal::Race(cause)
    } else {
        Refusal::Other(cause)
    })
}

/// Git acting in one directory (a checkout or a worktree).
#[derive(Debug, Clone)]
pub struct Git {
    pub dir: PathBuf,
    /// Whether the repository names who commits (`user.email`), asked once: the
    /// worktrees of one repository share its configuration, and so share this answer.
    identity: Arc<OnceLock<bool>>,
}

/// Who Taskie's own commits are by when the repository names no one: a commit must not
/// fail for want of `user.name` on a fresh machine.
const FALLBACK_IDENTITY: [&str; 4] = [
    "-c",
    "user.name=taskie",
    "-c",
    "user.email=taskie@localhost",
];

impl Git {
    pub fn new(dir: impl Into<PathBuf>) -> Git {
        Git {
            dir: dir.into(),
            identity: Arc::default(),
        }
    }

    /// Git in another worktree of the same repository (what it knows of the repository's
    /// configuration is shared).
    pub fn at(&self, dir: impl Into<PathBuf>) -> Git {
        Git {
            dir: dir.into(),
            identity: Arc::clone(&self.identity),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("git");
        c.arg("-C").arg(&self.dir);
        let commits = match args {
            ["merge", "--abort", ..] => false,
            [first, ..] => matches!(*first, "commit" | "commit-tree" | "merge"),
            [] => false,
        };
        if commits && !self.has_identity() {
            c.args(FALLBACK_IDENTITY);
        }
        if args.first() == Some(&"status") {
            // A status only reads: it must not take the index's lock (the user may be
            // running git there) nor rewrite the index to refresh it.
            c.env("GIT_OPTIONAL_LOCKS", "0");
        }
        c.args(args)
            .stdin(Stdio::null())
            // Nothing interactive, ever: no editor, no pager, no credential prompt.
            .env("GIT_EDITOR", "true")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat");
        c
    }

    fn has_identity(&self) -> bool {
        *self.identity.get_or_init(|| {
            let mut c = Command::new("git");
            c.arg("-C")
                .arg(&self.dir)
                .args(["config", "user.email"])
                .stdin(Stdio::null());
            c.output().is_ok_and(|o| o.status.success())
        })
    }

    /// Runs git; its stdout, trimmed, or the failure in git's words.
    pub fn run(&self, args: &[&str]) -> Result<String> {
        self.stdout(args).map(|s| s.trim().to_string())
    }

    /// Runs git; its stdout as it is, or the failure in git's words.
    fn stdout(&self, args: &[&str]) -> Result<String> {
        let out = self.command(args).output().map_err(|e| {
            GitError(format!(
                "cannot run git {} in {}: {e}",
                args.join(" "),
                self.dir.display()
            ))
        })?;
        if out.status.success() {
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let said = stderr
            .lines()
            .chain(stdout.lines())
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        Err(GitError(format!(
            "git {} failed in {}: {}",
            args.join(" "),
            self.dir.display(),
            said.trim()
        )))
    }

    /// Whether git succeeds (for questions git answers with its exit status).
    pub fn succeeds(&self, args: &[&str]) -> bool {
        self.command(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// The commit a revision names.
    pub fn commit_of(&self, rev: &str) -> Result<String> {
        self.run(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ])
    }

    /// The commit a ref points at, if it exists.
    pub fn ref_target(&self, name: &str) -> Option<String> {
        self.commit_of(name).ok().filter(|s| !s.is_empty())
    }

    pub fn is_ancestor(&self, ancestor: &str, of: &str) -> bool {
        self.succeeds(&["merge-base", "--is-ancestor", ancestor, of])
    }

    /// The top of the work tree holding `dir`, and the repository's common git directory
    /// (shared by all its worktrees), both absolute.
    pub fn top_and_common_dir(&self) -> Result<(PathBuf, PathBuf)> {
        let out = self.run(&[
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--git-common-dir",
        ])?;
        match out.split_once('\n') {
            Some((top, common)) => Ok((PathBuf::from(top), PathBuf::from(common))),
            None => Err(GitError(format!(
                "git rev-parse --show-toplevel --git-common-dir in {} printed one line: {out}",
                self.dir.display()
            ))),
        }
    }

    /// The branch checked out, `None` when HEAD is detached.
    pub fn current_branch(&self) -> Option<String> {
        self.run(&["symbolic-ref", "--quiet", "--short", "HEAD"])
            .ok()
            .filter(|b| !b.is_empty())
    }

    /// What `git status` reports, one line per path (tracked changes and untracked files).
    pub fn status(&self) -> Result<Vec<String>> {
        let out = self.run(&["status", "--porcelain=v1", "--untracked-files=all"])?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// A worktree at `path` for `branch`: the branch as it is when `exists`, else made at
    /// `commit`.
    pub fn add_worktree(
        &self,
        path: &Path,
        branch: &str,
        exists: bool,
        commit: &str,
    ) -> Result<()> {
        let p = path.to_string_lossy();
        if exists {
            self.run(&["worktree", "add", &p, branch]).map(drop)
        } else {
            self.run(&["worktree", "add", "-b", branch, &p, commit])
                .map(drop)
        }
    }

    /// A worktree at `path` with HEAD detached at `commit`.
    pub fn add_detached_worktree(&self, path: &Path, commit: &str) -> Result<()> {
        self.run(&[
            "worktree",
            "add",
            "--detach",
            &path.to_string_lossy(),
            commit,
        ])
        .map(drop)
    }

    /// The paths of the registered worktrees.
    pub fn worktrees(&self) -> Vec<PathBuf> {
        self.run(&["worktree", "list", "--porcelain"])
            .map(|out| {
                out.lines()
                    .filter_map(|l| l.strip_prefix("worktree "))
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Removes a worktree (its directory and its registration, together); one that could
    /// not be removed whole is pruned, so no registration outlives its directory.
    pub fn remove_worktree(&self, path: &Path) -> Result<()> {
        let p = path.to_string_lossy();
        let removed = self.run(&["worktree", "remove", "--force", "--force", &p]);
        if removed.is_err() {
            self.prune_worktrees();
        }
        removed.map(drop)
    }

    /// Forgets the registered worktrees whose directories are gone.
    pub fn prune_worktrees(&self) {
        let _ = self.run(&["worktree", "prune"]);
    }

    /// Commits everything in the work tree but `exclude` (a top-level name, and all under
    /// it); HEAD afterwards, the new commit or the one it was when there was nothing to
    /// commit.
    pub fn commit_all(&self, message: &str, exclude: &str) -> Result<String> {
        // Patterns, not the name itself: git refuses (exit 1, after adding the rest) an
        // exclusion that names an ignored path verbatim, and a run session's git ignores
        // its `.taskie` link. `[c]` matches the name's last character and nothing else.
        let (stem, last) = exclude.split_at(exclude.len() - 1);
        let itself = format!(":(exclude,top,glob){stem}[{last}]");
        let within = format!("{itself}/**");
        self.run(&["add", "-A", "--", ".", &itself, &within])?;
        if !self.succeeds(&["diff", "--cached", "--quiet"]) {
            self.run(&["commit", "-q", "--no-verify", "-m", message])?;
        }
        self.commit_of("HEAD")
    }

    /// `merge --no-ff` of `commit` into the detached HEAD (the merge commit is then
    /// HEAD); a conflict is aborted.
    pub fn merge_no_ff(&self, commit: &str, message: &str) -> Result<Merge> {
        match self.run(&["merge", "--no-ff", "--no-verify", "-m", message, commit]) {
            Ok(_) => Ok(Merge::Merged),
            Err(e) => {
                let files = self.run(&["diff", "--name-only", "--diff-filter=U"])?;
                if files.is_empty() {
                    let _ = self.run(&["merge", "--abort"]);
                    return Err(e);
                }
                let files = files.lines().map(str::to_string).collect();
                self.run(&["merge", "--abort"])?;
                Ok(Merge::Conflict(files))
            }
        }
    }

    /// Puts the (Taskie-owned) worktree's detached HEAD, index and tracked files at
    /// `commit`, whatever they held: a forced checkout also ends a merge a crash left half
    /// done (its conflicts and its `MERGE_HEAD`).
    pub fn reset_to(&self, commit: &str) -> Result<()> {
        self.run(&["checkout", "-q", "--force", "--detach", commit])
            .map(drop)
    }

    /// Compare-and-swap of a ref: moves `name` to `new` only if it still points at `old`.
    pub fn update_ref(&self, name: &str, new: &str, old: &str) -> Result<()> {
        self.run(&["update-ref", "-m", "taskie run", name, new, old])
            .map(drop)
    }

    /// Pushes `leases` to `remote` all or none (`--atomic`), each a compare-and-swap. A
    /// refusal by the remote is `Rejected`; a push that could not run (no remote, no
    /// network, no rights) is an error.
    pub fn push_leased(&self, remote: &str, leases: &[Lease]) -> Result<Pushed> {
        let mut args = vec![
            "push".to_string(),
            "--porcelain".into(),
            "--atomic".into(),
            "--no-verify".into(),
        ];
        for l in leases {
            args.push(format!(
                "--force-with-lease={}:{}",
                l.name,
                l.expect.unwrap_or("")
            ));
        }
        args.push(remote.into());
        for l in leases {
            args.push(format!("{}:{}", l.new.unwrap_or(""), l.name));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.command(&args).output().map_err(|e| {
            GitError(format!(
                "cannot run git push in {}: {e}",
                self.dir.display()
            ))
        })?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        match refusal(&stdout) {
            Some(Refusal::Race(why)) => Ok(Pushed::Rejected(why)),
            Some(Refusal::Other(why)) => Err(GitError(format!(
                "git push to {remote} was refused in {}: {why}",
                self.dir.display()
            ))),
            None if out.status.success() => Ok(Pushed::Accepted),
            None => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let said = stderr.lines().find(|l| !l.trim().is_empty());
                Err(GitError(format!(
                    "git push to {remote} failed in {}: {}",
                    self.dir.display(),
                    said.unwrap_or("no message").trim()
                )))
            }
        }
    }

    /// Fetches `refspecs` from `remote`, dropping local refs the remote no longer has.
    pub fn fetch(&self, remote: &str, refspecs: &[&str]) -> Result<()> {
        let mut args = vec!["fetch", "--quiet", "--prune", "--no-tags", remote];
        args.extend_from_slice(refspecs);
        self.run(&args).map(drop)
    }

    /// A commit of the empty tree with `message` on `parents`, made without any work tree
    /// or ref: what a claim is.
    pub fn commit_empty(&self, message: &str, parents: &[&str]) -> Result<String> {
        // stdin is empty, so mktree writes the empty tree whatever the hash algorithm.
        let tree = self.run(&["mktree"])?;
        let mut args = vec!["commit-tree", &tree, "-m", message];
        for p in parents {
            args.extend_from_slice(&["-p", p]);
        }
        self.run(&args)
    }

    /// The refs `patterns` name (prefixes, or whole names), each with its commit and that
    /// commit's message.
    pub fn refs_with_messages(&self, patterns: &[&str]) -> Result<Vec<(String, String, String)>> {
        let mut args = vec![
            "for-each-ref",
            "--format=%(refname)%00%(objectname)%00%(contents)%00",
        ];
        args.extend_from_slice(patterns);
        let out = self.run(&args)?;
        let fields: Vec<&str> = out.split('\0').collect();
        Ok(fields
            .chunks_exact(3)
            .map(|f| {
                (
                    f[0].trim_start().to_string(),
                    f[1].to_string(),
                    f[2].to_string(),
                )
            })
            .collect())
    }

    /// The paths whose content differs between two commits (as they are, not quoted).
    pub fn changed(&self, from: &str, to: &str) -> Result<Vec<String>> {
        let out = self.stdout(&["diff", "--name-only", "--no-renames", "-z", from, to, "--"])?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// The tracked paths under `prefix`.
    pub fn tracked_under(&self, prefix: &str) -> Result<Vec<String>> {
        let out = self.run(&["ls-files", "--", prefix])?;
        Ok(out.lines().map(str::to_string).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(lines: &[&str]) -> String {
        let mut r = String::from("To file:///o.git\n");
        for l in lines {
            r.push_str(&format!("!\tabc:refs/taskie/p/{l}\n"));
        }
        r + "Done\n"
    }

    #[test]
    fn a_lease_that_failed_on_either_side_is_a_lost_race() {
        for lines in [
            &[
                "claims/t1\t[rejected] (stale info)",
                "done/t1\t[rejected] (atomic push failed)",
            ][..],
            &["claims/t1\t[remote rejected] (atomic transaction failed)"],
            &["claims/t1\t[remote rejected] (failed to update ref)"],
            &[
                "done/t1\t[rejected] (atomic push failed)",
                "claims/t1\t[rejected] (stale info)",
            ],
        ] {
            assert!(
                matches!(refusal(&report(lines)), Some(Refusal::Race(_))),
                "{lines:?}"
            );
        }
    }

    #[test]
    fn a_refusal_by_a_hook_or_a_rule_is_not_a_race_and_names_its_cause() {
        let r = report(&[
            "claims/t1\t[remote rejected] (atomic push failure)",
            "done/t1\t[remote rejected] (hook declined)",
        ]);
        assert_eq!(
            refusal(&r),
            Some(Refusal::Other(
                "abc:refs/taskie/p/done/t1 [remote rejected] (hook declined)".into()
            ))
        );
        let r = report(&["claims/t1\t[remote rejected] (pre-receive hook declined)"]);
        assert!(matches!(refusal(&r), Some(Refusal::Other(_))));
    }

    #[test]
    fn an_accepted_push_has_no_refusal() {
        let r = "To file:///o.git\n*\tabc:refs/taskie/p/claims/t1\t[new reference]\nDone\n";
        assert_eq!(refusal(r), None);
    }
}
