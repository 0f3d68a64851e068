//! The hook under faults (SPEC §3 atomic writes, §5 steps 7, 16 and 18, §8): killed at any
//! moment, run concurrently, and given reviewers that hang, flood, crash or misbehave.
//! docs/reliability.md lists what each test proves.

use crate::support::processes::*;
use crate::support::{Fake, Project, due};
use proptest::prelude::*;
use serde_json::json;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Generous bounds for liveness waits; a pass never waits this long.
const LIVENESS: Duration = Duration::from_secs(20);

/// A plan whose plan-review #1 is due, with a reviewer that sleeps `$FAKE_SLEEP` seconds
/// and then writes a FAIL review.
fn plan_review_due() -> Project {
    let p = Project::new().plan("p").state(due("plan-review"));
    p.script_reviewer(&format!("sleep \"${{FAKE_SLEEP:-0}}\"\n{REVIEW_FAIL}"));
    p
}

/// The bytes state.json holds before and after review #1 of [`plan_review_due`], from one
/// uninterrupted reference run (state.json has no timestamps, so they are the same in
/// every project).
fn old_and_new() -> &'static (Vec<u8>, Vec<u8>) {
    static BYTES: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    BYTES.get_or_init(|| {
        let p = plan_review_due();
        let old = p.state_bytes();
        assert!(p.stop().is_block());
        let new = p.state_bytes();
        assert_ne!(old, new);
        (old, new)
    })
}

/// After a hook was killed: state.json is the old or the new state, byte for byte; the
/// reviewers it started are gone; and the next stop completes the same iteration.
/// Returns whether the killed run had already written the new state.
/// Whether the plan lock can be taken now (taken and released at once).
fn lock_is_free(p: &Project) -> bool {
    taskie::store::lock::try_lock(&p.root().join(".taskie/locks"), "p")
        .is_ok_and(|held| held.is_some())
}

fn check_after_kill(p: &Project) -> bool {
    let (old, new) = old_and_new();
    let now = p.state_bytes();
    assert!(
        &now == old || &now == new,
        "state.json is neither the old nor the new state:\n{}",
        String::from_utf8_lossy(&now)
    );
    let pids = p.reviewer_pids();
    let _reap = Reap(pids.clone());
    for pid in &pids {
        assert!(
            eventually(LIVENESS, || gone(*pid)),
            "reviewer {pid} outlived the killed hook"
        );
    }
    // The plan lock is the killed hook's own (a record lock no child holds): it is free
    // the moment the hook is reaped, with no waiting.
    assert!(lock_is_free(p), "the plan lock outlived the killed hook");
    let written = &now == new;
    let next = p.stop();
    if written {
        assert!(
            next.message().contains("plan-post-review-1.md"),
            "the killed run finished its iteration; the post-review is owed"
        );
    } else {
        assert!(next.reason().contains("plan-review-1.md"));
    }
    assert_eq!(&p.state_bytes(), new, "the next run completes iteration 1");
    assert!(
        p.temp_files().is_empty(),
        "the next run removed leftover temporary files: {:?}",
        p.temp_files()
    );
    written
}

static RANDOM_KILLS: AtomicUsize = AtomicUsize::new(0);
static RANDOM_FINISHED_FIRST: AtomicUsize = AtomicUsize::new(0);
static RANDOM_KILLED_AFTER_WRITE: AtomicUsize = AtomicUsize::new(0);

proptest! {
    #![proptest_config(ProptestConfig {
        // A soak: a tenth of the kills in the fast tier (every step of the write is killed
        // deterministically below), all of them in the slow tier; TASKIE_TEST_SCALE
        // multiplies them for long local soaks (docs/reliability.md).
        cases: u32::try_from(rounds(48)).unwrap_or(u32::MAX),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// kill -9 at a random instant: before the reviewer starts, while it runs, while it
    /// writes its review, around the state write, or after the answer.
    #[test]
    fn state_is_old_or_new_after_a_kill_at_a_random_moment(
        reviewer_ms in 0u64..80,
        kill_at_percent in 0u64..=100,
    ) {
        let p = plan_review_due();
        let sleep = format!("{:.3}", reviewer_ms as f64 / 1000.0);
        let mut child = p.spawn_hook(stop_event(false), &[("FAKE_SLEEP", &sleep)]);
        // Spread over the reviewer's sleep plus the few milliseconds around it.
        let kill_after_ms = (reviewer_ms + 30) * kill_at_percent / 100;
        std::thread::sleep(Duration::from_millis(kill_after_ms));
        if child.try_wait().unwrap().is_some() {
            RANDOM_FINISHED_FIRST.fetch_add(1, Ordering::Relaxed);
        } else {
            RANDOM_KILLS.fetch_add(1, Ordering::Relaxed);
        }
        child.kill().unwrap();
        child.wait().unwrap();
        if check_after_kill(&p) {
            RANDOM_KILLED_AFTER_WRITE.fetch_add(1, Ordering::Relaxed);
        }
        eprintln!(
            "random kills so far: {} killed mid-run, {} finished before the kill, {} with the new state",
            RANDOM_KILLS.load(Ordering::Relaxed),
            RANDOM_FINISHED_FIRST.load(Ordering::Relaxed),
            RANDOM_KILLED_AFTER_WRITE.load(Ordering::Relaxed),
        );
    }
}

/// kill -9 at each step of the state write, held open by the test-only pause point
/// (`TASKIE_TEST_PAUSE_AT`, see src/store/atomic.rs): the window between the temporary file and
/// the rename lasts microseconds, so random timing would almost never hit it.
// The pause point exists only in debug builds, as `cargo test` makes them.
#[cfg(debug_assertions)]
#[test]
fn state_is_old_or_new_after_a_kill_at_every_step_of_the_write() {
    for (point, expect_new) in [
        ("before-state-write", false),
        ("before-rename", false),
        ("after-rename", true),
        ("after-state-write", true),
    ] {
        for round in 0..3 {
            let p = plan_review_due();
            let pause = format!("{point}:state.json");
            let mut child = p.spawn_hook(stop_event(false), &[("TASKIE_TEST_PAUSE_AT", &pause)]);
            let lines = stderr_lines(&mut child);
            assert!(
                wait_for_line(&lines, &format!("test pause at {pause}"), LIVENESS),
                "{point}: the hook never reached the pause point"
            );
            if point == "before-rename" {
                assert_eq!(
                    p.temp_files().len(),
                    1,
                    "the new state sits in a temporary file"
                );
            }
            child.kill().unwrap();
            child.wait().unwrap();
            let written = check_after_kill(&p);
            assert_eq!(written, expect_new, "{point}, round {round}");
        }
    }
}

/// The reviewer (a shell) and what it started (a long `sleep`, like a test run started by a
/// real reviewer) both die with the hook: the guardian kills the reviewer's process group
/// (src/reviewer/guardian.rs).
#[test]
fn a_killed_hook_takes_its_reviewer_and_its_children_down() {
    let p = Project::new().plan("p").state(due("plan-review"));
    p.script_reviewer("sleep 1000 &\necho $! > \"$here/grandchild\"\nwait");
    let mut child = p.spawn_hook(stop_event(false), &[]);
    let grandchild_file = p.reviewer_dir().join("grandchild");
    assert!(eventually(LIVENESS, || {
        std::fs::read_to_string(&grandchild_file).is_ok_and(|s| s.trim().parse::<i32>().is_ok())
    }));
    let reviewer = p.reviewer_pids()[0];
    let grandchild: libc::pid_t = std::fs::read_to_string(&grandchild_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _reap = Reap(vec![reviewer, grandchild]);
    assert!(!gone(reviewer) && !gone(grandchild));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        eventually(LIVENESS, || gone(reviewer)),
        "the reviewer outlived the hook"
    );
    assert!(
        eventually(LIVENESS, || gone(grandchild)),
        "the reviewer's child outlived the hook"
    );
    let (old, _) = old_and_new();
    assert_eq!(&p.state_bytes(), old);
}

/// Eight stops at once on one plan: one takes the plan lock and runs the reviewer, which
/// waits until the test releases it; the test releases it only after the seven others have
/// answered, which proves they did not wait for the review.
#[test]
fn concurrent_hooks_on_one_plan_run_exactly_one_reviewer() {
    const N: usize = 8;
    let p = Project::new().plan("p").state(due("plan-review"));
    p.script_reviewer(&format!(
        "i=0; while [ ! -e \"$here/release\" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n{REVIEW_FAIL}"
    ));
    let mut children: Vec<_> = (0..N)
        .map(|_| p.spawn_hook(stop_event(false), &[]))
        .collect();
    let mut answered = Vec::new();
    assert!(
        eventually(LIVENESS, || {
            let mut i = 0;
            while i < children.len() {
                if children[i].try_wait().unwrap().is_some() {
                    answered.push(finish(children.remove(i)));
                } else {
                    i += 1;
                }
            }
            answered.len() == N - 1
        }),
        "only {} of {} hooks answered while the review ran",
        answered.len(),
        N - 1
    );
    for run in &answered {
        assert!(
            run.message().contains("is busy"),
            "a hook that lost the lock says so: {}",
            run.stdout
        );
    }
    // The winner may still be on its way to starting the reviewer.
    assert!(
        eventually(LIVENESS, || p.reviewer_calls() == 1),
        "the hook holding the lock runs the reviewer"
    );
    std::fs::write(p.reviewer_dir().join("release"), "").unwrap();
    let last = finish(children.pop().unwrap());
    assert!(last.reason().contains("plan-review-1.md"));
    assert_eq!(p.reviewer_calls(), 1, "exactly one reviewer ran");
    assert_eq!(
        p.state_bytes(),
        old_and_new().1,
        "the state ends as one review left it"
    );
    let paths: Vec<String> = p
        .events()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(paths.iter().filter(|x| *x == "locked").count(), N - 1);
    assert_eq!(paths.iter().filter(|x| *x == "review-blocked").count(), 1);
}

/// Plans lock independently: each reviewer waits until both have started, so the reviews
/// can only finish if they ran at the same time.
#[test]
fn two_plans_in_one_project_are_reviewed_at_the_same_time() {
    let p = Project::new()
        .plan("a")
        .state(due("plan-review"))
        .plan("b")
        .state(due("plan-review"));
    p.script_reviewer(&format!(
        "touch \"$here/started-$$\"\n\
         i=0; while [ \"$(ls \"$here\" | grep -c '^started-')\" -lt 2 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n\
         [ \"$(ls \"$here\" | grep -c '^started-')\" -ge 2 ] || touch \"$here/alone\"\n{REVIEW_FAIL}"
    ));
    let a = p.spawn_hook(stop_event(false), &[("TASKIE_PLAN", "a")]);
    let b = p.spawn_hook(stop_event(false), &[("TASKIE_PLAN", "b")]);
    let (a, b) = (finish(a), finish(b));
    assert!(a.reason().contains(".taskie/plans/a/plan-review-1.md"));
    assert!(b.reason().contains(".taskie/plans/b/plan-review-1.md"));
    assert!(
        !p.reviewer_dir().join("alone").exists(),
        "a reviewer ran alone"
    );
    assert_eq!(p.reviewer_calls(), 2);
    for plan in ["a", "b"] {
        let state =
            std::fs::read(p.root().join(format!(".taskie/plans/{plan}/state.json"))).unwrap();
        assert_eq!(&state, &old_and_new().1, "plan {plan}");
    }
}

/// A failed review (SPEC §5 step 16): allowed with the reason, the log and the retry
/// wording; only `review_failures` changed; the log tells what happened. Returns the log.
fn assert_reviewer_failed(
    p: &Project,
    run: &crate::support::Run,
    reason: &str,
    attempt: u64,
) -> String {
    let msg = run.message();
    assert!(msg.contains(reason), "reason {reason:?} missing: {msg}");
    assert!(
        msg.contains(&format!("attempt {attempt} of 3")),
        "attempt count missing: {msg}"
    );
    if attempt < 3 {
        assert!(msg.contains("retried at the next stop"), "{msg}");
    } else {
        assert!(msg.contains("hard-stopped"), "{msg}");
    }
    let log_rel = msg
        .split("Log: ")
        .nth(1)
        .and_then(|rest| rest.split(".log").next())
        .map(|l| format!("{l}.log"))
        .unwrap_or_else(|| panic!("no log path in {msg}"));
    assert!(
        log_rel.starts_with(".taskie/logs/review-p-plan-review-"),
        "{log_rel}"
    );
    let mut expected = due("plan-review");
    expected["review_failures"] = json!(attempt);
    assert_eq!(p.state_json(), expected, "only review_failures changes");
    let last = p.last_event();
    assert_eq!(
        (last["path"].as_str(), last["outcome"].as_str()),
        (Some("reviewer-failed"), Some("allow"))
    );
    std::fs::read_to_string(p.root().join(&log_rel)).unwrap()
}

#[test]
fn a_hung_reviewer_is_stopped_at_a_fractional_timeout_and_three_failures_hard_stop() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .env("TASKIE_REVIEW_TIMEOUT", "0.5");
    p.script_reviewer("sleep 1000 &\necho $! > \"$here/grandchild\"\nsleep 1000");
    for attempt in 1..=3 {
        let run = p.stop();
        let log = assert_reviewer_failed(&p, &run, "timed out after 0.5 s", attempt);
        assert!(
            log.contains("ending: timed out; process group terminated"),
            "{log}"
        );
        let grandchild: libc::pid_t = p.grandchild_pid();
        let _reap = Reap(vec![grandchild]);
        assert!(
            eventually(LIVENESS, || gone(grandchild)),
            "the timeout killed the whole group"
        );
    }
    let run = p.stop();
    assert!(
        run.message().contains("review_failures=0"),
        "hard stop names the fix"
    );
    assert_eq!(p.reviewer_calls(), 3, "no fourth run after the hard stop");
}

#[test]
fn output_beyond_the_capture_bound_is_a_failure_and_the_log_says_truncated() {
    let p = Project::new().plan("p").state(due("plan-review"));
    // 40 MiB of result text: more than the 32 MiB the hook keeps.
    p.script_reviewer(&format!(
        "{REVIEW_PASS}\nprintf '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"'\n\
         head -c 41943040 /dev/zero | tr '\\0' a\nprintf '\"}}\\n'"
    ));
    let run = p.stop();
    let log = assert_reviewer_failed(&p, &run, "more than the 32 MiB", 1);
    assert!(
        !run.message().contains("Verdict: PASS"),
        "the review file alone did not decide"
    );
    assert!(log.contains("(truncated)"), "the log shows the cut");
    assert!(log.len() < 40 * 1024 * 1024, "the log is bounded too");
}

#[test]
fn a_reviewer_writing_only_to_stderr_is_a_failure_with_its_stderr_in_the_log() {
    let p = Project::new().plan("p").state(due("plan-review"));
    p.script_reviewer("echo 'Error: not logged in; run claude login' >&2");
    let log = assert_reviewer_failed(&p, &p.stop(), "printed no JSON result object", 1);
    assert!(log.contains("--- stdout (0 bytes kept) ---"), "{log}");
    assert!(
        log.contains("Error: not logged in; run claude login"),
        "{log}"
    );
}

#[test]
fn a_grandchild_holding_the_pipes_does_not_stall_or_spoil_the_review() {
    let p = Project::new().plan("p").state(due("plan-review"));
    p.script_reviewer(&format!(
        "sleep 1000 &\necho $! > \"$here/grandchild\"\n{REVIEW_FAIL}"
    ));
    let run = p.stop();
    let grandchild: libc::pid_t = p.grandchild_pid();
    let _reap = Reap(vec![grandchild]);
    assert!(
        run.reason().contains("Verdict: FAIL"),
        "the review itself counts"
    );
    let log = std::fs::read_dir(p.logs())
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("review-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .expect("a reviewer log");
    assert!(log.contains("ending: exited with status 0"), "{log}");
    assert!(log.contains("their process group was terminated"), "{log}");
    assert!(
        eventually(LIVENESS, || gone(grandchild)),
        "the straggler was terminated"
    );
    assert_eq!(p.state_json()["phase_iteration"], 1);
}

#[test]
fn a_reviewer_killed_by_a_signal_is_a_failure() {
    let p = Project::new().plan("p").state(due("plan-review"));
    p.script_reviewer("kill -9 $$");
    let log = assert_reviewer_failed(&p, &p.stop(), "killed by signal 9", 1);
    assert!(log.contains("ending: killed by signal 9"), "{log}");
}

#[test]
fn a_reviewer_that_is_not_executable_or_missing_is_a_failure() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new().plan("p").state(due("plan-review"));
    std::fs::set_permissions(p.reviewer_path(), std::fs::Permissions::from_mode(0o644)).unwrap();
    let log = assert_reviewer_failed(&p, &p.stop(), "could not start", 1);
    assert!(log.contains("spawn error: Permission denied"), "{log}");
    let q = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .env("TASKIE_REVIEWER", "/nonexistent/claude");
    let log = assert_reviewer_failed(&q, &q.stop(), "could not start `/nonexistent/claude`", 1);
    assert!(log.contains("spawn error: No such file"), "{log}");
}

/// The reviewer runs with every permission and could run `taskie state set` or edit
/// state.json. The hook notices the bytes changed during the review, keeps the edit, does
/// not record the review, and counts a reviewer failure on top of the edited state.
#[test]
fn a_reviewer_that_edits_state_json_keeps_its_edit_and_counts_a_failure() {
    let p = Project::new().plan("p").state(due("plan-review"));
    p.script_reviewer(&format!(
        "{REVIEW_PASS}\nprintf '{{\"phase\":\"plan-review\",\"next_phase\":\"create-tasks\",\"max_reviews\":8,\"custom\":1}}' \
         > .taskie/plans/p/state.json"
    ));
    let msg = p.stop().message();
    assert!(msg.contains("state.json was changed while it ran"), "{msg}");
    assert!(msg.contains("retried at the next stop"), "{msg}");
    let state = p.state_json();
    assert_eq!(state["next_phase"], "create-tasks", "the edit was kept");
    assert_eq!(state["custom"], 1);
    assert_eq!(
        state["review_failures"], 1,
        "and counted as a failed review"
    );
    assert_eq!(p.last_event()["path"], "reviewer-failed");
}

/// A reviewer that edits state.json at every review is hard-stopped at the third, and the
/// text names the edit as what to stop, not the reviewer program.
#[test]
fn three_reviews_that_edit_state_json_hard_stop_naming_the_edit() {
    let p = Project::new().plan("p").state(due("plan-review"));
    // Still valid, never the same bytes: a blank line more each time.
    p.script_reviewer(&format!(
        "{REVIEW_PASS}\necho >> .taskie/plans/p/state.json"
    ));
    for attempt in 1..=3 {
        let msg = p.stop().message();
        assert!(msg.contains("state.json was changed while it ran"), "{msg}");
        assert_eq!(p.state_json()["review_failures"], attempt, "{msg}");
        if attempt == 3 {
            assert!(
                msg.contains("hard-stopped")
                    && msg.contains("Leave state.json alone while a review runs")
                    && !msg.contains("Fix the reviewer"),
                "{msg}"
            );
        }
    }
}

/// A review blocks, but state.json cannot be written: the answer is an allow, and the
/// event says so, with the state that is on disk after the run (the one read).
#[cfg(debug_assertions)]
#[test]
fn when_the_state_write_fails_the_event_records_the_allow_and_the_unchanged_state() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail())
        .env("TASKIE_TEST_PAUSE_AT", "fail:before-rename:state.json");
    let before = p.state_bytes();
    let run = p.stop();
    assert!(!run.is_block(), "{}", run.stdout);
    assert!(
        run.message().contains("could not write state.json"),
        "{}",
        run.stdout
    );
    assert_eq!(p.state_bytes(), before);
    let e = p.last_event();
    assert_eq!(
        (&e["outcome"], &e["phase_after"], &e["next_phase_after"]),
        (&e["outcome"], &e["phase_before"], &e["next_phase_before"]),
    );
    assert_eq!(
        (&e["outcome"], &e["next_phase_after"]),
        (&json!("allow"), &json!("plan-review")),
        "{e}"
    );
}

#[test]
fn a_reviewer_that_breaks_or_deletes_state_json_leaves_it_alone() {
    for (edit, what) in [
        (
            "printf 'not json' > .taskie/plans/p/state.json",
            "changed (to something invalid)",
        ),
        ("rm .taskie/plans/p/state.json", "deleted"),
    ] {
        let p = Project::new().plan("p").state(due("plan-review"));
        p.script_reviewer(&format!("{REVIEW_FAIL}\n{edit}"));
        let msg = p.stop().message();
        assert!(msg.contains(&format!("state.json was {what}")), "{msg}");
        assert!(msg.contains("state.json was not written"), "{msg}");
        match std::fs::read(p.state_path()) {
            Ok(bytes) => assert_eq!(bytes, b"not json"),
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
        }
    }
}

// ---------------------------------------------------------------------------
// No kill gap (issue: "a reviewer's children can outlive a killed hook"). Every process a
// hook starts (the guardian, the reviewers, what they start) inherits the environment, so
// a marker variable finds them all in /proc, whichever group or parent they ended up with.

/// After the hook is killed, every process it started is gone (within the liveness bound).
fn assert_nothing_left(mark: &str, what: &str) {
    let mut left = Vec::new();
    assert!(
        eventually(LIVENESS, || {
            left = marked(mark);
            left.is_empty()
        }),
        "{what}: processes outlived the killed hook: {left:?}"
    );
}

/// A reviewer that starts a child holding its output, records both, and waits long.
const REVIEWER_WITH_CHILD: &str = "sleep 1000 &\necho $! > \"$here/grandchild-$$\"\nsleep 1000";

/// Kills aimed at the instants around the reviewer's start, held open by the test pause
/// points: after the guardian started but before the reviewer exists, and right after the
/// reviewer was spawned (then a random 0–3 ms later, so the reviewer may or may not have
/// started its own child). Before the guardian was started first, the second point left
/// the reviewer's child running.
#[cfg(debug_assertions)]
#[test]
fn no_process_outlives_a_kill_aimed_at_the_reviewer_start() {
    let rounds = rounds(150);
    let mut kills = 0;
    for point in ["after-guardian-start", "after-reviewer-spawn"] {
        for round in 0..rounds {
            let p = Project::new().plan("p").state(due("plan-review"));
            p.script_reviewer(REVIEWER_WITH_CHILD);
            let mark = marker();
            let pause = format!("{point}:reviewer");
            let mut child = p.spawn_hook(
                stop_event(false),
                &[("TASKIE_TEST_PAUSE_AT", &pause), (KILL_MARK, &mark)],
            );
            let lines = stderr_lines(&mut child);
            assert!(
                wait_for_line(&lines, &format!("test pause at {pause}"), LIVENESS),
                "{point}: the hook never reached the pause point"
            );
            if point == "after-reviewer-spawn" {
                std::thread::sleep(Duration::from_micros((round as u64 * 7919) % 3000));
            }
            child.kill().unwrap();
            child.wait().unwrap();
            kills += 1;
            assert_nothing_left(&mark, &format!("{point}, round {round}"));
        }
    }
    eprintln!("aimed kills: {kills}, processes left: 0");
}

/// Random kills over panels of three kinds (claude, codex and gemini fakes, each starting
/// a child of its own): from before the first member starts to while all of them run.
#[test]
fn no_process_outlives_a_random_kill_of_a_panel_of_three_kinds() {
    let rounds = rounds(300);
    for round in 0..rounds {
        let p = Project::new().plan("p").state(json!({
            "next_phase": "plan-review", "phase_iteration": 0,
            "reviewers": ["claude:opus", "codex:gpt-5-codex", "gemini:gemini-2.5-pro"],
            "review_mode": "panel"
        }));
        p.script_reviewer(REVIEWER_WITH_CHILD);
        let script = std::fs::read_to_string(p.reviewer_path()).unwrap();
        for fake in ["fake-codex", "fake-gemini"] {
            crate::support::write_executable(&p.reviewer_dir().join(fake), &script);
        }
        let mark = marker();
        let codex = p.reviewer_dir().join("fake-codex");
        let gemini = p.reviewer_dir().join("fake-gemini");
        let mut child = p.spawn_hook(
            stop_event(false),
            &[
                (KILL_MARK, &mark),
                ("TASKIE_CODEX", codex.to_str().unwrap()),
                ("TASKIE_GEMINI", gemini.to_str().unwrap()),
            ],
        );
        // Spread over the hook's start, the members' starts and their run.
        std::thread::sleep(Duration::from_micros((round as u64 * 104_729) % 40_000));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_nothing_left(&mark, &format!("panel round {round}"));
    }
    eprintln!("random panel kills: {rounds}, processes left: 0");
}

/// The guardian role is entered by an argument, so a person or a script can start it by
/// hand. It kills only a group it leads (as the hook starts it): started inside a
/// script's group, it sees end-of-file at once and must leave that group alone.
#[test]
fn the_guardian_role_started_by_hand_kills_no_group_it_does_not_lead() {
    use std::os::unix::process::CommandExt;
    let dir = crate::support::tempdir();
    let survived = dir.path().join("survived");
    let role = taskie::reviewer::guardian::ROLE_ARG;
    // The shell leads a group of its own, so the test's group is never at stake.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{HOOK}' {role} </dev/null; echo yes > '{}'",
            survived.display()
        ))
        .process_group(0)
        .status()
        .unwrap();
    assert!(
        survived.exists(),
        "the guardian role killed the group of the script that started it ({status})"
    );
}

/// The guardian is the hook's own binary started again. It must start even when the file
/// the hook was started from is gone since (removed, or replaced by an upgrade during a
/// session): here the hook runs from a copy deleted before it started, through an open
/// descriptor, and a kill still takes down what its reviewer started.
#[cfg(target_os = "linux")]
#[test]
fn a_hook_whose_binary_file_is_gone_still_guards_its_reviewer() {
    use std::os::fd::AsRawFd;
    let p = Project::new().plan("p").state(due("plan-review"));
    p.script_reviewer(REVIEWER_WITH_CHILD);
    let dir = crate::support::tempdir();
    let copy = dir.path().join("taskie-hook");
    let status = std::process::Command::new("cp")
        .arg(HOOK)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let file = std::fs::File::open(&copy).unwrap();
    std::fs::remove_file(&copy).unwrap();
    // Without close-on-exec, so the hook's exec can name it through /proc/self/fd.
    let fd = rustix::io::dup(&file).unwrap();
    let program = std::path::PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
    let mark = marker();
    let mut child = p.spawn_hook_from(&program, stop_event(false), &[(KILL_MARK, &mark)]);
    drop(fd);
    let started_child = || {
        std::fs::read_dir(p.reviewer_dir())
            .unwrap()
            .flatten()
            .any(|e| {
                e.file_name().to_string_lossy().starts_with("grandchild-")
                    && std::fs::read_to_string(e.path()).is_ok_and(|s| s.ends_with('\n'))
            })
    };
    assert!(
        eventually(LIVENESS, started_child),
        "the reviewer started its child"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_nothing_left(&mark, "a hook whose binary file is gone");
}

/// Reviewer prologue: records its process group's leader, the guardian, in
/// `$here/guardian`, and what the guardian has open in `$here/guardian-fds`, once the
/// guardian waits on its pipe (at most 20 s, as long as `LIVENESS`): by then it has
/// opened whatever it opens.
#[cfg(target_os = "linux")]
const RECORD_GUARDIAN: &str = "read -r _ _ _ _ group _ < /proc/$$/stat\n\
i=0; while [ $i -lt 2000 ] && ! grep -q '^[^)]*) S ' /proc/$group/stat 2>/dev/null; do sleep 0.01; i=$((i+1)); done\n\
ls -l /proc/$group/fd > \"$here/guardian-fds\" 2>/dev/null\n\
echo $group > \"$here/guardian\"\n";

#[cfg(target_os = "linux")]
fn recorded_pid(p: &Project, name: &str) -> libc::pid_t {
    let text = std::fs::read_to_string(p.reviewer_dir().join(name)).unwrap();
    text.trim().parse().unwrap()
}

/// A review's guardian holds none of the plan's files: the old versions of the files a
/// review replaces are freed by the hook's renames (docs/performance.md measured holding
/// them open in the guardian, and it did not pay).
#[cfg(target_os = "linux")]
#[test]
fn a_reviews_guardian_holds_no_plan_file() {
    let p = Project::new().plan("p").state(due("plan-review"));
    p.script_reviewer(&format!("{RECORD_GUARDIAN}{REVIEW_FAIL}"));
    let run = finish(p.spawn_hook(stop_event(false), &[]));
    assert!(run.stdout.contains("plan-review-1.md"), "{}", run.stdout);
    let guardian = recorded_pid(&p, "guardian");
    let _reap = Reap(vec![guardian]);
    let fds = std::fs::read_to_string(p.reviewer_dir().join("guardian-fds")).unwrap();
    assert!(
        fds.contains("->"),
        "the guardian's descriptors were listed: {fds}"
    );
    let plan_dir = p
        .state_path()
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        !fds.contains(&plan_dir),
        "the guardian holds plan files: {fds}"
    );
}

/// After a normal review the hook dismisses the guardian: the guardian exits, and what
/// the reviewer deliberately detached from its output survives (the group kill is for a
/// hook that dies, docs/reliability.md).
#[cfg(target_os = "linux")]
#[test]
fn a_dismissed_guardian_exits_and_kills_nothing() {
    let p = Project::new().plan("p").state(due("plan-review"));
    p.script_reviewer(&format!(
        "{RECORD_GUARDIAN}sleep 1000 </dev/null >/dev/null 2>&1 &\necho $! > \"$here/detached\"\n{REVIEW_FAIL}"
    ));
    let run = finish(p.spawn_hook(stop_event(false), &[]));
    assert!(run.stdout.contains("plan-review-1.md"), "{}", run.stdout);
    let (guardian, detached) = (recorded_pid(&p, "guardian"), recorded_pid(&p, "detached"));
    let _reap = Reap(vec![guardian, detached]);
    assert!(
        eventually(LIVENESS, || gone(guardian)),
        "the guardian outlived the hook's answer"
    );
    assert!(
        !gone(detached),
        "the dismissal killed what the reviewer had detached"
    );
}
