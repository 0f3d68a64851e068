//! The rules, with no I/O: phases, state.json's fields, plan file names, the task table,
//! structure validation, the review cycle and the verdict. Everything here is a pure
//! function of its arguments, so it is unit-tested in place and reused by the hook,
//! `--dry-run` and every command.

pub mod actions;
pub mod cycle;
pub mod depends;
pub mod facts;
pub mod findings;
pub mod host;
pub mod machine;
pub mod next_stop;
pub mod pause;
pub mod phase;
pub mod plan_file;
pub mod reviewers;
pub mod run;
pub mod spend;
pub mod state;
pub mod tasks;
pub mod text;
pub mod validate;
pub mod verdict;
pub mod worktree;
