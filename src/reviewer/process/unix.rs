//! Unix: the reviewer's tree is its process group. Started after a [`Guardian`]
//! (`guardian.rs`), whose group it joins, so a `kill -9` of the hook takes the whole group
//! down; on Linux the reviewer also gets the parent-death signal when no guardian could
//! start. A timeout sends the group SIGTERM, then SIGKILL. The leader is watched for its
//! exit with `waitid(WNOWAIT)`, which leaves it unreaped: its pid stays reserved, so the
//! pgid the signals go to cannot be reused by an unrelated group before the last one.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};

use super::Spec;
use crate::reviewer::guardian::Guardian;

/// The reviewer's process group, and the guardian leading it if one started.
pub(super) struct Tree {
    group: Option<Pid>,
    guardian: Option<Guardian>,
}

/// The program to start for `spec`, and arguments before its own: the program as named.
pub(super) fn program(spec: &Spec) -> (&std::ffi::OsStr, [&std::ffi::OsStr; 0]) {
    (&spec.program, [])
}

/// Starts the reviewer `command()` builds, in a group of its own (with its guardian).
pub(super) fn start(
    spec: &Spec,
    command: impl Fn() -> io::Result<Command>,
) -> io::Result<(Child, Tree)> {
    // The guardian first: from here on, a kill of this process takes down whatever is in
    // its group, so there is no instant at which a reviewer could be left behind.
    let guardian = spec.guardian.as_ref().and_then(Guardian::start);
    let guarded = guardian.as_ref().and_then(Guardian::group);
    crate::store::atomic::pause_point("after-guardian-start", std::path::Path::new(spec.label));
    let child = match spawn(command()?, guarded) {
        Ok(child) => child,
        // The guardian died before the reviewer could join its group: run unguarded.
        Err(_) if guarded.is_some() => spawn(command()?, None)?,
        Err(e) => return Err(e),
    };
    let pid = child.id();
    let group = match guarded {
        Some(g) if child_group(pid) == Some(g) => Some(g),
        // Never turn a bogus pid into kill(0, …) (our own group) or kill(-1, …)
        // (everything).
        _ => i32::try_from(pid)
            .ok()
            .filter(|&p| p > 1)
            .and_then(Pid::from_raw),
    };
    Ok((child, Tree { group, guardian }))
}

/// Starts the reviewer, in process group `group` (the guardian's) or in a new one.
fn spawn(mut cmd: Command, group: Option<Pid>) -> io::Result<Child> {
    // A group of its own (with its guardian), so a timeout can signal the reviewer and
    // everything it started at once.
    cmd.process_group(group.map_or(0, Pid::as_raw_pid));
    // Guarded, the guardian already takes the reviewer down with the hook; unguarded, the
    // parent-death signal is all there is. Without a pre-exec step std can start the
    // reviewer with posix_spawn, much cheaper than a fork of the hook.
    #[cfg(target_os = "linux")]
    if group.is_none() {
        set_parent_death_signal(&mut cmd);
    }
    cmd.spawn()
}

/// The process group of `pid`, if it can be read.
fn child_group(pid: u32) -> Option<Pid> {
    let pid = Pid::from_raw(i32::try_from(pid).ok()?)?;
    rustix::process::getpgid(Some(pid)).ok()
}

/// Arranges for the child to be killed if this process dies (e.g. the hook gets `kill -9`),
/// so a reviewer can never outlive the hook unobserved.
///
/// SIGKILL rather than SIGTERM: once we are dead nobody is left to escalate, and a hung or
/// TERM-ignoring reviewer would keep editing the project forever. Limitation: only the
/// direct child gets it; its own children are orphaned (a non-cooperating grandchild
/// cannot be reached once we are gone).
#[cfg(target_os = "linux")]
fn set_parent_death_signal(cmd: &mut Command) {
    // Captured before fork: in the child, a different parent means we already died.
    let parent = rustix::process::getpid();
    let hook = move || -> io::Result<()> {
        rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
        // The parent may have died between fork and prctl; then no signal will ever come
        // (we were already reparented), so fail the exec: the child exits at once.
        if rustix::process::getppid() != Some(parent) {
            // An OS error is stored inline (no allocation), so this is fine after fork.
            return Err(rustix::io::Errno::SRCH.into());
        }
        Ok(())
    };
    // SAFETY: the closure only makes raw system calls (prctl, getppid) and does not
    // allocate, lock, or touch state shared with other threads, as required between fork
    // and exec.
    unsafe {
        cmd.pre_exec(hook);
    }
}

impl Tree {
    /// SIGTERM to every member, so a CLI can flush and exit; true: there is such a request
    /// here, worth a grace period before [`Tree::kill`].
    pub(super) fn ask_to_stop(&self) -> bool {
        self.signal(Signal::TERM);
        true
    }

    /// SIGKILL to every member.
    pub(super) fn kill(&self) {
        self.signal(Signal::KILL);
    }

    /// Errors (typically ESRCH: group empty) are ignored. The pgid cannot have been reused:
    /// the leader is only reaped after the last signal.
    fn signal(&self, sig: Signal) {
        if let Some(pid) = self.group {
            let _ = rustix::process::kill_process_group(pid, sig);
        }
    }

    /// The run is over and its leader reaped: the guardian leaves without touching the
    /// group.
    pub(super) fn finish(self) {
        if let Some(g) = self.guardian {
            g.dismiss();
        }
    }
}

/// Something that blocks until the child has terminated, without reaping it (WNOWAIT),
/// to run on a thread of its own. The actual reap happens afterwards in `run` via
/// `Child::wait`.
pub(super) fn exit_waiter(
    child: &Child,
) -> io::Result<impl FnOnce() -> io::Result<()> + Send + use<>> {
    let pid = Pid::from_child(child);
    Ok(move || {
        loop {
            match rustix::process::waitid(
                WaitId::Pid(pid),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
            ) {
                Err(rustix::io::Errno::INTR) => continue,
                r => return r.map(drop).map_err(io::Error::from),
            }
        }
    })
}

/// A file with no name, gone when its last descriptor closes. Linux: in memory, so a full
/// or read-only temporary directory does not matter.
pub(super) fn anonymous_file() -> io::Result<std::fs::File> {
    #[cfg(target_os = "linux")]
    if let Ok(fd) =
        rustix::fs::memfd_create("taskie-reviewer-prompt", rustix::fs::MemfdFlags::CLOEXEC)
    {
        return Ok(std::fs::File::from(fd));
    }
    tempfile::tempfile()
}

/// The signal that ended the process, if one did.
pub(super) fn signal_of(status: ExitStatus) -> Option<i32> {
    status.signal()
}

/// An inherited "ignore SIGCHLD" makes the kernel discard the reviewer's exit status,
/// so the hook restores the default before it could start one.
pub(crate) fn reset_child_signal() {
    // SAFETY: setting a signal disposition to SIG_DFL installs no handler code and
    // happens before this process starts any thread of its own.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
    }
}
