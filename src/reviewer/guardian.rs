//! The guardian: what keeps a reviewer's descendants from outliving a `kill -9` of the hook.
//!
//! What it buys: the parent-death signal (set in `process.rs`) reaches only the reviewer
//! itself. What the reviewer started (a build, a test run) would be orphaned and keep
//! running, with the reviewer's permissions, after the hook is killed with a signal it
//! cannot catch. So a small forked process joins the reviewer's process group and blocks
//! reading a pipe whose only write end the hook holds. One byte means "finished normally,
//! exit"; end-of-file means the hook is gone (the kernel closed the write end), and the
//! guardian SIGKILLs the group. Plain POSIX, so it also covers systems without a
//! parent-death signal. Being in the group, it is also ended by the runner's own group kills.
//!
//! It costs one `fork` per review and the crate's only `unsafe` that is not a one-liner.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::thread;

use rustix::process::{Pid, WaitOptions};

/// A running guardian of one reviewer process group.
pub struct Guardian {
    pid: Pid,
    dismiss: Option<io::PipeWriter>,
}

impl Guardian {
    /// Starts a guardian for process group `group`. `None` if it cannot be started; the
    /// reviewer then runs unguarded (on Linux its direct child still has the parent-death
    /// signal), which is no reason to fail a review.
    ///
    /// Call it before starting any helper thread of the run, so the fork copies as few
    /// threads' worth of state as possible.
    pub fn start(group: Pid) -> Option<Guardian> {
        let group = group.as_raw_pid();
        if group <= 1 {
            return None;
        }
        // Close-on-exec, so the reviewer (already started) and anything started later
        // never inherit the write end: only this process holds it.
        let (reader, writer) = io::pipe().ok()?;
        // Only for the close loop on kernels without close_range.
        let max_fd = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .map_or(1024, |n| n.min(65_536) as RawFd);
        let rfd = reader.as_raw_fd();
        // SAFETY: after `fork` in a process that may have other threads, the child may only
        // make async-signal-safe calls. It makes only raw system calls (close_range/close,
        // setpgid, read, kill) on integers computed before the fork, with `byte` as a valid
        // one-byte buffer, and leaves with `_exit`: it never returns into Rust code that
        // could take a lock or allocate. The parent only reads the returned pid.
        let pid = unsafe {
            let pid = libc::fork();
            if pid == 0 {
                // Keep no pipe, lock or terminal of the hook open: only the read end.
                // Two close_range calls (Linux 5.9+) instead of one close per possible
                // descriptor, which costs milliseconds of CPU on every review.
                #[cfg(target_os = "linux")]
                let closed = {
                    let keep = rfd as libc::c_uint;
                    (keep == 0
                        || libc::syscall(libc::SYS_close_range, 0 as libc::c_uint, keep - 1, 0)
                            == 0)
                        && libc::syscall(libc::SYS_close_range, keep + 1, libc::c_uint::MAX, 0) == 0
                };
                #[cfg(not(target_os = "linux"))]
                let closed = false;
                if !closed {
                    for fd in (0..max_fd).filter(|&fd| fd != rfd) {
                        libc::close(fd);
                    }
                }
                // In the reviewer's group, so the runner's group kills end it too.
                libc::setpgid(0, group);
                let mut byte = 0u8;
                loop {
                    let n = libc::read(rfd, (&raw mut byte).cast(), 1);
                    if n == 0 {
                        libc::kill(-group, libc::SIGKILL);
                        break;
                    }
                    // Retry only on EINTR (an OS error is stored inline: no allocation).
                    if n > 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                        break;
                    }
                }
                libc::_exit(0)
            }
            pid
        };
        drop(reader);
        Some(Guardian {
            pid: Pid::from_raw(pid.max(0))?,
            dismiss: Some(writer),
        })
    }

    /// The run finished: the guardian exits without touching the group.
    pub fn dismiss(mut self) {
        if let Some(mut w) = self.dismiss.take() {
            // Fails only if the guardian is already gone (e.g. ended by a timeout kill).
            let _ = io::Write::write_all(&mut w, b"x");
        }
    }
}

impl Drop for Guardian {
    fn drop(&mut self) {
        // Without a dismissal this closes the pipe, and the guardian kills the group.
        drop(self.dismiss.take());
        let pid = self.pid;
        // Reaped on a thread: the guardian exits at once, but a wait must never block us.
        let _ = thread::Builder::new()
            .name("taskie-reap-guard".into())
            .spawn(move || rustix::process::waitpid(Some(pid), WaitOptions::empty()));
    }
}
