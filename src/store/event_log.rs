//! `.taskie/logs/events.jsonl` (SPEC §10): one line per hook run that selected a plan.

use crate::model::spend::{self, Spend};
use crate::model::state::State;
use crate::store::fs;
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::path::Path;

/// Size past which the log is rotated to `events.jsonl.1`.
pub const ROTATE_BYTES: u64 = 10 * 1024 * 1024;
pub const FILE: &str = "events.jsonl";

/// The branch of SPEC §5 a run took; stable names for scripts and `taskie status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Branch {
    #[default]
    NoReviewDue,
    ValidationFailed,
    StateError,
    PostReviewPending,
    ReviewsDisabled,
    HardStop,
    PreconditionMissing,
    ReviewerFailed,
    /// A reviewer's usage limit paused the plan, or the plan is still paused (SPEC §22).
    Paused,
    ReviewBlocked,
    Advanced,
    Locked,
    /// A review was due but the findings ledger cannot be read (SPEC §21): none started.
    LedgerError,
    /// An internal error the hook failed open on; never part of the normal procedure.
    InternalError,
}

impl Branch {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Record {
    pub ts: String,
    pub plan: String,
    pub outcome: &'static str,
    /// The branch taken. Logged as `path`, the name SPEC §10 gives it and scripts read.
    #[serde(rename = "path")]
    pub branch: Branch,
    pub review: Option<&'static str>,
    pub iteration: Option<u64>,
    pub model: Option<String>,
    pub verdict: Option<&'static str>,
    pub verdict_source: Option<String>,
    pub reviewer_exit: Option<i32>,
    /// The whole hook run, reviewer included.
    pub duration_ms: u64,
    pub phase_before: Option<String>,
    pub next_phase_before: Option<String>,
    pub phase_after: Option<String>,
    pub next_phase_after: Option<String>,
    /// Reviews this hook run made that count (k for a panel of k): an unavailable
    /// reviewer's run is none, even when its process ran (SPEC §22); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviews: Option<u64>,
    /// What they reported (SPEC §18), summed over a panel.
    #[serde(flatten)]
    pub spend: Spend,
    /// A panel's members one by one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub panel: Vec<Member>,
    /// Set when the decision was a block but the session had already been blocked this
    /// many times in a row (`TASKIE_BLOCK_CAP`), so the stop was allowed (SPEC §20).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_cap: Option<u64>,
    /// After a failover (SPEC §22): who reviewed…
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reviewed_by: Vec<String>,
    /// …and who could not, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<crate::model::cycle::Unavailable>,
    /// A hard stop's reason, as in the diagnostics file (SPEC §10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<&'static str>,
    /// The stop that paused the plan: until when (RFC 3339, UTC; SPEC §22).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_until: Option<String>,
    /// What the reviewer changed in the project, or why that could not be checked (SPEC §8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<crate::model::worktree::Report>,
}

/// One reviewer of a panel, as logged.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Member {
    pub reviewer: String,
    /// `PASS`, `FAIL`, `UNKNOWN`, or `failed` when it produced no review.
    pub verdict: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub log: String,
    #[serde(flatten)]
    pub spend: Spend,
}

impl Record {
    pub fn after(&mut self, s: &State) {
        self.phase_after = Some(s.phase.clone());
        self.next_phase_after = s.next_phase.clone();
    }
}

/// A record as read back: the same fields, owned.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct Logged {
    pub ts: String,
    pub plan: String,
    /// [`Record::branch`], logged as `path`.
    #[serde(rename = "path")]
    pub branch: String,
    pub review: Option<String>,
    pub iteration: Option<u64>,
    pub model: Option<String>,
    pub verdict: Option<String>,
    pub reviews: Option<u64>,
    #[serde(flatten)]
    pub spend: Spend,
}

impl Logged {
    fn run(self) -> spend::Run {
        spend::Run {
            advanced: self.branch == Branch::Advanced.as_str(),
            review: self.review,
            iteration: self.iteration,
            reviews: self.reviews.unwrap_or(0),
            spend: self.spend,
        }
    }
}

/// Appends one record, rotating the log first when it is past [`ROTATE_BYTES`].
pub fn append(logs: &Path, record: &Record) -> io::Result<()> {
    append_rotating_at(logs, record, ROTATE_BYTES)
}

/// The file that serialises rotations between concurrent hooks.
const ROTATE_LOCK: &str = "events.jsonl.lock";

fn append_rotating_at(logs: &Path, record: &Record, limit: u64) -> io::Result<()> {
    let path = logs.join(FILE);
    let mut line = serde_json::to_string(record).map_err(io::Error::other)?;
    line.push('\n');
    let (mut file, len) = open_append(&path)?;
    if len >= limit {
        rotate(logs, limit)?;
        file = open_append(&path)?.0;
    }
    // One write call per line: with O_APPEND, concurrent hooks never interleave a line.
    file.write_all(line.as_bytes())
}

/// Renames the log to `events.jsonl.1` under an exclusive lock, after checking again, by
/// path, that it is still past the limit: two hooks that both saw a full log would
/// otherwise rotate twice, and the second rename would replace the whole previous
/// history with a file of a few lines. A writer still holding the old file appends to
/// `events.jsonl.1`, which loses nothing. The wait for the lock is bounded (the holder
/// only renames); past it the log is rotated by a later run instead.
fn rotate(logs: &Path, limit: u64) -> io::Result<()> {
    let guard = fs::open_regular(&logs.join(ROTATE_LOCK), fs::Open::Write)?;
    let mut held = false;
    for _ in 0..400 {
        match guard.try_lock() {
            Ok(()) => {
                held = true;
                break;
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
    let path = logs.join(FILE);
    if held && std::fs::symlink_metadata(&path).is_ok_and(|m| m.len() >= limit) {
        fs_err::rename(&path, logs.join(format!("{FILE}.1")))?;
    }
    Ok(())
}

/// The log open for appending, and its size.
fn open_append(path: &Path) -> io::Result<(std::fs::File, u64)> {
    // Never a link (it would write wherever it points), never a FIFO (it would wait).
    fs::open_regular_sized(path, fs::Open::Append)
}

/// How much of the end of the log [`recent_history`] reads: hundreds of records, far more
/// than one cycle's reviews, and a constant cost whatever the size of the log.
pub const RECENT_BYTES: u64 = 256 * 1024;

/// The records of one plan's review `review`, oldest first, from the newest
/// [`RECENT_BYTES`] of the log only (both generations counted together), for the texts
/// that show a cycle's verdicts: reading them costs the same at any log size. A cycle
/// older than that window shows without verdicts.
pub fn recent_history(logs: &Path, plan: &str, review: &str) -> Vec<Logged> {
    let current = tail(&logs.join(FILE), RECENT_BYTES);
    let left = RECENT_BYTES.saturating_sub(current.len() as u64);
    let older = if left > 0 {
        tail(&logs.join(format!("{FILE}.1")), left)
    } else {
        Vec::new()
    };
    [older, current]
        .iter()
        .flat_map(|bytes| {
            String::from_utf8_lossy(bytes)
                .lines()
                .filter_map(|l| serde_json::from_str::<Logged>(l).ok())
                .filter(|r| r.plan == plan && r.review.as_deref() == Some(review))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The last `n` bytes of a regular file, from the first whole line in them; nothing when
/// the file is missing or not a regular file.
fn tail(path: &Path, n: u64) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok((mut file, len)) = fs::open_regular_sized(path, fs::Open::Read) else {
        return Vec::new();
    };
    let start = len.saturating_sub(n);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err() || file.take(n).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    if start > 0 {
        // Cut inside a line: drop its end.
        let first = bytes
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..first);
    }
    bytes
}

/// The records of one plan, oldest first, from both log generations.
fn records(logs: &Path, plan: &str) -> impl Iterator<Item = Logged> {
    let mut out = Vec::new();
    for name in [format!("{FILE}.1"), FILE.to_string()] {
        let Ok(Some(bytes)) = fs::read_regular(&logs.join(name), 4 * ROTATE_BYTES) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        out.extend(
            text.lines()
                .filter_map(|l| serde_json::from_str::<Logged>(l).ok())
                .filter(|r| r.plan == plan),
        );
    }
    out.into_iter()
}

/// Every logged hook run of one plan, for its spend (SPEC §18): what both log
/// generations hold; older generations are gone, so a plan logged past 20 MiB
/// undercounts.
pub fn spend_runs(logs: &Path, plan: &str) -> Vec<spend::Run> {
    records(logs, plan).map(Logged::run).collect()
}

/// The verdicts of the cycle that ended with iteration `last`: walking back from the
/// newest record, iterations must count down to 1 without a gap.
pub fn cycle_verdicts(history: &[Logged], last: u64) -> Vec<(u64, String)> {
    let mut out: Vec<(u64, String)> = Vec::new();
    let mut want = last;
    for r in history.iter().rev() {
        if want == 0 {
            break;
        }
        if let (Some(i), Some(v)) = (r.iteration, r.verdict.as_ref())
            && i == want
        {
            out.push((i, v.clone()));
            want -= 1;
        }
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(i: u64, v: &str) -> Logged {
        Logged {
            iteration: Some(i),
            verdict: Some(v.into()),
            ..Logged::default()
        }
    }

    #[test]
    fn recent_history_reads_only_the_end_of_the_log_across_both_generations() {
        let dir = tempfile::tempdir().unwrap();
        let row = |plan: &str, i: u64, v: &str| {
            format!(
                "{{\"ts\":\"t\",\"plan\":\"{plan}\",\"path\":\"review-blocked\",\"review\":\"plan-review\",\"iteration\":{i},\"verdict\":\"{v}\"}}\n"
            )
        };
        // An old record far back in .1, then filler past the window, then the cycle:
        // review 1 in .1 and review 2 in the current log.
        let mut older = row("p", 9, "PASS");
        older.push_str(&row("other", 1, "FAIL").repeat((RECENT_BYTES / 80) as usize * 2));
        older.push_str(&row("p", 1, "FAIL"));
        std::fs::write(dir.path().join(format!("{FILE}.1")), older).unwrap();
        std::fs::write(dir.path().join(FILE), row("p", 2, "PASS")).unwrap();
        let h = recent_history(dir.path(), "p", "plan-review");
        let got: Vec<(Option<u64>, Option<&str>)> = h
            .iter()
            .map(|r| (r.iteration, r.verdict.as_deref()))
            .collect();
        assert_eq!(got, [(Some(1), Some("FAIL")), (Some(2), Some("PASS"))]);
        assert_eq!(
            recent_history(&dir.path().join("none"), "p", "plan-review").len(),
            0
        );
    }

    #[test]
    fn cycle_verdicts_take_the_newest_run_of_iterations() {
        let h = [
            logged(1, "PASS"),
            logged(2, "FAIL"),
            logged(1, "FAIL"),
            logged(2, "FAIL"),
            logged(3, "PASS"),
        ];
        assert_eq!(
            cycle_verdicts(&h, 3),
            vec![(1, "FAIL".into()), (2, "FAIL".into()), (3, "PASS".into())]
        );
    }

    #[test]
    fn spend_is_logged_flat_and_read_back_from_both_generations_for_one_plan() {
        let dir = tempfile::tempdir().unwrap();
        let rec = |plan: &str, cost: f64| Record {
            plan: plan.into(),
            outcome: "block",
            branch: Branch::ReviewBlocked,
            review: Some("plan-review"),
            iteration: Some(1),
            reviews: Some(2),
            spend: Spend {
                cost_usd: Some(cost),
                input_tokens: Some(10),
                reviewer_ms: Some(1500),
                ..Spend::default()
            },
            ..Record::default()
        };
        append(dir.path(), &rec("p", 0.5)).unwrap();
        fs_err::rename(dir.path().join(FILE), dir.path().join(format!("{FILE}.1"))).unwrap();
        append(dir.path(), &rec("p", 0.25)).unwrap();
        append(dir.path(), &rec("other", 9.0)).unwrap();
        let line = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        let v: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
        assert_eq!(
            (&v["cost_usd"], &v["input_tokens"], &v["reviews"]),
            (&0.25.into(), &10.into(), &2.into())
        );
        assert!(
            v.get("output_tokens").is_none(),
            "unreported figures are left out"
        );
        let runs = spend_runs(dir.path(), "p");
        assert_eq!(runs.len(), 2);
        let t = spend::plan(&runs);
        assert_eq!((t.reviews, t.cost_usd, t.review_seconds), (4, 0.75, 3.0));
    }

    #[test]
    fn the_branch_is_logged_as_path_and_a_line_an_older_taskie_wrote_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let rec = Record {
            plan: "p".into(),
            branch: Branch::Advanced,
            review: Some("plan-review"),
            ..Record::default()
        };
        append(dir.path(), &rec).unwrap();
        let old = "{\"ts\":\"t\",\"plan\":\"p\",\"outcome\":\"block\",\"path\":\"review-blocked\",\"review\":\"plan-review\",\"iteration\":1}\n";
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(FILE))
            .unwrap();
        f.write_all(old.as_bytes()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(
            (&first["path"], first.get("branch")),
            (&"advanced".into(), None)
        );
        let branches: Vec<String> = recent_history(dir.path(), "p", "plan-review")
            .into_iter()
            .map(|l| l.branch)
            .collect();
        assert_eq!(branches, ["advanced", "review-blocked"]);
    }

    #[test]
    fn appends_and_rotates_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let rec = Record {
            plan: "p".into(),
            outcome: "allow",
            review: Some("plan-review"),
            ..Record::default()
        };
        append(dir.path(), &rec).unwrap();
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(v["path"], "no-review-due");
        assert_eq!(recent_history(dir.path(), "p", "plan-review").len(), 1);

        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(FILE))
            .unwrap();
        f.set_len(ROTATE_BYTES).unwrap();
        append(dir.path(), &rec).unwrap();
        assert_eq!(
            std::fs::metadata(dir.path().join(FILE)).unwrap().len() as usize,
            text.len()
        );
        assert!(dir.path().join("events.jsonl.1").exists());
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "Wine loses appends of separate handles (2 to 4 lines of 720 even without a \
                  rotation), Windows does not: run it on a real Windows machine"
    )]
    fn concurrent_appends_at_the_rotation_boundary_lose_no_line() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().to_path_buf();
        let rec = Record {
            plan: "p".into(),
            outcome: "allow",
            ..Record::default()
        };
        let line_len = serde_json::to_string(&rec).unwrap().len() as u64 + 1;
        // Just below the limit, so the first appends cross it and exactly one rotation
        // is due; the appends together stay far below a second one.
        let (threads, each) = (8u64, 40u64);
        let before = 400;
        let limit = (before + 1) * line_len;
        for _ in 0..before {
            append_rotating_at(&logs, &rec, u64::MAX).unwrap();
        }
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (logs, rec) = (logs.clone(), rec.clone());
                std::thread::spawn(move || {
                    for _ in 0..each {
                        append_rotating_at(&logs, &rec, limit).unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let lines = |name: &str| {
            std::fs::read_to_string(logs.join(name))
                .unwrap_or_default()
                .lines()
                .count() as u64
        };
        assert_eq!(
            lines(FILE) + lines("events.jsonl.1"),
            before + threads * each
        );
    }
}
