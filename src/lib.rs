//! Taskie: a stateful plan → tasks → reviewed-code workflow for Claude Code.

pub mod answer;
pub mod atomic;
pub mod cli;
pub mod clock;
pub mod decide;
pub mod diagnostics;
pub mod dryrun;
pub mod event;
pub mod events;
pub mod hook;
pub mod lock;
pub mod message;
pub mod phase;
pub mod plan;
pub mod planfile;
pub mod process;
pub mod prompt;
pub mod reviewer;
pub mod state;
pub mod tasks;
pub mod validate;
pub mod verdict;
