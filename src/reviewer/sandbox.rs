//! Claude Code's sandbox for the claude reviewer's shell commands (SPEC §8): whether to ask
//! for it, and what to say when the reviewer's commands ran without it.
//!
//! On Linux Claude Code confines each Bash command with bubblewrap (and routes its network
//! through socat). Measured with the pinned CLI: without `bwrap` (or `socat`) on PATH it
//! warns on stderr (`⚠ Sandbox disabled: …`) and runs the commands unconfined; with a
//! `bwrap` that cannot create its namespaces (a container without user namespaces) it
//! starts anyway and every command fails with bubblewrap's error, leaving the reviewer
//! with no shell at all. So the hook tries bubblewrap once before a claude review: where it
//! cannot start a sandbox, the reviewer runs without one, and the review says so. Either
//! way the git check before and after the review still applies.

use std::sync::OnceLock;

/// What the claude reviewer runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// Ask Claude Code for its sandbox (`sandbox.enabled`).
    pub enabled: bool,
    /// Why the reviewer's commands will run unconfined, known before it starts.
    pub unavailable: Option<String>,
}

impl Choice {
    // Only the hosts Claude Code sandboxes (Linux, macOS) ask for it.
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    const ON: Choice = Choice {
        enabled: true,
        unavailable: None,
    };

    fn off(why: impl Into<String>) -> Choice {
        Choice {
            enabled: false,
            unavailable: Some(why.into()),
        }
    }
}

/// The choice for this process, made once: a hook runs one review, a panel's claude
/// members share it. `path` is the `PATH` the reviewer gets (`Config::path`).
pub fn choice(path: Option<&std::ffi::OsStr>) -> &'static Choice {
    static CHOICE: OnceLock<Choice> = OnceLock::new();
    CHOICE.get_or_init(|| decide(path))
}

#[cfg(target_os = "macos")]
fn decide(_path: Option<&std::ffi::OsStr>) -> Choice {
    // Seatbelt is part of the system: nothing to install, nothing to try.
    Choice::ON
}

#[cfg(target_os = "linux")]
fn decide(path: Option<&std::ffi::OsStr>) -> Choice {
    // A missing bwrap or socat: Claude Code notices that itself and says why on stderr
    // (read by [`cli_warning`]); asking for the sandbox costs nothing there.
    let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
    match which::which_in("bwrap", path, &cwd) {
        Ok(bwrap) => try_bwrap(bwrap.into_os_string()),
        Err(_) => Choice::ON,
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn decide(_path: Option<&std::ffi::OsStr>) -> Choice {
    // Native Windows refuses every sandboxed command until a backend is set up by hand:
    // asking for the sandbox would leave the reviewer without a shell.
    Choice::off("Claude Code has no command sandbox on this system without setting one up")
}

/// Starts bubblewrap the way Claude Code confines a command (its own network and process
/// namespaces, a fresh /proc) around `true`. A failure is bubblewrap's
/// first line of error.
#[cfg(target_os = "linux")]
fn try_bwrap(bwrap: std::ffi::OsString) -> Choice {
    use crate::reviewer::process::{self, Ending};
    use std::ffi::OsString;
    // Not `--new-session`: the probe stays in its process group, so the guardian takes
    // it down with the hook (a probe cut off by a killed hook was seen to hang on).
    let args = [
        "--unshare-net",
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--",
        "true",
    ];
    let spec = process::Spec {
        program: bwrap,
        args: args.iter().map(OsString::from).collect(),
        cwd: "/".into(),
        env: Vec::new(),
        env_remove: Vec::new(),
        stdin: Vec::new(),
        label: "bwrap",
        timeout: std::time::Duration::from_secs(10),
        term_grace: process::TERM_GRACE,
        stdout_limit: 4096,
        stderr_limit: 4096,
        guardian: crate::reviewer::guardian::Launch::this_binary(),
        sweep: None,
    };
    let out = match process::run(&spec) {
        Ok(out) => out,
        Err(e) => return Choice::off(format!("bubblewrap (bwrap) could not be started: {e}")),
    };
    let said = String::from_utf8_lossy(&out.stderr);
    let line = said.lines().map(str::trim).find(|l| !l.is_empty());
    match (out.ending, line) {
        (Ending::Exited(0), _) => Choice::ON,
        (_, Some(line)) => Choice::off(format!("bubblewrap cannot start a sandbox here: {line}")),
        (ending, None) => Choice::off(format!(
            "bubblewrap cannot start a sandbox here ({ending:?})"
        )),
    }
}

/// The CLI's own word that it ran without its sandbox: the rest of its
/// `Sandbox disabled:` line on stderr, from the pinned version's
/// `⚠ Sandbox disabled: sandbox is enabled but dependencies are missing: …`.
pub fn cli_warning(stderr: &[u8]) -> Option<String> {
    const SAID: &str = "Sandbox disabled:";
    let text = String::from_utf8_lossy(stderr);
    text.lines().find_map(|line| {
        let at = line.find(SAID)?;
        let why = line[at + SAID.len()..].trim();
        Some(if why.is_empty() {
            "Claude Code disabled its sandbox".to_string()
        } else {
            why.to_string()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clis_warning_gives_its_reason() {
        let stderr = "\n⚠ Sandbox disabled: sandbox is enabled but dependencies are missing: bubblewrap (bwrap) not installed · install missing tools (e.g. apt install bubblewrap socat) or see https://code.claude.com/docs/en/sandboxing\n  Commands will run WITHOUT sandboxing. Network and filesystem restrictions will NOT be enforced.\n";
        assert_eq!(
            cli_warning(stderr.as_bytes()).as_deref(),
            Some(
                "sandbox is enabled but dependencies are missing: bubblewrap (bwrap) not installed · install missing tools (e.g. apt install bubblewrap socat) or see https://code.claude.com/docs/en/sandboxing"
            )
        );
        assert_eq!(cli_warning(b"some other warning\n"), None);
    }
}
