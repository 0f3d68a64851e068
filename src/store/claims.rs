//! Claims past one machine through git refs alone (docs/distributed.md): each worker
//! has its own clone, and every decision between workers is a compare-and-swap that the
//! shared remote makes on one ref or, all or none, on several. What to push and when is
//! `model/claim.rs`; this file reads the plan's refs and pushes them.

use std::path::PathBuf;

use crate::model::claim::{
    Board, Claim, claim_ref, coordinator_ref, done_ref, integration_ref, merged_ref, plan_prefix,
};
use crate::store::git::{Git, Lease, Pushed};

/// Why a claim operation could not be carried out at all (as opposed to being lost): a
/// git failure, in git's words, as every other git operation reports it.
pub use crate::store::git::{GitError as Error, Result};

/// What the remote decided about a push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Our update happened; the claim ref (or lease ref) now points at this commit of ours.
    Won(String),
    /// Someone else's update came first; nothing of ours happened (git's words).
    Lost(String),
}

impl Outcome {
    /// The commit we now hold, if we won.
    pub fn won(&self) -> Option<&str> {
        match self {
            Outcome::Won(c) => Some(c),
            Outcome::Lost(_) => None,
        }
    }
}

/// 128 random bits from the operating system, in hex: a claim commit's nonce.
pub fn nonce() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| Error(format!("no randomness for a nonce: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// One clone of the repository and the name of the remote all workers share.
#[derive(Debug, Clone)]
pub struct Remote {
    git: Git,
    name: String,
}

impl Remote {
    /// `clone` is a checkout (or bare repository) whose remote `name` every worker pushes to.
    pub fn new(clone: impl Into<PathBuf>, name: &str) -> Remote {
        Remote {
            git: Git::new(clone),
            name: name.to_string(),
        }
    }

    /// Where this clone keeps its copy of a plan's refs.
    fn seen_prefix(&self, plan: &str) -> String {
        format!("refs/taskie/remotes/{}/{plan}/", self.name)
    }

    /// Where this clone keeps its copy of the integration branch.
    fn seen_integration(&self, plan: &str) -> String {
        format!("refs/remotes/{}/taskie/{plan}/integration", self.name)
    }

    /// Fetches the plan's refs and its integration branch (git fetches no custom ref
    /// unless asked) and reads them: one consistent look at the remote.
    pub fn board(&self, plan: &str) -> Result<Board> {
        let seen = self.seen_prefix(plan);
        let refs = format!("+{}*:{seen}*", plan_prefix(plan));
        let integration = format!("+{}:{}", integration_ref(plan), self.seen_integration(plan));
        self.git.fetch(&self.name, &[&refs, &integration])?;
        let seen_tip = self.seen_integration(plan);
        let listed = self.git.refs_with_messages(&[&seen, &seen_tip])?;
        let tip = listed
            .iter()
            .find(|(name, _, _)| *name == seen_tip)
            .map(|(_, commit, _)| commit.clone());
        let refs = listed.iter().filter_map(|(name, commit, message)| {
            Some((name.strip_prefix(&seen)?, commit.as_str(), message.as_str()))
        });
        Ok(Board::read(refs, tip))
    }

    fn write(&self, claim: &Claim, parent: Option<&str>) -> Result<String> {
        let parents: Vec<&str> = parent.into_iter().collect();
        self.git.commit_empty(&claim.message(), &parents)
    }

    /// Pushes `leases` all or none; `Won(ours)` when they happened.
    fn push(&self, leases: &[Lease], ours: String) -> Result<Outcome> {
        Ok(match self.git.push_leased(&self.name, leases)? {
            Pushed::Accepted => Outcome::Won(ours),
            Pushed::Rejected(why) => Outcome::Lost(why),
        })
    }

    /// Creates `refname` at a new commit of `claim`, only if the ref does not exist yet.
    pub fn claim(&self, refname: &str, claim: &Claim) -> Result<Outcome> {
        let commit = self.write(claim, None)?;
        let lease = Lease {
            name: refname,
            new: Some(&commit),
            expect: None,
        };
        self.push(&[lease], commit.clone())
    }

    /// Moves `refname` from `old` to a new commit of `claim` on top of it, only if it still
    /// points at `old`: a renewal when `old` is our own claim, a takeover when it is an
    /// expired one of someone else's (the commit chain keeps who held it before).
    pub fn replace(&self, refname: &str, old: &str, claim: &Claim) -> Result<Outcome> {
        let commit = self.write(claim, Some(old))?;
        let lease = Lease {
            name: refname,
            new: Some(&commit),
            expect: Some(old),
        };
        self.push(&[lease], commit.clone())
    }

    /// Deletes `refname` only if it still points at our claim `own`: the task is free again.
    pub fn release(&self, refname: &str, own: &str) -> Result<Outcome> {
        let lease = Lease {
            name: refname,
            new: None,
            expect: Some(own),
        };
        self.push(&[lease], own.to_string())
    }

    /// Records that `task` ended at `done.commit`: its claim moves from our `own` claim to
    /// the final `done` one and its done ref is created, both or neither. A worker whose
    /// claim was taken over fails here, so a task is done once.
    pub fn finish(&self, plan: &str, task: &str, own: &str, done: &Claim) -> Result<Outcome> {
        let Some(result) = done.commit.as_deref() else {
            return Err(Error(format!("finishing {task} needs its commit")));
        };
        let commit = self.write(done, Some(own))?;
        let claim = claim_ref(plan, task);
        let done_name = done_ref(plan, task);
        let leases = [
            Lease {
                name: &claim,
                new: Some(&commit),
                expect: Some(own),
            },
            Lease {
                name: &done_name,
                new: Some(result),
                expect: None,
            },
        ];
        self.push(&leases, commit.clone())
    }

    /// Lands one merge of the coordinator: the integration branch moves from `old_tip` to
    /// `new_tip`, the task's merged ref is created, and the coordinator's lease moves from
    /// our `own` lease to `renewed`, all or none. A coordinator whose lease was taken over,
    /// or a task merged already, fails here: a task is merged once.
    pub fn land(
        &self,
        plan: &str,
        task: &str,
        own: &str,
        renewed: &Claim,
        old_tip: &str,
        new_tip: &str,
    ) -> Result<Outcome> {
        let commit = self.write(renewed, Some(own))?;
        let (branch, merged, lease) = (
            integration_ref(plan),
            merged_ref(plan, task),
            coordinator_ref(plan),
        );
        let leases = [
            Lease {
                name: &branch,
                new: Some(new_tip),
                expect: Some(old_tip),
            },
            Lease {
                name: &merged,
                new: Some(new_tip),
                expect: None,
            },
            Lease {
                name: &lease,
                new: Some(&commit),
                expect: Some(own),
            },
        ];
        self.push(&leases, commit.clone())
    }

    /// Deletes every ref of the plan under `refs/taskie/<plan>/` (claims, done and merged
    /// refs, the lease), all or none, each only if it is still at the commit just read:
    /// what is left once a plan has landed. Branches stay. `false` when a ref moved
    /// meanwhile (the plan is still being worked on): nothing was deleted.
    pub fn clean(&self, plan: &str) -> Result<bool> {
        self.board(plan)?;
        let seen = self.seen_prefix(plan);
        let listed = self.git.refs_with_messages(&[&seen])?;
        let names: Vec<(String, &str)> = listed
            .iter()
            .filter_map(|(name, commit, _)| {
                let rel = name.strip_prefix(&seen)?;
                Some((format!("{}{rel}", plan_prefix(plan)), commit.as_str()))
            })
            .collect();
        if names.is_empty() {
            return Ok(true);
        }
        let leases: Vec<Lease> = names
            .iter()
            .map(|(name, commit)| Lease {
                name,
                new: None,
                expect: Some(commit),
            })
            .collect();
        Ok(self.push(&leases, String::new())?.won().is_some())
    }
}
