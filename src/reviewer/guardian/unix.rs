//! The guardian process on Unix (see `guardian.rs`).

use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::thread;

use rustix::process::Pid;

use super::Launch;

/// A running guardian, leader of the process group the reviewer joins.
pub struct Guardian {
    child: Option<Child>,
    dismiss: Option<io::PipeWriter>,
}

impl Guardian {
    /// Starts a guardian. `None` if it cannot be started; the reviewer then runs in a group
    /// of its own, unguarded (on Linux it still has the parent-death signal), which is no
    /// reason to fail a review.
    pub fn start(launch: &Launch) -> Option<Guardian> {
        // Both ends close-on-exec: the guardian gets the read end as its stdin only, and
        // the reviewer, spawned later, never inherits the write end.
        let (reader, writer) = io::pipe().ok()?;
        let child = {
            let mut cmd = Command::new(&launch.program);
            cmd.args(&launch.args)
                .envs(launch.env.iter().map(|(k, v)| (k, v)))
                .stdin(reader)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0);
            cmd.spawn().ok()?
            // `cmd`, and with it this process's copy of the read end, is dropped here: the
            // guardian must be the only reader, or it would never see end-of-file.
        };
        Some(Guardian {
            child: Some(child),
            dismiss: Some(writer),
        })
    }

    /// The process group the reviewer joins (the guardian's own).
    pub fn group(&self) -> Option<Pid> {
        let child = self.child.as_ref()?;
        Pid::from_raw(i32::try_from(child.id()).ok()?)
    }

    /// The run finished: the guardian exits without touching the group.
    pub fn dismiss(mut self) {
        if let Some(mut w) = self.dismiss.take() {
            // Fails only if the guardian is already gone (e.g. ended by a timeout kill).
            let _ = w.write_all(b"x");
        }
    }
}

impl Drop for Guardian {
    fn drop(&mut self) {
        // Without a dismissal this closes the pipe, and the guardian kills the group.
        drop(self.dismiss.take());
        if let Some(mut child) = self.child.take() {
            // Reaped on a thread: the guardian exits at once, but a wait must never block us.
            let _ = thread::Builder::new()
                .name("taskie-reap-guard".into())
                .spawn(move || child.wait());
        }
    }
}

/// The guardian role, entered from `main` when the first argument is [`super::ROLE_ARG`]:
/// waits on stdin, then exits; on end-of-file first SIGKILLs its process group. Never
/// returns.
pub fn serve() -> ! {
    // A timeout sends SIGTERM to the whole group so the reviewer can flush and exit; the
    // guardian stays to the end (the escalation's SIGKILL, or the dismissal). A flag
    // nobody reads is the safe way to say "ignore".
    let _ = signal_hook::flag::register(
        signal_hook::consts::SIGTERM,
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
    );
    let mut byte = [0u8; 1];
    let dismissed = loop {
        match io::stdin().lock().read(&mut byte) {
            Ok(0) => break false,
            Ok(_) => break true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break false,
        }
    };
    // Only a group this process leads, as the hook starts it: started by hand from a
    // shell or a script, where it is not a group leader, it must not take the caller's
    // group down with it.
    let leader = rustix::process::getpgrp() == rustix::process::getpid();
    if !dismissed && leader {
        // Our own group: the reviewer and everything it started, and this process.
        let _ = rustix::process::kill_process_group(
            rustix::process::getpgrp(),
            rustix::process::Signal::KILL,
        );
    }
    std::process::exit(0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::Launch;
    use super::*;

    /// Set in the environment of [`guardian_role`] when it is started as a guardian.
    const ROLE_ENV: &str = "TASKIE_TEST_GUARDIAN_ROLE";

    /// A guardian for unit tests: this test binary, running [`guardian_role`].
    pub(crate) fn test_launch() -> Launch {
        Launch {
            program: std::env::current_exe().unwrap().into(),
            args: [
                "--exact",
                "reviewer::guardian::os::tests::guardian_role",
                "--ignored",
                "--quiet",
            ]
            .into_iter()
            .map(Into::into)
            .collect(),
            env: vec![(ROLE_ENV.into(), "1".into())],
        }
    }

    /// Not a test: the guardian role inside the test binary (see [`test_launch`]).
    #[test]
    #[ignore = "started by the process tests as a guardian"]
    fn guardian_role() {
        if std::env::var_os(ROLE_ENV).is_some() {
            serve();
        }
    }
}
