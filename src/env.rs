//! Every environment variable taskie reads, in one table: its name, what it means, its
//! default, and whether `taskie-hook --help` lists it. The only module that reads the
//! environment (a leaf: it imports nothing of ours), so a variable is documented where it
//! is read, and the help cannot miss one.

use std::ffi::OsString;

/// A variable taskie reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum Var {
    Plan,
    Reviewer,
    Codex,
    Gemini,
    ReviewTimeout,
    BlockStyle,
    Client,
    BlockCap,
    HookSkip,
    /// Pushing is opt-in: `taskie push` pushes only when this is on.
    Push,
    ClaudeProjectDir,
    ClaudeSessionId,
    CodexThreadId,
    /// Set by Claude Code in the agent's shell: a command run there speaks to the agent.
    ClaudeCode,
    /// Set by Gemini CLI in the agent's shell (which is a terminal there).
    GeminiCli,
    GeminiProjectDir,
    PluginRoot,
    NoColor,
    Term,
    XdgCacheHome,
    Home,
    /// Where the dry run looks for a reviewer program, as the spawn would.
    Path,
    /// The agent program `taskie run` starts for each task (SPEC §23).
    Agent,
    /// `<run>:<task>`: set by `taskie run` for the sessions it starts.
    Run,
    /// Where `taskie run` puts its worktrees.
    XdgDataHome,
    /// Codex's home, whose config.toml `taskie run --agent codex` records its hook's trust in.
    CodexHome,
    /// Gemini's system settings, which `taskie run --agent gemini` keeps in a lane's own.
    GeminiSystemSettings,
    /// The user's notifier command (SPEC §24, `store/notify.rs`).
    Notify,
    /// Seconds a notifier may run.
    NotifyTimeout,
    /// Tests only: kill `taskie run` at a journal step (`store/run.rs`).
    TestKillAt,
    /// Test builds only: hold the hook at a named point (`store/atomic.rs`).
    TestPauseAt,
    /// Test builds only: the time (Unix seconds) the usage-limit pause takes as now
    /// (`clock.rs`), so a test reaches a reset time without sleeping.
    TestNow,
    /// Test builds only: make a `taskie run` lane's thread panic (`commands/run/driver.rs`).
    TestPanicLane,
}

impl Var {
    pub const ALL: &[Var] = <Var as strum::VariantArray>::VARIANTS;

    pub fn name(self) -> &'static str {
        match self {
            Var::Plan => "TASKIE_PLAN",
            Var::Reviewer => "TASKIE_REVIEWER",
            Var::Codex => "TASKIE_CODEX",
            Var::Gemini => "TASKIE_GEMINI",
            Var::ReviewTimeout => "TASKIE_REVIEW_TIMEOUT",
            Var::BlockStyle => "TASKIE_BLOCK_STYLE",
            Var::Client => "TASKIE_CLIENT",
            Var::BlockCap => "TASKIE_BLOCK_CAP",
            Var::HookSkip => "TASKIE_HOOK_SKIP",
            Var::Push => "TASKIE_PUSH",
            Var::ClaudeProjectDir => "CLAUDE_PROJECT_DIR",
            Var::ClaudeSessionId => "CLAUDE_CODE_SESSION_ID",
            Var::CodexThreadId => "CODEX_THREAD_ID",
            Var::ClaudeCode => "CLAUDECODE",
            Var::GeminiCli => "GEMINI_CLI",
            Var::GeminiProjectDir => "GEMINI_PROJECT_DIR",
            Var::PluginRoot => "TASKIE_PLUGIN_ROOT",
            Var::NoColor => "NO_COLOR",
            Var::Term => "TERM",
            Var::XdgCacheHome => "XDG_CACHE_HOME",
            Var::Home => "HOME",
            Var::Path => "PATH",
            Var::Agent => "TASKIE_AGENT",
            Var::Run => "TASKIE_RUN",
            Var::XdgDataHome => "XDG_DATA_HOME",
            Var::CodexHome => "CODEX_HOME",
            Var::GeminiSystemSettings => "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
            Var::Notify => "TASKIE_NOTIFY",
            Var::NotifyTimeout => "TASKIE_NOTIFY_TIMEOUT",
            Var::TestKillAt => "TASKIE_TEST_KILL_AT",
            Var::TestPauseAt => "TASKIE_TEST_PAUSE_AT",
            Var::TestNow => "TASKIE_TEST_NOW",
            Var::TestPanicLane => "TASKIE_TEST_PANIC_LANE",
        }
    }

    /// What it means, for the help.
    pub fn meaning(self) -> &'static str {
        match self {
            Var::Plan => "the plan to act on (like --plan)",
            Var::Reviewer => "the claude reviewer program",
            Var::Codex => "the codex reviewer program",
            Var::Gemini => "the gemini reviewer program",
            Var::ReviewTimeout => "seconds a review may take",
            Var::BlockStyle => {
                "how a block is sent to Claude Code: context (additionalContext) or decision"
            }
            Var::Client => {
                "the agent CLI calling the hook: claude, codex or gemini (default: told by the event)"
            }
            Var::BlockCap => "blocks of one session in a row before a stop is allowed",
            Var::HookSkip => {
                "set (not empty, 0 or false): do nothing (the hook sets it for the reviewer)"
            }
            Var::ClaudeProjectDir => "the project directory when the event has no cwd",
            Var::ClaudeSessionId => "the agent's session, for plan bindings (set by Claude Code)",
            Var::CodexThreadId => "the agent's session, for plan bindings (set by Codex CLI)",
            Var::ClaudeCode => {
                "set by Claude Code in the agent's shell: commands speak to the agent"
            }
            Var::GeminiCli => "set by Gemini CLI in the agent's shell: commands speak to the agent",
            Var::GeminiProjectDir => {
                "the highest directory the project is looked for in (set by Gemini CLI)"
            }
            Var::PluginRoot => {
                "the plugin's directory, for the version check (set by the launcher)"
            }
            Var::NoColor => "set and not empty: no colour",
            Var::Term => "dumb: no colour",
            Var::XdgCacheHome => "where the version notice remembers sessions",
            Var::Home => "~/.cache when XDG_CACHE_HOME is unset",
            Var::Push => "1 or true: `taskie push` pushes the agent's commits (off by default)",
            Var::Path => "where a reviewer program given by name is looked up",
            Var::Agent => {
                "the agent program taskie run starts, called as the --agent CLI is (default: that CLI)"
            }
            Var::Run => "<run>:<task>, set by taskie run for the sessions it starts",
            Var::XdgDataHome => "where taskie run keeps its worktrees (default ~/.local/share)",
            Var::CodexHome => "Codex's home (default ~/.codex), for taskie run --agent codex",
            Var::GeminiSystemSettings => {
                "Gemini's system settings file, kept in each taskie run --agent gemini lane's own"
            }
            Var::Notify => {
                "a command run (detached, JSON event on stdin) when a plan hard-stops, pauses, passes a cycle or completes; wins over `git config taskie.notify`"
            }
            Var::NotifyTimeout => "seconds a TASKIE_NOTIFY command may run",
            Var::TestKillAt => "test builds only: kill taskie run at a journal step",
            Var::TestPauseAt => "test builds only",
            Var::TestNow => "test builds only: the Unix time the usage-limit pause takes as now",
            Var::TestPanicLane => "test builds only: the task whose taskie run lane panics",
        }
    }

    /// The value used when the variable is unset or empty.
    pub fn default(self) -> Option<&'static str> {
        match self {
            Var::Reviewer => Some("claude"),
            Var::Codex => Some("codex"),
            Var::Gemini => Some("gemini"),
            Var::ReviewTimeout => Some("1500"),
            Var::BlockStyle => Some("context"),
            Var::BlockCap => Some("8"),
            Var::NotifyTimeout => Some("30"),
            _ => None,
        }
    }

    /// A numeric default as a number: the text in [`Var::default`] is the one place each
    /// default is written (`every_numeric_default_is_a_number` holds this to a number).
    pub fn default_number(self) -> u64 {
        self.default().and_then(|d| d.parse().ok()).unwrap_or(0)
    }

    /// Read only by test builds, for the tests: not for users, nor in their docs.
    fn test_only(self) -> bool {
        matches!(
            self,
            Var::TestPauseAt | Var::TestNow | Var::TestPanicLane | Var::TestKillAt
        )
    }

    /// Listed by `taskie-hook --help` (what `taskie run` alone reads is in docs/run.md;
    /// every variable a user may set is in docs/configuration.md).
    fn in_help(self) -> bool {
        !self.test_only()
            && !matches!(
                self,
                Var::Home
                    | Var::Path
                    | Var::Agent
                    | Var::XdgDataHome
                    | Var::CodexHome
                    | Var::GeminiSystemSettings
                    | Var::NoColor
                    | Var::Term
                    | Var::ClaudeCode
                    | Var::GeminiCli
            )
    }

    // The readers. Only the entry points call them (`cli.rs`, `hook/settings.rs`,
    // `commands/settings.rs`), which resolve a process's settings once and pass them down;
    // `the_environment_is_read_only_where_a_process_is_entered` holds every other file to
    // that, by these names.

    /// The value, when set and not empty.
    pub fn env_value(self) -> Option<String> {
        std::env::var(self.name()).ok().filter(|v| !v.is_empty())
    }

    /// The raw value, when set and not empty (paths need not be UTF-8).
    pub fn env_value_os(self) -> Option<OsString> {
        std::env::var_os(self.name()).filter(|v| !v.is_empty())
    }

    /// The raw value, set or not, as the variable holds it (for values whose emptiness
    /// means something, such as `TASKIE_HOOK_SKIP=`).
    pub fn env_raw(self) -> Option<OsString> {
        std::env::var_os(self.name())
    }

    /// The value, else the default.
    pub fn env_value_or_default(self) -> Option<OsString> {
        self.env_value_os()
            .or_else(|| self.default().map(OsString::from))
    }
}

/// Test builds only: the `TASKIE_TEST_*` switches, read once per process, the first time
/// one is asked for. They are the one deliberate exception to "read where a process is
/// entered": they arm fault points deep in the store (every atomic write, the run's
/// journal, the clock), and passing them down would put test-only parameters into the
/// signatures a release build compiles. A release build has no such code
/// (docs/architecture.md).
#[cfg(debug_assertions)]
#[derive(Debug, Default)]
pub struct TestSwitches {
    /// `TASKIE_TEST_PAUSE_AT`: comma-separated directives (`store/atomic.rs`).
    pub pause_at: Option<String>,
    /// `TASKIE_TEST_NOW`: the Unix time the usage-limit pause takes as now (`clock.rs`).
    pub now: Option<i64>,
    /// `TASKIE_TEST_KILL_AT`: where `taskie run`'s driver kills itself (`store/run.rs`).
    pub kill_at: Option<String>,
    /// `TASKIE_TEST_PANIC_LANE`: the task whose lane panics (`commands/run/driver.rs`).
    pub panic_lane: Option<String>,
}

/// The switches of this process (see [`TestSwitches`]).
#[cfg(debug_assertions)]
pub fn test_switches() -> &'static TestSwitches {
    static SWITCHES: std::sync::OnceLock<TestSwitches> = std::sync::OnceLock::new();
    SWITCHES.get_or_init(|| TestSwitches {
        pause_at: Var::TestPauseAt
            .env_raw()
            .map(|v| v.to_string_lossy().into_owned()),
        now: Var::TestNow
            .env_value()
            .and_then(|t| t.trim().parse::<i64>().ok()),
        kill_at: Var::TestKillAt.env_value(),
        panic_lane: Var::TestPanicLane.env_value(),
    })
}

/// The `Environment:` section of `taskie-hook --help`, generated from the table.
pub fn help() -> String {
    let vars: Vec<Var> = Var::ALL.iter().copied().filter(|v| v.in_help()).collect();
    let width = vars.iter().map(|v| v.name().len()).max().unwrap_or(0);
    let mut out = String::from("Environment:\n");
    for v in vars {
        let default = v
            .default()
            .map(|d| format!(" (default: {d})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {:width$}  {}{default}\n",
            v.name(),
            v.meaning()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_numeric_default_is_a_number() {
        for v in [Var::ReviewTimeout, Var::BlockCap] {
            assert!(v.default_number() > 0, "{}", v.name());
            assert_eq!(Some(v.default_number().to_string().as_str()), v.default());
        }
    }

    #[test]
    fn every_variable_has_a_distinct_name_and_a_meaning() {
        let mut names: Vec<&str> = Var::ALL.iter().map(|v| v.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Var::ALL.len());
        assert!(Var::ALL.iter().all(|v| !v.meaning().is_empty()));
    }

    /// The doc a user reads has every variable either binary reads (test-only ones
    /// aside), with the table's default where it has one, so neither can drift.
    #[test]
    fn every_variable_a_user_can_set_has_its_row_and_default_in_the_configuration_doc() {
        let doc = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/configuration.md"
        ))
        .unwrap();
        for v in Var::ALL.iter().filter(|v| !v.test_only()) {
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| `{}` |", v.name())))
                .unwrap_or_else(|| panic!("docs/configuration.md has no row for {}", v.name()));
            if let Some(d) = v.default() {
                let column = row.split('|').nth(2).unwrap().trim();
                assert_eq!(column, format!("`{d}`"), "{}'s default: {row}", v.name());
            }
        }
    }

    #[test]
    fn the_help_lists_the_reviewer_programs_and_the_block_style() {
        let h = help();
        for name in [
            "TASKIE_CODEX",
            "TASKIE_GEMINI",
            "TASKIE_BLOCK_STYLE",
            "TASKIE_PLAN",
        ] {
            assert!(h.contains(name), "{h}");
        }
        assert!(!h.contains("TASKIE_TEST_PAUSE_AT"));
    }
}
