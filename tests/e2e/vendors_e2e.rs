//! End-to-end (SPEC §18): the real `codex` and `gemini` CLIs, installed from npm into
//! the end-to-end cache (`~/.cache/taskie-e2e`, once; later runs reuse it), reviewing through `taskie-hook`
//! against our fake APIs on 127.0.0.1 — no network beyond loopback, no API key. The
//! production argv is used unchanged; only the environment points the CLIs at the fakes
//! (docs/reviewers.md). If npm cannot install them, the tests fail and say why.

use crate::support::fake_gemini::{self, FakeGemini};
use crate::support::fake_openai::{self, FakeOpenAi};
use crate::support::{Project, due};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const CODEX: &str = "@openai/codex@0.169.0";
const GEMINI: &str = "@google/gemini-cli@0.61.0";
/// The strict answer schema codex is given (one home: `reviewer::result`).
fn codex_schema() -> String {
    taskie::reviewer::result::answer_schema(true)
}

/// The npm prefix holding both CLIs, installed on first use.
fn clis() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = crate::support::claude_cli::cache_dir().join("vendor-clis");
        let installed = |pkg: &str| {
            let (name, version) = pkg.rsplit_once('@').unwrap();
            std::fs::read_to_string(dir.join("node_modules").join(name).join("package.json"))
                .is_ok_and(|t| t.contains(&format!("\"version\": \"{version}\"")))
        };
        if !(installed(CODEX) && installed(GEMINI)) {
            std::fs::create_dir_all(&dir).unwrap();
            let out = Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--prefix"])
                .arg(&dir)
                .args([CODEX, GEMINI])
                .output()
                .unwrap_or_else(|e| {
                    panic!(
                        "the end-to-end tests need npm (Node.js ≥ 20) to install {CODEX} and {GEMINI} into {}: \
                         cannot run npm: {e}",
                        dir.display()
                    )
                });
            assert!(
                out.status.success() && installed(CODEX) && installed(GEMINI),
                "`npm install {CODEX} {GEMINI}` into {} failed (the end-to-end tests need the npm registry once; \
                 later runs reuse the install):\n{}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        dir
    })
}

pub(crate) fn bin(name: &str) -> PathBuf {
    clis().join("node_modules/.bin").join(name)
}

/// A throwaway home for a CLI; codex refuses to put helpers under /tmp, so it is in
/// target/.
pub(crate) fn home() -> tempfile::TempDir {
    let base = crate::support::private_dir().join("vendor-homes");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

/// Points codex at `api` through CODEX_HOME/config.toml: a custom provider on loopback,
/// no analytics, no plugins (their network use), no retries.
fn with_codex(p: Project, api: &FakeOpenAi, home: &Path) -> Project {
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model_provider = \"taskie_fake\"\n[analytics]\nenabled = false\n[features]\nplugins = false\n\
             [model_providers.taskie_fake]\nname = \"taskie-fake\"\nbase_url = \"{}\"\n\
             env_key = \"TASKIE_FAKE_OPENAI_KEY\"\nwire_api = \"responses\"\nrequest_max_retries = 0\n\
             stream_max_retries = 0\n",
            api.base_url()
        ),
    )
    .unwrap();
    p.env("TASKIE_CODEX", bin("codex").to_str().unwrap())
        .env("CODEX_HOME", codex_home.to_str().unwrap())
        .env("HOME", home.to_str().unwrap())
        .env("TASKIE_FAKE_OPENAI_KEY", "dummy")
}

/// A settings home for gemini in `home`: API-key auth, no usage statistics or telemetry
/// (their network use), no update checks, one attempt.
pub fn gemini_home(home: &Path) {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(home.join("tmp")).unwrap();
    std::fs::write(
        dir.join("settings.json"),
        json!({"security":{"auth":{"selectedType":"gemini-api-key"}},
               "privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},
               "general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false,"maxAttempts":1}})
        .to_string(),
    )
    .unwrap();
}

/// Points gemini at `api`: its base URL and key by environment, API-key auth, no usage
/// statistics (their network use) and one attempt, in its own settings home.
fn with_gemini(p: Project, api: &FakeGemini, home: &Path) -> Project {
    gemini_home(home);
    p.env("TASKIE_GEMINI", bin("gemini").to_str().unwrap())
        .env("GEMINI_CLI_HOME", home.to_str().unwrap())
        .env("HOME", home.to_str().unwrap())
        .env("TMPDIR", home.join("tmp").to_str().unwrap())
        .env("GOOGLE_GEMINI_BASE_URL", &api.base_url())
        .env("GEMINI_API_KEY", "dummy")
}

fn codex_api(verdict: &'static str) -> FakeOpenAi {
    FakeOpenAi::start(move |req| {
        if !req.path.ends_with("/responses") {
            return fake_openai::Reply::Json {
                status: 404,
                body: json!({"error": {"message": "not here"}}),
            };
        }
        let answer = json!({"verdict": verdict, "summary": "The real codex CLI reviewed the plan.",
                            "findings": if verdict == "FAIL" { vec!["Say which file holds the config"] } else { vec![] }});
        fake_openai::Reply::Output {
            items: vec![fake_openai::message(&answer.to_string())],
            input_tokens: 1234,
            output_tokens: 56,
        }
    })
    .unwrap()
}

fn plan(state_extra: Value) -> Project {
    let mut state = due("plan-review");
    for (k, v) in state_extra.as_object().unwrap() {
        state[k] = v.clone();
    }
    Project::new().plan("p").state(state)
}

#[test]
fn the_real_codex_reviews_with_the_output_schema_and_taskie_writes_its_review() {
    let api = codex_api("FAIL");
    let h = home();
    let p = with_codex(
        plan(json!({"reviewers": ["codex:gpt-5-codex"]})),
        &api,
        h.path(),
    );
    let run = p.stop();
    let log = std::fs::read_dir(p.logs())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|f| f.to_string_lossy().ends_with(".log"))
        .map(|f| std::fs::read_to_string(f).unwrap())
        .unwrap_or_default();
    assert!(
        run.is_block(),
        "answer {} — reviewer log:\n{log}",
        run.stdout
    );
    let review = p.read("plan-review-1.md");
    assert!(
        review.contains("The real codex CLI reviewed the plan."),
        "{review}"
    );
    assert!(
        review.contains("- Say which file holds the config"),
        "{review}"
    );
    assert!(review.trim_end().ends_with("VERDICT: FAIL"), "{review}");
    let e = p.last_event();
    assert_eq!(
        (
            &e["verdict"],
            &e["verdict_source"],
            &e["input_tokens"],
            &e["output_tokens"]
        ),
        (
            &json!("FAIL"),
            &json!("structured_output"),
            &json!(1234),
            &json!(56)
        )
    );
    // What the real CLI sent: our model, and our schema as a strict JSON-schema format.
    let reqs = api.requests();
    let body = reqs
        .iter()
        .filter_map(|r| r.json())
        .find(|b| b.get("text").is_some())
        .expect("codex called the Responses API");
    assert_eq!(body["model"], "gpt-5-codex");
    assert_eq!(body["text"]["format"]["type"], "json_schema");
    assert_eq!(body["text"]["format"]["strict"], true);
    assert_eq!(
        body["text"]["format"]["schema"],
        serde_json::from_str::<Value>(&codex_schema()).unwrap()
    );
    assert!(
        body.to_string().contains("Plan id: p") && body.to_string().contains("read-only sandbox"),
        "the prompt reached the model"
    );
}

/// `codex exec -` reads the prompt from stdin, whole, however long.
#[test]
fn the_real_codex_reads_a_long_prompt_whole_on_stdin() {
    let api = codex_api("FAIL");
    let h = home();
    let p = with_codex(
        crate::support::long_ledger(plan(json!({"reviewers": ["codex:gpt-5-codex"]}))),
        &api,
        h.path(),
    );
    let run = p.stop();
    assert!(run.is_block(), "{}", run.stdout);
    let bodies: Vec<Value> = api.requests().iter().filter_map(|r| r.json()).collect();
    crate::support::assert_prompt_reached_the_model(&crate::support::logged_prompt(&p), &bodies);
}

/// `gemini -p ""` is headless and reads the prompt from stdin, whole, however long.
#[test]
fn the_real_gemini_reads_a_long_prompt_whole_on_stdin() {
    let api = FakeGemini::start(|_| fake_gemini::Reply::Text {
        text: "## Review\n\nRead the long ledger.\n\nVERDICT: FAIL".into(),
        prompt_tokens: 20000,
        output_tokens: 10,
    })
    .unwrap();
    let h = home();
    let p = with_gemini(
        crate::support::long_ledger(plan(json!({"reviewers": ["gemini:gemini-2.5-pro"]}))),
        &api,
        h.path(),
    );
    let run = p.stop();
    assert!(run.is_block(), "{}", run.stdout);
    assert!(p.read("plan-review-2.md").contains("Read the long ledger."));
    let bodies: Vec<Value> = api.requests().iter().filter_map(|r| r.json()).collect();
    crate::support::assert_prompt_reached_the_model(&crate::support::logged_prompt(&p), &bodies);
}

#[test]
fn a_real_codex_and_gemini_panel_passes_the_cycle_in_one_stop() {
    let codex = codex_api("PASS");
    let gemini = FakeGemini::start(|_| fake_gemini::Reply::Text {
        text: "## Review\n\nThe real gemini CLI read the plan.\n\n## Findings\n\nNone.\n\nVERDICT: PASS".into(),
        prompt_tokens: 2345,
        output_tokens: 67,
    })
    .unwrap();
    let (hc, hg) = (home(), home());
    let p = plan(
        json!({"reviewers": ["codex:gpt-5-codex", "gemini:gemini-2.5-pro"], "review_mode": "panel"}),
    );
    let p = with_gemini(with_codex(p, &codex, hc.path()), &gemini, hg.path());
    let msg = p.stop().message();
    assert!(
        msg.contains("plan-review passed (2 clean reviews in a row)"),
        "{msg}"
    );
    let review = p.read("plan-review-1.md");
    assert!(
        review.contains("The real codex CLI reviewed the plan."),
        "{review}"
    );
    assert!(
        review.contains("The real gemini CLI read the plan."),
        "{review}"
    );
    assert!(review.trim_end().ends_with("VERDICT: PASS"), "{review}");
    let e = p.last_event();
    assert_eq!(e["reviews"], 2);
    assert_eq!(e["panel"][1]["input_tokens"], 2345, "{e}");
    assert_eq!(e["panel"][1]["output_tokens"], 67, "{e}");
    let sent = gemini.requests();
    assert!(
        sent.iter().any(|r| r
            .path
            .contains("models/gemini-2.5-pro:streamGenerateContent")),
        "gemini asked our fake for the configured model: {:?}",
        sent.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
}

/// SPEC §8 with the real codex: its read-only sandbox denies a reviewer's shell command
/// that writes a file of the project, even as root, and the review goes on.
#[test]
fn the_real_codex_reviewers_shell_cannot_write_the_project() {
    let api = FakeOpenAi::start(|req| {
        let Some(body) = req.json().filter(|_| req.path.ends_with("/responses")) else {
            return fake_openai::Reply::Json {
                status: 404,
                body: json!({"error": {"message": "not here"}}),
            };
        };
        let ran = body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|i| i["type"] == "function_call_output");
        let item = if ran {
            let answer = json!({"verdict": "FAIL", "summary": "Tried to write.", "findings": ["Step 2 has no test"]});
            fake_openai::message(&answer.to_string())
        } else {
            fake_openai::function_call(
                "exec_command",
                &json!({"cmd": "echo tampered >> lib.rs"}),
                "call-1",
            )
        };
        fake_openai::Reply::Output {
            items: vec![item],
            input_tokens: 100,
            output_tokens: 10,
        }
    })
    .unwrap();
    let h = home();
    let p = with_codex(
        plan(json!({"reviewers": ["codex:gpt-5-codex"]})),
        &api,
        h.path(),
    );
    std::fs::write(p.root().join("lib.rs"), "pub fn f() {}\n").unwrap();
    crate::support::git(&p.root(), &["init", "-q"]);
    crate::support::git(&p.root(), &["add", "lib.rs"]);
    crate::support::git(&p.root(), &["commit", "-q", "-m", "start"]);
    let run = p.stop();
    assert!(run.is_block(), "the FAIL verdict stands: {}", run.stdout);
    let output: Vec<String> = api
        .requests()
        .iter()
        .filter_map(|r| r.json())
        .flat_map(|b| b["input"].as_array().cloned().unwrap_or_default())
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].to_string())
        .collect();
    assert!(
        !output.is_empty(),
        "codex ran the command and reported back"
    );
    assert_eq!(
        std::fs::read_to_string(p.root().join("lib.rs")).unwrap(),
        "pub fn f() {}\n",
        "the write was denied; codex told the model: {output:?}"
    );
    assert!(
        p.last_event().get("worktree").is_none(),
        "nothing changed: {}",
        p.last_event()
    );
}

/// SPEC §8 with the real gemini: in `--approval-mode default`, headless, the model is
/// offered reading tools only, none that writes a file or runs a shell.
#[test]
fn the_real_gemini_reviewer_is_offered_no_tool_that_writes_or_runs_commands() {
    let api = FakeGemini::start(|_| fake_gemini::Reply::Text {
        text: "## Review\n\nRead the plan.\n\nVERDICT: FAIL".into(),
        prompt_tokens: 100,
        output_tokens: 10,
    })
    .unwrap();
    let h = home();
    let p = with_gemini(
        plan(json!({"reviewers": ["gemini:gemini-2.5-pro"]})),
        &api,
        h.path(),
    );
    let run = p.stop();
    assert!(run.is_block(), "{}", run.stdout);
    let offered: Vec<String> = api
        .requests()
        .iter()
        .filter_map(|r| r.json())
        .flat_map(|b| b["tools"].as_array().cloned().unwrap_or_default())
        .flat_map(|t| {
            t["functionDeclarations"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|d| d["name"].as_str().map(str::to_string))
        .collect();
    assert!(
        offered.iter().any(|t| t == "read_file"),
        "gemini offers its reading tools: {offered:?}"
    );
    for t in &offered {
        assert!(
            !["write", "replace", "edit", "shell"]
                .iter()
                .any(|w| t.contains(w)),
            "{t} writes or runs commands; offered: {offered:?}"
        );
    }
}
