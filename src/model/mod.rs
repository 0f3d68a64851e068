//! The rules, with no I/O: phases, state.json's fields, plan file names, the task table,
//! structure validation, the review cycle and the verdict. Everything here is a pure
//! function of its arguments, so it is unit-tested in place and reused by the hook,
//! `--dry-run` and every command.

pub(crate) mod actions;
pub mod claim;
pub mod cycle;
pub(crate) mod depends;
pub mod facts;
pub mod findings;
pub(crate) mod host;
pub mod limit;
pub(crate) mod machine;
pub(crate) mod next_stop;
pub(crate) mod pause;
pub mod phase;
pub mod plan_file;
pub mod reviewers;
pub mod run;
pub(crate) mod spend;
pub mod state;
pub mod tasks;
pub(crate) mod text;
pub mod validate;
pub(crate) mod vendor;
pub mod verdict;
pub(crate) mod worktree;
