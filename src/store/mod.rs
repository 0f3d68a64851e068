//! The `.taskie` directory on disk: finding the project, selecting a plan, reading a plan
//! snapshot, the atomic write, the plan lock, the event log and the diagnostics file.
//! Depends on `model` only.

pub(crate) mod atomic;
pub(crate) mod blocks;
pub mod claims;
pub(crate) mod diagnostics;
pub(crate) mod event_log;
pub(crate) mod fs;
pub(crate) mod git;
pub mod lock;
pub(crate) mod notify;
pub mod project;
pub(crate) mod run;
pub(crate) mod scan;
pub(crate) mod select;
pub(crate) mod sessions;
pub(crate) mod snapshot;
