//! Helpers for the fault, security, property and loop-safety tests, on top of the project builder:
//! hand-written reviewer scripts, hooks started as background processes (to kill them or
//! run several at once), and waiting for processes to disappear.

use super::{Project, Run};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const HOOK: &str = env!("CARGO_BIN_EXE_taskie-hook");

/// The first lines of every scripted reviewer: counts the call, records its pid, and finds
/// the review file the prompt asks for (relative to the project, its working directory).
const PROLOGUE: &str = "#!/bin/sh\n\
here=${0%/*}\n\
echo run >> \"$here/calls\"\n\
echo $$ >> \"$here/pids\"\n\
path=$(sed -n 's/^- Write your review to exactly this file, creating it: //p')\n";

/// Shell that writes a FAIL review and prints the CLI's result object, as `claude` does.
pub const REVIEW_FAIL: &str = "printf '# Review\\n\\n- Fix the thing\\n\\nVERDICT: FAIL\\n' > \"$path\"\n\
echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\",\"structured_output\":{\"verdict\":\"FAIL\"}}'\n";

/// The same with PASS.
pub const REVIEW_PASS: &str = "printf '# Review\\n\\nAll good.\\n\\nVERDICT: PASS\\n' > \"$path\"\n\
echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\",\"structured_output\":{\"verdict\":\"PASS\"}}'\n";

pub trait ProjectExt {
    /// Installs a reviewer made of [`PROLOGUE`] and `body` (sh).
    fn script_reviewer(&self, body: &str);
    /// Starts the hook in the background with `event` on stdin (cwd filled in) and the
    /// same environment as `Project::hook_command`, plus `env`.
    fn spawn_hook(&self, event: Value, env: &[(&str, &str)]) -> Child;
    /// The same with the hook binary at `program`.
    fn spawn_hook_from(&self, program: &Path, event: Value, env: &[(&str, &str)]) -> Child;
    fn state_path(&self) -> PathBuf;
    fn put_state(&self, bytes: &[u8]);
    /// Pids the scripted reviewer recorded, in start order.
    fn reviewer_pids(&self) -> Vec<libc::pid_t>;
    /// Names in the plan directory starting with `.taskie-tmp-`.
    fn temp_files(&self) -> Vec<String>;
}

impl ProjectExt for Project {
    fn script_reviewer(&self, body: &str) {
        crate::support::write_executable(&self.reviewer_path(), &format!("{PROLOGUE}{body}\n"));
    }

    fn spawn_hook(&self, event: Value, env: &[(&str, &str)]) -> Child {
        self.spawn_hook_from(Path::new(HOOK), event, env)
    }

    fn spawn_hook_from(&self, program: &Path, mut event: Value, env: &[(&str, &str)]) -> Child {
        if event.get("cwd").is_none() {
            event["cwd"] = json!(self.root());
        }
        let mut cmd = Command::new(program);
        cmd.env_remove("TASKIE_HOOK_SKIP")
            .env_remove("TASKIE_PLAN")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("TASKIE_REVIEW_TIMEOUT")
            .env_remove("TASKIE_TEST_PAUSE_AT")
            .env("TASKIE_REVIEWER", self.reviewer_path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("start taskie-hook");
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(event.to_string().as_bytes()).unwrap();
        drop(stdin);
        child
    }

    fn state_path(&self) -> PathBuf {
        self.plan_dir().join("state.json")
    }

    fn put_state(&self, bytes: &[u8]) {
        std::fs::write(self.state_path(), bytes).unwrap();
    }

    fn reviewer_pids(&self) -> Vec<libc::pid_t> {
        std::fs::read_to_string(self.reviewer_dir().join("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    fn temp_files(&self) -> Vec<String> {
        std::fs::read_dir(self.plan_dir())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".taskie-tmp-"))
            .collect()
    }
}

/// An ordinary Stop event.
pub fn stop_event(active: bool) -> Value {
    json!({"hook_event_name": "Stop", "stop_hook_active": active})
}

/// Waits for a background hook and returns what it printed.
pub fn finish(child: Child) -> Run {
    Run::from(child.wait_with_output().expect("wait for taskie-hook"))
}

/// Forwards the child's stderr lines to a channel, so a test can wait for a marker line
/// without blocking forever.
pub fn stderr_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits (bounded) for a line containing `needle`.
pub fn wait_for_line(rx: &mpsc::Receiver<String>, needle: &str, within: Duration) -> bool {
    let end = Instant::now() + within;
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

/// Polls `cond` until it holds or `within` passes. For liveness only (a process has gone,
/// a file has appeared), never as a measure of speed.
pub fn eventually(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + within;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// True once `pid` no longer runs (a zombie counts as gone: it is dead, and who reaps it is
/// up to the container's init).
pub fn gone(pid: libc::pid_t) -> bool {
    // SAFETY: kill with signal 0 only checks for existence.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return true;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
        Err(_) => true,
    }
}

/// SIGKILLs the pids still alive when dropped, so a failed assertion leaks no process.
pub struct Reap(pub Vec<libc::pid_t>);

impl Drop for Reap {
    fn drop(&mut self) {
        for &pid in &self.0 {
            if pid > 1 && !gone(pid) {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// The files below `dir` (relative names), to prove nothing was created.
pub fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            out.push(p.strip_prefix(base).unwrap().display().to_string());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(base, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// How many rounds a soak runs: `full` in the slow tier (the `e2e` test crate), a tenth of
/// it (at least one) in the fast `cargo test`, and either multiplied by
/// `TASKIE_TEST_SCALE` for long local soaks (docs/reliability.md).
pub fn rounds(full: usize) -> usize {
    let base = if crate::SLOW_TIER {
        full
    } else {
        full.div_ceil(10)
    };
    base * scale()
}

/// `TASKIE_TEST_SCALE=<n>`: multiplies every soak's rounds and every property's cases.
pub fn scale() -> usize {
    std::env::var("TASKIE_TEST_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1usize)
        .max(1)
}

/// The environment variable that marks every process of one hook run: the hook passes its
/// environment on to the guardians, the reviewers and what they start, so a marker finds
/// them all in /proc, whichever group or parent they ended up with.
pub const KILL_MARK: &str = "TASKIE_TEST_KILL_MARK";

/// A marker value no other run shares.
pub fn marker() -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// The live processes whose environment holds `TASKIE_TEST_KILL_MARK=<mark>` (zombies,
/// dead already, do not count).
pub fn marked(mark: &str) -> Vec<String> {
    let needle = format!("{KILL_MARK}={mark}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !env.split(|&b| b == 0).any(|v| v == needle.as_bytes()) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The state letter follows the parenthesised command name.
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        if !state.starts_with('Z') {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push(format!(
                "{name} {}",
                String::from_utf8_lossy(&cmd).replace('\0', " ")
            ));
        }
    }
    found
}
