//! The defects adversarial testing found, one test (or a few) per defect:
//! hostile files where plan files belong, hostile environment values and arguments,
//! interrupted and concurrent runs. Every test here failed before its fix.

use crate::support::processes::{HOOK, ProjectExt, REVIEW_FAIL};
use crate::support::{Fake, Project, Run, Shape, due};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Long enough for any healthy run on a loaded machine; a run that waits on a FIFO would
/// wait forever, so the guard turns that regression into a failure instead of a hang.
const GUARD: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().unwrap().success();
    assert!(ok, "mkfifo {}", path.display());
}

fn guarded_hook(p: &Project, args: &[&str], stdin: &str) -> Run {
    let out = p
        .hook_command()
        .args(args)
        .timeout(GUARD)
        .write_stdin(stdin.to_owned())
        .output()
        .expect("the hook finished within the guard");
    Run::from(out)
}

fn guarded_taskie(p: &Project, args: &[&str]) -> Run {
    let out = p
        .taskie(args)
        .timeout(GUARD)
        .output()
        .expect("taskie finished within the guard");
    Run::from(out)
}

fn stop_event(p: &Project) -> String {
    json!({"hook_event_name": "Stop", "stop_hook_active": false, "cwd": p.root()}).to_string()
}

/// Every reader of the plan: the hook, `--dry-run`, `status`, `state set`, `validate`.
fn every_reader_names(p: &Project, name: &str) {
    let hook = guarded_hook(p, &[], &stop_event(p));
    let text = hook.message();
    assert!(text.contains(name), "hook: {text}");
    let dry = guarded_hook(p, &["--dry-run"], &stop_event(p));
    assert_eq!(dry.code, Some(0), "dry-run: {}", dry.stderr);
    assert!(
        dry.stdout.contains(name) || dry.stderr.contains(name),
        "dry-run: {} {}",
        dry.stdout,
        dry.stderr
    );
    // status reports what it can read and names what it cannot.
    let status = guarded_taskie(p, &["status"]);
    assert!(
        status.stdout.contains(name) || status.stderr.contains(name),
        "status: {} {}",
        status.stdout,
        status.stderr
    );
    // state set reads only state.json: it finishes, and names the file when it fails.
    let run = guarded_taskie(p, &["state", "set", "max_reviews=3"]);
    if run.code != Some(0) {
        assert!(run.stderr.contains(name), "state set: {}", run.stderr);
    }
    assert_eq!(run.code == Some(0), name != "state.json", "{}", run.stderr);
}

// 1. Non-regular files never make a reader wait.

#[test]
fn a_fifo_as_state_json_is_an_error_naming_it_for_every_reader() {
    let p = Project::new().plan("p");
    mkfifo(&p.plan_dir().join("state.json"));
    every_reader_names(&p, "state.json");
}

#[test]
fn a_fifo_as_tasks_md_is_an_error_naming_it_for_every_reader() {
    let p = Project::new().plan("p").state(due("plan-review"));
    mkfifo(&p.plan_dir().join("tasks.md"));
    every_reader_names(&p, "tasks.md");
}

#[test]
fn a_fifo_as_the_lock_file_is_an_error_naming_it() {
    let p = Project::new().plan("p").state(due("plan-review"));
    std::fs::create_dir_all(p.root().join(".taskie/locks")).unwrap();
    mkfifo(&p.root().join(".taskie/locks/p.lock"));
    let text = guarded_hook(&p, &[], &stop_event(&p)).message();
    assert!(text.contains("p.lock"), "{text}");
    assert_eq!(p.reviewer_calls(), 0);
    let run = guarded_taskie(&p, &["state", "set", "max_reviews=3"]);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("p.lock"), "{}", run.stderr);
}

#[test]
fn a_fifo_as_the_event_log_does_not_hold_up_the_hook() {
    let p = Project::new().plan("p").state(due("plan-review"));
    std::fs::create_dir_all(p.logs()).unwrap();
    mkfifo(&p.logs().join("events.jsonl"));
    let run = guarded_hook(&p, &[], &stop_event(&p));
    assert!(run.is_block(), "the review ran: {}", run.stdout);
    assert!(run.stderr.contains("events.jsonl"), "{}", run.stderr);
    // A hard stop reads the log for its verdict history: that must not wait either.
    let p = Project::new()
        .plan("p")
        .state(json!({"phase": "plan-review", "next_phase": "plan-review",
        "phase_iteration": 8, "max_reviews": 8}));
    std::fs::create_dir_all(p.logs()).unwrap();
    mkfifo(&p.logs().join("events.jsonl"));
    let text = guarded_hook(&p, &[], &stop_event(&p)).message();
    assert!(text.contains("max_reviews"), "{text}");
    let run = guarded_taskie(&p, &["status"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

// 2. TASKIE_REVIEW_TIMEOUT out of range.

#[test]
fn a_review_timeout_too_large_falls_back_to_the_default_with_a_warning() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .env("TASKIE_REVIEW_TIMEOUT", "1e20");
    let dry = guarded_hook(&p, &["--dry-run"], &stop_event(&p));
    assert_eq!(dry.code, Some(0), "{}", dry.stderr);
    assert!(
        dry.stderr.contains("TASKIE_REVIEW_TIMEOUT"),
        "{}",
        dry.stderr
    );
    let run = p.stop();
    assert!(
        run.is_block(),
        "the review ran: {} {}",
        run.stdout,
        run.stderr
    );
    assert_eq!(p.reviewer_calls(), 1);
    assert!(
        run.stderr.contains("TASKIE_REVIEW_TIMEOUT"),
        "{}",
        run.stderr
    );
}

// 3. Size cap.

#[test]
fn an_oversized_tasks_md_is_an_error_naming_the_file_and_the_limit() {
    let p = Project::new().plan("p").state(due("tasks-review"));
    let f = std::fs::File::create(p.plan_dir().join("tasks.md")).unwrap();
    f.set_len(64 * 1024 * 1024).unwrap();
    let text = guarded_hook(&p, &[], &stop_event(&p)).message();
    assert!(text.contains("tasks.md") && text.contains("MiB"), "{text}");
    assert_eq!(p.reviewer_calls(), 0);
}

#[test]
fn tasks_md_linked_to_dev_zero_is_an_error_not_an_endless_read() {
    let p = Project::new().plan("p").state(due("tasks-review"));
    std::os::unix::fs::symlink("/dev/zero", p.plan_dir().join("tasks.md")).unwrap();
    let text = guarded_hook(&p, &[], &stop_event(&p)).message();
    assert!(text.contains("tasks.md"), "{text}");
    let run = guarded_taskie(&p, &["status"]);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(run.stderr.contains("tasks.md"), "{}", run.stderr);
}

// 4. next_phase set to a review phase starts a fresh cycle.

#[test]
fn setting_next_phase_to_another_review_starts_a_fresh_cycle() {
    let p = Project::new().plan("p").tasks(&[(1, "done")]).state(
        json!({"phase": "code-review", "next_phase": "complete-task", "phase_iteration": 3,
            "consecutive_clean": 3, "review_model": "sonnet", "current_task": 1, "max_reviews": 8}),
    );
    let route = p.run_taskie(&["continue-plan"]);
    let out = route.ok();
    assert!(out.contains("all-code-review"), "{out}");
    p.run_taskie(&["state", "set", "next_phase=all-code-review"])
        .ok();
    let s = p.state_json();
    assert_eq!(s["next_phase"], "all-code-review");
    assert_eq!(s["phase_iteration"], 0, "{s}");
    assert_eq!(s["consecutive_clean"], 0, "{s}");
    assert_eq!(s["review_model"], "opus", "{s}");
    // One PASS no longer ends the whole-implementation review.
    let msg = p.stop();
    assert!(msg.is_block(), "{}", msg.stdout);
}

#[test]
fn setting_next_phase_back_to_the_current_review_keeps_the_cycle() {
    let p = Project::new()
        .plan("p")
        .file("plan-review-1.md", "x")
        .state(
            json!({"phase": "plan-review", "next_phase": "post-plan-review", "phase_iteration": 1,
            "consecutive_clean": 1, "review_model": "sonnet", "max_reviews": 8}),
        );
    p.run_taskie(&["state", "set", "next_phase=plan-review"])
        .ok();
    let s = p.state_json();
    assert_eq!(
        (s["phase_iteration"].clone(), s["consecutive_clean"].clone()),
        (json!(1), json!(1))
    );
}

// 5. An interrupted review is re-run.

#[test]
fn a_missing_review_file_reruns_the_interrupted_review() {
    let p = Project::new()
        .plan("p")
        .file("plan-review-1.md", "# Review\n\nVERDICT: FAIL\n")
        .file("plan-post-review-1.md", "done\n")
        .state(
            json!({"phase": "plan-review", "next_phase": "post-plan-review", "phase_iteration": 2,
            "consecutive_clean": 0, "review_model": "opus", "max_reviews": 8}),
        )
        .reviewer(&Fake::fail());
    let run = p.stop();
    assert_eq!(p.reviewer_calls(), 1, "{}", run.stdout);
    let reason = run.reason();
    assert!(reason.contains("plan-review #2"), "{reason}");
    assert!(p.exists("plan-review-2.md"));
    assert_eq!(p.state_json()["phase_iteration"], 2);
}

// 6. Each structure rule names its own fix.

#[test]
fn a_missing_post_review_is_fixed_by_writing_it_never_by_removing_the_review() {
    let p = Project::new()
        .plan("p")
        .file("plan-review-1.md", "x")
        .file("plan-review-2.md", "x")
        .state(due("plan-review"));
    let reason = p.stop().reason();
    assert!(
        reason.contains("plan-review-1.md requires plan-post-review-1.md"),
        "{reason}"
    );
    assert!(!reason.contains("remove"), "{reason}");
    assert!(
        reason.contains("write .taskie/plans/p/plan-post-review-1.md"),
        "{reason}"
    );
}

// 7. Stdout that is JSON but not an object.

#[test]
fn reviewer_stdout_that_is_a_json_array_is_a_reviewer_failure() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::pass().shape(Shape::Raw(r#"[{"structured_output":{"verdict":"FAIL"}}]"#)));
    let text = p.stop().message();
    assert!(text.contains("failed"), "{text}");
    assert_eq!(p.state_json()["review_failures"], 1);
}

// 8. No paid review when its outcome cannot be saved.

#[test]
fn no_review_starts_when_the_plan_directory_cannot_be_written() {
    let p = Project::new().plan("p").state(due("plan-review"));
    std::fs::create_dir_all(p.logs()).unwrap();
    // The reviewer lifts the soft limit again, so only the hook's writes fail.
    p.script_reviewer(&format!("ulimit -S -f unlimited\n{REVIEW_FAIL}"));
    // `ulimit -f 0` makes every write of a byte fail (EFBIG) as a full disk would; the
    // signal it would raise is ignored so the write returns the error.
    let script = format!("trap '' XFSZ; ulimit -S -f 0; exec '{HOOK}'");
    let out = Command::new("sh")
        .args(["-c", &script])
        .env_remove("TASKIE_HOOK_SKIP")
        .env_remove("TASKIE_PLAN")
        .env("TASKIE_REVIEWER", p.reviewer_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(stop_event(&p).as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    let text = Run::from(out).message();
    assert_eq!(p.reviewer_calls(), 0, "{text}");
    assert!(
        text.contains("cannot be written") || text.contains("cannot write"),
        "{text}"
    );
}

// 9. Non-UTF-8 tasks.md.

#[test]
fn a_non_utf8_tasks_md_is_a_structure_error_naming_the_line() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "pending")])
        .state(due("tasks-review"));
    let mut bytes = std::fs::read(p.plan_dir().join("tasks.md")).unwrap();
    bytes.extend_from_slice(b"| 2 | caf\xe9 | pending |\n");
    std::fs::write(p.plan_dir().join("tasks.md"), bytes).unwrap();
    let reason = p.stop().reason();
    assert!(
        reason.contains("tasks.md is not UTF-8 text (line 4)"),
        "{reason}"
    );
    let run = p.run_taskie(&["validate"]);
    assert!(
        run.stdout.contains("tasks.md is not UTF-8 text (line 4)"),
        "{}",
        run.stdout
    );
}

// 11. One link rule: never follow a link out of .taskie/.

#[test]
fn state_set_leaves_a_linked_state_json_alone() {
    let p = Project::new().plan("p");
    let outside = p.root().join("outside.json");
    std::fs::write(&outside, due("plan-review").to_string()).unwrap();
    std::os::unix::fs::symlink(&outside, p.plan_dir().join("state.json")).unwrap();
    let run = p.run_taskie(&["state", "set", "max_reviews=3"]);
    assert!(run.fails_with(1).contains("link"), "{}", run.stderr);
    let meta = std::fs::symlink_metadata(p.plan_dir().join("state.json")).unwrap();
    assert!(meta.file_type().is_symlink());
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        due("plan-review").to_string()
    );
}

#[test]
fn commands_do_not_write_through_a_linked_locks_directory() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let elsewhere = crate::support::tempdir();
    std::os::unix::fs::symlink(elsewhere.path(), p.root().join(".taskie/locks")).unwrap();
    let run = p.run_taskie(&["state", "set", "max_reviews=3"]);
    assert!(run.fails_with(1).contains("link"), "{}", run.stderr);
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn the_hook_does_not_write_logs_through_a_link_into_the_sources() {
    let p = Project::new().plan("p").state(due("plan-review"));
    std::fs::create_dir_all(p.root().join("src")).unwrap();
    std::os::unix::fs::symlink("../src", p.root().join(".taskie/logs")).unwrap();
    let text = p.stop().message();
    assert!(text.contains("link"), "{text}");
    assert_eq!(std::fs::read_dir(p.root().join("src")).unwrap().count(), 0);
    assert_eq!(p.reviewer_calls(), 0);
}

// 12. state.json with a BOM; advice names the plan and what --force does.

#[test]
fn a_state_json_with_a_bom_is_read() {
    let p = Project::new().plan("p");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(due("plan-review").to_string().as_bytes());
    std::fs::write(p.plan_dir().join("state.json"), bytes).unwrap();
    assert!(p.stop().is_block());
    p.run_taskie(&["state", "set", "max_reviews=5"]).ok();
    assert_eq!(p.state_json()["max_reviews"], 5);
}

#[test]
fn bad_json_advice_gives_the_position_the_plan_id_and_what_force_does() {
    let p = Project::new()
        .plan("myplan")
        .file("state.json", "{\n  \"phase\": ,\n}\n");
    let text = p.stop().message();
    for want in ["line 2 column", "taskie init myplan --force", "restart"] {
        assert!(text.contains(want), "{want}: {text}");
    }
    assert!(!text.contains("<plan-id>"), "{text}");
    let err = p.run_taskie(&["state", "get"]).fails_with(1).to_owned();
    assert!(
        err.contains("taskie init myplan --force") && err.contains("restart"),
        "{err}"
    );
    let status = p.run_taskie(&["status"]);
    assert!(
        status.ok().contains("taskie init myplan --force"),
        "{}",
        status.stdout
    );
}

// 13. A bad hook argument is shown to the user.

#[test]
fn a_bad_hook_argument_is_answered_with_a_system_message_naming_it() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let run = guarded_hook(&p, &["--dryrun"], &stop_event(&p));
    let text = run.message();
    assert!(text.contains("--dryrun"), "{text}");
    assert!(run.stderr.contains("--dryrun"), "{}", run.stderr);
}

// 14. Reviewer logs.

#[test]
fn quick_reviewer_failures_each_keep_their_log() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::pass().exit(3));
    for _ in 0..3 {
        assert!(p.stop().message().contains("failed"));
    }
    let logs = std::fs::read_dir(p.logs())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("review-p-"))
        .count();
    assert_eq!(logs, 3);
}

#[test]
fn stale_temporary_files_in_the_logs_are_removed() {
    let p = Project::new().plan("p").state(due("plan-review"));
    std::fs::create_dir_all(p.logs()).unwrap();
    let stale = p.logs().join(".taskie-tmp-old");
    let f = std::fs::File::create(&stale).unwrap();
    f.set_modified(std::time::SystemTime::now() - Duration::from_secs(7200))
        .unwrap();
    drop(f);
    assert!(p.stop().is_block());
    assert!(!stale.exists());
}

// 15. Plan id length.

#[test]
fn a_plan_id_longer_than_the_limit_is_refused_naming_the_limit() {
    let p = Project::new().plan("p");
    let long = "a".repeat(101);
    let err = p.run_taskie(&["init", &long]).fails_with(2).to_owned();
    assert!(err.contains("100"), "{err}");
}

// 16. max_reviews below the clean streak.

#[test]
fn init_warns_when_max_reviews_cannot_reach_the_clean_streak() {
    let p = Project::new().plan("p");
    let run = p.run_taskie(&["init", "p", "--max-reviews", "1"]);
    run.ok();
    assert!(
        run.stderr.contains("clean_reviews_required"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_last_allowed_review_says_the_next_stop_is_a_hard_stop() {
    let mut s = due("plan-review");
    s["max_reviews"] = json!(1);
    let p = Project::new().plan("p").state(s).reviewer(&Fake::pass());
    let reason = p.stop().reason();
    assert!(!reason.contains("so review #2 runs"), "{reason}");
    assert!(reason.contains("hard stop"), "{reason}");
}

// 17. A running review is visible; a busy lock is described truthfully.

#[test]
fn status_says_a_review_is_running_and_commands_name_it() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::pass().sleep(30.0));
    let mut child = p.spawn_hook(
        json!({"hook_event_name": "Stop", "stop_hook_active": false}),
        &[],
    );
    // Wait (bounded) for the reviewer to start.
    for _ in 0..600 {
        if p.reviewer_calls() > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = p.run_taskie(&["status"]);
    let busy = p.run_taskie(&["state", "set", "max_reviews=3"]);
    let _ = child.kill();
    let _ = child.wait();
    let out = status.ok();
    assert!(out.contains("running"), "{out}");
    assert!(
        out.contains("opus") && out.contains(".taskie/logs/review-p-plan-review-1-"),
        "{out}"
    );
    let err = busy.fails_with(1);
    assert!(err.contains("plan-review #1 is running"), "{err}");
}

#[cfg(debug_assertions)]
#[test]
fn a_busy_plan_held_by_a_command_is_not_called_a_review() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_taskie"));
    cmd.current_dir(p.root())
        .env_remove("TASKIE_PLAN")
        .env("TASKIE_TEST_PAUSE_AT", "before-rename:state.json")
        .args(["state", "set", "max_reviews=4"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(child.stderr.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("test pause"), "{line}");
    }
    let busy = p.run_taskie(&["state", "set", "max_reviews=3"]);
    let hook = p.stop();
    let _ = child.kill();
    let _ = child.wait();
    let err = busy.fails_with(1);
    assert!(!err.contains("review is running"), "{err}");
    assert!(err.contains("another taskie"), "{err}");
    let text = hook.message();
    assert!(
        !text.contains("review for plan 'p' is already running"),
        "{text}"
    );
}

// 18. Help texts.

#[test]
fn hook_help_says_stdin_exit_status_and_environment() {
    let out = Command::new(HOOK).arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "stdin",
        "exit",
        "TASKIE_PLAN",
        "TASKIE_REVIEWER",
        "TASKIE_REVIEW_TIMEOUT",
        "TASKIE_HOOK_SKIP",
        "CLAUDE_PROJECT_DIR",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
}

#[test]
fn state_set_help_lists_every_field_and_its_type() {
    let p = Project::new();
    let text = p.run_taskie(&["state", "set", "--help"]).ok().to_owned();
    for want in [
        "max_reviews",
        "auto_continue",
        "clean_reviews_required",
        "a whole number ≥ 1",
        "true or false",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
}

// 19. The test pause point is not in release builds.

#[test]
fn the_test_pause_point_is_compiled_only_with_debug_assertions() {
    let src =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/atomic.rs"))
            .unwrap();
    let at = src
        .find("pub fn pause_point")
        .expect("the pause point exists");
    let before: Vec<&str> = src[..at].lines().rev().take(12).collect();
    assert!(
        before
            .iter()
            .any(|l| l.trim() == "#[cfg(debug_assertions)]"),
        "the environment lookup of the pause point must not ship in release builds"
    );
}

#[test]
fn every_reading_of_a_test_only_variable_is_compiled_only_with_debug_assertions() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.clone()];
    let mut ungated = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("src/env.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            // Every `TASKIE_TEST_*` variable of the table: `Var::Test…`.
            if !line.contains("Var::Test") {
                continue;
            }
            let gated = lines[i.saturating_sub(12)..i]
                .iter()
                .any(|l| l.trim() == "#[cfg(debug_assertions)]");
            if !gated {
                ungated.push(format!("{}:{}", path.display(), i + 1));
            }
        }
    }
    assert!(
        ungated.is_empty(),
        "a test-only variable must not be read by a release build: {ungated:?}"
    );
}
