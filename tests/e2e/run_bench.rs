//! The benchmark of `taskie run` (docs/run.md): two independent tasks of equal length at
//! `-j 2` take at most 0.6× running them one after the other. Slow tier: about a minute and a half of
//! sleeping fake agents.

#[test]
fn two_independent_tasks_at_j_2_take_at_most_six_tenths_of_running_them_one_after_the_other() {
    let serial = timed_run("1", 15);
    let parallel = timed_run("2", 15);
    println!(
        "serial {serial:.2} s, -j 2 {parallel:.2} s, ratio {:.2}",
        parallel / serial
    );
    assert!(
        parallel <= 0.6 * serial,
        "serial {serial:.2} s, -j 2 {parallel:.2} s"
    );
}

/// The seconds a whole run of two independent tasks takes, each agent working `secs`.
fn timed_run(jobs: &str, secs: u32) -> f64 {
    let repo = crate::run::Repo::new(crate::run::TWO);
    for t in ["1", "2"] {
        repo.agent_commits(t, secs, &format!("task-{t}.txt"), t);
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
