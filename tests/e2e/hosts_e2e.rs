//! End-to-end (SPEC §20): the real Codex CLI as the *agent*, Taskie installed into it the
//! way the README says (a marketplace from a checkout, `codex plugin add`, the hook trusted
//! in config.toml as Codex's `/hooks` screen does), a scripted model behind a fake
//! Responses API on loopback. The reviewer is the real codex too (the plan's `reviewers`),
//! answered by the same fake. No TASKIE_* variable is set anywhere.

use crate::support::fake_gemini::{self, FakeGemini};
use crate::support::fake_openai::{self, FakeOpenAi, Request};
use crate::support::{Project, copy_file, copy_tree};
use crate::vendors_e2e::{bin, gemini_home, home};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Build output the size of a real one's files would make every copy of it obvious: a
/// checkout where `cargo build` ran holds gigabytes under target/.
const BUILD_OUTPUT: u64 = 20 << 20;

/// A checkout of what a user clones, the files the plugin is made of, after a build: it
/// holds a target/ with build output (sparse, so cheap to make; every client that copied
/// it would copy its length).
fn checkout(dir: &Path) {
    for d in [".claude-plugin", ".agents", "actions", "hooks", "dist"] {
        copy_tree(&repo().join(d), &dir.join(d));
    }
    copy_file(&repo().join("Cargo.toml"), &dir.join("Cargo.toml"));
    let release = dir.join("target/release");
    std::fs::create_dir_all(&release).unwrap();
    std::fs::File::create(release.join("taskie-hook.d"))
        .and_then(|f| f.set_len(BUILD_OUTPUT))
        .unwrap();
}

/// The bytes of the files under `dir` (their lengths), and every path in it that is or
/// lies in a `target` directory.
fn copied(dir: &Path) -> (u64, Vec<PathBuf>) {
    let (mut bytes, mut targets) = (0, Vec::new());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (bytes, targets);
    };
    for e in entries {
        let e = e.unwrap();
        let meta = std::fs::symlink_metadata(e.path()).unwrap();
        if e.file_name() == "target" {
            targets.push(e.path());
        }
        if meta.is_dir() {
            let (b, t) = copied(&e.path());
            bytes += b;
            targets.extend(t);
        } else {
            bytes += meta.len();
        }
    }
    (bytes, targets)
}

/// Asserts that what `client` copied into `dir` holds no build output and stays under
/// 10 MiB.
fn assert_no_build_output(client: &str, dir: &Path) {
    let (bytes, targets) = copied(dir);
    assert!(bytes > 0, "{client} copied nothing into {}", dir.display());
    assert!(
        targets.is_empty(),
        "{client} copied build output: {targets:?}"
    );
    assert!(
        bytes < 10 << 20,
        "{client} copied {bytes} bytes into {}",
        dir.display()
    );
}

/// The user's PATH after the README's install steps: the freshly built `taskie` and
/// `taskie-hook` where `cargo install` puts them, and the pinned `codex`; set in
/// `~/.profile`, since Codex runs hooks through a login shell.
fn install_binaries(home: &Path) -> String {
    let dir = home.join(".cargo/bin");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, target) in [
        ("taskie", PathBuf::from(env!("CARGO_BIN_EXE_taskie"))),
        (
            "taskie-hook",
            PathBuf::from(env!("CARGO_BIN_EXE_taskie-hook")),
        ),
        ("codex", bin("codex")),
    ] {
        std::os::unix::fs::symlink(target, dir.join(name)).unwrap();
    }
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", dir.display());
    std::fs::write(
        home.join(".profile"),
        format!("PATH=\"{path}\"\nexport PATH\n"),
    )
    .unwrap();
    path
}

/// What the scripted model saw and did.
#[derive(Default)]
struct Script {
    /// Reviews answered, in order.
    verdicts: Vec<&'static str>,
    /// Hook prompts the agent received (the block reasons).
    prompts: Vec<String>,
    /// Files the agent wrote with its shell tool.
    wrote: Vec<String>,
    /// Other commands it ran.
    ran: Vec<String>,
}

/// The text of every `input_text` of the last user message.
fn last_user_text(body: &Value) -> Option<String> {
    let input = body["input"].as_array()?;
    let msg = input
        .iter()
        .rev()
        .find(|i| i["type"] == "message" && i["role"] == "user")?;
    Some(
        msg["content"]
            .as_array()?
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// The post-review file a block reason asks for.
fn post_review_named_in(reason: &str) -> Option<String> {
    let start = reason.find("write what you did to ")? + "write what you did to ".len();
    let rest = &reason[start..];
    Some(rest[..rest.find(". ")?].to_owned())
}

/// The model: a reviewer call (it carries Taskie's output schema) gets the next verdict;
/// the agent answers a hook prompt by writing the post-review file it names with its
/// shell tool, and ends its turn otherwise.
fn model(req: &Request, script: &Mutex<Script>, verdicts: &[&'static str]) -> fake_openai::Reply {
    let Some(body) = req.json().filter(|_| req.path.ends_with("/responses")) else {
        return fake_openai::Reply::Json {
            status: 404,
            body: json!({"error": {"message": "not here"}}),
        };
    };
    let reply = |text: &str| fake_openai::Reply::Output {
        items: vec![fake_openai::message(text)],
        input_tokens: 100,
        output_tokens: 10,
    };
    let mut s = script.lock().unwrap();
    if body["text"]["format"]["type"] == "json_schema" {
        let v = verdicts.get(s.verdicts.len()).copied().unwrap_or("FAIL");
        s.verdicts.push(v);
        let findings: Vec<&str> = if v == "FAIL" {
            vec!["Say which file holds the config"]
        } else {
            vec![]
        };
        return reply(
            &json!({"verdict": v, "summary": "The reviewer read the plan.", "findings": findings})
                .to_string(),
        );
    }
    let last = body["input"].as_array().and_then(|i| i.last()).cloned();
    if last
        .as_ref()
        .is_some_and(|l| l["type"] == "function_call_output")
    {
        return reply("Done: the post-review is written.");
    }
    let text = last_user_text(&body).unwrap_or_default();
    let cmd = if let Some(post) = post_review_named_in(&text) {
        s.prompts.push(text.clone());
        s.wrote.push(post.clone());
        format!("printf 'Addressed every finding.\\n' > '{post}'")
    } else if let Some(i) = text.find("Run: ") {
        // The user's prompt asks for one command (e.g. `taskie continue-plan --plan a`).
        let cmd = text[i + "Run: ".len()..]
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned();
        s.ran.push(cmd.clone());
        cmd
    } else {
        return reply("Nothing to do.");
    };
    let tools: Vec<String> = body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let call = if tools.iter().any(|t| t == "exec_command") {
        fake_openai::function_call(
            "exec_command",
            &json!({"cmd": cmd}),
            &format!("call-{}", s.wrote.len() + s.ran.len()),
        )
    } else {
        fake_openai::function_call(
            "shell",
            &json!({"command": ["bash", "-lc", cmd]}),
            &format!("call-{}", s.wrote.len() + s.ran.len()),
        )
    };
    fake_openai::Reply::Output {
        items: vec![call],
        input_tokens: 100,
        output_tokens: 10,
    }
}

/// A user's Codex set up as the README says, pointed at `api`.
struct Codex {
    _home: tempfile::TempDir,
    home: PathBuf,
    codex_home: PathBuf,
    path: String,
    /// The user's login shell, which Codex runs hooks through (`$SHELL -lc`).
    shell: PathBuf,
}

impl Codex {
    fn install(api: &FakeOpenAi) -> Codex {
        let h = home();
        let home = h.path().to_path_buf();
        let codex_home = home.join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        std::fs::write(
            codex_home.join("config.toml"),
            format!(
                "model = \"gpt-5-codex\"\nmodel_provider = \"taskie_fake\"\n[analytics]\nenabled = false\n\
                 [features]\nremote_plugin = false\nrecommended_plugins = false\nplugin_sharing = false\n\
                 [model_providers.taskie_fake]\nname = \"taskie-fake\"\nbase_url = \"{}\"\n\
                 env_key = \"TASKIE_FAKE_OPENAI_KEY\"\nwire_api = \"responses\"\nrequest_max_retries = 0\n\
                 stream_max_retries = 0\n",
                api.base_url()
            ),
        )
        .unwrap();
        let src = home.join("src/taskie");
        checkout(&src);
        let c = Codex {
            path: install_binaries(&home),
            _home: h,
            home,
            codex_home,
            shell: PathBuf::from("/bin/sh"),
        };
        // README: codex plugin marketplace add <checkout>; codex plugin add taskie@taskie.
        c.ok(&["plugin", "marketplace", "add", src.to_str().unwrap()]);
        c.ok(&["plugin", "add", "taskie@taskie"]);
        c.trust_the_hook();
        c
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin("codex"));
        cmd.args(args)
            .env_clear()
            .env("HOME", &self.home)
            .env("CODEX_HOME", &self.codex_home)
            .env("PATH", &self.path)
            .env("SHELL", &self.shell)
            .env("TASKIE_FAKE_OPENAI_KEY", "dummy")
            // With plugins on, codex refreshes OpenAI's curated plugin repository with
            // `git ls-remote https://github.com/…`: send that to a closed loopback port.
            .env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", "url.http://127.0.0.1:9/.insteadOf")
            .env("GIT_CONFIG_VALUE_0", "https://github.com/");
        cmd
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.command(args).output().unwrap();
        assert!(
            out.status.success(),
            "codex {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What Codex's `/hooks` screen does when the user trusts the hook: the hook's key and
    /// current hash (as `hooks/list` reports them) into config.toml.
    fn trust_the_hook(&self) {
        let requests = [
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"taskie-test","version":"1"}}}),
            json!({"jsonrpc":"2.0","method":"initialized"}),
            json!({"jsonrpc":"2.0","id":2,"method":"hooks/list","params":{"cwds":[self.home]}}),
        ];
        let mut child = self
            .command(&["app-server"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        use std::io::{BufRead, Write};
        for r in &requests {
            writeln!(stdin, "{r}").unwrap();
        }
        let mut hook = None;
        for line in std::io::BufReader::new(stdout).lines().take(200) {
            let v: Value = serde_json::from_str(&line.unwrap()).unwrap_or_default();
            if v["id"] == 2 {
                hook = v["result"]["data"][0]["hooks"]
                    .as_array()
                    .and_then(|h| h.iter().find(|h| h["pluginId"] == "taskie@taskie"))
                    .cloned();
                break;
            }
        }
        drop(stdin);
        let _ = child.kill();
        let _ = child.wait();
        let hook = hook.expect("codex lists Taskie's plugin hook");
        assert_eq!(hook["eventName"], "stop", "{hook}");
        assert_eq!(hook["trustStatus"], "untrusted", "{hook}");
        // `currentHash` is "<hash of the hook's entry>/<hash of the command's file>"; Codex
        // keeps them as two fields.
        let (entry, content) = hook["currentHash"]
            .as_str()
            .unwrap()
            .split_once('/')
            .expect("two hashes");
        let config = self.codex_home.join("config.toml");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&format!(
            "\n[hooks.state.\"{}\"]\ntrusted_hash = \"{entry}\"\ntrusted_content_hash = \"{content}\"\n",
            hook["key"].as_str().unwrap(),
        ));
        std::fs::write(config, text).unwrap();
    }

    /// One `codex exec` turn in `dir`, bounded in time; its exit status and stderr.
    fn exec(&self, dir: &Path, prompt: &str) -> (std::process::ExitStatus, String) {
        let err = self.home.join("exec.stderr");
        let mut cmd = self.command(&[
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            prompt,
        ]);
        cmd.current_dir(dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::fs::File::create(self.home.join("exec.stdout")).unwrap())
            .stderr(std::fs::File::create(&err).unwrap());
        let status = run_bounded(cmd, "codex exec", &err);
        let out = std::fs::read_to_string(self.home.join("exec.stdout")).unwrap_or_default();
        (
            status,
            out + &std::fs::read_to_string(&err).unwrap_or_default(),
        )
    }
}

/// A plan whose plan review is due, reviewed by `reviewer` ("kind:model"), with `extra`
/// state fields.
/// Runs `cmd` (a client's whole turn) to its end, killed and failing the test past 300 s
/// with what it wrote to `stderr`, its error file.
fn run_bounded(mut cmd: Command, what: &str, stderr: &Path) -> std::process::ExitStatus {
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what} did not finish within 300 s: {}",
                std::fs::read_to_string(stderr).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn plan_reviewed_by(reviewer: &str, extra: Value) -> Project {
    let mut state = crate::support::due("plan-review");
    state["reviewers"] = json!([reviewer]);
    for (k, v) in extra.as_object().unwrap() {
        state[k] = v.clone();
    }
    Project::new().plan("p").state(state)
}

fn plan_with_codex_reviewer(extra: Value) -> Project {
    plan_reviewed_by("codex:gpt-5-codex", extra)
}

#[test]
fn under_the_real_codex_a_whole_review_loop_runs_fail_post_review_pass_pass_allow() {
    let script = Arc::new(Mutex::new(Script::default()));
    let s = script.clone();
    let api = FakeOpenAi::start(move |r| model(r, &s, &["FAIL", "PASS", "PASS"])).unwrap();
    let codex = Codex::install(&api);
    let p = plan_with_codex_reviewer(json!({}));
    let (status, stderr) = codex.exec(&p.root(), "Work on the Taskie plan.");
    let stderr = format!("{stderr}\nevents: {:?}", p.events());
    let s = script.lock().unwrap();
    assert_eq!(s.verdicts, ["FAIL", "PASS", "PASS"], "{stderr}");
    assert_eq!(
        s.wrote,
        [
            ".taskie/plans/p/plan-post-review-1.md",
            ".taskie/plans/p/plan-post-review-2.md"
        ],
        "{stderr}"
    );
    assert!(p.exists("plan-post-review-1.md") && p.exists("plan-post-review-2.md"));
    // The model was told what to do in a form it can act on.
    let first = &s.prompts[0];
    assert!(!first.contains("/taskie:"), "{first}");
    assert!(
        first.contains("/actions/post-plan-review.md"),
        "the instructions by path: {first}"
    );
    let state = p.state_json();
    assert_eq!(state["next_phase"], "create-tasks", "{state}");
    assert!(status.success(), "{stderr}");
    // The session that ran the reviews is bound by Codex's thread id.
    let bound: Vec<String> = std::fs::read_dir(p.root().join(".taskie/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert_eq!(bound.len(), 1, "{bound:?}");
}

#[test]
fn under_the_real_codex_the_block_cap_ends_an_endless_fail_loop() {
    let script = Arc::new(Mutex::new(Script::default()));
    let s = script.clone();
    let api = FakeOpenAi::start(move |r| model(r, &s, &[])).unwrap();
    let codex = Codex::install(&api);
    let p = plan_with_codex_reviewer(json!({"max_reviews": 30}));
    let (status, stderr) = codex.exec(&p.root(), "Work on the Taskie plan.");
    let s = script.lock().unwrap();
    // Eight blocks (the default cap), the ninth review's block is not sent.
    assert_eq!(s.verdicts.len(), 9, "{stderr}");
    assert_eq!(s.prompts.len(), 8, "{stderr}");
    let last = p.last_event();
    assert_eq!(
        (&last["outcome"], &last["block_cap"]),
        (&json!("allow"), &json!(8))
    );
    assert!(status.success(), "{stderr}");
}

/// Codex runs hooks through the user's login shell (`$SHELL -lc`): under zsh (macOS's
/// default) and fish the whole loop runs as under sh.
#[test]
fn under_the_real_codex_with_a_zsh_or_fish_login_shell_the_review_loop_runs() {
    for shell in ["zsh", "fish"] {
        let script = Arc::new(Mutex::new(Script::default()));
        let s = script.clone();
        let api = FakeOpenAi::start(move |r| model(r, &s, &["FAIL", "PASS", "PASS"])).unwrap();
        let mut codex = Codex::install(&api);
        codex.shell = crate::support::shell(shell);
        let p = plan_with_codex_reviewer(json!({}));
        let (status, stderr) = codex.exec(&p.root(), "Work on the Taskie plan.");
        let stderr = format!("{shell}: {stderr}\nevents: {:?}", p.events());
        let s = script.lock().unwrap();
        assert_eq!(s.verdicts, ["FAIL", "PASS", "PASS"], "{stderr}");
        assert_eq!(s.wrote.len(), 2, "{stderr}");
        assert_eq!(p.state_json()["next_phase"], "create-tasks", "{stderr}");
        assert!(status.success(), "{stderr}");
    }
}

/// Installed as the README says from a checkout where a build ran, no client copies the
/// build output (each copy stays under 10 MiB), and none says anything about Taskie's
/// files: `claude plugin list` notes nothing, Gemini warns about no hook event (checked
/// in its review loop below), `claude plugin validate` about no unknown event (above).
#[test]
fn installing_from_a_built_checkout_copies_no_build_output_into_any_client() {
    // Claude Code: claude plugin marketplace add <checkout>; claude plugin install.
    let h = home();
    let src = h.path().join("src/taskie");
    checkout(&src);
    let claude = |args: &[&str]| {
        let mut cmd = Command::new(crate::support::claude_cli::binary());
        cmd.args(args).stdin(std::process::Stdio::null());
        crate::support::claude_user::cli_env(&mut cmd, "http://127.0.0.1:9", h.path());
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "claude {args:?}: {text}");
        text
    };
    claude(&["plugin", "marketplace", "add", src.to_str().unwrap()]);
    claude(&["plugin", "install", "taskie@taskie"]);
    let cache = h.path().join(".claude/plugins/cache");
    assert!(
        cache
            .join(format!(
                "taskie/taskie/{}/hooks/taskie-stop-hook",
                env!("CARGO_PKG_VERSION")
            ))
            .is_file()
    );
    assert_no_build_output("Claude Code", &cache);
    let list = claude(&["plugin", "list"]);
    assert!(list.contains("taskie@taskie"), "{list}");
    assert!(
        !list.contains("Note:") && !list.contains("ignored"),
        "Claude Code says something about Taskie's files: {list}"
    );

    // Codex CLI: codex plugin marketplace add <checkout>; codex plugin add.
    let api = FakeOpenAi::start(|_| fake_openai::Reply::Json {
        status: 404,
        body: json!({"error": "not needed to install"}),
    })
    .unwrap();
    let codex = Codex::install(&api);
    assert_no_build_output("Codex", &codex.codex_home.join("plugins/cache"));

    // Gemini CLI: gemini extensions install <checkout>/dist/gemini.
    let api = FakeGemini::start(|_| fake_gemini::Reply::Text {
        text: "not needed to install".into(),
        prompt_tokens: 1,
        output_tokens: 1,
    })
    .unwrap();
    let gemini = Gemini::install(&api);
    assert_no_build_output("Gemini", &gemini.home.join(".gemini/extensions"));
}

#[test]
fn the_claude_plugin_still_validates_and_provides_exactly_one_hook_and_no_skill() {
    let h = home();
    let src = h.path().join("taskie");
    checkout(&src);
    let out = Command::new(crate::support::claude_cli::binary())
        .args(["plugin", "validate"])
        .arg(src.join("dist/claude"))
        .env("HOME", h.path())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Validation passed"), "{text}");
    assert!(!text.contains("unknown hook event"), "{text}");
    assert!(!text.contains("commands/ folder"), "{text}");
    let hooks: Vec<&str> = text.lines().filter(|l| l.contains("❯ hooks: ")).collect();
    assert_eq!(hooks.len(), 1, "{text}");
    assert!(hooks[0].contains("Stop command"), "{text}");
    assert_eq!(text.matches("❯ commands: taskie:").count(), 18, "{text}");
    assert!(
        !text.contains("skills:"),
        "the Codex skills stay Codex's: {text}"
    );
}

#[test]
fn under_the_real_codex_a_second_session_in_the_same_repository_is_isolated() {
    let script = Arc::new(Mutex::new(Script::default()));
    let s = script.clone();
    let api = FakeOpenAi::start(move |r| model(r, &s, &["PASS", "PASS"])).unwrap();
    let codex = Codex::install(&api);
    // One clean review is missing in each plan: one PASS ends its cycle.
    let mut state = crate::support::due("plan-review");
    state["reviewers"] = json!(["codex:gpt-5-codex"]);
    state["consecutive_clean"] = json!(1);
    let p = Project::new()
        .plan("b")
        .state(state.clone())
        .plan("a")
        .state(state);
    let (status, out) = codex.exec(&p.root(), "Run: taskie continue-plan --plan a");
    assert!(status.success(), "{out}");
    assert_eq!(p.last_event()["plan"], "a", "{out}");
    // Plan a is now the most recently modified; the second session works on b.
    let (status, out) = codex.exec(&p.root(), "Run: taskie continue-plan --plan b");
    assert!(status.success(), "{out}");
    let reviewed: Vec<Value> = p
        .events()
        .into_iter()
        .filter(|e| e["verdict"].is_string())
        .map(|e| e["plan"].clone())
        .collect();
    assert_eq!(
        reviewed,
        [json!("a"), json!("b")],
        "each session reviewed its own plan only"
    );
    let mut bindings: Vec<String> = std::fs::read_dir(p.root().join(".taskie/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .map(|t| {
            serde_json::from_str::<Value>(&t).unwrap()["plan"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    bindings.sort();
    assert_eq!(
        bindings,
        ["a", "b"],
        "two Codex threads, each bound to its plan"
    );
}

// Gemini CLI as the agent.

/// The Gemini model: the agent (its conversation starts with the user's prompt) writes the
/// post-review a hook message names with `run_shell_command`; anything else is the reviewer
/// (the next verdict) or a helper call of the CLI.
fn gemini_model(
    req: &Request,
    script: &Mutex<Script>,
    verdicts: &[&'static str],
    prompt: &str,
) -> fake_gemini::Reply {
    let text = fake_gemini::Reply::text;
    let body = match fake_gemini::turn_body(req) {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let contents = body["contents"].as_array().cloned().unwrap_or_default();
    let texts = |c: &Value| -> String {
        c["parts"]
            .as_array()
            .map(|p| {
                p.iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    };
    let is_agent = contents.iter().any(|c| texts(c).contains(prompt));
    let mut s = script.lock().unwrap();
    if !is_agent {
        let v = verdicts.get(s.verdicts.len()).copied().unwrap_or("FAIL");
        s.verdicts.push(v);
        return text(&format!(
            "## Review\n\nThe reviewer read the plan.\n\n## Findings\n\n{}\n\nVERDICT: {v}",
            if v == "FAIL" {
                "- Say which file holds the config"
            } else {
                "None."
            }
        ));
    }
    let last = contents.last().cloned().unwrap_or_default();
    let answered_tool = last["parts"]
        .as_array()
        .is_some_and(|p| p.iter().any(|p| p.get("functionResponse").is_some()));
    if answered_tool {
        return text("Done: the post-review is written.");
    }
    let said = texts(&last);
    let Some(post) = post_review_named_in(&said) else {
        return text("Nothing to do.");
    };
    s.prompts.push(said.clone());
    s.wrote.push(post.clone());
    fake_gemini::Reply::Parts(vec![json!({"functionCall": {
        "name": "run_shell_command",
        "args": {"command": format!("printf 'Addressed every finding.\\n' > '{post}'"),
                 "description": "Write the post-review"}}})])
}

/// A user's Gemini CLI with Taskie installed as the README says, pointed at `api`.
struct Gemini {
    _home: tempfile::TempDir,
    home: PathBuf,
    path: String,
    base_url: String,
}

impl Gemini {
    fn install(api: &FakeGemini) -> Gemini {
        let h = home();
        let home = h.path().to_path_buf();
        gemini_home(&home);
        let src = home.join("src/taskie");
        checkout(&src);
        let path = install_binaries(&home);
        std::os::unix::fs::symlink(bin("gemini"), home.join(".cargo/bin/gemini")).unwrap();
        let g = Gemini {
            _home: h,
            home,
            path,
            base_url: api.base_url(),
        };
        // README: gemini extensions install <checkout>/dist/gemini (--consent confirms
        // ahead); Gemini asks whether the user trusts that folder, and the user says yes.
        let ext = src.join("dist/gemini");
        let mut install = g.command(&["extensions", "install", ext.to_str().unwrap(), "--consent"]);
        let mut child = install
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let _ = child.stdin.take().unwrap().write_all(b"y\n");
        }
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "gemini extensions install: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        g
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin("gemini"));
        cmd.args(args)
            .env_clear()
            .env("HOME", &self.home)
            .env("GEMINI_CLI_HOME", &self.home)
            .env("TMPDIR", self.home.join("tmp"))
            .env("PATH", &self.path)
            .env("SHELL", "/bin/sh")
            .env("GOOGLE_GEMINI_BASE_URL", &self.base_url)
            .env("GEMINI_API_KEY", "dummy");
        cmd
    }

    /// One headless turn in `dir`, bounded in time; exit status and output.
    fn run(&self, dir: &Path, prompt: &str) -> (std::process::ExitStatus, String) {
        let out = self.home.join("run.out");
        let mut cmd = self.command(&["-p", prompt, "--yolo", "--skip-trust"]);
        cmd.current_dir(dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(self.home.join("run.err")).unwrap());
        let status = run_bounded(cmd, "gemini", &self.home.join("run.err"));
        let text = std::fs::read_to_string(&out).unwrap_or_default()
            + &std::fs::read_to_string(self.home.join("run.err")).unwrap_or_default();
        (status, text)
    }
}

const GEMINI_PROMPT: &str = "Work on the Taskie plan.";

fn plan_with_gemini_reviewer(extra: Value) -> Project {
    plan_reviewed_by("gemini:gemini-2.5-pro", extra)
}

#[test]
fn under_the_real_gemini_a_whole_review_loop_runs_fail_post_review_pass_pass_allow() {
    let script = Arc::new(Mutex::new(Script::default()));
    let s = script.clone();
    let api =
        FakeGemini::start(move |r| gemini_model(r, &s, &["FAIL", "PASS", "PASS"], GEMINI_PROMPT))
            .unwrap();
    let gemini = Gemini::install(&api);
    let p = plan_with_gemini_reviewer(json!({}));
    let (status, out) = gemini.run(&p.root(), GEMINI_PROMPT);
    let s = script.lock().unwrap();
    assert_eq!(s.verdicts, ["FAIL", "PASS", "PASS"], "{out}");
    assert_eq!(
        s.wrote,
        [
            ".taskie/plans/p/plan-post-review-1.md",
            ".taskie/plans/p/plan-post-review-2.md"
        ],
        "{out}"
    );
    let first = &s.prompts[0];
    assert!(!first.contains("/taskie:"), "{first}");
    assert!(first.contains("/actions/post-plan-review.md"), "{first}");
    assert_eq!(p.state_json()["next_phase"], "create-tasks", "{out}");
    // Gemini read only its own hook event: no "Invalid hook event name" about Claude's Stop.
    assert!(!out.contains("Invalid hook event"), "{out}");
    assert!(status.success(), "{out}");
}

#[test]
fn under_the_real_gemini_the_block_cap_ends_an_endless_fail_loop() {
    let script = Arc::new(Mutex::new(Script::default()));
    let s = script.clone();
    let api = FakeGemini::start(move |r| gemini_model(r, &s, &[], GEMINI_PROMPT)).unwrap();
    let gemini = Gemini::install(&api);
    let p = plan_with_gemini_reviewer(json!({"max_reviews": 30}));
    let (status, out) = gemini.run(&p.root(), GEMINI_PROMPT);
    let s = script.lock().unwrap();
    assert_eq!(s.verdicts.len(), 9, "{out}");
    assert_eq!(s.prompts.len(), 8, "{out}");
    let last = p.last_event();
    assert_eq!(
        (&last["outcome"], &last["block_cap"]),
        (&json!("allow"), &json!(8))
    );
    assert!(status.success(), "{out}");
}

/// Interactive Gemini CLI runs the agent's shell commands in a pseudo-terminal (its
/// `enableInteractiveShell`, on by default), with no session id: the agent's own `taskie
/// init` must still speak to the agent ("Stop now"), as the `GEMINI_CLI` variable Gemini
/// sets in that shell tells. Headless, Gemini gives the command a pipe, so the command
/// takes a terminal itself (script(1)); the environment is the real CLI's.
#[test]
fn under_the_real_gemini_the_agents_own_taskie_init_tells_it_to_stop() {
    const PROMPT: &str = "Start the reviews of the Taskie plan x.";
    let outputs: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = outputs.clone();
    let api = FakeGemini::start(move |req| {
        let text = fake_gemini::Reply::text;
        let body = match fake_gemini::turn_body(req) {
            Ok(body) => body,
            Err(reply) => return reply,
        };
        let contents = body["contents"].as_array().cloned().unwrap_or_default();
        let last = contents.last().cloned().unwrap_or_default();
        let response: Vec<String> = last["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("functionResponse"))
            .map(|r| r.to_string())
            .collect();
        let mut seen = seen.lock().unwrap();
        if !response.is_empty() {
            seen.extend(response);
            return text("Done.");
        }
        if !seen.is_empty() || !body.to_string().contains(PROMPT) {
            return text("Done.");
        }
        fake_gemini::Reply::Parts(vec![json!({"functionCall": {
            "name": "run_shell_command",
            "args": {"command": "script -qec 'taskie init x' /dev/null; echo \"GEMINI_CLI=$GEMINI_CLI\"",
                     "description": "Start the plan's reviews"}}})])
    })
    .unwrap();
    let gemini = Gemini::install(&api);
    let p = Project::new().plan("x");
    let (_, out) = gemini.run(&p.root(), PROMPT);
    let outputs = outputs.lock().unwrap();
    let shown = outputs.join("\n");
    assert!(
        shown.contains("Initialised .taskie/plans/x/state.json"),
        "the agent ran taskie init: {shown}\n{out}"
    );
    assert!(shown.contains("GEMINI_CLI=1"), "{shown}");
    assert!(
        shown.contains("Stop now: the hook runs plan-review #1"),
        "the agent is told to stop: {shown}"
    );
}
