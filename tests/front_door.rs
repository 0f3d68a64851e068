//! The conventions of the command line a newcomer meets first: `taskie plans`, `-C`, `-p`,
//! `--color`, shell completions, one prefix per message, and no words for the agent said
//! to a person at a terminal.

use crate::support::{Project, due};
use serde_json::json;

#[test]
fn plans_lists_every_plan_with_its_phases_stops_pauses_sessions_and_the_default() {
    let p = Project::new()
        .plan("stopped")
        .state(json!({"phase": "plan-review", "next_phase": "plan-review",
                      "phase_iteration": 2, "max_reviews": 2}))
        .plan("paused")
        .state(
            json!({"phase": "new-plan", "next_phase": "plan-review", "phase_iteration": 0,
                      "paused_until": "2999-01-01T00:00:00Z", "paused_by": "claude"}),
        )
        .plan("fresh");
    // The agent's session works on "paused" (its command binds it).
    p.taskie(&["continue-plan", "--plan", "paused"])
        .env("CLAUDE_CODE_SESSION_ID", "s-agent")
        .output()
        .unwrap();
    let v = p.taskie_json(&["plans", "--json"]);
    let plans = v.as_array().unwrap();
    let by_id = |id: &str| plans.iter().find(|e| e["id"] == id).unwrap().clone();
    assert_eq!(plans.len(), 3, "{v}");
    let stopped = by_id("stopped");
    assert_eq!(stopped["hard_stop"], "max_reviews_reached");
    assert_eq!(
        (&stopped["phase"], &stopped["next_phase"]),
        (&json!("plan-review"), &json!("plan-review"))
    );
    let paused = by_id("paused");
    assert_eq!(paused["paused_until"], "2999-01-01T00:00:00Z");
    assert_eq!(paused["session"], "s-agent");
    let fresh = by_id("fresh");
    assert_eq!(fresh["phase"], json!(null));
    assert!(
        fresh["condition"]
            .as_str()
            .unwrap()
            .contains("`taskie init fresh`"),
        "{fresh}"
    );
    assert!(plans.iter().all(|e| e["changed"].is_string()), "{v}");
    // Exactly one is the plan commands pick without --plan, the one `status` picks.
    let default: Vec<&serde_json::Value> = plans.iter().filter(|e| e["default"] == true).collect();
    assert_eq!(default.len(), 1, "{v}");
    let status = p.taskie_json(&["status", "--json"]);
    assert_eq!(default[0]["id"], status["plan"], "{status}");

    let text = p.run_taskie(&["plans"]).ok().to_owned();
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains("stopped plan-review → plan-review"), "{text}");
    assert!(text.contains("fresh -"), "{text}");
    assert!(text.contains("hard stop (max_reviews_reached)"), "{text}");
    assert!(text.contains("paused until 2999-01-01 00:00 UTC"), "{text}");
    assert!(
        text.contains("`taskie resume --plan paused` lifts it"),
        "{text}"
    );
    assert!(text.contains("session s-agent works on it"), "{text}");
    assert!(
        text.contains("* the plan taskie commands act on without --plan"),
        "{text}"
    );
}

#[test]
fn plans_in_a_project_without_plans_says_how_to_start_one() {
    let p = Project::new();
    std::fs::create_dir_all(p.root().join(".taskie")).unwrap();
    let text = p.run_taskie(&["plans"]).ok().to_owned();
    assert!(text.starts_with("No plans in "), "{text}");
    assert!(text.contains("/taskie:new-plan"), "{text}");
    assert_eq!(p.taskie_json(&["plans", "--json"]), json!([]));
}

#[test]
fn dash_c_runs_taskie_as_if_started_in_that_directory() {
    let p = Project::new().plan("far").state(due("plan-review"));
    let elsewhere = tempfile::tempdir().unwrap();
    let mut cmd = p.taskie(&["-C"]);
    cmd.arg(p.root())
        .args(["status", "--json"])
        .current_dir(elsewhere.path());
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["plan"], "far");
    // A directory that is not there is a usage error naming it.
    let run = p.run_taskie(&["--directory", "/no/such/dir", "status"]);
    let err = run.fails_with(2);
    assert!(
        err.starts_with("taskie: -C /no/such/dir: cannot change to that directory"),
        "{err}"
    );
}

#[test]
fn dash_p_is_short_for_plan_in_taskie_and_taskie_hook() {
    let p = Project::new()
        .plan("one")
        .state(due("plan-review"))
        .plan("two")
        .state(due("tasks-review"));
    assert_eq!(
        p.taskie_json(&["status", "-p", "one", "--json"])["plan"],
        "one"
    );
    let out = p
        .hook_command()
        .args(["--dry-run", "--json", "-p", "one", "--cwd"])
        .arg(p.root())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["plan"]["id"], "one", "{v}");
}

#[test]
fn color_always_colours_a_pipe_and_never_or_auto_does_not() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let always = p
        .run_taskie(&["--color", "always", "status"])
        .ok()
        .to_owned();
    assert!(always.contains('\x1b'), "{always}");
    for args in [&["--color", "never", "status"][..], &["status"][..]] {
        let text = p.run_taskie(args).ok().to_owned();
        assert!(!text.contains('\x1b'), "{args:?}: {text}");
    }
    let err = p
        .run_taskie(&["--color", "sometimes", "status"])
        .fails_with(2)
        .to_owned();
    assert!(
        err.contains("auto") && err.contains("always") && err.contains("never"),
        "{err}"
    );
}

#[test]
fn completions_are_generated_for_each_shell_from_the_command_line_itself() {
    let p = Project::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = p.run_taskie(&["completions", shell]).ok().to_owned();
        for word in ["continue-plan", "plans", "plan", "directory", "color"] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    // Works anywhere: no project is needed.
    let out = assert_cmd::Command::cargo_bin("taskie")
        .unwrap()
        .args(["completions", "bash"])
        .current_dir("/")
        .output()
        .unwrap();
    assert!(out.status.success());
}

#[test]
fn an_error_line_carries_one_prefix() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let err = p
        .run_taskie(&["mark", "complete-task"])
        .fails_with(2)
        .to_owned();
    assert!(
        err.starts_with("taskie: `mark complete-task` needs the task: add --task <N>"),
        "{err}"
    );
    let err = p
        .run_taskie(&["mark", "create-tasks", "--task", "1"])
        .fails_with(2)
        .to_owned();
    assert!(
        err.starts_with("taskie: `mark create-tasks` takes no --task"),
        "{err}"
    );
}

#[test]
fn init_without_a_plan_names_the_file_to_write_even_before_any_taskie_directory() {
    let p = Project::new();
    let err = p.run_taskie(&["init", "x"]).fails_with(1).to_owned();
    let path = p.root().join(".taskie/plans/x/plan.md");
    assert!(
        err.contains(&format!(
            "{} does not exist: write the plan there first",
            path.display()
        )),
        "{err}"
    );
    assert!(err.contains("then run `taskie init x`"), "{err}");
    let p = Project::new().plan("other");
    let err = p.run_taskie(&["init", "x"]).fails_with(1).to_owned();
    assert!(
        err.contains(".taskie/plans/x/plan.md does not exist: write the plan there first"),
        "{err}"
    );
}

#[test]
fn init_tells_the_agent_to_stop_and_a_person_at_a_terminal_what_happens_next() {
    let p = Project::new().plan("x");
    let agent = p
        .taskie(&["init", "x"])
        .env("CLAUDE_CODE_SESSION_ID", "s1")
        .output()
        .unwrap();
    let agent = String::from_utf8(agent.stdout).unwrap();
    assert!(
        agent.contains("Stop now: the hook runs plan-review #1"),
        "{agent}"
    );

    // A person: a terminal (script(1) gives the command one) and no session id.
    let p = Project::new().plan("x");
    let taskie = assert_cmd::cargo::cargo_bin("taskie");
    let out = std::process::Command::new("script")
        .args(["-qec"])
        .arg(format!("{} init x", taskie.display()))
        .arg("/dev/null")
        .current_dir(p.root())
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("CODEX_THREAD_ID")
        .env_remove("TASKIE_PLAN")
        .output()
        .expect("script(1) from util-linux runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("Initialised .taskie/plans/x/state.json"),
        "{text}"
    );
    assert!(
        text.contains("The hook runs plan-review #1 at the agent's next stop."),
        "{text}"
    );
    assert!(!text.contains("Stop now"), "{text}");
}
