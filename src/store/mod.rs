//! The `.taskie` directory on disk: finding the project, selecting a plan, reading a plan
//! snapshot, the atomic write, the plan lock, the event log and the diagnostics file.
//! Depends on `model` only.

pub mod atomic;
pub mod blocks;
pub mod diagnostics;
pub mod event_log;
pub mod fs;
pub mod git;
pub mod lock;
pub mod notify;
pub mod project;
pub mod run;
pub mod scan;
pub mod select;
pub mod sessions;
pub mod snapshot;
