//! Whole-process benchmark of `taskie-hook` (SPEC §16): spawns the release binary many
//! times on generated projects of 1, 200 and 2000 plans and reports wall time
//! (min / median / p90 / max), peak RSS (from `wait4`'s rusage) and the growth with the
//! number of plan files.
//!
//! `cargo bench --bench hook -- --ratios` measures the every-stop costs as ratios to a floor
//! binary instead (benches/ratios/mod.rs).
//!
//! Run: `cargo bench --bench hook` (options after `--`: `--runs N`, `--plans 1,200,2000`,
//! `--hook PATH` to measure another build of the binary, `--keep DIR` to leave the
//! generated projects in DIR, `--no-nice` to keep the normal scheduling priority).
//!
//! On a shared machine it raises its priority (nice -20, when allowed) so that other
//! work disturbs the timings less; the hook processes inherit it. When `strace` is
//! installed it also counts the system calls of one run per scenario: a number that,
//! unlike time, does not depend on what else the machine is doing.
//!
//! This file is also the fake reviewer of the review scenario: started with
//! `TASKIE_BENCH_ROLE=reviewer` it answers at once the way `claude -p --output-format json`
//! does, so its own cost is one small process start, measured separately and subtracted.
//!
//! Not a test: nothing here asserts a time. `cargo test` never runs it.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// Set in the hook's environment for the review scenario; the reviewer inherits it.
const ROLE: &str = "TASKIE_BENCH_ROLE";
/// When set, the fake reviewer writes its arguments there (NUL-separated) so the harness
/// can replay exactly the same call to measure the reviewer alone.
const RECORD: &str = "TASKIE_BENCH_RECORD";
const REVIEW_LINE: &str = "- Write your review to exactly this file, creating it: ";
const REVIEWER_ANSWER: &str = r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":1,"result":"I wrote the review.","session_id":"00000000-0000-0000-0000-000000000000","total_cost_usd":0,"structured_output":{"verdict":"FAIL"}}"#;

fn main() {
    if std::env::var_os(ROLE).is_some_and(|r| r == "reviewer") {
        fake_reviewer();
        return;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs bench targets without `--bench`: nothing to do.
        println!("hook bench: skipped (run it with `cargo bench --bench hook`)");
        return;
    }
    adopt_orphans();
    if args.iter().any(|a| a == "--ratios") {
        let r = ratios::Ratios::parse(&args);
        eprintln!("priority: {}", raise_priority());
        ratios::run(&r);
        return;
    }
    let opts = Options::parse(&args);
    run(&opts);
}

mod ratios;

// ---------------------------------------------------------------------------------------
// The fake reviewer.

fn fake_reviewer() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if let Some(record) = std::env::var_os(RECORD) {
        let mut bytes = Vec::new();
        for a in &args {
            bytes.extend_from_slice(a.as_bytes());
            bytes.push(0);
        }
        let _ = fs::write(record, bytes);
    }
    // The prompt comes on stdin, as it does to the real CLI.
    let mut prompt = String::new();
    let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut prompt);
    let path = prompt
        .lines()
        .find_map(|l| l.strip_prefix(REVIEW_LINE))
        .map(str::to_owned);
    if let Some(path) = path {
        let _ = fs::write(
            path,
            "# Review\n\n## Findings\n\n- The error message does not name the file\n\
             - Missing test for the empty case\n\nVERDICT: FAIL\n",
        );
    }
    println!("{REVIEWER_ANSWER}");
}

// ---------------------------------------------------------------------------------------
// Options.

struct Options {
    runs: usize,
    nice: bool,
    plans: Vec<usize>,
    hook: PathBuf,
    keep: Option<PathBuf>,
}

impl Options {
    fn parse(args: &[String]) -> Options {
        let mut o = Options {
            runs: 300,
            nice: true,
            plans: vec![1, 200, 2000],
            hook: PathBuf::from(env!("CARGO_BIN_EXE_taskie-hook")),
            keep: None,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || {
                it.next()
                    .unwrap_or_else(|| usage(&format!("{a} needs a value")))
                    .clone()
            };
            match a.as_str() {
                "--bench" => {}
                "--runs" => o.runs = value().parse().unwrap_or_else(|_| usage("bad --runs")),
                "--plans" => {
                    o.plans = value()
                        .split(',')
                        .map(|n| n.trim().parse().unwrap_or_else(|_| usage("bad --plans")))
                        .collect()
                }
                "--hook" => o.hook = PathBuf::from(value()),
                "--keep" => o.keep = Some(PathBuf::from(value())),
                "--no-nice" => o.nice = false,
                other => usage(&format!("unknown option {other}")),
            }
        }
        o.runs = o.runs.max(5);
        o
    }
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "hook bench: {problem}\nusage: cargo bench --bench hook -- [--runs N] [--plans 1,200,2000] [--hook PATH] [--keep DIR] [--no-nice]"
    );
    std::process::exit(2);
}

// ---------------------------------------------------------------------------------------
// Project generation.

/// The plan every scenario acts on: its files are the newest, so the hook selects it.
const TARGET: &str = "zz-target";
const FILES_PER_PLAN: usize = 12;
/// Runs before the measured ones, for the caches.
const WARMUP: usize = 10;

const PLAN_MD: &str = "# Plan: export reports as CSV\n\n## Goal\n\nUsers can download any report as a CSV \
file from the report page and from the API.\n\n## Design\n\n- A `CsvWriter` streams rows; no report is held \
in memory whole.\n- The API gains `GET /reports/{id}.csv`; the page gains a Download button.\n- Dates are \
ISO 8601 in UTC; numbers use a dot; text is quoted per RFC 4180.\n\n## Risks\n\n- Very large reports: \
stream and set a row limit with a clear message.\n- Locales: never format with the user's locale.\n\n\
## Testing\n\nUnit tests for quoting, integration tests for the endpoint, one end-to-end test.\n";
const TASKS_MD: &str = "| Id | Title | Status |\n|----|-------|--------|\n| 1 | CsvWriter with RFC 4180 quoting | done |\n\
| 2 | GET /reports/{id}.csv endpoint | done |\n| 3 | Download button on the report page | in progress |\n";
const REVIEW_MD: &str = "# Review\n\n## Findings\n\n- The row limit is not documented in the API reference.\n\
- `CsvWriter::finish` swallows the flush error.\n- No test covers a field that holds both a quote and a newline.\n\n\
## Summary\n\nClose; fix the three points above.\n\nVERDICT: FAIL\n";
const POST_REVIEW_MD: &str = "# Post-review\n\n- Documented the row limit.\n- `finish` now returns the flush error.\n\
- Added the quote-and-newline test.\n";

/// A state.json as `taskie` writes it.
fn state_json(
    phase: &str,
    next: Option<&str>,
    iteration: Option<u64>,
    task: Option<u64>,
) -> String {
    let q = |s: Option<&str>| s.map_or("null".to_string(), |s| format!("\"{s}\""));
    let n = |v: Option<u64>| v.map_or("null".to_string(), |v| v.to_string());
    format!(
        "{{\n  \"max_reviews\": 8,\n  \"current_task\": {},\n  \"phase\": \"{phase}\",\n  \"next_phase\": {},\n  \
         \"phase_iteration\": {},\n  \"review_model\": \"opus\",\n  \"consecutive_clean\": 0,\n  \"tdd\": false\n}}\n",
        n(task),
        q(next),
        n(iteration)
    )
}

/// The twelve files of an ordinary plan in its task loop.
fn plan_files(state: &str) -> Vec<(String, String)> {
    let mut files = vec![
        ("state.json".to_string(), state.to_string()),
        ("plan.md".into(), PLAN_MD.into()),
        ("tasks.md".into(), TASKS_MD.into()),
    ];
    for n in 1..=3 {
        files.push((
            format!("task-{n}.md"),
            format!(
                "# Task {n}\n\nImplement part {n} of the plan.\n\n## Acceptance\n\n- Tests pass.\n"
            ),
        ));
    }
    for (name, text) in [
        ("plan-review-1.md", REVIEW_MD),
        ("plan-post-review-1.md", POST_REVIEW_MD),
        ("plan-review-2.md", REVIEW_MD),
        ("tasks-review-1.md", REVIEW_MD),
        ("tasks-post-review-1.md", POST_REVIEW_MD),
        ("tasks-review-2.md", REVIEW_MD),
    ] {
        files.push((name.into(), text.into()));
    }
    assert_eq!(files.len(), FILES_PER_PLAN);
    files
}

/// Writes `files` as the whole content of `dir`, all with modification time `mtime`.
fn write_plan(dir: &Path, files: &[(String, String)], mtime: SystemTime) {
    if dir.exists() {
        fs::remove_dir_all(dir).expect("clear plan dir");
    }
    fs::create_dir_all(dir).expect("create plan dir");
    for (name, text) in files {
        let f = File::create(dir.join(name)).expect("create plan file");
        (&f).write_all(text.as_bytes()).expect("write plan file");
        f.set_modified(mtime).expect("set mtime");
    }
}

fn base_time() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_790_000_000)
}

/// A project with `plans` plans: `plans - 1` ordinary ones (half with nothing due, half
/// owing a post-review) and the target, newest, whose content each scenario sets.
fn generate(root: &Path, plans: usize) {
    let dir = root.join(".taskie/plans");
    fs::create_dir_all(&dir).expect("create plans dir");
    for i in 0..plans.saturating_sub(1) {
        let state = if i % 2 == 0 {
            state_json("complete-task", None, None, Some(3))
        } else {
            state_json("code-review", Some("post-code-review"), Some(1), Some(3))
        };
        let mtime = base_time() + Duration::from_secs(i as u64);
        write_plan(
            &dir.join(format!("plan-{i:04}")),
            &plan_files(&state),
            mtime,
        );
    }
}

/// Scenarios: what the target plan holds, and what the hook must answer.
#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    /// next_phase null: the every-stop path.
    NoReviewDue,
    /// A post-review is owed and not written yet: allow with a reminder.
    PostReviewPending,
    /// A stray file and a missing post-review: block with the structure errors.
    ValidationFailed,
    /// The post-review is written: the hook runs review 3 with the fake reviewer.
    Review,
    /// next_phase null, in a session bound to the target plan (SPEC §17): no scan of the
    /// other plans, so its cost must not grow with their number.
    BoundNoReviewDue,
}

impl Scenario {
    const ALL: [Scenario; 5] = [
        Scenario::NoReviewDue,
        Scenario::BoundNoReviewDue,
        Scenario::PostReviewPending,
        Scenario::ValidationFailed,
        Scenario::Review,
    ];

    fn name(self) -> &'static str {
        match self {
            Scenario::NoReviewDue => "no-review-due",
            Scenario::PostReviewPending => "post-review-pending",
            Scenario::ValidationFailed => "validation-failed",
            Scenario::Review => "review (hook only)",
            Scenario::BoundNoReviewDue => "no-review-due, bound",
        }
    }

    fn files(self) -> Vec<(String, String)> {
        match self {
            Scenario::NoReviewDue | Scenario::BoundNoReviewDue => {
                plan_files(&state_json("complete-task", None, None, Some(3)))
            }
            Scenario::PostReviewPending => plan_files(&state_json(
                "tasks-review",
                Some("post-tasks-review"),
                Some(2),
                None,
            )),
            Scenario::ValidationFailed => {
                let mut f = plan_files(&state_json("complete-task", None, None, Some(3)));
                f.retain(|(n, _)| n != "plan-post-review-1.md");
                f.push(("notes.md".into(), "scratch\n".into()));
                f
            }
            Scenario::Review => {
                let mut f = plan_files(&state_json(
                    "tasks-review",
                    Some("post-tasks-review"),
                    Some(2),
                    None,
                ));
                f.push(("tasks-post-review-2.md".into(), POST_REVIEW_MD.into()));
                f
            }
        }
    }

    /// Checks the answer, so a broken scenario cannot pass as fast.
    fn check(self, stdout: &str) -> Result<(), String> {
        // A block continues the agent through additionalContext (docs/claude-code.md).
        let block = "\"additionalContext\":";
        let ok = match self {
            Scenario::NoReviewDue | Scenario::BoundNoReviewDue => stdout.is_empty(),
            Scenario::PostReviewPending => {
                stdout.contains("systemMessage") && stdout.contains("tasks-post-review-2.md")
            }
            Scenario::ValidationFailed => stdout.contains(block) && stdout.contains("notes.md"),
            Scenario::Review => stdout.contains(block) && stdout.contains("tasks-review-3.md"),
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "scenario {}: unexpected answer {stdout:?}",
                self.name()
            ))
        }
    }
}

/// Session ids of the events: one a new session (unbound, the §5 step 6 scan), one
/// bound to the target plan.
const UNBOUND: &str = "bench-new-session";
const BOUND: &str = "bench-bound-session";

/// Writes the two Stop events.
fn write_events(root: &Path) {
    for session in [UNBOUND, BOUND] {
        fs::write(
            root.join(format!(".bench-event-{session}.json")),
            format!(
                "{{\"session_id\":\"{session}\",\"transcript_path\":\"/dev/null\",\"cwd\":{},\
                 \"hook_event_name\":\"Stop\",\"stop_hook_active\":false}}",
                json_string(&root.to_string_lossy())
            ),
        )
        .expect("write event");
    }
}

/// Binds [`BOUND`] to the target plan for the bound scenario only: for the others the
/// target must be free, or the unbound session would skip it as another session's plan.
fn set_binding(root: &Path, s: Scenario) {
    let sessions = root.join(".taskie/sessions");
    let _ = fs::remove_dir_all(&sessions);
    if s == Scenario::BoundNoReviewDue {
        fs::create_dir_all(&sessions).expect("create sessions dir");
        fs::write(
            sessions.join(format!("{BOUND}.json")),
            format!("{{\"plan\": \"{TARGET}\", \"bound_at\": \"2026-01-01T00:00:00Z\"}}\n"),
        )
        .expect("write binding");
    }
}

fn event_for(root: &Path, s: Scenario) -> PathBuf {
    let session = if s == Scenario::BoundNoReviewDue {
        BOUND
    } else {
        UNBOUND
    };
    root.join(format!(".bench-event-{session}.json"))
}

fn set_target(root: &Path, s: Scenario) {
    let mtime = base_time() + Duration::from_secs(1_000_000);
    write_plan(&root.join(".taskie/plans").join(TARGET), &s.files(), mtime);
    set_binding(root, s);
    settle();
}

/// Writes back what generating files left dirty, so the kernel's writeback does not run
/// in the middle of the measurements.
fn settle() {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
}

/// Puts the target back as it was before a review run changed it (not timed).
fn reset_review(root: &Path) {
    let dir = root.join(".taskie/plans").join(TARGET);
    let state = state_json("tasks-review", Some("post-tasks-review"), Some(2), None);
    let f = File::create(dir.join("state.json")).expect("reset state");
    (&f).write_all(state.as_bytes()).expect("reset state");
    let _ = fs::remove_file(dir.join("tasks-review-3.md"));
    // The plan's ledgers as the first review run left them, put back before every later
    // run: otherwise each run adds its findings to the last and the ledger, read twice per
    // review, grows with the number of rounds (86 KB after a hundred).
    let kept = root.join(".bench-ledgers");
    for name in ["findings.json", "spend.json"] {
        let (live, copy) = (dir.join(name), kept.join(name));
        if copy.exists() {
            fs::copy(&copy, &live).expect("restore a ledger");
        } else if live.exists() {
            fs::create_dir_all(&kept).expect("create the ledger copies' dir");
            fs::copy(&live, &copy).expect("keep a ledger");
        }
    }
    // The hook binds the session of a review it runs (SPEC §17); each review run must
    // start unbound, with the scan, as the first review of a session does.
    let _ = fs::remove_file(root.join(format!(".taskie/sessions/{UNBOUND}.json")));
    first_block(root);
    if let Ok(entries) = fs::read_dir(root.join(".taskie/logs")) {
        for e in entries.flatten() {
            if e.file_name().as_bytes().starts_with(b"review-") {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// Makes the next block of the measured session its first, not one more of a series the
/// block cap (SPEC §20) would end with an allow. Only the count goes: the directory stays,
/// as in any project where a stop once blocked (re-creating it and its .gitignore was no
/// part of a stop).
fn first_block(root: &Path) {
    let _ = fs::remove_file(root.join(format!(".taskie/blocks/session-{UNBOUND}")));
}

// ---------------------------------------------------------------------------------------
// Measuring.

struct Sample {
    wall: Duration,
    /// User + system CPU time of the process (its threads included): less disturbed
    /// than wall time when other work shares the machine.
    cpu: Duration,
    max_rss_kib: u64,
}

/// Spawns `cmd` with stdin from `stdin_file`, waits with `wait4` and returns the wall
/// time from just before the spawn to the reap, the peak RSS, and stdout.
fn measure(cmd: &mut Command, stdin_file: Option<&Path>) -> (Sample, String) {
    let stdin = match stdin_file {
        Some(p) => Stdio::from(File::open(p).expect("open event file")),
        None => Stdio::null(),
    };
    cmd.stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is a plain C struct; all-zero is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers for the duration of the call; `pid` is our unreaped child.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the process did not exit 0 (status {status})"
    );
    let mut out = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    // The child is reaped already; `Child` would otherwise try again on its own.
    std::mem::forget(child);
    reap_orphans();
    (
        Sample {
            wall,
            cpu: timeval(usage.ru_utime) + timeval(usage.ru_stime),
            max_rss_kib: usage.ru_maxrss as u64,
        },
        out.trim().to_string(),
    )
}

/// Makes the processes a measured run leaves behind children of the bench once their
/// parent exits: a review's guardian outlives the hook by design (it frees the files the
/// review replaced, src/reviewer/guardian.rs), and the bench waits for it before the next
/// measure, untimed, so that work cannot fall into another measure. Linux only; elsewhere
/// such processes go to init and the bench does not wait for them.
fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with an integer argument; no memory is passed.
        let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
        assert_eq!(
            r,
            0,
            "PR_SET_CHILD_SUBREAPER: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Waits for every remaining child (see [`adopt_orphans`]); returns at once when none.
fn reap_orphans() {
    // SAFETY: a null status pointer is allowed; only children of the bench are waited for.
    while unsafe { libc::waitpid(-1, std::ptr::null_mut(), 0) } > 0 {}
}

fn timeval(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
}

#[derive(Clone, Copy, Default)]
struct Stats {
    min: f64,
    median: f64,
    p90: f64,
    max: f64,
    cpu_median: f64,
    rss_mib: f64,
}

fn stats(samples: &[Sample]) -> Stats {
    let mut ms: Vec<f64> = samples.iter().map(|s| s.wall.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    let mut cpu: Vec<f64> = samples.iter().map(|s| s.cpu.as_secs_f64() * 1e3).collect();
    cpu.sort_by(f64::total_cmp);
    Stats {
        cpu_median: cpu[cpu.len() / 2],
        min: ms[0],
        median: at(0.5),
        p90: at(0.9),
        max: ms[ms.len() - 1],
        rss_mib: samples.iter().map(|s| s.max_rss_kib).max().unwrap_or(0) as f64 / 1024.0,
    }
}

fn hook_command(hook: &Path, root: &Path, reviewer: &Path) -> Command {
    let mut cmd = Command::new(hook);
    cmd.current_dir(root)
        // `cargo bench` points the loader at the toolchain's libraries; Claude Code does
        // not, and the extra search costs the hook ~90 system calls at start.
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("DYLD_FALLBACK_LIBRARY_PATH")
        .env_remove("TASKIE_HOOK_SKIP")
        .env_remove("TASKIE_PLAN")
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("TASKIE_REVIEW_TIMEOUT")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env("TASKIE_REVIEWER", reviewer)
        .env(ROLE, "reviewer");
    cmd
}

/// Runs `scenario` `runs` times (after a few warm-up runs) and returns the samples.
fn bench_scenario(opts: &Options, root: &Path, event: &Path, s: Scenario) -> Vec<Sample> {
    let me = std::env::current_exe().expect("current exe");
    set_target(root, s);
    let runs = if s == Scenario::Review {
        opts.runs.div_ceil(3)
    } else {
        opts.runs
    };
    let mut samples = Vec::with_capacity(runs);
    for i in 0..runs + WARMUP {
        if s == Scenario::Review {
            reset_review(root);
        }
        if s == Scenario::ValidationFailed {
            first_block(root);
        }
        let mut cmd = hook_command(&opts.hook, root, &me);
        let (sample, out) = measure(&mut cmd, Some(event));
        if let Err(e) = s.check(&out) {
            panic!("{e}");
        }
        if i >= WARMUP {
            samples.push(sample);
        }
    }
    samples
}

/// System calls of one run of `scenario` (threads included), counted by `strace -f -c`;
/// `None` without strace. Not for the review: its count would include the reviewer's.
fn syscalls(opts: &Options, root: &Path, event: &Path, s: Scenario) -> Option<u64> {
    if s == Scenario::Review {
        return None;
    }
    let me = std::env::current_exe().ok()?;
    let out = root.join(".bench-strace");
    set_target(root, s);
    let hook = hook_command(&opts.hook, root, &me);
    let mut cmd = Command::new("strace");
    cmd.arg("-f")
        .arg("-c")
        .arg("-o")
        .arg(&out)
        .arg(&opts.hook)
        .current_dir(root)
        .envs(hook.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("DYLD_FALLBACK_LIBRARY_PATH")
        .env_remove("TASKIE_HOOK_SKIP")
        .env_remove("TASKIE_PLAN")
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(File::open(event).ok()?)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if !cmd.status().ok()?.success() {
        return None;
    }
    let text = fs::read_to_string(&out).ok()?;
    // "100.00    0.001234           3       456        12 total": calls is the 4th field.
    let total = text.lines().find(|l| l.trim_end().ends_with(" total"))?;
    total.split_whitespace().nth(3)?.parse().ok()
}

/// Runs the hook ahead of other work on the machine, when the system allows it.
fn raise_priority() -> String {
    // SAFETY: setpriority has no memory-safety preconditions.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, -20) };
    if r == 0 {
        "nice -20 (the hook runs ahead of other work on the machine)".into()
    } else {
        format!(
            "unchanged ({}; timings include whatever else runs)",
            std::io::Error::last_os_error()
        )
    }
}

/// The fake reviewer alone, with the exact arguments the hook gave it.
fn bench_reviewer(opts: &Options, root: &Path) -> Vec<Sample> {
    let me = std::env::current_exe().expect("current exe");
    let record = root.join(".bench-reviewer-args");
    set_target(root, Scenario::Review);
    reset_review(root);
    let event = event_for(root, Scenario::Review);
    let mut cmd = hook_command(&opts.hook, root, &me);
    cmd.env(RECORD, &record);
    let _ = measure(&mut cmd, Some(&event));
    let bytes = fs::read(&record).expect("the fake reviewer recorded its arguments");
    let args: Vec<OsString> = bytes
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| OsString::from_vec(a.to_vec()))
        .collect();
    let runs = opts.runs.div_ceil(3);
    let mut samples = Vec::with_capacity(runs);
    for i in 0..runs + WARMUP {
        reset_review(root);
        let mut cmd = Command::new(&me);
        cmd.args(&args)
            .current_dir(root)
            .env_remove("LD_LIBRARY_PATH")
            .env_remove("DYLD_FALLBACK_LIBRARY_PATH")
            .env(ROLE, "reviewer")
            .env("TASKIE_HOOK_SKIP", "1")
            .process_group(0);
        let (sample, out) = measure(&mut cmd, None);
        assert_eq!(out, REVIEWER_ANSWER);
        if i >= WARMUP {
            samples.push(sample);
        }
    }
    samples
}

/// The floor: starting and reaping a process that does nothing.
fn bench_true(opts: &Options) -> Option<Vec<Sample>> {
    let t = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let mut samples = Vec::new();
    for i in 0..opts.runs + WARMUP {
        let mut cmd = Command::new(t);
        cmd.env_remove("LD_LIBRARY_PATH");
        let (sample, _) = measure(&mut cmd, None);
        if i >= WARMUP {
            samples.push(sample);
        }
    }
    Some(samples)
}

fn run(opts: &Options) {
    let tmp = tempfile::Builder::new()
        .prefix("taskie-bench-")
        .tempdir()
        .expect("temp dir");
    let base = opts
        .keep
        .clone()
        .unwrap_or_else(|| tmp.path().to_path_buf());
    println!("taskie-hook whole-process benchmark");
    println!("binary:  {}", opts.hook.display());
    println!("machine: {}", machine());
    if opts.nice {
        println!("priority: {}", raise_priority());
    }
    println!(
        "load:    {} (1-minute load average; wall times need a quiet machine, cpu times less so)",
        load_average()
    );
    println!(
        "runs:    {} per scenario ({} for the review scenario), after {WARMUP} warm-up runs",
        opts.runs,
        opts.runs.div_ceil(3)
    );
    println!();

    let floor = bench_true(opts).map(|s| stats(&s));
    if let Some(f) = floor {
        println!(
            "process start floor (/bin/true): median {:.2} ms, min {:.2} ms\n",
            f.median, f.min
        );
    }
    println!(
        "{:>6} {:>7}  {:<22} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9}",
        "plans",
        "files",
        "scenario",
        "min ms",
        "median",
        "p90",
        "max",
        "cpu med",
        "peak RSS",
        "syscalls"
    );
    let mut results: Vec<(usize, Scenario, Stats)> = Vec::new();
    let mut overheads: Vec<(usize, Stats, Stats)> = Vec::new();
    for &plans in &opts.plans {
        let root = base.join(format!("plans-{plans}"));
        let started = Instant::now();
        generate(&root, plans);
        write_events(&root);
        eprintln!(
            "  (generated {plans} plans in {:.1} s)",
            started.elapsed().as_secs_f64()
        );
        for s in Scenario::ALL {
            let event = event_for(&root, s);
            let st = stats(&bench_scenario(opts, &root, &event, s));
            row(plans, s.name(), &st, syscalls(opts, &root, &event, s));
            results.push((plans, s, st));
        }
        let reviewer = stats(&bench_reviewer(opts, &root));
        row(plans, "fake reviewer alone", &reviewer, None);
        let hook = results
            .iter()
            .find(|(p, s, _)| *p == plans && *s == Scenario::Review)
            .map(|r| r.2)
            .unwrap_or_default();
        overheads.push((plans, hook, reviewer));
    }

    println!("\nload at the end: {}", load_average());
    println!("\nreview overhead (hook with review − fake reviewer alone, medians):");
    for (plans, hook, reviewer) in &overheads {
        println!(
            "  {plans:>5} plans: {:.2} ms − {:.2} ms = {:.2} ms",
            hook.median,
            reviewer.median,
            hook.median - reviewer.median
        );
    }

    if let Some(f) = floor {
        println!("\na bound stop against a bare process start (SPEC §17: at most 3×, medians):");
        for (plans, s, st) in &results {
            if *s == Scenario::BoundNoReviewDue {
                println!(
                    "  {plans:>5} plans: {:.2} ms = {:.2} × /bin/true ({:.2} ms)",
                    st.median,
                    st.median / f.median,
                    f.median
                );
            }
        }
    }

    println!("\ngrowth of the median with the number of plan files:");
    for s in Scenario::ALL {
        let pts: Vec<(usize, f64)> = results
            .iter()
            .filter(|r| r.1 == s)
            .map(|r| (r.0 * FILES_PER_PLAN, r.2.median))
            .collect();
        if pts.len() < 2 {
            continue;
        }
        let steps: Vec<String> = pts
            .windows(2)
            .map(|w| {
                let us_per_file = (w[1].1 - w[0].1) * 1e3 / (w[1].0 - w[0].0) as f64;
                format!("{}→{} files: {:+.2} µs/file", w[0].0, w[1].0, us_per_file)
            })
            .collect();
        println!("  {:<22} {}", s.name(), steps.join(", "));
    }

    println!("\nmarkdown (medians, ms; peak RSS over all runs):\n");
    let mut header = String::from("| path |");
    let mut rule = String::from("|---|");
    for p in &opts.plans {
        header.push_str(&format!(" {p} plan{} |", if *p == 1 { "" } else { "s" }));
        rule.push_str("---:|");
    }
    header.push_str(" peak RSS |");
    rule.push_str("---:|");
    println!("{header}\n{rule}");
    for s in Scenario::ALL {
        let mut line = format!("| {} |", s.name());
        let mut rss: f64 = 0.0;
        for p in &opts.plans {
            if let Some((_, _, st)) = results.iter().find(|r| r.0 == *p && r.1 == s) {
                line.push_str(&format!(" {:.2} |", st.median));
                rss = rss.max(st.rss_mib);
            }
        }
        line.push_str(&format!(" {rss:.1} MiB |"));
        println!("{line}");
    }
    let mut line = String::from("| review overhead (hook − reviewer) |");
    for (_, hook, reviewer) in &overheads {
        line.push_str(&format!(" {:.2} |", hook.median - reviewer.median));
    }
    line.push_str(" |");
    println!("{line}");

    if let Some(keep) = &opts.keep {
        println!("\nprojects kept in {}", keep.display());
    }
}

fn row(plans: usize, name: &str, st: &Stats, syscalls: Option<u64>) {
    println!(
        "{:>6} {:>7}  {:<22} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>5.1} MiB {:>9}",
        plans,
        plans * FILES_PER_PLAN,
        name,
        st.min,
        st.median,
        st.p90,
        st.max,
        st.cpu_median,
        st.rss_mib,
        syscalls.map_or("-".to_string(), |n| n.to_string())
    );
}

fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// nproc, CPU model and memory, for the report.
fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, m)| m.trim())
        .to_string();
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_gib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|l| l.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0 / 1024.0);
    format!("{cpus} CPUs, {model}, {mem_gib:.1} GiB RAM")
}
