//! End to end with the real Claude Code CLI (the pinned version, from npm) and our fake
//! Messages API on 127.0.0.1: the reviewer invocation, a whole review loop inside one
//! `claude -p` turn with the plugin loaded by `--plugin-dir`, hooks off for the
//! reviewer, and two sessions in one project. Run as the user the tests run as — root in
//! CI — with no sandbox variable. docs/claude-code.md records what this proves.

use crate::support::claude_user::{CliResult, cli_env, repo};
use crate::support::fake_api::{FakeApi, Reply, Request};
use crate::support::scripted_model::{CONTINUATION_MARKERS, is_reviewer, word_after};
use crate::support::{Project, Run, claude_cli, due};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Runs `claude -p <prompt>` with the plugin in `project`, bounded in time.
fn agent_turn(project: &Path, home: &Path, api: &FakeApi, prompt: &str) -> CliResult {
    let mut cmd = Command::new(claude_cli::binary());
    cmd.args(["-p", prompt, "--output-format", "json"])
        .arg("--allowedTools=Bash,Read,Write,Edit")
        .arg("--plugin-dir")
        .arg(repo().join("dist/claude"))
        .current_dir(project)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cli_env(&mut cmd, &api.base_url(), home);
    let mut child = cmd.spawn().expect("start claude");
    let deadline = Instant::now() + Duration::from_secs(180);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "claude did not finish within 180 s ({} API requests)",
                api.requests().len()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "claude failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: CliResult = serde_json::from_str(stdout.trim()).expect("one result object");
    assert_eq!(
        (result.subtype.as_str(), result.is_error),
        ("success", false),
        "{stdout}"
    );
    result
}

/// One stop of `taskie-hook`, as Claude Code would run it, with the real CLI as reviewer.
fn hook_stop(p: &Project, api: &FakeApi, home: &Path) -> Run {
    hook_stop_with(p, api, home, |_| {})
}

/// [`hook_stop`] with the environment adjusted by `adjust`.
fn hook_stop_with(p: &Project, api: &FakeApi, home: &Path, adjust: impl Fn(&mut Command)) -> Run {
    let hook = Path::new(env!("CARGO_BIN_EXE_taskie-hook"));
    hook_stop_program(hook, p, api, home, adjust)
}

/// [`hook_stop_with`], `hook` being the taskie-hook program.
fn hook_stop_program(
    hook: &Path,
    p: &Project,
    api: &FakeApi,
    home: &Path,
    adjust: impl Fn(&mut Command),
) -> Run {
    let mut cmd = Command::new(hook);
    cli_env(&mut cmd, &api.base_url(), home);
    adjust(&mut cmd);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start taskie-hook");
    let event = json!({"hook_event_name": "Stop", "cwd": p.root()}).to_string();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.as_bytes())
        .unwrap();
    Run::from(child.wait_with_output().unwrap())
}

/// The instruction the hook gave the agent, if the last user turn carries one.
fn continuation(r: &Request) -> Option<String> {
    let last = r.last_user_text();
    CONTINUATION_MARKERS
        .iter()
        .find_map(|m| last.find(m).map(|at| last[at + m.len()..].to_string()))
}

/// A reviewer that answers at once with `verdict`, writing no file itself.
fn review_reply(r: &Request, verdict: &str, finding: &str) -> Reply {
    if r.assistant_turns() == 0 {
        Reply::tool(
            "StructuredOutput",
            json!({"verdict": verdict, "summary": format!("Scripted {verdict}."), "findings": [finding]}),
        )
    } else {
        Reply::text("Done.")
    }
}

#[test]
fn the_real_reviewer_runs_as_root_and_its_structured_review_becomes_the_review_file() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let home = tempfile::tempdir().unwrap();
    let api = FakeApi::start(|r| review_reply(r, "FAIL", "Step 2 has no test"));
    let run = hook_stop(&p, &api, home.path());
    let reason = run.reason();
    assert!(reason.contains("Verdict: FAIL"), "{reason}");
    assert!(reason.contains("- F1: Step 2 has no test"), "{reason}");
    assert_eq!(
        p.read("plan-review-1.md"),
        "> Finding ids (answer each in the post-review, e.g. `F1: fixed — how`):\n> - F1: Step 2 has no test\n\n\
         # Review\n\nScripted FAIL.\n\n## Findings\n\n- Step 2 has no test\n\nVERDICT: FAIL\n"
    );
    let event = p.last_event();
    assert_eq!(
        (event["verdict"].as_str(), event["reviewer_exit"].as_i64()),
        (Some("FAIL"), Some(0)),
        "{event}"
    );
    let requests: Vec<Request> = api
        .requests()
        .into_iter()
        .filter_map(|r| r.messages)
        .collect();
    let first = requests.first().expect("the reviewer called the API");
    assert!(first.model.contains("opus"), "{}", first.model);
    for tool in ["Grep", "Glob", "Bash", "Write"] {
        assert!(
            first.has_tool(tool),
            "{tool} is allowed: {:?}",
            first.tool_names()
        );
    }
    let prompt = first.first_user_text();
    assert!(
        prompt.contains("Write your review to exactly this file"),
        "{prompt}"
    );
    assert!(!prompt.contains("Standalone use"), "{prompt}");
}

/// The prompt is on stdin, read whole by the real CLI (`--print` without a prompt
/// argument), however long: past a pipe's buffer here.
#[test]
fn the_real_claude_reads_a_long_prompt_whole_on_stdin() {
    let p = crate::support::long_ledger(Project::new().plan("p"));
    let home = tempfile::tempdir().unwrap();
    let api = FakeApi::start(|r| review_reply(r, "FAIL", "Step 2 has no test"));
    let run = hook_stop(&p, &api, home.path());
    assert!(run.reason().contains("Verdict: FAIL"), "{}", run.stdout);
    let bodies: Vec<serde_json::Value> = api
        .requests()
        .iter()
        .filter(|r| r.messages.is_some())
        .filter_map(|r| serde_json::from_str(&r.body).ok())
        .collect();
    crate::support::assert_prompt_reached_the_model(&crate::support::logged_prompt(&p), &bodies);
}

/// SPEC §8: the reviewer's file-editing tools reach its review file and nothing else.
/// The scripted model writes a new file of the project, reads and then edits an existing
/// one, then writes its review file; the real CLI denies the first two and allows the
/// last. Run as root, as unattended agents in containers run (Claude Code refuses its
/// permission bypass to root, so the allow-list is what holds there), and again as an
/// ordinary user: the rule must hold for both.
#[test]
fn the_real_claude_reviewer_may_write_its_review_file_and_no_other_as_root_and_as_an_ordinary_user()
{
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "this test proves the rule for root and for an ordinary user: run the slow tier as \
         root (CI does), it drops to the ordinary user itself"
    );
    review_file_only(None);
    review_file_only(Some(NOBODY));
}

/// The user and group `nobody` / `nogroup` have on Linux distributions.
const NOBODY: u32 = 65534;

/// The scenario of the test above, run by the current user or, with `user`, by that
/// ordinary user (the hook and so the reviewer run as it; the project, the CLI's home and
/// the two programs are made its own or reachable to it).
fn review_file_only(user: Option<u32>) {
    let p = Project::new().plan("p").state(due("plan-review"));
    let home = tempfile::tempdir().unwrap();
    let outside = p.root().join("src.txt");
    let existing = p.root().join("lib.rs");
    std::fs::write(&existing, "pub fn f() {}\n").unwrap();
    let review = p.plan_dir().join("plan-review-1.md");
    let (o, e, r) = (outside.clone(), existing.clone(), review.clone());
    let api = FakeApi::start(move |req| match req.assistant_turns() {
        0 => Reply::tool(
            "Write",
            json!({"file_path": o, "content": "changed by the reviewer\n"}),
        ),
        1 => Reply::tool("Read", json!({"file_path": e})),
        2 => Reply::tool(
            "Edit",
            json!({"file_path": e, "old_string": "pub fn f() {}", "new_string": "pub fn f() { tampered() }"}),
        ),
        3 => Reply::tool(
            "Write",
            json!({"file_path": r, "content": "# Review\n\n- Step 2 has no test\n\nVERDICT: FAIL\n"}),
        ),
        4 => Reply::tool(
            "StructuredOutput",
            json!({"verdict": "FAIL", "summary": "Wrote the review.", "findings": ["Step 2 has no test"]}),
        ),
        _ => Reply::text("Done."),
    });
    let run = match user {
        None => hook_stop(&p, &api, home.path()),
        Some(uid) => {
            let bin = tempfile::tempdir().unwrap();
            let hook = reachable(Path::new(env!("CARGO_BIN_EXE_taskie-hook")), bin.path());
            let claude = reachable(claude_cli::binary(), bin.path());
            for dir in [p.root().parent().unwrap(), home.path(), bin.path()] {
                chown_all(dir, uid);
            }
            hook_stop_program(&hook, &p, &api, home.path(), |c| {
                use std::os::unix::process::CommandExt;
                c.env("TASKIE_REVIEWER", &claude).uid(uid).gid(uid);
            })
        }
    };
    let who = user.map_or("root".to_string(), |u| format!("uid {u}"));
    assert!(
        run.reason().contains("Verdict: FAIL"),
        "{who}: {}",
        run.stdout
    );
    assert!(
        !outside.exists(),
        "{who}: the write outside the review file was denied"
    );
    assert_eq!(
        std::fs::read_to_string(&existing).unwrap(),
        "pub fn f() {}\n",
        "{who}: the edit of another file was denied"
    );
    assert!(
        std::fs::read_to_string(&review)
            .unwrap()
            .contains("- Step 2 has no test\n\nVERDICT: FAIL"),
        "{who}: the review file was written by the reviewer itself"
    );
    let last = api
        .requests()
        .into_iter()
        .filter_map(|r| r.messages)
        .next_back()
        .unwrap();
    let results = last.tool_results();
    for denied in [&results[0], &results[2]] {
        assert!(
            denied.is_error && denied.text.to_lowercase().contains("permission"),
            "{who}: denied in the CLI's words: {denied:?}"
        );
    }
    assert!(
        !results[1].is_error && !results[3].is_error,
        "{who}: reading, and writing the review file, allowed: {results:?}"
    );
    let first = api.requests().into_iter().find_map(|r| r.messages).unwrap();
    assert!(
        first.has_tool("Bash") && first.has_tool("Read"),
        "{who}: {:?}",
        first.tool_names()
    );
}

/// `program` at a path every user can reach (the build and the CLI cache may lie under
/// root's home): a hard link in `dir`, or a copy across file systems.
fn reachable(program: &Path, dir: &Path) -> std::path::PathBuf {
    let to = dir.join(program.file_name().unwrap());
    if std::fs::hard_link(program, &to).is_err() {
        std::fs::copy(program, &to).unwrap();
    }
    to
}

/// Gives `dir` and everything below it to `uid` (its group the same number).
fn chown_all(dir: &Path, uid: u32) {
    std::os::unix::fs::chown(dir, Some(uid), Some(uid)).unwrap();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            chown_all(&path, uid);
        } else {
            std::os::unix::fs::lchown(&path, Some(uid), Some(uid)).unwrap();
        }
    }
}

#[test]
fn an_api_outage_fails_the_review_within_a_few_attempts_in_the_clis_words() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let home = tempfile::tempdir().unwrap();
    let api = FakeApi::start(|_| Reply::http_error(500, "api_error", "scripted outage"));
    let message = hook_stop(&p, &api, home.path()).message();
    assert!(message.contains("API Error: 500"), "{message}");
    assert!(message.contains("retried at the next stop"), "{message}");
    // CLAUDE_CODE_MAX_RETRIES=2: the first attempt and two retries, not ten.
    assert!(
        api.requests().len() <= 3,
        "{} attempts",
        api.requests().len()
    );
    assert_eq!(p.state_json()["review_failures"], 1);
}

/// SPEC §22 with the real CLI: signed in with a subscription (OAuth credentials, no API
/// key), the API answers the reviewer with the 5-hour usage limit; the plan pauses until
/// the reset the CLI names (in the machine's zone), no reviewer runs before it, and the
/// first stop after it runs the review. Time moves with `TASKIE_TEST_NOW`.
#[test]
fn a_real_reviewer_at_its_usage_limit_pauses_the_plan_and_reviews_after_the_reset() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let home = tempfile::tempdir().unwrap();
    crate::support::claude_cli::sign_in_with_a_subscription(home.path());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    // Two hours and a bit ahead, on a whole minute: the CLI prints the reset to the minute.
    let reset = (now / 60 + 125) * 60;
    let limited = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let api = {
        let limited = Arc::clone(&limited);
        FakeApi::start(move |r| {
            if limited.load(Ordering::SeqCst) {
                Reply::usage_limit(reset)
            } else {
                review_reply(r, "FAIL", "Step 2 has no test")
            }
        })
    };
    let stop_at = |t: i64| {
        hook_stop_with(&p, &api, home.path(), |cmd| {
            cmd.env_remove("ANTHROPIC_API_KEY")
                .env("TZ", "Asia/Kolkata")
                .env("TASKIE_TEST_NOW", t.to_string());
        })
    };
    let msg = stop_at(now).message();
    assert!(
        msg.contains("claude:opus reached its usage limit")
            && msg.contains("(Asia/Kolkata)")
            && msg.contains("no failure was counted"),
        "{msg}"
    );
    let s = p.state_json();
    let until = s["paused_until"]
        .as_str()
        .expect("paused_until is set")
        .to_string();
    let until_unix = jiff::Timestamp::from_str(&until).unwrap().as_second();
    assert_eq!(
        until_unix,
        reset + 60,
        "the minute after the reset the CLI named"
    );
    assert_eq!(s.get("review_failures"), None, "no failure counted: {s}");
    let calls = api.requests().len();

    // An hour later: still paused, the reviewer does not run.
    let msg = stop_at(now + 3600).message();
    assert!(msg.contains("No reviewer ran"), "{msg}");
    assert_eq!(api.requests().len(), calls);

    // After the reset: the review runs and blocks with its finding.
    limited.store(false, Ordering::SeqCst);
    let run = stop_at(until_unix);
    assert!(
        run.reason().contains("- F1: Step 2 has no test"),
        "{}",
        run.reason()
    );
    let s = p.state_json();
    assert_eq!(
        (&s["paused_until"], &s["phase_iteration"]),
        (&json!(null), &json!(1))
    );
}

/// SPEC §21 with the real CLI as reviewer: review 1's finding gets the id F1 in the
/// block text and the review file; the agent answers it by id in its post-review; the
/// prompt of review 2 carries the ledger — F1, its text, `fixed`, the agent's answer —
/// and the reviewer's `resolved` answer marks it resolved.
#[test]
fn the_second_review_of_a_cycle_sees_the_first_ones_findings_and_the_agents_answers() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let home = tempfile::tempdir().unwrap();
    let second = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let api = {
        let second = Arc::clone(&second);
        FakeApi::start(move |r| {
            if !second.load(Ordering::SeqCst) {
                return review_reply(r, "FAIL", "Step 2 has no test");
            }
            if r.assistant_turns() == 0 {
                Reply::tool(
                    "StructuredOutput",
                    json!({"verdict": "PASS", "summary": "F1 is fixed.", "findings": [],
                           "resolved": ["F1"], "reopened": []}),
                )
            } else {
                Reply::text("Done.")
            }
        })
    };
    let reason = hook_stop(&p, &api, home.path()).reason();
    assert!(
        reason.contains("- F1: Step 2 has no test")
            && reason.contains("Answer each finding by its id"),
        "{reason}"
    );
    assert!(
        p.read("plan-review-1.md")
            .contains("> - F1: Step 2 has no test")
    );
    std::fs::write(
        p.plan_dir().join("plan-post-review-1.md"),
        "# Post-review\n\nF1: fixed — step 2 now has a test in plan.md\n",
    )
    .unwrap();
    second.store(true, Ordering::SeqCst);
    let before = api.requests().len();
    hook_stop(&p, &api, home.path());
    let prompt = api.requests()[before..]
        .iter()
        .filter_map(|r| r.messages.clone())
        .next()
        .expect("review 2 ran")
        .first_user_text();
    assert!(
        prompt.contains(
            "- F1 [fixed] Step 2 has no test — agent: fixed — step 2 now has a test in plan.md"
        ),
        "{prompt}"
    );
    assert!(prompt.contains("Verify every `fixed` finding"), "{prompt}");
    let ledger: serde_json::Value =
        serde_json::from_str(&p.read("findings.json")).expect("the ledger is JSON");
    assert_eq!(ledger["cycles"][0]["findings"][0]["status"], "resolved");
    p.run_taskie(&["validate"]).ok();
}

#[test]
fn a_whole_review_loop_runs_in_one_turn_and_the_reviewer_runs_no_hooks() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let home = tempfile::tempdir().unwrap();
    // A user-level Stop hook that counts stops: the agent's session runs it, a reviewer
    // started with disableAllHooks must not.
    let settings = home.path().join(".claude");
    std::fs::create_dir_all(&settings).unwrap();
    let counter = home.path().join("stops");
    std::fs::write(
        settings.join("settings.json"),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command",
            "command": format!("echo stop >> '{}'", counter.display())}]}]}})
        .to_string(),
    )
    .unwrap();
    let verdicts = ["FAIL", "PASS", "PASS"];
    let reviews = Arc::new(AtomicUsize::new(0));
    let project = p.root();
    let seen = reviews.clone();
    let api = FakeApi::start(move |r| {
        if is_reviewer(r) {
            if r.assistant_turns() == 0 {
                let k = seen.fetch_add(1, Ordering::SeqCst);
                return review_reply(r, verdicts[k.min(2)], &format!("finding {k}"));
            }
            return Reply::text("Done.");
        }
        if r.answers_tool_calls() {
            return Reply::text("Post-review written; stopping so the next review runs.");
        }
        if let Some(reason) = continuation(r) {
            if let Some(file) = word_after(&reason, "write what you did to ") {
                let file = project.join(file.trim_end_matches('.'));
                return Reply::tool(
                    "Write",
                    json!({"file_path": file, "content": "# Post-review\n\nAddressed.\n"}),
                );
            }
            return Reply::text("Nothing more to do.");
        }
        Reply::text("The plan is written. Stopping.")
    });
    agent_turn(&p.root(), home.path(), &api, "Write the plan.");

    let state = p.state_json();
    assert_eq!(
        (
            state["phase"].as_str(),
            state["next_phase"].as_str(),
            state["phase_iteration"].as_u64(),
            state["consecutive_clean"].as_u64()
        ),
        (Some("plan-review"), Some("create-tasks"), Some(3), Some(2)),
        "{state}"
    );
    for f in [
        "plan-review-1.md",
        "plan-post-review-1.md",
        "plan-review-2.md",
        "plan-post-review-2.md",
        "plan-review-3.md",
    ] {
        assert!(p.exists(f), "{f}");
    }
    assert_eq!(reviews.load(Ordering::SeqCst), 3);
    let stops = std::fs::read_to_string(&counter).unwrap_or_default();
    assert_eq!(
        stops.lines().count(),
        3,
        "three agent stops ran the user's hook; the three reviewers ran none"
    );
    // The agent continued through the context channel, not a "blocking error".
    let agent: Vec<Request> = api
        .requests()
        .into_iter()
        .filter_map(|r| r.messages)
        .filter(|r| !is_reviewer(r))
        .collect();
    let continued: Vec<String> = agent.iter().filter_map(continuation).collect();
    assert_eq!(
        continued.len(),
        2,
        "two blocks: after FAIL, after the first PASS"
    );
    assert!(continued[0].contains("Verdict: FAIL") && continued[0].contains("- F1: finding 0"));
    assert!(
        agent
            .iter()
            .all(|r| !r.last_user_text().contains("Stop hook feedback:")),
        "the default channel is additionalContext"
    );
}

#[test]
fn two_sessions_in_one_project_never_review_each_others_plan() {
    // Plan a: nothing due yet. Plan b: a review due. Session 1 takes plan a.
    let p = Project::new()
        .plan("b")
        .state(due("plan-review"))
        .plan("a")
        .state(json!({"phase": "new-plan", "next_phase": null}));
    let home = tempfile::tempdir().unwrap();
    let reviewed = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let log = reviewed.clone();
    let api = FakeApi::start(move |r| {
        if is_reviewer(r) {
            let plan = word_after(&r.first_user_text(), "- Plan id: ")
                .unwrap_or("?")
                .to_string();
            if r.assistant_turns() == 0 {
                log.lock().unwrap().push(plan);
            }
            return review_reply(r, "PASS", "none");
        }
        let prompt = r.first_user_text();
        if prompt.contains("Take plan a") && !r.answers_tool_calls() {
            return Reply::tool(
                "Bash",
                json!({"command": "taskie continue-plan --plan a", "description": "take plan a"}),
            );
        }
        Reply::text("Stopping.")
    });
    let s1 = agent_turn(&p.root(), home.path(), &api, "Take plan a.");
    assert!(
        p.root()
            .join(format!(".taskie/sessions/{}.json", s1.session_id))
            .is_file(),
        "CLAUDE_CODE_SESSION_ID reached taskie in the agent's Bash tool"
    );
    assert!(
        reviewed.lock().unwrap().is_empty(),
        "session 1 stopped on plan a only"
    );

    // Plan a gets a review due and becomes the newest plan; session 2 must leave it alone.
    std::fs::write(
        p.root().join(".taskie/plans/a/state.json"),
        due("plan-review").to_string(),
    )
    .unwrap();
    let s2 = agent_turn(&p.root(), home.path(), &api, "Work on whatever is next.");
    assert_ne!(s1.session_id, s2.session_id);
    assert!(
        reviewed.lock().unwrap().is_empty(),
        "session 2 leaves plan a (active in session 1) alone and never falls back to plan b"
    );
    assert!(!p.root().join(".taskie/plans/a/plan-review-1.md").exists());
    assert!(!p.root().join(".taskie/plans/b/plan-review-1.md").exists());
}

/// The tool results the scripted model received, in order, over the whole run.
fn tool_results_seen(api: &FakeApi) -> Vec<crate::support::fake_api::ToolResult> {
    api.requests()
        .into_iter()
        .filter_map(|r| r.messages)
        .next_back()
        .map(|last| last.tool_results())
        .unwrap_or_default()
}

/// A scripted reviewer that runs each of `commands` with Bash, one per turn (the last
/// asking to run outside the sandbox when `escape` is set), then answers FAIL.
fn shell_reviewer(commands: Vec<String>, escape: bool) -> FakeApi {
    FakeApi::start(move |req| {
        let turn = req.assistant_turns();
        match commands.get(turn) {
            Some(c) => {
                let mut input = json!({"command": c, "description": "run"});
                if escape && turn + 1 == commands.len() {
                    input["dangerouslyDisableSandbox"] = json!(true);
                }
                Reply::tool("Bash", input)
            }
            None if turn == commands.len() => Reply::tool(
                "StructuredOutput",
                json!({"verdict": "FAIL", "summary": "Ran the commands.", "findings": ["Step 2 has no test"]}),
            ),
            None => Reply::text("Done."),
        }
    })
}

/// The sandbox's denial is the kernel's EROFS, worded by whichever shell Claude Code picked
/// (bash: "Read-only file system", zsh: "read-only file system"; it follows `$SHELL`).
fn denied_as_read_only(text: &str) -> bool {
    text.to_lowercase().contains("read-only file system")
}

/// SPEC §8: with Claude Code's sandbox, the reviewer's shell commands may write the
/// project and /tmp (builds and tests) and nothing else, and a command cannot ask its way
/// out. Needs bubblewrap and socat (.ci/run installs them): without them this test fails
/// and says so, it is never skipped.
#[test]
fn the_real_claude_reviewers_shell_commands_cannot_write_outside_the_project_and_tmp() {
    for tool in ["bwrap", "socat"] {
        assert!(
            which::which(tool).is_ok(),
            "Claude Code's sandbox needs {tool}: apt-get install bubblewrap socat"
        );
    }
    let p = Project::new().plan("p").state(due("plan-review"));
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir_in(crate::support::private_dir()).unwrap();
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let o = outside.path().display();
    let commands = vec![
        format!("echo escaped > {o}/escaped.txt"),
        format!("echo built > {}/tmp-out.txt", tmp.path().display()),
        "mkdir -p target && echo built > target/out.txt".to_string(),
        format!("echo escaped > {o}/escaped-again.txt"),
    ];
    let api = shell_reviewer(commands, true);
    let run = hook_stop(&p, &api, home.path());
    assert!(run.reason().contains("Verdict: FAIL"), "{}", run.stdout);
    let results = tool_results_seen(&api);
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(
        results[0].is_error && denied_as_read_only(&results[0].text),
        "a write outside is denied: {:?}",
        results[0]
    );
    assert!(!results[1].is_error && !results[2].is_error, "{results:?}");
    assert!(
        results[3].is_error && denied_as_read_only(&results[3].text),
        "asking to run unsandboxed changes nothing: {:?}",
        results[3]
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing was written outside"
    );
    assert!(tmp.path().join("tmp-out.txt").exists());
    assert!(p.root().join("target/out.txt").exists());
    assert!(
        p.last_event()
            .get("worktree")
            .and_then(|w| w.get("unsandboxed"))
            .is_none(),
        "{}",
        p.last_event()
    );
}

/// A PATH with every program of the tests' PATH but `bwrap`.
fn path_without_bwrap(dir: &Path) -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    for entry in std::env::split_paths(&path).filter_map(|d| std::fs::read_dir(d).ok()) {
        for program in entry.flatten() {
            let target = dir.join(program.file_name());
            if program.file_name() != "bwrap" && !target.exists() {
                let _ = std::os::unix::fs::symlink(program.path(), target);
            }
        }
    }
    format!("{}:{}", claude_user_bin(), dir.display())
}

fn claude_user_bin() -> String {
    crate::support::claude_user::bin_dir().display().to_string()
}

/// Without bubblewrap the real CLI runs the reviewer's commands unsandboxed and warns on
/// stderr: the review goes on, and its header and event say why.
#[test]
fn without_bubblewrap_the_real_claude_reviewer_runs_unsandboxed_and_the_review_says_so() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let home = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let path = path_without_bwrap(bin.path());
    let api = shell_reviewer(vec!["echo ran".to_string()], false);
    let run = hook_stop_with(&p, &api, home.path(), |c| {
        c.env("PATH", &path);
    });
    assert!(run.reason().contains("Verdict: FAIL"), "{}", run.stdout);
    let results = tool_results_seen(&api);
    assert!(!results[0].is_error, "{:?}", results[0]);
    let why = p.last_event()["worktree"]["unsandboxed"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(why.contains("bubblewrap (bwrap) not installed"), "{why}");
    assert!(
        p.read("plan-review-1.md").contains(
            "\n> Sandbox: the reviewer's shell commands ran without Claude Code's sandbox"
        ),
        "{}",
        p.read("plan-review-1.md")
    );
}

/// Measured: with a `bwrap` that cannot create namespaces the real CLI still starts its
/// sandbox and every command of the reviewer fails with bubblewrap's error. The hook tries
/// bubblewrap first and asks for no sandbox: the reviewer keeps its shell, and the review
/// says why.
#[test]
fn where_bubblewrap_cannot_start_the_real_claude_reviewer_keeps_its_shell_and_the_review_says_why()
{
    let p = Project::new().plan("p").state(due("plan-review"));
    let home = tempfile::tempdir().unwrap();
    let bin = crate::support::broken_bwrap();
    let path = format!(
        "{}:{}:{}",
        bin.path().display(),
        claude_user_bin(),
        std::env::var("PATH").unwrap_or_default()
    );
    let api = shell_reviewer(vec!["echo ran".to_string()], false);
    let run = hook_stop_with(&p, &api, home.path(), |c| {
        c.env("PATH", &path);
    });
    assert!(run.reason().contains("Verdict: FAIL"), "{}", run.stdout);
    let results = tool_results_seen(&api);
    assert!(
        !results[0].is_error && results[0].text.contains("ran"),
        "{:?}",
        results[0]
    );
    assert_eq!(
        p.last_event()["worktree"]["unsandboxed"],
        json!(
            "bubblewrap cannot start a sandbox here: bwrap: No permissions to create new namespace"
        )
    );
}
