//! The benchmark of `taskie run` (docs/performance.md): two independent tasks of equal
//! length at `-j 2` take at most 0.6× running them one after the other. A benchmark, run
//! by hand on a machine doing nothing else:
//! `cargo test --locked --features e2e --test e2e run_bench -- --ignored --nocapture`.
//! It is not part of the slow tier: a ratio of wall times taken while other tests share
//! the cores measures the other tests (CI saw 0.62 that way). That two ready tasks do run
//! at once is proven in the fast tier, whatever the machine's speed
//! (`a_run_merges_each_reviewed_task_once_in_dependency_order_and_leaves_the_checkout_alone`).

#[test]
#[ignore = "benchmark: run by hand with --ignored on an idle machine (docs/performance.md)"]
fn two_independent_tasks_at_j_2_take_at_most_six_tenths_of_running_them_one_after_the_other() {
    // Interleaved, so a change in the machine's load between runs shows in both.
    let mut ratios = Vec::new();
    for round in 1..=2 {
        let serial = timed_run("1", 15);
        let parallel = timed_run("2", 15);
        println!(
            "round {round}: serial {serial:.2} s, -j 2 {parallel:.2} s, ratio {:.2}",
            parallel / serial
        );
        ratios.push(parallel / serial);
    }
    let best = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(best <= 0.6, "ratios {ratios:.2?}");
}

/// The seconds a whole run of two independent tasks takes, each agent working `secs`.
fn timed_run(jobs: &str, secs: u32) -> f64 {
    let repo = crate::run::Repo::new(crate::run::TWO);
    for t in ["1", "2"] {
        repo.agent_commits(t, f64::from(secs), &format!("task-{t}.txt"), t);
    }
    let started = std::time::Instant::now();
    let out = repo.run(&["run", "-j", jobs]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    started.elapsed().as_secs_f64()
}
