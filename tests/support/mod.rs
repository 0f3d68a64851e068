//! The shared builder for integration tests: a real temporary project, the real
//! binaries, and a fake reviewer script selected through `TASKIE_REVIEWER`.

pub mod processes;
pub mod vendors;

use assert_cmd::Command;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A temporary project directory with `.taskie/plans/<plan>/`.
pub struct Project {
    tmp: tempfile::TempDir,
    plan: String,
    env: Vec<(String, String)>,
}

impl Default for Project {
    fn default() -> Self {
        Self::new()
    }
}

impl Project {
    /// An empty project (no `.taskie` yet) with a passing fake reviewer installed.
    pub fn new() -> Project {
        let tmp = tempdir();
        std::fs::create_dir_all(tmp.path().join("project")).unwrap();
        std::fs::create_dir_all(tmp.path().join("reviewer")).unwrap();
        let p = Project {
            tmp,
            plan: "p".into(),
            env: Vec::new(),
        };
        p.set_reviewer(&Fake::pass());
        p
    }

    /// Copies the tree below `src` (hidden entries included) into the project, for
    /// tests that start from a shipped example such as examples/demo/project.
    pub fn copy_in(self, src: &Path) -> Project {
        copy_tree(src, &self.root());
        self
    }

    /// Selects (and creates, with a plan.md) the plan the other builder calls act on.
    pub fn plan(mut self, id: &str) -> Project {
        self.plan = id.into();
        std::fs::create_dir_all(self.plan_dir()).unwrap();
        if !self.plan_dir().join("plan.md").exists() {
            std::fs::write(
                self.plan_dir().join("plan.md"),
                "# Plan\n\nBuild the thing.\n",
            )
            .unwrap();
        }
        self
    }

    /// Writes state.json (compact, as an older writer would).
    pub fn state(self, state: Value) -> Project {
        std::fs::write(self.plan_dir().join("state.json"), state.to_string()).unwrap();
        self
    }

    /// Writes a file in the plan directory.
    pub fn file(self, name: &str, content: &str) -> Project {
        let path = self.plan_dir().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
        self
    }

    /// Writes tasks.md with `(id, status)` rows and a task-<id>.md for each.
    pub fn tasks(self, rows: &[(u64, &str)]) -> Project {
        let mut md = String::from("| Id | Title | Status |\n|----|-------|--------|\n");
        for (id, status) in rows {
            md.push_str(&format!("| {id} | Task {id} | {status} |\n"));
            std::fs::write(
                self.plan_dir().join(format!("task-{id}.md")),
                format!("# Task {id}\n"),
            )
            .unwrap();
        }
        std::fs::write(self.plan_dir().join("tasks.md"), md).unwrap();
        self
    }

    pub fn reviewer(self, fake: &Fake) -> Project {
        self.set_reviewer(fake);
        self
    }

    pub fn env(mut self, key: &str, value: &str) -> Project {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets (or replaces) a variable of every later command.
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
    }

    /// Replaces the fake reviewer between runs.
    pub fn set_reviewer(&self, fake: &Fake) {
        write_executable(&self.reviewer_path(), &fake.script());
    }

    pub fn root(&self) -> PathBuf {
        self.tmp.path().join("project")
    }

    pub fn plan_dir(&self) -> PathBuf {
        self.root().join(".taskie/plans").join(&self.plan)
    }

    pub fn logs(&self) -> PathBuf {
        self.root().join(".taskie/logs")
    }

    pub fn reviewer_dir(&self) -> PathBuf {
        self.tmp.path().join("reviewer")
    }

    pub fn reviewer_path(&self) -> PathBuf {
        self.reviewer_dir().join("fake-claude")
    }

    /// The `taskie-hook` command with this project's environment, not yet run.
    pub fn hook_command(&self) -> Command {
        Command::from_std(self.hook_process())
    }

    /// The hook as a plain process, for a test that drives its stdin itself.
    pub fn hook_process(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_taskie-hook"));
        self.prepare(&mut cmd);
        cmd
    }

    /// The `taskie` command run in the project directory.
    pub fn taskie(&self, args: &[&str]) -> Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_taskie"));
        self.prepare(&mut cmd);
        cmd.current_dir(self.root()).args(args);
        Command::from_std(cmd)
    }

    fn prepare(&self, cmd: &mut std::process::Command) {
        cmd.env_remove("TASKIE_HOOK_SKIP")
            .env_remove("TASKIE_PLAN")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .env_remove("TASKIE_REVIEW_TIMEOUT")
            .env_remove("TASKIE_CLIENT")
            .env_remove("TASKIE_BLOCK_CAP")
            .env_remove("TASKIE_BLOCK_STYLE")
            // Installed as a plugin, as most users have it (Claude Code's directory); a
            // test of the hook registered by hand sets this empty.
            .env(
                "TASKIE_PLUGIN_ROOT",
                Path::new(env!("CARGO_MANIFEST_DIR")).join("dist/claude"),
            )
            .env_remove("CODEX_THREAD_ID")
            // The agent hosts' marks in their shells: a test that is one sets it.
            .env_remove("CLAUDECODE")
            .env_remove("GEMINI_CLI")
            .env_remove("GEMINI_PROJECT_DIR")
            .env("TASKIE_REVIEWER", self.reviewer_path())
            .env("TASKIE_CODEX", self.reviewer_dir().join("fake-codex"))
            .env("TASKIE_GEMINI", self.reviewer_dir().join("fake-gemini"));
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
    }

    /// Runs the hook with `event`; `cwd` is filled in with the project unless given.
    pub fn run_hook(&self, mut event: Value) -> Run {
        if event.get("cwd").is_none() {
            event["cwd"] = json!(self.root());
        }
        let out = self
            .hook_command()
            .write_stdin(event.to_string())
            .output()
            .unwrap();
        Run::from(out)
    }

    /// An ordinary stop (`stop_hook_active: false`).
    pub fn stop(&self) -> Run {
        self.run_hook(json!({"hook_event_name": "Stop", "stop_hook_active": false}))
    }

    /// A stop while Claude Code is already continuing because of a block.
    pub fn stop_active(&self) -> Run {
        self.run_hook(json!({"hook_event_name": "Stop", "stop_hook_active": true}))
    }

    pub fn state_json(&self) -> Value {
        serde_json::from_str(&self.read("state.json")).expect("state.json parses")
    }

    pub fn state_bytes(&self) -> Vec<u8> {
        std::fs::read(self.plan_dir().join("state.json")).unwrap()
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.plan_dir().join(name))
            .unwrap_or_else(|e| panic!("read {name}: {e}"))
    }

    pub fn exists(&self, name: &str) -> bool {
        self.plan_dir().join(name).exists()
    }

    /// The event log, one value per line.
    pub fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(self.logs().join("events.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("event line parses"))
            .collect()
    }

    pub fn last_event(&self) -> Value {
        self.events().pop().expect("an event was logged")
    }

    /// How many times the fake reviewer ran.
    pub fn reviewer_calls(&self) -> usize {
        std::fs::read_to_string(self.reviewer_dir().join("calls"))
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    /// The arguments of the last reviewer run.
    pub fn reviewer_args(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.reviewer_dir().join("args")).unwrap();
        let mut args: Vec<String> = text.split("\n--END-ARG--\n").map(str::to_owned).collect();
        args.pop();
        args
    }

    /// The prompt the last reviewer run read on stdin.
    pub fn reviewer_prompt(&self) -> String {
        self.reviewer_saw("stdin")
    }

    /// A file the fake reviewer wrote about its environment (`skip`, `cwd`, `stdin`).
    pub fn reviewer_saw(&self, what: &str) -> String {
        std::fs::read_to_string(self.reviewer_dir().join(what)).unwrap_or_default()
    }

    /// The pid of the `sleep` grandchild a [`Fake::grandchild`] reviewer left behind.
    pub fn grandchild_pid(&self) -> i32 {
        self.reviewer_saw("grandchild")
            .trim()
            .parse()
            .expect("the grandchild was started")
    }

    /// Every file below the project, with its bytes, to prove a run wrote nothing.
    pub fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        fn walk(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    out.push((p.clone(), Vec::new()));
                    walk(&p, out);
                } else {
                    out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.root(), &mut out);
        out.sort();
        out
    }
}

/// The instruction a block carries, on whichever channel it came.
pub fn block_text(answer: &Value) -> Option<String> {
    if answer.get("decision").and_then(Value::as_str) == Some("block") {
        return answer["reason"].as_str().map(str::to_owned);
    }
    let context = answer.get("hookSpecificOutput")?;
    assert_eq!(context["hookEventName"], "Stop", "{answer}");
    context["additionalContext"].as_str().map(str::to_owned)
}

/// What one hook run printed.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
}

impl From<std::process::Output> for Run {
    fn from(o: std::process::Output) -> Run {
        Run {
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            code: o.status.code(),
        }
    }
}

impl Run {
    /// The answer as JSON; `Value::Null` for empty stdout. Asserts the hook protocol:
    /// exit 0, and stdout empty or exactly one JSON object.
    pub fn answer(&self) -> Value {
        assert_eq!(
            self.code,
            Some(0),
            "the hook always exits 0; stderr: {}",
            self.stderr
        );
        let out = self.stdout.trim();
        if out.is_empty() {
            return Value::Null;
        }
        let v: Value = serde_json::from_str(out)
            .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}): {out}"));
        assert!(v.is_object(), "stdout must be an object: {out}");
        if v.get("decision").is_none() {
            assert!(
                v.get("continue").is_none(),
                "an allow never carries continue: {out}"
            );
        }
        v
    }

    /// Whether the answer makes the agent continue: the additionalContext channel (the
    /// default) or a classic `decision: block` (`TASKIE_BLOCK_STYLE=decision`).
    pub fn is_block(&self) -> bool {
        block_text(&self.answer()).is_some()
    }

    /// Asserts a block and returns its reason.
    pub fn reason(&self) -> String {
        let a = self.answer();
        block_text(&a).unwrap_or_else(|| panic!("expected a block, got {a}"))
    }

    /// Asserts an allow with a message and returns it.
    pub fn message(&self) -> String {
        let a = self.answer();
        assert!(block_text(&a).is_none(), "expected an allow, got {a}");
        a["systemMessage"]
            .as_str()
            .unwrap_or_else(|| panic!("expected a systemMessage, got {a}"))
            .to_owned()
    }

    /// Asserts an allow with empty stdout.
    pub fn assert_silent(&self) {
        assert_eq!(self.answer(), Value::Null, "expected a silent allow");
    }
}

/// What the fake reviewer prints on stdout.
#[derive(Clone, Debug)]
pub enum Shape {
    /// The real CLI shape: the verdict under `structured_output`.
    Structured(&'static str),
    /// The older shape: `result` is an object with `verdict`.
    ResultObject(&'static str),
    /// Only `result` text, no structured verdict.
    TextOnly(&'static str),
    /// `is_error: true`.
    IsError,
    /// The real CLI shape with a summary and findings: `result` is the JSON text of
    /// `structured_output`, as `--json-schema` makes it.
    Review {
        verdict: &'static str,
        summary: &'static str,
        findings: &'static [&'static str],
    },
    /// A failed run as the CLI prints it: `is_error`, the API status, the message.
    ApiError { status: u16, message: &'static str },
    /// Exactly these bytes.
    Raw(&'static str),
}

/// A fake `claude` for tests, written as a small sh script.
#[derive(Clone, Debug)]
pub struct Fake {
    pub shape: Shape,
    /// The last line of the review file it writes; `None` writes no review file.
    pub file_last_line: Option<String>,
    pub exit: i32,
    pub sleep_secs: Option<f64>,
    /// Leaves a `sleep` grandchild holding stdout, its pid in `grandchild`.
    pub grandchild: bool,
    /// Extra shell run before answering.
    pub extra: &'static str,
    /// Writes its environment to `env` beside it.
    pub keeps_env: bool,
}

impl Fake {
    pub fn verdict(v: &'static str) -> Fake {
        Fake {
            shape: Shape::Structured(v),
            file_last_line: Some(format!("VERDICT: {v}")),
            exit: 0,
            sleep_secs: None,
            grandchild: false,
            extra: "",
            keeps_env: false,
        }
    }
    pub fn pass() -> Fake {
        Fake::verdict("PASS")
    }
    pub fn fail() -> Fake {
        Fake::verdict("FAIL")
    }
    pub fn shape(mut self, shape: Shape) -> Fake {
        self.shape = shape;
        self
    }
    /// The review file ends with `VERDICT: <verdict>`; `None` writes no file.
    pub fn file(mut self, verdict: Option<&'static str>) -> Fake {
        self.file_last_line = verdict.map(|v| format!("VERDICT: {v}"));
        self
    }
    /// The review file ends with exactly this line.
    pub fn file_line(mut self, line: &str) -> Fake {
        self.file_last_line = Some(line.into());
        self
    }
    pub fn exit(mut self, code: i32) -> Fake {
        self.exit = code;
        self
    }
    pub fn sleep(mut self, secs: f64) -> Fake {
        self.sleep_secs = Some(secs);
        self
    }
    pub fn grandchild(mut self) -> Fake {
        self.grandchild = true;
        self
    }
    pub fn extra(mut self, sh: &'static str) -> Fake {
        self.extra = sh;
        self
    }
    /// Writes its environment to `env` beside it (see [`Project::reviewer_saw`]).
    pub fn keeps_env(mut self) -> Fake {
        self.keeps_env = true;
        self
    }

    /// The script's text, for a test that installs it somewhere of its own.
    pub fn script_text(&self) -> String {
        self.script()
    }

    fn script(&self) -> String {
        let mut s = String::from(
            // Builtins where they do (`${0%/*}`, printf): the tier runs this script some
            // 800 times, and each external tool is a process.
            "#!/bin/sh\nhere=${0%/*}\necho run >> \"$here/calls\"\n\
             : > \"$here/args\"\nfor a; do printf '%s\\n--END-ARG--\\n' \"$a\" >> \"$here/args\"; done\n\
             printf '%s' \"$TASKIE_HOOK_SKIP\" > \"$here/skip\"\npwd > \"$here/cwd\"\ncat > \"$here/stdin\"\n\
             path=$(sed -n 's/^- Write your review to exactly this file, creating it: //p' \"$here/stdin\")\n",
        );
        if self.keeps_env {
            s.push_str("env > \"$here/env\"\n");
        }
        if self.grandchild {
            s.push_str("sleep 1000 &\necho $! > \"$here/grandchild\"\n");
        }
        if let Some(secs) = self.sleep_secs {
            s.push_str(&format!("sleep {secs}\n"));
        }
        s.push_str(self.extra);
        s.push('\n');
        if let Some(line) = &self.file_last_line {
            let review = format!(
                "# Review\n\n## Findings\n\n- The error message does not name the file\n- Missing test for the empty case\n\n{line}"
            );
            s.push_str(&format!(
                "printf '%s\\n' {} > \"$path\"\n",
                sh_quote(&review)
            ));
        }
        let stdout = match &self.shape {
            Shape::Structured(v) => json!({"type":"result","subtype":"success","is_error":false,"duration_ms":1200,
                "result":"I wrote the review.","session_id":"00000000-0000-0000-0000-000000000000",
                "total_cost_usd":0.01,"structured_output":{"verdict":v}})
            .to_string(),
            Shape::ResultObject(v) => json!({"type":"result","subtype":"success","is_error":false,"result":{"verdict":v}}).to_string(),
            Shape::TextOnly(t) => json!({"type":"result","subtype":"success","is_error":false,"result":t}).to_string(),
            Shape::IsError => {
                json!({"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: overloaded"}).to_string()
            }
            Shape::Review {
                verdict,
                summary,
                findings,
            } => {
                let so = json!({"verdict": verdict, "summary": summary, "findings": findings});
                json!({"type":"result","subtype":"success","is_error":false,"result":so.to_string(),
                    "structured_output":so,"total_cost_usd":0.02,"num_turns":3,"duration_ms":900,
                    "usage":{"input_tokens":1000,"output_tokens":200}})
                .to_string()
            }
            Shape::ApiError { status, message } => json!({"type":"result","subtype":"success",
                "is_error":true,"api_error_status":status,"result":format!("API Error: {status} {message}")})
            .to_string(),
            Shape::Raw(r) => r.to_string(),
        };
        s.push_str(&format!("printf '%s\\n' {}\n", sh_quote(&stdout)));
        if self.grandchild {
            // Keep the script alive briefly so the grandchild surely inherited stdout.
            s.push_str("sleep 0.1\n");
        }
        s.push_str(&format!("exit {}\n", self.exit));
        s
    }
}

/// `text` as one sh word, quoted so the shell changes nothing in it.
pub fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The tests' one way to run git: `git args` in `dir`, its standard output without the
/// trailing newline (a `rev-parse` can then be passed on as an argument). Fails the test,
/// with git's error, when git fails. The user's and the system's git configuration are
/// left out and the author is a fixed identity, so a test runs the same on any machine.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("git's output is UTF-8");
    text.trim_end().to_owned()
}

/// Writes an executable script without this process ever holding it open for writing.
///
/// Why: tests run in parallel threads, and every process a thread spawns starts as a copy
/// of this process's descriptors until its `exec`. A script written here with
/// `std::fs::write` could be held open for writing by such a child for a moment, and a
/// hook that `exec`s the script in that moment fails with "Text file busy" (ETXTBSY). A
/// short-lived `tee` writes it instead: only that process ever has it open for writing.
pub fn write_executable(path: &Path, content: &str) {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let mut child = std::process::Command::new("tee")
        .arg(path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("tee starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(content.as_bytes())
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "writing {} failed", path.display());
    // A change of mode opens nothing.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A state.json for the start of a cycle of review `next`.
pub fn due(next: &str) -> Value {
    json!({"phase": "new-plan", "next_phase": next, "phase_iteration": 0, "max_reviews": 8,
           "review_model": "opus", "consecutive_clean": 0, "current_task": null, "tdd": false})
}

/// Copies a directory tree, keeping file permissions (so scripts stay executable).
pub fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap_or_else(|e| panic!("read {}: {e}", src.display())) {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            copy_file(&e.path(), &to);
        }
    }
}

/// Copies one file with its permissions; an executable one is copied by a `cp` process,
/// for the reason [`write_executable`] gives.
pub fn copy_file(from: &Path, to: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(from)
        .unwrap_or_else(|e| panic!("{}: {e}", from.display()))
        .permissions()
        .mode();
    if mode & 0o111 == 0 {
        std::fs::copy(from, to).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
        return;
    }
    let status = std::process::Command::new("cp")
        .arg("-p")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp starts");
    assert!(status.success(), "cp {} {}", from.display(), to.display());
}

/// Helpers for the `taskie` command-line tests.
impl Project {
    /// Runs `taskie` in the project directory and returns what it printed, whatever the exit status.
    pub fn run_taskie(&self, args: &[&str]) -> Run {
        Run::from(self.taskie(args).output().unwrap())
    }

    /// Runs `taskie` in a subdirectory of the project (created when missing).
    pub fn run_taskie_in(&self, sub: &str, args: &[&str]) -> Run {
        let dir = self.root().join(sub);
        std::fs::create_dir_all(&dir).unwrap();
        let mut cmd = self.taskie(args);
        cmd.current_dir(dir);
        Run::from(cmd.output().unwrap())
    }

    /// Runs `taskie` expecting exit status 0 and one JSON value on stdout.
    pub fn taskie_json(&self, args: &[&str]) -> Value {
        let run = self.run_taskie(args);
        assert_eq!(run.code, Some(0), "taskie {args:?} failed: {}", run.stderr);
        serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", run.stdout))
    }

    /// The reviews and the failed attempts `taskie status --json` counts in its spend of
    /// `scope` (`cycle` or `plan`).
    pub fn reviews_and_failed_attempts(&self, scope: &str) -> (u64, u64) {
        let v = self.taskie_json(&["status", "--json"]);
        let count = |field: &str| {
            v["spend"][scope][field]
                .as_u64()
                .unwrap_or_else(|| panic!("spend.{scope}.{field}: {v}"))
        };
        (count("reviews"), count("failed_attempts"))
    }
}

/// Helpers for checking a `taskie` run.
impl Run {
    /// Asserts exit status 0 and returns stdout.
    pub fn ok(&self) -> &str {
        assert_eq!(
            self.code,
            Some(0),
            "expected success; stdout: {} stderr: {}",
            self.stdout,
            self.stderr
        );
        &self.stdout
    }

    /// Asserts the exit status and returns stderr.
    pub fn fails_with(&self, code: i32) -> &str {
        assert_eq!(
            self.code,
            Some(code),
            "expected exit {code}; stdout: {} stderr: {}",
            self.stdout,
            self.stderr
        );
        &self.stderr
    }
}

/// The path of the shell `name` (sh, dash, bash, zsh, fish): the hook commands are proven
/// under each, so a missing one fails the test, naming it, rather than skipping it.
pub fn shell(name: &str) -> PathBuf {
    ["/bin", "/usr/bin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{name} is not installed, and the hook commands must be proven under it: \
                 install it (Debian: apt-get install -y zsh fish; .ci/run does this)"
            )
        })
}

/// A directory holding a `bwrap` that cannot create its namespaces, as in a container
/// without user namespaces: it says so on stderr and fails. Put it first on PATH.
#[cfg(unix)]
pub fn broken_bwrap() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempdir();
    let bwrap = bin.path().join("bwrap");
    std::fs::write(
        &bwrap,
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&bwrap, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// A new temporary directory below [`scratch`], removed when dropped.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir_in(scratch()).expect("a temporary directory below the scratch directory")
}

/// Where tests make their temporary trees: in the fast tier, on Linux, the memory file
/// system `/dev/shm` when it is writable and has room and `TMPDIR` is unset; else the
/// system's temporary directory. Creating files is most of what the tests do, and on a
/// disk each creation costs several times more while many files were deleted in the last
/// minute, as every test's cleanup does (docs/performance.md, "The test suite's fast
/// tier"). The slow tier keeps the system's: the real CLIs' sandboxes mount a `/dev` of
/// their own.
pub fn scratch() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        if !crate::SLOW_TIER && std::env::var_os("TMPDIR").is_none() && roomy(shm) {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        }
    })
}

/// A directory this process may write with at least 1 GiB free (a container's default
/// `/dev/shm` of 64 MiB would fill up).
#[cfg(target_os = "linux")]
fn roomy(dir: &Path) -> bool {
    use rustix::fs::{Access, access, statvfs};
    access(dir, Access::WRITE_OK | Access::EXEC_OK).is_ok()
        && statvfs(dir).is_ok_and(|st| st.f_bavail.saturating_mul(st.f_frsize) >= 1 << 30)
}

#[cfg(not(target_os = "linux"))]
fn roomy(_dir: &Path) -> bool {
    false
}

/// A directory for tests' temporary trees that no group or other user may write to, nor
/// any directory above it: Gemini CLI ignores settings below such a directory, and Claude
/// Code's sandbox lets a reviewer write /tmp. The build's temporary directory, unless the
/// checkout lies below one (a clone under /tmp), then `$HOME/.cache/taskie-tests`.
pub fn private_dir() -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let open = |dir: &Path| {
        dir.ancestors()
            .any(|d| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o022 != 0))
    };
    let build = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if !open(&build) {
        return build;
    }
    let home = PathBuf::from(std::env::var_os("HOME").expect("HOME is set"));
    let dir = home.join(".cache/taskie-tests");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(
        !open(&dir),
        "{} or a directory above it may be written by others: tests need a private directory",
        dir.display()
    );
    dir
}
