//! Past one machine, simulated (docs/distributed.md): worker threads, each with its own
//! clone, race for one plan's claims and the merge queue's lease against one bare
//! `file://` repository, through `store::claims` and real git.
//!
//! Every race is staged, so that it is contested whatever the machine's speed: in each
//! round all workers first read the remote, wait for each other, then all act on what they
//! read. Time is a number the test moves between rounds (claims' expiry is judged from it),
//! never a sleep. The assertions are on outcomes only: who won each race, which refs exist,
//! what the integration branch holds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use jiff::{SignedDuration, Timestamp};
use taskie::model::claim::{
    Board, Claim, Lease, Seen, Stage, Step, claim_ref, coordinator_ref, integration_ref, step,
};
use taskie::model::run::schedule::Task;
use taskie::store::claims::{Outcome, Remote, nonce};

use crate::SLOW_TIER;
use crate::support::{git, write_executable};

const PLAN: &str = "fleet";

fn lease() -> Lease {
    Lease {
        length: SignedDuration::from_secs(60),
        skew: SignedDuration::from_secs(15),
    }
}

/// How far the clock moves in a normal round: a claim outlives every round a plan of the
/// simulation can stall for, so only the dead worker's claim ever expires (by a jump).
const TICK: i64 = 1;

fn at(s: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + s).unwrap()
}

/// A fresh claim by `who` (the run) at time 0.
fn held(who: &str) -> Claim {
    Claim::held("ci", who, nonce().unwrap(), at(0), lease())
}

/// A bare repository with `main` and the plan's integration branch, and `n` clones of it.
struct Fleet {
    _tmp: tempfile::TempDir,
    origin: PathBuf,
    clones: Vec<PathBuf>,
}

impl Fleet {
    fn new(n: usize) -> Fleet {
        let tmp = crate::support::tempdir();
        let origin = tmp.path().join("origin.git");
        git(tmp.path(), &["init", "-q", "--bare", "origin.git"]);
        let url = format!("file://{}", origin.display());
        let clone = |name: &str| -> PathBuf {
            git(tmp.path(), &["clone", "-q", &url, name]);
            let dir = tmp.path().join(name);
            git(&dir, &["config", "user.name", name]);
            git(
                &dir,
                &["config", "user.email", &format!("{name}@example.com")],
            );
            dir
        };
        let seed = clone("seed");
        std::fs::write(seed.join("README"), "the project\n").unwrap();
        git(&seed, &["add", "README"]);
        git(&seed, &["commit", "-q", "-m", "start"]);
        let integration = format!("HEAD:{}", integration_ref(PLAN));
        git(
            &seed,
            &["push", "-q", "origin", "HEAD:refs/heads/main", &integration],
        );
        let clones = (0..n).map(|i| clone(&format!("w{i}"))).collect();
        Fleet {
            _tmp: tmp,
            origin,
            clones,
        }
    }

    /// The shared remote as the first two clones reach it.
    fn two(&self) -> (Remote, Remote) {
        (
            Remote::new(&self.clones[0], "origin"),
            Remote::new(&self.clones[1], "origin"),
        )
    }
}

fn tasks(n: usize) -> Vec<Task> {
    // Pairs: task-2k+1 depends on task-2k-1, so merges must follow the dependencies.
    (1..=n)
        .map(|i| Task {
            id: format!("task-{i}"),
            depends: if i > 2 {
                vec![format!("task-{}", i - 2)]
            } else {
                vec![]
            },
            finished: false,
            agent: None,
        })
        .collect()
}

/// What a worker tried, and what the remote decided.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Try {
    Claim,
    TakeOver,
    Renew,
    Finish,
    Land(String),
}

#[derive(Debug, Clone)]
struct Event {
    round: usize,
    worker: usize,
    /// A task, or "coordinator".
    target: String,
    tried: Try,
    won: bool,
}

/// What every thread shares.
struct Shared {
    barrier: Barrier,
    now: AtomicI64,
    round: AtomicI64,
    stop: AtomicBool,
    /// The worker that won the first claim dies holding it (and its lease, if it had one).
    dead: Mutex<Option<Dead>>,
    /// Set once its claim was taken over: the dead worker wakes and tries to act.
    wake: AtomicBool,
    log: Mutex<Vec<Event>>,
    tasks: Vec<Task>,
    /// A worker's panic, kept so that the others are not left waiting at the barrier.
    failures: Mutex<Vec<String>>,
}

impl Shared {
    fn guard(&self, f: impl FnOnce()) {
        if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            let said = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            self.failures.lock().unwrap().push(said);
        }
    }
}

#[derive(Debug, Clone)]
struct Dead {
    worker: usize,
    task: String,
    claim: (String, Claim),
    lease: Option<(String, Claim)>,
    /// What the woken worker's pushes got.
    woke: Vec<Outcome>,
}

struct Worker {
    id: usize,
    dir: PathBuf,
    remote: Remote,
    /// The task we hold: its id, our claim commit and claim, and our work once made.
    task: Option<(String, String, Claim, Option<String>)>,
    /// The merge queue's lease, when we hold it.
    lease: Option<(String, Claim)>,
}

impl Worker {
    fn log(&self, s: &Shared, target: &str, tried: Try, outcome: &Outcome) {
        s.log.lock().unwrap().push(Event {
            round: s.round.load(Ordering::SeqCst) as usize,
            worker: self.id,
            target: target.to_string(),
            tried,
            won: outcome.won().is_some(),
        });
    }

    fn held(&self, now: Timestamp) -> Claim {
        Claim::held(
            "ci",
            &format!("w{}", self.id),
            nonce().unwrap(),
            now,
            lease(),
        )
    }

    /// One claim ref's step, pushed; the commit we hold afterwards, if any.
    fn pursue(
        &self,
        s: &Shared,
        target: &str,
        refname: &str,
        seen: &Seen,
        own: Option<&str>,
        now: Timestamp,
    ) -> Option<(String, Claim)> {
        let claim = self.held(now);
        let (tried, outcome) = match step(seen, own, now, lease()) {
            Step::Claim => (Try::Claim, self.remote.claim(refname, &claim).unwrap()),
            Step::TakeOver { expired } => (
                Try::TakeOver,
                self.remote.replace(refname, &expired, &claim).unwrap(),
            ),
            Step::Renew { own } => (
                Try::Renew,
                self.remote.replace(refname, &own, &claim).unwrap(),
            ),
            Step::Keep => {
                let Seen::Claimed { commit, claim } = seen else {
                    unreachable!("kept only what is ours")
                };
                return Some((commit.clone(), claim.clone()));
            }
            Step::Lost | Step::Leave => return None,
        };
        self.log(s, target, tried, &outcome);
        outcome.won().map(|c| (c.to_string(), claim))
    }

    fn act(&mut self, s: &Shared, board: &Board, now: Timestamp) {
        // The merge queue: claim, renew or take over the lease; holding it, merge one task.
        let own = self.lease.as_ref().map(|(c, _)| c.as_str());
        self.lease = self.pursue(
            s,
            "coordinator",
            &coordinator_ref(PLAN),
            &board.coordinator,
            own,
            now,
        );
        if let (Some((own, _)), Some((task, done)), Some(tip)) = (
            self.lease.clone(),
            board.to_merge(&s.tasks),
            board.integration.clone(),
        ) {
            git(&self.dir, &["checkout", "-q", "--detach", &tip]);
            git(&self.dir, &["merge", "-q", "--no-ff", "-m", &task, &done]);
            let merged = git(&self.dir, &["rev-parse", "HEAD"]);
            let renewed = self.held(now);
            let outcome = self
                .remote
                .land(PLAN, &task, &own, &renewed, &tip, &merged)
                .unwrap();
            self.log(s, "coordinator", Try::Land(task), &outcome);
            self.lease = outcome.won().map(|c| (c.to_string(), renewed));
        }

        // Our task: renew it, do its work, or finish it; a claim lost is dropped at once.
        if let Some((task, own, _, work)) = self.task.take() {
            let seen = board.claim(&task);
            let Some((own, claim)) =
                self.pursue(s, &task, &claim_ref(PLAN, &task), seen, Some(&own), now)
            else {
                return;
            };
            match work {
                None => {
                    let tip = board.integration.clone().unwrap();
                    let made = self.work(&task, &tip);
                    self.task = Some((task, own, claim, Some(made)));
                }
                Some(made) => {
                    let done = claim.done(nonce().unwrap(), &made);
                    let outcome = self.remote.finish(PLAN, &task, &own, &done).unwrap();
                    self.log(s, &task, Try::Finish, &outcome);
                }
            }
            return;
        }

        // Holding no task: race for the first one that may be claimed now.
        if let Some((task, _)) = board.to_claim(&s.tasks, now, lease())
            && let Some((own, claim)) = self.pursue(
                s,
                &task,
                &claim_ref(PLAN, &task),
                board.claim(&task),
                None,
                now,
            )
        {
            let mut dead = s.dead.lock().unwrap();
            if dead.is_none() {
                // The first winner dies here, holding its claim and maybe the lease.
                *dead = Some(Dead {
                    worker: self.id,
                    task,
                    claim: (own, claim),
                    lease: self.lease.take(),
                    woke: Vec::new(),
                });
                return;
            }
            self.task = Some((task, own, claim, None));
        }
    }

    /// The task's work: a file of its own, committed on the integration tip.
    fn work(&self, task: &str, tip: &str) -> String {
        git(&self.dir, &["checkout", "-q", "--detach", tip]);
        std::fs::write(self.dir.join(task), format!("{task} by w{}\n", self.id)).unwrap();
        git(&self.dir, &["add", task]);
        git(&self.dir, &["commit", "-q", "-m", task]);
        git(&self.dir, &["rev-parse", "HEAD"])
    }

    /// The dead worker, woken after its claim was taken over, acts on what it last knew:
    /// it tries to finish its task and, if it held the lease, to land a merge. A correct
    /// worker would have stopped at its own expiry; the remote must refuse it anyway.
    fn wake(&self, s: &Shared, dead: &mut Dead, board: &Board, now: Timestamp) {
        let (own, claim) = &dead.claim;
        let made = self.work(&dead.task, board.integration.as_deref().unwrap());
        let done = claim.done(nonce().unwrap(), &made);
        let outcome = self.remote.finish(PLAN, &dead.task, own, &done).unwrap();
        self.log(s, &dead.task, Try::Finish, &outcome);
        dead.woke.push(outcome);
        if let Some((own, _)) = &dead.lease {
            let tip = board.integration.clone().unwrap();
            let outcome = self
                .remote
                .land(PLAN, &dead.task, own, &self.held(now), &tip, &made)
                .unwrap();
            self.log(s, "coordinator", Try::Land(dead.task.clone()), &outcome);
            dead.woke.push(outcome);
        }
    }

    fn run(mut self, s: &Shared) {
        loop {
            s.barrier.wait();
            if s.stop.load(Ordering::SeqCst) {
                return;
            }
            let now = at(s.now.load(Ordering::SeqCst));
            let mut board = None;
            s.guard(|| board = Some(self.remote.board(PLAN).unwrap()));
            s.barrier.wait();
            s.guard(|| {
                let Some(board) = &board else { return };
                let dead = s.dead.lock().unwrap().as_ref().map(|d| d.worker);
                if dead != Some(self.id) {
                    self.act(s, board, now);
                } else if s.wake.swap(false, Ordering::SeqCst) {
                    let mut d = s.dead.lock().unwrap().clone().unwrap();
                    self.wake(s, &mut d, board, now);
                    *s.dead.lock().unwrap() = Some(d);
                }
            });
            s.barrier.wait();
        }
    }
}

fn commit_of(seen: &Seen) -> Option<&str> {
    match seen {
        Seen::Claimed { commit, .. } | Seen::Unreadable { commit } => Some(commit),
        Seen::Free => None,
    }
}

/// Nothing can move until the dead worker's claim expires: no live claim on a task,
/// nothing to claim, and nothing to merge unless the dead worker holds the lease.
fn stalled(board: &Board, tasks: &[Task], dead: &Dead, now: Timestamp) -> bool {
    let live_claim = board.claims.values().any(|seen| {
        matches!(seen, Seen::Claimed { claim, .. } if claim.stage == Stage::Held)
            && commit_of(seen) != Some(dead.claim.0.as_str())
    });
    let lease_dead = dead
        .lease
        .as_ref()
        .is_some_and(|(c, _)| commit_of(&board.coordinator) == Some(c.as_str()));
    !live_claim
        && board.to_claim(tasks, now, lease()).is_none()
        && (board.to_merge(tasks).is_none() || lease_dead)
}

/// The claims a task's claim ref went through, newest first (its first-parent chain).
fn chain(origin: &Path, task: &str) -> Vec<Claim> {
    git(
        origin,
        &[
            "log",
            "--first-parent",
            "--format=%B%x00",
            &claim_ref(PLAN, task),
        ],
    )
    .split('\0')
    .map(str::trim)
    .filter(|m| !m.is_empty())
    .map(|m| Claim::parse(m).unwrap())
    .collect()
}

#[test]
fn racing_workers_claim_each_task_once_take_an_expired_claim_over_once_and_land_each_task_once() {
    let (workers, n_tasks) = if SLOW_TIER { (6, 12) } else { (3, 4) };
    let fleet = Fleet::new(workers + 1);
    let shared = Arc::new(Shared {
        barrier: Barrier::new(workers + 1),
        now: AtomicI64::new(0),
        round: AtomicI64::new(0),
        stop: AtomicBool::new(false),
        dead: Mutex::new(None),
        wake: AtomicBool::new(false),
        log: Mutex::new(Vec::new()),
        tasks: tasks(n_tasks),
        failures: Mutex::new(Vec::new()),
    });
    let threads: Vec<_> = (0..workers)
        .map(|id| {
            let s = Arc::clone(&shared);
            let dir = fleet.clones[id].clone();
            std::thread::spawn(move || {
                let remote = Remote::new(&dir, "origin");
                Worker {
                    id,
                    dir,
                    remote,
                    task: None,
                    lease: None,
                }
                .run(&s)
            })
        })
        .collect();

    // The observer: its own clone, reading the remote after each round.
    let observer = Remote::new(&fleet.clones[workers], "origin");
    let mut takeover_round = None;
    let mut woke_round = None;
    let mut rounds = 0;
    let limit = 12 * n_tasks;
    loop {
        shared.barrier.wait(); // all read the remote
        shared.barrier.wait(); // all act
        shared.barrier.wait(); // all acted
        let now = at(shared.now.load(Ordering::SeqCst));
        let board = observer.board(PLAN).unwrap();
        rounds += 1;
        let failed = !shared.failures.lock().unwrap().is_empty();
        if failed || board.complete(&shared.tasks) || rounds >= limit {
            break;
        }
        let dead = shared.dead.lock().unwrap().clone();
        let mut tick = TICK;
        if let Some(dead) = dead {
            let seen = commit_of(board.claim(&dead.task));
            if seen == Some(dead.claim.0.as_str()) {
                if stalled(&board, &shared.tasks, &dead, now) {
                    // Past the dead claim's expiry and the skew allowance, in one step.
                    tick = lease().length.as_secs() + lease().skew.as_secs();
                    takeover_round.get_or_insert(rounds);
                }
            } else if woke_round.is_none() {
                shared.wake.store(true, Ordering::SeqCst);
                woke_round = Some(rounds);
            }
        }
        shared.now.fetch_add(tick, Ordering::SeqCst);
        shared.round.store(rounds as i64, Ordering::SeqCst);
    }
    shared.stop.store(true, Ordering::SeqCst);
    shared.barrier.wait();
    for t in threads {
        t.join().unwrap();
    }
    let failures = shared.failures.lock().unwrap().clone();
    assert!(failures.is_empty(), "a worker failed: {failures:?}");

    let board = observer.board(PLAN).unwrap();
    assert!(
        board.complete(&shared.tasks),
        "not every task merged in {rounds} rounds: {board:#?}"
    );
    let log = shared.log.lock().unwrap().clone();
    let dead = shared.dead.lock().unwrap().clone().unwrap();
    let won = |target: &str, tried: Try| {
        log.iter()
            .filter(|e| e.target == target && e.tried == tried && e.won)
            .count()
    };

    // The first race: every worker went for the same free task; exactly one won it.
    let first: Vec<&Event> = log
        .iter()
        .filter(|e| e.round == 0 && e.tried == Try::Claim && e.target == "task-1")
        .collect();
    assert_eq!(
        first.len(),
        workers,
        "every worker raced for task-1: {first:?}"
    );
    assert_eq!(first.iter().filter(|e| e.won).count(), 1, "{first:?}");

    for t in &shared.tasks {
        // Claimed (created) once, finished once, merged once.
        assert_eq!(won(&t.id, Try::Claim), 1, "{} created once", t.id);
        assert_eq!(won(&t.id, Try::Finish), 1, "{} finished once", t.id);
        let lands = log
            .iter()
            .filter(|e| e.tried == Try::Land(t.id.clone()) && e.won)
            .count();
        assert_eq!(lands, 1, "{} merged once", t.id);
        // The claim's history: each change of holder is a takeover, and there is one only
        // for the dead worker's task.
        let chain = chain(&fleet.origin, &t.id);
        assert_eq!(chain[0].stage, Stage::Done, "{} ends done", t.id);
        let holders: Vec<&str> = chain.iter().map(|c| c.run.as_str()).collect();
        let changes = holders.windows(2).filter(|w| w[0] != w[1]).count();
        let expected = usize::from(t.id == dead.task);
        assert_eq!(changes, expected, "{}: holders {holders:?}", t.id);
        assert_eq!(won(&t.id, Try::TakeOver), expected, "{}", t.id);
    }

    // The takeover race: every live worker saw the dead claim expired; one won it.
    let round = takeover_round.expect("the dead worker's claim stalled the plan");
    let takers: Vec<&Event> = log
        .iter()
        .filter(|e| e.round == round && e.target == dead.task && e.tried == Try::TakeOver)
        .collect();
    assert_eq!(
        takers.len(),
        workers - 1,
        "every live worker raced: {takers:?}"
    );
    assert_eq!(takers.iter().filter(|e| e.won).count(), 1, "{takers:?}");

    // The dead worker, woken, was refused everything it tried.
    assert!(woke_round.is_some(), "the dead worker woke");
    assert!(!dead.woke.is_empty());
    for outcome in &dead.woke {
        assert!(matches!(outcome, Outcome::Lost(_)), "{outcome:?}");
    }

    // A loser never acts: every finish that happened was by the last holder of the claim,
    // and nobody but the woken worker tried to finish a task it did not hold.
    for t in &shared.tasks {
        let finisher: Vec<usize> = log
            .iter()
            .filter(|e| e.target == t.id && e.tried == Try::Finish && e.won)
            .map(|e| e.worker)
            .collect();
        let last_winner = log
            .iter()
            .filter(|e| e.target == t.id && e.won && e.tried != Try::Finish)
            .map(|e| e.worker)
            .next_back();
        assert_eq!(finisher, Vec::from_iter(last_winner), "{}", t.id);
    }
    let refused: BTreeSet<usize> = log
        .iter()
        .filter(|e| e.tried == Try::Finish && !e.won)
        .map(|e| e.worker)
        .collect();
    assert_eq!(refused, BTreeSet::from([dead.worker]));

    // The integration branch: one merge per task, in dependency order, each bringing the
    // finished commit that the task's done ref names.
    let integration = integration_ref(PLAN);
    let merges = git(
        &fleet.origin,
        &[
            "log",
            "--first-parent",
            "--reverse",
            "--merges",
            "--format=%P",
            &integration,
        ],
    );
    let mut order: BTreeMap<String, usize> = BTreeMap::new();
    for (i, parents) in merges.lines().enumerate() {
        let second = parents.split(' ').nth(1).unwrap();
        let task = board
            .done
            .iter()
            .find(|(_, c)| c.as_str() == second)
            .map(|(t, _)| t.clone())
            .unwrap_or_else(|| panic!("merge {i} brings {second}, no task's done commit"));
        assert!(
            order.insert(task.clone(), i).is_none(),
            "{task} merged twice"
        );
    }
    assert_eq!(order.len(), n_tasks, "{order:?}");
    for t in &shared.tasks {
        for d in &t.depends {
            assert!(order[d] < order[&t.id], "{} merged before {d}", t.id);
        }
    }
    let files = git(&fleet.origin, &["ls-tree", "--name-only", &integration]);
    for t in &shared.tasks {
        assert!(files.lines().any(|f| f == t.id), "{} in {files}", t.id);
    }
}

/// Two claims with the same words made in the same second would be one commit, and the
/// slower push would "succeed" as already up to date: the nonce makes them two.
#[test]
fn two_identical_claims_racing_for_one_task_have_one_winner() {
    let fleet = Fleet::new(2);
    let barrier = Arc::new(Barrier::new(2));
    let outcomes: Vec<Outcome> = fleet
        .clones
        .iter()
        .map(|dir| {
            let (dir, barrier) = (dir.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let claim = held("same-run");
                barrier.wait();
                Remote::new(dir, "origin")
                    .claim(&claim_ref(PLAN, "task-1"), &claim)
                    .unwrap()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let winners: Vec<&str> = outcomes.iter().filter_map(Outcome::won).collect();
    assert_eq!(winners.len(), 1, "{outcomes:?}");
    let on_remote = git(&fleet.origin, &["rev-parse", &claim_ref(PLAN, "task-1")]);
    assert_eq!(on_remote, winners[0]);
}

#[test]
fn a_renewed_claim_is_kept_from_a_taker_that_read_it_before_the_renewal() {
    let fleet = Fleet::new(2);
    let (holder, taker) = fleet.two();
    let name = claim_ref(PLAN, "task-1");
    let first = Claim::held("ci", "holder", nonce().unwrap(), at(0), lease());
    let first_commit = holder.claim(&name, &first).unwrap();
    let first_commit = first_commit.won().unwrap().to_string();
    let stale = taker.board(PLAN).unwrap();

    let seen = holder.board(PLAN).unwrap();
    let renewal = step(seen.claim("task-1"), Some(&first_commit), at(30), lease());
    assert_eq!(
        renewal,
        Step::Renew {
            own: first_commit.clone()
        }
    );
    let renewed = Claim::held("ci", "holder", nonce().unwrap(), at(30), lease());
    assert!(
        holder
            .replace(&name, &first_commit, &renewed)
            .unwrap()
            .won()
            .is_some()
    );

    // The taker's old reading says expired; the compare-and-swap from it is refused.
    let late = at(80);
    let Step::TakeOver { expired } = step(stale.claim("task-1"), None, late, lease()) else {
        panic!("the stale reading shows an expired claim")
    };
    let taken = Claim::held("ci", "taker", nonce().unwrap(), late, lease());
    assert!(
        taker
            .replace(&name, &expired, &taken)
            .unwrap()
            .won()
            .is_none()
    );
    // A fresh reading shows the renewed claim, alive until 90 + 15.
    let fresh = taker.board(PLAN).unwrap();
    assert_eq!(
        step(fresh.claim("task-1"), None, late, lease()),
        Step::Leave
    );
    assert_eq!(chain(&fleet.origin, "task-1"), vec![renewed, first]);
}

#[test]
fn a_released_claim_can_be_claimed_again_and_only_its_holder_releases_it() {
    let fleet = Fleet::new(2);
    let (a, b) = fleet.two();
    let name = claim_ref(PLAN, "task-1");
    let ours = a.claim(&name, &held("a")).unwrap();
    let ours = ours.won().expect("a free ref is claimed");
    assert!(b.claim(&name, &held("b")).unwrap().won().is_none());
    let stranger = b.board(PLAN).unwrap();
    assert_eq!(commit_of(stranger.claim("task-1")), Some(ours));
    assert!(
        b.release(&name, "0000000000000000000000000000000000000000")
            .unwrap()
            .won()
            .is_none(),
        "a release from a commit the ref is not at is refused"
    );
    assert!(a.release(&name, ours).unwrap().won().is_some());
    assert_eq!(b.board(PLAN).unwrap().claim("task-1"), &Seen::Free);
    assert!(b.claim(&name, &held("b")).unwrap().won().is_some());
}

/// The remote's hook `pre-receive` runs `script` before any ref of a push moves.
fn pre_receive(fleet: &Fleet, script: &str) {
    let hook = fleet.origin.join("hooks/pre-receive");
    write_executable(&hook, &format!("#!/bin/sh\n{script}\n"));
}

/// Another push that lands between the client's own check of the lease and the server's
/// update (the remote's hook moves the ref in that window, as a racing worker would): the
/// server checks the lease again, under the ref's lock, and the push is lost.
#[test]
fn a_race_lost_on_the_server_after_the_clients_check_passed_is_lost_too() {
    let fleet = Fleet::new(2);
    let (a, b) = fleet.two();
    let name = claim_ref(PLAN, "task-1");
    let main = git(&fleet.origin, &["rev-parse", "main"]);
    // Quarantined pushes may not move refs; a racing push is not quarantined.
    pre_receive(
        &fleet,
        &format!("unset GIT_QUARANTINE_PATH\ngit update-ref {name} {main}"),
    );
    let lost = a.claim(&name, &held("a")).unwrap();
    assert!(
        matches!(&lost, Outcome::Lost(why) if why.contains("atomic transaction failed")),
        "{lost:?}"
    );
    assert_eq!(git(&fleet.origin, &["rev-parse", &name]), main);

    std::fs::remove_file(fleet.origin.join("hooks/pre-receive")).unwrap();
    git(&fleet.origin, &["update-ref", "-d", &name]);
    let ours = a.claim(&name, &held("a")).unwrap();
    let ours = ours.won().unwrap().to_string();
    let seen = b.board(PLAN).unwrap();
    assert_eq!(commit_of(seen.claim("task-1")), Some(ours.as_str()));
    pre_receive(
        &fleet,
        &format!("unset GIT_QUARANTINE_PATH\ngit update-ref {name} {main}"),
    );
    let renewal = a.replace(&name, &ours, &held("a")).unwrap();
    assert!(renewal.won().is_none(), "{renewal:?}");
    assert_eq!(git(&fleet.origin, &["rev-parse", &name]), main);
}

/// A remote that refuses the refs themselves (a hook, a host's rule) must not look like a
/// race lost: the worker would wait for a claim that can never be made.
#[test]
fn a_push_the_remote_declines_is_an_error_naming_why_not_a_lost_race() {
    let fleet = Fleet::new(1);
    pre_receive(&fleet, "echo custom refs are not allowed here >&2\nexit 1");
    let r = Remote::new(&fleet.clones[0], "origin");
    let e = r.claim(&claim_ref(PLAN, "task-1"), &held("r")).unwrap_err();
    assert!(e.to_string().contains("pre-receive hook declined"), "{e}");
}

#[test]
fn cleaning_a_plan_deletes_all_its_refs_at_once_and_keeps_its_branches() {
    let fleet = Fleet::new(2);
    let (a, b) = fleet.two();
    let one = a.claim(&claim_ref(PLAN, "task-1"), &held("a")).unwrap();
    let one = one.won().unwrap().to_string();
    let done = held("a").done(nonce().unwrap(), &one);
    assert!(
        a.finish(PLAN, "task-1", &one, &done)
            .unwrap()
            .won()
            .is_some()
    );
    assert!(
        b.claim(&coordinator_ref(PLAN), &held("b"))
            .unwrap()
            .won()
            .is_some()
    );
    let other_plan = claim_ref("other", "task-1");
    assert!(b.claim(&other_plan, &held("b")).unwrap().won().is_some());
    let refs = |prefix: &str| {
        git(
            &fleet.origin,
            &["for-each-ref", "--format=%(refname)", prefix],
        )
    };
    assert_eq!(refs(&format!("refs/taskie/{PLAN}/")).lines().count(), 3);

    assert!(a.clean(PLAN).unwrap());
    assert_eq!(refs(&format!("refs/taskie/{PLAN}/")), "");
    assert_eq!(refs("refs/taskie/other/"), other_plan);
    assert_ne!(
        refs(&integration_ref(PLAN)),
        "",
        "the integration branch stays"
    );
    assert!(a.clean(PLAN).unwrap(), "nothing left to clean is clean");
}

#[test]
fn a_push_to_a_missing_remote_is_an_error_not_a_lost_race() {
    let fleet = Fleet::new(1);
    let r = Remote::new(&fleet.clones[0], "nowhere");
    let e = r.claim(&claim_ref(PLAN, "task-1"), &held("r")).unwrap_err();
    assert!(e.to_string().contains("nowhere"), "{e}");
}
