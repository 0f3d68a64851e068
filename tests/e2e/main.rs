//! The slow tier (`cargo test --locked --features e2e --test e2e`): the real pinned agent
//! CLIs (Claude Code, Codex, Gemini), installed from npm into `~/.cache/taskie-e2e` on first
//! use and pointed at fake model APIs on 127.0.0.1, the kill soaks, and every module of the
//! fast tier (tests/main.rs) again with all its rounds and property cases. `.ci/run` always
//! runs it; the fast tier never needs npm or the network.

/// This crate is the slow tier: soaks and properties run all their rounds.
const SLOW_TIER: bool = true;

mod support;

// Only here: the real CLIs and the soaks.
mod e2e_claude;
mod e2e_plan;
mod hosts_e2e;
mod kill_soak;
mod ledger_soak;
mod run_bench;
mod run_lanes;
mod vendors_e2e;

// The fast tier's modules, at full strength (`fast_tier_modules_are_all_in_the_slow_tier`).
#[path = "../adversarial.rs"]
mod adversarial;
#[path = "../architecture.rs"]
mod architecture;
#[path = "../cli.rs"]
mod cli;
#[path = "../cli_mark.rs"]
mod cli_mark;
#[path = "../cli_routing.rs"]
mod cli_routing;
#[path = "../docs_examples.rs"]
mod docs_examples;
#[path = "../faults.rs"]
mod faults;
#[path = "../findings.rs"]
mod findings;
#[path = "../fleet.rs"]
mod fleet;
#[path = "../front_door.rs"]
mod front_door;
#[path = "../hook.rs"]
mod hook;
#[path = "../hosts.rs"]
mod hosts;
#[path = "../ledgers.rs"]
mod ledgers;
#[path = "../loop_safety.rs"]
mod loop_safety;
#[path = "../notify.rs"]
mod notify;
#[path = "../one_story.rs"]
mod one_story;
#[path = "../pause.rs"]
mod pause;
#[path = "../properties.rs"]
mod properties;
#[path = "../reviewer.rs"]
mod reviewer;
#[path = "../reviewers.rs"]
mod reviewers;
#[path = "../run.rs"]
mod run;
#[path = "../run_hooks.rs"]
mod run_hooks;
#[path = "../run_watch.rs"]
mod run_watch;
#[path = "../security.rs"]
mod security;
#[path = "../sessions.rs"]
mod sessions;
#[path = "../snapshots.rs"]
mod snapshots;
#[path = "../texts.rs"]
mod texts;
#[path = "../workflow.rs"]
mod workflow;
#[path = "../worktree.rs"]
mod worktree;
