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
//! Unix only (`guardian/unix.rs`). On Windows a Job Object that kills its processes when
//! its last handle closes does the same for the whole tree (`process/windows.rs`).

use std::ffi::OsString;

#[cfg(unix)]
#[path = "guardian/unix.rs"]
mod os;
#[cfg(windows)]
#[path = "guardian/windows.rs"]
mod os;

#[cfg(unix)]
pub(crate) use os::Guardian;
pub use os::serve;
#[cfg(all(test, unix))]
pub(crate) use os::tests;

/// The first argument that makes `taskie-hook` (or `taskie`) a guardian; never typed by
/// a person, so it is hidden from `--help`.
pub const ROLE_ARG: &str = "--taskie-reviewer-guardian";

/// How to start a guardian: a program and its arguments (and environment).
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
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
        })
    }
}
