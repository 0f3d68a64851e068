//! Sessions (SPEC §17) and the project found from a subdirectory (SPEC §5 step 4).

use crate::support::{Project, due};
use serde_json::json;
use std::time::{Duration, SystemTime};

/// Two plans, `a` and `b`, each with a plan review due; `a` is modified last.
fn two_plans() -> Project {
    let p = Project::new()
        .plan("b")
        .state(due("plan-review"))
        .plan("a")
        .state(due("plan-review"));
    age_plan(&p, "b", 60);
    p
}

/// Sets every file of plan `id` `secs` seconds into the past.
fn age_plan(p: &Project, id: &str, secs: u64) {
    let dir = p.root().join(".taskie/plans").join(id);
    for e in std::fs::read_dir(dir).unwrap() {
        let f = std::fs::File::options()
            .append(true)
            .open(e.unwrap().path())
            .unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(secs))
            .unwrap();
    }
}

fn stop_as(p: &Project, session: &str) -> crate::support::Run {
    p.run_hook(json!({"hook_event_name": "Stop", "stop_hook_active": false, "session_id": session}))
}

fn bind(p: &Project, session: &str, plan: &str) {
    p.taskie(&["continue-plan", "--plan", plan])
        .env("CLAUDE_CODE_SESSION_ID", session)
        .assert()
        .success();
}

fn reviewed_plan(p: &Project) -> String {
    let e = p.last_event();
    assert_eq!(e["path"], "review-blocked", "a review ran: {e}");
    e["plan"].as_str().unwrap().to_owned()
}

#[test]
fn a_command_binds_its_session_and_the_sessions_stop_reviews_only_that_plan() {
    let p = two_plans();
    bind(&p, "s-b", "b");
    let run = stop_as(&p, "s-b");
    assert!(run.is_block(), "{}", run.stdout);
    assert_eq!(
        reviewed_plan(&p),
        "b",
        "plan a is newer, but s-b is bound to b"
    );
    assert!(p.root().join(".taskie/sessions/s-b.json").is_file());
}

#[test]
fn two_sessions_in_one_project_never_review_each_others_plan() {
    let p = two_plans();
    bind(&p, "s-a", "a");
    bind(&p, "s-b", "b");
    stop_as(&p, "s-b");
    assert_eq!(reviewed_plan(&p), "b");
    stop_as(&p, "s-a");
    assert_eq!(reviewed_plan(&p), "a");
    // b is now the newest plan; a's session still stays on a.
    age_plan(&p, "a", 120);
    p.set_reviewer(&crate::support::Fake::fail());
    let run = stop_as(&p, "s-a");
    assert!(
        run.message().contains("plan 'a'"),
        "s-a is reminded about its own plan only: {}",
        run.stdout
    );
}

#[test]
fn an_unbound_session_leaves_the_newest_plan_alone_while_another_session_is_active_on_it() {
    let p = two_plans();
    bind(&p, "s-a", "a");
    let run = stop_as(&p, "s-new");
    assert!(!run.is_block(), "{}", run.stdout);
    let m = run.message();
    assert!(
        m.contains("plan a is being worked on by session s-a"),
        "{m}"
    );
    assert!(m.contains("/taskie:continue-plan"), "{m}");
    for plan in ["a", "b"] {
        let review = p
            .root()
            .join(format!(".taskie/plans/{plan}/plan-review-1.md"));
        assert!(!review.exists(), "an older plan is never reviewed instead");
    }
    assert!(!p.root().join(".taskie/sessions/s-new.json").exists());
}

#[test]
fn an_unbound_session_takes_the_newest_plan_over_from_a_session_idle_for_half_an_hour() {
    let p = two_plans();
    bind(&p, "s-a", "a");
    let f = std::fs::File::options()
        .append(true)
        .open(p.root().join(".taskie/sessions/s-a.json"))
        .unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(31 * 60))
        .unwrap();
    let run = stop_as(&p, "s-new");
    assert!(run.is_block(), "{}", run.stdout);
    assert_eq!(
        reviewed_plan(&p),
        "a",
        "the newest plan, never an older one"
    );
    let binding = std::fs::read_to_string(p.root().join(".taskie/sessions/s-new.json")).unwrap();
    assert!(binding.contains("\"plan\": \"a\""), "{binding}");
}

#[test]
fn an_unbound_session_binds_on_its_first_stop_so_its_next_stop_needs_no_scan() {
    let p = Project::new()
        .plan("a")
        .state(json!({"phase": "new-plan", "next_phase": null}));
    let run = stop_as(&p, "s-1");
    assert!(!run.is_block(), "{}", run.stdout);
    let binding = std::fs::read_to_string(p.root().join(".taskie/sessions/s-1.json")).unwrap();
    assert!(binding.contains("\"plan\": \"a\""), "{binding}");
}

#[test]
fn without_a_session_id_the_newest_plan_is_chosen_as_before() {
    let p = two_plans();
    bind(&p, "s-b", "b");
    p.stop();
    assert_eq!(reviewed_plan(&p), "a");
}

#[test]
fn running_continue_plan_with_a_plan_takes_it_over_from_another_session() {
    let p = two_plans();
    bind(&p, "s-old", "a");
    bind(&p, "s-new", "a");
    stop_as(&p, "s-new");
    assert_eq!(reviewed_plan(&p), "a");
    assert!(
        !p.root().join(".taskie/sessions/s-old.json").exists(),
        "the old session's binding is gone"
    );
}

#[test]
fn a_bound_stop_does_not_scan_the_other_plans() {
    let p = two_plans();
    // A directory with an invalid plan id is reported by every scan of .taskie/plans.
    std::fs::create_dir_all(p.root().join(".taskie/plans/not a plan")).unwrap();
    let scanned = stop_as(&p, "s-x");
    assert!(
        scanned.stderr.contains("not a valid plan id"),
        "{}",
        scanned.stderr
    );
    let bound = stop_as(&p, "s-x");
    assert!(
        !bound.stderr.contains("not a valid plan id"),
        "a bound stop reads only its plan: {}",
        bound.stderr
    );
}

#[test]
fn a_binding_to_a_plan_that_was_deleted_falls_back_to_the_usual_rule() {
    let p = two_plans();
    bind(&p, "s-b", "b");
    std::fs::remove_dir_all(p.root().join(".taskie/plans/b")).unwrap();
    stop_as(&p, "s-b");
    assert_eq!(reviewed_plan(&p), "a");
}

#[test]
fn the_hook_finds_the_project_from_a_subdirectory_of_the_session() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let deep = p.root().join("src/deep");
    std::fs::create_dir_all(&deep).unwrap();
    let run = p.run_hook(json!({"hook_event_name": "Stop", "cwd": deep}));
    assert!(run.is_block(), "the review ran: {}", run.stdout);
    assert_eq!(p.reviewer_calls(), 1);
    assert_eq!(
        p.reviewer_saw("cwd").trim(),
        p.root().to_str().unwrap(),
        "the reviewer runs in the project directory"
    );
}

#[test]
fn the_project_search_stops_at_claude_project_dir() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let inner = p.root().join("vendored/lib");
    std::fs::create_dir_all(&inner).unwrap();
    let out = p
        .hook_command()
        .env("CLAUDE_PROJECT_DIR", p.root().join("vendored"))
        .write_stdin(json!({"hook_event_name": "Stop", "cwd": inner}).to_string())
        .output()
        .unwrap();
    let run = crate::support::Run::from(out);
    run.assert_silent();
    assert_eq!(p.reviewer_calls(), 0);
}

#[test]
fn a_taskie_command_run_by_a_reviewer_binds_no_session() {
    let p = two_plans();
    p.taskie(&["continue-plan", "--plan", "a"])
        .env("CLAUDE_CODE_SESSION_ID", "reviewer-session")
        .env("TASKIE_HOOK_SKIP", "1")
        .assert()
        .success();
    assert!(!p.root().join(".taskie/sessions").exists());
}

#[test]
fn commands_never_hide_a_plan_bound_to_another_session() {
    let p = two_plans();
    bind(&p, "s-old", "a");
    // A new session (after /clear or a restart) and the user's terminal both find plan a.
    let out = p
        .taskie(&["continue-plan"])
        .env("CLAUDE_CODE_SESSION_ID", "s-new")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("plan-review"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr.contains("plan a is also bound to session s-old")
            && stderr.contains("that session's stops review this plan too"),
        "the note says why it matters: {stderr}"
    );
    assert!(
        p.root().join(".taskie/sessions/s-new.json").is_file(),
        "continue-plan binds the new session"
    );
    for args in [&["status"][..], &["validate"], &["state", "get", "phase"]] {
        let out = p
            .taskie(args)
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_hook_without_a_session_id_skips_no_plan() {
    let p = two_plans();
    bind(&p, "s-other", "a");
    let run = p.run_hook(json!({"hook_event_name": "Stop", "stop_hook_active": false}));
    assert!(run.is_block(), "{}", run.stdout);
    assert_eq!(
        reviewed_plan(&p),
        "a",
        "no session id: the newest plan, skipping nothing"
    );
}
