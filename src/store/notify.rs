//! Notifications (SPEC §24): unattended work reaches a person through a command the user
//! names in `TASKIE_NOTIFY`, or else in the repository's git setting `taskie.notify`. Taskie starts it detached, with one JSON object on stdin, and
//! a supervisor (this same binary in the notifier role) ends it after
//! `TASKIE_NOTIFY_TIMEOUT` seconds and logs what it did to `.taskie/logs/notify.log`. A
//! notifier that fails or hangs is logged, never fails the stop or the run.

use crate::env::Var;
use crate::model::run::journal::{Entry, Outcome};
use crate::store::event_log::{Branch, Record};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The first argument that makes `taskie` or `taskie-hook` the notifier's supervisor.
pub const ROLE_ARG: &str = "--taskie-notifier";
/// The log the supervisor appends one line to per notification.
pub const LOG: &str = "notify.log";
/// The marker of the last hard stop notified per plan, so that a plan that stays
/// hard-stopped notifies once, not at every stop.
const LAST_HARD_STOP: &str = "notified-hard-stop";

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Kind {
    HardStop,
    Paused,
    BudgetSpent,
    CyclePassed,
    PlanComplete,
    RunDone,
    RunPartial,
    TaskBlocked,
    Conflict,
}

/// The object the notifier reads on stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    pub event: Kind,
    pub plan: String,
    /// The project directory.
    pub project: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<u64>,
    /// When a paused plan's reviews start again (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_until: Option<String>,
    /// For a run: its id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// One line for a person.
    pub text: String,
}

impl Notification {
    pub fn new(event: Kind, plan: &str, project: &Path, text: String) -> Notification {
        Notification {
            event,
            plan: plan.to_owned(),
            project: project.display().to_string(),
            review: None,
            iteration: None,
            task: None,
            paused_until: None,
            run: None,
            text,
        }
    }
}

/// The notification a hook run's event calls for, if any: the stop that hard-stopped a
/// cycle (or found its budget spent), the stop that paused a plan, a cycle that passed,
/// and the last one, which completes the plan. A plan that stays paused or hard-stopped
/// is not notified again by this rule's caller (see `send_for_stop`).
pub fn for_stop(rec: &Record, project: &Path) -> Option<Notification> {
    let review = rec.review.unwrap_or("review");
    let (event, text) = match rec.branch {
        Branch::HardStop if rec.stop_reason == Some("budget_exhausted") => (
            Kind::BudgetSpent,
            format!(
                "Taskie: plan '{}' spent its review budget; {review} stopped",
                rec.plan
            ),
        ),
        Branch::HardStop => (
            Kind::HardStop,
            format!(
                "Taskie: plan '{}' hard-stopped in {review} ({}); it waits for you",
                rec.plan,
                rec.stop_reason.unwrap_or("stopped").replace('_', " ")
            ),
        ),
        // Only the stop that started the pause carries the reset time.
        Branch::Paused => {
            let until = rec.paused_until.as_deref()?;
            (
                Kind::Paused,
                format!(
                    "Taskie: plan '{}' paused by a reviewer's usage limit until {until}",
                    rec.plan
                ),
            )
        }
        Branch::Advanced if rec.next_phase_after.as_deref() == Some("complete") => (
            Kind::PlanComplete,
            format!(
                "Taskie: plan '{}' passed its final review: complete",
                rec.plan
            ),
        ),
        Branch::Advanced => (
            Kind::CyclePassed,
            format!(
                "Taskie: plan '{}': {review} passed; next: {}",
                rec.plan,
                rec.next_phase_after.as_deref().unwrap_or("-")
            ),
        ),
        _ => return None,
    };
    let mut n = Notification::new(event, &rec.plan, project, text);
    n.review = rec.review.map(str::to_owned);
    n.iteration = rec.iteration;
    n.paused_until = rec.paused_until.clone();
    Some(n)
}

/// The notification a journal entry of `taskie run` calls for (SPEC §23, §24): a blocked
/// task, a conflict, and the end of the run. Entries replayed by `--resume` are not
/// recorded again, so each is sent once.
pub fn for_run_entry(entry: &Entry, plan: &str, run: &str, project: &Path) -> Option<Notification> {
    let (event, task, text) = match entry {
        Entry::Blocked { task, reason } => (
            Kind::TaskBlocked,
            Some(task),
            format!("Taskie run {run}: task {task} is blocked: {reason}"),
        ),
        Entry::Conflict { task, files } => (
            Kind::Conflict,
            Some(task),
            format!(
                "Taskie run {run}: task {task} conflicts with the integration branch in {}",
                files.join(", ")
            ),
        ),
        Entry::End {
            outcome: Outcome::Done,
        } => (
            Kind::RunDone,
            None,
            format!("Taskie run {run}: plan '{plan}' is done; every task merged and reviewed"),
        ),
        Entry::End {
            outcome: Outcome::Partial,
        } => (
            Kind::RunPartial,
            None,
            format!(
                "Taskie run {run}: plan '{plan}' ended partial; `taskie status` says what is left"
            ),
        ),
        _ => return None,
    };
    let mut n = Notification::new(event, plan, project, text);
    n.run = Some(run.to_owned());
    n.task = task.and_then(|t| t.parse().ok());
    Some(n)
}

/// The git setting that names the notifier when `TASKIE_NOTIFY` does not.
pub const GIT_SETTING: &str = "taskie.notify";

/// What the notifications read from the environment, resolved where the process was
/// entered (the hook's settings, `taskie run`'s) and passed down.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `TASKIE_NOTIFY`, when set and not empty.
    pub command: Option<String>,
    /// How long a notifier may run (`TASKIE_NOTIFY_TIMEOUT`).
    pub timeout: Duration,
}

impl Settings {
    /// From the variables' values: `TASKIE_NOTIFY`, and `TASKIE_NOTIFY_TIMEOUT` in seconds
    /// (a positive number, at most an hour; anything else is the default).
    pub fn new(command: Option<String>, timeout: Option<&str>) -> Settings {
        let default = Duration::from_secs(Var::NotifyTimeout.default_number());
        let timeout = timeout
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(default, |s| Duration::from_secs_f64(s.min(3600.0)));
        Settings { command, timeout }
    }

    /// The notifier's command line: `TASKIE_NOTIFY` when set and not empty, else
    /// `git config taskie.notify` as git reads it in `project` (the repository's own
    /// `.git/config`, or the user's or the system's git configuration). Decision: a git
    /// setting, not a file in the project, because a committed file naming a command
    /// would run that command for everyone who clones the repository; git never clones a
    /// config.
    pub fn command(&self, project: &Path) -> Option<String> {
        self.command.clone().or_else(|| git_setting(project))
    }
}

fn git_setting(project: &Path) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(project)
        .args(["config", "--get", GIT_SETTING])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let value = String::from_utf8(out.stdout).ok()?;
    let value = value.trim_end_matches(['\n', '\r']);
    (out.status.success() && !value.trim().is_empty()).then(|| value.to_string())
}

/// Sends what a hook run's event calls for. A hard stop is sent once: the key of the last
/// one sent is kept in the logs directory, and the same hard stop again sends nothing.
pub fn send_for_stop(rec: &Record, project: &Path, logs: &Path, settings: &Settings) {
    let Some(n) = for_stop(rec, project) else {
        return;
    };
    // Without a notifier nothing is written, not even the hard stop's marker.
    let Some(command) = settings.command(project) else {
        return;
    };
    if matches!(n.event, Kind::HardStop | Kind::BudgetSpent) {
        let marker = logs.join(format!("{}-{LAST_HARD_STOP}", rec.plan));
        let key = format!(
            "{}:{}:{}",
            <&str>::from(n.event),
            n.review.as_deref().unwrap_or(""),
            n.iteration.unwrap_or(0)
        );
        if std::fs::read_to_string(&marker).is_ok_and(|k| k == key) {
            return;
        }
        let _ = crate::store::atomic::write_unsynced(&marker, key.as_bytes());
    }
    start(&command, &n, logs, settings.timeout);
}

/// Starts the user's notifier for `n`, detached, and returns at once. Nothing is sent
/// without a notifier (see [`Settings::command`]); a notifier that cannot start is logged.
pub fn send(n: &Notification, logs: &Path, settings: &Settings) {
    if let Some(command) = settings.command(Path::new(&n.project)) {
        start(&command, n, logs, settings.timeout);
    }
}

fn start(command: &str, n: &Notification, logs: &Path, timeout: Duration) {
    let json = match serde_json::to_string(n) {
        Ok(j) => j,
        Err(_) => return,
    };
    let started = std::env::current_exe().and_then(|exe| {
        let mut supervisor = Command::new(exe);
        supervisor
            .arg(ROLE_ARG)
            .arg(timeout.as_secs_f64().to_string())
            .arg(logs.join(LOG))
            .arg(command)
            .stdin(Stdio::piped())
            // The client waits for the hook's stdout to close: the notifier must not hold it.
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        platform::detach(&mut supervisor);
        let mut child = supervisor.spawn()?;
        // Far below a pipe's buffer, so the write never waits on the notifier.
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(json.as_bytes())?;
            stdin.write_all(b"\n")?;
        }
        Ok(())
    });
    if let Err(e) = started {
        log_line(&logs.join(LOG), n.event, &format!("could not start: {e}"));
    }
}

/// The supervisor: runs the user's command with the notification on stdin (inherited),
/// ends it at the timeout, logs the outcome, and exits. Never returns.
pub fn serve(mut args: impl Iterator<Item = std::ffi::OsString>) -> ! {
    let secs: f64 = args
        .next()
        .and_then(|s| s.to_str()?.parse().ok())
        .unwrap_or(Var::NotifyTimeout.default_number() as f64);
    let log = PathBuf::from(args.next().unwrap_or_default());
    let command = args.next().unwrap_or_default();
    let mut input = String::new();
    let _ = io::Read::read_to_string(&mut io::stdin(), &mut input);
    let event = serde_json::from_str::<Notification>(&input)
        .map(|n| n.event)
        .unwrap_or(Kind::HardStop);
    let outcome = run(&command, &input, Duration::from_secs_f64(secs));
    log_line(&log, event, &outcome);
    std::process::exit(0);
}

fn run(command: &std::ffi::OsStr, input: &str, limit: Duration) -> String {
    let mut cmd = platform::shell(command);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    platform::detach(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return format!("could not start: {e}"),
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input.as_bytes());
    }
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return "ok".to_owned(),
            Ok(Some(status)) => return format!("failed: {status}"),
            Ok(None) if Instant::now() >= deadline => {
                platform::kill_tree(&mut child);
                let _ = child.wait();
                return format!("timed out after {} s and was killed", limit.as_secs_f64());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return format!("could not wait: {e}"),
        }
    }
}

fn log_line(log: &Path, event: Kind, outcome: &str) {
    let line = serde_json::json!({
        "ts": jiff::Timestamp::now().to_string(),
        "event": <&str>::from(event),
        "notifier": outcome,
    });
    // One write of the whole line: `writeln!` on a File writes it in pieces, which a
    // reader (or another hook appending at the same moment) could see half done.
    let line = format!("{line}\n");
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut f| f.write_all(line.as_bytes()));
}

#[cfg(unix)]
mod platform {
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};

    pub fn shell(command: &std::ffi::OsStr) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(command);
        c
    }

    /// Its own process group: outlives the hook's, and its whole tree can be ended.
    pub fn detach(cmd: &mut Command) {
        cmd.process_group(0);
    }

    pub fn kill_tree(child: &mut Child) {
        let group = rustix::process::Pid::from_child(child);
        if rustix::process::kill_process_group(group, rustix::process::Signal::KILL).is_err() {
            let _ = child.kill();
        }
    }
}

#[cfg(not(unix))]
mod platform {
    use std::process::{Child, Command};

    pub fn shell(command: &std::ffi::OsStr) -> Command {
        let mut c = Command::new("cmd");
        c.arg("/C").arg(command);
        c
    }

    pub fn detach(_cmd: &mut Command) {}

    pub fn kill_tree(child: &mut Child) {
        let _ = child.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notifier_timeout_that_is_not_a_positive_number_is_the_default_and_at_most_an_hour() {
        let secs = |v: Option<&str>| Settings::new(None, v).timeout.as_secs_f64();
        let default = Var::NotifyTimeout.default_number() as f64;
        assert_eq!(secs(None), default);
        for bad in ["", "soon", "0", "-5", "NaN", "inf"] {
            assert_eq!(secs(Some(bad)), default, "{bad}");
        }
        assert_eq!(secs(Some(" 2.5 ")), 2.5);
        assert_eq!(secs(Some("86400")), 3600.0);
    }

    #[test]
    fn the_notify_variable_wins_over_the_git_setting() {
        let dir = tempfile::tempdir().unwrap();
        let s = Settings::new(Some("notify-me".into()), None);
        assert_eq!(s.command(dir.path()).as_deref(), Some("notify-me"));
    }

    fn rec(branch: Branch) -> Record {
        Record {
            plan: "p".into(),
            branch,
            review: Some("plan-review"),
            iteration: Some(3),
            ..Record::default()
        }
    }

    fn kind(r: &Record) -> Option<Kind> {
        for_stop(r, Path::new("/proj")).map(|n| n.event)
    }

    #[test]
    fn each_branch_that_needs_a_person_has_its_notification() {
        let mut hard = rec(Branch::HardStop);
        hard.stop_reason = Some("max_reviews_reached");
        assert_eq!(kind(&hard), Some(Kind::HardStop));
        hard.stop_reason = Some("budget_exhausted");
        assert_eq!(kind(&hard), Some(Kind::BudgetSpent));
        let mut passed = rec(Branch::Advanced);
        passed.next_phase_after = Some("create-tasks".into());
        assert_eq!(kind(&passed), Some(Kind::CyclePassed));
        passed.next_phase_after = Some("complete".into());
        assert_eq!(kind(&passed), Some(Kind::PlanComplete));
        let mut paused = rec(Branch::Paused);
        assert_eq!(
            kind(&paused),
            None,
            "still paused: no reset time, nothing new"
        );
        paused.paused_until = Some("2026-11-26T12:00:00Z".into());
        let n = for_stop(&paused, Path::new("/proj")).unwrap();
        assert_eq!(n.event, Kind::Paused);
        assert!(n.text.contains("2026-11-26T12:00:00Z"), "{}", n.text);
    }

    #[test]
    fn ordinary_stops_notify_nobody() {
        for b in [
            Branch::NoReviewDue,
            Branch::ReviewBlocked,
            Branch::ReviewerFailed,
            Branch::PostReviewPending,
            Branch::Locked,
        ] {
            assert_eq!(kind(&rec(b)), None, "{b:?}");
        }
    }

    #[test]
    fn a_runs_blocked_task_conflict_and_end_are_notified_and_nothing_else() {
        let n = |e: &Entry| for_run_entry(e, "p", "r1", Path::new("/x")).map(|n| (n.event, n.task));
        let blocked = Entry::Blocked {
            task: "2".into(),
            reason: "hard stop".into(),
        };
        assert_eq!(n(&blocked), Some((Kind::TaskBlocked, Some(2))));
        let conflict = Entry::Conflict {
            task: "3".into(),
            files: vec!["a.rs".into()],
        };
        assert_eq!(n(&conflict), Some((Kind::Conflict, Some(3))));
        let done = Entry::End {
            outcome: Outcome::Done,
        };
        assert_eq!(n(&done), Some((Kind::RunDone, None)));
        let partial = Entry::End {
            outcome: Outcome::Partial,
        };
        assert_eq!(n(&partial), Some((Kind::RunPartial, None)));
        let merged = Entry::Merged {
            task: "1".into(),
            commit: "abc".into(),
        };
        assert_eq!(n(&merged), None);
    }

    #[test]
    fn the_event_names_are_the_documented_ones() {
        let n = Notification::new(Kind::RunPartial, "p", Path::new("/x"), "t".into());
        let v: serde_json::Value = serde_json::to_value(&n).unwrap();
        assert_eq!(v["event"], "run-partial");
        assert_eq!(<&str>::from(Kind::TaskBlocked), "task-blocked");
    }
}
