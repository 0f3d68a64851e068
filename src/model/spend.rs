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

/// Reviews, their time and their cost, added up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Totals {
    pub reviews: u64,
    pub review_seconds: f64,
    pub cost_usd: f64,
}

impl Totals {
    fn add(&mut self, r: &Run) {
        self.reviews = self.reviews.saturating_add(r.reviews);
        // Rounded as they are added (to the millisecond, to the micro-dollar), so sums
        // print as people write them, not as 0.036000000000000004.
        let seconds = self.review_seconds + r.spend.reviewer_ms.unwrap_or(0) as f64 / 1000.0;
        self.review_seconds = (seconds * 1e3).round() / 1e3;
        let cost = self.cost_usd + r.spend.cost_usd.unwrap_or(0.0);
        self.cost_usd = (cost * 1e6).round() / 1e6;
    }
}

/// Everything the plan's logged reviews cost.
pub fn plan(runs: &[Run]) -> Totals {
    let mut t = Totals::default();
    runs.iter().filter(|r| r.reviews > 0).for_each(|r| t.add(r));
    t
}

/// The current cycle of review `review`, whose next iteration is `next`: walking back
/// from the newest run, the runs of that review whose iterations never rise above the
/// one after them (a rise, another review, or a passed cycle is an earlier cycle).
/// `passed`: the cycle has just passed, so its newest run is the one that passed it.
pub fn cycle(runs: &[Run], review: &str, next: u64, passed: bool) -> Totals {
    let mut t = Totals::default();
    let mut ceiling = next;
    let mut first = true;
    for r in runs.iter().rev().filter(|r| r.reviews > 0) {
        let ends_earlier_cycle = r.advanced && !(first && passed);
        match r.iteration {
            Some(i)
                if r.review.as_deref() == Some(review) && !ends_earlier_cycle && i <= ceiling =>
            {
                t.add(r);
                ceiling = i;
                first = false;
            }
            _ => break,
        }
    }
    t
}

/// What is left of `budget` after `spent`, never below zero.
pub fn remaining(budget: f64, spent: f64) -> f64 {
    (budget - spent).max(0.0)
}

/// A dollar amount as a command line or a message shows it: at most 4 decimals, no
/// trailing zeros (`0.75`, not `0.7500000000000001`).
pub fn dollars(amount: f64) -> String {
    let text = format!("{amount:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() || text == "-" {
        "0".into()
    } else {
        text.into()
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
                review_seconds: 4.0,
                cost_usd: 0.75
            }
        );
    }

    #[test]
    fn the_cycle_total_stops_at_an_earlier_cycle() {
        let mut passed = run("code-review", 2, 1, 1.0, 1000);
        passed.advanced = true;
        let runs = [
            run("code-review", 1, 1, 1.0, 1000),
            passed,
            run("code-review", 1, 1, 0.1, 1000),
            run("code-review", 2, 1, 0.2, 1000),
            run("code-review", 2, 1, 0.3, 1000),
        ];
        let t = cycle(&runs, "code-review", 3, false);
        assert_eq!((t.reviews, dollars(t.cost_usd)), (3, "0.6".into()));
        // The cycle that just passed includes the run that passed it.
        let t = cycle(&runs[..2], "code-review", 2, true);
        assert_eq!((t.reviews, dollars(t.cost_usd)), (2, "2".into()));
        assert_eq!(cycle(&runs[..2], "code-review", 1, false).reviews, 0);
        // A reset (iteration back to 1 with no advance logged) starts a new cycle.
        let reset = [
            run("plan-review", 3, 1, 1.0, 1),
            run("plan-review", 1, 1, 0.5, 1),
        ];
        assert_eq!(cycle(&reset, "plan-review", 2, false).reviews, 1);
        assert_eq!(cycle(&reset, "tasks-review", 1, false).reviews, 0);
    }

    #[test]
    fn amounts_are_shown_plainly() {
        assert_eq!(dollars(0.75000000001), "0.75");
        assert_eq!(dollars(2.0), "2");
        assert_eq!(dollars(0.0), "0");
        assert_eq!(dollars(0.12346), "0.1235");
        assert_eq!(remaining(1.0, 1.5), 0.0);
    }
}
