//! Linux: the reviewer's two output pipes and a pidfd, which becomes readable when the
//! leader exits, in one `poll` on the calling thread. No helper thread: on a virtual
//! machine each one costs ~50 µs to start and end (docs/performance.md).

use std::process::Child;
use std::time::Instant;

use rustix::process::Pid;

use super::{CHUNK, Capture, Heard, News, Spec, time_left};

pub(super) const AVAILABLE: bool = true;

/// Linux: the reviewer's pipes and its pidfd, polled on the calling thread.
pub(super) struct Polled {
    pipes: [Option<std::os::fd::OwnedFd>; 2],
    limits: [usize; 2],
    captures: [Capture; 2],
    /// Readable once the leader has exited; dropped then.
    exit: Option<std::os::fd::OwnedFd>,
    buf: Vec<u8>,
}

impl Polled {
    /// `None` when the kernel has no pidfd for the child (before Linux 5.3, or refused by
    /// a seccomp filter): the caller watches with threads then.
    pub(super) fn start(child: &mut Child, spec: &Spec, heard: &mut Heard) -> Option<Polled> {
        let exit = rustix::process::pidfd_open(
            Pid::from_child(child),
            rustix::process::PidfdFlags::empty(),
        )
        .ok()?;
        let pipes = [
            child.stdout.take().map(std::os::fd::OwnedFd::from),
            child.stderr.take().map(std::os::fd::OwnedFd::from),
        ];
        heard.closed = [pipes[0].is_none(), pipes[1].is_none()];
        Some(Polled {
            pipes,
            limits: [spec.stdout_limit, spec.stderr_limit],
            captures: Default::default(),
            exit: Some(exit),
            buf: vec![0; CHUNK],
        })
    }

    pub(super) fn next(&mut self, deadline: Option<Instant>, heard: &mut Heard) -> News {
        use rustix::event::{PollFd, PollFlags, Timespec};
        let Ok(left) = time_left(deadline) else {
            return News::TimedOut;
        };
        // A wait too long to express is a wait without end: the caller's deadline is
        // checked again on the next call either way.
        let timeout = left.and_then(|d| Timespec::try_from(d).ok());
        let watched = [&self.pipes[0], &self.pipes[1], &self.exit];
        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(3);
        let mut which = Vec::with_capacity(3);
        for (i, fd) in watched.iter().enumerate() {
            if let Some(fd) = fd {
                fds.push(PollFd::new(fd, PollFlags::IN));
                which.push(i);
            }
        }
        if fds.is_empty() {
            return News::Silent;
        }
        match rustix::event::poll(&mut fds, timeout.as_ref()) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => return News::Some,
            Err(_) => return News::Silent,
        }
        let ready: Vec<usize> = fds
            .iter()
            .zip(&which)
            .filter(|(fd, _)| !fd.revents().is_empty())
            .map(|(_, &i)| i)
            .collect();
        drop(fds);
        for i in ready {
            if i == 2 {
                heard.exited = Some(Ok(()));
                self.exit = None;
            } else {
                self.read(i, heard);
            }
        }
        News::Some
    }

    /// One read of a pipe `poll` found ready (so it does not block): bytes, or its end.
    fn read(&mut self, i: usize, heard: &mut Heard) {
        let Some(pipe) = &self.pipes[i] else { return };
        match rustix::io::read(pipe, &mut self.buf) {
            Ok(0) => {}
            Ok(n) => return self.captures[i].add(&self.buf[..n], self.limits[i]),
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => return,
            // Any other read error ends the stream like EOF would.
            Err(_) => {}
        }
        self.pipes[i] = None;
        heard.closed[i] = true;
    }
}

impl Polled {
    /// The captured output, stdout then stderr, each with whether it was cut.
    pub(super) fn take(&mut self) -> [(Vec<u8>, bool); 2] {
        [self.captures[0].take(), self.captures[1].take()]
    }
}
