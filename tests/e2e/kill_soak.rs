//! A kill soak: `kill -9` of the hook just after it started a guardian (so around the
//! reviewer's spawn and first instructions) and at random moments of reviews, by single
//! claude, codex and gemini reviewers and by panels of all three, with the vendor-shaped
//! fakes of `tests/support` (SPEC §5 step 18, §8, §18). Where the kill-gap tests of
//! tests/faults.rs count processes only, every kill here is checked whole: the plan lock
//! is free at once, state.json is the old or the new state byte for byte (nothing
//! corrupt, no other transition), no process of the run is left (found by the
//! environment marker), and the next stop completes the iteration. CI runs a few dozen
//! kills; `TASKIE_TEST_SCALE` multiplies them for the soak whose figures are in
//! docs/reliability.md.

use crate::support::processes::*;
use crate::support::vendors::Vendor;
use crate::support::{Fake, Project, due};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Generous bound for liveness waits; a pass never waits this long.
const LIVENESS: Duration = Duration::from_secs(20);

/// Kills per test in CI; `TASKIE_TEST_SCALE` multiplies them for the soak.
const AIMED_KILLS: usize = 40;
const RANDOM_KILLS: usize = 40;

/// Who reviews.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Lineup {
    Claude,
    Codex,
    Gemini,
    /// claude, codex and gemini at once.
    Panel,
}

const LINEUPS: [Lineup; 4] = [Lineup::Claude, Lineup::Codex, Lineup::Gemini, Lineup::Panel];

impl Lineup {
    fn state(self) -> Value {
        let mut s = due("plan-review");
        let (reviewers, mode) = match self {
            Lineup::Claude => (json!(["claude:opus"]), "alternate"),
            Lineup::Codex => (json!(["codex:gpt-5-codex"]), "alternate"),
            Lineup::Gemini => (json!(["gemini:gemini-2.5-pro"]), "alternate"),
            Lineup::Panel => (
                json!(["claude:opus", "codex:gpt-5-codex", "gemini:gemini-2.5-pro"]),
                "panel",
            ),
        };
        s["reviewers"] = reviewers;
        s["review_mode"] = json!(mode);
        s
    }
}

/// Each fake reviewer first starts a child of its own (a `sleep 1000`, as a real reviewer
/// starts a build or a test run), then sleeps `$FAKE_SLEEP` seconds, then gives its FAIL
/// answer through the shared fakes, and ends its child: only a killed run can leave it.
const WRAPPER: &str = "#!/bin/sh\n\
sleep 1000 </dev/null >/dev/null 2>&1 &\n\
child=$!\n\
sleep \"${FAKE_SLEEP:-0}\"\n\
\"$0.real\" \"$@\"\n\
rc=$?\n\
kill $child\n\
exit $rc\n";

/// A plan whose plan review is due, reviewed by `lineup`.
fn project(lineup: Lineup) -> Project {
    let p = Project::new()
        .plan("p")
        .state(lineup.state())
        .reviewer(&Fake::fail())
        .codex(&Vendor::fail())
        .gemini(&Vendor::fail());
    for name in ["fake-claude", "fake-codex", "fake-gemini"] {
        let path = p.reviewer_dir().join(name);
        std::fs::rename(&path, p.reviewer_dir().join(format!("{name}.real"))).unwrap();
        crate::support::write_executable(&path, WRAPPER);
    }
    p
}

/// state.json before and after one uninterrupted review by `lineup`.
fn old_and_new(lineup: Lineup) -> (Vec<u8>, Vec<u8>) {
    type Bytes = (Vec<u8>, Vec<u8>);
    static CACHE: Mutex<Option<HashMap<Lineup, Bytes>>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .get_or_insert_with(HashMap::new)
        .entry(lineup)
        .or_insert_with(|| {
            let p = project(lineup);
            let old = p.state_bytes();
            let run = p.stop();
            assert!(run.is_block(), "{lineup:?}: {}", run.stdout);
            let new = p.state_bytes();
            assert_ne!(old, new);
            (old, new)
        })
        .clone()
}

/// Whether the plan lock can be taken now (taken and released at once).
fn lock_is_free(p: &Project) -> bool {
    taskie::store::lock::try_lock(&p.root().join(".taskie/locks"), "p")
        .is_ok_and(|held| held.is_some())
}

/// A small deterministic generator, seeded per test and printed, so a failing sequence
/// can be replayed with `TASKIE_TEST_SEED`.
struct Rng(u64);

impl Rng {
    fn new(test: &str) -> Rng {
        let seed = std::env::var("TASKIE_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            });
        eprintln!("{test}: TASKIE_TEST_SEED={seed}");
        Rng(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

#[derive(Default, Debug)]
struct Tally {
    kills: usize,
    finished_first: usize,
    new_state: usize,
}

/// SIGKILLs what is left of a run when dropped, so a failed assertion leaks no process.
struct ReapMarked(String);

impl Drop for ReapMarked {
    fn drop(&mut self) {
        let pids = marked(&self.0)
            .iter()
            .filter_map(|p| p.split(' ').next()?.parse().ok())
            .collect();
        drop(Reap(pids));
    }
}

/// Starts the hook with the marker and `env`, and the codex and gemini fakes installed.
fn spawn(p: &Project, mark: &str, env: &[(&str, &str)]) -> std::process::Child {
    let fake = |name: &str| -> PathBuf { p.reviewer_dir().join(name) };
    let (codex, gemini) = (fake("fake-codex"), fake("fake-gemini"));
    let mut all = vec![
        (KILL_MARK, mark),
        ("TASKIE_CODEX", codex.to_str().unwrap()),
        ("TASKIE_GEMINI", gemini.to_str().unwrap()),
    ];
    all.extend_from_slice(env);
    p.spawn_hook(stop_event(false), &all)
}

/// The hook is dead (reaped): check everything a kill may not break, then let the next
/// stop complete the iteration when `next` is set.
fn check_after_kill(p: &Project, lineup: Lineup, mark: &str, next: bool, tally: &mut Tally) {
    assert!(
        lock_is_free(p),
        "{lineup:?}: the plan lock outlived the killed hook"
    );
    let (old, new) = old_and_new(lineup);
    let now = p.state_bytes();
    assert!(
        now == old || now == new,
        "{lineup:?}: state.json is neither the old nor the new state:\n{}",
        String::from_utf8_lossy(&now)
    );
    if now == new {
        tally.new_state += 1;
    }
    let mut left = Vec::new();
    assert!(
        eventually(LIVENESS, || {
            left = marked(mark);
            left.is_empty()
        }),
        "{lineup:?}: processes of the killed run are left: {left:?}"
    );
    if next {
        let run = p.stop();
        if now == new {
            assert!(
                run.message().contains("plan-post-review-1.md"),
                "{lineup:?}: the post-review is owed: {}",
                run.stdout
            );
        } else {
            assert!(
                run.reason().contains("plan-review-1.md"),
                "{lineup:?}: {}",
                run.stdout
            );
        }
        assert_eq!(
            p.state_bytes(),
            new,
            "{lineup:?}: the next run completes #1"
        );
        assert!(p.temp_files().is_empty(), "{:?}", p.temp_files());
    }
}

/// Waits for the child unless it already ended; whether it was still running.
fn kill(child: &mut std::process::Child) -> bool {
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    running
}

/// kill -9 aimed at the reviewer's start: the hook announces (test-only mark, no pause)
/// that its guardian has started; the kill follows 0–4 ms later, which spreads it over the
/// reviewer's spawn and the reviewer's first instructions (the start of its own child).
/// Single reviewers of each kind and panels in turn; in a panel the first member to get
/// there announces it.
#[cfg(debug_assertions)]
#[test]
fn kills_aimed_at_the_reviewers_start_leave_the_old_state_a_free_lock_and_no_process() {
    let mut rng = Rng::new("aimed kills");
    let mut tally = Tally::default();
    let n = AIMED_KILLS * scale();
    let started = Instant::now();
    for i in 0..n {
        let lineup = LINEUPS[i % LINEUPS.len()];
        let p = project(lineup);
        let mark = marker();
        let _reap = ReapMarked(mark.clone());
        let point = "after-guardian-start:reviewer";
        let mut child = spawn(
            &p,
            &mark,
            &[
                ("TASKIE_TEST_PAUSE_AT", &format!("mark:{point}")),
                ("FAKE_SLEEP", "0.05"),
            ],
        );
        let lines = stderr_lines(&mut child);
        assert!(
            wait_for_line(&lines, &format!("test mark at {point}"), LIVENESS),
            "{lineup:?}: the hook never started a guardian"
        );
        std::thread::sleep(Duration::from_micros(rng.below(4000)));
        if kill(&mut child) {
            tally.kills += 1;
        } else {
            tally.finished_first += 1;
        }
        check_after_kill(&p, lineup, &mark, i % 4 == 0, &mut tally);
    }
    eprintln!(
        "aimed kills: {n} runs in {:.1} s: {tally:?}, 0 processes left",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(tally.kills + tally.finished_first, n);
}

/// kill -9 at a random moment of a review: the reviewers sleep 0–80 ms before answering,
/// the kill lands anywhere from the hook's start to 80 ms after their answers, before
/// or after the state write. Single reviewers of each kind and panels of all three in turn.
#[test]
fn random_kills_of_single_reviewers_and_panels_leave_the_old_or_new_state_and_nothing_else() {
    let mut rng = Rng::new("random kills");
    let mut tally = Tally::default();
    let n = RANDOM_KILLS * scale();
    let started = Instant::now();
    for i in 0..n {
        let lineup = LINEUPS[i % LINEUPS.len()];
        let p = project(lineup);
        let mark = marker();
        let _reap = ReapMarked(mark.clone());
        let sleep_ms = rng.below(80);
        let sleep = format!("{:.3}", sleep_ms as f64 / 1000.0);
        let mut child = spawn(&p, &mark, &[("FAKE_SLEEP", &sleep)]);
        std::thread::sleep(Duration::from_micros(rng.below((sleep_ms + 80) * 1000)));
        if kill(&mut child) {
            tally.kills += 1;
        } else {
            tally.finished_first += 1;
        }
        check_after_kill(&p, lineup, &mark, true, &mut tally);
    }
    eprintln!(
        "random kills: {n} runs in {:.1} s: {tally:?}, 0 processes left",
        started.elapsed().as_secs_f64()
    );
    assert!(
        tally.kills > 0,
        "no kill landed while a hook ran: {tally:?}"
    );
}
