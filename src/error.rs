//! Why a `taskie` command failed. Every command returns this one type; `cli` turns it
//! into the exit status and one line on stderr, and `continue-plan` branches on it (a
//! project without plans is a routing answer there, not a failure).

use crate::model::plan_file;
use crate::model::state::StateError;
use std::fmt;
use std::io;
use std::path::PathBuf;

#[derive(Debug)]
pub enum Error {
    /// A command line clap accepts but that makes no sense (exit status 2).
    Usage(String),
    /// No `.taskie/` directory in the starting directory or any directory above it.
    NoProject(PathBuf),
    /// The project has no plan to act on.
    NoPlan(String),
    /// `--plan` or `TASKIE_PLAN` names no usable plan.
    UnknownPlan(String),
    /// Another process holds the plan lock: the plan, and who holds it in words.
    Locked {
        plan: String,
        holder: String,
    },
    /// The plan has no state.json and the command needs one.
    NoState(String),
    /// state.json exists but cannot be used (SPEC §3); it was not modified.
    State {
        plan: String,
        error: StateError,
    },
    /// The plan directory breaks the rules of SPEC §7. `listed`: the errors were already
    /// printed one per line, so the summary does not repeat them.
    Invalid {
        plan: String,
        errors: Vec<crate::model::validate::StructureError>,
        listed: bool,
    },
    /// The state does not allow what was asked, or a value is not valid; the message
    /// says why and what would work. Nothing was written.
    Refused(String),
    Io(io::Error),
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) | Error::NoPlan(m) | Error::UnknownPlan(m) | Error::Refused(m) => {
                f.write_str(m)
            }
            Error::NoProject(dir) => write!(
                f,
                "no .taskie directory in {} or any directory above it; start a plan with /taskie:new-plan \
                 (it writes .taskie/plans/<plan-id>/plan.md), or run taskie inside the project",
                dir.display()
            ),
            Error::Locked { plan, holder } => write!(
                f,
                "plan '{plan}' is busy: {holder}; nothing was changed, try again when it has finished"
            ),
            Error::NoState(plan) => write!(
                f,
                "{} does not exist; run `taskie init {plan}` to create it",
                plan_file::rel(plan, plan_file::STATE_FILE)
            ),
            // StateError's text starts with "state.json", so the prefix makes it a path.
            Error::State { plan, error } => {
                write!(f, "{}/{}", plan_file::rel_dir(plan), error.explain(plan))
            }
            Error::Invalid {
                plan,
                errors,
                listed,
            } => {
                let n = errors.len();
                let s = if n == 1 { "" } else { "s" };
                if *listed {
                    write!(
                        f,
                        "plan '{plan}' has {n} structure error{s} (listed above); fix: {}; then run \
                         `taskie validate --plan {plan}` again",
                        crate::model::validate::fixes(plan, errors).join("; ")
                    )
                } else {
                    write!(
                        f,
                        "plan '{plan}' has {n} structure error{s}: {}; fix the files in {}/, \
                         then check with `taskie validate --plan {plan}`",
                        crate::model::validate::joined(errors),
                        plan_file::rel_dir(plan)
                    )
                }
            }
            Error::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}
