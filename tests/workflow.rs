//! What users install into Claude Code (SPEC §12–§15): the actions, the hook launcher,
//! the plugin manifests and the demo, checked against the real binaries so the
//! prompts cannot drift from the code.

use crate::support::{Fake, Project, due};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Every action of the issue, ground rules included. The plugin exposes each file in
/// actions/ as `/taskie:<name>`, so this is also the exact list of slash commands.
const ACTIONS: [&str; 18] = [
    "new-plan",
    "plan-review",
    "post-plan-review",
    "create-tasks",
    "tasks-review",
    "post-tasks-review",
    "next-task",
    "next-task-tdd",
    "complete-task",
    "complete-task-tdd",
    "continue-task",
    "code-review",
    "post-code-review",
    "all-code-review",
    "post-all-code-review",
    "continue-plan",
    "add-task",
    "ground-rules",
];

const REVIEWS: [&str; 4] = [
    "plan-review",
    "tasks-review",
    "code-review",
    "all-code-review",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn action(name: &str) -> String {
    read(&repo().join("actions").join(format!("{name}.md")))
}

fn json_file(rel: &str) -> Value {
    serde_json::from_str(&read(&repo().join(rel)))
        .unwrap_or_else(|e| panic!("{rel} is not valid JSON: {e}"))
}

// ---------------------------------------------------------------------------
// Frontmatter

/// A markdown file split at its YAML frontmatter.
struct Frontmatter {
    fields: Vec<(String, String)>,
    body: String,
}

impl Frontmatter {
    fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses the `---` block Claude Code reads: a flat mapping of scalar values. This is
/// a deliberately small subset of YAML; anything outside it is an error rather than a
/// guess, because a value YAML would read differently (an unquoted `[plan-id]` is a
/// list, a `: ` inside a plain value breaks the mapping) silently loses the hint.
fn frontmatter(text: &str) -> Result<Frontmatter, String> {
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("the file does not start with a `---` line".into());
    }
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut consumed = 4;
    let mut closed = false;
    for raw in lines.by_ref() {
        consumed += raw.len();
        let line = raw.trim_end();
        if line == "---" {
            closed = true;
            break;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| format!("not a `key: value` line: {line:?}"))?;
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
        {
            return Err(format!("bad key {key:?}"));
        }
        if !value.is_empty() && !value.starts_with(' ') {
            return Err(format!("no space after the colon of {key:?}"));
        }
        let value = yaml_scalar(value.trim()).map_err(|e| format!("{key}: {e}"))?;
        if fields.iter().any(|(k, _)| k == key) {
            return Err(format!("duplicate key {key:?}"));
        }
        fields.push((key.to_owned(), value));
    }
    if !closed {
        return Err("the frontmatter has no closing `---` line".into());
    }
    Ok(Frontmatter {
        fields,
        body: text[consumed.min(text.len())..].to_owned(),
    })
}

fn yaml_scalar(v: &str) -> Result<String, String> {
    if v.is_empty() {
        return Err("empty value (nested YAML is not expected here)".into());
    }
    if let Some(inner) = v.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    let rest: String = chars.collect();
                    return if rest.trim().is_empty() || rest.trim_start().starts_with('#') {
                        Ok(out)
                    } else {
                        Err(format!("text after the closing quote: {rest:?}"))
                    };
                }
                '\\' => match chars.next() {
                    Some('"') => out.push('"'),
                    Some('\\') => out.push('\\'),
                    Some('/') => out.push('/'),
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    other => return Err(format!("unsupported escape \\{other:?}")),
                },
                c => out.push(c),
            }
        }
        return Err("unterminated double-quoted value".into());
    }
    if let Some(inner) = v.strip_prefix('\'') {
        let Some(body) = inner.strip_suffix('\'') else {
            return Err("unterminated single-quoted value".into());
        };
        if body.replace("''", "").contains('\'') {
            return Err("a lone ' inside a single-quoted value".into());
        }
        return Ok(body.replace("''", "'"));
    }
    // A plain scalar: YAML gives these leading characters a meaning of their own.
    if v.starts_with(|c: char| "[]{},#&*!|>%@`".contains(c)) || v.starts_with("- ") {
        return Err(format!(
            "{v:?} needs quotes: YAML reads its first character specially"
        ));
    }
    if v.contains(": ") || v.contains(" #") {
        return Err(format!("{v:?} needs quotes: it contains `: ` or ` #`"));
    }
    Ok(v.to_owned())
}

#[test]
fn the_frontmatter_parser_accepts_quoted_scalars_and_rejects_what_yaml_reads_otherwise() {
    let fm =
        frontmatter("---\ndescription: \"Say \\\"hi\\\"\"\nargument-hint: '[id]'\n---\nBody\n")
            .unwrap();
    assert_eq!(fm.get("description"), Some("Say \"hi\""));
    assert_eq!(fm.get("argument-hint"), Some("[id]"));
    assert_eq!(fm.body, "Body\n");
    for bad in [
        "no frontmatter\n",
        "---\ndescription: x\n",
        "---\nargument-hint: [plan-id]\n---\n",
        "---\ndescription: a: b\n---\n",
        "---\ndescription: \"open\n---\n",
        "---\ndescription: x\ndescription: y\n---\n",
        "---\njust words\n---\n",
    ] {
        assert!(frontmatter(bad).is_err(), "{bad:?} must be rejected");
    }
}

#[test]
fn every_action_exists_with_a_description_and_nothing_else_is_in_actions() {
    let mut found: Vec<String> = std::fs::read_dir(repo().join("actions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    let mut expected: Vec<String> = ACTIONS.iter().map(|a| format!("{a}.md")).collect();
    expected.sort();
    // Any extra file would become a slash command nobody reviewed.
    assert_eq!(found, expected, "actions/ must hold exactly the actions");
    for name in ACTIONS {
        let fm = frontmatter(&action(name)).unwrap_or_else(|e| panic!("actions/{name}.md: {e}"));
        let description = fm.get("description").unwrap_or_default();
        assert!(
            description.trim().len() >= 20,
            "actions/{name}.md: the description must say what the action does: {description:?}"
        );
        assert!(
            fm.body.trim_start().starts_with("# "),
            "actions/{name}.md: the body starts with a heading"
        );
    }
}

#[test]
fn actions_that_take_an_argument_have_an_argument_hint() {
    for name in ACTIONS {
        let fm = frontmatter(&action(name)).unwrap();
        // Ground rules are read, not run with arguments; every other action takes at
        // least an optional plan id, and the ones that read $ARGUMENTS certainly do.
        if name == "ground-rules" {
            assert!(!fm.body.contains("$ARGUMENTS"));
            continue;
        }
        let hint = fm
            .get("argument-hint")
            .unwrap_or_else(|| panic!("actions/{name}.md has no argument-hint"));
        assert!(
            !hint.trim().is_empty(),
            "actions/{name}.md: empty argument-hint"
        );
        // Every action but new-plan (which chooses the id) can be pointed at one plan
        // of several.
        assert!(
            name == "new-plan" || hint.contains("[plan-id]"),
            "actions/{name}.md: {hint}"
        );
    }
}

#[test]
fn review_actions_hold_no_placeholder_that_would_reach_the_reviewer_unreplaced() {
    for name in REVIEWS {
        let body = frontmatter(&action(name)).unwrap().body;
        // The hook embeds this text verbatim; Claude Code's $ARGUMENTS is never
        // substituted there, so the reviewer would see it literally.
        assert!(!body.contains("$ARGUMENTS"), "actions/{name}.md");
        assert!(!body.contains("{{"), "actions/{name}.md");
        assert!(
            body.contains("`VERDICT: PASS`") && body.contains("`VERDICT: FAIL`"),
            "actions/{name}.md must state both verdict lines"
        );
        assert!(
            body.contains("exact file path you were given"),
            "actions/{name}.md must defer to the path in the hook's context block"
        );
    }
}

// ---------------------------------------------------------------------------
// Plugin manifest, hooks.json and the launcher

#[test]
fn plugin_manifest_names_the_actions_and_carries_the_crate_version_but_no_hooks_entry() {
    let plugin = json_file("dist/claude/.claude-plugin/plugin.json");
    assert_eq!(plugin["name"], "taskie");
    assert_eq!(plugin["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        plugin["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );
    let commands = plugin["commands"].as_str().expect("commands is a path");
    assert_eq!(commands, "./actions");
    let root = repo().join("dist/claude");
    for a in ACTIONS {
        assert_eq!(
            std::fs::read_to_string(root.join(commands).join(format!("{a}.md"))).unwrap(),
            action(a),
            "{a}: the plugin's copy is the action"
        );
    }
    // No commands/ folder beside the manifest's "commands" (Claude Code notes it as ignored).
    assert!(!root.join("commands").exists());
    // hooks/hooks.json loads by itself; naming it in the manifest is reported as a
    // duplicate by Claude Code (SPEC §15).
    assert!(plugin.get("hooks").is_none(), "{plugin}");
    assert!(root.join("hooks/hooks.json").is_file());
}

#[test]
fn marketplace_lists_the_claude_plugin_directory_as_the_taskie_plugin_at_the_crate_version() {
    let market = json_file(".claude-plugin/marketplace.json");
    assert_eq!(market["name"], "taskie");
    assert!(
        market["owner"]["name"].is_string(),
        "owner.name is required"
    );
    let plugins = market["plugins"].as_array().expect("plugins list");
    assert_eq!(plugins.len(), 1);
    let p = &plugins[0];
    assert_eq!(p["name"], "taskie");
    assert_eq!(p["version"], env!("CARGO_PKG_VERSION"));
    // The plugin is a directory of its own, so installing it copies no build output.
    let source = p["source"].as_str().expect("source is a relative path");
    assert_eq!(source, "./dist/claude");
    assert!(
        repo()
            .join(source)
            .join(".claude-plugin/plugin.json")
            .is_file()
    );
    if let Some(v) = market["metadata"]["version"].as_str() {
        assert_eq!(v, env!("CARGO_PKG_VERSION"));
    }
}

/// The single hook entry of a client's hooks.json (`dist/<client>/hooks/hooks.json`),
/// which hooks only `event`.
fn client_hook(client: &str, event: &str) -> Value {
    let hooks = json_file(&format!("dist/{client}/hooks/hooks.json"));
    let events: Vec<&String> = hooks["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(
        events,
        [event],
        "{client}: Taskie hooks only the client's stop event (SubagentStop would only be \
         allowed anyway), and no other client's event (each warns about those)"
    );
    let groups = hooks["hooks"][event].as_array().expect("a list");
    assert_eq!(groups.len(), 1, "one matcher group");
    let inner = groups[0]["hooks"].as_array().expect("its hooks");
    assert_eq!(inner.len(), 1, "one hook");
    inner[0].clone()
}

fn stop_hook() -> Value {
    client_hook("claude", "Stop")
}

#[test]
fn hooks_json_runs_the_launcher_as_a_program_with_a_1800_second_timeout() {
    let h = stop_hook();
    assert_eq!(h["type"], "command");
    assert_eq!(h["timeout"], 1800);
    assert!(h["statusMessage"].as_str().is_some_and(|m| !m.is_empty()));
    // Exec form: Claude Code starts the launcher itself, with no shell in between, so
    // the user's shell cannot matter (docs/hosts.md).
    assert_eq!(h["args"], json!([]));
    let command = h["command"].as_str().unwrap();
    let path = command.replace("${CLAUDE_PLUGIN_ROOT}", "dist/claude");
    let meta = std::fs::metadata(repo().join(&path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    use std::os::unix::fs::PermissionsExt;
    assert!(
        meta.permissions().mode() & 0o111 != 0,
        "{path} is executable"
    );
}

/// The clients and how each runs the command its hooks.json registers.
const CLIENTS: [(&str, &str, &str); 3] = [
    // Claude Code 2.1.330: exec form, the root substituted in `command`, no shell.
    ("claude", "Stop", "${CLAUDE_PLUGIN_ROOT}"),
    // Codex CLI 0.169.0: `${PLUGIN_ROOT}` substituted in the text, then `$SHELL -lc`.
    ("codex", "Stop", "${PLUGIN_ROOT}"),
    // Gemini CLI 0.61.0: `${extensionPath}` substituted, then `bash -c`.
    ("gemini", "AfterAgent", "${extensionPath}"),
];

/// A copy of what a checkout holds for the launcher, in a temporary directory whose name
/// has a space (so no target/release build and no quoting accident can help it): the
/// launcher in `hooks/`, each client's plugin directory in `dist/<client>/`, and a
/// `Cargo.toml` as a checkout has.
struct PluginCopy {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    bin: PathBuf,
}

impl PluginCopy {
    fn new() -> PluginCopy {
        let tmp = crate::support::tempdir();
        let root = tmp.path().join("taskie plugin");
        crate::support::copy_tree(&repo().join("hooks"), &root.join("hooks"));
        for (client, _, _) in CLIENTS {
            crate::support::copy_tree(
                &repo().join("dist").join(client).join("hooks"),
                &root.join("dist").join(client).join("hooks"),
            );
        }
        std::fs::write(root.join("Cargo.toml"), "[package]\nname = \"taskie\"\n").unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        PluginCopy {
            _tmp: tmp,
            root,
            bin,
        }
    }

    /// Claude Code's plugin directory in this copy.
    fn claude(&self) -> PathBuf {
        self.root.join("dist/claude")
    }

    /// Runs the Claude plugin's registered command the way Claude Code does: as a
    /// program (exec form), with CLAUDE_PLUGIN_ROOT set and substituted, and PATH limited
    /// to the system directories plus this copy's own bin dir.
    fn run(&self, stdin: &str, env: &[(&str, &str)]) -> crate::support::Run {
        for dir in ["/usr/bin", "/bin"] {
            assert!(
                !Path::new(dir).join("taskie-hook").exists(),
                "{dir}/taskie-hook exists, so this test cannot hide the binary"
            );
        }
        let h = stop_hook();
        let root = self.claude();
        let program = h["command"]
            .as_str()
            .unwrap()
            .replace("${CLAUDE_PLUGIN_ROOT}", root.to_str().unwrap());
        let mut cmd = Command::new(program);
        cmd.args(
            h["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap()),
        )
        .env("CLAUDE_PLUGIN_ROOT", &root);
        self.launch(cmd, stdin, env)
    }

    /// Runs the launcher of the checkout as a program, the way a hook entry written by
    /// hand names it: no CLAUDE_PLUGIN_ROOT, and a TASKIE_PLUGIN_ROOT inherited from
    /// elsewhere.
    fn run_program(&self, stdin: &str, env: &[(&str, &str)]) -> crate::support::Run {
        let mut cmd = Command::new(self.root.join("hooks/taskie-stop-hook"));
        cmd.env("TASKIE_PLUGIN_ROOT", "/nonexistent/elsewhere");
        self.launch(cmd, stdin, env)
    }

    /// `cmd` with only the given environment, this copy's bin dir and the system ones on
    /// PATH, run beside the plugin with `stdin` written to it.
    fn launch(&self, mut cmd: Command, stdin: &str, env: &[(&str, &str)]) -> crate::support::Run {
        let mut keep: Vec<(std::ffi::OsString, std::ffi::OsString)> = cmd
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
            .collect();
        keep.extend(env.iter().map(|(k, v)| ((*k).into(), (*v).into())));
        cmd.env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .envs(keep)
            .current_dir(self.root.parent().unwrap())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        {
            use std::io::Write;
            let mut stdin_pipe = child.stdin.take().unwrap();
            // The launcher may exit without reading; a closed pipe is fine.
            let _ = stdin_pipe.write_all(stdin.as_bytes());
        }
        child.wait_with_output().unwrap().into()
    }

    /// Gives the Claude plugin of the copy a manifest of version `version`.
    fn set_version(&self, version: &str) {
        for root in [self.claude(), self.root.clone()] {
            std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
            std::fs::write(
                root.join(".claude-plugin/plugin.json"),
                format!(r#"{{"name": "taskie", "version": "{version}"}}"#),
            )
            .unwrap();
        }
    }

    fn link_hook_into(&self, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_taskie-hook"), dir.join("taskie-hook"))
            .unwrap();
    }
}

/// The shells a client may run a hook command through: Codex uses the user's login shell
/// (`$SHELL -lc`), so any of these. Each must be installed; none is skipped.
const SHELLS: [&str; 5] = ["sh", "dash", "bash", "zsh", "fish"];

/// Every client's registered command, run the way that client runs it and, for those
/// that go through a shell, through each of sh, dash, bash, zsh and fish as a login shell
/// (`$SHELL -lc`, as Codex does): each time the launcher finds taskie-hook (in npm's
/// `~/.npm-global`, since a login shell's profile resets PATH: its layout makes the
/// launcher try a glob that matches nothing), the review runs and the block is the one
/// that client reads.
#[test]
fn every_clients_registered_command_runs_the_review_under_sh_dash_bash_zsh_and_fish() {
    let plugin = PluginCopy::new();
    let home = crate::support::tempdir();
    // npm's layout: bin/taskie-hook links to the main package's script (here the binary
    // itself), and no platform package is beside it.
    let npm = home.path().join(".npm-global");
    plugin.link_hook_into(&npm.join("lib/node_modules/taskie/bin"));
    std::fs::rename(
        npm.join("lib/node_modules/taskie/bin/taskie-hook"),
        npm.join("lib/node_modules/taskie/bin/taskie-hook.js"),
    )
    .unwrap();
    std::fs::create_dir_all(npm.join("bin")).unwrap();
    std::os::unix::fs::symlink(
        "../lib/node_modules/taskie/bin/taskie-hook.js",
        npm.join("bin/taskie-hook"),
    )
    .unwrap();
    for (client, event, placeholder) in CLIENTS {
        let h = client_hook(client, event);
        let root = plugin.root.join("dist").join(client);
        let command = h["command"]
            .as_str()
            .unwrap()
            .replace(placeholder, root.to_str().unwrap());
        let shells: Vec<Option<&str>> = if h.get("args").is_some() {
            vec![None]
        } else {
            SHELLS.iter().copied().map(Some).collect()
        };
        for shell in shells {
            let p = Project::new().plan("p").state(due("plan-review"));
            let mut stop = json!({"hook_event_name": event, "cwd": p.root(), "session_id": "s"});
            if client == "codex" {
                stop["turn_id"] = json!("t");
                stop["model"] = json!("gpt-5-codex");
            }
            let cmd = match shell {
                None => Command::new(&command),
                Some(name) => {
                    let path = crate::support::shell(name);
                    let mut c = Command::new(&path);
                    c.arg("-lc").arg(&command).env("SHELL", &path);
                    c
                }
            };
            let reviewer = p.reviewer_path();
            let run = plugin.launch(
                cmd,
                &stop.to_string(),
                &[
                    ("HOME", home.path().to_str().unwrap()),
                    ("TASKIE_REVIEWER", reviewer.to_str().unwrap()),
                ],
            );
            let what = format!("{client} through {}", shell.unwrap_or("no shell"));
            assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
            // A shell that can source the launcher did, silently (zsh's own rules aborted
            // on the npm layout's glob: "no matches found"); fish says why it cannot,
            // then starts it with sh.
            if shell != Some("fish") {
                assert_eq!(run.stderr, "", "{what}");
            }
            assert!(run.is_block(), "{what}: {} {}", run.stdout, run.stderr);
            assert_eq!(p.reviewer_calls(), 1, "{what}");
            let answer = run.answer();
            if client == "claude" {
                assert!(
                    answer.get("hookSpecificOutput").is_some(),
                    "{what}: {answer}"
                );
            } else {
                assert_eq!(answer["decision"], "block", "{what}: {answer}");
                // Told where the plugin is: the block names its copy of the action.
                assert!(
                    answer["reason"]
                        .as_str()
                        .unwrap()
                        .contains(root.join("actions/post-plan-review.md").to_str().unwrap()),
                    "{what}: {answer}"
                );
            }
        }
    }
}

#[test]
fn the_launcher_without_taskie_hook_allows_with_the_install_command_and_exits_zero() {
    let plugin = PluginCopy::new();
    let run = plugin.run(r#"{"hook_event_name":"Stop"}"#, &[]);
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert_eq!(
        run.stdout.lines().count(),
        1,
        "exactly one line: {}",
        run.stdout
    );
    let answer: Value = serde_json::from_str(run.stdout.trim()).expect("one JSON object");
    let obj = answer.as_object().expect("an object");
    assert_eq!(
        obj.len(),
        1,
        "only systemMessage, never a decision: {answer}"
    );
    let msg = answer["systemMessage"].as_str().unwrap();
    // The path has a space, so it must come quoted for a shell.
    // The launcher names the physical directory (`cd -P`), so compare with that.
    let quoted = format!("'{}'", plugin.root.canonicalize().unwrap().display());
    assert!(
        msg.contains(&format!("cargo install --locked --path {quoted}")),
        "{msg}"
    );
    // A client's copy of the plugin (no checkout around it) names no directory that
    // holds no sources.
    std::fs::remove_file(plugin.root.join("Cargo.toml")).unwrap();
    let msg = plugin.run(r#"{"hook_event_name":"Stop"}"#, &[]).message();
    assert!(
        msg.contains("cargo install --locked --path <a clone of the Taskie repository>"),
        "{msg}"
    );
}

#[test]
fn the_launcher_prints_nothing_under_the_recursion_guard() {
    let plugin = PluginCopy::new();
    let run = plugin.run(
        r#"{"hook_event_name":"Stop"}"#,
        &[("TASKIE_HOOK_SKIP", "1")],
    );
    assert_eq!(run.code, Some(0));
    assert_eq!(run.stdout, "");
    // Also when the binary exists: the guard is checked before anything runs.
    plugin.link_hook_into(&plugin.bin);
    let run = plugin.run("not json", &[("TASKIE_HOOK_SKIP", "1")]);
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), ""));
}

#[test]
fn the_launcher_runs_taskie_hook_from_path_with_the_event_on_stdin() {
    let plugin = PluginCopy::new();
    plugin.link_hook_into(&plugin.bin);
    // Malformed input gets taskie-hook's own answer, which proves stdin reached it.
    let run = plugin.run("{not json", &[]);
    assert_eq!(run.code, Some(0));
    assert!(run.message().contains("not JSON"), "{}", run.stdout);
}

#[test]
fn under_git_bash_on_windows_the_launcher_runs_the_npm_package_s_exe_never_npm_s_node_shim() {
    let plugin = PluginCopy::new();
    let appdata = crate::support::tempdir();
    // npm on Windows: %APPDATA%\npm on PATH with a sh shim `taskie-hook` (it would start
    // Node), the package's taskie-hook.exe under node_modules beside it.
    let npm = appdata.path().join("npm");
    crate::support::write_executable(
        &plugin.bin.join("taskie-hook"),
        "#!/bin/sh\necho '{\"systemMessage\":\"npm shim ran\"}'\n",
    );
    let exe_dir = npm.join("node_modules/taskie/node_modules/taskie-win32-x64/bin");
    std::fs::create_dir_all(&exe_dir).unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_taskie-hook"),
        exe_dir.join("taskie-hook.exe"),
    )
    .unwrap();
    let run = plugin.run(
        "{not json",
        &[
            ("OS", "Windows_NT"),
            ("APPDATA", appdata.path().to_str().unwrap()),
        ],
    );
    assert_eq!(run.code, Some(0));
    assert!(run.message().contains("not JSON"), "{}", run.stdout);
}

#[test]
fn the_launcher_falls_back_to_the_checkouts_own_release_build() {
    let plugin = PluginCopy::new();
    plugin.link_hook_into(&plugin.root.join("target/release"));
    let run = plugin.run("{not json", &[]);
    assert_eq!(run.code, Some(0));
    assert!(run.message().contains("not JSON"), "{}", run.stdout);
}

#[test]
fn the_launcher_runs_a_real_review_through_the_plugin_copy() {
    let plugin = PluginCopy::new();
    plugin.link_hook_into(&plugin.bin);
    let p = Project::new().plan("p").state(due("plan-review"));
    let event = json!({"hook_event_name": "Stop", "cwd": p.root(), "stop_hook_active": false});
    let reviewer = p.reviewer_path();
    let run = plugin.run(
        &event.to_string(),
        &[("TASKIE_REVIEWER", reviewer.to_str().unwrap())],
    );
    assert!(run.is_block(), "{}", run.stdout);
    assert_eq!(p.reviewer_calls(), 1);
    assert_eq!(p.state_json()["next_phase"], "post-plan-review");
}

/// The launcher is one shell and one exec: with a plugin/binary version mismatch, a
/// notice already given in this session and a PATH holding nothing but taskie-hook (no
/// `cat`, no `sed`), the event still reaches taskie-hook, the review runs, and no copy of
/// stdin is left anywhere. (The launcher used to copy stdin with `cat` in this case.)
#[test]
fn the_launcher_hands_the_event_over_whatever_the_version_and_path() {
    let plugin = PluginCopy::new();
    plugin.set_version("0.0.1-other");
    plugin.link_hook_into(&plugin.bin);
    let cache = crate::support::tempdir();
    let notices = cache.path().join("taskie/notices");
    std::fs::create_dir_all(&notices).unwrap();
    let marker = format!("s-1-{}-0.0.1-other", env!("CARGO_PKG_VERSION"));
    std::fs::write(notices.join(&marker), "").unwrap();

    // The fake reviewer needs the usual tools, which the stop's PATH lacks.
    let with_path = |p: &Project| {
        let script = std::fs::read_to_string(p.reviewer_path()).unwrap();
        let (shebang, rest) = script.split_once('\n').unwrap();
        std::fs::write(
            p.reviewer_path(),
            format!("{shebang}\nPATH=/usr/bin:/bin; export PATH\n{rest}"),
        )
        .unwrap();
    };
    // A stop of session `session` in a new project whose plan review is due.
    let review_stop = |session: &str| {
        let p = Project::new().plan("p").state(due("plan-review"));
        with_path(&p);
        let event = json!({"hook_event_name": "Stop", "cwd": p.root(), "session_id": session});
        let reviewer = p.reviewer_path();
        let env = [
            ("TASKIE_REVIEWER", reviewer.to_str().unwrap()),
            ("XDG_CACHE_HOME", cache.path().to_str().unwrap()),
            ("PATH", plugin.bin.to_str().unwrap()),
        ];
        let run = plugin.run(&event.to_string(), &env);
        (p, run)
    };
    let (p, run) = review_stop("s-1");
    assert!(
        run.is_block(),
        "the review ran: {} {}",
        run.stdout,
        run.stderr
    );
    assert_eq!(p.reviewer_calls(), 1);
    assert!(
        run.answer().get("systemMessage").is_none(),
        "the notice was given in this session already: {}",
        run.stdout
    );
    let left: Vec<_> = std::fs::read_dir(cache.path().join("taskie"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["notices"], "no copy of stdin anywhere");

    // A new session is told, by taskie-hook, in its one answer.
    let (_p, run) = review_stop("s-2");
    assert!(run.is_block());
    assert!(
        run.answer()["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("does not match the Taskie plugin 0.0.1-other")),
        "{}",
        run.stdout
    );
}

/// Run as a program (a hook entry that names the launcher's path), the launcher finds
/// the plugin from its own path: the version notice names the copy's plugin.json, and
/// the fallback build is the copy's own.
#[test]
fn the_launcher_run_as_a_program_finds_the_plugin_from_its_own_path() {
    let plugin = PluginCopy::new();
    plugin.set_version("0.0.2-copy");
    plugin.link_hook_into(&plugin.root.join("target/release"));
    let cache = crate::support::tempdir();
    let event = json!({"hook_event_name": "Stop", "cwd": cache.path(), "session_id": "s-9"});
    let run = plugin.run_program(
        &event.to_string(),
        &[("XDG_CACHE_HOME", cache.path().to_str().unwrap())],
    );
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert!(
        run.answer()["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("does not match the Taskie plugin 0.0.2-copy")),
        "{} {}",
        run.stdout,
        run.stderr
    );
}

// ---------------------------------------------------------------------------
// The reviewer prompt

/// A project where review `r` is due, with everything its preconditions need.
fn project_due(r: &str) -> Project {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "pending")]);
    let mut state = due(r);
    if r == "code-review" {
        state["current_task"] = json!(1);
    }
    p.state(state)
}

fn review_file(r: &str) -> &'static str {
    match r {
        "plan-review" => "plan-review-1.md",
        "tasks-review" => "tasks-review-1.md",
        "code-review" => "task-1-code-review-1.md",
        "all-code-review" => "all-code-review-1.md",
        _ => unreachable!(),
    }
}

#[test]
fn each_reviewer_prompt_embeds_its_action_then_names_the_review_file_and_the_verdict() {
    for r in REVIEWS {
        let p = project_due(r).reviewer(&Fake::fail());
        let reason = p.stop().reason();
        let prompt = &p.reviewer_prompt();

        let whole = frontmatter(&action(r)).unwrap().body;
        let whole = whole.trim_start_matches('\n').trim_end();
        // The hook's reviewer is not given the section for a person running it by hand.
        let body = whole
            .split("\n## Standalone use")
            .next()
            .unwrap()
            .trim_end();
        assert!(
            prompt.starts_with(body),
            "{r}: the prompt must begin with the text of actions/{r}.md (without frontmatter)"
        );
        assert!(!prompt.contains("## Standalone use"), "{r}");
        assert!(
            !prompt.contains("\ndescription: "),
            "{r}: frontmatter leaked"
        );
        assert_eq!(
            taskie::reviewer::prompt::action_text(
                taskie::model::phase::Review::from_name(r).unwrap()
            )
            .trim(),
            whole.trim(),
            "{r}: the binary embeds the current file"
        );

        let context = &prompt[body.len()..];
        let path = format!(".taskie/plans/p/{}", review_file(r));
        let line = format!("- Write your review to exactly this file, creating it: {path}\n");
        assert!(
            context.contains(&line),
            "{r}: no review path line in {context}"
        );
        assert!(
            context.contains("`VERDICT: PASS`")
                && context.contains("`VERDICT: FAIL`")
                && context.contains("structured output"),
            "{r}: no verdict instruction in {context}"
        );
        assert!(context.contains("- Plan id: p\n"), "{r}");
        assert!(context.contains("never edit state.json"), "{r}");
        assert!(
            p.exists(review_file(r)),
            "{r}: the fake wrote where it was told"
        );
        assert!(
            reason.contains(&path),
            "{r}: the block names the review: {reason}"
        );
        if r == "code-review" || r == "all-code-review" {
            assert!(
                context.contains("`git log`") && context.contains("`git diff`"),
                "{r}: the reviewer is sent to the real source changes: {context}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// `taskie …` command lines in the actions

/// One `taskie …` command found in a markdown file.
#[derive(Debug)]
struct Found {
    line: usize,
    text: String,
}

/// The `taskie …` commands of a markdown file: lines of fenced code blocks, and inline
/// code spans (which may wrap onto the next line), that start with `taskie `.
fn taskie_commands(text: &str) -> Vec<Found> {
    let mut found = Vec::new();
    // Prose with the fenced blocks blanked out, so spans are searched only in prose
    // while byte offsets still map to the right line numbers.
    let mut prose = String::with_capacity(text.len());
    let mut fence: Option<&str> = None;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let t = line.trim();
        let marker = ["```", "~~~"].into_iter().find(|m| t.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if m == open && t.trim_start_matches(m).is_empty() => {
                fence = None
            }
            (Some(_), _) => {
                if t.starts_with("taskie ") {
                    found.push(Found {
                        line: i + 1,
                        text: t.to_owned(),
                    });
                }
            }
            (None, None) => {
                prose.push_str(line);
                continue;
            }
        }
        prose.push_str(&" ".repeat(line.trim_end_matches('\n').len()));
        if line.ends_with('\n') {
            prose.push('\n');
        }
    }
    let bytes = prose.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
        let start = i + run;
        // A span closes with a run of the same length, within the same paragraph.
        let limit = prose[start..]
            .find("\n\n")
            .map_or(prose.len(), |n| start + n);
        let mut j = start;
        let mut close = None;
        while j < limit {
            if bytes[j] == b'`' {
                let k = bytes[j..limit].iter().take_while(|b| **b == b'`').count();
                if k == run {
                    close = Some(j);
                    break;
                }
                j += k;
            } else {
                j += 1;
            }
        }
        let Some(end) = close else {
            i = start;
            continue;
        };
        let span = prose[start..end].replace('\n', " ");
        let span = span.trim();
        if span.starts_with("taskie ") {
            found.push(Found {
                line: prose[..i].matches('\n').count() + 1,
                text: span.split_whitespace().collect::<Vec<_>>().join(" "),
            });
        }
        i = end + run;
    }
    found.sort_by_key(|f| f.line);
    found
}

/// Replaces the placeholders the actions use with sample values; an unknown one is an
/// error so a new placeholder gets a deliberate sample instead of a silent pass.
fn substitute(cmd: &str) -> Result<String, String> {
    let out = cmd
        .replace("<plan-id>", "demo")
        .replace("<N>", "3")
        .replace("<n>", "3");
    if out.contains('<') || out.contains('>') {
        return Err(format!("unknown placeholder in `{cmd}`"));
    }
    Ok(out)
}

/// Splits a command line like a shell would for the simple quoting the actions use.
fn shell_words(cmd: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err(format!("unclosed ' in `{cmd}`")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => cur.extend(chars.next()),
                        Some(c) => cur.push(c),
                        None => return Err(format!("unclosed \" in `{cmd}`")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            ';' | '|' | '&' | '$' | '`' | '(' | ')' => {
                return Err(format!(
                    "shell syntax {c:?} in `{cmd}`: write one plain command"
                ));
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Parses one command with the real `taskie` command line, in-process.
fn parse_with_cli(cmd: &str) -> Result<(), String> {
    use clap::Parser;
    let words = shell_words(&substitute(cmd)?)?;
    match taskie::cli::Cli::try_parse_from(&words) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => Ok(()),
        Err(e) => Err(e.to_string().lines().next().unwrap_or_default().to_owned()),
    }
}

#[test]
fn the_command_extractor_finds_fenced_lines_and_wrapped_inline_spans() {
    let md = "Run `taskie status` or\n`taskie mark\ncontinue-task` now.\n\n```bash\ntaskie init <plan-id>\n`taskie not-prose`\n```\n`taskie-hook --dry-run` is another program.\n";
    let found: Vec<(usize, String)> = taskie_commands(md)
        .into_iter()
        .map(|f| (f.line, f.text))
        .collect();
    assert_eq!(
        found,
        vec![
            (1, "taskie status".to_owned()),
            (2, "taskie mark continue-task".to_owned()),
            (6, "taskie init <plan-id>".to_owned()),
        ]
    );
    assert_eq!(
        shell_words(r#"taskie state set "a=b c" x='y z'"#).unwrap(),
        ["taskie", "state", "set", "a=b c", "x=y z"]
    );
    assert!(shell_words("taskie status | less").is_err());
    assert!(substitute("taskie state set <field>=1").is_err());
}

#[test]
fn every_taskie_command_in_the_actions_parses_with_the_real_cli() {
    let mut failures = Vec::new();
    let mut count = 0;
    for name in ACTIONS {
        for f in taskie_commands(&action(name)) {
            count += 1;
            if let Err(e) = parse_with_cli(&f.text) {
                failures.push(format!("actions/{name}.md:{}: `{}`: {e}", f.line, f.text));
            }
        }
    }
    assert!(
        count > 50,
        "only {count} commands found: the extractor is broken"
    );
    assert!(
        failures.is_empty(),
        "commands the CLI rejects:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_cli_parser_used_above_rejects_commands_that_do_not_exist() {
    // Guards the test above against a parser that accepts anything.
    for bad in [
        "taskie frobnicate",
        "taskie mark",
        "taskie init",
        "taskie status --plan",
        "taskie mark complete-task --task three",
    ] {
        assert!(parse_with_cli(bad).is_err(), "`{bad}` must not parse");
    }
}

/// The command each action tells the agent to run when it is done (SPEC §14), found
/// in a fenced block so it stands out as the action's last step.
fn final_command(name: &str) -> Option<&'static str> {
    Some(match name {
        "new-plan" => "taskie init <plan-id>",
        "continue-plan" => "taskie continue-plan",
        "create-tasks" => "taskie mark create-tasks --plan <plan-id>",
        "complete-task" => "taskie mark complete-task --task <N> --plan <plan-id>",
        "complete-task-tdd" => "taskie mark complete-task-tdd --task <N> --plan <plan-id>",
        "next-task" => "taskie mark next-task --task <N> --plan <plan-id>",
        "next-task-tdd" => "taskie mark next-task-tdd --task <N> --plan <plan-id>",
        "continue-task" => "taskie mark continue-task --plan <plan-id>",
        "add-task" => "taskie mark add-task --task <N> --plan <plan-id>",
        "plan-review" => "taskie mark plan-review --plan <plan-id>",
        "tasks-review" => "taskie mark tasks-review --plan <plan-id>",
        "code-review" => "taskie mark code-review --plan <plan-id>",
        "all-code-review" => "taskie mark all-code-review --plan <plan-id>",
        "post-plan-review" => "taskie mark post-plan-review --plan <plan-id>",
        "post-tasks-review" => "taskie mark post-tasks-review --plan <plan-id>",
        "post-code-review" => "taskie mark post-code-review --plan <plan-id>",
        "post-all-code-review" => "taskie mark post-all-code-review --plan <plan-id>",
        _ => return None,
    })
}

#[test]
fn each_action_names_the_taskie_command_that_records_it_instead_of_editing_json() {
    for name in ACTIONS {
        let text = action(name);
        let body = frontmatter(&text).unwrap().body;
        // No action may tell the agent to write state.json itself.
        for bad in ["\"next_phase\":", "\"phase\":", "jq ", "> state.json"] {
            assert!(!body.contains(bad), "actions/{name}.md contains {bad:?}");
        }
        let Some(expected) = final_command(name) else {
            assert_eq!(name, "ground-rules");
            continue;
        };
        let fenced: Vec<String> = taskie_commands(&text)
            .into_iter()
            .filter(|f| {
                text.lines()
                    .nth(f.line - 1)
                    .is_some_and(|l| l.trim() == f.text)
            })
            .map(|f| f.text)
            .collect();
        assert!(
            fenced.iter().any(|c| c == expected),
            "actions/{name}.md must show `{expected}` in a code block; it shows {fenced:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// The whole workflow on examples/demo

fn demo() -> PathBuf {
    repo().join("examples/demo")
}

/// The fields a step changes, compared as one value so a failure shows them all.
fn expect_state(
    p: &Project,
    step: &str,
    (phase, next, iteration, clean, model, task): (&str, Value, u64, u64, &str, Value),
) {
    let s = p.state_json();
    let got = json!({
        "phase": s["phase"], "next_phase": s["next_phase"],
        "phase_iteration": s["phase_iteration"], "consecutive_clean": s["consecutive_clean"],
        "review_model": s["review_model"], "current_task": s["current_task"],
    });
    let want = json!({
        "phase": phase, "next_phase": next, "phase_iteration": iteration,
        "consecutive_clean": clean, "review_model": model, "current_task": task,
    });
    assert_eq!(got, want, "state.json after: {step}");
}

/// Runs a `taskie` command as the agent would, asserting success; returns stdout.
fn agent_runs(p: &Project, args: &[&str]) -> String {
    let out = p.taskie(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "taskie {}: {}{}",
        args.join(" "),
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// One review cycle with the demo's fake reviewer: #1 fails, #2 and #3 pass. The test
/// writes each post-review file as the agent would. `post` is the post-review file
/// name without `-<i>.md`; `advanced` is the state the passed cycle leads to.
fn demo_cycle(
    p: &Project,
    review: &str,
    post: &str,
    task: Value,
    advanced: (&str, Value, u64, u64, &str, Value),
) {
    let review_file = |i: u64| post.replace("post-review", "review") + &format!("-{i}.md");
    let post_file = |i: u64| format!("{post}-{i}.md");

    let reason = p.stop().reason();
    assert!(reason.contains("Verdict: FAIL."), "{reason}");
    assert!(
        reason.contains(&format!("/taskie:post-{review}")),
        "{reason}"
    );
    assert!(reason.contains(&post_file(1)), "{reason}");
    assert!(p.exists(&review_file(1)));
    // The fake reviewer's finding is about what this review reads, not the plan's again.
    let subject = match review {
        "plan-review" => "The plan",
        "tasks-review" => "tasks.md",
        "code-review" => "Task ",
        _ => "The implementation as a whole",
    };
    let finding = p.read(&review_file(1));
    assert!(finding.contains(subject), "{review}: {finding}");
    assert_eq!(
        review == "plan-review",
        finding.contains("name with spaces"),
        "only the plan review repeats the plan's finding: {finding}"
    );
    let post_phase = format!("post-{review}");
    expect_state(
        p,
        &format!("{review} #1 failed"),
        (review, json!(post_phase), 1, 0, "sonnet", task.clone()),
    );
    // Nothing changes while the post-review is owed.
    let owed = p.stop_active().message();
    assert!(owed.contains(&post_file(1)), "{owed}");
    expect_state(
        p,
        "a stop without the post-review",
        (review, json!(post_phase), 1, 0, "sonnet", task.clone()),
    );

    std::fs::write(p.plan_dir().join(post_file(1)), "# Post-review\n\nFixed.\n").unwrap();
    let reason = p.stop_active().reason();
    assert!(reason.contains("Verdict: PASS (1 of 2"), "{reason}");
    expect_state(
        p,
        &format!("{review} #2 passed"),
        (review, json!(post_phase), 2, 1, "opus", task.clone()),
    );

    std::fs::write(
        p.plan_dir().join(post_file(2)),
        "# Post-review\n\nNothing to fix.\n",
    )
    .unwrap();
    let msg = p.stop_active().message();
    let target = advanced.1.as_str().unwrap().to_owned();
    // The post-review answers no finding by id: the findings ledger's note follows.
    assert!(
        msg.starts_with(&format!(
            "{review} passed (2 clean reviews in a row). Next: {target}. Run /taskie:continue-plan."
        )),
        "{msg}"
    );
    assert!(p.exists(&review_file(3)));
    expect_state(p, &format!("{review} #3 passed: the cycle"), advanced);
}

fn write_demo_tasks(p: &Project, first: &str, second: &str) {
    std::fs::write(
        p.plan_dir().join("tasks.md"),
        format!(
            "| Id | Status | Title | Description |\n|----|--------|-------|-------------|\n\
             | 1 | {first} | Parse the name | Refuse an empty name |\n\
             | 2 | {second} | Print the greeting | Hello, NAME! with tests |\n"
        ),
    )
    .unwrap();
}

#[test]
fn the_demo_goes_from_plan_review_through_every_cycle_to_complete() {
    let p = Project::new()
        .copy_in(&demo().join("project"))
        .plan("demo")
        .env(
            "TASKIE_REVIEWER",
            demo().join("fake-reviewer").to_str().unwrap(),
        );
    let null = Value::Null;
    expect_state(
        &p,
        "taskie init (shipped)",
        ("new-plan", json!("plan-review"), 0, 0, "opus", null.clone()),
    );
    agent_runs(&p, &["validate"]);

    // Plan review → create-tasks.
    demo_cycle(
        &p,
        "plan-review",
        "plan-post-review",
        null.clone(),
        (
            "plan-review",
            json!("create-tasks"),
            3,
            2,
            "sonnet",
            null.clone(),
        ),
    );
    let next = agent_runs(&p, &["continue-plan", "--json"]);
    let next: Value = serde_json::from_str(&next).expect("continue-plan --json");
    assert_eq!(next["action"], "create-tasks", "{next}");

    // create-tasks → tasks review → complete-task.
    write_demo_tasks(&p, "pending", "pending");
    std::fs::write(
        p.plan_dir().join("task-1.md"),
        "# Task 1\n\nParse the name.\n",
    )
    .unwrap();
    std::fs::write(p.plan_dir().join("task-2.md"), "# Task 2\n\nGreet.\n").unwrap();
    agent_runs(&p, &["mark", "create-tasks"]);
    expect_state(
        &p,
        "taskie mark create-tasks",
        (
            "create-tasks",
            json!("tasks-review"),
            0,
            0,
            "opus",
            null.clone(),
        ),
    );
    demo_cycle(
        &p,
        "tasks-review",
        "tasks-post-review",
        null.clone(),
        (
            "tasks-review",
            json!("complete-task"),
            3,
            2,
            "sonnet",
            null.clone(),
        ),
    );

    // Task 1: its code review passes while task 2 is unfinished → complete-task again.
    let next: Value = serde_json::from_str(&agent_runs(&p, &["continue-plan", "--json"])).unwrap();
    assert_eq!(
        (&next["action"], &next["task"]),
        (&json!("complete-task"), &json!(1)),
        "{next}"
    );
    write_demo_tasks(&p, "done", "pending");
    agent_runs(&p, &["mark", "complete-task", "--task", "1"]);
    expect_state(
        &p,
        "taskie mark complete-task --task 1",
        (
            "complete-task",
            json!("code-review"),
            0,
            0,
            "opus",
            json!(1),
        ),
    );
    demo_cycle(
        &p,
        "code-review",
        "task-1-code-post-review",
        json!(1),
        (
            "code-review",
            json!("complete-task"),
            3,
            2,
            "sonnet",
            json!(1),
        ),
    );

    // Task 2, the last one: its passed code review starts the all-code cycle afresh.
    let next: Value = serde_json::from_str(&agent_runs(&p, &["continue-plan", "--json"])).unwrap();
    assert_eq!(next["task"], 2, "{next}");
    write_demo_tasks(&p, "done", "done");
    agent_runs(&p, &["mark", "complete-task", "--task", "2"]);
    expect_state(
        &p,
        "taskie mark complete-task --task 2",
        (
            "complete-task",
            json!("code-review"),
            0,
            0,
            "opus",
            json!(2),
        ),
    );
    demo_cycle(
        &p,
        "code-review",
        "task-2-code-post-review",
        json!(2),
        (
            "code-review",
            json!("all-code-review"),
            0,
            0,
            "opus",
            json!(2),
        ),
    );

    // All-code review → complete.
    demo_cycle(
        &p,
        "all-code-review",
        "all-code-post-review",
        json!(2),
        (
            "all-code-review",
            json!("complete"),
            3,
            2,
            "sonnet",
            json!(2),
        ),
    );
    let done: Value = serde_json::from_str(&agent_runs(&p, &["continue-plan", "--json"])).unwrap();
    assert_eq!(done["action"], "complete", "{done}");
    expect_state(
        &p,
        "taskie continue-plan at next_phase complete",
        ("complete", Value::Null, 3, 2, "sonnet", json!(2)),
    );

    // A finished plan is quiet, valid, and every review and post-review is on disk.
    p.stop().assert_silent();
    agent_runs(&p, &["validate"]);
    let reviews = p
        .events()
        .iter()
        .filter(|e| e["verdict"].is_string())
        .count();
    assert_eq!(reviews, 15, "five cycles of three reviews");
}

#[test]
fn the_demo_scripts_run_to_the_end() {
    let bin = Path::new(env!("CARGO_BIN_EXE_taskie")).parent().unwrap();
    // Each script's last step leaves a mark in its output.
    for (script, last_words) in [
        ("run.sh", "\"next_phase_after\":\"create-tasks\""),
        ("full-cycle.sh", "task-2-code-review-3.md"),
    ] {
        let out = Command::new("bash")
            .arg(demo().join(script))
            .env("TASKIE_BIN_DIR", bin)
            .env(
                "TASKIE_REVIEWER",
                "/nonexistent: the script must set its own",
            )
            .env_remove("TASKIE_PLAN")
            .env_remove("TASKIE_HOOK_SKIP")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{script}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(last_words),
            "{script} stopped early: {stdout}"
        );
        // The demo teaches the post-review format the actions ask for: every finding
        // answered by its id, so the findings ledger never reports one left open.
        assert!(
            !stdout.contains("did not answer"),
            "{script} writes a post-review that does not answer by id: {stdout}"
        );
        if script == "full-cycle.sh" {
            assert!(
                stdout.contains("phase=complete next_phase=null"),
                "{stdout}"
            );
            assert_eq!(
                stdout.matches("\"additionalContext\":").count(),
                10,
                "{stdout}"
            );
        }
    }
}

#[test]
fn every_taskie_command_in_the_readme_and_the_install_docs_parses_with_the_real_cli() {
    let mut found = Vec::new();
    for doc in ["README.md", "docs/install.md", "docs/building-in-place.md"] {
        found.extend(taskie_commands(&read(&repo().join(doc))));
    }
    assert!(found.len() >= 20, "{found:?}");
    let failures: Vec<String> = found
        .iter()
        .filter_map(|f| {
            parse_with_cli(&f.text)
                .err()
                .map(|e| format!("`{}`: {e}", f.text))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Registered by hand, the hook should be the native binary (npm's `taskie-hook` on PATH
/// is a Node launcher, about 60 ms a stop): `taskie hook-path` names the `taskie-hook`
/// beside `taskie`, which then runs as a hook; a `taskie` with none beside it says so.
#[test]
fn taskie_hook_path_names_the_native_taskie_hook_beside_taskie() {
    let anywhere = crate::support::tempdir();
    let out = Command::new(env!("CARGO_BIN_EXE_taskie"))
        .arg("hook-path")
        .current_dir(anywhere.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let named = String::from_utf8(out.stdout).unwrap();
    let hook = PathBuf::from(named.trim_end_matches('\n'));
    assert_eq!(
        hook,
        Path::new(env!("CARGO_BIN_EXE_taskie-hook"))
            .canonicalize()
            .unwrap()
    );
    let p = Project::new().plan("p").state(due("plan-review"));
    let run: crate::support::Run = Command::new(&hook)
        .env("TASKIE_REVIEWER", p.reviewer_path())
        .env_remove("TASKIE_PLUGIN_ROOT")
        .env("XDG_CACHE_HOME", anywhere.path())
        .current_dir(p.root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            let event = json!({"hook_event_name": "Stop", "cwd": p.root()});
            c.stdin
                .take()
                .unwrap()
                .write_all(event.to_string().as_bytes())?;
            c.wait_with_output()
        })
        .unwrap()
        .into();
    assert!(run.is_block(), "{}", run.stdout);

    // A taskie alone in a directory (a hard link: its own path, not the build's).
    let lone = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let taskie = lone.path().join("taskie");
    std::fs::hard_link(env!("CARGO_BIN_EXE_taskie"), &taskie).unwrap();
    let out = Command::new(&taskie).arg("hook-path").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("there is no taskie-hook beside") && err.contains("install taskie again"),
        "{err}"
    );
}
