//! `cargo bench --bench hook -- --ratios`: the hook's every-stop costs as ratios to a floor
//! binary the bench builds itself (docs/performance.md). The floor is std Rust,
//! statically linked (musl), and does what any hook must: reads its stdin and one small
//! file. Each round runs the floor right before each measure, so a ratio compares two
//! runs made under the same load; the table shows the median of those paired ratios.
//!
//! Measures (target in brackets): a bound stop, `taskie-hook` run directly [1.5×]; the
//! same stop as Claude Code runs it, the Claude plugin's registered command (the launcher,
//! started with no shell: `dist/claude/hooks/hooks.json`) [2.8×], beside two references: the client's shell alone (`/bin/sh -c true`,
//! the part no launcher can save) and the shell exec'ing the floor (`/bin/sh -c 'exec
//! floor'`, one shell and one `exec` of a program that does nothing more); `taskie status`
//! [3×] and a budgeted plan's stop [2×] with 20 MiB of event logs; the hook's overhead
//! around a review with a fake reviewer (hook minus the reviewer alone, same round) [6×],
//! and around a panel of three [8×], beside a reference: the writes SPEC §3 and §5 step 18
//! force to disk in a review (the review file's `fsync`, then state.json's temporary file
//! `fsync`, rename and directory `fsync`), timed in the bench itself, and the review's
//! overhead less those writes, round by round (what the disk does not decide); an unbound
//! session's second stop at 2,000 plans [2×].
//!
//! Options: `--rounds N` (default 200; review rounds a third of it), `--hook PATH` and
//! `--taskie PATH` (the builds to measure: default the bench's own, e.g. pass the static
//! ones of `target/x86_64-unknown-linux-musl/release`), `--against DIR` (another build's
//! `taskie-hook` and `taskie`, say the one before a change: each measure then runs both,
//! alternating, in every round, and the table adds its ratio and the median of the
//! rounds' differences, the way to tell a change from the machine's drift between runs),
//! `--variant NAME=VAR` (repeatable: the measured build again with `VAR=1` in the
//! environment of everything it runs, as one more build in every round; a second table
//! gives each variant's change against the measured build, the median of the rounds'
//! ratios).

use super::*;

/// The floor's source: read stdin, read the file named by the first argument.
const FLOOR_RS: &str = "use std::io::Read;\nfn main() {\n    let mut input = Vec::new();\n    \
     let _ = std::io::stdin().read_to_end(&mut input);\n    \
     let _ = std::fs::read(std::env::args_os().nth(1).unwrap_or_default());\n}\n";

/// What a review forces to disk, as the hook does it (SPEC §3, §5 step 18), timed without
/// a process start: a new review file synced, then state.json replaced through a synced
/// temporary file, renamed, and its directory synced. The review file is removed after,
/// untimed.
fn durable_review_writes(dir: &Path) -> Duration {
    let (review, state, tmp) = (
        dir.join("review-3.md"),
        dir.join("state.json"),
        dir.join(".taskie-tmp-state"),
    );
    if !state.exists() {
        fs::write(&state, "{}\n").expect("reference state");
    }
    let started = Instant::now();
    let f = File::create(&review).expect("reference review");
    (&f).write_all(b"# Review\n\nVERDICT: FAIL\n")
        .expect("write review");
    f.sync_all().expect("sync review");
    let t = File::create(&tmp).expect("reference temporary file");
    (&t).write_all(b"{\n  \"phase_iteration\": 3\n}\n")
        .expect("write state");
    t.sync_all().expect("sync state");
    fs::rename(&tmp, &state).expect("rename state");
    File::open(dir)
        .and_then(|d| d.sync_all())
        .expect("sync directory");
    let took = started.elapsed();
    drop((f, t));
    fs::remove_file(&review).expect("remove the reference review");
    took
}

/// Builds the floor with rustc: static musl when that target is installed, else the
/// host target with a static C runtime.
fn build_floor(dir: &Path) -> PathBuf {
    let src = dir.join("floor.rs");
    let out = dir.join("floor");
    fs::write(&src, FLOOR_RS).expect("write floor.rs");
    let host = String::from_utf8(
        Command::new("rustc")
            .arg("-vV")
            .output()
            .expect("rustc -vV")
            .stdout,
    )
    .unwrap_or_default();
    let host = host
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap_or("")
        .to_string();
    let musl = host.replace("-linux-gnu", "-linux-musl");
    let mut tried = Vec::new();
    for (target, extra) in [
        (musl.as_str(), None),
        (host.as_str(), Some("target-feature=+crt-static")),
    ] {
        let mut cmd = Command::new("rustc");
        cmd.args(["--edition", "2021", "-O", "--target", target]);
        if let Some(e) = extra {
            cmd.args(["-C", e]);
        }
        cmd.arg("-o").arg(&out).arg(&src);
        let ok = cmd
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            eprintln!(
                "floor: {FLOOR_RS_SHORT} built for {target}{}",
                extra.map(|e| format!(" ({e})")).unwrap_or_default()
            );
            return out;
        }
        tried.push(target.to_string());
    }
    panic!("cannot build the floor binary with rustc (tried {tried:?})");
}

const FLOOR_RS_SHORT: &str = "std Rust, reads stdin and one small file, static,";

pub struct Ratios {
    rounds: usize,
    builds: Vec<Build>,
}

/// A build measured: its two binaries, and what its runs get in their environment.
struct Build {
    name: String,
    hook: PathBuf,
    taskie: PathBuf,
    env: Vec<(String, String)>,
}

impl Ratios {
    pub fn parse(args: &[String]) -> Ratios {
        let mut r = Ratios {
            rounds: 200,
            builds: vec![Build {
                name: "measured".into(),
                hook: PathBuf::from(env!("CARGO_BIN_EXE_taskie-hook")),
                taskie: PathBuf::from(env!("CARGO_BIN_EXE_taskie")),
                env: Vec::new(),
            }],
        };
        let mut variants = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || {
                it.next()
                    .cloned()
                    .unwrap_or_else(|| usage(&format!("{a} needs a value")))
            };
            match a.as_str() {
                "--bench" | "--ratios" => {}
                "--rounds" => r.rounds = value().parse().unwrap_or_else(|_| usage("bad --rounds")),
                "--hook" => r.builds[0].hook = PathBuf::from(value()),
                "--taskie" => r.builds[0].taskie = PathBuf::from(value()),
                "--against" => {
                    let dir = PathBuf::from(value());
                    r.builds.push(Build {
                        name: dir.display().to_string(),
                        hook: dir.join("taskie-hook"),
                        taskie: dir.join("taskie"),
                        env: Vec::new(),
                    });
                }
                "--variant" => {
                    let v = value();
                    let (name, var) = v
                        .split_once('=')
                        .unwrap_or_else(|| usage("--variant NAME=VAR"));
                    variants.push((name.to_owned(), var.to_owned()));
                }
                other => usage(&format!(
                    "unknown option {other} (with --ratios: --rounds, --hook, --taskie, --against, --variant)"
                )),
            }
        }
        for (name, var) in variants {
            r.builds.push(Build {
                name,
                hook: r.builds[0].hook.clone(),
                taskie: r.builds[0].taskie.clone(),
                env: vec![(var, "1".into())],
            });
        }
        r.rounds = r.rounds.max(10);
        // Absolute: the measures run in the generated projects.
        for b in &mut r.builds {
            for p in [&mut b.hook, &mut b.taskie] {
                *p = fs::canonicalize(&*p)
                    .unwrap_or_else(|e| usage(&format!("{}: {e}", p.display())));
            }
        }
        r
    }
}

/// Adds JSON fields to a state written by [`state_json`].
fn with_fields(state: &str, fields: &str) -> String {
    state.replacen("{\n", &format!("{{\n  {fields},\n"), 1)
}

/// A project whose target plan holds `state`, `plans` plans in all.
fn project(base: &Path, name: &str, plans: usize, files: Vec<(String, String)>) -> PathBuf {
    let root = base.join(name);
    generate(&root, plans);
    let mtime = base_time() + Duration::from_secs(1_000_000);
    write_plan(&root.join(".taskie/plans").join(TARGET), &files, mtime);
    fs::create_dir_all(root.join(".taskie/logs")).expect("logs dir");
    write_events(&root);
    root
}

fn bind(root: &Path, session: &str) {
    let sessions = root.join(".taskie/sessions");
    fs::create_dir_all(&sessions).expect("sessions dir");
    fs::write(
        sessions.join(format!("{session}.json")),
        format!("{{\"plan\": \"{TARGET}\", \"bound_at\": \"2026-01-01T00:00:00Z\"}}\n"),
    )
    .expect("write binding");
}

/// 10 MiB less a little in each of `events.jsonl` and `events.jsonl.1`, rows of the
/// target plan with a cost, as a long-budgeted plan leaves them.
fn big_logs(root: &Path) {
    let row = format!(
        "{{\"ts\":\"2026-01-01T00:00:00Z\",\"plan\":\"{TARGET}\",\"review\":\"code-review\",\"iteration\":1,\
         \"outcome\":\"block\",\"path\":\"blocked\",\"verdict\":\"FAIL\",\"reviews\":1,\"cost_usd\":0.01}}\n"
    );
    let n = (10 * 1024 * 1024 - 64 * 1024) / row.len();
    let text = row.repeat(n);
    for f in ["events.jsonl", "events.jsonl.1"] {
        fs::write(root.join(".taskie/logs").join(f), &text).expect("write log");
    }
}

fn stdin_of(root: &Path, session: &str) -> PathBuf {
    root.join(format!(".bench-event-{session}.json"))
}

/// One measure, per build: each round's floor, value (ms) and their ratio.
struct Measure {
    name: &'static str,
    target: f64,
    builds: Vec<Series>,
}

#[derive(Default)]
struct Series {
    floor_ms: Vec<f64>,
    ms: Vec<f64>,
    ratios: Vec<f64>,
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

impl Measure {
    fn new(name: &'static str, target: f64) -> Measure {
        Measure {
            name,
            target,
            builds: Vec::new(),
        }
    }

    /// A value of build `b` (0: the one measured, 1: `--against`'s) and its round's floor.
    fn add(&mut self, b: usize, floor: Duration, value: f64) {
        let f = floor.as_secs_f64() * 1e3;
        if self.builds.len() <= b {
            self.builds.resize_with(b + 1, Series::default);
        }
        let s = &mut self.builds[b];
        s.floor_ms.push(f);
        s.ms.push(value);
        s.ratios.push(value / f);
    }

    /// A row of the table; with a second build, its ratio and the median of the rounds'
    /// differences (this build − the other, ms) follow.
    fn print(&self, against: bool) {
        let none = Series::default();
        let this = &self.builds[0];
        let other = self.builds.get(1).unwrap_or(&none);
        let r = median(&this.ratios);
        let target = if self.target.is_nan() {
            "—".to_string()
        } else {
            format!("≤ {}×", self.target)
        };
        let met = if self.target.is_nan() {
            "reference"
        } else if r <= self.target {
            "yes"
        } else {
            "no"
        };
        let compared = if against && !other.ms.is_empty() {
            let diffs: Vec<f64> = this.ms.iter().zip(&other.ms).map(|(a, b)| a - b).collect();
            format!(" {:.2}× | {:+.3} |", median(&other.ratios), median(&diffs))
        } else if against {
            " | |".to_string()
        } else {
            String::new()
        };
        println!(
            "| {} | {} | {:.3} | {:.3} | {:.2}× | {target} | {met} |{compared}",
            self.name,
            this.ratios.len(),
            median(&this.floor_ms),
            median(&this.ms),
            r,
        );
    }
}

impl Measure {
    /// Rows of the variants' table: each other build against the first, round by round.
    fn print_variants(&self, builds: &[Build]) {
        let this = &self.builds[0];
        for (b, series) in self.builds.iter().enumerate().skip(1) {
            if series.ms.is_empty() {
                continue;
            }
            let ratios: Vec<f64> = series.ms.iter().zip(&this.ms).map(|(v, m)| v / m).collect();
            let diffs: Vec<f64> = series.ms.iter().zip(&this.ms).map(|(v, m)| v - m).collect();
            println!(
                "| {} | {} | {:.2}× | {:.2}× | {:+.1} % | {:+.3} |",
                self.name,
                builds[b].name,
                median(&this.ratios),
                median(&series.ratios),
                (median(&ratios) - 1.0) * 100.0,
                median(&diffs),
            );
        }
    }
}

fn hook_cmd(b: &Build, root: &Path) -> Command {
    let me = std::env::current_exe().expect("current exe");
    let mut cmd = hook_command(&b.hook, root, &me);
    cmd.envs(b.env.iter().map(|(k, v)| (k, v)));
    cmd
}

fn run_once(
    cmd: &mut Command,
    stdin: Option<&Path>,
    check: impl Fn(&str) -> bool,
    what: &str,
) -> Duration {
    let (s, out) = measure(cmd, stdin);
    assert!(check(&out), "{what}: unexpected output {out:?}");
    s.wall
}

pub fn run(r: &Ratios) {
    let tmp = tempfile::Builder::new()
        .prefix("taskie-ratios-")
        .tempdir()
        .expect("temp dir");
    let base = tmp.path();
    let floor = build_floor(base);
    println!(
        "hook ratios: {} rounds, hook {}, taskie {}",
        r.rounds,
        r.builds[0].hook.display(),
        r.builds[0].taskie.display()
    );
    for b in r.builds.iter().skip(1) {
        println!(
            "against {}: hook {}, taskie {}, environment {:?} (the builds alternate, measure by measure, round by round)",
            b.name,
            b.hook.display(),
            b.taskie.display(),
            b.env
        );
    }
    println!("machine: {}; load average {}", machine(), load_average());

    let idle = || plan_files(&state_json("complete-task", None, None, Some(3)));
    // Bound stop, 1 plan; the same through the registered command.
    let small = project(base, "bound", 1, idle());
    bind(&small, BOUND);
    // Budgeted plan with 20 MiB of logs, bound.
    let budgeted = project(
        base,
        "budgeted",
        1,
        plan_files(&with_fields(
            &state_json("complete-task", None, None, Some(3)),
            "\"max_cost_usd\": 500.0",
        )),
    );
    big_logs(&budgeted);
    bind(&budgeted, BOUND);
    // 2,000 plans, an unbound session that has stopped once.
    let many = project(base, "many", 2000, idle());
    // A client that sends no session id: every stop selects among all the plans.
    let anonymous_event = many.join(".bench-event-anonymous.json");
    fs::write(
        &anonymous_event,
        format!(
            "{{\"transcript_path\":\"/dev/null\",\"cwd\":{},\"hook_event_name\":\"Stop\",\"stop_hook_active\":false}}",
            serde_json::Value::from(many.to_string_lossy().into_owned())
        ),
    )
    .expect("write the event without a session");
    // Reviews: single and a panel of three.
    let review_files = |extra: Option<&str>| {
        let s = state_json("tasks-review", Some("post-tasks-review"), Some(2), None);
        let s = extra.map_or(s.clone(), |e| with_fields(&s, e));
        let mut f = plan_files(&s);
        f.push(("tasks-post-review-2.md".into(), POST_REVIEW_MD.into()));
        f
    };
    let single = project(base, "review", 1, review_files(None));
    let panel = project(
        base,
        "panel",
        1,
        review_files(Some(
            "\"reviewers\": [\"claude:opus\", \"claude:sonnet\", \"claude:haiku\"], \"review_mode\": \"panel\"",
        )),
    );
    settle();

    // The plugin as Claude Code runs it: PATH holds the measured taskie-hook first.
    let paths: Vec<String> = r
        .builds
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let bin = base.join(format!("bin-{i}"));
            fs::create_dir_all(&bin).expect("bin dir");
            std::os::unix::fs::symlink(&b.hook, bin.join("taskie-hook")).expect("link taskie-hook");
            format!("{}:/usr/bin:/bin", bin.display())
        })
        .collect();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The Claude Code plugin's Stop entry: exec form, a program and its arguments, started
    // with no shell (docs/hosts.md).
    let plugin = repo.join("dist/claude");
    let hooks: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(plugin.join("hooks/hooks.json"))
            .expect("the Claude plugin's hooks.json"),
    )
    .expect("hooks.json is JSON");
    let entry = &hooks["hooks"]["Stop"][0]["hooks"][0];
    let registered = entry["command"]
        .as_str()
        .expect("the Stop command of hooks.json")
        .replace("${CLAUDE_PLUGIN_ROOT}", &plugin.to_string_lossy());
    let registered_args: Vec<String> = entry["args"]
        .as_array()
        .expect("exec form: args")
        .iter()
        .map(|a| a.as_str().expect("an argument").to_owned())
        .collect();
    println!("registered command: {registered} {registered_args:?}");
    let path = &paths[0];

    let small_state = small.join(".taskie/plans").join(TARGET).join("state.json");
    let floor_cmd = |state: &Path| {
        let mut c = Command::new(&floor);
        c.arg(state).env_remove("LD_LIBRARY_PATH");
        c
    };
    let floor_once = |root: &Path, stdin: &Path| {
        let state = root.join(".taskie/plans").join(TARGET).join("state.json");
        run_once(&mut floor_cmd(&state), Some(stdin), |_| true, "floor")
    };
    let empty = |o: &str| o.is_empty();
    // A stop that allows silently, run by `build` in `root`, after its round's floor.
    let stop = |build: &Build, root: &Path, event: &Path, what: &str| {
        let f = floor_once(root, event);
        (
            f,
            run_once(&mut hook_cmd(build, root), Some(event), empty, what),
        )
    };

    let mut m_bound = Measure::new("bound stop, taskie-hook direct (1 plan)", 1.5);
    let mut m_sh = Measure::new(
        "bound stop, the Claude plugin's hooks.json command (the launcher, no shell)",
        2.8,
    );
    // What the client's own shell costs before any of Taskie runs: the part of the line
    // above that no launcher can save (a dynamically linked sh).
    let mut m_shell = Measure::new(
        "reference: the client's shell alone, /bin/sh -c true",
        f64::NAN,
    );
    let mut m_exec = Measure::new(
        "reference: the shell exec'ing the floor, /bin/sh -c 'exec floor'",
        f64::NAN,
    );
    let mut m_status = Measure::new("taskie status, 20 MiB of logs", 3.0);
    let mut m_budget = Measure::new("budgeted plan's stop, 20 MiB of logs", 2.0);
    let mut m_second = Measure::new("unbound session's second stop, 2,000 plans", 2.0);
    let mut m_scan = Measure::new(
        "a stop without a session id, 2,000 plans (selects among them all; no target)",
        f64::NAN,
    );
    let mut m_review = Measure::new("overhead around one review (hook − reviewer alone)", 6.0);
    let mut m_panel = Measure::new(
        "overhead around a panel of 3 (hook − one reviewer alone)",
        8.0,
    );
    let mut m_disk = Measure::new(
        "reference: a review's durable writes alone, in-process (2 fsyncs of files, 1 of a directory)",
        f64::NAN,
    );
    let mut m_own = Measure::new(
        "reference: the overhead around one review less the same round's durable writes",
        f64::NAN,
    );
    let disk_dir = base.join("disk-reference");
    fs::create_dir_all(&disk_dir).expect("disk reference dir");

    // The unbound session's first stop binds it; the measured ones are its next stops.
    let many_event = stdin_of(&many, UNBOUND);
    run_once(
        &mut hook_cmd(&r.builds[0], &many),
        Some(&many_event),
        empty,
        "first stop at 2,000 plans",
    );

    let bound_event = stdin_of(&small, BOUND);
    let budget_event = stdin_of(&budgeted, BOUND);
    let reviewer_args = |root: &Path| -> Vec<OsString> {
        let record = root.join(".bench-reviewer-args");
        reset_review(root);
        let mut cmd = hook_cmd(&r.builds[0], root);
        cmd.env(RECORD, &record);
        let _ = measure(&mut cmd, Some(&stdin_of(root, UNBOUND)));
        let bytes = fs::read(&record).expect("the fake reviewer recorded its arguments");
        bytes
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| OsString::from_vec(a.to_vec()))
            .collect()
    };
    let single_args = reviewer_args(&single);
    let panel_args = reviewer_args(&panel);
    let me = std::env::current_exe().expect("current exe");
    let reviewer_alone = |root: &Path, args: &[OsString]| {
        let mut cmd = Command::new(&me);
        cmd.args(args)
            .current_dir(root)
            .env_remove("LD_LIBRARY_PATH")
            .env(ROLE, "reviewer")
            .env("TASKIE_HOOK_SKIP", "1")
            .process_group(0);
        run_once(&mut cmd, None, |o| o == REVIEWER_ANSWER, "reviewer alone")
    };
    let blocked = |o: &str| o.contains("\"additionalContext\":") && o.contains("tasks-review-3.md");

    // With a second build, the two alternate in each measure, the first one first in
    // even rounds, so neither always runs after the other.
    let order = |round: usize| -> Vec<usize> {
        let mut o: Vec<usize> = (0..r.builds.len()).collect();
        if round % 2 == 1 {
            o.reverse();
        }
        o
    };
    for round in 0..r.rounds + WARMUP {
        let keep = round >= WARMUP;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;

        for b in order(round) {
            let build = &r.builds[b];
            let (f, v) = stop(build, &small, &bound_event, "bound stop");
            if keep {
                m_bound.add(b, f, ms(v));
            }

            let f = floor_once(&small, &bound_event);
            let mut sh = Command::new(&registered);
            sh.args(&registered_args)
                .current_dir(&small)
                .env_clear()
                .env("PATH", &paths[b])
                .env("HOME", base)
                .env("CLAUDE_PLUGIN_ROOT", &plugin)
                .env("CLAUDE_PROJECT_DIR", &small)
                .envs(build.env.iter().map(|(k, v)| (k, v)));
            let v = run_once(&mut sh, Some(&bound_event), empty, "registered command");
            if keep {
                m_sh.add(b, f, ms(v));
            }
        }

        let f = floor_once(&small, &bound_event);
        let mut shell = Command::new("/bin/sh");
        shell
            .args(["-c", "true"])
            .current_dir(&small)
            .env_clear()
            .env("PATH", path);
        let v = run_once(&mut shell, Some(&bound_event), empty, "the shell alone");
        if keep {
            m_shell.add(0, f, ms(v));
        }

        let f = floor_once(&small, &bound_event);
        let mut exec = Command::new("/bin/sh");
        exec.arg("-c")
            .arg(format!(
                "exec '{}' '{}'",
                floor.display(),
                small_state.display()
            ))
            .current_dir(&small)
            .env_clear()
            .env("PATH", path);
        let v = run_once(
            &mut exec,
            Some(&bound_event),
            empty,
            "the shell exec'ing the floor",
        );
        if keep {
            m_exec.add(0, f, ms(v));
        }

        for b in order(round) {
            let build = &r.builds[b];
            let f = floor_once(&budgeted, &budget_event);
            let mut st = Command::new(&build.taskie);
            st.arg("status")
                .current_dir(&budgeted)
                .env_remove("LD_LIBRARY_PATH")
                .env_remove("CLAUDE_CODE_SESSION_ID")
                .envs(build.env.iter().map(|(k, v)| (k, v)));
            let v = run_once(&mut st, None, |o| o.contains(TARGET), "taskie status");
            if keep {
                m_status.add(b, f, ms(v));
            }

            let (f, v) = stop(build, &budgeted, &budget_event, "budgeted stop");
            if keep {
                m_budget.add(b, f, ms(v));
            }

            let (f, v) = stop(build, &many, &many_event, "second stop at 2,000 plans");
            if keep {
                m_second.add(b, f, ms(v));
            }

            let (f, v) = stop(
                build,
                &many,
                &anonymous_event,
                "a stop without a session id",
            );
            if keep {
                m_scan.add(b, f, ms(v));
            }
        }

        if round % 3 == 0 {
            // The reviewer alone once a round, for both builds: their difference is then
            // the hooks' alone, without the noise of two more process starts.
            let alone = [
                reviewer_alone(&single, &single_args),
                reviewer_alone(&panel, &panel_args),
            ];
            for b in order(round) {
                let build = &r.builds[b];
                let mut single_overhead = None;
                for (root, alone, m) in [
                    (&single, alone[0], &mut m_review),
                    (&panel, alone[1], &mut m_panel),
                ] {
                    reset_review(root);
                    let event = stdin_of(root, UNBOUND);
                    let f = floor_once(root, &event);
                    let v = run_once(&mut hook_cmd(build, root), Some(&event), blocked, m.name);
                    let overhead = ms(v) - ms(alone);
                    if keep {
                        m.add(b, f, overhead);
                    }
                    // The first of the two is the single review.
                    single_overhead.get_or_insert((f, overhead));
                }
                let f = floor_once(&single, &stdin_of(&single, UNBOUND));
                let v = durable_review_writes(&disk_dir);
                if keep {
                    m_disk.add(b, f, ms(v));
                    // The disk's share moves a lot from run to run; this row pairs the
                    // review with the durable writes measured right after it, so it
                    // moves less.
                    if let Some((f, overhead)) = single_overhead {
                        m_own.add(b, f, overhead - ms(v));
                    }
                }
            }
        }
    }

    let against = r.builds.len() == 2;
    println!();
    println!(
        "| measure | rounds | floor ms (median) | measure ms (median) | paired ratio (median) | target | met |{}",
        if against {
            " against: paired ratio (median) | difference, ms (median) |"
        } else {
            ""
        }
    );
    println!(
        "|---|---|---|---|---|---|---|{}",
        if against { "---|---|" } else { "" }
    );
    for m in [
        &m_bound, &m_sh, &m_shell, &m_exec, &m_status, &m_budget, &m_second, &m_scan, &m_review,
        &m_panel, &m_disk, &m_own,
    ] {
        m.print(against);
    }
    if r.builds.len() > 2 {
        println!();
        println!(
            "| measure | build | first build's paired ratio | this build's paired ratio | change against the first (median of the rounds' ratios) | difference, ms (median) |"
        );
        println!("|---|---|---|---|---|---|");
        for m in [
            &m_bound, &m_sh, &m_status, &m_budget, &m_second, &m_scan, &m_review, &m_panel, &m_own,
        ] {
            m.print_variants(&r.builds);
        }
    }
}
