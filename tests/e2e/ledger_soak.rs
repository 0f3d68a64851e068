//! The ledger soak: `kill -9` of the hook at a random moment of a review, a thousand kills
//! that land while it runs, over single, alternate and panel modes, each followed by the
//! stop that completes the iteration; after each, findings.json and spend.json must
//! describe exactly the reviews state.json records: no phantom id (a finding of a review
//! the state does not record, or of a review run twice) and no review counted twice.
//! tests/ledgers.rs kills at each step of the commit order; this finds what timing alone
//! can reach. Figures in docs/reliability.md.

use crate::ledgers::{MODES, answer_post_review, disagreement, drive_to, project, spawn};
use crate::support::processes::*;
use std::time::{Duration, Instant};

/// Kills that land while the hook runs, in the slow tier; `TASKIE_TEST_SCALE` multiplies
/// them. A kill moment drawn after the hook had already ended is not counted as one.
const KILLS: usize = 1000;

/// Runs allowed per kill wanted: kill moments are drawn below the median length of a stop,
/// so about half of them or more land; fewer than a quarter means the soak lost its aim.
const RUNS_PER_KILL: usize = 4;

/// Runs between two measures of a stop's length: the machine's load changes while the
/// soak runs (other slow tests start and end), and a length measured under load and kept
/// after it lifts draws most moments after the hook has ended.
const MEASURE_EVERY: usize = 25;

/// A plan is replaced before its cycle reaches `max_reviews` (50).
const REVIEWS_PER_PLAN: u64 = 40;

#[test]
fn a_thousand_random_kills_leave_no_phantom_id_and_no_review_counted_twice() {
    let n = rounds(KILLS);
    let started = Instant::now();
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    eprintln!("ledger soak: seed {seed}");
    let mut below = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n.max(1)
    };
    let (mut kills, mut finished_first, mut phantoms, mut doubled) = (0, 0, 0usize, 0i64);
    for (m, mode) in MODES.iter().enumerate() {
        let share = n / MODES.len() + usize::from(m < n % MODES.len());
        let mut p = project(*mode);
        // Kill moments are drawn over how long this mode's stop takes on this machine now
        // (a fixed window would mostly miss on a fast machine and mostly hit early on a
        // slow one): the median of three whole stops, measured from spawn to exit.
        let mut span = Duration::ZERO;
        let (mut landed, mut runs) = (0, 0);
        while landed < share {
            assert!(
                runs < share * RUNS_PER_KILL,
                "{mode:?}: only {landed} of {runs} kill moments landed while the hook ran"
            );
            if p.state_json()["phase_iteration"].as_u64().unwrap_or(0) >= REVIEWS_PER_PLAN {
                p = project(*mode);
            }
            if runs % MEASURE_EVERY == 0 {
                span = stop_duration(&p, 3);
            }
            runs += 1;
            answer_post_review(&p);
            let recorded = p.state_json()["phase_iteration"].as_u64().unwrap_or(0);
            let mut child = spawn(&p, &[]);
            std::thread::sleep(Duration::from_micros(below(span.as_micros() as u64)));
            if child.try_wait().unwrap().is_none() {
                landed += 1;
                kills += 1;
            } else {
                finished_first += 1;
            }
            child.kill().unwrap();
            child.wait().unwrap();
            // At least one whole stop after the kill: the one that completes its iteration.
            drive_to(&p, recorded + 2);
            let (ids, extra) = disagreement(&p, *mode);
            phantoms += ids.len();
            doubled += extra.abs();
            assert!(
                ids.is_empty() && extra == 0,
                "{mode:?}: phantom ids {ids:?}, {extra} reviews counted beyond state.json's\n{}\n{}",
                p.read("findings.json"),
                p.read("spend.json")
            );
        }
        eprintln!("ledger soak: {mode:?}: {landed} kills while the hook ran, in {runs} runs");
    }
    eprintln!(
        "ledger soak: {} runs ({kills} killed while running, {finished_first} finished first) in {:.0} s: \
         {phantoms} phantom ids, {doubled} reviews counted twice",
        kills + finished_first,
        started.elapsed().as_secs_f64()
    );
    assert!(kills >= n, "{kills} kills landed of {n} wanted");
}

/// The median time of `n` uninterrupted review-running stops of `p`, spawn to exit.
fn stop_duration(p: &crate::support::Project, n: usize) -> Duration {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            answer_post_review(p);
            let t = Instant::now();
            let mut child = spawn(p, &[]);
            child.wait().unwrap();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[n / 2]
}
