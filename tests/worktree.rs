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

/// Stops once and checks that the review was void: no block, its verdict not counted.
/// The answer, for the test's own checks.
fn stop_void(p: &Project) -> String {
    let run = p.stop();
    let message = run.message();
    assert!(
        !run.is_block(),
        "a void review never blocks: {}",
        run.stdout
    );
    assert!(message.contains("its verdict does not count"), "{message}");
    message
}

#[test]
fn three_void_reviews_in_a_row_hard_stop_naming_the_checkout_not_the_reviewer_program() {
    let p = repo(Project::new().plan("p").state(due("plan-review")))
        .reviewer(&Fake::pass().extra("echo 'pub fn g() {}' >> src/lib.rs"));
    for attempt in 1..=3 {
        let message = stop_void(&p);
        assert_eq!(p.state_json()["review_failures"], attempt, "{message}");
        if attempt < 3 {
            assert!(message.contains("retried at the next stop"), "{message}");
            continue;
        }
        assert!(
            message.contains("reviews for this plan are hard-stopped")
                && message.contains("Find what changed the checkout while the reviews ran")
                && message.contains("another session working in this checkout")
                && message.contains("taskie state set --plan p review_failures=0"),
            "{message}"
        );
        // The reviewer program may be fine: the text does not send the user to it.
        assert!(
            !message.contains("Fix the reviewer") && !message.contains("TASKIE_REVIEWER"),
            "{message}"
        );
    }
}

#[test]
fn a_reviewer_that_changes_a_tracked_file_has_its_verdict_voided_and_the_change_named() {
    let p = repo(Project::new().plan("p").state(due("plan-review"))).reviewer(
        &Fake::pass()
            .extra("echo 'pub fn g() {}' >> src/lib.rs; echo three >> notes.md; mkdir -p out; echo log > out/test.log"),
    );
    let message = stop_void(&p);
    assert!(
        message.contains(
            "notes.md (tracked, modified), out/test.log (untracked, added), src/lib.rs (tracked, modified)"
        ),
        "{message}"
    );
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
    let v = p.taskie_json(&["status", "--json"]);
    assert_eq!(
        (
            e.get("reviews"),
            &v["spend"]["plan"]["reviews"],
            &v["spend"]["plan"]["cost_usd"]
        ),
        (None, &json!(0), &json!(0.01)),
        "a void review counts in cost, never as a review: {v}"
    );
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
    let message = stop_void(&p);
    assert!(
        message.contains("src/lib.rs (tracked, modified)"),
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

/// The commit HEAD of [`repo`]'s project is at.
fn head(p: &Project) -> String {
    git(&p.root(), &["rev-parse", "HEAD"]).trim().to_string()
}

#[test]
fn a_reviewer_that_commits_without_changing_a_file_has_its_verdict_voided_and_the_moved_head_named()
{
    let p = repo(Project::new().plan("p").state(due("plan-review"))).reviewer(&Fake::pass().extra(
        "git -c user.name=r -c user.email=r@example.com commit -q -m 'by the reviewer' notes.md",
    ));
    let start = head(&p);
    let run = p.stop();
    let message = run.message();
    assert!(!run.is_block(), "{}", run.stdout);
    let now = head(&p);
    assert_ne!(
        start, now,
        "the reviewer's commit is kept: nothing is reverted"
    );
    assert!(
        message.contains("HEAD moved from ") && message.contains(&start[..8]),
        "{message}"
    );
    assert!(
        message.contains(&format!("git log {start}..{now}")),
        "{message}"
    );
    assert!(message.contains("its verdict does not count"), "{message}");
    assert_eq!(read(&p, "notes.md"), "one\ntwo\n", "no file changed");
    let s = p.state_json();
    assert_eq!(
        (&s["review_failures"], &s["consecutive_clean"]),
        (&json!(1), &json!(0)),
        "counted as a failed attempt, never as clean"
    );
    let e = p.last_event();
    assert_eq!(e["path"], "reviewer-failed");
    assert_eq!(e["worktree"]["voided"], true);
    assert_eq!(e["worktree"]["head"]["before"]["commit"], json!(start));
    assert_eq!(e["worktree"]["head"]["after"]["commit"], json!(now));
    assert!(
        p.read("plan-review-1.md")
            .starts_with("> Worktree: Changed while this review ran: HEAD moved from "),
        "{}",
        p.read("plan-review-1.md")
    );
}

#[test]
fn a_reviewer_that_stages_an_untracked_file_has_its_verdict_voided_and_the_index_named() {
    let p = repo(Project::new().plan("p").state(due("plan-review")))
        .reviewer(&Fake::pass().extra("git add draft.txt"));
    std::fs::write(p.root().join("draft.txt"), "the agent's new file\n").unwrap();
    let run = p.stop();
    let message = run.message();
    assert!(!run.is_block(), "{}", run.stdout);
    assert!(
        message.contains("the index changed for draft.txt"),
        "{message}"
    );
    assert!(message.contains("its verdict does not count"), "{message}");
    let e = p.last_event();
    assert_eq!(e["path"], "reviewer-failed");
    assert_eq!(
        (&e["worktree"]["voided"], &e["worktree"]["staged"]),
        (&json!(true), &json!(["draft.txt"]))
    );
    assert!(
        e["worktree"].get("head").is_none(),
        "HEAD did not move: {e}"
    );
    assert_eq!(p.state_json()["consecutive_clean"], json!(0));
}

#[test]
fn a_reviewer_whose_cli_ran_without_its_sandbox_keeps_its_verdict_and_the_review_says_so() {
    let p = repo(Project::new().plan("p").state(due("plan-review"))).reviewer(&Fake::fail().extra(
        "echo '⚠ Sandbox disabled: sandbox is enabled but dependencies are missing: bubblewrap (bwrap) not installed' >&2",
    ));
    let reason = p.stop().reason();
    assert!(
        reason.contains("Verdict: FAIL"),
        "the verdict stands: {reason}"
    );
    let e = p.last_event();
    assert_eq!(
        e["worktree"],
        json!({"unsandboxed": "sandbox is enabled but dependencies are missing: bubblewrap (bwrap) not installed"})
    );
    let review = p.read("plan-review-1.md");
    assert!(
        review.contains(
            "\n> Sandbox: the reviewer's shell commands ran without Claude Code's sandbox \
             (sandbox is enabled but dependencies are missing: bubblewrap (bwrap) not installed)"
        ),
        "{review}"
    );
}

/// A `bwrap` that cannot create its namespaces (a container without user namespaces)
/// would make Claude Code fail every command of the reviewer: the hook tries it first,
/// and then asks for no sandbox and says why.
#[cfg(target_os = "linux")]
#[test]
fn where_bubblewrap_cannot_start_the_reviewer_runs_without_the_sandbox_and_the_review_says_why() {
    let bin = crate::support::broken_bwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let p = repo(Project::new().plan("p").state(due("plan-review")))
        .reviewer(&Fake::fail())
        .env("PATH", &path);
    let reason = p.stop().reason();
    assert!(
        reason.contains("Verdict: FAIL"),
        "the verdict stands: {reason}"
    );
    let settings = p
        .reviewer_args()
        .into_iter()
        .skip_while(|a| a != "--settings")
        .nth(1)
        .expect("--settings");
    let settings: serde_json::Value = serde_json::from_str(&settings).unwrap();
    assert_eq!(settings["sandbox"]["enabled"], false, "{settings}");
    assert_eq!(
        p.last_event()["worktree"]["unsandboxed"],
        json!(
            "bubblewrap cannot start a sandbox here: bwrap: No permissions to create new namespace"
        )
    );
    assert!(p.read("plan-review-1.md").contains("\n> Sandbox: "));
}

/// Another session working in the same checkout changes a tracked file while this
/// session's review runs. The hook cannot tell who wrote it: the verdict judged work that
/// changed under it, so it is void (retried at the next stop), and the texts say the
/// change may be the other session's, never that the reviewer made it.
#[test]
fn a_tracked_file_another_session_changes_during_the_review_voids_it_without_blaming_the_reviewer()
{
    // The reviewer announces it runs, then waits until the other session has written.
    let p =
        repo(Project::new().plan("p").state(due("plan-review"))).reviewer(&Fake::pass().extra(
            "touch \"$here/reviewing\"; while [ ! -e \"$here/written\" ]; do sleep 0.05; done",
        ));
    let (reviewing, written) = (
        p.reviewer_dir().join("reviewing"),
        p.reviewer_dir().join("written"),
    );
    let lib = p.root().join("src/lib.rs");
    let other_session = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !reviewing.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the reviewer never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::fs::write(&lib, "pub fn f() { /* the other session's edit */ }\n").unwrap();
        std::fs::write(&written, "").unwrap();
    });
    let message = stop_void(&p);
    other_session.join().unwrap();
    assert!(
        message.contains("src/lib.rs (tracked, modified)"),
        "{message}"
    );
    assert!(
        message.contains("or by another session working in this checkout"),
        "the change may be the other session's: {message}"
    );
    assert!(
        !message.contains("changed what git tracks while it reviewed"),
        "the reviewer is not blamed for what it may not have done: {message}"
    );
    assert_eq!(
        read(&p, "src/lib.rs"),
        "pub fn f() { /* the other session's edit */ }\n",
        "the other session's work is kept"
    );
    let s = p.state_json();
    assert_eq!(
        (&s["review_failures"], &s["consecutive_clean"]),
        (&json!(1), &json!(0)),
        "void: a failed attempt, retried at the next stop"
    );
}

/// `.taskie` in a subdirectory of the repository (a project in a monorepo): the reviewer
/// works from that subdirectory, but the work it reviews is the repository's, so a
/// tracked file above the project counts as much as one inside it. Another project's
/// `.taskie` (its own hook writes there) is not the reviewed work.
#[test]
fn in_a_project_below_the_repositorys_top_a_change_anywhere_in_the_repository_is_seen() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail().extra(
            "echo tampered >> ../lib/top.rs; echo built > out.txt; echo other > ../other/.taskie/state.json",
        ));
    let top = p.root().parent().unwrap().to_path_buf();
    std::fs::create_dir_all(top.join("lib")).unwrap();
    std::fs::create_dir_all(top.join("other/.taskie")).unwrap();
    std::fs::write(top.join("lib/top.rs"), "pub fn top() {}\n").unwrap();
    std::fs::write(top.join("other/.taskie/state.json"), "{}\n").unwrap();
    std::fs::write(top.join(".gitignore"), "/reviewer/\n").unwrap();
    git(&top, &["init", "-q"]);
    git(&top, &["add", "-A"]);
    git(&top, &["commit", "-q", "-m", "start"]);
    stop_void(&p);
    let e = p.last_event();
    assert_eq!(
        e["worktree"]["changed"],
        json!([
            {"path": "lib/top.rs", "tracked": true, "what": "modified"},
            {"path": "project/out.txt", "tracked": false, "what": "added"},
        ]),
        "paths from the repository's top; the project's and other projects' .taskie left out"
    );
    let diff =
        std::fs::read_to_string(p.root().join(e["worktree"]["diff"].as_str().unwrap())).unwrap();
    assert!(diff.contains("+tampered"), "{diff}");
}

/// File names git would read as patterns or magic, or that hold spaces and newlines, are
/// named as they are and their diffs are theirs alone.
#[test]
fn files_with_spaces_newlines_and_pattern_characters_in_their_names_are_named_and_diffed_exactly() {
    let names = [
        "a b.rs",
        "odd\nname.rs",
        ":!magic.rs",
        "star*.rs",
        "starry.rs",
    ];
    let p = repo(Project::new().plan("p").state(due("plan-review"))).reviewer(&Fake::fail().extra(
        "echo changed >> 'a b.rs'; echo changed >> \"$(printf 'odd\\nname.rs')\"; \
         echo changed >> ':!magic.rs'; echo changed >> 'star*.rs'",
    ));
    for n in names {
        std::fs::write(p.root().join(n), format!("{n:?} before\n")).unwrap();
    }
    git(&p.root(), &["add", "-A"]);
    git(&p.root(), &["commit", "-q", "-m", "odd names"]);
    std::fs::write(
        p.root().join("starry.rs"),
        "the agent's own uncommitted work\n",
    )
    .unwrap();
    stop_void(&p);
    let e = p.last_event();
    let changed: Vec<&str> = e["worktree"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        changed,
        [":!magic.rs", "a b.rs", "odd\nname.rs", "star*.rs"]
    );
    let diff =
        std::fs::read_to_string(p.root().join(e["worktree"]["diff"].as_str().unwrap())).unwrap();
    assert_eq!(diff.matches("+changed").count(), 4, "{diff}");
    assert!(
        !diff.contains("the agent's own") && !diff.contains("notes.md"),
        "only the changed files' diffs: {diff}"
    );
}

/// Without a git program the comparison cannot be made: the review stands and the event
/// says why.
#[test]
fn without_a_git_program_the_review_stands_and_the_event_says_the_check_was_skipped() {
    let bin = crate::support::tempdir();
    for tool in ["sh", "sed", "cat", "env", "dirname", "mkdir"] {
        let found = which::which(tool).unwrap();
        std::os::unix::fs::symlink(found, bin.path().join(tool)).unwrap();
    }
    let p = repo(Project::new().plan("p").state(due("plan-review")))
        .reviewer(&Fake::fail().extra("echo tampered >> src/lib.rs"))
        .env("PATH", bin.path().to_str().unwrap());
    let reason = p.stop().reason();
    assert!(
        reason.contains("Verdict: FAIL"),
        "the review stands: {reason}"
    );
    assert_eq!(
        p.last_event()["worktree"],
        json!({"skipped": "no git program"})
    );
}

/// The plan is the work a plan review judges: a reviewer that edits the plan's own files
/// has its verdict voided, while its review file and Taskie's files beside them are not
/// changes.
#[test]
fn a_reviewer_that_edits_the_plan_it_reviews_has_its_verdict_voided() {
    let p = repo(Project::new().plan("p").state(due("plan-review")))
        .reviewer(&Fake::pass().extra("echo 'Step 3: none' >> .taskie/plans/p/plan.md"));
    stop_void(&p);
    assert_eq!(
        p.last_event()["worktree"]["changed"],
        json!([{"path": ".taskie/plans/p/plan.md", "tracked": true, "what": "modified"}]),
        "the plan is named; the review file and state.json are not"
    );
    assert_eq!(p.state_json()["consecutive_clean"], json!(0));
}
