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
pub mod env;
pub mod error;
pub mod heap;
pub mod hook;
pub mod model;
pub mod paint;
pub mod reviewer;
pub mod store;

/// musl builds only: other C libraries' allocators already take memory in large pieces.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: heap::Heap = heap::Heap::new();
