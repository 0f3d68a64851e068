//! The integration tests: one crate, as `just` has, so the binaries and the support
//! code are built once. Each module is a part of the behaviour; `support` is the one
//! project builder and fake reviewer they share.

mod support;

mod adversarial;
mod architecture;
mod cli;
mod cli_mark;
mod cli_routing;
mod docs_examples;
mod e2e_claude;
mod e2e_plan;
mod faults;
mod findings;
mod hook;
mod hosts;
mod hosts_e2e;
mod kill_soak;
mod loop_safety;
mod pause;
mod properties;
mod reviewer;
mod reviewers;
mod run;
mod security;
mod sessions;
mod snapshots;
mod texts;
mod vendors_e2e;
mod workflow;
