//! What the reviewers run with: the programs and the time limit (the hook's settings read
//! them where it is entered, `hook/settings.rs`), and the limits every run obeys.

use crate::env::Var;
use crate::model::reviewers::Kind;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `TASKIE_REVIEW_TIMEOUT`'s default, from the one table of variables (env.rs).
pub fn default_timeout_secs() -> u64 {
    Var::ReviewTimeout.default_number()
}
pub use crate::model::host::HOOK_TIMEOUT_SECS;
/// Enough for any real review; a runaway reviewer cannot exhaust memory.
pub const STDOUT_LIMIT: usize = 32 * 1024 * 1024;
pub const STDERR_LIMIT: usize = 1024 * 1024;
/// The claude CLI retries a failing API for about three minutes by default; a review that
/// cannot reach the API should fail within seconds, so the next stop is not held up.
pub const CLI_MAX_RETRIES: &str = "2";
/// Claude Code's variables for the session that runs the hook. A reviewer is a session of
/// its own: it must not talk to the parent's socket or bind the parent's session.
pub const PARENT_SESSION_VARS: [&str; 5] = [
    "CLAUDECODE",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_MESSAGING_SOCKET",
    "CLAUDE_CODE_MESSAGING_TOKEN",
];

/// The variable naming a kind's program (its default is the program's usual name).
pub fn program_var(kind: Kind) -> Var {
    match kind {
        Kind::Claude => Var::Reviewer,
        Kind::Codex => Var::Codex,
        Kind::Gemini => Var::Gemini,
    }
}

/// The reviewer programs and the time limit, as the environment sets them.
#[derive(Debug, Clone)]
pub struct Config {
    /// The claude reviewer (`TASKIE_REVIEWER`).
    pub claude: OsString,
    /// `TASKIE_CODEX`, `TASKIE_GEMINI` (SPEC §18).
    pub codex: OsString,
    pub gemini: OsString,
    pub timeout: Duration,
    /// `PATH`, where a program given by name is looked up, as the spawn looks it up.
    pub path: Option<OsString>,
    /// What was wrong with the values (a bad timeout), said when a review starts.
    pub warnings: Vec<String>,
}

impl Config {
    /// From the variables' values: `program(kind)` is the value of the kind's variable
    /// ([`program_var`]) when set and not empty, `timeout` `TASKIE_REVIEW_TIMEOUT` as set.
    /// A bad timeout falls back to the default with a warning, because a review should
    /// not be lost to a typo.
    pub fn new(
        program: impl Fn(Kind) -> Option<OsString>,
        timeout: Option<String>,
        path: Option<OsString>,
    ) -> Config {
        let program_of = |kind: Kind| {
            program(kind)
                .or_else(|| program_var(kind).default().map(OsString::from))
                .unwrap_or_default()
        };
        let claude = program_of(Kind::Claude);
        let mut warnings = Vec::new();
        let timeout = match timeout {
            None => Duration::from_secs(default_timeout_secs()),
            // try_from: a finite value too large for a Duration (above ~1.8e19 s) is out of
            // range, not a panic.
            Some(text) => match text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| *s > 0.0)
                .map(Duration::try_from_secs_f64)
            {
                Some(Ok(timeout)) => timeout,
                _ => {
                    warnings.push(format!(
                        "TASKIE_REVIEW_TIMEOUT=\"{text}\" is not a positive number of seconds a timer can hold; using {}",
                        default_timeout_secs()
                    ));
                    Duration::from_secs(default_timeout_secs())
                }
            },
        };
        Config {
            claude,
            codex: program_of(Kind::Codex),
            gemini: program_of(Kind::Gemini),
            timeout,
            path,
            warnings,
        }
    }

    pub fn program(&self, kind: Kind) -> &OsString {
        match kind {
            Kind::Claude => &self.claude,
            Kind::Codex => &self.codex,
            Kind::Gemini => &self.gemini,
        }
    }

    /// The file `kind`'s program would start as, for a reviewer run from `dir` (a path is
    /// taken from `dir`, a name looked up on PATH); `None` when it would not start.
    pub fn locate(&self, kind: Kind, dir: &Path) -> Option<PathBuf> {
        which::which_in(self.program(kind), self.path.as_ref(), dir).ok()
    }

    /// Said when the review may outlast the hook itself: the client would end the hook
    /// mid-review, and the review would be lost.
    pub fn timeout_warning(&self) -> Option<String> {
        let secs = self.timeout.as_secs_f64();
        (secs >= HOOK_TIMEOUT_SECS as f64).then(|| {
            format!(
                "{}={secs} is not below the hook's own timeout ({HOOK_TIMEOUT_SECS} s): the client may end the hook \
                 before a slow review finishes, and that review is lost. Set it below {HOOK_TIMEOUT_SECS} (the \
                 default is {}).",
                Var::ReviewTimeout.name(),
                default_timeout_secs()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_not_set_is_its_usual_name_and_one_set_is_taken() {
        let c = Config::new(
            |kind| (kind == Kind::Codex).then(|| OsString::from("/opt/codex")),
            None,
            None,
        );
        assert_eq!(c.claude, "claude");
        assert_eq!(c.codex, "/opt/codex");
        assert_eq!(c.gemini, "gemini");
        assert_eq!(c.timeout, Duration::from_secs(default_timeout_secs()));
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn a_timeout_that_is_not_a_positive_number_is_the_default_with_a_warning() {
        for bad in ["", "soon", "0", "-3", "1e400"] {
            let c = Config::new(|_| None, Some(bad.into()), None);
            assert_eq!(
                c.timeout,
                Duration::from_secs(default_timeout_secs()),
                "{bad}"
            );
            assert_eq!(c.warnings.len(), 1, "{bad}");
            assert!(c.warnings[0].contains("TASKIE_REVIEW_TIMEOUT"), "{bad}");
        }
        let c = Config::new(|_| None, Some(" 90.5 ".into()), None);
        assert_eq!(c.timeout, Duration::from_secs_f64(90.5));
        assert!(c.warnings.is_empty());
    }
}
