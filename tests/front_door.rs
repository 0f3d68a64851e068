//! The conventions of the command line a newcomer meets first: `taskie plans`, `-C`, `-p`,
//! `--color`, shell completions, one prefix per message, and no words for the agent said
//! to a person at a terminal.

use crate::support::{Project, due, git};
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
    let elsewhere = crate::support::tempdir();
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

/// Runs `taskie ARGS` in `p` on a terminal (script(1) gives it one), with only the agent
/// hosts' variables in `env` set: what a person at a terminal, or an agent whose host runs
/// commands in a pseudo-terminal (Gemini CLI), sees. stdout and stderr, as one text.
fn on_a_terminal(p: &Project, args: &str, env: &[(&str, &str)]) -> String {
    let taskie = assert_cmd::cargo::cargo_bin("taskie");
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec"])
        .arg(format!("{} {args}", taskie.display()))
        .arg("/dev/null")
        .current_dir(p.root());
    for var in [
        "CLAUDE_CODE_SESSION_ID",
        "CODEX_THREAD_ID",
        "CLAUDECODE",
        "GEMINI_CLI",
        "TASKIE_RUN",
        "TASKIE_PLAN",
        "TASKIE_HOOK_SKIP",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("script(1) from util-linux runs");
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    assert!(out.status.success(), "{args}: {text}");
    text
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
    crate::snapshots::check(&p, "init_to_the_agent", &agent);

    // A person: a terminal and no agent host's variable.
    let p = Project::new().plan("x");
    let person = on_a_terminal(&p, "init x", &[]);
    crate::snapshots::check(&p, "init_to_a_person", &person);
    assert!(!person.contains("Stop now"), "{person}");
}

#[test]
fn an_agent_whose_commands_run_on_a_terminal_is_still_told_to_stop() {
    // Gemini CLI runs the agent's shell in a pseudo-terminal with GEMINI_CLI=1 and no
    // session id; Claude Code's shell has CLAUDECODE=1; `taskie run` sets TASKIE_RUN.
    for var in ["GEMINI_CLI", "CLAUDECODE", "TASKIE_RUN"] {
        let p = Project::new().plan("x");
        let value = if var == "TASKIE_RUN" { "r1:1" } else { "1" };
        let text = on_a_terminal(&p, "init x", &[(var, value)]);
        assert!(
            text.contains("Stop now: the hook runs plan-review #1"),
            "{var}: {text}"
        );
    }
}

#[test]
fn mark_tells_the_agent_to_stop_and_a_person_that_the_agents_stop_runs_the_review() {
    let passed = json!({"phase": "plan-review", "next_phase": "create-tasks",
        "phase_iteration": 3, "max_reviews": 8, "review_model": "sonnet",
        "consecutive_clean": 2, "current_task": null, "tdd": false});
    let p = Project::new()
        .plan("p")
        .state(passed.clone())
        .tasks(&[(1, "pending")]);
    let agent = p
        .taskie(&["mark", "create-tasks"])
        .env("CLAUDE_CODE_SESSION_ID", "s1")
        .output()
        .unwrap();
    assert!(agent.status.success(), "{agent:?}");
    let agent = String::from_utf8(agent.stdout).unwrap();
    crate::snapshots::check(&p, "mark_to_the_agent", &agent);

    let p = Project::new()
        .plan("p")
        .state(passed)
        .tasks(&[(1, "pending")]);
    let person = on_a_terminal(&p, "mark create-tasks", &[]);
    crate::snapshots::check(&p, "mark_to_a_person", &person);
    assert!(!person.contains("Stop now"), "{person}");
}

#[test]
fn continue_plan_tells_a_person_at_a_terminal_that_the_step_is_the_agents() {
    // A step to perform: the person learns how to have the agent do it.
    let p = Project::new().plan("p").state(
        json!({"phase": "plan-review", "next_phase": "create-tasks",
            "phase_iteration": 3, "max_reviews": 8, "review_model": "sonnet",
            "consecutive_clean": 2, "current_task": null, "tdd": false}),
    );
    let person = on_a_terminal(&p, "continue-plan", &[]);
    crate::snapshots::check(&p, "continue_plan_to_a_person", &person);
    // A stop: the hook goes on at the agent's stop.
    let p = Project::new().plan("p").state(
        json!({"phase": "post-plan-review", "next_phase": "plan-review",
            "phase_iteration": 1, "max_reviews": 8, "review_model": "sonnet",
            "consecutive_clean": 0, "current_task": null, "tdd": false}),
    );
    let person = on_a_terminal(&p, "continue-plan", &[]);
    assert!(
        person.contains("who   the agent's step: the hook goes on when the agent ends its turn"),
        "{person}"
    );
    // The agent (its session id) gets its instructions alone.
    let agent = p
        .taskie(&["continue-plan"])
        .env("CLAUDE_CODE_SESSION_ID", "s1")
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&agent.stdout).contains("who "),
        "{agent:?}"
    );
}

#[test]
fn a_person_is_told_an_agent_session_works_on_the_plan_and_what_that_means() {
    let p = Project::new().plan("p").state(due("plan-review"));
    // The agent's session works on the plan (its command binds it).
    p.taskie(&["continue-plan"])
        .env("CLAUDE_CODE_SESSION_ID", "s-agent")
        .output()
        .unwrap();
    let text = on_a_terminal(&p, "state set max_reviews=12", &[]);
    let note: Vec<&str> = text.lines().filter(|l| l.contains("note:")).collect();
    assert_eq!(note.len(), 1, "{text}");
    // How long ago the session was active depends on the machine's speed.
    let note = regex::Regex::new(r"active [^)]+ ago")
        .unwrap()
        .replace(note[0], "active [AGO] ago");
    crate::snapshots::check(&p, "note_agent_session_to_a_person", &note);
}

#[test]
fn the_ledgers_hold_no_path_user_or_host_name_of_the_machine_that_wrote_them() {
    // A review that fails with findings, costs money and is answered: both ledgers written.
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&crate::support::Fake::fail());
    assert!(p.stop().is_block());
    std::fs::write(
        p.plan_dir().join("plan-post-review-1.md"),
        "F1: fixed — the plan says so now.\n",
    )
    .unwrap();
    p.set_reviewer(&crate::support::Fake::pass());
    p.stop();
    let root = p.root().display().to_string();
    let home = std::env::var("HOME").unwrap_or_default();
    let user = std::env::var("USER").unwrap_or_default();
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    let mut read = 0;
    for ledger in ["spend.json", "findings.json"] {
        let Ok(text) = std::fs::read_to_string(p.plan_dir().join(ledger)) else {
            continue;
        };
        read += 1;
        for (what, value) in [
            ("the project path", root.as_str()),
            (
                "the temporary directory",
                p.root().parent().unwrap().to_str().unwrap(),
            ),
            ("HOME", home.as_str()),
            ("the user", user.as_str()),
            ("the host", host.trim()),
        ] {
            // Short values (a user "root") would match ordinary words; paths never do.
            if value.len() >= 4 {
                assert!(
                    !text.contains(value),
                    "{ledger} holds {what} ({value}):\n{text}"
                );
            }
        }
        assert!(
            !text.contains("\"/"),
            "{ledger} holds an absolute path:\n{text}"
        );
    }
    assert_eq!(read, 2, "both ledgers were written");
}

#[test]
fn taskie_push_pushes_only_when_the_user_turned_pushing_on() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let remote = crate::support::tempdir();
    git(remote.path(), &["init", "-q", "--bare", "-b", "main"]);
    git(&p.root(), &["init", "-q", "-b", "main"]);
    // No remote yet: nothing to push to, said plainly.
    let run = p
        .taskie(&["push"])
        .env("TASKIE_PUSH", "1")
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    assert!(
        String::from_utf8_lossy(&run.stdout).contains("no remote"),
        "{run:?}"
    );
    git(
        &p.root(),
        &["remote", "add", "origin", remote.path().to_str().unwrap()],
    );
    git(&p.root(), &["add", "-A"]);
    git(&p.root(), &["commit", "-q", "-m", "p: plan"]);
    git(&p.root(), &["push", "-q", "-u", "origin", "main"]);
    git(
        &p.root(),
        &["commit", "-q", "--allow-empty", "-m", "p: tasks"],
    );
    let remote_head = || git(remote.path(), &["rev-parse", "main"]);
    let before = remote_head();
    // Off by default, and off for anything but a yes.
    for value in [None, Some("0"), Some("false")] {
        let mut cmd = p.taskie(&["push"]);
        cmd.env_remove("TASKIE_PUSH");
        if let Some(v) = value {
            cmd.env("TASKIE_PUSH", v);
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{out:?}");
        assert!(
            text.starts_with("Not pushed: pushing is off") && text.contains("TASKIE_PUSH=1"),
            "{text}"
        );
        assert_eq!(remote_head(), before, "{value:?} pushed");
    }
    let out = p
        .taskie(&["push"])
        .env("TASKIE_PUSH", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(remote_head(), git(&p.root(), &["rev-parse", "main"]));
}

#[test]
fn the_actions_push_only_through_taskie_push() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut committing = 0;
    for e in std::fs::read_dir(root.join("actions")).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(
            !text.contains("remote is") && !text.contains("a remote\n"),
            "{name} still pushes whenever a remote is configured"
        );
        if text.contains("**Commit**") || text.contains("Commit `") || text.contains("Commit the") {
            committing += 1;
            assert!(
                text.contains("`taskie push`"),
                "{name} commits without `taskie push`"
            );
        }
    }
    assert!(committing >= 10, "{committing} actions commit");
    let rules = std::fs::read_to_string(root.join("actions/ground-rules.md")).unwrap();
    assert!(
        rules.contains("Never run `git push` yourself") && rules.contains("TASKIE_PUSH=1"),
        "{rules}"
    );
}

#[test]
fn the_launchers_not_installed_message_names_routes_that_work_today() {
    // A copy of the plugin's hooks with nothing installed anywhere it looks.
    let tmp = crate::support::tempdir();
    let plugin = tmp.path().join("plugin");
    std::fs::create_dir_all(plugin.join("hooks")).unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("hooks/taskie-stop-hook"),
        plugin.join("hooks/taskie-stop-hook"),
    )
    .unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = std::process::Command::new("/bin/sh")
        .arg(plugin.join("hooks/taskie-stop-hook"))
        .env_clear()
        .env("HOME", &home)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = answer["systemMessage"].as_str().unwrap();
    assert!(
        m.starts_with("Taskie: taskie-hook is not installed."),
        "{m}"
    );
    assert!(
        m.contains("cargo install --locked --path <a clone of the Taskie repository>"),
        "{m}"
    );
    assert!(m.contains("dist/npm/pack.sh"), "{m}");
    assert!(
        !m.contains("npm install -g taskie"),
        "the registry has no such package: {m}"
    );
}

/// The README's session transcript (`<!-- session: NAME -->` before a fenced block):
/// what a real session prints, run here against a temporary git project with a fake
/// reviewer in Claude's place. Compared with whitespace collapsed (the README wraps long
/// lines), temporary paths as the README writes them and durations as any duration.
#[test]
fn the_readmes_session_transcript_is_what_taskie_prints() {
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let shown = readme_blocks(&readme);
    let p = Project::new().plan("add-search").file(
        "plan.md",
        "# Add search\n\nA search box above the product list.\n",
    );
    git(&p.root(), &["init", "-q", "-b", "main"]);
    git(&p.root(), &["add", "-A"]);
    git(&p.root(), &["commit", "-q", "-m", "add-search: plan"]);
    p.set_reviewer(
        &crate::support::Fake::fail().shape(crate::support::Shape::Review {
            verdict: "FAIL",
            summary: "The plan leaves the empty query open.",
            findings: &["The plan does not say what an empty query shows."],
        }),
    );
    let session = "s-readme";
    let mut printed: Vec<(&str, String)> = Vec::new();
    let init = p
        .taskie(&["init", "add-search"])
        .env("CLAUDE_CODE_SESSION_ID", session)
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    printed.push((
        "init",
        format!(
            "$ taskie init add-search\n{}",
            String::from_utf8_lossy(&init.stdout)
        ),
    ));
    let stop = p.run_hook(json!({"hook_event_name": "Stop", "stop_hook_active": false,
        "session_id": session}));
    printed.push(("block", stop.reason()));
    let status = p.run_taskie(&["status"]);
    printed.push((
        "status",
        format!("$ taskie status\n{}{}", status.ok(), status.stderr),
    ));
    let comparable = |text: &str| {
        let text = text.replace(&p.root().display().to_string(), "~/shop");
        let text = regex::Regex::new(r"\b\d+m \d\ds\b")
            .unwrap()
            .replace_all(&text, "[DURATION]");
        let text = regex::Regex::new(r"active [^)]+ ago")
            .unwrap()
            .replace_all(&text, "active [AGO] ago");
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let mut wrong = Vec::new();
    for (name, text) in &printed {
        let Some(block) = shown.iter().find(|(n, _)| n == name) else {
            wrong.push(format!(
                "README.md has no <!-- session: {name} --> block; printed:\n{text}"
            ));
            continue;
        };
        if comparable(&block.1) != comparable(text) {
            wrong.push(format!(
                "--- README.md, session {name}\n{}\n--- printed\n{text}",
                block.1
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(shown.len(), printed.len(), "one block each: {shown:?}");
}

/// The fenced blocks of a markdown text preceded by `<!-- session: NAME -->`.
fn readme_blocks(text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = l
            .strip_prefix("<!-- session: ")
            .and_then(|r| r.strip_suffix(" -->"))
        else {
            continue;
        };
        let open = i + 1;
        assert!(
            lines.get(open).is_some_and(|f| f.starts_with("```")),
            "README.md:{}: the session marker is not right above a fenced block",
            i + 1
        );
        let close = (open + 1..lines.len())
            .find(|j| lines[*j] == "```")
            .expect("the block ends");
        out.push((name.to_string(), lines[open + 1..close].join("\n")));
    }
    out
}

/// A markdown text without its fenced blocks and inline code, where a link or heading is
/// only an example.
fn prose(text: &str) -> String {
    let code = regex::Regex::new(r"`[^`]*`").unwrap();
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if !fenced {
            out.push_str(&code.replace_all(line, "``"));
        }
        out.push('\n');
    }
    out
}

/// The anchors GitHub gives a markdown text's headings (lower case, punctuation dropped,
/// spaces as `-`, a repeated heading numbered), and its explicit `<a id="…">`.
fn anchors(text: &str) -> std::collections::HashSet<String> {
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    let mut out = std::collections::HashSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(heading) = line.trim_start_matches('#').strip_prefix(' ')
            && line.starts_with('#')
        {
            let slug: String = heading
                .trim()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => {
                        Some(c.to_lowercase().next().unwrap())
                    }
                    _ => None,
                })
                .collect();
            let n = seen.entry(slug.clone()).or_default();
            out.insert(if *n == 0 {
                slug.clone()
            } else {
                format!("{slug}-{n}")
            });
            *n += 1;
        }
    }
    let id = regex::Regex::new(r#"<a (?:id|name)="([^"]+)""#).unwrap();
    out.extend(id.captures_iter(text).map(|c| c[1].to_string()));
    out
}

#[test]
fn every_relative_link_in_the_readme_changelog_and_docs_points_at_a_file_and_anchor_that_exist() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            files.push(e.path());
        }
    }
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for c in link.captures_iter(&prose(&text)) {
            let target = &c[1];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
            let dest = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let name = file.strip_prefix(root).unwrap().display();
            if !dest.exists() {
                broken.push(format!("{name}: {target}: no such file"));
                continue;
            }
            if !anchor.is_empty() {
                let dest_text = std::fs::read_to_string(&dest).unwrap_or_default();
                if !anchors(&dest_text).contains(anchor) {
                    broken.push(format!("{name}: {target}: no such heading or anchor"));
                }
            }
        }
    }
    assert!(checked >= 50, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_a_front_door_of_at_most_300_lines() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.lines().count() <= 300,
        "{} lines",
        readme.lines().count()
    );
    // What a newcomer must find there: the install that works, the two test tiers, how
    // a plan is chosen, usage-limit pauses, both block caps, opt-in pushing.
    for needle in [
        "cargo install --locked --path .",
        "claude plugin install taskie@taskie",
        "cargo test --locked ",
        "cargo test --locked --features e2e --test e2e",
        "taskie resume",
        "usage limit",
        "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP",
        "TASKIE_BLOCK_CAP",
        "TASKIE_PUSH=1",
        "spend.json",
        "findings.json",
    ] {
        assert!(readme.contains(needle), "the README lacks {needle}");
    }
}

/// The README and `--help` give one order for choosing a plan: `--plan`, `TASKIE_PLAN`,
/// the session's binding, the newest.
#[test]
fn the_readme_and_the_help_choose_a_plan_in_the_same_order() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let which = &readme[readme.find("### Which plan").unwrap()..];
    let help = Project::new().run_taskie(&["--help"]).ok().to_owned();
    let status_help = Project::new()
        .run_taskie(&["status", "--help"])
        .ok()
        .to_owned();
    for (what, text, order) in [
        (
            "README",
            which,
            ["--plan", "TASKIE_PLAN", "bound", "most recently modified"],
        ),
        (
            "taskie --help",
            help.as_str(),
            ["--plan", "TASKIE_PLAN", "bound", "changed last"],
        ),
        (
            "taskie status --help",
            status_help.as_str(),
            ["--plan", "TASKIE_PLAN", "bound", "most recently modified"],
        ),
    ] {
        let at: Vec<usize> = order
            .iter()
            .map(|w| {
                text.find(w)
                    .unwrap_or_else(|| panic!("{what} does not say {w}"))
            })
            .collect();
        assert!(
            at.windows(2).all(|w| w[0] < w[1]),
            "{what}: {order:?} at {at:?}"
        );
    }
}
