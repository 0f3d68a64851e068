//! The findings ledger (SPEC §21): every finding of a review cycle gets a stable id (`F1`,
//! `F2`, … per cycle), and keeps its text, its status and the agent's answer, so the next
//! reviewer verifies fixes instead of rediscovering the same three findings a round. Pure:
//! the ledger is `findings.json` beside the state (written by the store under the lock).

use crate::model::text::prompt_line;
use serde::{Deserialize, Serialize};

/// What a reviewer said about the ledger's findings: ids whose fix it confirmed, and ids
/// it found not fixed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verified {
    pub resolved: Vec<String>,
    pub reopened: Vec<String>,
}

impl Verified {
    /// From a review written as text (gemini, or a review file): lines
    /// `RESOLVED: F1, F2` and `REOPENED: F3`, case and decoration tolerated.
    pub fn from_text(text: &str) -> Verified {
        let ids = |key: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| {
                    let l = l.trim().trim_start_matches(['-', '*', '#', ' ', '`']);
                    let head = l.get(..key.len())?;
                    head.eq_ignore_ascii_case(key)
                        .then(|| l[key.len()..].to_string())
                })
                .flat_map(|rest| {
                    rest.split([',', ' ', ';'])
                        .map(|w| {
                            w.trim_matches(|c: char| !c.is_ascii_alphanumeric())
                                .to_string()
                        })
                        .filter(|w| is_id(w))
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        Verified {
            resolved: ids("RESOLVED:"),
            reopened: ids("REOPENED:"),
        }
    }
}

/// `F` and a number.
fn is_id(w: &str) -> bool {
    w.len() > 1 && w.starts_with(['F', 'f']) && w[1..].bytes().all(|b| b.is_ascii_digit())
}

/// The number of an id (`F12` → 12).
fn number(id: &str) -> Option<u64> {
    id.strip_prefix(['F', 'f'])?.parse().ok()
}

/// Where a finding stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Raised (or reopened) and not answered yet.
    Open,
    /// The agent says it fixed it; the next reviewer verifies.
    Fixed,
    /// The agent will not fix it, and says why.
    Dismissed,
    /// A reviewer confirmed the fix.
    Resolved,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Fixed => "fixed",
            Status::Dismissed => "dismissed",
            Status::Resolved => "resolved",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub id: String,
    pub text: String,
    /// The review (iteration) that raised it.
    pub opened: u64,
    pub status: Status,
    /// The agent's answer in its post-review: how it was fixed, or why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Times a reviewer reopened it (found it not fixed).
    #[serde(default)]
    pub reopened: u64,
}

/// One review cycle's findings: the cycle of review `review` (of task `task`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cycle {
    pub review: String,
    #[serde(default)]
    pub task: Option<u64>,
    pub findings: Vec<Finding>,
    /// Per review of the cycle: (iteration, findings it raised that were new).
    #[serde(default)]
    pub new_per_review: Vec<(u64, u64)>,
    /// A cycle that has ended keeps only its counts: its findings are dropped when the
    /// next cycle starts, so the ledger stays small however long the plan runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<Counts>,
}

impl Cycle {
    fn counts(&self) -> Counts {
        if let Some(closed) = self.closed {
            return closed;
        }
        let count = |s: Status| self.findings.iter().filter(|f| f.status == s).count() as u64;
        Counts {
            opened: self.findings.len() as u64,
            fixed: count(Status::Fixed) + count(Status::Resolved),
            dismissed: count(Status::Dismissed),
            reopened: self.findings.iter().map(|f| f.reopened).sum(),
            open: count(Status::Open),
        }
    }

    /// Keeps the counts, drops the findings (the cycle has ended).
    fn close(&mut self) {
        if self.closed.is_none() {
            self.closed = Some(self.counts());
            self.findings = Vec::new();
        }
    }
}

/// The most a finding's text, or an answer, keeps (the review file has it all).
pub const TEXT_CHARS: usize = 2000;

/// The most bytes findings.json holds when shorter texts can make it so: half of what its
/// reader takes (4 MiB, `store::fs::PLAN_FILE_LIMIT`), so the plan's own ledger never
/// becomes one it cannot read.
pub const LEDGER_MAX: usize = 2 * 1024 * 1024;

/// The lengths texts are cut to, in turn, while the ledger is past [`LEDGER_MAX`]. At the
/// last a finding takes at most about 330 bytes (NULs, written as six bytes each, answered
/// in 3-byte letters): a cycle would need over 12,000 findings (some 120 reviews each
/// raising the most one may add) to outgrow the reader.
const CLIPPED_TEXT_CHARS: [usize; 3] = [500, 100, 20];

/// The most new findings one review adds; the rest are named by one more finding that
/// points to the review file.
pub const NEW_PER_REVIEW: usize = 100;

/// The counts `taskie status` shows for a cycle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub opened: u64,
    pub fixed: u64,
    pub dismissed: u64,
    pub reopened: u64,
    pub open: u64,
}

/// The plan's ledger: the current cycle and the ones before it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    pub cycles: Vec<Cycle>,
    /// A review written before the state that records it: it counts once state.json is
    /// that state, and never otherwise ([`Ledger::settle`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
}

/// What one review said about the ledger, waiting for its state (a kill between the two
/// writes, or a state.json changed while the reviewer ran, must leave no trace of it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The tag of the state.json that records the review (`model::state::tag`).
    pub state: String,
    pub review: String,
    #[serde(default)]
    pub task: Option<u64>,
    pub iteration: u64,
    #[serde(default)]
    pub new: Vec<String>,
    #[serde(default)]
    pub resolved: Vec<String>,
    #[serde(default)]
    pub reopened: Vec<String>,
}

impl Ledger {
    /// The ledger as written; what is wrong with it otherwise.
    pub fn parse(bytes: &[u8]) -> Result<Ledger, String> {
        serde_json::from_slice(bytes).map_err(|e| e.to_string())
    }

    /// The ledger as findings.json holds it: at most [`LEDGER_MAX`] bytes whenever shorter
    /// copies of its texts can make it so. A long cycle of long findings (100 new ones a
    /// review, 2,000 characters each, in a script of 3-byte letters) outgrew the file's
    /// reader within a few reviews and stopped the plan; past the bound every text and
    /// answer is kept shorter (the review files keep every word), never an id, a status
    /// or a count.
    pub fn to_json(&self) -> String {
        let text = self.pretty();
        if text.len() <= LEDGER_MAX {
            return text;
        }
        let mut fitted = self.clone();
        let mut text = text;
        for max in CLIPPED_TEXT_CHARS {
            fitted.clip_texts(max);
            text = fitted.pretty();
            if text.len() <= LEDGER_MAX {
                break;
            }
        }
        text
    }

    fn pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        text.push('\n');
        text
    }

    /// Every text and answer the ledger keeps, [`clip`](crate::model::text::clip)ped to
    /// `max` characters.
    fn clip_texts(&mut self, max: usize) {
        let clip = |t: &mut String| {
            if t.chars().count() > max {
                *t = crate::model::text::clip(t, max);
            }
        };
        for f in self.cycles.iter_mut().flat_map(|c| c.findings.iter_mut()) {
            clip(&mut f.text);
            f.answer.as_mut().map(clip);
        }
        if let Some(p) = &mut self.pending {
            p.new.iter_mut().for_each(clip);
        }
    }

    pub fn cycle(&self, review: &str, task: Option<u64>) -> Option<&Cycle> {
        self.cycles
            .iter()
            .rev()
            .find(|c| c.review == review && c.task == task)
    }

    /// The cycle of `review`/`task`; a review at iteration 1 starts a new one (a new
    /// cycle numbers its findings from F1 again).
    fn cycle_for(&mut self, review: &str, task: Option<u64>, iteration: u64) -> &mut Cycle {
        let current = self
            .cycles
            .last()
            .is_some_and(|c| c.review == review && c.task == task && iteration > 1);
        if !current {
            self.cycles.iter_mut().for_each(Cycle::close);
            self.cycles.push(Cycle {
                review: review.into(),
                task,
                findings: Vec::new(),
                new_per_review: Vec::new(),
                closed: None,
            });
        }
        self.cycles.last_mut().expect("a cycle was just ensured")
    }

    /// Review `iteration` of the cycle said: `new` findings (each gets the next id),
    /// `resolved` ids whose fix it confirmed, `reopened` ids it found not fixed. Unknown
    /// ids are ignored. Returns the new findings as (id, text), for the block text.
    pub fn record_review(
        &mut self,
        review: &str,
        task: Option<u64>,
        iteration: u64,
        new: &[String],
        resolved: &[String],
        reopened: &[String],
    ) -> Vec<(String, String)> {
        let cycle = self.cycle_for(review, task, iteration);
        for f in cycle.findings.iter_mut() {
            if resolved.iter().any(|r| same_id(r, &f.id)) {
                f.status = Status::Resolved;
            }
            if reopened.iter().any(|r| same_id(r, &f.id)) {
                f.status = Status::Open;
                f.reopened += 1;
            }
        }
        let mut added = Vec::new();
        // After the highest id in the ledger, not after its length: a hand edit that
        // removed F2 must not give the next finding a second F3.
        let mut last = cycle
            .findings
            .iter()
            .filter_map(|f| number(&f.id))
            .max()
            .unwrap_or(0);
        let new: Vec<&str> = new
            .iter()
            .map(|t| t.trim())
            .filter(|t| !t.is_empty())
            .collect();
        let beyond = new.len().saturating_sub(NEW_PER_REVIEW);
        let more = format!("{beyond} more findings: see the review file");
        let kept = new[..new.len() - beyond]
            .iter()
            .copied()
            .chain((beyond > 0).then_some(more.as_str()));
        for text in kept {
            let text = crate::model::text::clip(text, TEXT_CHARS);
            last = last.saturating_add(1);
            let id = format!("F{last}");
            cycle.findings.push(Finding {
                id: id.clone(),
                text: text.clone(),
                opened: iteration,
                status: Status::Open,
                answer: None,
                reopened: 0,
            });
            added.push((id, text));
        }
        cycle.new_per_review.retain(|(i, _)| *i != iteration);
        cycle.new_per_review.push((iteration, added.len() as u64));
        added
    }

    /// Keeps review `p` pending, to count once state.json is the state it names. The ids
    /// it announces are the ones [`record_review`] gives on the ledger as it is now, which
    /// is what settling it does.
    ///
    /// [`record_review`]: Ledger::record_review
    pub fn record_pending(&mut self, p: Pending) {
        self.pending = Some(p);
    }

    /// Settles the pending review against the state on disk, tagged `state` (`None`: no
    /// state.json): recorded when it is the state the review names, dropped otherwise.
    /// Whether there was one.
    pub fn settle(&mut self, state: Option<&str>) -> bool {
        let Some(p) = self.pending.take() else {
            return false;
        };
        if state == Some(p.state.as_str()) {
            self.record_review(
                &p.review,
                p.task,
                p.iteration,
                &p.new,
                &p.resolved,
                &p.reopened,
            );
        }
        true
    }

    /// The agent's post-review `text` answers open findings, one line each starting with
    /// the id: `F2: fixed — …` or `F3: won't fix — …`. Returns the open ids it left
    /// unanswered.
    pub fn record_post_review(
        &mut self,
        review: &str,
        task: Option<u64>,
        text: &str,
    ) -> Vec<String> {
        let Some(cycle) = self
            .cycles
            .iter_mut()
            .rev()
            .find(|c| c.review == review && c.task == task)
        else {
            return Vec::new();
        };
        let mut unanswered = Vec::new();
        for f in cycle
            .findings
            .iter_mut()
            .filter(|f| f.status == Status::Open)
        {
            match answer_line(text, &f.id) {
                Some(answer) => {
                    f.status = if dismisses(&answer) {
                        Status::Dismissed
                    } else {
                        Status::Fixed
                    };
                    f.answer = Some(crate::model::text::clip(&answer, TEXT_CHARS));
                }
                None => unanswered.push(f.id.clone()),
            }
        }
        unanswered
    }

    pub fn counts(&self, review: &str, task: Option<u64>) -> Counts {
        self.cycle(review, task)
            .map(Cycle::counts)
            .unwrap_or_default()
    }

    /// The ledger as the next reviewer's prompt carries it, with SPEC §21's instructions;
    /// empty when the cycle has no findings yet. Each text and answer is one clean line of
    /// at most [`PROMPT_TEXT_MAX`] characters; past [`PROMPT_LEDGER_MAX`] bytes the rest
    /// are not quoted and the prompt names `file`, the ledger, instead.
    pub fn for_prompt(
        &self,
        review: &str,
        task: Option<u64>,
        iteration: u64,
        file: &str,
    ) -> String {
        let Some(c) = self.cycle(review, task).filter(|_| iteration > 1) else {
            return String::new();
        };
        if c.findings.is_empty() {
            return String::new();
        }
        let mut text = String::from(
            "- The findings ledger of this cycle (id, status, text, and the agent's answer):\n",
        );
        let listed = text.len();
        for (i, f) in c.findings.iter().enumerate() {
            let answer = f
                .answer
                .as_deref()
                .map(|a| format!(" — agent: {}", prompt_line(a, PROMPT_TEXT_MAX)))
                .unwrap_or_default();
            let line = format!(
                "  - {} [{}] {}{answer}\n",
                prompt_line(&f.id, 40),
                f.status.as_str(),
                prompt_line(&f.text, PROMPT_TEXT_MAX)
            );
            if text.len() - listed + line.len() > PROMPT_LEDGER_MAX {
                text.push_str(&format!(
                    "  - … and {} more, too long to quote here: read them (cycle `{review}`) in {file}\n",
                    c.findings.len() - i
                ));
                break;
            }
            text.push_str(&line);
        }
        text.push_str(
            "  Verify every `fixed` finding in the work itself: list the ids you confirmed in `resolved`, and the \
             ids that are not really fixed in `reopened`, with the evidence in your review. Do not raise a \
             `dismissed` finding again unless you have new evidence (then reopen it and give that evidence). \
             Report every new finding you have in this one review, not a few at a time: `findings` holds only \
             findings that are not in this ledger.\n",
        );
        text
    }
}

/// The most characters of one finding's text, or of one answer, a prompt quotes.
pub const PROMPT_TEXT_MAX: usize = 2_000;
/// The most bytes of findings a prompt quotes; the rest are named by their file. Far below
/// what any reviewer CLI reads (Gemini's stops at 8 MiB of stdin) and what a model takes.
pub const PROMPT_LEDGER_MAX: usize = 64 * 1024;

/// Whether `said` names the finding `id` (`F3`, `f3`, `[F3]`).
fn same_id(said: &str, id: &str) -> bool {
    said.trim()
        .trim_matches(|c| c == '[' || c == ']')
        .eq_ignore_ascii_case(id)
}

/// The answer to `id` in a post-review: the rest of the first line that starts with the
/// id (after list markers and emphasis), e.g. `- **F2**: fixed, added the test`.
fn answer_line(text: &str, id: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let l = line
            .trim_start()
            .trim_start_matches(['-', '*', '+', '#', '>', ' ', '|', '`', '['])
            .trim_start();
        let rest = l
            .get(..id.len())
            .filter(|head| head.eq_ignore_ascii_case(id))?;
        let after = &l[rest.len()..];
        // `F1` must not match `F12`.
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let answer = after
            .trim_start_matches(['*', '`', ']', ':', ' ', '-', '—', '|', '.'])
            .trim();
        Some(if answer.is_empty() {
            "answered".into()
        } else {
            answer.into()
        })
    })
}

/// An answer that declines the finding.
fn dismisses(answer: &str) -> bool {
    let a = answer.to_lowercase().replace('\u{2019}', "'");
    [
        "won't fix",
        "wont fix",
        "will not fix",
        "not fixing",
        "not fixed",
    ]
    .iter()
    .any(|k| a.contains(k))
        || ["dismiss", "disagree", "not a problem"]
            .iter()
            .any(|k| a.starts_with(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(items: &[&str]) -> Vec<String> {
        items.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn findings_get_stable_ids_per_cycle_and_a_new_cycle_starts_from_f1() {
        let mut l = Ledger::default();
        let added = l.record_review("plan-review", None, 1, &s(&["No tests", "Typo"]), &[], &[]);
        assert_eq!(added[0], ("F1".to_string(), "No tests".to_string()));
        assert_eq!(added[1].0, "F2");
        let added = l.record_review("plan-review", None, 2, &s(&["Missing config"]), &[], &[]);
        assert_eq!(added[0].0, "F3");
        let added = l.record_review("code-review", Some(1), 1, &s(&["Leak"]), &[], &[]);
        assert_eq!(added[0].0, "F1");
        assert_eq!(l.cycles.len(), 2);
    }

    /// The longest cycle a reviewer can write (the most new findings a review adds, each as
    /// long as a finding keeps, in NULs that JSON writes as six bytes each, every one
    /// answered at length in 3-byte letters) stays within the bound its reader takes,
    /// keeping every id, status and count; the next id follows on.
    #[test]
    fn the_longest_cycle_of_the_longest_findings_stays_within_the_ledgers_bound() {
        let text = "\u{0}".repeat(TEXT_CHARS);
        let answer = "漢".repeat(TEXT_CHARS);
        let mut l = Ledger::default();
        // Three such reviews are past the 4 MiB the ledger's reader takes.
        let reviews = 3;
        for i in 1..=reviews {
            let new: Vec<String> = (0..NEW_PER_REVIEW + 5).map(|_| text.clone()).collect();
            let added = l.record_review("plan-review", None, i, &new, &[], &[]);
            let answers: String = added
                .iter()
                .map(|(id, _)| format!("{id}: won't fix {answer}\n"))
                .collect();
            assert!(
                l.record_post_review("plan-review", None, &answers)
                    .is_empty()
            );
        }
        let full = l.pretty().len();
        assert!(full > 4 * 1024 * 1024, "{full} bytes");
        let json = l.to_json();
        assert!(json.len() <= LEDGER_MAX, "{} bytes", json.len());
        let mut back = Ledger::parse(json.as_bytes()).unwrap();
        let n = reviews * (NEW_PER_REVIEW as u64 + 1);
        assert_eq!(
            back.counts("plan-review", None),
            l.counts("plan-review", None)
        );
        assert_eq!(back.cycles[0].findings.len() as u64, n);
        assert_eq!(back.cycles[0].new_per_review, l.cycles[0].new_per_review);
        assert!(
            back.cycles[0]
                .findings
                .iter()
                .all(|f| f.status == Status::Dismissed)
        );
        let added = back.record_review(
            "plan-review",
            None,
            reviews + 1,
            &s(&["One more"]),
            &[],
            &[],
        );
        assert_eq!(added[0].0, format!("F{}", n + 1));
        // At the shortest texts, what a finding takes bounds how many a cycle may hold
        // before the ledger outgrows its reader (CLIPPED_TEXT_CHARS says how many).
        let mut shortest = l.clone();
        shortest.clip_texts(CLIPPED_TEXT_CHARS[CLIPPED_TEXT_CHARS.len() - 1]);
        let per_finding = shortest.pretty().len() as u64 / n;
        assert!(per_finding <= 400, "{per_finding} bytes a finding");
        // Under the bound, nothing is cut.
        let mut small = Ledger::default();
        small.record_review(
            "plan-review",
            None,
            1,
            std::slice::from_ref(&text),
            &[],
            &[],
        );
        assert_eq!(Ledger::parse(small.to_json().as_bytes()), Ok(small));
    }

    #[test]
    fn a_new_id_follows_the_highest_id_in_the_ledger_not_its_length() {
        let mut l = Ledger::default();
        l.record_review("plan-review", None, 1, &s(&["A", "B", "C"]), &[], &[]);
        // A hand edit removed F2.
        l.cycles[0].findings.remove(1);
        let added = l.record_review("plan-review", None, 2, &s(&["D"]), &[], &[]);
        assert_eq!(added[0].0, "F4");
    }

    #[test]
    fn a_pending_review_counts_only_when_the_state_it_names_is_on_disk() {
        let mut l = Ledger::default();
        l.record_review("plan-review", None, 1, &s(&["A"]), &[], &[]);
        let committed = l.clone();
        let ids = l
            .clone()
            .record_review("plan-review", None, 2, &s(&["B", "C"]), &[], &[]);
        assert_eq!(ids[0].0, "F2");
        l.record_pending(Pending {
            state: "t2".into(),
            review: "plan-review".into(),
            task: None,
            iteration: 2,
            new: s(&["B", "C"]),
            resolved: Vec::new(),
            reopened: Vec::new(),
        });
        assert_eq!(l.cycles, committed.cycles, "pending changes no cycle");
        // Read back, then settled against another state: no trace.
        let mut dropped = Ledger::parse(l.to_json().as_bytes()).unwrap();
        assert!(dropped.settle(Some("t1")));
        assert_eq!(dropped, committed);
        // Against its state: recorded with the ids it announced.
        assert!(l.settle(Some("t2")));
        assert_eq!(l.pending, None);
        let c = l.cycle("plan-review", None).unwrap();
        assert_eq!(
            c.findings.iter().map(|f| f.id.as_str()).collect::<Vec<_>>(),
            ["F1", "F2", "F3"]
        );
        assert!(!l.settle(Some("t2")), "nothing left to settle");
    }

    #[test]
    fn an_ended_cycle_keeps_its_counts_and_drops_its_findings() {
        let mut l = Ledger::default();
        let long = "x".repeat(10 * TEXT_CHARS);
        let many: Vec<String> = (0..NEW_PER_REVIEW + 5)
            .map(|i| format!("{i} {long}"))
            .collect();
        l.record_review("plan-review", None, 1, &many, &[], &[]);
        let c = l.cycle("plan-review", None).unwrap();
        assert_eq!(c.findings.len(), NEW_PER_REVIEW + 1);
        assert!(
            c.findings
                .iter()
                .all(|f| f.text.chars().count() <= TEXT_CHARS)
        );
        assert_eq!(
            c.findings.last().unwrap().text,
            "5 more findings: see the review file"
        );
        let before = l.counts("plan-review", None);
        l.record_review("tasks-review", None, 1, &s(&["A"]), &[], &[]);
        assert_eq!(l.counts("plan-review", None), before);
        assert!(l.cycles[0].findings.is_empty());
        assert!(l.to_json().len() < 4096, "{}", l.to_json().len());
        // Read back, the ended cycle still has its counts.
        let back = Ledger::parse(l.to_json().as_bytes()).unwrap();
        assert_eq!(back.counts("plan-review", None), before);
    }

    #[test]
    fn post_reviews_answer_open_ids_and_unanswered_ones_are_reported() {
        let mut l = Ledger::default();
        l.record_review(
            "plan-review",
            None,
            1,
            &s(&["No tests", "Typo", "Naming"]),
            &[],
            &[],
        );
        let post = "# Post-review\n\n- **F1**: fixed — added tests for the parser\n- F2: won't fix — the word is correct British spelling\n";
        assert_eq!(l.record_post_review("plan-review", None, post), ["F3"]);
        let c = l.cycle("plan-review", None).unwrap();
        assert_eq!(c.findings[0].status, Status::Fixed);
        assert_eq!(
            c.findings[0].answer.as_deref(),
            Some("fixed — added tests for the parser")
        );
        assert_eq!(c.findings[1].status, Status::Dismissed);
        assert_eq!(c.findings[2].status, Status::Open);
    }

    #[test]
    fn f1_does_not_answer_f12() {
        assert_eq!(answer_line("F12: fixed", "F1"), None);
        assert_eq!(answer_line("F12: fixed", "F12").as_deref(), Some("fixed"));
    }

    #[test]
    fn reviewers_resolve_and_reopen_by_id_and_the_counts_follow() {
        let mut l = Ledger::default();
        l.record_review("tasks-review", None, 1, &s(&["A", "B", "C"]), &[], &[]);
        l.record_post_review(
            "tasks-review",
            None,
            "F1: fixed\nF2: fixed\nF3: won't fix, out of scope\n",
        );
        l.record_review(
            "tasks-review",
            None,
            2,
            &s(&["D"]),
            &s(&["F1"]),
            &s(&["f2"]),
        );
        assert_eq!(
            l.counts("tasks-review", None),
            Counts {
                opened: 4,
                fixed: 1,
                dismissed: 1,
                reopened: 1,
                open: 2
            }
        );
        assert_eq!(
            l.cycle("tasks-review", None).unwrap().new_per_review,
            [(1, 3), (2, 1)]
        );
    }

    #[test]
    fn the_prompt_carries_each_finding_its_status_and_answer_with_the_instructions() {
        let mut l = Ledger::default();
        l.record_review("plan-review", None, 1, &s(&["No tests", "Typo"]), &[], &[]);
        l.record_post_review(
            "plan-review",
            None,
            "F1: fixed — added tests\nF2: won't fix — intended\n",
        );
        let p = l.for_prompt("plan-review", None, 2, "findings.json");
        assert!(
            p.contains("  - F1 [fixed] No tests — agent: fixed — added tests\n"),
            "{p}"
        );
        assert!(
            p.contains("  - F2 [dismissed] Typo — agent: won't fix — intended\n"),
            "{p}"
        );
        assert!(
            p.contains("`resolved`")
                && p.contains("`reopened`")
                && p.contains("in this one review")
        );
        assert_eq!(l.for_prompt("plan-review", None, 1, "findings.json"), "");
    }

    #[test]
    fn the_prompts_ledger_is_cleaned_of_control_characters_and_names_the_file_past_its_bound() {
        let mut l = Ledger::default();
        let long = "x".repeat(3 * PROMPT_TEXT_MAX);
        let texts: Vec<String> = (0..100)
            .map(|i| format!("finding {i}\0 with a NUL\x1b[2J{long}"))
            .collect();
        l.record_review("plan-review", None, 1, &texts, &[], &[]);
        l.record_post_review(
            "plan-review",
            None,
            "F1: fixed\0\x07 by \x1b]0;title\x07 it\n",
        );
        let p = l.for_prompt("plan-review", None, 2, ".taskie/plans/p/findings.json");
        assert!(
            !p.chars().any(|c| c.is_control() && c != '\n'),
            "no control character but the line ends"
        );
        assert!(
            p.contains("  - F1 [fixed] finding 0  with a NUL [2Jxxx"),
            "{}",
            &p[..300]
        );
        assert!(p.contains(" — agent: fixed   by  ]0;title  it\n"));
        let quoted = p.matches("\n  - F").count();
        assert!(quoted < 100 && quoted > 10, "{quoted} quoted");
        assert!(
            p.contains(&format!(
                "  - … and {} more, too long to quote here: read them (cycle `plan-review`) in .taskie/plans/p/findings.json\n",
                100 - quoted
            )),
            "{}",
            &p[p.len() - 800..]
        );
        assert!(p.len() < PROMPT_LEDGER_MAX + 2 * 1024, "{} bytes", p.len());
        assert!(p.ends_with("not in this ledger.\n"));
    }

    #[test]
    fn a_text_review_names_resolved_and_reopened_ids_on_their_own_lines() {
        let v = Verified::from_text(
            "## Review\n\n**RESOLVED:** F1, F3\nReopened: `F2` (still no test)\nF9 is mentioned here\nVERDICT: FAIL\n",
        );
        assert_eq!(v.resolved, ["F1", "F3"]);
        assert_eq!(v.reopened, ["F2"]);
        assert_eq!(Verified::from_text("nothing"), Verified::default());
    }

    #[test]
    fn the_ledger_reads_back_what_it_wrote() {
        let mut l = Ledger::default();
        l.record_review("plan-review", None, 1, &s(&["No tests"]), &[], &[]);
        assert_eq!(Ledger::parse(l.to_json().as_bytes()), Ok(l));
        assert!(Ledger::parse(b"nope").is_err());
    }
}
