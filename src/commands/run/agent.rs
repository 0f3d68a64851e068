//! The real agent CLIs as a run's lanes (SPEC §23): what each is passed, how its stop hook
//! is made trusted the way that CLI documents, and the check that refuses a lane whose
//! hook would not run. docs/run.md ("The agents") says the same for users.
//!
//! Codex and Gemini skip a hook they do not trust without a word, and every lane is a new
//! worktree path, so trust is given to the hook itself (Codex: its entry's hash in the
//! user's config.toml; Gemini: a settings file of the lane's own and the workspace trusted
//! for that session), never to a path.

use crate::commands::settings::RunSettings;
use crate::model::host::Client;
use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// How one lane's agent is started.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Variables the session gets on top of the driver's own.
    pub env: Vec<(&'static str, OsString)>,
}

// Seconds a review may take at a stop: a hook's timeout (Gemini counts milliseconds).
use crate::model::host::HOOK_TIMEOUT_SECS;

/// The Gemini settings file of a lane, in its gate.
pub const GEMINI_SETTINGS: &str = "gemini-settings.json";

/// The hook command a session's CLI runs at each stop: this very `taskie`, as `taskie hook`,
/// so the hook always speaks the driver's version of the gate's protocol.
pub fn hook_command() -> String {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "taskie".into());
    format!("'{}' hook", exe.replace('\'', r"'\''"))
}

/// The hooks entry for `event`, in the shape Claude Code, Codex and Gemini share.
fn hooks_json(event: &str, timeout: u64) -> Value {
    json!({"hooks": {event: [{"hooks": [{"type": "command", "command": hook_command(), "timeout": timeout}]}]}})
}

/// The program: `TASKIE_AGENT` (`agent_var`), else the CLI's own name (found on PATH).
pub fn program(agent: Client, agent_var: Option<&Path>) -> PathBuf {
    agent_var.map_or_else(|| PathBuf::from(agent.name()), Path::to_path_buf)
}

/// Codex's `-c` override that gives the session its Stop hook.
fn codex_hook_override() -> String {
    format!(
        "hooks.Stop=[{{hooks=[{{type=\"command\",command={:?},timeout={HOOK_TIMEOUT_SECS}}}]}}]",
        hook_command()
    )
}

/// The arguments of the agent CLI in its headless mode; the prompt comes on stdin for all
/// three.
pub fn arguments(agent: Client, worktree: &Path, gate: &Path) -> Vec<String> {
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let path = |p: &Path| p.display().to_string();
    match agent {
        Client::Claude => {
            let mut a = s(&[
                "-p",
                "--output-format",
                "json",
                // Edits in the worktree and the gate need no prompt, and the listed tools
                // run without asking. Claude Code refuses every permission bypass
                // (`--dangerously-skip-permissions`, `--permission-mode bypassPermissions`)
                // as root; this works for root and everyone else alike.
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "Bash Read Edit Write Glob Grep",
                "--add-dir",
            ]);
            a.push(path(gate));
            // Hooks given in --settings need no trust in Claude Code.
            a.push("--settings".into());
            a.push(hooks_json("Stop", HOOK_TIMEOUT_SECS).to_string());
            a
        }
        Client::Codex => {
            // No sandbox: under `workspace-write` Codex mounts a worktree's git metadata
            // (`<repo>/.git/worktrees/<name>`) read-only, even with the repository's git
            // directory as an extra writable root, and runs the hook in the same sandbox,
            // so neither the agent nor the hook could commit the task's work. The driver
            // checks the user's checkout after every session instead.
            let mut a = s(&["exec", "--json", "--sandbox", "danger-full-access", "-C"]);
            a.push(path(worktree));
            a.extend(["-c".into(), codex_hook_override(), "-".into()]);
            a
        }
        Client::Gemini => {
            // Headless Gemini offers no shell tool below `yolo`: the agent could not run
            // its tests or commit.
            let mut a = s(&[
                "-p",
                "",
                "--output-format",
                "json",
                "--approval-mode",
                "yolo",
                "--include-directories",
            ]);
            a.push(path(gate));
            a
        }
    }
}

/// Readies a lane's agent: the hook configuration it needs written, and the hook checked
/// to be armed. An error says why the lane must not start.
pub fn prepare(
    agent: Client,
    run: &RunSettings,
    worktree: &Path,
    gate: &Path,
) -> Result<Launch, String> {
    let program = program(agent, run.agent.as_deref());
    let mut env = Vec::new();
    match agent {
        Client::Claude => claude::check()?,
        Client::Codex => codex::arm(&program, worktree, run)?,
        Client::Gemini => {
            let settings = gate.join(GEMINI_SETTINGS);
            gemini::write_settings(&settings, run.gemini_system_settings.as_deref())?;
            gemini::check_dirs(&settings)?;
            // Headless sessions trust their workspace by this variable, the CLI's documented
            // way; without trust Gemini loads no hook.
            env.push(("GEMINI_CLI_TRUST_WORKSPACE", OsString::from("true")));
            env.push(("GEMINI_CLI_SYSTEM_SETTINGS_PATH", settings.into_os_string()));
        }
    }
    Ok(Launch {
        args: arguments(agent, worktree, gate),
        program,
        env,
    })
}

mod claude {
    use serde_json::Value;

    /// Managed settings an administrator put in place; a user cannot override them.
    const MANAGED: [&str; 2] = [
        "/etc/claude-code/managed-settings.json",
        "/Library/Application Support/ClaudeCode/managed-settings.json",
    ];

    /// Refuses when a managed policy turns hooks given by a session off.
    pub(super) fn check() -> Result<(), String> {
        for path in MANAGED {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let Ok(v) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            for key in ["disableAllHooks", "allowManagedHooksOnly"] {
                if v[key] == Value::Bool(true) {
                    return Err(format!(
                        "Claude Code would not run the run's hook: {path} sets {key}; a lane is never started \
                         without its hook (ask whoever manages that file, or use --agent codex|gemini)"
                    ));
                }
            }
        }
        Ok(())
    }
}

pub(crate) mod codex {
    use super::{RunSettings, codex_hook_override};
    use serde::Deserialize;
    use std::io::{BufRead, BufReader, Write};
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::sync::Mutex;
    use std::time::Duration;

    /// How long `codex app-server` may take to list the hooks.
    const LIST_TIMEOUT: Duration = Duration::from_secs(60);

    /// One hook as `hooks/list` reports it.
    #[derive(Debug, Clone, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct Listed {
        pub key: String,
        #[serde(default)]
        pub command: Option<String>,
        #[serde(default)]
        pub source: Option<String>,
        pub current_hash: String,
        pub trust_status: String,
        #[serde(default = "yes")]
        pub enabled: bool,
    }

    fn yes() -> bool {
        true
    }

    /// Lanes start on threads of their own; one of them edits config.toml at a time.
    static CONFIG: Mutex<()> = Mutex::new(());

    /// Makes the run's hook trusted in Codex and proves it: Codex lists it for this
    /// worktree as enabled and trusted, or the lane is refused.
    pub(super) fn arm(program: &Path, worktree: &Path, run: &RunSettings) -> Result<(), String> {
        let _one = CONFIG.lock().unwrap_or_else(|e| e.into_inner());
        let hook = ours(&list(program, worktree)?)?;
        if hook.trust_status == "trusted" {
            return Ok(());
        }
        let config = config_path(run)?;
        trust(&config, &hook.key, &hook.current_hash)?;
        let again = ours(&list(program, worktree)?)?;
        if again.trust_status == "trusted" {
            Ok(())
        } else {
            Err(format!(
                "Codex does not trust the run's hook ({}) after its hash was recorded in {}; a lane is never \
                 started without its hook",
                again.trust_status,
                config.display()
            ))
        }
    }

    /// The run's own hook among those listed.
    fn ours(hooks: &[Listed]) -> Result<Listed, String> {
        let command = super::hook_command();
        let hook = hooks
            .iter()
            .find(|h| {
                h.source.as_deref() == Some("sessionFlags") && h.command.as_deref() == Some(&command)
            })
            .ok_or_else(|| {
                "Codex does not list the run's Stop hook (are hooks turned off? `codex features list` \
                 shows `hooks`); a lane is never started without its hook"
                    .to_string()
            })?;
        if !hook.enabled {
            return Err(
                "Codex lists the run's Stop hook as disabled; a lane is never started without its hook".into(),
            );
        }
        Ok(hook.clone())
    }

    /// `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
    fn config_path(run: &RunSettings) -> Result<PathBuf, String> {
        if let Some(home) = &run.codex_home {
            return Ok(home.join("config.toml"));
        }
        let home = run
            .home
            .as_ref()
            .ok_or("neither CODEX_HOME nor HOME is set: Codex's config.toml cannot be found")?;
        Ok(home.join(".codex/config.toml"))
    }

    /// The hooks Codex would run in `worktree` with the run's hook given: `codex app-server`'s
    /// `hooks/list`, the list its /hooks screen shows.
    pub(crate) fn list(program: &Path, worktree: &Path) -> Result<Vec<Listed>, String> {
        let fail = |e: String| {
            format!(
                "cannot ask Codex ({}) for its hooks: {e}",
                program.display()
            )
        };
        let mut child = Command::new(program)
            .args(["-c", &codex_hook_override(), "app-server"])
            .current_dir(worktree)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| fail(e.to_string()))?;
        let requests = [
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                               "params": {"clientInfo": {"name": "taskie", "version": env!("CARGO_PKG_VERSION")}}}),
            serde_json::json!({"jsonrpc": "2.0", "method": "initialized"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list",
                               "params": {"cwds": [worktree]}}),
        ];
        let mut stdin = child.stdin.take().ok_or_else(|| fail("no stdin".into()))?;
        for r in &requests {
            let _ = writeln!(stdin, "{r}");
        }
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| fail("no stdout".into()))?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
                if v["id"] == 2 {
                    let _ = tx.send(v);
                    return;
                }
            }
        });
        let answer = rx.recv_timeout(LIST_TIMEOUT);
        drop(stdin);
        let _ = child.kill();
        let _ = child.wait();
        let answer = answer.map_err(|_| {
            fail(format!(
                "no answer to hooks/list within {} s",
                LIST_TIMEOUT.as_secs()
            ))
        })?;
        if let Some(e) = answer.get("error") {
            return Err(fail(format!("hooks/list failed: {e}")));
        }
        let hooks = answer["result"]["data"][0]["hooks"].clone();
        serde_json::from_value(hooks).map_err(|e| fail(format!("an answer of another shape: {e}")))
    }

    /// Records `hash` as the trusted hash of hook `key` in `config`, as Codex's /hooks
    /// screen does: everything else in the file kept as it was.
    pub(crate) fn trust(config: &Path, key: &str, hash: &str) -> Result<(), String> {
        let text = match std::fs::read_to_string(config) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", config.display())),
        };
        let updated = with_trust(&text, key, hash).map_err(|e| {
            format!(
                "{} is not valid TOML ({e}); fix it, then run again",
                config.display()
            )
        })?;
        if let Some(dir) = config.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        crate::store::atomic::write_durable(config, updated.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", config.display()))
    }

    /// `text` with `[hooks.state."<key>"] trusted_hash = "<hash>"`.
    pub(crate) fn with_trust(text: &str, key: &str, hash: &str) -> Result<String, String> {
        let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
        let implicit = || {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        };
        let not_table = |name: &str| format!("`{name}` is not a table");
        let hooks = doc
            .entry("hooks")
            .or_insert_with(implicit)
            .as_table_like_mut()
            .ok_or_else(|| not_table("hooks"))?;
        let state = hooks
            .entry("state")
            .or_insert_with(implicit)
            .as_table_like_mut()
            .ok_or_else(|| not_table("hooks.state"))?;
        let entry = state
            .entry(key)
            .or_insert_with(toml_edit::table)
            .as_table_like_mut()
            .ok_or_else(|| not_table(&format!("hooks.state.\"{key}\"")))?;
        entry.insert("trusted_hash", toml_edit::value(hash));
        Ok(doc.to_string())
    }
}

pub(crate) mod gemini {
    use super::{HOOK_TIMEOUT_SECS, hooks_json};
    use serde_json::Value;
    use std::path::Path;

    /// Where Gemini reads its system settings, which this lane's file replaces: they are
    /// copied into it so an administrator's settings still hold.
    fn system_settings(var: Option<&Path>) -> std::path::PathBuf {
        var.map(Path::to_path_buf).unwrap_or_else(|| {
            if cfg!(target_os = "macos") {
                "/Library/Application Support/GeminiCli/settings.json".into()
            } else if cfg!(windows) {
                r"C:\ProgramData\gemini-cli\settings.json".into()
            } else {
                "/etc/gemini-cli/settings.json".into()
            }
        })
    }

    /// The system settings (if any) with the run's AfterAgent hook added; its timeout in
    /// milliseconds, as Gemini counts.
    pub(crate) fn settings(system: Option<&str>) -> Value {
        let mut v = system
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .filter(Value::is_object)
            .unwrap_or_else(|| serde_json::json!({}));
        let ours =
            hooks_json("AfterAgent", HOOK_TIMEOUT_SECS * 1000)["hooks"]["AfterAgent"][0].clone();
        if !v["hooks"].is_object() {
            v["hooks"] = serde_json::json!({});
        }
        match v["hooks"]["AfterAgent"].as_array_mut() {
            Some(list) => list.push(ours),
            None => v["hooks"]["AfterAgent"] = serde_json::json!([ours]),
        }
        v
    }

    /// `system_var`: `GEMINI_CLI_SYSTEM_SETTINGS_PATH`, from the run's settings.
    pub(super) fn write_settings(path: &Path, system_var: Option<&Path>) -> Result<(), String> {
        let system = std::fs::read_to_string(system_settings(system_var)).ok();
        let text = settings(system.as_deref()).to_string();
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Gemini ignores a settings file below a directory that its group or others may
    /// write to (it says so on its stderr, then runs without the hook).
    pub(super) fn check_dirs(settings: &Path) -> Result<(), String> {
        match open_to_others(settings) {
            None => Ok(()),
            Some(dir) => Err(format!(
                "Gemini CLI would skip the run's hook: it ignores settings below {}, which its group or \
                 others may write to; set XDG_DATA_HOME to a directory only you can write to (the run's \
                 worktrees and gates live under it), then run again",
                dir.display()
            )),
        }
    }

    /// The first directory above `file` that its group or others may write to.
    #[cfg(unix)]
    pub(crate) fn open_to_others(file: &Path) -> Option<std::path::PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let file = std::path::absolute(file).ok()?;
        file.ancestors()
            .skip(1)
            .find(|dir| std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o022 != 0))
            .map(Path::to_path_buf)
    }

    #[cfg(not(unix))]
    pub(crate) fn open_to_others(_file: &Path) -> Option<std::path::PathBuf> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_trust_is_added_to_a_config_without_losing_a_comment_or_writing_a_table_twice() {
        let text = "# mine\nmodel = \"o3\"\n\n[hooks.state.\"k\"]\ntrusted_hash = \"old\"\n";
        let out = codex::with_trust(text, "k", "sha256:new").unwrap();
        assert!(out.starts_with("# mine\nmodel = \"o3\"\n"), "{out}");
        assert_eq!(out.matches("[hooks.state.\"k\"]").count(), 1, "{out}");
        assert!(out.contains("trusted_hash = \"sha256:new\""), "{out}");
        assert!(!out.contains("old"), "{out}");
        let fresh = codex::with_trust("", "/<session-flags>/config.toml:stop:0:0", "h").unwrap();
        assert_eq!(
            fresh,
            "[hooks.state.\"/<session-flags>/config.toml:stop:0:0\"]\ntrusted_hash = \"h\"\n"
        );
        assert!(codex::with_trust("hooks = 1\n", "k", "h").is_err());
        assert!(codex::with_trust("a = [\n", "k", "h").is_err());
    }

    #[test]
    fn gemini_settings_keep_the_system_settings_and_count_the_timeout_in_milliseconds() {
        let system = r#"{"general":{"x":1},"hooks":{"AfterAgent":[{"hooks":[{"type":"command","command":"mine"}]}]}}"#;
        let v = gemini::settings(Some(system));
        assert_eq!(v["general"]["x"], 1);
        let list = v["hooks"]["AfterAgent"].as_array().unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1]["hooks"][0]["timeout"], 1_800_000);
        assert_eq!(list[1]["hooks"][0]["command"], hook_command());
        let alone = gemini::settings(None);
        assert_eq!(alone["hooks"]["AfterAgent"].as_array().unwrap().len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_gemini_settings_file_below_a_directory_others_may_write_to_is_found() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        std::fs::create_dir_all(open.join("gate")).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let file = open.join("gate/settings.json");
        assert_eq!(gemini::open_to_others(&file), Some(open.clone()));
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Above the temporary directory (private now), nothing open must remain; /tmp is.
        let above = gemini::open_to_others(&file);
        assert!(
            above.as_deref().is_none_or(|d| !d.starts_with(dir.path())),
            "{above:?}"
        );
    }

    #[test]
    fn each_agent_gets_its_headless_mode_its_hook_and_the_directories_it_writes() {
        let (wt, gate) = (Path::new("/w/task-1"), Path::new("/w/gate-1"));
        let claude = arguments(Client::Claude, wt, gate);
        assert_eq!(
            &claude[..5],
            [
                "-p",
                "--output-format",
                "json",
                "--permission-mode",
                "acceptEdits"
            ]
        );
        assert!(
            !claude
                .iter()
                .any(|a| a.contains("dangerously") || a == "bypassPermissions")
        );
        assert!(claude.windows(2).any(|w| w == ["--add-dir", "/w/gate-1"]));
        let codex = arguments(Client::Codex, wt, gate);
        assert!(codex.windows(2).any(|w| w == ["-C", "/w/task-1"]));
        assert!(
            codex
                .windows(2)
                .any(|w| w == ["--sandbox", "danger-full-access"])
        );
        assert!(!codex.iter().any(|a| a.contains("bypass")), "{codex:?}");
        assert_eq!(codex.last().map(String::as_str), Some("-"));
        let gemini = arguments(Client::Gemini, wt, gate);
        assert!(gemini.windows(2).any(|w| w == ["--approval-mode", "yolo"]));
        assert!(gemini.windows(2).any(|w| w == ["-p", ""]));
    }
}
