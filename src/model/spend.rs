//! What reviews cost (SPEC §18): one run's spend as its reviewer reported it, and the
//! totals of a cycle and of a plan, added up from the event log's records.

use serde::{Deserialize, Serialize};

/// What one reviewer run (or a panel's runs together) reported. Each figure is absent
/// when the reviewer did not report it (codex and gemini report no cost).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Spend {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_turns: Option<u64>,
    /// Wall time of the reviewer process (of the slowest one in a panel).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewer_ms: Option<u64>,
}

impl Spend {
    /// Two runs side by side (a panel): amounts add up, wall time is the longer one,
    /// because the runs overlap.
    pub fn alongside(&self, other: &Spend) -> Spend {
        fn sum<T: std::ops::Add<Output = T> + Copy>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(x), Some(y)) => Some(x + y),
                (x, None) => x,
                (None, y) => y,
            }
        }
        Spend {
            cost_usd: sum(self.cost_usd, other.cost_usd),
            input_tokens: sum(self.input_tokens, other.input_tokens),
            output_tokens: sum(self.output_tokens, other.output_tokens),
            num_turns: sum(self.num_turns, other.num_turns),
            reviewer_ms: self.reviewer_ms.max(other.reviewer_ms),
        }
    }
}

/// One logged hook run, as far as spend is concerned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    pub review: Option<String>,
    pub iteration: Option<u64>,
    /// The run ended its cycle (event path `advanced`).
    pub advanced: bool,
    /// Reviewer runs it made: 0 when no reviewer ran, k for a panel of k.
    pub reviews: u64,
    pub spend: Spend,
}

/// Reviews, their time and their cost, added up. Failed reviewer attempts count in time
/// and cost (they may have been paid for) but not as reviews.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Totals {
    pub reviews: u64,
    pub failed_attempts: u64,
    pub review_seconds: f64,
    pub cost_usd: f64,
}

impl Totals {
    fn add(&mut self, r: &Run) {
        self.reviews = self.reviews.saturating_add(r.reviews);
        self.add_amounts(&r.spend);
    }

    fn add_entry(&mut self, e: &Entry) {
        if e.reviewed {
            // SPEC §22: an unavailable reviewer that ran (replaced by another kind, or
            // left out of a panel) is a failed attempt, never a review.
            self.reviews = self.reviews.saturating_add(e.reviews);
            let failed = e.processes.saturating_sub(e.reviews);
            self.failed_attempts = self.failed_attempts.saturating_add(failed);
        } else {
            self.failed_attempts = self.failed_attempts.saturating_add(1);
        }
        self.add_amounts(e.spend);
    }

    /// Adds what a run reported, skipping any amount that is not finite and ≥ 0.
    /// Rounded as they are added (to the millisecond, to the micro-dollar), so sums
    /// print as people write them, not as 0.036000000000000004.
    fn add_amounts(&mut self, s: &Spend) {
        let seconds = self.review_seconds + s.reviewer_ms.unwrap_or(0) as f64 / 1000.0;
        self.review_seconds = rounded(saturated(seconds), 1e3);
        let cost = self.cost_usd + sane(s.cost_usd);
        self.cost_usd = rounded(saturated(cost), 1e6);
    }

    /// Makes every amount finite and ≥ 0.
    fn sanitize(&mut self) {
        self.review_seconds = saturated(self.review_seconds);
        self.cost_usd = saturated(self.cost_usd);
    }
}

/// Everything the plan's logged reviews cost.
pub fn plan(runs: &[Run]) -> Totals {
    let mut t = Totals::default();
    runs.iter().filter(|r| r.reviews > 0).for_each(|r| t.add(r));
    t
}

/// What is left of `budget` after `spent`, never below zero.
pub fn remaining(budget: f64, spent: f64) -> f64 {
    (budget - spent).max(0.0)
}

/// A dollar amount as a command line or a message shows it: at most 4 decimals, no
/// trailing zeros (`0.75`, not `0.7500000000000001`).
pub fn dollars(amount: f64) -> String {
    // -0 (a user may type it) prints as 0, never as "-0".
    let amount = if amount == 0.0 { 0.0 } else { amount };
    let text = format!("{amount:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() || text == "-" {
        "0".into()
    } else {
        text.into()
    }
}

/// Money as people read it (SPEC §18): two decimals (`$0.50`), four below one cent
/// (`$0.0042`). Never `-0`.
pub fn money(amount: f64) -> String {
    let amount = if amount.is_finite() && amount > 0.0 {
        amount
    } else {
        0.0
    };
    if amount > 0.0 && amount < 0.01 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

/// A recorded amount: a finite number ≥ 0, anything else is nothing (SPEC §18: a value
/// that is not finite and ≥ 0 is never added).
pub fn sane(amount: Option<f64>) -> f64 {
    amount.filter(|a| a.is_finite() && *a >= 0.0).unwrap_or(0.0)
}

/// A sum kept finite and ≥ 0: past f64's range it stays at the largest value (a budget
/// it exhausted stays exhausted), NaN and negatives are 0.
fn saturated(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        0.0
    } else {
        x.min(f64::MAX)
    }
}

/// `x` rounded to `1/scale`, unless scaling would leave f64's range.
fn rounded(x: f64, scale: f64) -> f64 {
    let r = (x * scale).round() / scale;
    if r.is_finite() { r } else { x }
}

/// The verdict of one iteration of the current cycle, as the ledger keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IterationVerdict {
    pub iteration: u64,
    pub verdict: String,
}

/// The current (or just passed) cycle in the ledger.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CycleLedger {
    pub review: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<u64>,
    /// The cycle ended (passed, or advanced past): the next run starts a new one.
    pub closed: bool,
    pub totals: Totals,
    /// The newest verdict of each iteration, oldest first.
    pub verdicts: Vec<IterationVerdict>,
    /// Why the newest reviewer attempt failed, while no review has run since: `taskie
    /// status` shows it beside the failure count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<String>,
}

/// A failure reason kept at most (a reviewer's stderr can be long; its log has it all).
const FAILURE_CHARS: usize = 300;

/// One concluded reviewer run, as the ledger records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry<'a> {
    pub review: &'a str,
    pub task: Option<u64>,
    pub iteration: u64,
    /// Reviewer processes started (k for a panel of k).
    pub processes: u64,
    /// Reviews that count: the reviewers whose review the verdict weighed (SPEC §22).
    pub reviews: u64,
    /// The run produced a review; `false` for a failed attempt (counted in cost only).
    pub reviewed: bool,
    /// Why a failed attempt failed (`None` for a review, or a paused attempt).
    pub failure: Option<&'a str>,
    pub verdict: Option<&'a str>,
    /// The run ended its cycle.
    pub advanced: bool,
    pub spend: &'a Spend,
}

/// One concluded reviewer run written before the state that records it: it counts once
/// state.json is that state; otherwise its cost still counts, as a failed attempt, never
/// as a review ([`Ledger::settle`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PendingRun {
    /// The tag of the state.json that records the run (`model::state::tag`).
    pub state: String,
    pub review: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<u64>,
    pub iteration: u64,
    pub processes: u64,
    pub reviews: u64,
    pub reviewed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    pub advanced: bool,
    pub spend: Spend,
}

/// Why a run whose state was never saved counts as a failed attempt.
pub const UNSAVED: &str = "the hook stopped before it saved this review's state, so the review was not recorded and runs again";

/// The plan's spend ledger (SPEC §18): `spend.json` beside state.json, rewritten with the
/// state under the plan lock, so every stop and `taskie status` read a few hundred bytes
/// whatever the size of the event log, and rotating the log loses nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Ledger {
    pub plan: Totals,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle: Option<CycleLedger>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingRun>,
}

impl Ledger {
    /// The ledger as read, with every amount made sane: a hand-edited file can no more
    /// re-open a budget than a hostile log line can.
    pub fn parse(bytes: &[u8]) -> Option<Ledger> {
        let mut l: Ledger = serde_json::from_slice(bytes).ok()?;
        l.plan.sanitize();
        if let Some(c) = l.cycle.as_mut() {
            c.totals.sanitize();
        }
        Some(l)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a ledger always serializes") + "\n"
    }

    /// Adds one concluded run.
    pub fn record(&mut self, e: &Entry) {
        let same = self.cycle.as_ref().is_some_and(|c| {
            !c.closed && c.review == e.review && c.task == e.task && e.iteration > 0
        });
        if !same {
            self.cycle = Some(CycleLedger {
                review: e.review.into(),
                task: e.task,
                ..CycleLedger::default()
            });
        }
        let cycle = self.cycle.as_mut().expect("just set");
        // A failure before any reviewer process started cost nothing and is no attempt
        // to count; its reason is still the one to show.
        if e.processes > 0 {
            for t in [&mut self.plan, &mut cycle.totals] {
                t.add_entry(e);
            }
        }
        // A paused attempt (usage limit) neither failed nor reviewed: it changes nothing.
        match (e.reviewed, e.failure) {
            (_, Some(why)) => {
                cycle.last_failure = Some(crate::model::text::clip(why.trim(), FAILURE_CHARS));
            }
            (true, None) => cycle.last_failure = None,
            (false, None) => {}
        }
        if let (true, Some(v)) = (e.reviewed, e.verdict) {
            cycle.verdicts.retain(|x| x.iteration < e.iteration);
            cycle.verdicts.push(IterationVerdict {
                iteration: e.iteration,
                verdict: v.into(),
            });
        }
        cycle.closed = e.advanced;
    }

    /// Keeps run `e` as pending until state.json is the state tagged `state`.
    pub fn record_pending(&mut self, e: &Entry, state: &str) {
        self.pending = Some(PendingRun {
            state: state.into(),
            review: e.review.into(),
            task: e.task,
            iteration: e.iteration,
            processes: e.processes,
            reviews: e.reviews,
            reviewed: e.reviewed,
            failure: e.failure.map(Into::into),
            verdict: e.verdict.map(Into::into),
            advanced: e.advanced,
            spend: e.spend.clone(),
        });
    }

    /// Settles the pending run against the state on disk, tagged `state` (`None`: no
    /// state.json): recorded as it was when that is the state it names, else as a failed
    /// attempt (its cost was spent; it is not a review). Whether there was one.
    pub fn settle(&mut self, state: Option<&str>) -> bool {
        let Some(p) = self.pending.take() else {
            return false;
        };
        let saved = state == Some(p.state.as_str());
        let reviewed = p.reviewed && saved;
        self.record(&Entry {
            review: &p.review,
            task: p.task,
            iteration: p.iteration,
            processes: p.processes,
            reviews: p.reviews,
            reviewed,
            failure: match (&p.failure, p.reviewed && !saved) {
                (_, true) => Some(UNSAVED),
                (f, false) => f.as_deref(),
            },
            verdict: p.verdict.as_deref().filter(|_| reviewed),
            advanced: p.advanced && saved,
            spend: &p.spend,
        });
        true
    }

    /// A ledger for a plan that has none yet (written by an older taskie): its totals
    /// from the logged runs, each amount made sane.
    pub fn from_runs(runs: &[Run]) -> Ledger {
        let mut plan = plan(runs);
        plan.sanitize();
        Ledger {
            plan,
            cycle: None,
            pending: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(review: &str, i: u64, reviews: u64, cost: f64, ms: u64) -> Run {
        Run {
            review: Some(review.into()),
            iteration: Some(i),
            advanced: false,
            reviews,
            spend: Spend {
                cost_usd: Some(cost),
                reviewer_ms: Some(ms),
                ..Spend::default()
            },
        }
    }

    #[test]
    fn a_panel_adds_amounts_and_keeps_the_longest_wall_time() {
        let a = Spend {
            cost_usd: Some(0.5),
            input_tokens: Some(10),
            reviewer_ms: Some(3000),
            ..Spend::default()
        };
        let b = Spend {
            input_tokens: Some(5),
            output_tokens: Some(7),
            reviewer_ms: Some(4000),
            ..Spend::default()
        };
        assert_eq!(
            a.alongside(&b),
            Spend {
                cost_usd: Some(0.5),
                input_tokens: Some(15),
                output_tokens: Some(7),
                num_turns: None,
                reviewer_ms: Some(4000)
            }
        );
    }

    #[test]
    fn the_plan_total_counts_every_reviewer_run_and_nothing_else() {
        let mut none = run("plan-review", 1, 0, 9.0, 9000);
        none.spend = Spend::default();
        let runs = [
            run("plan-review", 1, 1, 0.25, 1500),
            none,
            run("tasks-review", 1, 2, 0.5, 2500),
        ];
        assert_eq!(
            plan(&runs),
            Totals {
                reviews: 3,
                failed_attempts: 0,
                review_seconds: 4.0,
                cost_usd: 0.75
            }
        );
    }

    #[test]
    fn amounts_are_shown_plainly() {
        assert_eq!(dollars(0.75000000001), "0.75");
        assert_eq!(dollars(2.0), "2");
        assert_eq!(dollars(0.0), "0");
        assert_eq!(dollars(0.12346), "0.1235");
        assert_eq!(remaining(1.0, 1.5), 0.0);
    }

    fn entry<'a>(spend: &'a Spend, iteration: u64, reviewed: bool) -> Entry<'a> {
        Entry {
            review: "plan-review",
            task: None,
            iteration,
            processes: 1,
            reviews: u64::from(reviewed),
            reviewed,
            failure: (!reviewed).then_some("claude exited with status 1"),
            verdict: reviewed.then_some("FAIL"),
            advanced: false,
            spend,
        }
    }

    #[test]
    fn money_has_two_decimals_or_four_below_a_cent_and_never_a_minus_zero() {
        assert_eq!(money(0.5), "$0.50");
        assert_eq!(money(0.2468), "$0.25");
        assert_eq!(money(0.0), "$0.00");
        assert_eq!(money(-0.0), "$0.00");
        assert_eq!(money(0.0042), "$0.0042");
        assert_eq!(money(12.0), "$12.00");
        assert_eq!(money(f64::NAN), "$0.00");
        assert_eq!(dollars(-0.0), "0");
    }

    #[test]
    fn the_ledger_counts_failed_attempts_in_cost_but_not_as_reviews() {
        let paid = Spend {
            cost_usd: Some(0.25),
            reviewer_ms: Some(1000),
            ..Spend::default()
        };
        let mut l = Ledger::default();
        l.record(&entry(&paid, 1, false));
        l.record(&entry(&paid, 1, true));
        assert_eq!(
            (l.plan.reviews, l.plan.failed_attempts, l.plan.cost_usd),
            (1, 1, 0.5)
        );
        let c = l.cycle.as_ref().unwrap();
        assert_eq!((c.totals.reviews, c.totals.failed_attempts), (1, 1));
        assert_eq!(c.verdicts.len(), 1);
    }

    /// SPEC §22: after a failover (alternate) or with a panel member out, only who
    /// reviewed counts as a review; the unavailable reviewer's run is a failed attempt.
    #[test]
    fn an_unavailable_reviewer_that_ran_is_a_failed_attempt_never_a_review() {
        let s = Spend::default();
        let mut l = Ledger::default();
        // claude ran and was unavailable, codex reviewed.
        l.record(&Entry {
            processes: 2,
            ..entry(&s, 1, true)
        });
        // A panel of three, one member out.
        l.record(&Entry {
            processes: 3,
            reviews: 2,
            ..entry(&s, 2, true)
        });
        let c = l.cycle.as_ref().unwrap();
        assert_eq!((c.totals.reviews, c.totals.failed_attempts), (3, 2));
        assert_eq!((l.plan.reviews, l.plan.failed_attempts), (3, 2));
    }

    #[test]
    fn a_pending_run_is_a_review_only_when_its_state_is_on_disk() {
        let paid = Spend {
            cost_usd: Some(0.25),
            ..Spend::default()
        };
        let mut l = Ledger::default();
        l.record_pending(&entry(&paid, 1, true), "t1");
        assert_eq!(l.plan, Totals::default(), "pending counts nothing yet");
        let mut lost = Ledger::parse(l.to_json().as_bytes()).unwrap();
        assert!(lost.settle(Some("t0")));
        assert_eq!(
            (
                lost.plan.reviews,
                lost.plan.failed_attempts,
                lost.plan.cost_usd
            ),
            (0, 1, 0.25)
        );
        let c = lost.cycle.as_ref().unwrap();
        assert_eq!(
            (c.last_failure.as_deref(), c.verdicts.len()),
            (Some(UNSAVED), 0)
        );
        assert!(l.settle(Some("t1")));
        assert_eq!((l.plan.reviews, l.plan.failed_attempts), (1, 0));
        assert_eq!(l.pending, None);
    }

    #[test]
    fn the_ledger_keeps_the_last_failure_reason_until_a_review_runs() {
        let s = Spend::default();
        let mut l = Ledger::default();
        l.record(&entry(&s, 1, false));
        let unstarted = Entry {
            processes: 0,
            failure: Some("cannot start claude: not found"),
            ..entry(&s, 1, false)
        };
        l.record(&unstarted);
        let c = l.cycle.as_ref().unwrap();
        assert_eq!(
            (c.last_failure.as_deref(), c.totals.failed_attempts),
            (Some("cannot start claude: not found"), 1),
            "an attempt that started no process costs nothing and is not counted"
        );
        l.record(&entry(&s, 1, true));
        assert_eq!(l.cycle.as_ref().unwrap().last_failure, None);
    }

    #[test]
    fn hostile_amounts_never_lower_or_break_the_total() {
        let mut l = Ledger::default();
        for cost in [0.5, -1e300, f64::NAN, f64::INFINITY, -0.0] {
            let s = Spend {
                cost_usd: Some(cost),
                ..Spend::default()
            };
            l.record(&entry(&s, 1, true));
        }
        assert_eq!(l.plan.cost_usd, 0.5);
        for _ in 0..2 {
            let s = Spend {
                cost_usd: Some(1e308),
                ..Spend::default()
            };
            l.record(&entry(&s, 1, true));
        }
        assert!(l.plan.cost_usd.is_finite() && l.plan.cost_usd >= 1e308);
        // A hand-edited ledger is made sane on reading.
        let parsed = Ledger::parse(br#"{"plan":{"reviews":1,"cost_usd":-5}}"#).unwrap();
        assert_eq!(parsed.plan.cost_usd, 0.0);
        // And so is a hostile log, read for a plan without a ledger.
        let runs = [
            run("plan-review", 1, 1, -1e300, 0),
            run("plan-review", 2, 1, 0.75, 0),
        ];
        assert_eq!(Ledger::from_runs(&runs).plan.cost_usd, 0.75);
    }

    #[test]
    fn a_new_review_or_a_passed_cycle_starts_a_new_cycle_in_the_ledger() {
        let s = Spend {
            cost_usd: Some(0.1),
            ..Spend::default()
        };
        let mut l = Ledger::default();
        l.record(&entry(&s, 1, true));
        l.record(&Entry {
            advanced: true,
            ..entry(&s, 2, true)
        });
        assert_eq!(l.cycle.as_ref().unwrap().totals.reviews, 2);
        l.record(&Entry {
            review: "tasks-review",
            ..entry(&s, 1, true)
        });
        let c = l.cycle.as_ref().unwrap();
        assert_eq!((c.review.as_str(), c.totals.reviews), ("tasks-review", 1));
        assert_eq!(l.plan.reviews, 3);
    }
}
