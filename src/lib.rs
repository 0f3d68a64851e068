//! Taskie: a stateful plan → tasks → reviewed-code workflow for Claude Code.
//!
//! The map (docs/architecture.md has the picture):
//! - [`model`]: the rules, pure: phases, state, plan files, tasks, validation, cycle, verdict.
//! - [`store`]: the `.taskie` directory: project, selection, snapshot, atomic write, lock, logs.
//! - [`hook`]: `taskie-hook`, the Stop hook: input, decision, messages, answer, dry run.
//! - [`reviewer`]: running the independent reviewer; only the hook calls it.
//! - [`commands`]: one file per `taskie` subcommand; never imports the hook or each other.
//! - [`cli`]: argument parsing, dispatch and exit codes for both binaries.
//!
//! Dependencies point one way: model ← store ← {hook, commands}; hook → reviewer.

pub mod cli;
pub mod clock;
pub mod commands;
pub(crate) mod env;
pub(crate) mod error;
pub mod hook;
pub mod model;
pub(crate) mod paint;
pub mod reviewer;
pub mod store;

/// musl's allocator maps and unmaps a page for nearly every new size class, which costs a
/// short-lived hook more than its own work; dlmalloc (the one std uses on wasm) takes
/// memory in large pieces (docs/performance.md has the measurement).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;
