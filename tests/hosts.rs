//! SPEC §20: one hook for Claude Code, Codex CLI and Gemini CLI, told apart by the event,
//! answered in the shape each accepts; the real binary, events as each client sends them
//! (docs/hosts.md has the measured shapes).

use crate::support::{Fake, Project, due};
use serde_json::{Value, json};

/// Codex CLI 0.169.0's Stop event, as the pinned CLI sends it.
pub fn codex_stop(p: &Project, session: &str, active: bool) -> Value {
    json!({
        "session_id": session,
        "turn_id": "019a-turn",
        "transcript_path": null,
        "cwd": p.root(),
        "hook_event_name": "Stop",
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "stop_hook_active": active,
        "last_assistant_message": "done"
    })
}

/// Gemini CLI 0.61.0's AfterAgent event.
pub fn gemini_stop(p: &Project, session: &str, active: bool) -> Value {
    json!({
        "session_id": session,
        "transcript_path": "/tmp/t.json",
        "cwd": p.root(),
        "hook_event_name": "AfterAgent",
        "timestamp": "2026-11-24T10:00:00.000Z",
        "prompt": "go on",
        "prompt_response": "done",
        "stop_hook_active": active
    })
}

#[test]
fn an_event_over_4_mib_still_runs_the_due_review_under_each_client() {
    // The agent's last message, which the event carries and Taskie ignores, is 6 MiB.
    let long = "a long answer\n".repeat(6 * 1024 * 1024 / 14);
    for (name, event, field) in [
        ("gemini", gemini_stop as EventFn, "prompt_response"),
        ("codex", codex_stop, "last_assistant_message"),
    ] {
        let p = Project::new()
            .plan("p")
            .state(due("plan-review"))
            .reviewer(&Fake::fail());
        let mut e = event(&p, "s1", false);
        e[field] = json!(long);
        let run = p.run_hook(e);
        assert!(run.is_block(), "{name}: {}", run.stdout);
        assert_eq!(p.reviewer_calls(), 1, "{name}");
        assert_eq!(p.state_json()["phase_iteration"], 1, "{name}");
    }
}

fn claude_stop(p: &Project) -> Value {
    json!({"session_id": "c1", "cwd": p.root(), "hook_event_name": "Stop", "stop_hook_active": false})
}

fn failing_review() -> Project {
    Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail())
}

#[test]
fn codex_and_gemini_get_the_classic_block_and_never_hook_specific_output() {
    for (name, event) in [
        ("codex", codex_stop as fn(&Project, &str, bool) -> Value),
        ("gemini", gemini_stop),
    ] {
        let p = failing_review();
        let run = p.run_hook(event(&p, "s1", false));
        let a = run.answer();
        assert_eq!(a["decision"], "block", "{name}: {a}");
        assert!(
            a["reason"].as_str().unwrap().contains("plan-review-1.md"),
            "{name}: {a}"
        );
        assert!(a.get("hookSpecificOutput").is_none(), "{name}: {a}");
    }
}

#[test]
fn claude_code_keeps_additional_context_by_default() {
    let p = failing_review();
    let a = p.run_hook(claude_stop(&p)).answer();
    assert!(a.get("decision").is_none(), "{a}");
    assert_eq!(a["hookSpecificOutput"]["hookEventName"], "Stop");
}

#[test]
fn the_block_style_variable_does_not_change_what_codex_gets() {
    let p = failing_review().env("TASKIE_BLOCK_STYLE", "context");
    let a = p.run_hook(codex_stop(&p, "s1", false)).answer();
    assert_eq!(a["decision"], "block", "{a}");
}

#[test]
fn taskie_client_overrides_what_the_event_says() {
    let p = failing_review().env("TASKIE_CLIENT", "gemini");
    let a = p.run_hook(claude_stop(&p)).answer();
    assert_eq!(a["decision"], "block", "{a}");
    let p = failing_review().env("TASKIE_CLIENT", "claude");
    let a = p.run_hook(codex_stop(&p, "s1", false)).answer();
    assert!(a.get("hookSpecificOutput").is_some(), "{a}");
}

#[test]
fn an_allow_to_codex_or_gemini_carries_only_a_system_message() {
    for event in [codex_stop as fn(&Project, &str, bool) -> Value, gemini_stop] {
        let p = Project::new()
            .plan("p")
            .state(due("plan-review"))
            .reviewer(&Fake::pass())
            .env("TASKIE_BLOCK_STYLE", "decision");
        // Already one clean review: this PASS ends the cycle with an allow.
        p.taskie(&["state", "set", "consecutive_clean=1"])
            .assert()
            .success();
        let a = p.run_hook(event(&p, "s1", false)).answer();
        let keys: Vec<&String> = a.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["systemMessage"], "{a}");
    }
}

fn dry_run(p: &Project, event: Value) -> Value {
    let out = p
        .hook_command()
        .args(["--dry-run", "--json"])
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn the_dry_run_says_which_client_it_assumed_why_and_how_it_would_block() {
    let p = failing_review();
    let r = dry_run(&p, codex_stop(&p, "s1", false));
    assert_eq!(
        r["client"],
        json!({"name": "codex", "why": "the Stop event has a turn_id and a model", "block": "decision"})
    );
    assert_eq!(r["if_fail"]["answer"]["decision"], "block", "{r}");
    let r = dry_run(&p, gemini_stop(&p, "s1", false));
    assert_eq!(r["client"]["name"], "gemini");
    assert_eq!(r["client"]["why"], "the event is AfterAgent");
    let r = dry_run(&p, claude_stop(&p));
    assert_eq!(r["client"]["name"], "claude");
    assert_eq!(r["client"]["block"], "additionalContext");
    assert!(r["if_fail"]["answer"].get("hookSpecificOutput").is_some());
    let human = p
        .hook_command()
        .arg("--dry-run")
        .write_stdin(gemini_stop(&p, "s1", false).to_string())
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human
            .contains("client:      gemini (the event is AfterAgent; a block is sent as decision)"),
        "{human}"
    );
}

#[test]
fn the_dry_run_names_a_wrong_taskie_client_and_goes_by_the_event() {
    let p = failing_review().env("TASKIE_CLIENT", "cursor");
    let r = dry_run(&p, codex_stop(&p, "s1", false));
    assert_eq!(r["client"]["name"], "codex");
    assert!(
        r["client"]["why"]
            .as_str()
            .unwrap()
            .contains("TASKIE_CLIENT=\"cursor\" is not claude, codex or gemini"),
        "{r}"
    );
}

// Taskie's own block cap.

type EventFn = fn(&Project, &str, bool) -> Value;

fn claude_event(p: &Project, session: &str, active: bool) -> Value {
    json!({"session_id": session, "cwd": p.root(), "hook_event_name": "Stop", "stop_hook_active": active})
}

/// The post-review file a block reason asks for.
fn post_review_named_in(reason: &str) -> String {
    let start =
        reason.find("write what you did to ").expect(reason) + "write what you did to ".len();
    let rest = &reason[start..];
    rest[..rest.find(". ").unwrap()].to_owned()
}

#[test]
fn an_endless_fail_loop_is_allowed_at_the_cap_in_every_client_and_the_count_starts_again() {
    for (name, event) in [
        ("codex", codex_stop as EventFn),
        ("gemini", gemini_stop),
        ("claude", claude_event),
    ] {
        let p = Project::new()
            .plan("p")
            .state(json!({"next_phase": "plan-review", "max_reviews": 20}))
            .reviewer(&Fake::fail())
            .env("TASKIE_BLOCK_CAP", "3");
        let mut active = false;
        for i in 1..=3 {
            let run = p.run_hook(event(&p, "s1", active));
            let reason = run.reason();
            std::fs::write(p.root().join(post_review_named_in(&reason)), "Fixed.\n").unwrap();
            assert_eq!(p.reviewer_calls(), i, "{name}");
            active = true;
        }
        // The fourth block in a row is not sent: the stop is allowed and says why.
        let message = p.run_hook(event(&p, "s1", active)).message();
        assert!(
            message.contains("3 times in a row") && message.contains("TASKIE_BLOCK_CAP=3"),
            "{name}: {message}"
        );
        assert!(message.contains("plan-review-4.md"), "{name}: {message}");
        let last = p.last_event();
        assert_eq!(
            (&last["outcome"], &last["path"], &last["block_cap"]),
            (&json!("allow"), &json!("review-blocked"), &json!(3)),
            "{name}"
        );
        // The agent goes on (the user resumed it) and writes the post-review: the next
        // review blocks again, since an allowed stop started the count again.
        std::fs::write(p.plan_dir().join("plan-post-review-4.md"), "Fixed.\n").unwrap();
        assert!(p.run_hook(event(&p, "s1", false)).is_block(), "{name}");
        assert_eq!(p.reviewer_calls(), 5, "{name}");
    }
}

/// A plan with a stray file in its directory: every stop is a structure-error block.
fn stray_file_plan() -> Project {
    Project::new()
        .plan("p")
        .state(due("plan-review"))
        .file("draft.md", "x")
}

#[test]
fn a_structure_error_loop_under_gemini_ends_at_the_default_cap_of_eight() {
    // Gemini sets stop_hook_active back to false after a tool call, so the structure-error
    // block (which waits for stop_hook_active) would loop for ever without the cap.
    let p = stray_file_plan();
    for i in 1..=8 {
        let run = p.run_hook(gemini_stop(&p, "g1", false));
        assert!(
            run.reason()
                .starts_with("Plan 'p': Invalid filename: draft.md"),
            "stop {i}"
        );
    }
    let message = p.run_hook(gemini_stop(&p, "g1", false)).message();
    assert!(message.contains("8 times in a row"), "{message}");
    assert!(p.run_hook(gemini_stop(&p, "g1", false)).is_block());
}

#[test]
fn when_the_count_of_blocks_cannot_be_saved_the_stop_is_allowed_instead_of_blocking_without_end() {
    let outside = crate::support::tempdir();
    for (what, plant) in [
        (
            "not a directory",
            &(|p: &std::path::Path, _: &std::path::Path| std::fs::write(p, "7\n").unwrap())
                as &dyn Fn(&std::path::Path, &std::path::Path),
        ),
        ("a symbolic link", &|p, out| {
            std::os::unix::fs::symlink(out, p).unwrap()
        }),
    ] {
        let p = stray_file_plan();
        plant(&p.root().join(".taskie/blocks"), outside.path());
        for stop in 1..=10 {
            let run = p.run_hook(gemini_stop(&p, "g1", false));
            assert!(!run.is_block(), "{what}, stop {stop}: {}", run.stdout);
            let message = run.message();
            assert!(
                message.contains(&format!(".taskie/blocks is {what}; remove it"))
                    && message.contains("Invalid filename: draft.md"),
                "{what}: {message}"
            );
        }
        assert_eq!(p.last_event()["outcome"], "allow", "{what}");
    }
}

#[test]
fn each_session_has_its_own_count() {
    let p = stray_file_plan()
        .env("TASKIE_BLOCK_CAP", "1")
        // Named, so that neither session's stop leaves the plan to the other (SPEC §17).
        .env("TASKIE_PLAN", "p");
    assert!(p.run_hook(codex_stop(&p, "a", false)).is_block());
    assert!(p.run_hook(codex_stop(&p, "b", false)).is_block());
    assert!(!p.run_hook(codex_stop(&p, "a", false)).is_block());
    assert!(!p.run_hook(codex_stop(&p, "b", false)).is_block());
}

#[test]
fn the_dry_run_counts_the_blocks_in_a_row_and_answers_what_the_cap_leaves() {
    let p = stray_file_plan().env("TASKIE_BLOCK_CAP", "2");
    let event = codex_stop(&p, "s1", false);
    let r = dry_run(&p, event.clone());
    assert_eq!(r["blocks"], json!({"in_a_row": 0, "cap": 2}), "{r}");
    assert_eq!(r["answer"]["decision"], "block", "{r}");
    assert!(p.run_hook(event.clone()).is_block());
    assert!(p.run_hook(event.clone()).is_block());
    // At the cap the dry run shows the allow the hook then gives, word for word.
    let r = dry_run(&p, event.clone());
    assert_eq!(r["blocks"], json!({"in_a_row": 2, "cap": 2}), "{r}");
    let human = p
        .hook_command()
        .arg("--dry-run")
        .write_stdin(event.to_string())
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains("blocks:      2 in a row (cap 2 reached: a block now is allowed instead)"),
        "{human}"
    );
    let real = p.run_hook(event).answer();
    assert!(
        real["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("2 times in a row")),
        "{real}"
    );
    assert_eq!(r["answer"], real);
}

// Block texts a model can act on.

fn repo() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `<dir>/actions/<name>.md` path a text names.
fn action_paths(text: &str) -> Vec<std::path::PathBuf> {
    text.split_whitespace()
        .filter(|w| w.contains("/actions/") && w.contains(".md"))
        .map(|w| std::path::PathBuf::from(&w[..w.find(".md").unwrap() + 3]))
        .collect()
}

#[test]
fn codex_and_gemini_blocks_name_the_actions_instructions_by_absolute_path_and_the_file_to_write() {
    for event in [codex_stop as EventFn, gemini_stop] {
        let p = failing_review().env(
            "TASKIE_PLUGIN_ROOT",
            repo().join("hooks/..").to_str().unwrap(),
        );
        let reason = p.run_hook(event(&p, "s1", false)).reason();
        assert!(!reason.contains("/taskie:"), "{reason}");
        let paths = action_paths(&reason);
        assert_eq!(
            paths,
            [repo().join("actions/post-plan-review.md")],
            "{reason}"
        );
        assert!(paths[0].is_file());
        assert!(
            reason.contains("write what you did to .taskie/plans/p/plan-post-review-1.md."),
            "{reason}"
        );
    }
}

#[test]
fn claude_code_blocks_keep_the_slash_command() {
    let p = failing_review().env(
        "TASKIE_PLUGIN_ROOT",
        repo().join("dist/claude").to_str().unwrap(),
    );
    let reason = p.run_hook(claude_stop(&p)).reason();
    assert!(
        reason.contains("Now perform /taskie:post-plan-review: read"),
        "{reason}"
    );
}

/// Registered by hand in settings.json (no plugin: no `/taskie:<action>` exists), the
/// hook names the action's file: its own copy of the actions, written where it keeps its
/// cache, or the checkout's when a launcher there was registered.
#[test]
fn without_the_plugin_claude_code_blocks_name_the_actions_file_instead_of_a_slash_command() {
    let cache = crate::support::tempdir();
    let p = failing_review()
        .env("TASKIE_PLUGIN_ROOT", "")
        .env("XDG_CACHE_HOME", cache.path().to_str().unwrap());
    let reason = p.run_hook(claude_stop(&p)).reason();
    assert!(!reason.contains("/taskie:"), "{reason}");
    let own = cache
        .path()
        .join("taskie")
        .join(env!("CARGO_PKG_VERSION"))
        .join("actions/post-plan-review.md");
    assert_eq!(
        action_paths(&reason),
        std::slice::from_ref(&own),
        "{reason}"
    );
    assert_eq!(
        std::fs::read_to_string(&own).unwrap(),
        std::fs::read_to_string(repo().join("actions/post-plan-review.md")).unwrap(),
        "the copy is the action"
    );
    assert!(
        reason.contains("write what you did to .taskie/plans/p/plan-post-review-1.md."),
        "{reason}"
    );
    // The checkout's launcher registered by hand names the checkout, which is no plugin.
    let p = failing_review().env("TASKIE_PLUGIN_ROOT", repo().to_str().unwrap());
    let reason = p.run_hook(claude_stop(&p)).reason();
    assert_eq!(
        action_paths(&reason),
        [repo().join("actions/post-plan-review.md")],
        "{reason}"
    );
}

#[test]
fn a_structure_error_block_under_gemini_names_the_action_that_fixes_it_by_path() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .env("TASKIE_PLUGIN_ROOT", repo().to_str().unwrap());
    std::fs::remove_file(p.plan_dir().join("plan.md")).unwrap();
    let reason = p.run_hook(gemini_stop(&p, "g", false)).reason();
    assert!(reason.contains("/actions/new-plan.md"), "{reason}");
    assert!(!reason.contains("/taskie:"), "{reason}");
    let paths = action_paths(&reason);
    assert!(!paths.is_empty(), "{reason}");
    for path in paths {
        assert!(path.is_file(), "{} in {reason}", path.display());
    }
}

#[test]
fn auto_continue_under_codex_says_where_the_named_action_is() {
    let p = Project::new()
        .plan("p")
        .state(json!({"next_phase": "plan-review", "consecutive_clean": 1, "auto_continue": true}))
        .reviewer(&Fake::pass())
        .env("TASKIE_PLUGIN_ROOT", repo().to_str().unwrap());
    let reason = p.run_hook(codex_stop(&p, "s1", false)).reason();
    assert!(reason.contains("`taskie continue-plan`"), "{reason}");
    assert!(
        reason.contains(&format!(
            "instructions in {}/actions/<action>.md",
            repo().display()
        )),
        "{reason}"
    );
}

// Sessions and the project ceiling per client.

#[test]
fn a_command_in_a_codex_shell_binds_its_thread_and_that_sessions_stop_reviews_its_plan() {
    let p = Project::new()
        .plan("b")
        .state(due("plan-review"))
        .plan("a")
        .state(due("plan-review"))
        .reviewer(&Fake::fail());
    // a is the newest plan; the Codex session works on b.
    std::thread::sleep(std::time::Duration::from_millis(20));
    p.taskie(&["continue-plan", "--plan", "b"])
        .env("CODEX_THREAD_ID", "019a-thread")
        .assert()
        .success();
    assert!(p.root().join(".taskie/sessions/019a-thread.json").is_file());
    assert!(p.run_hook(codex_stop(&p, "019a-thread", false)).is_block());
    assert_eq!(p.last_event()["plan"], "b");
}

#[test]
fn claude_codes_session_variable_wins_over_codexs() {
    let p = Project::new().plan("a").state(due("plan-review"));
    p.taskie(&["continue-plan", "--plan", "a"])
        .env("CODEX_THREAD_ID", "t-codex")
        .env("CLAUDE_CODE_SESSION_ID", "s-claude")
        .assert()
        .success();
    assert!(p.root().join(".taskie/sessions/s-claude.json").is_file());
    assert!(!p.root().join(".taskie/sessions/t-codex.json").exists());
}

#[test]
fn gemini_project_dir_is_the_ceiling_when_claude_project_dir_is_not_set() {
    // The plans are in an enclosing directory; the Gemini session's project is below it.
    let p = Project::new().plan("p").state(due("plan-review"));
    let inner = p.root().join("inner");
    std::fs::create_dir_all(inner.join("src")).unwrap();
    let mut event = gemini_stop(&p, "g", false);
    event["cwd"] = json!(inner.join("src"));
    let run: crate::support::Run = p
        .hook_command()
        .env("GEMINI_PROJECT_DIR", &inner)
        .write_stdin(event.to_string())
        .output()
        .unwrap()
        .into();
    run.assert_silent();
    assert_eq!(
        p.reviewer_calls(),
        0,
        "no plan above GEMINI_PROJECT_DIR is used"
    );
    // Without the ceiling the enclosing project is found.
    assert!(p.run_hook(event).is_block());
}

// Packaging: one repository is the Claude Code plugin, a Codex plugin and a Gemini
// extension; what Codex and Gemini read is generated from actions/*.md.

fn actions() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("actions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".md").map(str::to_owned))
        .collect();
    names.sort();
    names
}

fn json_file(rel: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn the_generated_codex_and_gemini_files_are_up_to_date_with_the_actions() {
    let out = std::process::Command::new("sh")
        .arg(repo().join("dist/hosts/generate.sh"))
        .arg("--check")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_action_is_a_codex_skill_and_a_gemini_command() {
    let names = actions();
    assert_eq!(names.len(), 18);
    for a in &names {
        let skill = std::fs::read_to_string(repo().join(format!("dist/codex/skills/{a}/SKILL.md")))
            .unwrap_or_else(|e| panic!("{a}: {e}"));
        assert!(
            skill.starts_with(&format!("---\nname: {a}\ndescription: \"")),
            "{a}"
        );
        assert!(
            !skill.contains("$ARGUMENTS") && !skill.contains("${CLAUDE_PLUGIN_ROOT}"),
            "{a}"
        );
        assert!(
            !skill.contains("/taskie:"),
            "{a}: Codex has no slash commands of ours"
        );
        // Paths in a skill are relative to its folder and lead into the plugin.
        if skill.contains("`../../actions/ground-rules.md`") {
            assert!(
                repo()
                    .join(format!(
                        "dist/codex/skills/{a}/../../actions/ground-rules.md"
                    ))
                    .is_file()
            );
        }
        let command =
            std::fs::read_to_string(repo().join(format!("dist/gemini/commands/taskie/{a}.toml")))
                .unwrap();
        assert!(command.contains("\ndescription = \""), "{a}");
        assert!(
            command.contains("\nprompt = '''\n") && command.ends_with("'''\n"),
            "{a}"
        );
        assert!(
            !command.contains("$ARGUMENTS") && !command.contains("${CLAUDE_PLUGIN_ROOT}"),
            "{a}"
        );
    }
}

/// Each client reads a directory of its own, which holds what it reads and nothing of
/// another client's (which it would warn about) and no build output.
#[test]
fn each_client_has_a_plugin_directory_of_its_own_with_the_actions_and_the_launcher() {
    let launcher = std::fs::read_to_string(repo().join("hooks/taskie-stop-hook")).unwrap();
    for (client, manifest, others) in [
        (
            "claude",
            ".claude-plugin/plugin.json",
            &[
                ".codex-plugin",
                "gemini-extension.json",
                "commands",
                "skills",
            ][..],
        ),
        (
            "codex",
            ".codex-plugin/plugin.json",
            &[".claude-plugin", "gemini-extension.json", "commands"][..],
        ),
        (
            "gemini",
            "gemini-extension.json",
            &[".claude-plugin", ".codex-plugin", "skills"][..],
        ),
    ] {
        let dir = repo().join("dist").join(client);
        let m = json_file(&format!("dist/{client}/{manifest}"));
        assert_eq!(m["name"], "taskie", "{client}");
        assert_eq!(m["version"], env!("CARGO_PKG_VERSION"), "{client}");
        for other in others {
            assert!(!dir.join(other).exists(), "{client} holds {other}");
        }
        assert!(!dir.join("target").exists(), "{client}");
        for a in actions() {
            assert!(
                dir.join(format!("actions/{a}.md")).is_file(),
                "{client}: {a}"
            );
        }
        // The launcher, except that its build in place is the checkout's, two levels up.
        let copy = std::fs::read_to_string(dir.join("hooks/taskie-stop-hook")).unwrap();
        assert_eq!(
            copy,
            launcher.replace("\ncheckout=$plugin\n", "\ncheckout=$plugin/../..\n"),
            "{client}"
        );
        assert_ne!(copy, launcher, "{client}");
    }
    let codex = json_file("dist/codex/.codex-plugin/plugin.json");
    assert_eq!(codex["skills"], "./skills/");
    assert_eq!(codex["hooks"], "./hooks/hooks.json");
    // Codex reads its own marketplace before Claude Code's, so each finds its directory.
    let market = json_file(".agents/plugins/marketplace.json");
    assert_eq!(market["name"], "taskie");
    assert_eq!(market["plugins"][0]["name"], "taskie");
    assert_eq!(market["plugins"][0]["source"]["path"], "./dist/codex");
}

#[test]
fn codex_and_gemini_source_the_launcher_else_start_it_with_sh_with_the_same_time_limit() {
    let hook = |client: &str, event: &str| {
        let hooks = json_file(&format!("dist/{client}/hooks/hooks.json"));
        let events: Vec<&String> = hooks["hooks"].as_object().unwrap().keys().collect();
        assert_eq!(events, [event], "{client}: only its own stop event");
        hooks["hooks"][event][0]["hooks"][0].clone()
    };
    let claude = hook("claude", "Stop");
    let codex = hook("codex", "Stop");
    let gemini = hook("gemini", "AfterAgent");
    // Sourced into a shell that can (no second shell), else started with /bin/sh (fish and
    // csh fail the first command); the placeholder is each client's own.
    let command = |root: &str| {
        format!(
            "TASKIE_PLUGIN_ROOT='{root}' . '{root}/hooks/taskie-stop-hook'; \
             exec /bin/sh '{root}/hooks/taskie-stop-hook'"
        )
    };
    assert_eq!(codex["command"], command("${PLUGIN_ROOT}"));
    // On Windows Codex runs `commandWindows` through PowerShell: the batch launcher.
    assert_eq!(
        codex["commandWindows"],
        "& '${PLUGIN_ROOT}/hooks/taskie-stop-hook.cmd'"
    );
    // Gemini has no per-platform field: bash reads the same command behind a prefix that
    // opens a PowerShell comment, PowerShell the batch launcher after it (docs/windows.md).
    assert_eq!(
        gemini["command"],
        format!(
            "set \"\\\" <# \"; shift; {} #> & '${{extensionPath}}/hooks/taskie-stop-hook.cmd'",
            command("${extensionPath}")
        )
    );
    // Codex reads seconds, Gemini milliseconds: the same 30 minutes as Claude Code's.
    assert_eq!(codex["timeout"], claude["timeout"]);
    assert_eq!(
        gemini["timeout"].as_u64().unwrap(),
        claude["timeout"].as_u64().unwrap() * 1000
    );
}
