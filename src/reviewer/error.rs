//! Why a reviewer run produced no usable review, in words for the messages.

use crate::model::reviewers::Kind;
use crate::reviewer::config::{STDOUT_LIMIT, program_var};
use crate::reviewer::result;
use std::ffi::OsString;
use std::fmt;
use std::time::Duration;

/// Why a reviewer run produced no usable review. A failure never blocks the agent.
#[derive(Debug)]
pub enum ReviewerError {
    Spawn(Kind, OsString, std::io::Error),
    Timeout(Duration),
    Exit(i32),
    Signal(i32),
    Reported(String),
    NoReview,
    /// Stdout is not the CLI's result object.
    NotAResult(result::Unreadable),
    /// More stdout than [`STDOUT_LIMIT`]: the result object cannot be read whole, and
    /// a verdict it held (possibly FAIL) would be lost.
    Truncated,
}

impl fmt::Display for ReviewerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReviewerError::Spawn(kind, p, e) => {
                let program = p.to_string_lossy();
                // Only a missing or unrunnable program is fixed by installing one; any
                // other cause (a full disk, too many processes) is named as it is.
                use std::io::ErrorKind::{NotFound, PermissionDenied};
                if !matches!(e.kind(), NotFound | PermissionDenied) {
                    return write!(f, "could not start `{program}` ({e})");
                }
                let var = program_var(*kind).name();
                let default = program_var(*kind).default().unwrap_or_default();
                let product = match kind {
                    Kind::Claude => "Claude Code",
                    Kind::Codex => "the Codex CLI",
                    Kind::Gemini => "the Gemini CLI",
                };
                write!(
                    f,
                    "could not start `{program}` ({e}); install {product} so `{default}` is on PATH, or set {var}"
                )
            }
            ReviewerError::Timeout(t) => {
                write!(
                    f,
                    "timed out after {} s and was stopped (TASKIE_REVIEW_TIMEOUT)",
                    t.as_secs_f64()
                )
            }
            ReviewerError::Exit(c) => write!(f, "exited with status {c}"),
            ReviewerError::Signal(s) => write!(f, "was killed by signal {s}"),
            ReviewerError::Reported(m) => write!(f, "reported an error: {m}"),
            ReviewerError::NoReview => f.write_str(
                "no review produced (no review file, and no summary or findings in its structured output)",
            ),
            ReviewerError::NotAResult(result::Unreadable::NotJson) => f.write_str(
                "printed no JSON result object (is TASKIE_REVIEWER a Claude Code CLI?)",
            ),
            ReviewerError::NotAResult(result::Unreadable::NotAnObject) => f.write_str(
                "printed JSON that is not a result object, so no verdict can be read from it",
            ),
            ReviewerError::NotAResult(result::Unreadable::Malformed(e)) => {
                write!(f, "printed a result object that could not be read ({e})")
            }
            ReviewerError::Truncated => write!(
                f,
                "printed more than the {} MiB of output the hook reads, so its result could not be read",
                STDOUT_LIMIT / (1024 * 1024)
            ),
        }
    }
}
