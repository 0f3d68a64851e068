//! The fast tier of the integration tests (`cargo test`): one crate, as `just` has, so the
//! binaries and the support code are built once. Each module is a part of the behaviour;
//! `support` is the one project builder and fake reviewer they share. Hermetic: no network,
//! no npm. The real agent CLIs and the long soaks are the slow tier, tests/e2e/main.rs.

/// This crate is the fast tier: soaks and properties run a fraction of their rounds.
const SLOW_TIER: bool = false;

mod support;

mod adversarial;
mod architecture;
mod cli;
mod cli_mark;
mod cli_routing;
mod docs_examples;
mod faults;
mod findings;
mod fleet;
mod front_door;
mod hook;
mod hosts;
mod ledgers;
mod loop_safety;
mod notify;
mod one_story;
mod pause;
mod properties;
mod reviewer;
mod reviewers;
mod run;
mod run_hooks;
mod run_watch;
mod security;
mod sessions;
mod snapshots;
mod texts;
mod workflow;
mod worktree;
