//! Where a run keeps its files (SPEC §23): the journal under `.taskie/runs/<run>/` in the
//! project, and, outside the user's checkout, the worktrees and each session's gate (the
//! `.taskie` its hook works in). The heartbeats a run session's hook leaves.

use crate::model::run::journal::{Entry, Line};
use crate::model::run::view::{self, RunView};
use serde::{Deserialize, Serialize};
use std::io::Write;

// Per platform: whether a session's process group lives, and dying at once as a
// `kill -9` does (test builds only: the kill point below).
#[cfg(unix)]
#[path = "run/unix.rs"]
mod os;
#[cfg(windows)]
#[path = "run/windows.rs"]
mod os;
use std::path::{Path, PathBuf};

/// The journal's file name in the run's directory.
pub const JOURNAL: &str = "journal.jsonl";
/// The heartbeats file in a session's gate.
pub const HEARTBEATS: &str = "heartbeats.jsonl";
/// What the driver writes into a session's gate to say whose it is.
pub const GATE_MARK: &str = "run.json";
/// The pid (and process group) of the gate's last session, in the gate.
pub const AGENT_PID: &str = "agent.pid";

/// `.taskie/runs` of a project.
pub fn runs_dir(taskie: &Path) -> PathBuf {
    taskie.join("runs")
}

/// Where a run's worktrees and gates live: outside the user's checkout, so no path an
/// agent borrows from the checkout (and no tool that walks the checkout) reaches them.
/// `$XDG_DATA_HOME/taskie/runs/<run>`, else `~/.local/share/taskie/runs/<run>`, else
/// beside the repository's git directory (`data_home`, `home`: the two variables).
pub fn work_dir(
    run: &str,
    git_common_dir: &Path,
    data_home: Option<&Path>,
    home: Option<&Path>,
) -> PathBuf {
    let base = data_home
        .filter(|p| p.is_absolute())
        .map(Path::to_path_buf)
        .or_else(|| home.map(|h| h.join(".local/share")))
        .map(|d| d.join("taskie/runs"))
        .unwrap_or_else(|| git_common_dir.join("taskie-runs"));
    base.join(run)
}

/// The journal of one run.
#[derive(Debug, Clone)]
pub struct Journal {
    pub path: PathBuf,
}

impl Journal {
    pub fn new(run_dir: &Path) -> Journal {
        Journal {
            path: run_dir.join(JOURNAL),
        }
    }

    /// Appends one entry and makes it durable before returning: the step it names is
    /// done only after this.
    pub fn append(&self, entry: &Entry) -> std::io::Result<()> {
        kill_point("before", entry.step());
        if let Some(dir) = self.path.parent() {
            crate::store::project::create_runtime_dir(dir.parent().unwrap_or(dir))?;
            fs_err::create_dir_all(dir)?;
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        let line = Line {
            ts: Some(crate::clock::stamp()),
            entry: entry.clone(),
        };
        f.write_all(line.to_line().as_bytes())?;
        f.sync_data()?;
        kill_point("after", entry.step());
        Ok(())
    }

    pub fn read(&self) -> Vec<Entry> {
        self.lines().into_iter().map(|l| l.entry).collect()
    }

    /// The entries with the time each was written.
    pub fn lines(&self) -> Vec<Line> {
        std::fs::read_to_string(&self.path)
            .map(|t| Line::parse_all(&t))
            .unwrap_or_default()
    }
}

/// Tests only: `TASKIE_TEST_KILL_AT=<before|after>:<step>[:<n>]` makes the driver kill
/// itself with SIGKILL at the n-th (default first) such point, as a crash there would.
/// Compiled only with debug assertions, as `cargo test` builds the binaries it runs (the
/// same gate as `TASKIE_TEST_PAUSE_AT`): a release build ignores the variable.
#[cfg(debug_assertions)]
fn kill_point(when: &str, step: &str) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static SEEN: AtomicUsize = AtomicUsize::new(0);
    let Some(spec) = &crate::env::test_switches().kill_at else {
        return;
    };
    let mut parts = spec.split(':');
    if parts.next() != Some(when) || parts.next() != Some(step) {
        return;
    }
    let nth: usize = parts.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    if SEEN.fetch_add(1, Ordering::SeqCst) + 1 == nth {
        os::kill_this_process();
    }
}

/// Release builds: nothing.
#[cfg(not(debug_assertions))]
#[inline(always)]
fn kill_point(_when: &str, _step: &str) {}

/// The newest run of `plan` in `.taskie/runs`, by the name's timestamp.
pub fn latest(taskie: &Path, plan: &str) -> Option<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(runs_dir(taskie))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{plan}-")))
        })
        .filter(|p| p.join(JOURNAL).is_file())
        .collect();
    runs.sort();
    runs.pop()
}

/// Whose a gate is: the run and the task (or `all`, the all-code review).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateMark {
    pub run: String,
    pub task: String,
}

/// The `branch` of the heartbeat a run session's hook writes when a review starts.
pub const REVIEWING: &str = "reviewing";

/// One stop of a run session, as its hook saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heartbeat {
    pub ts: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The branch of the hook's procedure (`advanced`, `review-blocked`, …), or
    /// [`REVIEWING`]. Written as `branch`; a line an older hook wrote names it `path`.
    #[serde(alias = "path")]
    pub branch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// The commit the review at this stop reviewed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// Appends a heartbeat to a gate (made durable: the driver trusts only what is there).
pub fn beat(gate: &Path, beat: &Heartbeat) -> std::io::Result<()> {
    let mut line = serde_json::to_string(beat).expect("a heartbeat always serializes");
    line.push('\n');
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(gate.join(HEARTBEATS))?;
    f.write_all(line.as_bytes())?;
    f.sync_data()
}

/// The heartbeats of a gate, oldest first.
pub fn heartbeats(gate: &Path) -> Vec<Heartbeat> {
    std::fs::read_to_string(gate.join(HEARTBEATS))
        .map(|t| {
            t.lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The mark of a gate, if it is one.
pub fn gate_mark(gate: &Path) -> Option<GateMark> {
    let text = std::fs::read_to_string(gate.join(GATE_MARK)).ok()?;
    serde_json::from_str(&text).ok()
}

/// The run in `run_dir` as people watch it (see `model::run::view`): its journal, each
/// session's gate (reviews and cost from its spend ledger, a review under way from its
/// heartbeats, the session's process), and whether a driver holds the run's lock. The
/// one reader behind `taskie run`'s live output and `taskie status`.
pub fn observe(run_dir: &Path, locks: &Path) -> Option<RunView> {
    let lines = Journal::new(run_dir).lines();
    let Some(Line {
        entry: Entry::Start { plan, .. },
        ..
    }) = lines.first()
    else {
        return None;
    };
    // The gates are beside the worktrees the journal names.
    let work = lines.iter().find_map(|l| match &l.entry {
        Entry::Session { worktree, .. } => Path::new(worktree).parent().map(Path::to_path_buf),
        _ => None,
    });
    let mut tasks: Vec<String> = vec![view::ALL.into()];
    for l in &lines {
        if let Entry::Session { task, .. } = &l.entry
            && !tasks.contains(task)
        {
            tasks.push(task.clone());
        }
    }
    let gates = work
        .map(|work| {
            tasks
                .into_iter()
                .map(|t| {
                    let seen = gate_seen(&work.join(format!("gate-{t}")), plan);
                    (t, seen)
                })
                .collect()
        })
        .unwrap_or_default();
    let seen = view::Seen {
        now_ms: crate::clock::now().as_millisecond(),
        driver_alive: driver_alive(locks, plan),
        gates,
    };
    view::view(&lines, &seen)
}

/// Whether the process group `pid` leads still has a running process (exited members
/// waiting to be reaped do not count); `None` where the system cannot tell.
pub(crate) fn group_alive(pid: i32) -> Option<bool> {
    os::group_alive(pid)
}

/// What a gate says: reviews and cost from its ledger, a review under way, its session.
fn gate_seen(gate: &Path, plan: &str) -> view::GateSeen {
    let ledger =
        crate::store::snapshot::ledger_file(&crate::store::project::plan_dir_in(gate, plan));
    let session_alive = std::fs::read_to_string(gate.join(AGENT_PID))
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .and_then(group_alive);
    view::GateSeen {
        reviews: ledger.as_ref().map_or(0, |l| l.plan.reviews),
        cost_usd: ledger.map(|l| l.plan.cost_usd),
        reviewing: heartbeats(gate)
            .last()
            .is_some_and(|b| b.branch == REVIEWING),
        session_alive,
    }
}

/// The lock a run's driver holds while it drives `plan` (`<plan>.run` in `.taskie/locks`).
pub fn run_lock(plan: &str) -> String {
    format!("{plan}.run")
}

/// Whether a driver holds the run lock of `plan` (this process included). Probed by
/// taking it, and letting go at once, when it is free.
fn driver_alive(locks: &Path, plan: &str) -> bool {
    matches!(
        crate::store::lock::try_lock(locks, &run_lock(plan)),
        Ok(None)
    )
}

/// The newest run of `plan` as its journal tells it, for `taskie status`.
pub fn latest_state(taskie: &Path, plan: &str) -> Option<crate::model::run::journal::RunState> {
    let dir = latest(taskie, plan)?;
    crate::model::run::journal::RunState::replay(&Journal::new(&dir).read())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_works_under_xdg_data_home_if_absolute_else_under_home_else_beside_git() {
        // Absolute on this platform: a path without a drive is not absolute on Windows.
        let root = Path::new(if cfg!(windows) { r"C:\" } else { "/" });
        let (git, data, home) = (
            root.join("repo/.git"),
            root.join("data"),
            root.join("home/u"),
        );
        assert_eq!(
            work_dir("r1", &git, Some(&data), Some(&home)),
            data.join("taskie/runs/r1")
        );
        assert_eq!(
            work_dir("r1", &git, Some(Path::new("relative")), Some(&home)),
            home.join(".local/share/taskie/runs/r1")
        );
        assert_eq!(work_dir("r1", &git, None, None), git.join("taskie-runs/r1"));
    }

    #[test]
    fn a_heartbeat_is_written_with_branch_and_an_older_line_with_path_still_reads() {
        let beat = Heartbeat {
            ts: "t".into(),
            session: None,
            branch: "advanced".into(),
            review: None,
            iteration: None,
            verdict: None,
            commit: Some("abc".into()),
        };
        let line = serde_json::to_string(&beat).unwrap();
        assert!(line.contains("\"branch\":\"advanced\""), "{line}");
        assert!(!line.contains("\"path\""), "{line}");
        let old = r#"{"ts":"t","path":"advanced","commit":"abc"}"#;
        assert_eq!(serde_json::from_str::<Heartbeat>(old).unwrap(), beat);
    }
}
