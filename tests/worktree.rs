//! SPEC §8: the reviewer cannot change the work it reviews. Whatever the host, the hook
//! notes the project's uncommitted files (git) before the review and compares after: a
//! change to a tracked file voids the verdict, every change is named in the answer, the
//! review file's header and the event, its diff is saved, and nothing is reverted.

use crate::support::vendors::Vendor;
use crate::support::{Fake, Project, due, git};
use serde_json::json;

/// A project in a git repository: `src/lib.rs` and `notes.md` committed, `.taskie/`
/// committed too (as a user may), and `notes.md` changed since (the agent's
/// uncommitted work).
fn repo(p: Project) -> Project {
    std::fs::create_dir_all(p.root().join("src")).unwrap();
    std::fs::write(p.root().join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    std::fs::write(p.root().join("notes.md"), "one\n").unwrap();
    git(&p.root(), &["init", "-q"]);
    git(&p.root(), &["add", "-A"]);
    git(&p.root(), &["commit", "-q", "-m", "start"]);
    std::fs::write(p.root().join("notes.md"), "one\ntwo\n").unwrap();
    p
}

fn read(p: &Project, rel: &str) -> String {
    std::fs::read_to_string(p.root().join(rel)).unwrap()
}

#[test]
fn a_reviewer_that_changes_a_tracked_file_has_its_verdict_voided_and_the_change_named() {
    let p = repo(Project::new().plan("p").state(due("plan-review"))).reviewer(
        &Fake::pass()
            .extra("echo 'pub fn g() {}' >> src/lib.rs; echo three >> notes.md; mkdir -p out; echo log > out/test.log"),
    );
    let run = p.stop();
    let message = run.message();
    assert!(
        !run.is_block(),
        "a void review never blocks: {}",
        run.stdout
    );
    assert!(
        message.contains(
            "notes.md (tracked, modified), out/test.log (untracked, added), src/lib.rs (tracked, modified)"
        ),
        "{message}"
    );
    assert!(message.contains("its verdict does not count"), "{message}");
    assert!(message.contains("Nothing was reverted"), "{message}");
    let s = p.state_json();
    assert_eq!(
        (
            &s["review_failures"],
            &s["consecutive_clean"],
            &s["phase_iteration"]
        ),
        (&json!(1), &json!(0), &json!(0)),
        "counted as a failed attempt, never as clean"
    );
    // Nothing reverted.
    assert_eq!(read(&p, "src/lib.rs"), "pub fn f() {}\npub fn g() {}\n");
    assert_eq!(read(&p, "notes.md"), "one\ntwo\nthree\n");
    let e = p.last_event();
    assert_eq!(e["path"], "reviewer-failed");
    assert_eq!(e["worktree"]["voided"], true);
    assert_eq!(
        e["worktree"]["changed"][2],
        json!({"path": "src/lib.rs", "tracked": true, "what": "modified"})
    );
    let diff_path = e["worktree"]["diff"].as_str().unwrap().to_string();
    assert!(diff_path.starts_with(".taskie/logs/worktree-p-plan-review-1-"));
    let diff = read(&p, &diff_path);
    assert!(
        diff.contains("+pub fn g() {}"),
        "git's diff of a clean file: {diff}"
    );
    assert!(
        diff.contains(" two\n+three\n"),
        "the agent's uncommitted file: only the reviewer's change: {diff}"
    );
    assert!(diff.contains("+log\n"), "{diff}");
    let review = p.read("plan-review-1.md");
    assert!(
        review
            .starts_with("> Worktree: Changed while this review ran: notes.md (tracked, modified)"),
        "{review}"
    );
    assert!(review.contains("voids this review"), "{review}");
}

#[test]
fn a_reviewer_that_only_leaves_untracked_test_outputs_keeps_its_verdict_and_they_are_named() {
    let p = repo(Project::new().plan("p").state(due("plan-review")))
        .reviewer(&Fake::fail().extra("mkdir -p target && echo built > target/out.txt"));
    let run = p.stop();
    let reason = run.reason();
    assert!(
        reason.contains("Verdict: FAIL"),
        "the verdict stands: {reason}"
    );
    assert!(
        reason.contains("untracked files appeared or changed: target/out.txt (untracked, added)"),
        "{reason}"
    );
    let e = p.last_event();
    assert_eq!(e["verdict"], "FAIL");
    assert!(e["worktree"].get("voided").is_none(), "{e}");
    assert_eq!(
        e["worktree"]["changed"],
        json!([{"path": "target/out.txt", "tracked": false, "what": "added"}]),
        "the review file and the hook's own files under .taskie/ are not changes"
    );
    assert!(
        p.read("plan-review-1.md")
            .contains("> Worktree: Changed while this review ran: target/out.txt (untracked, added). Only untracked files changed")
    );
}

#[test]
fn a_review_that_changes_nothing_says_nothing_about_the_worktree() {
    let p = repo(Project::new().plan("p").state(due("plan-review"))).reviewer(&Fake::fail());
    let reason = p.stop().reason();
    assert!(!reason.contains("While the review ran"), "{reason}");
    assert!(p.last_event().get("worktree").is_none());
    assert!(!p.read("plan-review-1.md").contains("Worktree"));
}

#[test]
fn outside_a_git_repository_the_review_stands_and_the_event_says_the_check_was_skipped() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail().extra("echo changed > plan-notes.txt"));
    let reason = p.stop().reason();
    assert!(reason.contains("Verdict: FAIL"), "{reason}");
    assert_eq!(
        p.last_event()["worktree"],
        json!({"skipped": "not a git repository"})
    );
}

#[test]
fn a_panel_whose_claude_member_changes_a_tracked_file_is_void_as_a_whole() {
    let mut state = due("plan-review");
    state["reviewers"] = json!(["claude:opus", "codex:gpt-5-codex"]);
    state["review_mode"] = json!("panel");
    let p = repo(Project::new().plan("p").state(state))
        .reviewer(&Fake::pass().extra("echo '// tampered' >> src/lib.rs"))
        .codex(&Vendor::pass());
    let run = p.stop();
    let message = run.message();
    assert!(!run.is_block(), "{}", run.stdout);
    assert!(
        message.contains("src/lib.rs (tracked, modified)")
            && message.contains("its verdict does not count"),
        "{message}"
    );
    let s = p.state_json();
    assert_eq!(
        (
            &s["consecutive_clean"],
            &s["review_failures"],
            &s["next_phase"]
        ),
        (&json!(0), &json!(1), &json!("plan-review")),
        "two passing members, yet no clean review counts"
    );
    let e = p.last_event();
    assert_eq!(
        (&e["worktree"]["voided"], &e["path"]),
        (&json!(true), &json!("reviewer-failed"))
    );
}
