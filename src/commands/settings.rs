//! What the `taskie` commands read from the environment, resolved once where a command is
//! entered (`cli.rs` calls these) and passed down as typed values, as the hook's settings
//! are (`hook/settings.rs`): [`Invocation::from_env`] for every command, then one value for
//! each subcommand that reads more (`plans`, `push`, `run`). The variables, their meanings
//! and defaults are the one table of `env.rs`.

use crate::commands::{Audience, Invocation};
use crate::env::Var;
use crate::error::Error;
use crate::paint::{Choice, Paint};
use crate::store::sessions::SessionId;
use std::io::IsTerminal;
use std::path::PathBuf;

impl Invocation {
    /// Where the command was started and what every command reads; `color` is `--color`.
    pub fn from_env(color: Choice) -> Result<Invocation, Error> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::Refused(format!("cannot read the current directory: {e}")))?;
        let inside_reviewer =
            crate::store::project::inside_reviewer(Var::HookSkip.env_raw().as_deref());
        let session = session(inside_reviewer);
        let terminal = std::io::stdout().is_terminal();
        // A terminal alone does not tell who reads (see `Audience::of`): the variables the
        // agent hosts set in the agent's shell decide first.
        let agent_host = session.is_some()
            || [Var::ClaudeCode, Var::GeminiCli, Var::Run]
                .into_iter()
                .any(|v| v.env_value().is_some())
            || inside_reviewer;
        Ok(Invocation {
            cwd,
            ceiling: crate::store::project::ceiling(
                Var::ClaudeProjectDir.env_value_os(),
                Var::GeminiProjectDir.env_value_os(),
            ),
            session,
            paint: Paint::choose(
                color,
                Var::NoColor.env_value_os().is_some(),
                Var::Term.env_value().as_deref(),
                terminal,
            ),
            audience: Audience::of(terminal, agent_host),
        })
    }
}

/// The id of the session the agent's commands run in: `CLAUDE_CODE_SESSION_ID` (Claude
/// Code), else `CODEX_THREAD_ID` (Codex CLI, the same id its Stop event sends as
/// `session_id`); Gemini CLI gives its shell none (SPEC §20). Inside a reviewer there is
/// none to bind: the reviewer's throwaway session must never take the plan it reviews.
fn session(inside_reviewer: bool) -> Option<SessionId> {
    if inside_reviewer {
        return None;
    }
    [Var::ClaudeSessionId, Var::CodexThreadId]
        .into_iter()
        .find_map(|v| v.env_value_os())
        .and_then(|id| SessionId::parse(&id.to_string_lossy()))
}

/// `taskie plans`: `TASKIE_PLAN`, the plan it marks as the one a command would act on
/// (the commands that take `--plan` get the variable through clap).
pub fn plans_default() -> Option<String> {
    Var::Plan.env_value()
}

/// `taskie push`: whether the user turned pushing on (`TASKIE_PUSH`).
pub fn push_enabled() -> bool {
    push_value_enabled(Var::Push.env_value().as_deref())
}

/// `TASKIE_PUSH`'s value says pushing is on: `1`, `true`, `yes` or `on` (any case).
fn push_value_enabled(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// What `taskie run` reads from the environment (docs/run.md).
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// `TASKIE_AGENT`: the program each session starts, instead of the CLI's own name.
    pub agent: Option<PathBuf>,
    /// `CODEX_HOME`: Codex's home, whose config.toml records the trust in the run's hook.
    pub codex_home: Option<PathBuf>,
    /// `GEMINI_CLI_SYSTEM_SETTINGS_PATH`: the system settings each Gemini lane keeps.
    pub gemini_system_settings: Option<PathBuf>,
    /// `XDG_DATA_HOME`: where the run keeps its worktrees.
    pub data_home: Option<PathBuf>,
    /// `HOME`: what the two before default to (`~/.codex`, `~/.local/share`).
    pub home: Option<PathBuf>,
    /// `TASKIE_NOTIFY`, `TASKIE_NOTIFY_TIMEOUT` (SPEC §24).
    pub notify: crate::store::notify::Settings,
}

impl RunSettings {
    pub fn from_env() -> RunSettings {
        let path = |var: Var| var.env_value_os().map(PathBuf::from);
        RunSettings {
            agent: path(Var::Agent),
            codex_home: path(Var::CodexHome),
            gemini_system_settings: path(Var::GeminiSystemSettings),
            data_home: path(Var::XdgDataHome),
            home: path(Var::Home),
            notify: crate::store::notify::Settings::new(
                Var::Notify.env_value(),
                Var::NotifyTimeout.env_value().as_deref(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushing_is_on_only_when_the_user_says_so() {
        for on in ["1", "true", "TRUE", "yes", "on", " 1 "] {
            assert!(push_value_enabled(Some(on)), "{on}");
        }
        for off in ["", "0", "false", "no", "off", "maybe"] {
            assert!(!push_value_enabled(Some(off)), "{off}");
        }
        assert!(!push_value_enabled(None));
    }
}
