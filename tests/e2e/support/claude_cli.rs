//! The real Claude Code CLI for the end-to-end tests: the pinned version from the npm
//! registry, installed once into a cache directory outside the clone (so repeated runs
//! on one machine reuse it). If it cannot be installed the tests fail and say why; they
//! are never skipped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The version the end-to-end tests and docs/claude-code.md are about.
pub const VERSION: &str = "2.1.330";

/// Where the real CLIs are installed: `TASKIE_E2E_CACHE`, else `~/.cache/taskie-e2e`,
/// outside the clone so that later runs on the same machine reuse them.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("TASKIE_E2E_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
    home.join(".cache/taskie-e2e")
}

/// The native `claude` binary of the pinned version, installed on first use.
/// `TASKIE_E2E_CLAUDE` names an existing binary instead (it must be the pinned version).
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let path = match std::env::var_os("TASKIE_E2E_CLAUDE").filter(|p| !p.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => install(&cache_dir().join(format!("claude-code-{VERSION}"))),
        };
        let version = Command::new(&path)
            .arg("--version")
            .env_remove("CLAUDECODE")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", path.display()));
        let said = String::from_utf8_lossy(&version.stdout);
        assert!(
            said.contains(VERSION),
            "{} says it is {said:?}; the end-to-end tests need Claude Code {VERSION}",
            path.display()
        );
        path
    })
}

/// `npm install` of the pinned package into `dir`, under a lock so parallel test
/// processes install it once.
fn install(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir)
        .unwrap_or_else(|e| panic!("cannot create the CLI cache {}: {e}", dir.display()));
    let lock = std::fs::File::create(dir.join(".install-lock")).expect("install lock file");
    lock.lock().expect("lock the CLI cache");
    if let Some(found) = find(dir) {
        return found;
    }
    let package = format!("@anthropic-ai/claude-code@{VERSION}");
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .arg(&package)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "the end-to-end tests need npm to install {package}, and npm could not be started \
                 ({e}); install Node.js and npm"
            )
        });
    assert!(
        out.status.success(),
        "npm install {package} failed (the end-to-end tests need the real CLI):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    find(dir).unwrap_or_else(|| {
        panic!(
            "npm installed {package} into {} but no native claude binary was found in it",
            dir.display()
        )
    })
}

/// The native binary: the package's `bin/claude.exe` (linked by its postinstall), else
/// the platform package's `claude` when install scripts did not run.
fn find(dir: &Path) -> Option<PathBuf> {
    let scope = dir.join("node_modules/@anthropic-ai");
    let main = scope.join("claude-code/bin/claude.exe");
    let runs = |p: &Path| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if runs(&main) {
        return Some(main);
    }
    std::fs::read_dir(&scope)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("claude-code-"))
        .map(|e| e.path().join("claude"))
        .find(|p| runs(p))
}

/// Signs the CLI in as a subscriber (OAuth credentials in `<home>/.claude`, no API key),
/// the only sign-in for which it reports a usage limit with its reset.
pub fn sign_in_with_a_subscription(home: &Path) {
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/.credentials.json"),
        r#"{"claudeAiOauth":{"accessToken":"sk-ant-oat01-test","refreshToken":"sk-ant-ort01-test","expiresAt":4102444800000,"scopes":["user:inference","user:profile"],"subscriptionType":"max"}}"#,
    )
    .unwrap();
}
