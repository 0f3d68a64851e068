//! Claims past one machine (docs/distributed.md): a worker owns a task, and a coordinator
//! owns a plan's merge queue, by the ref that points at its claim commit on the shared
//! remote. This file holds the rules, with no I/O: the ref names, what a claim commit
//! says, when a claim has expired (judged with a skew allowance), and what a worker does
//! next about one ref. Pushing the refs is `store/claims.rs`.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use crate::model::run::schedule::Task;

/// The namespace every plan's coordination refs live in: `refs/taskie/<plan>/…`.
pub fn plan_prefix(plan: &str) -> String {
    format!("refs/taskie/{plan}/")
}

/// The claim of one task: `refs/taskie/<plan>/claims/<task>`.
pub fn claim_ref(plan: &str, task: &str) -> String {
    format!("{}claims/{task}", plan_prefix(plan))
}

/// The commit a task ended at, created once, together with its claim's last commit:
/// `refs/taskie/<plan>/done/<task>`.
pub fn done_ref(plan: &str, task: &str) -> String {
    format!("{}done/{task}", plan_prefix(plan))
}

/// The integration tip right after a task's merge, created once, together with the merge:
/// `refs/taskie/<plan>/merged/<task>`.
pub fn merged_ref(plan: &str, task: &str) -> String {
    format!("{}merged/{task}", plan_prefix(plan))
}

/// The merge queue's lease, claimed like a task: `refs/taskie/<plan>/coordinator`.
pub fn coordinator_ref(plan: &str) -> String {
    format!("{}coordinator", plan_prefix(plan))
}

/// The branch the coordinator merges into, as on one machine: `taskie/<plan>/integration`.
pub fn integration_ref(plan: &str) -> String {
    format!("refs/heads/taskie/{plan}/integration")
}

/// Where a claim is in its life. A `Done` claim is final: it never expires, so nobody
/// claims or takes over that task again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::Display, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum Stage {
    Held,
    Done,
}

/// What a claim commit says. The nonce makes every claim commit unique: two claims with
/// the same words, made in the same second, would otherwise be the same commit, and the
/// second push would "succeed" as already up to date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub stage: Stage,
    /// The machine that made it (a host name, a CI job): for people reading the ref.
    pub machine: String,
    /// The run on that machine.
    pub run: String,
    /// Random hex, fresh for every claim commit.
    pub nonce: String,
    /// Until when the holder may act without renewing, by the holder's clock.
    pub expires: Timestamp,
    /// A done claim: the commit the task ended at.
    pub commit: Option<String>,
}

/// The first line of every claim commit.
const HEADER: &str = "taskie claim";

/// Why a commit is not a claim Taskie can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimError(pub String);

impl std::fmt::Display for ClaimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "not a Taskie claim commit ({}); only `taskie run --worker` writes these refs",
            self.0
        )
    }
}

impl std::error::Error for ClaimError {}

impl Claim {
    /// A held claim by `machine`/`run` until `now + lease.length`, with its nonce.
    pub fn held(machine: &str, run: &str, nonce: String, now: Timestamp, lease: Lease) -> Claim {
        Claim {
            stage: Stage::Held,
            machine: machine.to_string(),
            run: run.to_string(),
            nonce,
            expires: now.saturating_add(lease.length).unwrap_or(Timestamp::MAX),
            commit: None,
        }
    }

    /// The final claim of a task that ended at `commit`, made by this claim's holder.
    pub fn done(&self, nonce: String, commit: &str) -> Claim {
        Claim {
            stage: Stage::Done,
            nonce,
            commit: Some(commit.to_string()),
            ..self.clone()
        }
    }

    /// The commit message: a header line, a blank line, one `key: value` line per field.
    pub fn message(&self) -> String {
        let mut m = format!(
            "{HEADER} {}\n\nmachine: {}\nrun: {}\nnonce: {}\nexpires: {}\n",
            self.stage, self.machine, self.run, self.nonce, self.expires
        );
        if let Some(c) = &self.commit {
            m.push_str(&format!("commit: {c}\n"));
        }
        m
    }

    /// Reads a claim commit's message back.
    pub fn parse(message: &str) -> Result<Claim, ClaimError> {
        let mut lines = message.lines();
        let stage = lines
            .next()
            .and_then(|l| l.strip_prefix(HEADER))
            .ok_or_else(|| ClaimError(format!("its first line is not `{HEADER} <stage>`")))?
            .trim();
        let stage: Stage = stage
            .parse()
            .map_err(|_| ClaimError(format!("unknown stage `{stage}`")))?;
        let field = |name: &str| -> Option<String> {
            message
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
                .map(|v| v.trim().to_string())
        };
        let need = |v: Option<String>, name: &str| {
            v.filter(|v| !v.is_empty())
                .ok_or_else(|| ClaimError(format!("no `{name}:` line")))
        };
        let machine = need(field("machine"), "machine")?;
        let run = need(field("run"), "run")?;
        let nonce = need(field("nonce"), "nonce")?;
        let expires = need(field("expires"), "expires")?;
        let expires = expires
            .parse::<Timestamp>()
            .map_err(|e| ClaimError(format!("`expires: {expires}` is not an instant: {e}")))?;
        let commit = field("commit");
        if stage == Stage::Done && commit.is_none() {
            return Err(ClaimError("a done claim without its `commit:` line".into()));
        }
        Ok(Claim {
            stage,
            machine,
            run,
            nonce,
            expires,
            commit,
        })
    }

    /// Whether another worker may take this claim over at `now` (its own clock): only a
    /// held claim, and only once `skew` has passed beyond its expiry, so that a holder
    /// whose clock is behind the taker's by less than `skew` has stopped first.
    pub fn expired(&self, now: Timestamp, lease: Lease) -> bool {
        self.stage == Stage::Held
            && self
                .expires
                .saturating_add(lease.skew)
                .is_ok_and(|limit| now >= limit)
    }

    /// Whether the holder should renew at `now`: half the lease or less is left.
    pub fn renewal_due(&self, now: Timestamp, lease: Lease) -> bool {
        self.stage == Stage::Held && self.expires.duration_since(now) <= lease.length / 2
    }

    /// Whether the holder must stop acting at `now` (it could not renew in time): its own
    /// expiry has come.
    pub fn lapsed(&self, now: Timestamp) -> bool {
        self.stage == Stage::Held && now >= self.expires
    }
}

/// How long a claim lasts, and how far apart two machines' clocks may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub length: SignedDuration,
    pub skew: SignedDuration,
}

impl Default for Lease {
    /// Ten minutes, renewed every five; two minutes of skew, which NTP-synchronised
    /// machines and hosted CI runners stay well within.
    fn default() -> Lease {
        Lease {
            length: SignedDuration::from_mins(10),
            skew: SignedDuration::from_mins(2),
        }
    }
}

/// One ref as a worker last read it from the remote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Seen {
    /// The ref does not exist.
    #[default]
    Free,
    /// The ref points at this commit, a claim.
    Claimed { commit: String, claim: Claim },
    /// The ref points at a commit that is not a claim (written by hand or by something
    /// else): never taken over.
    Unreadable { commit: String },
}

/// What a worker does next about one claim ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Create the ref: nobody has claimed it.
    Claim,
    /// Replace the expired claim at this commit by a new one of ours (compare-and-swap).
    TakeOver { expired: String },
    /// Replace our own claim at this commit by a newer one (compare-and-swap).
    Renew { own: String },
    /// Ours, and not yet due for renewal: go on.
    Keep,
    /// We held it, and the ref is no longer our commit: stop everything for it, at once.
    Lost,
    /// Someone else's live claim, or a finished one: nothing to do.
    Leave,
}

/// The next step about one ref, from what was seen there, the commit of our own claim
/// (if we made one), and now. The order matters: a worker that held the ref and sees
/// another commit has lost, whatever that commit says.
pub fn step(seen: &Seen, own: Option<&str>, now: Timestamp, lease: Lease) -> Step {
    match (seen, own) {
        (Seen::Claimed { commit, claim }, Some(own)) if commit == own => {
            if claim.renewal_due(now, lease) {
                Step::Renew { own: own.into() }
            } else {
                Step::Keep
            }
        }
        (_, Some(_)) => Step::Lost,
        (Seen::Free, None) => Step::Claim,
        (Seen::Claimed { commit, claim }, None) if claim.expired(now, lease) => Step::TakeOver {
            expired: commit.clone(),
        },
        (Seen::Claimed { .. } | Seen::Unreadable { .. }, None) => Step::Leave,
    }
}

/// A plan's coordination refs as one fetch saw them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Board {
    /// Each claimed task's claim ref.
    pub claims: BTreeMap<String, Seen>,
    /// Each finished task's commit.
    pub done: BTreeMap<String, String>,
    /// Each merged task's integration tip right after its merge.
    pub merged: BTreeMap<String, String>,
    /// The merge queue's lease.
    pub coordinator: Seen,
    /// The integration branch's tip.
    pub integration: Option<String>,
}

impl Seen {
    /// A ref at `commit` whose message is `message`.
    pub fn of(commit: &str, message: &str) -> Seen {
        match Claim::parse(message) {
            Ok(claim) => Seen::Claimed {
                commit: commit.to_string(),
                claim,
            },
            Err(_) => Seen::Unreadable {
                commit: commit.to_string(),
            },
        }
    }
}

impl Board {
    /// The board from a plan's refs, each named below `refs/taskie/<plan>/`, with its commit
    /// and that commit's message; refs of other shapes are not Taskie's and are ignored.
    pub fn read<'a>(
        refs: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
        integration: Option<String>,
    ) -> Board {
        let mut board = Board {
            integration,
            ..Board::default()
        };
        for (name, commit, message) in refs {
            match name.split_once('/') {
                Some(("claims", task)) => {
                    board
                        .claims
                        .insert(task.to_string(), Seen::of(commit, message));
                }
                Some(("done", task)) => {
                    board.done.insert(task.to_string(), commit.to_string());
                }
                Some(("merged", task)) => {
                    board.merged.insert(task.to_string(), commit.to_string());
                }
                None if name == "coordinator" => board.coordinator = Seen::of(commit, message),
                _ => {}
            }
        }
        board
    }

    /// What was seen at a task's claim ref.
    pub fn claim(&self, task: &str) -> &Seen {
        self.claims.get(task).unwrap_or(&Seen::Free)
    }

    fn merged_or_finished(&self, tasks: &[Task], id: &str) -> bool {
        self.merged.contains_key(id) || tasks.iter().any(|t| t.id == id && t.finished)
    }

    /// The first task, in tasks.md order, a worker holding nothing should try to claim
    /// now, with how: not done, every dependency merged (as on one machine), and its claim
    /// ref free or expired.
    pub fn to_claim(&self, tasks: &[Task], now: Timestamp, lease: Lease) -> Option<(String, Step)> {
        tasks
            .iter()
            .filter(|t| !t.finished && !self.done.contains_key(&t.id))
            .filter(|t| t.depends.iter().all(|d| self.merged_or_finished(tasks, d)))
            .find_map(|t| match step(self.claim(&t.id), None, now, lease) {
                s @ (Step::Claim | Step::TakeOver { .. }) => Some((t.id.clone(), s)),
                _ => None,
            })
    }

    /// The next task the coordinator merges, with its finished commit: done, not merged,
    /// every dependency merged; the first such in tasks.md order, so merges follow the
    /// dependencies.
    pub fn to_merge(&self, tasks: &[Task]) -> Option<(String, String)> {
        tasks
            .iter()
            .filter(|t| !t.finished && !self.merged.contains_key(&t.id))
            .filter(|t| t.depends.iter().all(|d| self.merged_or_finished(tasks, d)))
            .find_map(|t| Some((t.id.clone(), self.done.get(&t.id)?.clone())))
    }

    /// Whether every task of the plan is merged (or was finished before).
    pub fn complete(&self, tasks: &[Task]) -> bool {
        tasks.iter().all(|t| self.merged_or_finished(tasks, &t.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    fn lease() -> Lease {
        Lease {
            length: SignedDuration::from_secs(600),
            skew: SignedDuration::from_secs(120),
        }
    }

    fn claim_at(s: i64) -> Claim {
        Claim::held("ci-3", "run-7", "ab12".into(), at(s), lease())
    }

    fn seen(claim: Claim) -> Seen {
        Seen::Claimed {
            commit: "c1".into(),
            claim,
        }
    }

    #[test]
    fn a_claim_reads_back_as_it_was_written() {
        let held = claim_at(0);
        assert_eq!(Claim::parse(&held.message()), Ok(held.clone()));
        let done = held.done("cd34".into(), "f00d");
        assert_eq!(Claim::parse(&done.message()), Ok(done));
    }

    #[test]
    fn a_claim_message_is_plain_lines_people_can_read() {
        assert_eq!(
            claim_at(0).message(),
            "taskie claim held\n\nmachine: ci-3\nrun: run-7\nnonce: ab12\n\
             expires: 2027-01-15T08:10:00Z\n"
        );
    }

    #[test]
    fn a_commit_that_is_not_a_claim_is_refused_with_the_reason() {
        let e = |m: &str| Claim::parse(m).unwrap_err().to_string();
        assert!(e("Merge branch x").contains("first line"), "{}", e("x"));
        assert!(e("taskie claim lost\n").contains("unknown stage `lost`"));
        assert!(e("taskie claim held\n\nmachine: m\nrun: r\n").contains("`nonce:`"));
        assert!(
            e("taskie claim held\n\nmachine: m\nrun: r\nnonce: n\nexpires: soon\n")
                .contains("`expires: soon` is not an instant")
        );
        let done = claim_at(0).message().replace("held", "done");
        assert!(e(&done).contains("`commit:`"));
    }

    #[test]
    fn a_claim_expires_for_others_only_after_the_skew_allowance() {
        let c = claim_at(0);
        assert!(!c.expired(at(600), lease()), "at its expiry");
        assert!(!c.expired(at(719), lease()), "within the skew allowance");
        assert!(c.expired(at(720), lease()), "past expiry and skew");
    }

    #[test]
    fn the_holder_stops_at_its_own_expiry_before_anyone_may_take_over() {
        let c = claim_at(0);
        assert!(!c.lapsed(at(599)));
        assert!(c.lapsed(at(600)));
        assert!(!c.expired(at(600), lease()));
    }

    #[test]
    fn a_done_claim_never_expires_never_lapses_and_is_never_renewed() {
        let d = claim_at(0).done("n2".into(), "f00d");
        assert!(!d.expired(at(1_000_000), lease()));
        assert!(!d.lapsed(at(1_000_000)));
        assert!(!d.renewal_due(at(599), lease()));
        assert_eq!(step(&seen(d), None, at(1_000_000), lease()), Step::Leave);
    }

    #[test]
    fn a_free_ref_is_claimed_and_a_live_claim_of_another_is_left() {
        assert_eq!(step(&Seen::Free, None, at(0), lease()), Step::Claim);
        assert_eq!(
            step(&seen(claim_at(0)), None, at(700), lease()),
            Step::Leave
        );
    }

    #[test]
    fn an_expired_claim_of_another_is_taken_over_from_its_commit() {
        assert_eq!(
            step(&seen(claim_at(0)), None, at(720), lease()),
            Step::TakeOver {
                expired: "c1".into()
            }
        );
    }

    #[test]
    fn our_own_claim_is_kept_then_renewed_from_half_its_lease() {
        assert_eq!(
            step(&seen(claim_at(0)), Some("c1"), at(299), lease()),
            Step::Keep
        );
        assert_eq!(
            step(&seen(claim_at(0)), Some("c1"), at(300), lease()),
            Step::Renew { own: "c1".into() }
        );
    }

    #[test]
    fn a_holder_that_sees_another_commit_or_none_has_lost() {
        for seen in [
            seen(claim_at(0)),
            Seen::Free,
            Seen::Unreadable {
                commit: "c1x".into(),
            },
        ] {
            assert_eq!(step(&seen, Some("c0"), at(0), lease()), Step::Lost);
        }
    }

    fn task(id: &str, depends: &[&str]) -> Task {
        Task {
            id: id.into(),
            depends: depends.iter().map(|d| d.to_string()).collect(),
            finished: false,
            agent: None,
        }
    }

    fn board(refs: &[(&str, &str, &str)]) -> Board {
        Board::read(refs.iter().copied(), Some("i0".into()))
    }

    #[test]
    fn the_board_sorts_a_plans_refs_and_ignores_others() {
        let held = claim_at(0).message();
        let b = board(&[
            ("claims/task-1", "c1", &held),
            ("claims/task-2", "c2", "hand-made"),
            ("done/task-1", "d1", "work"),
            ("merged/task-1", "m1", "merge"),
            ("coordinator", "k1", &held),
            ("reviewed/task-1", "r1", "other"),
        ]);
        assert_eq!(b.claim("task-1"), &seen(claim_at(0)));
        assert_eq!(
            b.claim("task-2"),
            &Seen::Unreadable {
                commit: "c2".into()
            }
        );
        assert_eq!(b.claim("task-3"), &Seen::Free);
        assert_eq!(b.done["task-1"], "d1");
        assert_eq!(b.merged["task-1"], "m1");
        assert!(matches!(b.coordinator, Seen::Claimed { ref commit, .. } if commit == "k1"));
        assert_eq!(b.integration.as_deref(), Some("i0"));
    }

    #[test]
    fn a_worker_claims_the_first_ready_task_and_takes_over_only_an_expired_one() {
        let tasks = [
            task("task-1", &[]),
            task("task-2", &["task-1"]),
            task("task-3", &[]),
        ];
        let held = claim_at(0).message();
        let b = board(&[("claims/task-1", "c1", &held)]);
        assert_eq!(
            b.to_claim(&tasks, at(10), lease()),
            Some(("task-3".into(), Step::Claim)),
            "task-1 is held, task-2 waits for it"
        );
        let b = board(&[
            ("claims/task-1", "c1", &held),
            ("claims/task-3", "c3", &held),
        ]);
        assert_eq!(b.to_claim(&tasks, at(10), lease()), None);
        assert_eq!(
            b.to_claim(&tasks, at(720), lease()),
            Some((
                "task-1".into(),
                Step::TakeOver {
                    expired: "c1".into()
                }
            ))
        );
    }

    #[test]
    fn a_task_is_ready_when_its_dependencies_are_merged_not_merely_done() {
        let tasks = [task("task-1", &[]), task("task-2", &["task-1"])];
        let done = claim_at(0).done("n".into(), "d1").message();
        let b = board(&[("claims/task-1", "c1", &done), ("done/task-1", "d1", "w")]);
        assert_eq!(b.to_claim(&tasks, at(10), lease()), None);
        assert_eq!(b.to_merge(&tasks), Some(("task-1".into(), "d1".into())));
        let b = board(&[
            ("claims/task-1", "c1", &done),
            ("done/task-1", "d1", "w"),
            ("merged/task-1", "m1", "m"),
        ]);
        assert_eq!(
            b.to_claim(&tasks, at(10), lease()),
            Some(("task-2".into(), Step::Claim))
        );
        assert_eq!(b.to_merge(&tasks), None);
        assert!(!b.complete(&tasks));
    }

    #[test]
    fn merges_follow_the_dependencies_whatever_finished_first() {
        let tasks = [task("task-1", &[]), task("task-2", &["task-1"])];
        let b = board(&[("done/task-2", "d2", "w")]);
        assert_eq!(b.to_merge(&tasks), None, "task-2 waits for task-1's merge");
        let b = board(&[("done/task-2", "d2", "w"), ("done/task-1", "d1", "w")]);
        assert_eq!(b.to_merge(&tasks), Some(("task-1".into(), "d1".into())));
    }

    #[test]
    fn an_unreadable_ref_is_never_taken_over() {
        let u = Seen::Unreadable {
            commit: "c1".into(),
        };
        assert_eq!(step(&u, None, at(1_000_000), lease()), Step::Leave);
    }
}
