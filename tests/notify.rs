//! Notifications (SPEC §24): `TASKIE_NOTIFY` names a command the real hook runs, detached,
//! with one JSON event on stdin, for what needs a person; a notifier that fails or hangs
//! is logged and never changes the stop's answer.

use crate::support::processes::{KILL_MARK, eventually, marked, marker};
use crate::support::{Fake, Project, due, write_executable};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// A notifier that appends what it read on stdin to `got.jsonl` beside it.
fn recording_notifier(p: &Project) -> String {
    let script = p.root().join("notifier.sh");
    write_executable(
        &script,
        &format!(
            "#!/bin/sh\ncat >> '{}'\n",
            p.root().join("got.jsonl").display()
        ),
    );
    script.display().to_string()
}

/// Waits (bounded) until `path` has `n` whole lines, and returns them parsed. A line
/// still being written (no newline yet) is not counted: the writer is another process.
fn lines(path: &Path, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
        let got: Vec<Value> = whole
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
            .collect();
        if got.len() >= n || Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_hard_stop_is_notified_once_however_often_the_agent_stops_after_it() {
    let p = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-review", "max_reviews": 1}))
        .reviewer(&Fake::fail());
    let notifier = recording_notifier(&p);
    // Marks every notifier the stops start: the supervisors are spawned before each hook
    // exits, so once none is left every notification sent has been written and logged.
    let mark = marker();
    let p = p.env("TASKIE_NOTIFY", &notifier).env(KILL_MARK, &mark);
    assert!(p.stop().is_block(), "review #1 fails and blocks");
    let p = p.file("plan-post-review-1.md", "addressed\n");
    for _ in 0..3 {
        let run = p.stop();
        assert!(!run.is_block());
        assert!(run.message().contains("max_reviews"), "{}", run.message());
    }
    assert!(
        eventually(Duration::from_secs(20), || marked(&mark).is_empty()),
        "notifiers still running: {:?}",
        marked(&mark)
    );
    let got = lines(&p.root().join("got.jsonl"), 1);
    assert_eq!(got.len(), 1, "{got:?}");
    let n = &got[0];
    assert_eq!(n["event"], "hard-stop");
    assert_eq!(
        (n["plan"].as_str(), n["review"].as_str()),
        (Some("p"), Some("plan-review"))
    );
    assert!(
        n["text"].as_str().unwrap().contains("max reviews reached"),
        "{n}"
    );
    let log = lines(&p.logs().join("notify.log"), 1);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(log[0]["notifier"], "ok", "{log:?}");
}

#[test]
fn a_cycle_that_passes_and_the_plan_that_completes_are_notified() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done")])
        .file("task-1.md", "# Task 1\n")
        .state(
            json!({"phase": "post-all-code-review", "next_phase": "all-code-review",
                      "phase_iteration": 0, "clean_reviews_required": 1}),
        )
        .reviewer(&Fake::pass());
    let notifier = recording_notifier(&p);
    let p = p.env("TASKIE_NOTIFY", &notifier);
    p.stop();
    let got = lines(&p.root().join("got.jsonl"), 1);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["event"], "plan-complete", "{got:?}");

    let q = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-review", "clean_reviews_required": 1}))
        .reviewer(&Fake::pass());
    let notifier = recording_notifier(&q);
    let q = q.env("TASKIE_NOTIFY", &notifier);
    q.stop();
    let got = lines(&q.root().join("got.jsonl"), 1);
    assert_eq!(got[0]["event"], "cycle-passed", "{got:?}");
    assert!(
        got[0]["text"].as_str().unwrap().contains("create-tasks"),
        "{got:?}"
    );
}

#[test]
fn a_stop_with_nothing_for_a_person_runs_no_notifier() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail());
    let notifier = recording_notifier(&p);
    let mark = marker();
    let p = p.env("TASKIE_NOTIFY", &notifier).env(KILL_MARK, &mark);
    assert!(p.stop().is_block());
    // A notifier the stop started would still be running, or would have written.
    assert!(
        eventually(Duration::from_secs(20), || marked(&mark).is_empty()),
        "{:?}",
        marked(&mark)
    );
    assert!(!p.root().join("got.jsonl").exists());
    assert!(!p.logs().join("notify.log").exists());
}

#[test]
fn a_notifier_that_fails_or_hangs_is_logged_and_the_stop_answers_at_once() {
    for (body, said) in [
        ("exit 3", "failed: exit status: 3"),
        ("sleep 30", "timed out after 1 s and was killed"),
    ] {
        let p = Project::new()
            .plan("p")
            .state(json!({"next_phase": "plan-review", "clean_reviews_required": 1}))
            .reviewer(&Fake::pass());
        let script = p.root().join("notifier.sh");
        write_executable(&script, &format!("#!/bin/sh\ncat >/dev/null\n{body}\n"));
        let p = p
            .env("TASKIE_NOTIFY", &script.display().to_string())
            .env("TASKIE_NOTIFY_TIMEOUT", "1");
        let started = Instant::now();
        let run = p.stop();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the hook does not wait for its notifier"
        );
        assert!(run.message().contains("passed"), "{}", run.message());
        assert_eq!(p.state_json()["next_phase"], "create-tasks");
        let log = lines(&p.logs().join("notify.log"), 1);
        assert_eq!(log.len(), 1, "{body}: {log:?}");
        assert_eq!(log[0]["event"], "cycle-passed");
        assert_eq!(log[0]["notifier"], said, "{log:?}");
    }
}

/// `git config taskie.notify <command>` in the project, made a git repository.
fn git_setting(p: &Project, command: &str) {
    crate::support::git(&p.root(), &["init", "-q"]);
    crate::support::git(&p.root(), &["config", "taskie.notify", command]);
}

#[test]
fn the_repositorys_git_setting_names_the_notifier_when_taskie_notify_is_unset() {
    let p = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-review", "clean_reviews_required": 1}))
        .reviewer(&Fake::pass());
    let notifier = recording_notifier(&p);
    git_setting(&p, &notifier);
    let run = p.stop();
    assert!(run.message().contains("passed"), "{}", run.message());
    let got = lines(&p.root().join("got.jsonl"), 1);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["event"], "cycle-passed", "{got:?}");
}

#[test]
fn taskie_notify_wins_over_the_git_setting() {
    let p = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-review", "clean_reviews_required": 1}))
        .reviewer(&Fake::pass());
    let from_env = recording_notifier(&p);
    let other = p.root().join("other.sh");
    write_executable(
        &other,
        &format!(
            "#!/bin/sh\ncat >> '{}'\n",
            p.root().join("other.jsonl").display()
        ),
    );
    git_setting(&p, &other.display().to_string());
    let p = p.env("TASKIE_NOTIFY", &from_env);
    p.stop();
    let got = lines(&p.root().join("got.jsonl"), 1);
    assert_eq!(got.len(), 1, "{got:?}");
    let log = lines(&p.logs().join("notify.log"), 1);
    assert_eq!(log.len(), 1, "one notifier ran: {log:?}");
    assert!(!p.root().join("other.jsonl").exists());
}

#[test]
fn a_failing_notifier_of_the_git_setting_is_logged_and_the_stop_still_passes() {
    let p = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-review", "clean_reviews_required": 1}))
        .reviewer(&Fake::pass());
    let script = p.root().join("notifier.sh");
    write_executable(&script, "#!/bin/sh\ncat >/dev/null\nexit 7\n");
    git_setting(&p, &script.display().to_string());
    let run = p.stop();
    assert!(run.message().contains("passed"), "{}", run.message());
    assert_eq!(p.state_json()["next_phase"], "create-tasks");
    let log = lines(&p.logs().join("notify.log"), 1);
    assert_eq!(log[0]["notifier"], "failed: exit status: 7", "{log:?}");
}

#[test]
fn the_git_setting_names_the_notifier_of_a_runs_events() {
    let repo = crate::run::Repo::new(crate::run::ONE);
    let got = repo.root().join("got.jsonl");
    let script = repo.root().join("notifier.sh");
    write_executable(&script, &format!("#!/bin/sh\ncat >> '{}'\n", got.display()));
    crate::support::git(
        &repo.work(),
        &["config", "taskie.notify", &script.display().to_string()],
    );
    let out = repo
        .taskie(&["run"])
        .env_remove("TASKIE_NOTIFY")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The notifier is detached: wait (bounded) for its line, whatever the lanes' hooks
    // sent before it.
    let deadline = Instant::now() + Duration::from_secs(20);
    let events = loop {
        let events = lines(&got, 1);
        if events.iter().any(|e| e["event"] == "run-done") || Instant::now() > deadline {
            break events;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        events.iter().any(|e| e["event"] == "run-done"),
        "{events:?}"
    );
}
