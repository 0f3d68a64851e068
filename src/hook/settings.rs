//! What the hook reads from its environment, resolved once where it is entered
//! (`taskie-hook`, `taskie hook`, `--dry-run`) and passed down, so no step of a stop reads
//! a variable of its own. The variables, their meanings and defaults are the one table of
//! `env.rs`; a value that cannot be used is named on stderr here and the default is taken.

use crate::env::Var;
use crate::hook::answer::Channel;
use crate::hook::run_mode::RunTask;
use std::path::PathBuf;

/// The hook's settings (see the module).
#[derive(Debug, Clone)]
pub struct Settings {
    /// `--plan`, else `TASKIE_PLAN`. The registered command passes no arguments and is not
    /// parsed by clap (docs/performance.md), so the variable is read here too.
    pub plan: Option<String>,
    /// `TASKIE_HOOK_SKIP`: this process runs inside a reviewer, and does nothing.
    pub skip: bool,
    /// `TASKIE_CLIENT`: the client named, overriding the event (SPEC §20).
    pub client: Option<String>,
    /// `TASKIE_PLUGIN_ROOT`: the plugin's directory, named by the launcher.
    pub plugin_root: Option<PathBuf>,
    /// taskie-hook's own cache: `$XDG_CACHE_HOME/taskie`, else `~/.cache/taskie`.
    pub cache: Option<PathBuf>,
    /// `CLAUDE_PROJECT_DIR`, else `GEMINI_PROJECT_DIR`: the highest directory the project
    /// is looked for in.
    pub ceiling: Option<PathBuf>,
    /// `TASKIE_BLOCK_CAP`: blocks of one session in a row before a stop is allowed.
    pub block_cap: u64,
    /// `TASKIE_BLOCK_STYLE`: how a block reaches Claude Code.
    pub block_style: Channel,
    /// `TASKIE_RUN`: the run and task of a session `taskie run` started.
    pub run: Option<RunTask>,
    /// The reviewer programs (`TASKIE_REVIEWER`, `TASKIE_CODEX`, `TASKIE_GEMINI`), the
    /// review's time limit (`TASKIE_REVIEW_TIMEOUT`) and `PATH`.
    pub reviewer: crate::reviewer::Config,
    /// `TASKIE_NOTIFY`, `TASKIE_NOTIFY_TIMEOUT` (SPEC §24).
    pub notify: crate::store::notify::Settings,
}

impl Settings {
    /// Reads the environment once; `plan` is the command line's `--plan`.
    pub fn resolve(plan: Option<String>) -> Settings {
        let skip = crate::store::project::inside_reviewer(Var::HookSkip.env_raw().as_deref());
        // Inside a reviewer the hook does nothing: nothing else is read, nor warned about.
        let read = |var: Var| if skip { None } else { var.env_value() };
        let read_os = |var: Var| if skip { None } else { var.env_value_os() };
        let cache = Var::XdgCacheHome
            .env_value_os()
            .map(PathBuf::from)
            .or_else(|| {
                Var::Home
                    .env_value_os()
                    .map(|h| PathBuf::from(h).join(".cache"))
            })
            .map(|c| c.join("taskie"));
        Settings {
            plan: plan.or_else(|| read(Var::Plan)),
            skip,
            client: read(Var::Client),
            plugin_root: read_os(Var::PluginRoot).map(PathBuf::from),
            cache,
            ceiling: crate::store::project::ceiling(
                Var::ClaudeProjectDir.env_value_os(),
                Var::GeminiProjectDir.env_value_os(),
            ),
            block_cap: block_cap(read(Var::BlockCap)),
            block_style: block_style(
                Var::BlockStyle
                    .env_raw()
                    .filter(|_| !skip)
                    .map(|v| v.to_string_lossy().into_owned()),
            ),
            run: read(Var::Run).and_then(|v| RunTask::parse(&v)),
            reviewer: crate::reviewer::Config::new(
                |kind| read_os(crate::reviewer::program_var(kind)),
                Var::ReviewTimeout
                    .env_raw()
                    .filter(|_| !skip)
                    .map(|v| v.to_string_lossy().into_owned()),
                Var::Path.env_raw(),
            ),
            notify: crate::store::notify::Settings::new(
                read(Var::Notify),
                read(Var::NotifyTimeout).as_deref(),
            ),
        }
    }
}

/// `TASKIE_BLOCK_CAP`, a whole number (0: never block); anything else is named on stderr
/// and the default is used.
fn block_cap(value: Option<String>) -> u64 {
    let default = Var::BlockCap.default_number();
    match value {
        None => default,
        Some(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!(
                "taskie-hook: TASKIE_BLOCK_CAP=\"{v}\" is not a whole number; using {default}"
            );
            default
        }),
    }
}

/// `TASKIE_BLOCK_STYLE`; an unknown value is named on stderr and the default is used.
fn block_style(value: Option<String>) -> Channel {
    Channel::parse(value.as_deref()).unwrap_or_else(|| {
        eprintln!(
            "taskie-hook: TASKIE_BLOCK_STYLE=\"{}\" is not `context` or `decision`; using context",
            value.unwrap_or_default()
        );
        Channel::Context
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_cap_that_is_not_a_whole_number_is_the_default() {
        assert_eq!(block_cap(None), Var::BlockCap.default_number());
        assert_eq!(block_cap(Some(" 3 ".into())), 3);
        assert_eq!(block_cap(Some("0".into())), 0);
        assert_eq!(block_cap(Some("-1".into())), Var::BlockCap.default_number());
    }

    #[test]
    fn an_unknown_block_style_is_the_context_channel() {
        assert_eq!(block_style(None), Channel::Context);
        assert_eq!(block_style(Some("decision".into())), Channel::Decision);
        assert_eq!(block_style(Some("loud".into())), Channel::Context);
    }
}
