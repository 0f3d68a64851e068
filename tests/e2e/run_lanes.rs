//! End to end (SPEC §23): `taskie run` with the real pinned claude, codex and gemini CLIs
//! as the lanes' agents, each against a fake model API on 127.0.0.1 with a scripted model
//! behind it, through the whole story of a run: two tasks in parallel, a usage limit that
//! pauses and resumes, a conflict resolved by a session of its own, a dependent task, the
//! all-code review and the landing. Nothing tells the CLIs how to find Taskie but `taskie
//! run` itself: the hook, its trust and the permissions are what the driver passes.
//!
//! The scripted model acts only on the text it received: the run's prompt names the task
//! file, so it reads that file with its shell tool; the file says which files to write
//! (and which to read first), so it writes and commits them; a resolution's prompt names
//! the conflicted files, so it reads them and keeps both sides; a hook's block names the
//! post-review file, so it writes that. Anything else ends its turn. The reviewer is a
//! fake program (the review loop with real reviewer CLIs is proven in hosts_e2e and
//! vendors_e2e).

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

/// The files a resolution prompt names (`It conflicts in: a, b. Resolve …`).
fn conflicts_in(text: &str) -> Option<Vec<String>> {
    if !text.contains("You are resolving a merge conflict") {
        return None;
    }
    let start = text.find("It conflicts in: ")? + "It conflicts in: ".len();
    let list = text[start..].split(". Resolve").next()?;
    Some(list.split(", ").map(str::to_string).collect())
}

/// One thing a task file asks for.
#[derive(Debug, Clone, PartialEq)]
enum Work {
    /// "Write `<file>` containing `<text>`."
    Write { file: String, text: String },
    /// "Write `<file>` containing what `<a>` and `<b>` hold." (in that order)
    Copy { file: String, from: Vec<String> },
}

/// What a task file asks for, in its order.
fn work_in(task: &str) -> Vec<Work> {
    task.lines()
        .filter(|l| l.starts_with("Write `"))
        .filter_map(|line| {
            let spans: Vec<&str> = line.split('`').collect();
            let file = spans.get(1)?.to_string();
            if spans.get(2).is_some_and(|s| s.contains("containing what")) {
                let from = spans
                    .iter()
                    .skip(3)
                    .step_by(2)
                    .map(|s| s.to_string())
                    .collect();
                Some(Work::Copy { file, from })
            } else {
                Some(Work::Write {
                    file,
                    text: spans.get(3)?.to_string(),
                })
            }
        })
        .collect()
}

/// The commands that print `files` between two marker lines, so what they hold can be
/// told apart from whatever else the CLI wraps a command's output in.
fn read_files(files: &[String]) -> String {
    let quoted: Vec<String> = files.iter().map(|f| format!("'{f}'")).collect();
    format!("echo '@@'begin && cat {} && echo '@@'end", quoted.join(" "))
}

/// The lines a [`read_files`] command printed (its output as the CLI sent it back).
fn read_back(printed: &str) -> Option<Vec<String>> {
    let mut lines = printed.lines().map(str::trim_end);
    lines.find(|l| l.ends_with("@@begin"))?;
    let mut out = Vec::new();
    for l in lines {
        if l.starts_with("@@end") {
            return Some(out);
        }
        out.push(l.to_string());
    }
    None
}

/// A command that writes `lines` to `file`.
fn write_file(file: &str, lines: &[String]) -> String {
    let quoted: Vec<String> = lines.iter().map(|l| format!("'{l}'")).collect();
    format!("printf '%s\\n' {} > '{file}'", quoted.join(" "))
}

/// Whether `line` is one of git's conflict markers.
fn is_marker(line: &str) -> bool {
    ["<<<<<<<", "=======", ">>>>>>>", "|||||||"]
        .iter()
        .any(|m| line.starts_with(m))
}

/// The commands of one job, as far as what they printed so far lets the scripted agent
/// know them (a command that needs an output not printed yet ends the list).
fn commands(told: &str, printed: &[&str], script: &Mutex<Script>) -> Vec<String> {
    let trouble = |what: String| script.lock().unwrap().troubles.push(what);
    let mut cmds = Vec::new();
    if let Some(post) = post_review_in(told) {
        cmds.push(format!(
            "printf 'Every finding is addressed.\\n' > '{post}'"
        ));
    } else if let Some(files) = conflicts_in(told) {
        // Each file read, its two sides kept (the markers dropped), then the merge made.
        for file in &files {
            cmds.push(read_files(std::slice::from_ref(file)));
            let Some(out) = printed.get(cmds.len() - 1) else {
                return cmds;
            };
            match read_back(out) {
                Some(lines) => {
                    let kept: Vec<String> = lines.into_iter().filter(|l| !is_marker(l)).collect();
                    cmds.push(write_file(file, &kept));
                }
                None => trouble(format!("{file} could not be read: {out}")),
            }
        }
        let quoted: Vec<String> = files.iter().map(|f| format!("'{f}'")).collect();
        cmds.push(format!(
            "git add {} && git commit -q --no-edit",
            quoted.join(" ")
        ));
    } else if let Some(task) = task_file_in(told) {
        cmds.push(format!("cat '{task}'"));
        let Some(text) = printed.first() else {
            return cmds;
        };
        let work = work_in(text);
        if work.is_empty() {
            trouble(format!("the task file said nothing to do: {text:?}"));
            return cmds;
        }
        let mut written = Vec::new();
        for w in work {
            match w {
                Work::Write { file, text } => {
                    cmds.push(write_file(&file, &[text]));
                    written.push(file);
                }
                Work::Copy { file, from } => {
                    cmds.push(read_files(&from));
                    let Some(out) = printed.get(cmds.len() - 1) else {
                        return cmds;
                    };
                    match read_back(out) {
                        Some(lines) => cmds.push(write_file(&file, &lines)),
                        None => trouble(format!("{from:?} could not be read: {out}")),
                    }
                    written.push(file);
                }
            }
        }
        cmds.push(format!(
            "git add {} && git commit -q -m 'Write {}'",
            written
                .iter()
                .map(|f| format!("'{f}'"))
                .collect::<Vec<_>>()
                .join(" "),
            written.join(", ")
        ));
    }
    cmds
}

/// The scripted agent: the latest instruction it received, and the commands it ran since.
fn decide(turns: &[Turn], script: &Mutex<Script>) -> Act {
    let at = turns.iter().rposition(|t| {
        matches!(t, Turn::Told(text) if task_file_in(text).is_some()
            || post_review_in(text).is_some()
            || conflicts_in(text).is_some()
            || text.contains("You are finishing plan"))
    });
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
    let act = match commands(told, &printed, script).into_iter().nth(ran) {
        Some(cmd) => Act::Shell(cmd),
        None => Act::Say("Done; ready for the review.".into()),
    };
    if let Act::Shell(cmd) = &act {
        script.lock().unwrap().ran.push(cmd.clone());
    }
    act
}

/// The task a conversation is about and how many of its commands printed, from the run's
/// prompt (`None` for a resolution, a post-review or the all-code review).
fn task_and_progress(turns: &[Turn]) -> Option<(String, usize)> {
    let at = turns
        .iter()
        .position(|t| matches!(t, Turn::Told(text) if task_file_in(text).is_some()))?;
    let Turn::Told(told) = &turns[at] else {
        unreachable!()
    };
    let printed = turns[at..]
        .iter()
        .filter(|t| matches!(t, Turn::Printed(_)))
        .count();
    Some((task_file_in(told)?, printed))
}

/// The usage limit the fake API answers once, to the first request of task [`LIMITED`]'s
/// session after its agent read the task file (mid-task, its work not written yet); and
/// the first request of task [`HELD`]'s session, held until the run has recorded the
/// pause, so that session is still running when the run learns of the limit and the
/// limit, not a free slot, decides when task [`WAITING`] may start. (Held only until the
/// limit was answered, task 1 could finish and free its lane while the limited CLI was
/// still exiting: the run, not yet knowing of the limit, started task 4.)
struct Limit {
    hit: std::sync::atomic::AtomicBool,
    /// The user's checkout, whose run journal says when the run paused the limited task.
    work: std::sync::OnceLock<PathBuf>,
}

impl Limit {
    fn new() -> Limit {
        Limit {
            hit: std::sync::atomic::AtomicBool::new(false),
            work: std::sync::OnceLock::new(),
        }
    }

    /// Whether this request gets the limit (once); a request it holds returns once the
    /// run recorded the pause (or after a long bound, for the test to fail on).
    fn now(&self, turns: &[Turn]) -> bool {
        let Some((file, printed)) = task_and_progress(turns) else {
            return false;
        };
        let is = |task: &str| file.ends_with(&format!("/task-{task}.md"));
        if is(HELD) && printed == 0 {
            let bound = Instant::now() + Duration::from_secs(300);
            while !self.pause_recorded() && Instant::now() < bound {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        is(LIMITED) && printed == 1 && !self.hit.swap(true, std::sync::atomic::Ordering::SeqCst)
    }

    fn was_hit(&self) -> bool {
        self.hit.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether a run's journal in the checkout has paused task [`LIMITED`].
    fn pause_recorded(&self) -> bool {
        let Some(work) = self.work.get() else {
            return false;
        };
        let runs = std::fs::read_dir(work.join(".taskie/runs"));
        runs.into_iter().flatten().flatten().any(|run| {
            std::fs::read_to_string(run.path().join("journal.jsonl")).is_ok_and(|text| {
                text.lines().any(|line| {
                    serde_json::from_str::<Value>(line)
                        .is_ok_and(|e| e["step"] == "paused" && e["task"] == LIMITED)
                })
            })
        })
    }
}

/// A reset a few seconds from now, in Unix seconds.
fn soon() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
        + 5
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

fn claude_model(req: &fake_api::Request, script: &Mutex<Script>, limit: &Limit) -> fake_api::Reply {
    let turns = claude_turns(req);
    if limit.now(&turns) {
        // A subscription's 5-hour limit: the CLI names its reset to the minute.
        return fake_api::Reply::usage_limit(soon());
    }
    match decide(&turns, script) {
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

fn codex_model(
    req: &fake_openai::Request,
    script: &Mutex<Script>,
    limit: &Limit,
) -> fake_openai::Reply {
    let Some(body) = req.json().filter(|_| req.path.ends_with("/responses")) else {
        return fake_openai::Reply::Json {
            status: 404,
            body: json!({"error": {"message": "not here"}}),
        };
    };
    let turns = codex_turns(&body);
    if limit.now(&turns) {
        // Codex names the reset in the machine's local time, to the minute.
        return fake_openai::Reply::Json {
            status: 429,
            body: json!({"error": {"type": "usage_limit_reached", "plan_type": "plus", "resets_at": soon()}}),
        };
    }
    let item = match decide(&turns, script) {
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

fn gemini_model(
    req: &fake_gemini::Request,
    script: &Mutex<Script>,
    limit: &Limit,
) -> fake_gemini::Reply {
    let body = match fake_gemini::turn_body(req) {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let turns = gemini_turns(&body);
    if limit.now(&turns) {
        // A quota with a delay; the user's Gemini makes one attempt (`general.maxAttempts`),
        // so it gives up at once, naming the delay.
        return fake_gemini::Reply::quota(5);
    }
    match decide(&turns, script) {
        Act::Shell(cmd) => fake_gemini::Reply::Parts(vec![json!({"functionCall": {
            "name": "run_shell_command",
            "args": {"command": cmd, "description": "Run a command"}}})]),
        Act::Say(t) => fake_gemini::Reply::text(&t),
    }
}

// ---------- the project ----------

use crate::support::git;

/// The plan of the story: tasks 1 and 2 run in parallel and both rewrite the line of
/// `shared.txt` (their merges conflict); task 3 depends on both and copies their files;
/// task 4 is ready from the start, and waits for a free lane.
const TASKS: [(&str, &str, &str); 4] = [
    (
        "1",
        "Write `one.txt` containing `one`.\nWrite `shared.txt` containing `from one`.\n",
        "",
    ),
    (
        "2",
        "Write `two.txt` containing `two`.\nWrite `shared.txt` containing `from two`.\n",
        "",
    ),
    (
        "3",
        "Write `three.txt` containing what `one.txt` and `two.txt` hold.\n",
        "1, 2",
    ),
    ("4", "Write `four.txt` containing `four`.\n", ""),
];

/// The task whose agent hits its usage limit, mid-task.
const LIMITED: &str = "2";
/// The task whose session runs beside it when the limit comes.
const HELD: &str = "1";
/// The task that is ready but may start only after the reset (`-j 2`: tasks 1 and 2
/// start first).
const WAITING: &str = "4";

/// A user's repository with the plan of [`TASKS`], a HOME for the CLI, and a fake
/// reviewer that passes. All of it under target/ (Gemini ignores settings below a
/// directory others may write to, like /tmp).
struct Lanes {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Lanes {
    fn new() -> Lanes {
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
        for (id, body, depends) in TASKS {
            table.push_str(&format!("| {id} | Task {id} | pending | {depends} |\n"));
            std::fs::write(
                plan.join(format!("task-{id}.md")),
                format!("# Task {id}\n\n{body}"),
            )
            .unwrap();
        }
        std::fs::write(plan.join("tasks.md"), table).unwrap();
        std::fs::write(work.join("shared.txt"), "base\n").unwrap();
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
    /// killed and failing the test after `limit` (a guard against a hang, not a measure).
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
        // The summary is the last line, after the events (docs/run.md).
        let summary = stdout.lines().last().unwrap_or_default();
        let report = serde_json::from_str(summary).unwrap_or_else(|e| {
            panic!(
                "not one JSON report ({e}): {stdout}\n{stderr}\n{}",
                self.agent_logs()
            )
        });
        (status, report, stderr)
    }

    /// The run's directory of worktrees and gates.
    fn run_dir(&self) -> PathBuf {
        std::fs::read_dir(self.root.join("data/taskie/runs"))
            .unwrap()
            .flatten()
            .next()
            .expect("a run directory")
            .path()
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

/// The journal's entries, in order.
fn journal(report: &Value) -> Vec<Value> {
    let path = report["journal"]
        .as_str()
        .expect("the report names its journal");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The index of the first journal entry of `step` for `task` that `also` accepts.
fn first(entries: &[Value], step: &str, task: &str, also: impl Fn(&Value) -> bool) -> usize {
    entries
        .iter()
        .position(|e| e["step"] == step && e["task"] == task && also(e))
        .unwrap_or_else(|| panic!("no {step} of task {task} in {entries:#?}"))
}

/// The whole story (SPEC §23) under one real CLI: tasks 1 and 2 start in parallel; task
/// 2's agent hits its usage limit mid-task, which pauses that CLI's lanes until the reset
/// a few seconds ahead (task 4, ready, waits for it), after which the run starts task 2
/// again by itself; tasks 1 and 2 both rewrite `shared.txt`, so the second merge
/// conflicts and becomes a session of its own in which the real CLI resolves it, reviewed
/// and merged; task 3, which depends on both, starts only after both merged and copies
/// their files; the all-code review runs on the integration tip and `--land ff`
/// fast-forwards the user's branch to it. The reviewer is a fake program that passes.
fn whole_story(
    name: &str,
    agent: &Path,
    env: &[(&str, String)],
    lanes: &Lanes,
    script: &Mutex<Script>,
    limit: &Limit,
) -> Duration {
    limit.work.set(lanes.work()).expect("one story per limit");
    let head = lanes.git(&["rev-parse", "HEAD"]);
    let started = Instant::now();
    let (status, report, stderr) = lanes.run(
        agent,
        env,
        &["--agent", name, "-j", "2", "--land", "ff"],
        Duration::from_secs(900),
    );
    let took = started.elapsed();
    let entries = journal(&report);
    let s = script.lock().unwrap();
    let context = format!(
        "{report}\n{stderr}\nran: {:#?}\ntroubles: {:?}\n{}",
        s.ran,
        s.troubles,
        lanes.agent_logs()
    );
    assert!(status.success(), "{context}");
    assert_eq!(report["outcome"], "done", "{context}");
    assert!(s.troubles.is_empty(), "{context}");
    assert!(limit.was_hit(), "the usage limit was answered: {context}");
    // What the model was asked and did: each task read, the conflict read and resolved,
    // the dependencies' files read by the dependent.
    for (id, _, _) in TASKS {
        assert!(
            s.ran
                .iter()
                .any(|c| c.starts_with("cat ") && c.ends_with(&format!("/task-{id}.md'"))),
            "{context}"
        );
    }
    assert!(
        s.ran.contains(&read_files(&["shared.txt".into()])),
        "{context}"
    );
    assert!(
        s.ran.iter().any(|c| c.ends_with("git commit -q --no-edit")),
        "{context}"
    );
    assert!(
        s.ran
            .contains(&read_files(&["one.txt".into(), "two.txt".into()])),
        "{context}"
    );
    drop(s);

    // Tasks 1 and 2 started together, before either ended.
    let started_at = |task: &str| first(&entries, "session", task, |_| true);
    let ended_at = |task: &str| {
        entries
            .iter()
            .position(|e| {
                e["task"] == task
                    && ["reviewed", "paused", "blocked"].contains(&e["step"].as_str().unwrap_or(""))
            })
            .unwrap_or_else(|| panic!("task {task} never ended: {context}"))
    };
    assert!(
        started_at(HELD).max(started_at(LIMITED)) < ended_at(HELD).min(ended_at(LIMITED)),
        "{context}"
    );
    // The usage limit paused task 2, naming the CLI and a reset; no session of that CLI
    // started until the run took task 2 up again by itself, though task 4 was ready and a
    // lane was free; then task 4 started too.
    let paused = first(&entries, "paused", LIMITED, |_| true);
    let p = &entries[paused];
    assert_eq!(p["agent"], name, "{context}");
    assert!(
        p["until"].is_i64(),
        "a reset the run can wait for: {context}"
    );
    assert!(
        p["reason"]
            .as_str()
            .is_some_and(|r| r.contains("usage limit")),
        "{context}"
    );
    let retry = first(&entries, "retry", LIMITED, |_| true);
    assert!(
        !entries[paused..retry]
            .iter()
            .any(|e| e["step"] == "session"),
        "{context}"
    );
    assert!(retry < started_at(WAITING), "{context}");
    assert!(
        entries[retry..]
            .iter()
            .any(|e| e["step"] == "session" && e["task"] == LIMITED),
        "{context}"
    );
    // Whichever of tasks 1 and 2 merged second conflicted in shared.txt; a session
    // resolving it (on the integration tip) was reviewed, then merged.
    let merged = |task: &str| first(&entries, "merged", task, |_| true);
    let conflicts: Vec<&Value> = entries.iter().filter(|e| e["step"] == "conflict").collect();
    assert_eq!(conflicts.len(), 1, "{context}");
    let (conflicted, other) = match conflicts[0]["task"].as_str() {
        Some("1") => ("1", "2"),
        Some("2") => ("2", "1"),
        _ => panic!("tasks 1 and 2 conflict: {context}"),
    };
    assert_eq!(conflicts[0]["files"], json!(["shared.txt"]), "{context}");
    let conflict = first(&entries, "conflict", conflicted, |_| true);
    let resolving = first(&entries, "session", conflicted, |e| e["resolve"].is_array());
    assert!(
        merged(other) < conflict && conflict < resolving && resolving < merged(conflicted),
        "{context}"
    );
    // Task 3 started only after both of its dependencies merged, from a tip holding both.
    let third = started_at("3");
    assert!(merged("1") < third && merged("2") < third, "{context}");
    let base = entries[third]["base"].as_str().unwrap();
    for t in ["1", "2"] {
        let commit = entries[merged(t)]["commit"].as_str().unwrap();
        assert_eq!(
            lanes.git(&["merge-base", "--is-ancestor", commit, base]),
            "",
            "{context}"
        );
    }

    // Landed by fast-forward: the user's branch is the reviewed integration tip.
    let tip = lanes.git(&["rev-parse", "taskie/p/integration"]);
    assert_eq!(
        report["all_code_review"],
        Value::String(tip.clone()),
        "{context}"
    );
    assert_eq!(report["landed"], Value::String(tip.clone()), "{context}");
    assert_eq!(lanes.git(&["rev-parse", "main"]), tip);
    assert_eq!(
        lanes.git(&["merge-base", "--is-ancestor", &head, "main"]),
        ""
    );
    // Every task's work, made by the agents in their worktrees, and the conflict resolved
    // with both sides and no marker.
    let show = |f: &str| lanes.git(&["show", &format!("main:{f}")]);
    assert_eq!(show("one.txt"), "one");
    assert_eq!(show("two.txt"), "two");
    assert_eq!(
        show("three.txt"),
        "one\ntwo",
        "task 3 saw its dependencies' work"
    );
    assert_eq!(show("four.txt"), "four");
    let shared = show("shared.txt");
    assert!(
        shared.lines().any(|l| l == "from one") && shared.lines().any(|l| l == "from two"),
        "{shared}"
    );
    assert!(!shared.lines().any(is_marker), "{shared}");
    let log = lanes.git(&["log", "--format=%s", "main"]);
    for subject in [
        "Write one.txt, shared.txt",
        "Write two.txt, shared.txt",
        "Write three.txt",
        "Write four.txt",
    ] {
        assert!(log.lines().any(|l| l == subject), "{log}");
    }
    // Each task merged once, and tasks.md says so.
    let merges = lanes.git(&["log", "--merges", "--format=%s", "main"]);
    for (id, _, _) in TASKS {
        let once = merges
            .lines()
            .filter(|m| m.starts_with(&format!("taskie: merge task {id} ")))
            .count();
        assert_eq!(once, 1, "task {id} merged once: {merges}");
    }
    let tasks = taskie::model::tasks::parse(&show(".taskie/plans/p/tasks.md")).unwrap();
    for (id, _, _) in TASKS {
        let status = tasks.iter().find(|t| t.id == id).map(|t| t.status.clone());
        assert_eq!(status.as_deref(), Some("done"), "task {id}: {tasks:?}");
    }
    // Nothing left behind: no worktree but the user's, the checkout clean.
    let worktrees = lanes.git(&["worktree", "list", "--porcelain"]);
    assert_eq!(
        worktrees
            .lines()
            .filter(|l| l.starts_with("worktree "))
            .count(),
        1,
        "{worktrees}"
    );
    for dir in ["task-1", "task-2", "task-3", "task-4", "integration"] {
        assert!(
            !lanes.run_dir().join(dir).exists(),
            "{dir} is left: {context}"
        );
    }
    assert_eq!(lanes.git(&["status", "--porcelain"]), "");
    // The hook ran at the stops of every session: a heartbeat in each gate.
    for task in ["1", "2", "3", "4", "all"] {
        let beats = lanes
            .run_dir()
            .join(format!("gate-{task}/heartbeats.jsonl"));
        let text = std::fs::read_to_string(&beats)
            .unwrap_or_else(|e| panic!("{}: {e}\n{context}", beats.display()));
        assert!(!text.trim().is_empty(), "{context}");
    }
    took
}

#[test]
fn under_the_real_claude_a_whole_run_with_a_dependent_a_conflict_and_a_usage_limit_lands() {
    let script = Arc::new(Mutex::new(Script::default()));
    let limit = Arc::new(Limit::new());
    let (s, l) = (script.clone(), limit.clone());
    let api = FakeApi::start(move |r| claude_model(r, &s, &l));
    let lanes = Lanes::new();
    // Signed in with a subscription (OAuth credentials, no API key): the only way Claude
    // Code reports a usage limit with its reset.
    crate::support::claude_cli::sign_in_with_a_subscription(&lanes.home());
    let env = [
        ("ANTHROPIC_BASE_URL", api.base_url()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
    ];
    let took = whole_story(
        "claude",
        crate::support::claude_cli::binary(),
        &env,
        &lanes,
        &script,
        &limit,
    );
    println!("claude: the whole story in {took:?}");
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
fn under_the_real_codex_a_whole_run_with_a_dependent_a_conflict_and_a_usage_limit_lands() {
    let script = Arc::new(Mutex::new(Script::default()));
    let limit = Arc::new(Limit::new());
    let (s, l) = (script.clone(), limit.clone());
    let api = FakeOpenAi::start(move |r| codex_model(r, &s, &l)).unwrap();
    let dir = home();
    let env = codex_env(&api, dir.path());
    let lanes = Lanes::new();
    let took = whole_story("codex", &bin("codex"), &env, &lanes, &script, &limit);
    // The hook was trusted the way Codex's /hooks screen does it: its hash in config.toml.
    let config = std::fs::read_to_string(dir.path().join(".codex/config.toml")).unwrap();
    assert!(
        config.contains("[hooks.state.\"/<session-flags>/config.toml:stop:0:0\"]")
            && config.contains("trusted_hash = \"sha256:"),
        "{config}"
    );
    println!("codex: the whole story in {took:?}");
}

#[test]
fn under_the_real_gemini_a_whole_run_with_a_dependent_a_conflict_and_a_usage_limit_lands() {
    let script = Arc::new(Mutex::new(Script::default()));
    let limit = Arc::new(Limit::new());
    let (s, l) = (script.clone(), limit.clone());
    let api = FakeGemini::start(move |r| gemini_model(r, &s, &l)).unwrap();
    let dir = home();
    // The user's Gemini makes one attempt per request (`general.maxAttempts: 1`).
    gemini_home(dir.path());
    let env = [
        ("GEMINI_CLI_HOME", dir.path().display().to_string()),
        ("GOOGLE_GEMINI_BASE_URL", api.base_url()),
        ("GEMINI_API_KEY", "dummy".to_string()),
        ("SHELL", "/bin/sh".to_string()),
    ];
    let lanes = Lanes::new();
    let took = whole_story("gemini", &bin("gemini"), &env, &lanes, &script, &limit);
    println!("gemini: the whole story in {took:?}");
}
