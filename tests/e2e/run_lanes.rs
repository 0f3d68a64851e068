//! End to end (SPEC §23): `taskie run` with the real pinned claude, codex and gemini CLIs
//! as the lanes' agents, each against a fake model API on 127.0.0.1 with a scripted model
//! behind it. Nothing tells the CLIs how to find Taskie but `taskie run` itself: the hook,
//! its trust and the permissions are what the driver passes.
//!
//! The scripted model acts only on the text it received: the run's prompt names the task
//! file, so it reads that file with its shell tool; the file says which file to write, so
//! it writes and commits it; a hook's block names the post-review file, so it writes that.
//! Anything else ends its turn. The reviewer is a fake program (the review loop with real
//! reviewer CLIs is proven in hosts_e2e and vendors_e2e).

use crate::support::Fake;
use crate::support::fake_api::{self, FakeApi};
use crate::support::fake_gemini::{self, FakeGemini};
use crate::support::fake_openai::{self, FakeOpenAi};
use crate::vendors_e2e::{bin, gemini_home, home};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ---------- the scripted model, the same for every CLI ----------

/// One item of a conversation, whatever the API's shape.
#[derive(Debug, Clone)]
enum Turn {
    /// Something the agent was told (the prompt, a hook's block, a reminder).
    Told(String),
    /// A shell command it ran (what it printed follows).
    Ran,
    /// What that command printed.
    Printed(String),
}

/// What the model does next.
#[derive(Debug, Clone, PartialEq)]
enum Act {
    Shell(String),
    Say(String),
}

/// What the scripted agent did, for the test to check.
#[derive(Default)]
struct Script {
    /// Every shell command it ran.
    ran: Vec<String>,
    /// Instructions it could not follow.
    troubles: Vec<String>,
}

/// The file the run's prompt names as the task (`The task: <path>.`).
fn task_file_in(text: &str) -> Option<String> {
    let start = text.find("The task: ")? + "The task: ".len();
    let word = text[start..].split_whitespace().next()?;
    Some(word.trim_end_matches('.').to_string())
}

/// The post-review file a hook's block asks for (`write what you did to <path>.`).
fn post_review_in(text: &str) -> Option<String> {
    let start = text.rfind("write what you did to ")? + "write what you did to ".len();
    let word = text[start..].split_whitespace().next()?;
    Some(word.trim_end_matches('.').to_string())
}

/// What a task file asks for: "Write `<file>` containing `<text>`."
fn work_in(task: &str) -> Option<(String, String)> {
    let line = task.lines().find(|l| l.starts_with("Write `"))?;
    let spans: Vec<&str> = line.split('`').collect();
    Some((spans.get(1)?.to_string(), spans.get(3)?.to_string()))
}

/// The scripted agent: the latest instruction it received, and the commands it ran since.
fn decide(turns: &[Turn], script: &Mutex<Script>) -> Act {
    let mut at = None;
    for (i, t) in turns.iter().enumerate() {
        if let Turn::Told(text) = t
            && (task_file_in(text).is_some()
                || post_review_in(text).is_some()
                || text.contains("You are finishing plan"))
        {
            at = Some(i);
        }
    }
    let Some(at) = at else {
        return Act::Say("Nothing to do.".into());
    };
    let Turn::Told(told) = &turns[at] else {
        unreachable!()
    };
    let since = &turns[at + 1..];
    let ran = since.iter().filter(|t| matches!(t, Turn::Ran)).count();
    let printed: Vec<&str> = since
        .iter()
        .filter_map(|t| match t {
            Turn::Printed(p) => Some(p.as_str()),
            _ => None,
        })
        .collect();
    let act = if let Some(post) = post_review_in(told) {
        match ran {
            0 => Act::Shell(format!(
                "printf 'Every finding is addressed.\\n' > '{post}'"
            )),
            _ => Act::Say("The post-review is written.".into()),
        }
    } else if let Some(task) = task_file_in(told) {
        match ran {
            0 => Act::Shell(format!("cat '{task}'")),
            1 => match printed.last().and_then(|p| work_in(p)) {
                Some((file, text)) => Act::Shell(format!(
                    "printf '%s\\n' '{text}' > '{file}' && git add '{file}' && git commit -q -m 'Add {file}'"
                )),
                None => {
                    script
                        .lock()
                        .unwrap()
                        .troubles
                        .push(format!("the task file said nothing to do: {printed:?}"));
                    Act::Say("The task file says nothing to do.".into())
                }
            },
            _ => Act::Say("The task is done.".into()),
        }
    } else {
        Act::Say("Ready for the review.".into())
    };
    if let Act::Shell(cmd) = &act {
        script.lock().unwrap().ran.push(cmd.clone());
    }
    act
}

// ---------- each API's shape ----------

fn claude_turns(req: &fake_api::Request) -> Vec<Turn> {
    use fake_api::Block;
    let mut turns = Vec::new();
    for m in &req.messages {
        match &m.content {
            fake_api::Content::Text(t) if m.role == "user" => turns.push(Turn::Told(t.clone())),
            fake_api::Content::Text(_) => {}
            fake_api::Content::Blocks(blocks) => {
                for b in blocks {
                    match b {
                        Block::Text { text } if m.role == "user" => {
                            turns.push(Turn::Told(text.clone()))
                        }
                        Block::ToolUse { .. } => turns.push(Turn::Ran),
                        Block::ToolResult { content, .. } => turns.push(Turn::Printed(
                            content.as_ref().map(|c| c.text(true)).unwrap_or_default(),
                        )),
                        _ => {}
                    }
                }
            }
        }
    }
    turns
}

fn claude_model(req: &fake_api::Request, script: &Mutex<Script>) -> fake_api::Reply {
    match decide(&claude_turns(req), script) {
        Act::Shell(cmd) => fake_api::Reply::tool(
            "Bash",
            json!({"command": cmd, "description": "Run a command"}),
        ),
        Act::Say(text) => fake_api::Reply::text(text),
    }
}

fn codex_turns(body: &Value) -> Vec<Turn> {
    let mut turns = Vec::new();
    for item in body["input"].as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("message") if item["role"] == "user" => {
                let text: Vec<&str> = item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["text"].as_str())
                    .collect();
                turns.push(Turn::Told(text.join("\n")));
            }
            Some("function_call") => turns.push(Turn::Ran),
            Some("function_call_output") => {
                let out = match &item["output"] {
                    Value::String(s) => s.clone(),
                    other => crate::support::strings_in(other),
                };
                turns.push(Turn::Printed(out));
            }
            _ => {}
        }
    }
    turns
}

fn codex_model(req: &fake_openai::Request, script: &Mutex<Script>) -> fake_openai::Reply {
    let Some(body) = req.json().filter(|_| req.path.ends_with("/responses")) else {
        return fake_openai::Reply::Json {
            status: 404,
            body: json!({"error": {"message": "not here"}}),
        };
    };
    let item = match decide(&codex_turns(&body), script) {
        Act::Shell(cmd) => {
            let n = body["input"].as_array().map_or(0, Vec::len);
            fake_openai::function_call("exec_command", &json!({"cmd": cmd}), &format!("call-{n}"))
        }
        Act::Say(text) => fake_openai::message(&text),
    };
    fake_openai::Reply::Output {
        items: vec![item],
        input_tokens: 100,
        output_tokens: 10,
    }
}

fn gemini_turns(body: &Value) -> Vec<Turn> {
    let mut turns = Vec::new();
    for c in body["contents"].as_array().into_iter().flatten() {
        for p in c["parts"].as_array().into_iter().flatten() {
            if let Some(t) = p["text"].as_str()
                && c["role"] == "user"
            {
                turns.push(Turn::Told(t.to_string()));
            } else if p.get("functionCall").is_some() {
                turns.push(Turn::Ran);
            } else if let Some(r) = p.get("functionResponse") {
                turns.push(Turn::Printed(crate::support::strings_in(&r["response"])));
            }
        }
    }
    turns
}

fn gemini_model(req: &fake_gemini::Request, script: &Mutex<Script>) -> fake_gemini::Reply {
    let text = fake_gemini::Reply::text;
    let body = match fake_gemini::turn_body(req) {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    match decide(&gemini_turns(&body), script) {
        Act::Shell(cmd) => fake_gemini::Reply::Parts(vec![json!({"functionCall": {
            "name": "run_shell_command",
            "args": {"command": cmd, "description": "Run a command"}}})]),
        Act::Say(t) => text(&t),
    }
}

// ---------- the project ----------

use crate::support::git;

/// A user's repository with a plan of `tasks` (id, file to write, its text) and no
/// dependencies, a HOME for the CLI, and a fake reviewer that passes. All of it under
/// target/ (Gemini ignores settings below a directory others may write to, like /tmp).
struct Lanes {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Lanes {
    fn new(tasks: &[(&str, &str, &str)]) -> Lanes {
        let with: Vec<_> = tasks.iter().map(|&(i, f, t)| (i, f, t, "")).collect();
        Lanes::with_depends(&with)
    }

    /// Tasks (id, file, text, the ids it depends on).
    fn with_depends(tasks: &[(&str, &str, &str, &str)]) -> Lanes {
        let dir = home();
        let root = dir.path().to_path_buf();
        for d in ["home", "data", "reviewer", "work"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let work = root.join("work");
        git(&work, &["init", "-q", "-b", "main"]);
        git(&work, &["config", "user.name", "Test"]);
        git(&work, &["config", "user.email", "test@example.com"]);
        let plan = work.join(".taskie/plans/p");
        std::fs::create_dir_all(&plan).unwrap();
        std::fs::write(plan.join("plan.md"), "# Plan\n\nA few files.\n").unwrap();
        let mut table =
            String::from("| Id | Title | Status | Depends |\n|----|-------|--------|---------|\n");
        for (id, file, text, depends) in tasks {
            table.push_str(&format!("| {id} | Add {file} | pending | {depends} |\n"));
            std::fs::write(
                plan.join(format!("task-{id}.md")),
                format!("# Task {id}\n\nWrite `{file}` containing `{text}`.\n"),
            )
            .unwrap();
        }
        std::fs::write(plan.join("tasks.md"), table).unwrap();
        std::fs::write(work.join("README"), "hello\n").unwrap();
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", "plan"]);
        let lanes = Lanes { _dir: dir, root };
        lanes.reviewer();
        lanes
    }

    fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// A fake reviewer that passes, safe for reviews that run at the same time.
    fn reviewer(&self) {
        let own = Fake::pass()
            .script_text()
            .replace(
                "cat > \"$here/stdin\"\n",
                "mine=\"$here/stdin.$$\"\ncat > \"$mine\"\n",
            )
            .replace("//p' \"$here/stdin\")", "//p' \"$mine\")");
        crate::support::write_executable(&self.root.join("reviewer/fake-claude"), &own);
    }

    /// `taskie run <args>` with `agent` (the real CLI) and the environment `env` for it,
    /// killed and failing the test after `limit`.
    fn run(
        &self,
        agent: &Path,
        env: &[(&str, String)],
        args: &[&str],
        limit: Duration,
    ) -> (std::process::ExitStatus, Value, String) {
        let (out, err) = (self.root.join("run.out"), self.root.join("run.err"));
        let path = format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            crate::support::claude_user::bin_dir().display()
        );
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_taskie"));
        cmd.current_dir(self.work())
            .args(["run", "--json"])
            .args(args)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.home())
            .env("TMPDIR", self.root.join("home"))
            .env("XDG_DATA_HOME", self.root.join("data"))
            .env("TASKIE_AGENT", agent)
            .env("TASKIE_REVIEWER", self.root.join("reviewer/fake-claude"))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap());
        for (k, v) in env {
            cmd.env(k, v);
        }
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        let mut child = cmd.spawn().unwrap();
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                // SAFETY: kill has no memory-safety preconditions; the group is the run's.
                unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
                let _ = child.wait();
                panic!(
                    "taskie run did not end within {limit:?}: {}\n{}",
                    std::fs::read_to_string(&err).unwrap_or_default(),
                    self.agent_logs()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let stderr = std::fs::read_to_string(&err).unwrap_or_default();
        let stdout = std::fs::read_to_string(&out).unwrap_or_default();
        let report = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!(
                "not one JSON report ({e}): {stdout}\n{stderr}\n{}",
                self.agent_logs()
            )
        });
        (status, report, stderr)
    }

    /// Every lane's agent output, for failure messages.
    fn agent_logs(&self) -> String {
        let mut all = String::new();
        let runs = self.root.join("data/taskie/runs");
        for run in std::fs::read_dir(&runs).into_iter().flatten().flatten() {
            for gate in std::fs::read_dir(run.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                for log in ["agent-stdout.log", "agent-stderr.log"] {
                    if let Ok(text) = std::fs::read_to_string(gate.path().join(log)) {
                        let tail: String = text
                            .chars()
                            .rev()
                            .take(3000)
                            .collect::<Vec<_>>()
                            .into_iter()
                            .rev()
                            .collect();
                        all.push_str(&format!("--- {}/{log}:\n{tail}\n", gate.path().display()));
                    }
                }
            }
        }
        all
    }

    fn git(&self, args: &[&str]) -> String {
        git(&self.work(), args)
    }
}

const TWO: [(&str, &str, &str); 2] = [("1", "one.txt", "one"), ("2", "two.txt", "two")];

/// Two parallel tasks, each written and committed by the real CLI in its worktree, gated
/// by the hook (a heartbeat at each stop), merged, the all-code review, `--land ff`.
fn two_tasks_land(
    name: &str,
    agent: &Path,
    env: &[(&str, String)],
    script: &Mutex<Script>,
) -> (Lanes, Value, Duration) {
    let lanes = Lanes::new(&TWO);
    let head = lanes.git(&["rev-parse", "HEAD"]);
    let started = Instant::now();
    let (status, report, stderr) = lanes.run(
        agent,
        env,
        &["--agent", name, "-j", "2", "--land", "ff"],
        Duration::from_secs(600),
    );
    let took = started.elapsed();
    let s = script.lock().unwrap();
    let context = format!(
        "{report}\n{stderr}\nran: {:?}\ntroubles: {:?}\n{}",
        s.ran,
        s.troubles,
        lanes.agent_logs()
    );
    assert!(status.success(), "{context}");
    assert_eq!(report["outcome"], "done", "{context}");
    assert!(s.troubles.is_empty(), "{context}");
    // What the model was asked and did: each task read, then its file written.
    for (id, file, _) in TWO {
        assert!(
            s.ran
                .iter()
                .any(|c| c.starts_with("cat ") && c.contains(&format!("task-{id}.md"))),
            "{context}"
        );
        assert!(
            s.ran.iter().any(|c| c.contains(&format!("> '{file}'"))),
            "{context}"
        );
    }
    drop(s);
    // Landed by fast-forward: the user's branch is the reviewed tip, which holds both.
    let tip = lanes.git(&["rev-parse", "taskie/p/integration"]);
    assert_eq!(report["landed"], Value::String(tip.clone()), "{context}");
    assert_eq!(lanes.git(&["rev-parse", "main"]), tip);
    assert_eq!(
        lanes.git(&["merge-base", "--is-ancestor", &head, "main"]),
        ""
    );
    for (_, file, text) in TWO {
        assert_eq!(
            lanes.git(&["show", &format!("main:{file}")]),
            text,
            "{context}"
        );
        // The commit of the file is the agent's own, made in its worktree.
        let log = lanes.git(&["log", "--format=%s", "main", "--", file]);
        assert!(log.lines().any(|l| l == format!("Add {file}")), "{log}");
    }
    (lanes, report, took)
}

/// Every lane's heartbeats: the hook ran at the session's stops.
fn assert_heartbeats(lanes: &Lanes) {
    let runs = lanes.root.join("data/taskie/runs");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .next()
        .expect("a run directory");
    for task in ["1", "2", "all"] {
        let beats = run.path().join(format!("gate-{task}/heartbeats.jsonl"));
        let text = std::fs::read_to_string(&beats)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", beats.display(), lanes.agent_logs()));
        assert!(text.lines().count() >= 2, "{text}");
    }
}

#[test]
fn under_the_real_claude_two_parallel_lanes_merge_and_land_by_fast_forward() {
    let script = Arc::new(Mutex::new(Script::default()));
    let s = script.clone();
    let api = FakeApi::start(move |r| claude_model(r, &s));
    let env = [
        ("ANTHROPIC_BASE_URL", api.base_url()),
        ("ANTHROPIC_API_KEY", "test-key".to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
    ];
    let (lanes, _, took) = two_tasks_land(
        "claude",
        crate::support::claude_cli::binary(),
        &env,
        &script,
    );
    assert_heartbeats(&lanes);
    println!("claude: two lanes and the final review in {took:?}");
}

/// A Codex home pointed at `api`, and the variables that select it.
fn codex_env(api: &FakeOpenAi, dir: &Path) -> Vec<(&'static str, String)> {
    let codex_home = dir.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"gpt-5-codex\"\nmodel_provider = \"taskie_fake\"\n[analytics]\nenabled = false\n\
             [features]\nplugins = false\n\
             [model_providers.taskie_fake]\nname = \"taskie-fake\"\nbase_url = \"{}\"\n\
             env_key = \"TASKIE_FAKE_OPENAI_KEY\"\nwire_api = \"responses\"\nrequest_max_retries = 0\n\
             stream_max_retries = 0\n",
            api.base_url()
        ),
    )
    .unwrap();
    vec![
        ("CODEX_HOME", codex_home.display().to_string()),
        ("TASKIE_FAKE_OPENAI_KEY", "dummy".to_string()),
        ("SHELL", "/bin/sh".to_string()),
    ]
}

#[test]
fn under_the_real_codex_two_parallel_lanes_merge_and_land_by_fast_forward() {
    let script = Arc::new(Mutex::new(Script::default()));
    let s = script.clone();
    let api = FakeOpenAi::start(move |r| codex_model(r, &s)).unwrap();
    let dir = home();
    let env = codex_env(&api, dir.path());
    let (lanes, _, took) = two_tasks_land("codex", &bin("codex"), &env, &script);
    assert_heartbeats(&lanes);
    // The hook was trusted the way Codex's /hooks screen does it: its hash in config.toml.
    let config = std::fs::read_to_string(dir.path().join(".codex/config.toml")).unwrap();
    assert!(
        config.contains("[hooks.state.\"/<session-flags>/config.toml:stop:0:0\"]")
            && config.contains("trusted_hash = \"sha256:"),
        "{config}"
    );
    println!("codex: two lanes and the final review in {took:?}");
}

#[test]
fn under_the_real_gemini_two_parallel_lanes_merge_and_land_by_fast_forward() {
    let script = Arc::new(Mutex::new(Script::default()));
    let s = script.clone();
    let api = FakeGemini::start(move |r| gemini_model(r, &s)).unwrap();
    let dir = home();
    gemini_home(dir.path());
    let env = [
        ("GEMINI_CLI_HOME", dir.path().display().to_string()),
        ("GOOGLE_GEMINI_BASE_URL", api.base_url()),
        ("GEMINI_API_KEY", "dummy".to_string()),
        ("SHELL", "/bin/sh".to_string()),
    ];
    let (lanes, _, took) = two_tasks_land("gemini", &bin("gemini"), &env, &script);
    assert_heartbeats(&lanes);
    println!("gemini: two lanes and the final review in {took:?}");
}
