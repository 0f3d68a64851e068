//! The guardian: what keeps a reviewer, and everything it started, from outliving a
//! `kill -9` of the hook.
//!
//! A parent-death signal (`process.rs` sets one when no guardian could start) reaches only
//! the reviewer itself; what it started (a build, a test run) would be orphaned and keep
//! running with the reviewer's permissions. So before the reviewer exists, the hook starts its own binary again in the
//! guardian role ([`ROLE_ARG`]), as the leader of a new process group, with its stdin a
//! pipe whose only write end the hook holds. The reviewer is then spawned into that group.
//! One byte on the pipe means "finished normally, exit"; end-of-file means the hook is gone
//! (the kernel closed the write end), and the guardian SIGKILLs its group: the reviewer and
//! all it started. Because the guardian exists before the reviewer, there is no instant at
//! which killing the hook leaves a reviewer process behind.
//!
//! A re-run of the binary rather than a `fork`: no `unsafe`, no descriptor-closing loop (an
//! exec'd process holds only the descriptors it was given), and nothing of the hook, its
//! plan lock included, lives on in the guardian.
//!
//! A review's guardian also **holds the files the review's outcome replaces** (the plan's
//! state.json and ledgers), open from its start, and is dismissed only when the
//! hook has answered ([`keep`], [`dismiss_kept`]). Replacing a file frees the old one's
//! blocks, and on a file system mounted with `discard` (common on cloud disks) that free
//! waits for the device: 70 µs per file where it costs 4 µs without (docs/performance.md).
//! Held open elsewhere, the old file is freed when the guardian exits, after the hook.

//!
//! Unix only (`guardian/unix.rs`). On Windows a Job Object that kills its processes when
//! its last handle closes does the same for the whole tree (`process/windows.rs`), and a
//! file held open there would make the replacement of that file fail, so nothing is held.

use std::ffi::OsString;
use std::path::PathBuf;

#[cfg(unix)]
#[path = "guardian/unix.rs"]
mod os;
#[cfg(windows)]
#[path = "guardian/windows.rs"]
mod os;

#[cfg(all(test, unix))]
pub(crate) use os::tests;
#[cfg(unix)]
pub(crate) use os::{Guardian, keep};
pub use os::{dismiss_kept, serve};

/// The first argument that makes `taskie-hook` (or `taskie`) a guardian; never typed by
/// a person, so it is hidden from `--help`.
pub const ROLE_ARG: &str = "--taskie-reviewer-guardian";

/// How to start a guardian: a program and its arguments (and environment).
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    /// Files the guardian holds open until it is dismissed, passed after `args`. A
    /// guardian that holds files is kept past the reviewer's end ([`keep`]).
    pub hold: Vec<PathBuf>,
}

impl Launch {
    /// This very binary in the guardian role. On Linux through `/proc/self/exe`, which
    /// names the running binary itself even when its file is gone since (removed, or
    /// replaced by an upgrade during a session), where `current_exe` gives a path that no
    /// longer exists, or another program.
    pub fn this_binary() -> Option<Launch> {
        #[cfg(target_os = "linux")]
        let program = std::path::PathBuf::from("/proc/self/exe");
        #[cfg(not(target_os = "linux"))]
        let program = std::env::current_exe().ok()?;
        Some(Launch {
            program: program.into(),
            args: vec![ROLE_ARG.into()],
            env: Vec::new(),
            hold: Vec::new(),
        })
    }

    /// The same guardian, holding `files` as well.
    pub fn holding(mut self, files: impl IntoIterator<Item = PathBuf>) -> Launch {
        if std::env::var_os("TASKIE_MEASURE_NO_HOLD").is_some() {
            return self;
        }
        self.hold.extend(files);
        self
    }
}
