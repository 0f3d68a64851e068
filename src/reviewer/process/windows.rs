//! Windows: the reviewer's tree is a Job Object. The reviewer is created suspended, put
//! in the job, then resumed, so everything it starts is in the job from its first
//! instruction. The job kills every process in it when its last handle closes
//! (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`), and only this process holds a handle (not
//! inheritable): whatever ends the hook, a `taskkill /f` included, ends the reviewer and
//! all it started. A console program has no TERM to catch, so a timeout kills the job at
//! once. A process handle keeps its pid reserved while open, so nothing is signalled by a
//! number that could have been reused.

use std::io;
use std::os::windows::io::{AsHandle, AsRawHandle, FromRawHandle, OwnedHandle};
use std::os::windows::process::CommandExt;
use std::process::{Child, Command, ExitStatus};

use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NO_WINDOW, CREATE_SUSPENDED, INFINITE, OpenThread, ResumeThread, THREAD_SUSPEND_RESUME,
    TerminateProcess, WaitForSingleObject,
};

use super::Spec;

/// The exit code of a process the hook killed.
const KILLED: u32 = 1;

/// The reviewer's job, or, where no job could be made, the reviewer itself.
pub(super) struct Tree {
    job: Option<OwnedHandle>,
    process: OwnedHandle,
}

/// The program to start for `spec`, and arguments before its own: an npm `.cmd` shim is
/// replaced by what it runs (`shim.rs`), looked up on the PATH the reviewer gets.
pub(super) fn program(spec: &Spec) -> (std::ffi::OsString, Vec<std::ffi::OsString>) {
    // The one read of the environment below an entry point (docs/architecture.md): the
    // PATH the child inherits, read where the child is spawned, as `Command` itself does;
    // every program this spawns (reviewers, git) is looked up on it.
    let path = spec
        .env
        .iter()
        .rev()
        .find(|(k, _)| k.eq_ignore_ascii_case("PATH"))
        .map(|(_, v)| v.clone())
        .or_else(|| crate::env::Var::Path.env_raw());
    super::shim::resolve(&spec.program, path.as_deref(), &spec.cwd)
}

/// Starts the reviewer `command()` builds, suspended, puts it in a new job, and resumes it.
pub(super) fn start(
    _spec: &Spec,
    command: impl Fn() -> io::Result<Command>,
) -> io::Result<(Child, Tree)> {
    let mut cmd = command()?;
    // No console window of its own: the hook may run without one, and each review would
    // flash one on the screen.
    cmd.creation_flags(CREATE_SUSPENDED | CREATE_NO_WINDOW);
    let mut child = cmd.spawn()?;
    let process = match child.as_handle().try_clone_to_owned() {
        Ok(p) => p,
        Err(e) => return Err(abandon(&mut child, e)),
    };
    // Without a job the reviewer still runs, killed alone on a timeout: a review is not
    // failed for what only a leftover grandchild could make worse.
    // SAFETY: both handles are open for the call (owned here).
    let job = new_job()
        .ok()
        .filter(|job| unsafe { AssignProcessToJobObject(raw(job), raw(&process)) } != 0);
    if let Err(e) = resume(child.id()) {
        return Err(abandon(&mut child, e));
    }
    Ok((child, Tree { job, process }))
}

/// A started reviewer that cannot run after all: killed and reaped, and the error given.
fn abandon(child: &mut Child, e: io::Error) -> io::Error {
    let _ = child.kill();
    let _ = child.wait();
    e
}

fn raw(h: &OwnedHandle) -> HANDLE {
    h.as_raw_handle() as HANDLE
}

/// A handle just returned by a call that creates or opens one, owned (closed on drop);
/// `None` for the failures, null or `INVALID_HANDLE_VALUE` depending on the call.
fn owned(h: HANDLE) -> Option<OwnedHandle> {
    if h.is_null() || h == INVALID_HANDLE_VALUE {
        return None;
    }
    // SAFETY: a fresh handle (the callers pass one just created or opened) that nothing
    // else owns or closes.
    Some(unsafe { OwnedHandle::from_raw_handle(h as _) })
}

/// A job that kills its processes when its last handle closes.
fn new_job() -> io::Result<OwnedHandle> {
    // SAFETY: no security attributes and no name are valid arguments.
    let job = owned(unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) })
        .ok_or_else(io::Error::last_os_error)?;
    set_kill_on_close(&job, true)?;
    Ok(job)
}

fn set_kill_on_close(job: &OwnedHandle, kill: bool) -> io::Result<()> {
    let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
    if kill {
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    }
    // SAFETY: the pointer and size describe `limits`, which outlives the call.
    let set = unsafe {
        SetInformationJobObject(
            raw(job),
            JobObjectExtendedLimitInformation,
            (&raw const limits).cast(),
            std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
        )
    };
    if set == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Resumes the threads of suspended process `pid`: its one first thread. std keeps the
/// thread's handle to itself, so the thread is found by a snapshot of the system's.
fn resume(pid: u32) -> io::Result<()> {
    // SAFETY: a snapshot of all threads needs no other argument.
    let snapshot = owned(unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) })
        .ok_or_else(io::Error::last_os_error)?;
    let mut entry = THREADENTRY32 {
        dwSize: std::mem::size_of::<THREADENTRY32>() as u32,
        ..Default::default()
    };
    let mut resumed = 0;
    let mut first = true;
    loop {
        // SAFETY: an open snapshot handle, and an entry with its size set, as both calls
        // require.
        let more = unsafe {
            if first {
                Thread32First(raw(&snapshot), &mut entry)
            } else {
                Thread32Next(raw(&snapshot), &mut entry)
            }
        };
        if more == 0 {
            break;
        }
        first = false;
        if entry.th32OwnerProcessID != pid {
            continue;
        }
        // SAFETY: opening a thread by id has no precondition; the handle is owned at once,
        // and resumed while open.
        let thread = owned(unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) });
        if let Some(thread) = thread
            && unsafe { ResumeThread(raw(&thread)) } != u32::MAX
        {
            resumed += 1;
        }
    }
    if resumed == 0 {
        return Err(io::Error::other(format!(
            "could not resume the reviewer (process {pid}) after putting it in its job"
        )));
    }
    Ok(())
}

impl Tree {
    /// Windows has no request to stop that a console program can catch: false, so the
    /// caller kills at once instead of waiting a grace period for nothing.
    pub(super) fn ask_to_stop(&self) -> bool {
        false
    }

    /// Kills every process in the job (or the reviewer alone, without one).
    pub(super) fn kill(&self) {
        // SAFETY: the handles are open while `self` lives. Errors (all already gone) are
        // of no use.
        unsafe {
            match &self.job {
                Some(job) => TerminateJobObject(raw(job), KILLED),
                None => TerminateProcess(raw(&self.process), KILLED),
            };
        }
    }

    /// The run is over: the job's handle closes without killing what the reviewer left
    /// running on purpose, as on Unix (see `run`).
    pub(super) fn finish(self) {
        if let Some(job) = &self.job {
            let _ = set_kill_on_close(job, false);
        }
    }
}

/// Something that blocks until the child has terminated, to run on a thread of its own,
/// on a handle of its own (the child's stays with `run`, which reaps it).
pub(super) fn exit_waiter(
    child: &Child,
) -> io::Result<impl FnOnce() -> io::Result<()> + Send + use<>> {
    let process = child.as_handle().try_clone_to_owned()?;
    Ok(move || {
        // SAFETY: the handle is open for the whole wait (owned by this closure).
        match unsafe { WaitForSingleObject(raw(&process), INFINITE) } {
            WAIT_OBJECT_0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    })
}

/// A file with no name: deleted when its last handle closes (the reviewer's included).
pub(super) fn anonymous_file() -> io::Result<std::fs::File> {
    tempfile::tempfile()
}

/// Windows ends processes with exit codes, never signals.
pub(super) fn signal_of(_: ExitStatus) -> Option<i32> {
    None
}

/// Nothing to restore: Windows has no SIGCHLD.
pub(crate) fn reset_child_signal() {}

#[cfg(test)]
mod tests {
    //! The programs run here are this test binary itself, in a role chosen through the
    //! environment (the `helper` test), so the tests need nothing but Windows.

    use super::super::{Ending, Spec, run};
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    use windows_sys::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };

    const ROLE: &str = "TASKIE_TEST_WINDOWS_ROLE";
    const PIDFILE: &str = "TASKIE_TEST_WINDOWS_PIDFILE";
    const HELPER: &str = "reviewer::process::os::tests::helper";

    /// This test binary, running [`helper`] as `role`.
    fn helper_spec(role: &str, pidfile: &Path, timeout: Duration) -> Spec {
        Spec {
            program: std::env::current_exe().unwrap().into(),
            args: ["--exact", HELPER, "--ignored", "--nocapture", "--quiet"]
                .into_iter()
                .map(Into::into)
                .collect(),
            cwd: std::env::temp_dir(),
            env: vec![(ROLE.into(), role.into()), (PIDFILE.into(), pidfile.into())],
            env_remove: vec![],
            stdin: vec![],
            label: "reviewer",
            timeout,
            term_grace: super::super::TERM_GRACE,
            stdout_limit: 1 << 20,
            stderr_limit: 1 << 20,
            guardian: None,
            sweep: None,
        }
    }

    /// Not a test: a program for the tests below, doing what [`ROLE`] says.
    #[test]
    #[ignore = "started by the Windows process tests"]
    fn helper() {
        let Some(role) = std::env::var_os(ROLE) else {
            return;
        };
        let pidfile = std::env::var_os(PIDFILE).unwrap();
        let pidfile = Path::new(&pidfile);
        match role.to_str().unwrap() {
            "print" => {
                println!("hello");
                eprintln!("oops");
                std::process::exit(7);
            }
            // Starts a grandchild that outlives it unless its tree is killed, then hangs.
            "hang" => {
                let grandchild = pidfile.with_extension("grandchild");
                let mut spec = helper_spec("sleep", &grandchild, Duration::ZERO);
                let mut cmd = Command::new(&spec.program);
                cmd.args(&spec.args)
                    .envs(spec.env.drain(..))
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                let mut child = cmd.spawn().unwrap();
                std::fs::write(&grandchild, child.id().to_string()).unwrap();
                // Hangs as long as the grandchild sleeps.
                let _ = child.wait();
            }
            "sleep" => std::thread::sleep(Duration::from_secs(1000)),
            // What it was started with: its pid, its arguments, what it read on stdin.
            "argv" => {
                use std::io::Read;
                let mut input = String::new();
                std::io::stdin().read_to_string(&mut input).unwrap();
                let args: Vec<String> = std::env::args().skip(1).collect();
                let said = format!("{}\n{}\n{input}", std::process::id(), args.join("\n"));
                std::fs::write(pidfile, said).unwrap();
            }
            "echo" => {
                use std::io::{Read, Write};
                let mut input = Vec::new();
                std::io::stdin().read_to_end(&mut input).unwrap();
                std::fs::write(pidfile, &input).unwrap();
                std::io::stdout().write_all(b"read").unwrap();
            }
            // The hook: runs a hanging reviewer, to be killed meanwhile.
            "hook" => {
                let _ = run(&helper_spec("hang", pidfile, Duration::from_secs(600)));
            }
            other => panic!("unknown role {other}"),
        }
    }

    fn alive(pid: u32) -> bool {
        let mut code = 0u32;
        // SAFETY: opening a process by id has no precondition; its handle, when it opened,
        // is read while open and closed once.
        let read = unsafe {
            let h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
            !h.is_null() && {
                let read = GetExitCodeProcess(h, &mut code);
                CloseHandle(h);
                read != 0
            }
        };
        read && code == STILL_ACTIVE as u32
    }

    fn gone_within(pid: u32, within: Duration) -> bool {
        let end = Instant::now() + within;
        while alive(pid) {
            if Instant::now() > end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    fn read_pid(path: &Path, within: Duration) -> u32 {
        let end = Instant::now() + within;
        loop {
            if let Ok(s) = std::fs::read_to_string(path)
                && let Ok(pid) = s.trim().parse()
            {
                return pid;
            }
            assert!(Instant::now() < end, "no pid written to {}", path.display());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn the_reviewer_s_output_and_exit_code_are_captured() {
        let dir = tempfile::tempdir().unwrap();
        let out = run(&helper_spec(
            "print",
            &dir.path().join("pid"),
            Duration::from_secs(60),
        ))
        .unwrap();
        assert_eq!(out.ending, Ending::Exited(7));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("hello"), "{stdout}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("oops"));
    }

    #[test]
    fn the_prompt_reaches_the_reviewer_whole_on_stdin() {
        let dir = tempfile::tempdir().unwrap();
        let got = dir.path().join("got");
        // Lines, quotes, a NUL, past the 32 KiB a whole Windows command line may hold.
        let mut prompt = b"line one\r\n\"quoted\" %PATH% ^&|\0\n".to_vec();
        prompt.extend((0..100_000u32).map(|i| b'a' + (i % 26) as u8));
        let mut spec = helper_spec("echo", &got, Duration::from_secs(60));
        spec.stdin = prompt.clone();
        let out = run(&spec).unwrap();
        assert_eq!(out.ending, Ending::Exited(0));
        assert!(
            std::fs::read(&got).unwrap() == prompt,
            "the prompt came back changed"
        );
    }

    #[test]
    fn a_timeout_kills_the_reviewer_and_all_it_started_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let timeout = Duration::from_secs(3);
        let out = run(&helper_spec("hang", &pidfile, timeout)).unwrap();
        assert_eq!(out.ending, Ending::TimedOut);
        let grandchild = read_pid(&pidfile.with_extension("grandchild"), Duration::ZERO);
        assert!(gone_within(out.pid, Duration::from_secs(5)), "the reviewer");
        assert!(
            gone_within(grandchild, Duration::from_secs(5)),
            "what the reviewer started"
        );
        // No grace period for a TERM that Windows does not have.
        assert!(
            out.duration < timeout + super::super::TERM_GRACE,
            "{:?}",
            out.duration
        );
    }

    #[test]
    fn the_reviewer_and_all_it_started_die_with_the_hook() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let spec = helper_spec("hook", &pidfile, Duration::ZERO);
        let mut hook = Command::new(&spec.program)
            .args(&spec.args)
            .envs(spec.env)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let grandchild = read_pid(
            &pidfile.with_extension("grandchild"),
            Duration::from_secs(60),
        );
        assert!(alive(grandchild), "started");
        // As `taskkill /f` ends a hook: no code of it runs any more.
        hook.kill().unwrap();
        hook.wait().unwrap();
        assert!(gone_within(grandchild, Duration::from_secs(5)));
    }

    /// A copy of this test binary at `to` (a link where the file system allows one).
    fn this_binary_at(to: &Path) {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let me = std::env::current_exe().unwrap();
        if std::fs::hard_link(&me, to).is_err() {
            std::fs::copy(&me, to).unwrap();
        }
    }

    /// Runs `name` (found on a PATH of `dir` alone) as the reviewer, with a prompt; gives
    /// the pid it ran as, and the arguments and stdin it got.
    fn run_shimmed(dir: &Path, name: &str) -> (u32, u32, Vec<String>, String) {
        let said = dir.join("said");
        let mut spec = helper_spec("argv", &said, Duration::from_secs(60));
        spec.program = name.into();
        spec.env.push(("PATH".into(), dir.into()));
        spec.stdin = b"line one\nline two\n".to_vec();
        let out = run(&spec).unwrap();
        assert_eq!(
            out.ending,
            Ending::Exited(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said = std::fs::read_to_string(&said).unwrap();
        let mut lines = said.lines();
        let pid = lines.next().unwrap().parse().unwrap();
        let rest: Vec<String> = lines.map(str::to_owned).collect();
        let stdin_at = rest.iter().position(|l| l == "line one").unwrap();
        (
            out.pid,
            pid,
            rest[..stdin_at].to_vec(),
            rest[stdin_at..].join("\n"),
        )
    }

    #[test]
    fn an_npm_shim_of_a_node_script_starts_node_with_the_script_and_no_cmd_exe() {
        let dir = tempfile::tempdir().unwrap();
        this_binary_at(&dir.path().join("node.exe"));
        std::fs::write(
            dir.path().join("fakecli.cmd"),
            "@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\n\
             CALL :find_dp0\r\n\r\nIF EXIST \"%dp0%\\node.exe\" (\r\n  SET \"_prog=%dp0%\\node.exe\"\r\n) ELSE (\r\n  \
             SET \"_prog=node\"\r\n)\r\n\r\nendLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & \
             \"%_prog%\"  \"%dp0%\\node_modules\\fakecli\\cli.js\" %*\r\n",
        )
        .unwrap();
        let (started, ran, args, stdin) = run_shimmed(dir.path(), "fakecli");
        assert_eq!(started, ran, "the shim's program is the process started");
        let script = dir.path().join(r"node_modules\fakecli\cli.js");
        assert_eq!(args[0], script.to_str().unwrap());
        assert_eq!(args[1..3], ["--exact", HELPER]);
        assert_eq!(stdin, "line one\nline two");
    }

    #[test]
    fn an_npm_shim_of_a_native_program_starts_the_program() {
        let dir = tempfile::tempdir().unwrap();
        this_binary_at(&dir.path().join(r"node_modules\fakecli\bin\fakecli.exe"));
        std::fs::write(
            dir.path().join("fakecli.cmd"),
            "@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\n\
             CALL :find_dp0\r\n\"%dp0%\\node_modules\\fakecli\\bin\\fakecli.exe\"   %*\r\n",
        )
        .unwrap();
        let (started, ran, args, stdin) = run_shimmed(dir.path(), "fakecli");
        assert_eq!(started, ran, "the shim's program is the process started");
        assert_eq!(args[..2], ["--exact", HELPER]);
        assert_eq!(stdin, "line one\nline two");
    }
}
