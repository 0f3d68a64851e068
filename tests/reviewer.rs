//! SPEC §8 (the reviewer), §9 (verdicts) and §5 step 16 (reviewer failures), against
//! the real `taskie-hook` and a fake reviewer.

use crate::support::{Fake, Project, Shape, due};
use serde_json::json;
use std::time::{Duration, Instant};

fn code_review_project() -> Project {
    Project::new().plan("p").tasks(&[(1, "done"), (2, "pending")]).state(json!({
        "phase": "complete-task", "next_phase": "code-review", "phase_iteration": 0,
        "current_task": 1, "review_model": "opus", "consecutive_clean": 0, "max_reviews": 8, "tdd": false}))
}

#[test]
fn the_reviewer_gets_exactly_the_documented_arguments_environment_and_directory() {
    let p = Project::new().plan("p").state(due("plan-review"));
    p.stop();
    let args = p.reviewer_args();
    assert_eq!(
        &args[..10],
        [
            "--print",
            "--model",
            "opus",
            "--output-format",
            "json",
            "--json-schema",
            &taskie::reviewer::result::answer_schema(false),
            // No permission bypass: Claude Code refuses it to root (SPEC §8).
            // Its file-editing tools are scoped to its review file (SPEC §8).
            "--allowedTools=Bash,Read,Grep,Glob,Edit(.taskie/plans/p/plan-review-1.md)",
            "--settings",
            // No hooks; Claude Code's sandbox around its shell commands (SPEC §8).
            r#"{"disableAllHooks":true,"sandbox":{"enabled":true,"failIfUnavailable":false,"allowUnsandboxedCommands":false,"filesystem":{"allowWrite":["/tmp"]}}}"#,
        ]
    );
    assert_eq!(args.len(), 10, "the prompt is not an argument");
    assert_eq!(
        p.reviewer_saw("skip"),
        "1",
        "TASKIE_HOOK_SKIP=1 for the reviewer"
    );
    assert_eq!(
        p.reviewer_saw("cwd").trim(),
        p.root().canonicalize().unwrap().to_str().unwrap()
    );
    let prompt = p.reviewer_prompt();
    assert!(
        prompt.starts_with("# Taskie: plan review")
            && prompt.ends_with("structured output (the `verdict` field).\n"),
        "the whole prompt is on stdin: {prompt}"
    );
}

#[test]
fn the_reviewer_has_bounded_api_retries_and_none_of_the_parent_sessions_variables() {
    let p = Project::new()
        .reviewer(&Fake::pass().keeps_env())
        .plan("p")
        .state(due("plan-review"))
        .env("CLAUDECODE", "1")
        .env("CLAUDE_CODE_SESSION_ID", "parent-session")
        .env("CLAUDE_CODE_MESSAGING_SOCKET", "/tmp/parent.sock")
        .env("CLAUDE_CODE_MAX_RETRIES", "10");
    p.stop();
    let env = p.reviewer_saw("env");
    let vars: Vec<&str> = env.lines().collect();
    assert!(vars.contains(&"CLAUDE_CODE_MAX_RETRIES=2"), "{env}");
    for gone in [
        "CLAUDECODE=",
        "CLAUDE_CODE_SESSION_ID=",
        "CLAUDE_CODE_MESSAGING_SOCKET=",
    ] {
        assert!(!vars.iter().any(|v| v.starts_with(gone)), "{gone} in {env}");
    }
}

#[test]
fn the_prompt_is_self_contained() {
    let p = code_review_project();
    p.stop();
    let prompt = p.reviewer_prompt();
    assert!(
        prompt.contains(taskie::reviewer::prompt::reviewer_instructions(
            taskie::model::phase::Review::Code
        )),
        "embeds the action"
    );
    for needle in [
        "Plan id: p",
        ".taskie/plans/p/plan.md",
        ".taskie/plans/p/tasks.md",
        ".taskie/plans/p/task-1.md",
        ".taskie/plans/p/task-2.md",
        "git log",
        "- Write your review to exactly this file, creating it: .taskie/plans/p/task-1-code-review-1.md",
        "VERDICT: PASS",
        "VERDICT: FAIL",
        "structured output",
    ] {
        assert!(prompt.contains(needle), "prompt lacks {needle:?}");
    }
}

#[test]
fn the_models_alternate_between_reviews() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail());
    p.stop();
    assert_eq!(p.reviewer_args()[2], "opus");
    let p = p.file("plan-post-review-1.md", "x\n");
    p.stop_active();
    assert_eq!(p.reviewer_args()[2], "sonnet");
    assert_eq!(p.state_json()["review_model"], "opus");
}

#[test]
fn a_review_file_left_by_an_interrupted_run_is_moved_to_the_logs() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .file("plan-review-1.md", "stale\nVERDICT: PASS\n")
        .reviewer(&Fake::fail());
    assert!(
        p.stop().reason().contains("Verdict: FAIL"),
        "the verdict is this run's, not the stale file's"
    );
    assert!(p.read("plan-review-1.md").contains("VERDICT: FAIL"));
    let stale: Vec<_> = std::fs::read_dir(p.logs())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("stale-"))
        .collect();
    assert_eq!(stale.len(), 1);
    assert_eq!(
        std::fs::read_to_string(stale[0].path()).unwrap(),
        "stale\nVERDICT: PASS\n"
    );
}

#[test]
fn summary_and_findings_become_the_review_file_when_the_reviewer_wrote_none() {
    let p = Project::new().plan("p").state(due("plan-review")).reviewer(
        &Fake::pass().file(None).shape(Shape::Review {
            verdict: "FAIL",
            summary: "The plan misses the error cases.",
            findings: &["No plan for a missing config file", "Step 3 has no test"],
        }),
    );
    let reason = p.stop().reason();
    assert!(reason.contains("Verdict: FAIL"), "{reason}");
    assert_eq!(
        p.read("plan-review-1.md"),
        "> Finding ids (answer each in the post-review, e.g. `F1: fixed — how`):\n\
         > - F1: No plan for a missing config file\n> - F2: Step 3 has no test\n\n\
         # Review\n\nThe plan misses the error cases.\n\n## Findings\n\n- No plan for a missing config file\n\
         - Step 3 has no test\n\nVERDICT: FAIL\n"
    );
    assert_eq!(
        p.last_event()["verdict_source"],
        "structured_output+review_file"
    );
}

#[test]
fn the_result_text_is_never_written_as_a_review() {
    // With --json-schema the CLI's `result` is the structured output as JSON text.
    let p = Project::new().plan("p").state(due("plan-review")).reviewer(
        &Fake::pass()
            .file(None)
            .shape(Shape::TextOnly(r#"{"verdict":"FAIL"}"#)),
    );
    assert!(p.stop().message().contains("no review produced"));
    assert!(!p.exists("plan-review-1.md"));
}

#[test]
fn the_block_reason_quotes_the_first_findings_and_stays_within_claude_codes_limits() {
    let p = Project::new().plan("p").state(due("plan-review")).reviewer(
        &Fake::pass().file(None).shape(Shape::Review {
            verdict: "FAIL",
            summary: "Many problems.",
            findings: &[
                "First: the parser accepts `+1`",
                "Second: no test for an empty file",
                "Third: the error does not name the file",
                "Fourth: should not be quoted",
            ],
        }),
    );
    let reason = p.stop().reason();
    for quoted in [
        "- F1: First: the parser accepts `+1`",
        "- F2: Second: no test for an empty file",
        "- F3: Third: the error does not name the file",
        "(and 1 more in the review file)",
    ] {
        assert!(reason.contains(quoted), "{quoted:?} in {reason}");
    }
    assert!(!reason.contains("Fourth"), "{reason}");
    assert!(reason.contains("/taskie:post-plan-review"), "{reason}");
}

#[test]
fn a_review_with_huge_findings_still_gives_a_reason_claude_code_shows_whole() {
    const LONG: &str = concat!(
        "A finding that goes on and on ",
        "and on and on and on and on and on and on and on and on and on and on and on and on ",
        "and on and on and on and on and on and on and on and on and on and on and on and on ",
        "and on and on and on and on and on and on and on and on and on and on and on and on"
    );
    let p = Project::new().plan("p").state(due("plan-review")).reviewer(
        &Fake::pass().file(None).shape(Shape::Review {
            verdict: "FAIL",
            summary: "Long.",
            findings: &[LONG, LONG, LONG, LONG, LONG],
        }),
    );
    let reason = p.stop().reason();
    assert!(reason.chars().count() < 2000, "{} chars", reason.len());
    assert!(reason.lines().count() < 20, "{reason}");
    assert!(reason.contains('…'), "findings are shortened: {reason}");
}

#[test]
fn each_run_writes_a_log_with_output_status_and_duration() {
    let p = Project::new().plan("p").state(due("plan-review"));
    p.stop();
    let logs: Vec<_> = std::fs::read_dir(p.logs())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n.starts_with("review-p-plan-review-1-"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let text = std::fs::read_to_string(p.logs().join(&logs[0])).unwrap();
    assert!(
        text.contains("exited with status 0")
            && text.contains("duration_ms:")
            && text.contains("structured_output"),
        "{text}"
    );
}

// §9: the verdict matrix through the real binary.

#[test]
fn the_verdict_is_pass_only_when_some_source_says_pass_and_none_says_fail() {
    let cases: [(Fake, &str, &str); 8] = [
        (
            Fake::verdict("PASS"),
            "PASS",
            "structured_output+review_file",
        ),
        (
            Fake::verdict("FAIL"),
            "FAIL",
            "structured_output+review_file",
        ),
        (Fake::pass().file(Some("FAIL")), "FAIL", "review_file"),
        (Fake::fail().file(Some("PASS")), "FAIL", "structured_output"),
        (
            Fake::pass().shape(Shape::ResultObject("PASS")),
            "PASS",
            "result+review_file",
        ),
        (
            Fake::pass()
                .file(Some("PASS"))
                .shape(Shape::ResultObject("FAIL")),
            "FAIL",
            "result",
        ),
        (
            Fake::pass()
                .file_line("**Verdict:** pass")
                .shape(Shape::TextOnly("text")),
            "PASS",
            "review_file",
        ),
        (
            Fake::pass()
                .file(Some("maybe"))
                .shape(Shape::TextOnly("text")),
            "UNKNOWN",
            "none",
        ),
    ];
    for (fake, verdict, source) in cases {
        let p = Project::new()
            .plan("p")
            .state(due("plan-review"))
            .reviewer(&fake);
        let run = p.stop();
        let e = p.last_event();
        assert_eq!(
            (e["verdict"].as_str(), e["verdict_source"].as_str()),
            (Some(verdict), Some(source)),
            "{fake:?}"
        );
        if verdict == "UNKNOWN" {
            assert!(run.reason().contains("gave no verdict"), "{fake:?}");
        }
    }
}

#[test]
fn an_older_result_object_without_a_review_file_is_no_review() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::pass().file(None).shape(Shape::ResultObject("PASS")));
    assert!(p.stop().message().contains("no review produced"));
}

// §5 step 16: reviewer failures.

fn assert_failure(p: &Project, says: &str) {
    let before = p.state_json();
    let msg = p.stop().message();
    assert!(msg.contains(says), "expected {says:?} in {msg}");
    assert!(
        msg.contains(".taskie/logs/review-p-plan-review-1-"),
        "names the log: {msg}"
    );
    assert!(msg.contains("retried at the next stop"), "{msg}");
    let after = p.state_json();
    assert_eq!(after["review_failures"], 1);
    let mut expected = before;
    expected["review_failures"] = json!(1);
    assert_eq!(after, expected, "only review_failures changes");
    assert_eq!(p.last_event()["path"], "reviewer-failed");
}

#[test]
fn a_reviewer_exiting_non_zero_is_a_failure_that_never_blocks() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail().exit(1));
    assert_failure(&p, "exited with status 1");
    assert_eq!(p.last_event()["reviewer_exit"], 1);
}

#[test]
fn a_reviewer_reporting_is_error_is_a_failure() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::pass().shape(Shape::IsError));
    assert_failure(&p, "reported an error: API Error: overloaded");
}

#[test]
fn a_reviewer_printing_no_result_object_is_a_failure() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::pass().file(None).shape(Shape::Raw("")));
    assert_failure(&p, "printed no JSON result object");
}

#[test]
fn json_that_is_not_a_result_object_is_a_failure_even_with_a_passing_review_file() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::pass().shape(Shape::Raw(r#"[{"structured_output":{"verdict":"FAIL"}}]"#)));
    assert_failure(&p, "printed JSON that is not a result object");
}

#[test]
fn an_api_error_is_quoted_in_the_clis_own_words() {
    let p =
        Project::new()
            .plan("p")
            .state(due("plan-review"))
            .reviewer(&Fake::pass().exit(1).shape(Shape::ApiError {
                status: 500,
                message: "Internal server error",
            }));
    assert_failure(
        &p,
        "reported an error: API Error: 500 Internal server error",
    );
    assert_eq!(p.last_event()["reviewer_exit"], 1);
}

#[test]
fn rate_and_usage_limits_are_named_as_such() {
    for status in [429, 529] {
        let p = Project::new().plan("p").state(due("plan-review")).reviewer(
            &Fake::pass().exit(1).shape(Shape::ApiError {
                status,
                message: "rate_limit_error",
            }),
        );
        assert_failure(&p, "hit a rate or usage limit (API Error: ");
    }
}

#[test]
fn a_non_zero_exit_without_a_result_quotes_the_first_line_of_stderr() {
    let p = Project::new().plan("p").state(due("plan-review")).reviewer(
        &Fake::pass()
            .exit(1)
            .shape(Shape::Raw(""))
            .extra("echo '--dangerously-skip-permissions cannot be used with root' >&2"),
    );
    assert_failure(
        &p,
        "reported an error: --dangerously-skip-permissions cannot be used with root (exit status 1)",
    );
}

#[test]
fn a_reviewer_that_cannot_start_is_a_failure_naming_the_program() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .env("TASKIE_REVIEWER", "/nonexistent/claude");
    assert_failure(&p, "could not start `/nonexistent/claude`");
}

#[test]
fn a_reviewer_killed_by_a_signal_is_a_failure() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::pass().extra("kill -9 $$"));
    assert_failure(&p, "killed by signal 9");
}

#[test]
fn kills_hung_reviewer_group_on_timeout() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::pass().grandchild().sleep(1000.0))
        .env("TASKIE_REVIEW_TIMEOUT", "0.5");
    // The hook returning at all, with a timeout failure, is the property: the reviewer
    // would sleep for 1000 s.
    assert_failure(&p, "timed out after 0.5 s");
    let pid = p.grandchild_pid();
    let deadline = Instant::now() + Duration::from_secs(5);
    while process_alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!process_alive(pid), "grandchild {pid} survived the timeout");
}

#[test]
fn a_grandchild_holding_stdout_does_not_hang_the_hook() {
    // Bounded without a clock: were the hook to wait for the grandchild, the review would
    // time out after 60 s and be a failure, not the block asserted here.
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .env("TASKIE_REVIEW_TIMEOUT", "60")
        .reviewer(&Fake::fail().grandchild());
    assert!(p.stop().reason().contains("Verdict: FAIL"));
    let log = std::fs::read_dir(p.logs())
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("review-p-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .expect("the reviewer log");
    assert!(
        log.contains("still held its output after it exited"),
        "the straggler was terminated: {log}"
    );
}

/// Alive and not a zombie waiting for init to reap it.
fn process_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

#[test]
fn a_successful_review_resets_the_failure_count() {
    let p = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-review", "review_failures": 2}))
        .reviewer(&Fake::fail());
    assert!(p.stop().is_block());
    assert_eq!(p.state_json()["review_failures"], 0);
}

// §11: dry run.

#[test]
fn dry_run_reports_the_due_review_and_both_outcomes_and_writes_nothing() {
    let p = code_review_project();
    let before = p.snapshot();
    let (_, r) = dry_run_json(&p);
    assert_eq!(r["branch"], "review-due");
    assert_eq!(r["plan"]["id"], "p");
    assert_eq!(r["validation"], json!([]));
    assert_eq!(r["state"]["next_phase"], "code-review");
    assert_eq!(
        r["review"]["review_file"],
        ".taskie/plans/p/task-1-code-review-1.md"
    );
    assert_eq!(r["review"]["command"][1], "--print");
    assert!(
        crate::support::block_text(&r["if_fail"]["answer"]).is_some(),
        "{}",
        r["if_fail"]
    );
    assert_eq!(r["if_fail"]["new_state"]["next_phase"], "post-code-review");
    assert_eq!(r["if_pass"]["new_state"]["consecutive_clean"], 1);
    assert_eq!(p.reviewer_calls(), 0, "never runs the reviewer");
    assert_eq!(
        p.snapshot(),
        before,
        "writes nothing: no state, logs, locks or directories"
    );
}

#[test]
fn dry_run_reads_the_event_from_stdin_and_prints_a_readable_report() {
    let p = Project::new()
        .plan("p")
        .state(json!({"next_phase": null, "phase": "complete"}));
    let before = p.snapshot();
    let event = json!({"cwd": p.root(), "stop_hook_active": false}).to_string();
    let out = p
        .hook_command()
        .arg("--dry-run")
        .write_stdin(event)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("branch:      no-review-due") && text.contains("plan:        p"),
        "{text}"
    );
    assert!(text.contains("allow silently"), "{text}");
    assert_eq!(p.snapshot(), before);
}

fn dry_run_text(p: &Project) -> String {
    let out = p
        .hook_command()
        .args(["--dry-run", "--cwd"])
        .arg(p.root())
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

fn dry_run_json(p: &Project) -> (String, serde_json::Value) {
    let out = p
        .hook_command()
        .args(["--dry-run", "--json", "--cwd"])
        .arg(p.root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let v = serde_json::from_str(&text).unwrap();
    (text, v)
}

#[test]
fn dry_run_says_the_reviewer_program_was_not_found_instead_of_showing_a_command_that_fails() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .env("TASKIE_REVIEWER", "no-such-reviewer-on-path");
    let text = dry_run_text(&p);
    let command = text.lines().find(|l| l.starts_with("command:")).unwrap();
    assert!(
        command.contains("none: `no-such-reviewer-on-path` was not found"),
        "{text}"
    );
    assert!(!command.contains("--print"), "{command}");
    let warning = text.lines().find(|l| l.starts_with("warning:")).unwrap();
    assert!(
        warning.contains("the claude reviewer program was not found")
            && warning.contains("set TASKIE_REVIEWER"),
        "{warning}"
    );
    let (_, v) = dry_run_json(&p);
    assert_eq!(v["review"]["program_path"], serde_json::Value::Null);
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1, "{v}");
    // With the program found, its file is named and nothing is said.
    let reviewer = p.reviewer_path();
    let p = p.env("TASKIE_REVIEWER", reviewer.to_str().unwrap());
    let (_, v) = dry_run_json(&p);
    assert_eq!(
        v["review"]["program_path"],
        p.reviewer_path().display().to_string()
    );
    assert!(v.get("warnings").is_none(), "{v}");
}

#[test]
fn dry_run_shows_the_review_timeout_and_warns_when_the_hooks_own_timeout_would_cut_it_short() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let text = dry_run_text(&p);
    assert!(
        text.contains(
            "timeout:     1500 s (TASKIE_REVIEW_TIMEOUT; the hook's own timeout is 1800 s)"
        ),
        "{text}"
    );
    assert!(!text.contains("warning:"), "{text}");
    for (value, warned) in [("1799.5", false), ("1800", true), ("4000", true)] {
        let p = Project::new()
            .plan("p")
            .state(due("plan-review"))
            .env("TASKIE_REVIEW_TIMEOUT", value);
        let text = dry_run_text(&p);
        let warning = text
            .lines()
            .find(|l| l.starts_with("warning:") && l.contains("TASKIE_REVIEW_TIMEOUT"));
        assert_eq!(warning.is_some(), warned, "{value}: {text}");
        if let Some(w) = warning {
            assert!(
                w.contains(&format!("TASKIE_REVIEW_TIMEOUT={value} is not below")),
                "{w}"
            );
        }
        let (_, v) = dry_run_json(&p);
        assert_eq!(v["review"]["hook_timeout_secs"], 1800);
    }
}

#[test]
fn the_hooks_registered_timeout_is_the_one_the_dry_run_compares_with() {
    // Every hook file Taskie ships registers 1800 s (Gemini counts milliseconds).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<std::path::PathBuf> = ["claude", "codex", "gemini"]
        .iter()
        .map(|c| root.join("dist").join(c).join("hooks/hooks.json"))
        .collect();
    let timeout = regex::Regex::new(r#""timeout"\s*:\s*(\d+)"#).unwrap();
    let mut seen = 0;
    for f in files.iter().filter(|f| f.is_file()) {
        let text = std::fs::read_to_string(f).unwrap();
        for c in timeout.captures_iter(&text) {
            seen += 1;
            let n: u64 = c[1].parse().unwrap();
            assert!(
                n == taskie::reviewer::config::HOOK_TIMEOUT_SECS
                    || n == taskie::reviewer::config::HOOK_TIMEOUT_SECS * 1000,
                "{}: timeout {n}",
                f.display()
            );
        }
    }
    assert_eq!(
        seen, 3,
        "each client's hook file registers a timeout: {files:?}"
    );
}

#[test]
fn dry_run_json_is_pretty_printed_as_status_json_is() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let (text, v) = dry_run_json(&p);
    assert!(text.starts_with("{\n  \"event\": {\n"), "{text}");
    assert_eq!(text, serde_json::to_string_pretty(&v).unwrap() + "\n");
}

#[test]
fn dry_run_of_a_hard_stop_writes_no_diagnostics() {
    let p = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-review", "phase_iteration": 2, "max_reviews": 2}));
    let before = p.snapshot();
    let (_, r) = dry_run_json(&p);
    assert_eq!(r["branch"], "hard-stop");
    assert!(
        r["answer"]["systemMessage"]
            .as_str()
            .unwrap()
            .contains("hard stop")
    );
    assert_eq!(p.snapshot(), before);
}

#[test]
fn taskie_hook_subcommand_is_the_same_hook() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail());
    let out = p
        .taskie(&["hook"])
        .write_stdin(json!({"cwd": p.root()}).to_string())
        .output()
        .unwrap();
    let run: crate::support::Run = out.into();
    assert!(run.reason().contains("plan-review #1"));
}

#[test]
fn a_bad_hook_command_line_still_exits_zero() {
    let p = Project::new();
    let out = p.hook_command().arg("--bogus").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let run: crate::support::Run = out.into();
    assert!(run.message().contains("--bogus"), "{}", run.stdout);
}
