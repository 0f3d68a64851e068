//! Robust subprocess runner for the reviewer (SPEC §8, §5 step 16).
//!
//! Guarantees: no shell, stdin is the given input (then end of file) or `/dev/null`, the child runs in a process tree of its own
//! (a process group on Unix, a Job Object on Windows), output capture is bounded, the call
//! never blocks forever (every wait has a deadline), and on a timeout the whole tree is
//! terminated (on Unix TERM, then KILL after [`TERM_GRACE`]; Windows has no TERM for a
//! console program, so it is killed at once). If this process dies while the reviewer
//! runs (`kill -9` of the hook), the reviewer's whole tree dies too. How each platform
//! keeps those promises is in `process/unix.rs` and `process/windows.rs`.
//!
//! Watching the reviewer ([`Waits`]): three helper threads, two reading stdout and stderr
//! and one waiting for the leader's exit, on every platform. The leader is left unreaped
//! until the end. (A Linux watch with one `poll` over the pipes and a pidfd saved no
//! measurable share of a review and was retired: docs/performance.md.) Decision: not `wait-timeout`,
//! which reaps the leader when it returns and installs a process-wide SIGCHLD handler; an
//! unreaped leader keeps its pid, so its process group cannot be reused by an unrelated
//! one before the last signal.

use std::ffi::OsString;
use std::io::{self, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use super::guardian::Launch;
use crate::store::atomic::{STALE_TEMP_AGE, remove_stale_leftovers};

// How the reviewer's tree is kept together, ended, and outlived by nothing.
#[cfg(unix)]
#[path = "process/unix.rs"]
mod os;
#[cfg(windows)]
#[path = "process/windows.rs"]
mod os;
// What an npm `.cmd` shim starts (Windows); read on every platform by its tests.
#[cfg(any(windows, test))]
#[path = "process/shim.rs"]
mod shim;

pub(crate) use os::reset_child_signal;

/// Time the group gets between SIGTERM and SIGKILL: long enough for a CLI to flush and exit,
/// short enough to stay well inside the hook's own timeout.
pub const TERM_GRACE: Duration = Duration::from_secs(2);

/// After the main child exits, how long its descendants may keep our pipes open before we
/// treat them as stragglers and terminate the group.
pub const PIPE_GRACE: Duration = Duration::from_secs(1);

/// After SIGKILL, how long we still wait for exit/EOF. SIGKILL cannot be caught, so this only
/// matters for processes stuck in the kernel or that escaped the group; we give up rather
/// than hang.
const KILL_WAIT: Duration = Duration::from_secs(1);

/// Read chunk size for the pipe readers.
const CHUNK: usize = 64 * 1024;

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// A path, or a name looked up on PATH (by `Command`, not by a shell).
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// Added to the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    /// Removed from the inherited environment.
    pub env_remove: Vec<OsString>,
    /// What the program reads on stdin, then end of file; empty: `/dev/null`.
    pub stdin: Vec<u8>,
    /// What runs, as the test pause points name it: `reviewer`, or `git` for the hook's
    /// own git calls around a review.
    pub label: &'static str,
    pub timeout: Duration,
    /// Between asking the timed-out tree to stop and killing it, where the platform can
    /// ask: [`TERM_GRACE`] for every run Taskie makes.
    pub term_grace: Duration,
    /// Bytes of stdout kept; the rest is read and discarded.
    pub stdout_limit: usize,
    /// Bytes of stderr kept; the rest is read and discarded.
    pub stderr_limit: usize,
    /// How to start the guardian of the reviewer's process group; `None` runs unguarded.
    pub guardian: Option<Launch>,
    /// A directory to clear of the temporary files of writers killed long ago
    /// ([`remove_stale_leftovers`]) once the program runs, on the waiting thread: its
    /// wait is idle time, where a thread of its own would cost its start.
    pub sweep: Option<PathBuf>,
}

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Exited on its own with this code.
    Exited(i32),
    /// Killed by this signal number (not by us: our kills only happen on timeout).
    Signaled(i32),
    /// The deadline passed; the whole process group was terminated.
    TimedOut,
}

/// What [`run`] captured: how the process ended and its output.
#[derive(Debug, Clone)]
pub struct Captured {
    pub ending: Ending,
    pub stdout: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr: Vec<u8>,
    pub stderr_truncated: bool,
    /// The leader exited but processes it left behind still held the output pipes after
    /// [`PIPE_GRACE`], so the group was terminated (not counted as a timeout).
    pub stragglers_terminated: bool,
    /// Wall time from just before spawning until `run` returned (includes cleanup).
    pub duration: Duration,
    pub pid: u32,
}

/// Runs the program to completion or until the deadline. Err only when it cannot be started.
///
/// One exotic exception: if this process has SIGCHLD set to SIG_IGN (inherited across exec
/// from whoever started us), the kernel discards exit statuses; then the status of a child
/// that exited on its own cannot be known and that error is returned (after cleanup).
///
/// Must be called on a thread that stays alive for the whole call (it does, since the call
/// blocks): on Linux the parent-death signal is tied to the thread that forked.
pub fn run(spec: &Spec) -> io::Result<Captured> {
    let started = Instant::now();
    let (mut child, tree) = os::start(spec, || command(spec))?;
    crate::store::atomic::pause_point("after-reviewer-spawn", std::path::Path::new(spec.label));
    // The deadline starts before anything can wait.
    let deadline = Instant::now().checked_add(spec.timeout);
    let pid = child.id();

    let mut w = match Waits::start(&mut child, spec) {
        Ok(w) => w,
        Err(e) => {
            // Could not start the helper threads: don't leave the child running unobserved.
            tree.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
    if let Some(dir) = &spec.sweep {
        remove_stale_leftovers(dir, STALE_TEMP_AGE);
    }
    let mut stragglers_terminated = false;
    let timed_out = !w.wait_until(deadline, Heard::exited);
    if timed_out {
        // Always to the end, even if the leader and pipes are gone: a descendant that
        // caught SIGTERM and closed its pipes would otherwise survive the timeout.
        end_tree(&tree, &mut w, spec.term_grace, Heard::over);
    } else {
        // Descendants may still hold our pipes. Give them a short grace, never past the
        // overall deadline, then terminate the tree so the readers see EOF.
        // Decision: if the pipes close in time, leftover members are left alone. The
        // reviewer exited on its own; whatever it deliberately detached from our output
        // (e.g. a build server) is its business, as it would be under a shell.
        let grace = match (after(PIPE_GRACE), deadline) {
            (Some(g), Some(d)) => Some(g.min(d)),
            (g, d) => g.or(d),
        };
        if !w.wait_until(grace, Heard::all_closed) {
            stragglers_terminated = true;
            end_tree(&tree, &mut w, spec.term_grace, Heard::all_closed);
        }
    }

    // Signalling the tree is over; now reap the leader.
    let status = match w.heard.exited.take() {
        Some(_) => Some(child.wait()),
        None => {
            // Only reachable after a kill when the child is stuck in the kernel: reap it in
            // the background instead of hanging. If even that thread cannot be started, the
            // zombie lives until we exit, which is better than blocking.
            let _ = thread::Builder::new()
                .name("taskie-reaper".into())
                .spawn(move || child.wait());
            None
        }
    };
    let ending = if timed_out {
        Ending::TimedOut
    } else {
        match status {
            Some(Ok(s)) => ending_of(s),
            Some(Err(e)) => return Err(e),
            None => Ending::TimedOut, // unreachable: not timed out means the leader exited
        }
    };

    tree.finish();
    let [(stdout, stdout_truncated), (stderr, stderr_truncated)] = w.finish();
    Ok(Captured {
        ending,
        stdout,
        stdout_truncated,
        stderr,
        stderr_truncated,
        stragglers_terminated,
        duration: started.elapsed(),
        pid,
    })
}

/// Ends the reviewer's tree: asked to stop and given `grace` where the platform can ask,
/// then killed, waiting (bounded) until `done` holds.
fn end_tree(tree: &os::Tree, w: &mut Waits, grace: Duration, done: fn(&Heard) -> bool) {
    if tree.ask_to_stop() {
        w.wait_until(after(grace), done);
    }
    tree.kill();
    w.wait_until(after(KILL_WAIT), done);
}

/// The reviewer's command: no shell, the project as its directory, output piped.
fn command(spec: &Spec) -> io::Result<Command> {
    let (program, first_args) = os::program(spec);
    let mut cmd = Command::new(program);
    for name in &spec.env_remove {
        cmd.env_remove(name);
    }
    cmd.args(first_args)
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(input(&spec.stdin)?)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Ok(cmd)
}

/// Stdin holding `bytes`: an anonymous file already written and rewound, not a pipe, so
/// the hook never waits on a reviewer that does not read, needs no writer thread, and the
/// reader finds all of it there at once (Gemini's CLI gives up on stdin that stays empty
/// for half a second). Empty input is `/dev/null`.
fn input(bytes: &[u8]) -> io::Result<Stdio> {
    use std::io::{Seek, Write};
    if bytes.is_empty() {
        return Ok(Stdio::null());
    }
    let mut file = os::anonymous_file()?;
    file.write_all(bytes)?;
    file.rewind()?;
    Ok(Stdio::from(file))
}

/// Maps a wait status to an [`Ending`].
fn ending_of(status: ExitStatus) -> Ending {
    match (status.code(), os::signal_of(status)) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(sig)) => Ending::Signaled(sig),
        // wait() only returns for terminated children, so one of the above holds.
        (None, None) => Ending::Exited(-1),
    }
}

fn after(d: Duration) -> Option<Instant> {
    Instant::now().checked_add(d)
}

/// Bounded capture of one output stream.
#[derive(Default)]
struct Capture {
    data: Vec<u8>,
    truncated: bool,
    /// Set when `run` has taken the data; a reader thread still running (its pipe held by
    /// a process we could not kill) then stops instead of refilling a buffer nobody reads.
    abandoned: bool,
}

impl Capture {
    /// Keeps what fits under `limit` of `bytes`, noting whether anything was dropped.
    fn add(&mut self, bytes: &[u8], limit: usize) {
        let keep = bytes.len().min(limit.saturating_sub(self.data.len()));
        self.data.extend_from_slice(&bytes[..keep]);
        if keep < bytes.len() {
            self.truncated = true;
        }
    }

    fn take(&mut self) -> (Vec<u8>, bool) {
        self.abandoned = true;
        (std::mem::take(&mut self.data), self.truncated)
    }
}

fn lock(c: &Mutex<Capture>) -> MutexGuard<'_, Capture> {
    // A poisoned lock only means a reader panicked mid-append; the bytes are still valid.
    c.lock().unwrap_or_else(|e| e.into_inner())
}

/// The two output streams, in this order everywhere.
#[derive(Clone, Copy)]
enum Stream {
    Stdout = 0,
    Stderr = 1,
}

/// What `run` has heard of the reviewer so far.
#[derive(Default)]
struct Heard {
    /// The leader has terminated (not yet reaped), or waiting for it failed.
    exited: Option<io::Result<()>>,
    closed: [bool; 2],
}

impl Heard {
    fn exited(&self) -> bool {
        self.exited.is_some()
    }

    fn all_closed(&self) -> bool {
        self.closed == [true, true]
    }

    /// Exited, and nothing holds its output pipes any more.
    fn over(&self) -> bool {
        self.exited() && self.all_closed()
    }
}

/// The reviewer under watch.
struct Waits {
    heard: Heard,
    threads: Threaded,
}

/// What one wait for news brought.
enum News {
    /// Something was heard (or nothing, spuriously): look again.
    Some,
    /// The deadline passed.
    TimedOut,
    /// Nothing more can ever be heard.
    Silent,
}

impl Waits {
    /// Starts watching `child`.
    fn start(child: &mut Child, spec: &Spec) -> io::Result<Waits> {
        let mut heard = Heard::default();
        let threads = Threaded::start(child, spec, &mut heard)?;
        Ok(Waits { heard, threads })
    }

    /// Takes in news until `done` holds (true) or the deadline passes (false); `None` means
    /// no deadline. Reacts to news as it comes.
    fn wait_until(&mut self, deadline: Option<Instant>, done: impl Fn(&Heard) -> bool) -> bool {
        while !done(&self.heard) {
            match self.threads.next(deadline, &mut self.heard) {
                News::Some => {}
                News::TimedOut => return done(&self.heard),
                News::Silent => return false,
            }
        }
        true
    }

    /// The captured output, stdout then stderr, each with whether it was cut.
    fn finish(self) -> [(Vec<u8>, bool); 2] {
        let t = self.threads;
        [lock(&t.captures[0]).take(), lock(&t.captures[1]).take()]
    }
}

/// The time left until `deadline`: `Err` once it has passed, `Ok(None)` without one.
fn time_left(deadline: Option<Instant>) -> Result<Option<Duration>, ()> {
    match deadline {
        None => Ok(None),
        Some(d) => {
            let now = Instant::now();
            if now >= d { Err(()) } else { Ok(Some(d - now)) }
        }
    }
}

/// Helper threads reporting on a channel.
struct Threaded {
    rx: Receiver<Event>,
    captures: [Arc<Mutex<Capture>>; 2],
    /// All senders are gone: no further event can arrive.
    disconnected: bool,
}

enum Event {
    Exited(io::Result<()>),
    Closed(Stream),
}

impl Threaded {
    fn start(child: &mut Child, spec: &Spec, heard: &mut Heard) -> io::Result<Threaded> {
        let captures: [Arc<Mutex<Capture>>; 2] = Default::default();
        let (tx, rx) = mpsc::channel();
        let streams = [
            (
                child
                    .stdout
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
                spec.stdout_limit,
                Stream::Stdout,
            ),
            (
                child
                    .stderr
                    .take()
                    .map(|p| Box::new(p) as Box<dyn Read + Send>),
                spec.stderr_limit,
                Stream::Stderr,
            ),
        ];
        for (pipe, limit, which) in streams {
            match pipe {
                Some(p) => spawn_reader(p, limit, &captures[which as usize], &tx, which)?,
                None => heard.closed[which as usize] = true,
            }
        }
        let wait_exit = os::exit_waiter(child)?;
        let waiter = tx.clone();
        thread::Builder::new()
            .name("taskie-wait".into())
            .spawn(move || send(&waiter, Event::Exited(wait_exit())))?;
        // Only the threads hold senders now, so a disconnected channel means they are all
        // gone.
        drop(tx);
        Ok(Threaded {
            rx,
            captures,
            disconnected: false,
        })
    }

    fn next(&mut self, deadline: Option<Instant>, heard: &mut Heard) -> News {
        if self.disconnected {
            return News::Silent;
        }
        let event = match time_left(deadline) {
            Err(()) => return News::TimedOut,
            Ok(None) => self.rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Ok(Some(left)) => self.rx.recv_timeout(left),
        };
        match event {
            Ok(Event::Exited(r)) => heard.exited = Some(r),
            Ok(Event::Closed(which)) => heard.closed[which as usize] = true,
            Err(RecvTimeoutError::Timeout) => return News::TimedOut,
            // A helper thread died without reporting (a panic); waiting longer is futile.
            Err(RecvTimeoutError::Disconnected) => self.disconnected = true,
        }
        News::Some
    }
}

fn send(tx: &Sender<Event>, ev: Event) {
    // The receiver is gone only if `run` already returned; nobody needs the event then.
    let _ = tx.send(ev);
}

/// Reads a pipe to EOF on its own thread, keeping the first `limit` bytes and discarding the
/// rest, so the child never blocks on a full pipe however much it writes.
fn spawn_reader(
    mut pipe: Box<dyn Read + Send>,
    limit: usize,
    capture: &Arc<Mutex<Capture>>,
    tx: &Sender<Event>,
    which: Stream,
) -> io::Result<()> {
    let capture = Arc::clone(capture);
    let tx = tx.clone();
    thread::Builder::new()
        .name("taskie-read".into())
        .spawn(move || {
            let mut buf = vec![0u8; CHUNK];
            loop {
                let n = match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // Any other read error ends the stream like EOF would.
                    Err(_) => break,
                };
                let mut c = lock(&capture);
                if c.abandoned {
                    break;
                }
                c.add(&buf[..n], limit);
            }
            send(&tx, Event::Closed(which));
        })?;
    Ok(())
}

// The tests start programs of a Unix system (`/bin/sh`, `sleep`); Windows has its own
// in `process/windows.rs`.
#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use rustix::process::{Pid, Signal};
    use std::fs;
    use std::path::Path;

    const MIB: usize = 1024 * 1024;

    fn sh(script: &str) -> Spec {
        Spec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: std::env::temp_dir(),
            env_remove: vec![],
            env: vec![],
            stdin: vec![],
            label: "reviewer",
            timeout: Duration::from_secs(20),
            term_grace: TERM_GRACE,
            stdout_limit: MIB,
            stderr_limit: MIB,
            guardian: Some(crate::reviewer::guardian::tests::test_launch()),
            sweep: None,
        }
    }

    /// True once `pid` no longer exists. A zombie also counts as gone: it is dead, and
    /// whether it is reaped depends on the container's init, not on us.
    fn gone(pid: libc::pid_t) -> bool {
        let Some(p) = Pid::from_raw(pid) else {
            return false;
        };
        if let Err(e) = rustix::process::test_kill_process(p) {
            return e == rustix::io::Errno::SRCH;
        }
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            // The state field follows the parenthesised command name.
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
            Err(_) => true,
        }
    }

    /// Waits (bounded) for `pid` to disappear.
    fn disappears(pid: libc::pid_t, within: Duration) -> bool {
        let end = Instant::now() + within;
        while !gone(pid) {
            if Instant::now() >= end {
                return false;
            }
            thread::sleep(Duration::from_millis(20));
        }
        true
    }

    /// SIGKILLs the process on drop if it is still there, so a failing assertion does not
    /// leak a `sleep 1000`.
    struct KillOnDrop(libc::pid_t);

    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            if self.0 > 1
                && !gone(self.0)
                && let Some(p) = Pid::from_raw(self.0)
            {
                let _ = rustix::process::kill_process(p, Signal::KILL);
            }
        }
    }

    fn read_pid(path: &Path, within: Duration) -> libc::pid_t {
        let end = Instant::now() + within;
        loop {
            if let Ok(s) = fs::read_to_string(path)
                && let Ok(pid) = s.trim().parse()
            {
                return pid;
            }
            assert!(Instant::now() < end, "no pid written to {}", path.display());
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Runs `spec` and checks what it captured.
    fn each_watch(spec: &Spec, check: impl Fn(Captured)) {
        let out = run(spec).unwrap_or_else(|e| panic!("could not run the reviewer: {e}"));
        check(out);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_watch_sees_the_exit_and_both_ends_and_leaves_the_leader_unreaped() {
        let mut child = Command::new("true")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut w = Waits::start(&mut child, &sh("")).unwrap();
        let deadline = after(Duration::from_secs(10));
        assert!(
            w.wait_until(deadline, Heard::over),
            "the exit and both ends were seen"
        );
        // Seen without being reaped: a zombie, its pid reserved until `run` reaps it.
        let stat = fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
        assert!(stat.rsplit_once(") ").unwrap().1.starts_with('Z'), "{stat}");
        assert_eq!(child.wait().unwrap().code(), Some(0));
    }

    #[test]
    fn captures_stdout_and_exit_code() {
        each_watch(&sh("printf 'hello\\n'; printf oops >&2"), |out| {
            assert_eq!(out.ending, Ending::Exited(0));
            assert_eq!(out.stdout, b"hello\n");
            assert_eq!(out.stderr, b"oops");
            assert!(!out.stdout_truncated && !out.stderr_truncated);
            assert!(out.pid > 0);
        });
    }

    #[test]
    fn reports_nonzero_exit() {
        each_watch(&sh("echo partial; exit 7"), |out| {
            assert_eq!(out.ending, Ending::Exited(7));
            assert_eq!(out.stdout, b"partial\n");
        });
    }

    #[test]
    fn reports_signal_death() {
        each_watch(&sh("kill -9 $$"), |out| {
            assert_eq!(out.ending, Ending::Signaled(libc::SIGKILL));
        });
    }

    #[test]
    fn spawn_failure_is_an_error() {
        let mut spec = sh("");
        spec.program = "/nonexistent/taskie-no-such-reviewer".into();
        let err = run(&spec).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);

        spec.program = "taskie-no-such-reviewer-on-path".into();
        assert!(run(&spec).is_err());

        let mut spec = sh("true");
        spec.cwd = "/nonexistent/taskie-dir".into();
        assert!(run(&spec).is_err());
    }

    #[test]
    fn times_out_and_kills_hung_child() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        // Notes SIGTERM and carries on (its sleeps ignore it), so only the SIGKILL
        // escalation can end it.
        let termed = dir.path().join("termed");
        let mut spec = sh(&format!(
            "trap 'echo term > \"{}\"' TERM; echo $$ > '{}'; echo started; while :; do sleep 1; done",
            termed.display(),
            pidfile.display()
        ));
        spec.timeout = Duration::from_millis(300);
        // Its trap answers at once; a short grace proves the escalation as well as the
        // real one.
        spec.term_grace = Duration::from_millis(300);
        each_watch(&spec, |out| {
            let pid = read_pid(&pidfile, Duration::from_secs(1));
            let _guard = KillOnDrop(pid);
            assert_eq!(out.ending, Ending::TimedOut);
            assert_eq!(out.stdout, b"started\n");
            // TERM came first and did not end it, so the SIGKILL escalation is what did.
            assert!(termed.exists(), "the group got SIGTERM before SIGKILL");
            assert_eq!(pid as u32, out.pid);
            assert!(disappears(pid, Duration::from_secs(5)));
            fs::remove_file(&termed).unwrap();
        });
    }

    #[test]
    fn kills_hung_reviewer_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild");
        let mut spec = sh(&format!(
            "sleep 1000 & echo $! > '{}'; while :; do sleep 1; done",
            pidfile.display()
        ));
        spec.timeout = Duration::from_millis(300);
        each_watch(&spec, |out| {
            let grandchild = read_pid(&pidfile, Duration::from_secs(1));
            let _guard = KillOnDrop(grandchild);
            assert_eq!(out.ending, Ending::TimedOut);
            // Reparented to init after the kill, so allow time for it to be reaped.
            assert!(disappears(grandchild, Duration::from_secs(5)));
        });
    }

    #[test]
    fn returns_when_grandchild_holds_pipes_after_exit() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild");
        let spec = sh(&format!(
            "sleep 1000 & echo $! > '{}'; echo done; exit 0",
            pidfile.display()
        ));
        each_watch(&spec, |out| {
            let grandchild = read_pid(&pidfile, Duration::from_secs(1));
            let _guard = KillOnDrop(grandchild);
            assert_eq!(out.ending, Ending::Exited(0));
            assert_eq!(out.stdout, b"done\n");
            // It returned although the sleep held the pipes: after PIPE_GRACE the group was
            // terminated.
            assert!(out.stragglers_terminated);
            assert!(disappears(grandchild, Duration::from_secs(5)));
        });
    }

    #[test]
    fn bounds_huge_output() {
        each_watch(
            &sh("head -c 52428800 /dev/zero; echo tail >&2; exit 0"),
            |out| {
                assert_eq!(out.ending, Ending::Exited(0));
                assert!(out.stdout_truncated);
                assert_eq!(out.stdout.len(), MIB);
                assert!(out.stdout.iter().all(|&b| b == 0));
                assert_eq!(out.stderr, b"tail\n");
                assert!(!out.stderr_truncated);
            },
        );
    }

    #[test]
    fn chatty_stderr_does_not_deadlock() {
        let mut spec = sh("i=0; while [ $i -lt 10 ]; do \
             head -c 1048576 /dev/zero >&2; head -c 1048576 /dev/zero; i=$((i+1)); done");
        spec.stdout_limit = 32 * MIB;
        spec.stderr_limit = 4 * MIB;
        each_watch(&spec, |out| {
            assert_eq!(out.ending, Ending::Exited(0));
            assert_eq!(out.stdout.len(), 10 * MIB);
            assert!(!out.stdout_truncated);
            assert_eq!(out.stderr.len(), 4 * MIB);
            assert!(out.stderr_truncated);
        });
    }

    #[test]
    fn stdin_is_empty() {
        let mut spec = sh("");
        spec.program = "cat".into();
        spec.args = vec![];
        spec.timeout = Duration::from_secs(10);
        each_watch(&spec, |out| {
            assert_eq!(out.ending, Ending::Exited(0));
            assert!(out.stdout.is_empty());
        });
    }

    #[test]
    fn stdin_holds_the_input_whole_however_long_and_whatever_its_bytes() {
        // Past a pipe's buffer and an argument's limit, with a NUL and other controls.
        let mut input: Vec<u8> = b"head\0\x01\x1b[31m\n".to_vec();
        input.extend((0..300_000u32).map(|i| b'a' + (i % 26) as u8));
        input.extend_from_slice(b"\ntail\n");
        let mut spec = sh("");
        spec.program = "cat".into();
        spec.args = vec![];
        spec.stdin = input.clone();
        each_watch(&spec, |out| {
            assert_eq!(out.ending, Ending::Exited(0));
            assert!(out.stdout == input, "{} bytes back", out.stdout.len());
        });
    }

    #[test]
    fn env_is_passed() {
        let mut spec = sh(r#"printf '%s|%s' "$TASKIE_TEST_VALUE" "${PATH:+inherited}""#);
        spec.env = vec![("TASKIE_TEST_VALUE".into(), "a b=c".into())];
        let out = run(&spec).unwrap();
        assert_eq!(out.stdout, b"a b=c|inherited");
    }

    #[test]
    fn cwd_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let mut spec = sh("pwd -P");
        spec.cwd = dir.path().to_path_buf();
        let out = run(&spec).unwrap();
        let expected = dir.path().canonicalize().unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim_end(),
            expected.to_str().unwrap()
        );
    }

    #[test]
    fn limits_of_zero_keep_nothing() {
        let mut spec = sh("echo out; echo err >&2");
        spec.stdout_limit = 0;
        spec.stderr_limit = 0;
        each_watch(&spec, |out| {
            assert_eq!(out.ending, Ending::Exited(0));
            assert!(out.stdout.is_empty() && out.stdout_truncated);
            assert!(out.stderr.is_empty() && out.stderr_truncated);
        });
    }

    #[test]
    fn a_child_that_exits_at_once_is_reaped_with_its_status() {
        let mut spec = sh("");
        spec.program = "true".into();
        spec.args = vec![];
        each_watch(&spec, |out| {
            assert_eq!(out.ending, Ending::Exited(0));
            assert!(!out.stragglers_terminated, "nothing was left to terminate");
        });
    }

    const HELPER_ENV: &str = "TASKIE_TEST_PDEATH_PIDFILE";

    /// Not a test by itself: `child_dies_with_parent` re-runs the test binary with only this
    /// one selected, so `run` executes in a process the outer test can SIGKILL.
    #[test]
    #[ignore = "helper process for child_dies_with_parent"]
    fn helper_runs_child_for_parent_death() {
        let Some(pidfile) = std::env::var_os(HELPER_ENV) else {
            return;
        };
        // `exec` keeps the pid, and the death signal set in pre_exec survives exec.
        let mut spec = sh(&format!(
            "echo $$ > '{}'; exec sleep 1000",
            Path::new(&pidfile).display()
        ));
        spec.timeout = Duration::from_secs(60);
        let _ = run(&spec);
    }

    const GROUP_HELPER_ENV: &str = "TASKIE_TEST_GROUP_DEATH_PIDFILE";

    /// Not a test by itself: `grandchild_dies_with_parent` runs it in a process it kills.
    #[test]
    #[ignore = "helper process for grandchild_dies_with_parent"]
    fn helper_runs_grandchild_for_parent_death() {
        let Some(pidfile) = std::env::var_os(GROUP_HELPER_ENV) else {
            return;
        };
        // The shell stays the direct child; the sleep is a grandchild the parent-death
        // signal does not reach.
        let mut spec = sh(&format!(
            "sleep 1000 & echo $! > '{}'; wait",
            Path::new(&pidfile).display()
        ));
        spec.timeout = Duration::from_secs(60);
        let _ = run(&spec);
    }

    /// Runs one of the helper tests above in its own process, waits for the pid it writes,
    /// SIGKILLs the helper, and returns that pid.
    fn kill_helper_after_start(helper_test: &str, env: &str, pidfile: &Path) -> libc::pid_t {
        let mut helper = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", helper_test, "--nocapture", "--ignored"])
            .env(env, pidfile)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let end = Instant::now() + Duration::from_secs(10);
        let pid = loop {
            if let Ok(s) = fs::read_to_string(pidfile)
                && let Ok(pid) = s.trim().parse::<libc::pid_t>()
            {
                break Some(pid);
            }
            if Instant::now() > end || helper.try_wait().unwrap().is_some() {
                break None;
            }
            thread::sleep(Duration::from_millis(10));
        };
        helper.kill().unwrap();
        helper.wait().unwrap();
        pid.expect("helper never started its child")
    }

    #[test]
    fn grandchild_dies_with_parent() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild");
        let pid = kill_helper_after_start(
            "reviewer::process::tests::helper_runs_grandchild_for_parent_death",
            GROUP_HELPER_ENV,
            &pidfile,
        );
        let _guard = KillOnDrop(pid);
        assert!(
            disappears(pid, Duration::from_secs(5)),
            "the guardian kills the reviewer's group when its parent dies"
        );
    }

    #[test]
    fn guardian_leaves_after_a_normal_run_without_killing_detached_members() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("detached");
        // The sleep closes our pipes, so the run ends normally and it is left alone.
        let out = run(&sh(&format!(
            "sleep 1000 >/dev/null 2>&1 & echo $! > '{}'",
            pidfile.display()
        )))
        .unwrap();
        assert_eq!(out.ending, Ending::Exited(0));
        let pid = read_pid(&pidfile, Duration::from_secs(1));
        let _guard = KillOnDrop(pid);
        // The guardian is dismissed before run returns; give it ample time to misbehave.
        thread::sleep(Duration::from_millis(300));
        assert!(!gone(pid), "a dismissed guardian must not kill the group");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn child_dies_with_parent() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("child");
        let mut helper = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "reviewer::process::tests::helper_runs_child_for_parent_death",
                "--nocapture",
                "--ignored",
            ])
            .env(HELPER_ENV, &pidfile)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let end = Instant::now() + Duration::from_secs(10);
        let pid = loop {
            if let Ok(s) = fs::read_to_string(&pidfile)
                && let Ok(pid) = s.trim().parse::<libc::pid_t>()
            {
                break Some(pid);
            }
            if Instant::now() > end || helper.try_wait().unwrap().is_some() {
                break None;
            }
            thread::sleep(Duration::from_millis(10));
        };
        helper.kill().unwrap();
        helper.wait().unwrap();
        let pid = pid.expect("helper never started its child");
        let _guard = KillOnDrop(pid);
        assert!(disappears(pid, Duration::from_secs(5)));
    }
}
