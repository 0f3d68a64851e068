//! The real Claude Code CLI the way a user has it: a HOME of its own where the Taskie
//! plugin was installed with the README's commands, our freshly built binaries on PATH,
//! and `claude -p` runs (new sessions, or resumed ones) that a test can wait for or kill.

use super::claude_cli;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The directory holding the freshly built `taskie` and `taskie-hook`.
pub fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_taskie-hook"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// This repository, the plugin's source.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The environment of every real CLI run: the fake API at `base_url`, a throwaway HOME,
/// our binaries first on PATH, the real CLI as reviewer, and none of the variables of a
/// Claude Code session the tests may themselves run in.
pub fn cli_env(cmd: &mut Command, base_url: &str, home: &Path) {
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("HOME", home)
        .env("PATH", path)
        .env("ANTHROPIC_BASE_URL", base_url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("TASKIE_REVIEWER", claude_cli::binary())
        .env("TASKIE_REVIEW_TIMEOUT", "120");
    for var in [
        "CLAUDECODE",
        "CLAUDE_CODE_SESSION_ID",
        "CLAUDE_CODE_ENTRYPOINT",
        "CLAUDE_PROJECT_DIR",
        "CLAUDE_CODE_MAX_RETRIES",
        "TASKIE_HOOK_SKIP",
        "TASKIE_PLAN",
        "TASKIE_BLOCK_STYLE",
        "IS_SANDBOX",
        "ANTHROPIC_AUTH_TOKEN",
    ] {
        cmd.env_remove(var);
    }
}

/// The fields of the CLI's result object the tests read.
#[derive(Debug, Deserialize)]
pub struct CliResult {
    pub subtype: String,
    pub is_error: bool,
    pub session_id: String,
}

/// A HOME in which the plugin is installed as the README says: `claude plugin marketplace
/// add <path of a checkout>`, then `claude plugin install taskie@taskie`.
pub struct UserInstall {
    home: tempfile::TempDir,
    /// The checkout the marketplace was added from: this repository's files without
    /// `target/` (what a fresh clone holds), so nothing large is copied into the cache.
    checkout: tempfile::TempDir,
}

impl UserInstall {
    pub fn new() -> UserInstall {
        let install = UserInstall {
            home: tempfile::tempdir().expect("temp HOME"),
            checkout: tempfile::tempdir().expect("temp checkout"),
        };
        copy_checkout(repo(), install.checkout.path());
        let source = install.checkout.path().display().to_string();
        install.claude(&["plugin", "marketplace", "add", &source]);
        install.claude(&["plugin", "install", "taskie@taskie"]);
        install
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    pub fn checkout(&self) -> &Path {
        self.checkout.path()
    }

    /// Runs one `claude` management command, which needs no model: the API address
    /// points at a closed port.
    fn claude(&self, args: &[&str]) {
        let mut cmd = Command::new(claude_cli::binary());
        cmd.args(args).stdin(Stdio::null());
        cli_env(&mut cmd, "http://127.0.0.1:9", self.home());
        let out = cmd.output().expect("run claude");
        assert!(
            out.status.success(),
            "`claude {}` failed, so the README's install steps do not work:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Default for UserInstall {
    fn default() -> Self {
        Self::new()
    }
}

/// Copies the files git knows in `repo` (tracked, or new and not ignored) into `to`.
fn copy_checkout(repo: &Path, to: &Path) {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(repo)
        .output()
        .expect("git ls-files");
    assert!(
        out.status.success(),
        "git ls-files failed in {}",
        repo.display()
    );
    for name in out.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = Path::new(std::str::from_utf8(name).expect("a UTF-8 file name"));
        let from = repo.join(name);
        // A tracked file deleted in the work tree is not part of the checkout.
        if !from.is_file() {
            continue;
        }
        let dest = to.join(name);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        crate::support::copy_file(&from, &dest);
    }
}

/// One `claude -p` run in the background, in a process group of its own.
pub struct Turn {
    child: Option<Child>,
    out: tempfile::NamedTempFile,
    err: tempfile::NamedTempFile,
}

impl Turn {
    /// Starts `claude -p <prompt>` in `project`; `resume` continues that session instead of
    /// starting a new one.
    pub fn start(
        project: &Path,
        home: &Path,
        base_url: &str,
        prompt: &str,
        resume: Option<&str>,
    ) -> Turn {
        let out = tempfile::NamedTempFile::new().unwrap();
        let err = tempfile::NamedTempFile::new().unwrap();
        let mut cmd = Command::new(claude_cli::binary());
        cmd.args(["-p", prompt, "--output-format", "json"])
            .arg("--allowedTools=Bash,Read,Write,Edit");
        if let Some(id) = resume {
            cmd.args(["--resume", id]);
        }
        use std::os::unix::process::CommandExt;
        cmd.current_dir(project)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(out.reopen().unwrap())
            .stderr(err.reopen().unwrap());
        cli_env(&mut cmd, base_url, home);
        let child = cmd.spawn().expect("start claude");
        Turn {
            child: Some(child),
            out,
            err,
        }
    }

    pub fn pid(&self) -> libc::pid_t {
        self.child.as_ref().expect("running").id() as libc::pid_t
    }

    /// Sends `signal` to the `claude` process only (not to the hook it started: Claude Code
    /// runs hooks in a session of their own).
    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(self.pid(), signal) };
    }

    /// Waits at most `within` for the run to end; `None` if it did not (it keeps running).
    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let child = self.child.as_mut().expect("running");
        let end = Instant::now() + within;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits (bounded by `within`) for a successful end and returns the result object.
    pub fn finish(mut self, within: Duration) -> CliResult {
        let status = self.wait_exit(within);
        let (stdout, stderr) = (self.stdout(), self.stderr());
        let Some(status) = status else {
            panic!("claude did not finish within {within:?}; stderr so far:\n{stderr}");
        };
        assert!(
            status.success(),
            "claude failed ({status}): {stdout}\n{stderr}"
        );
        let result: CliResult = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("not one result object ({e}): {stdout}\n{stderr}"));
        assert_eq!(
            (result.subtype.as_str(), result.is_error),
            ("success", false),
            "{stdout}"
        );
        result
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(self.out.path()).unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.err.path()).unwrap_or_default()
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take()
            && child.try_wait().ok().flatten().is_none()
        {
            // SAFETY: kill has no memory-safety preconditions; the group is the run's own.
            unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
            let _ = child.wait();
        }
    }
}

/// The live processes whose working directory is `dir` or below it: what a run left
/// behind there (a hook, a reviewer). Zombies are dead and not counted.
pub fn processes_in(dir: &Path) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id() as libc::pid_t;
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|&pid| pid != me)
        .filter(|&pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
        })
        .filter(|&pid| !super::processes::gone(pid))
        .collect()
}

/// The program a process runs (its first argument).
pub fn program(pid: libc::pid_t) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let first = cmdline.split(|&b| b == 0).next().unwrap_or_default();
    String::from_utf8_lossy(first).into_owned()
}

/// The value of `name` in a process's environment.
pub fn env_of(pid: libc::pid_t, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    environ.split(|&b| b == 0).find_map(|entry| {
        let entry = String::from_utf8_lossy(entry);
        let (k, v) = entry.split_once('=')?;
        (k == name).then(|| v.to_string())
    })
}
