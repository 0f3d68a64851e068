//! Loop safety (SPEC §4): simulated agents stop 50 times in a row, with
//! `stop_hook_active` set the way Claude Code sets it (true exactly when the previous stop
//! was blocked), and the number of blocks per review cycle stays within `max_reviews`.

use crate::support::processes::*;
use crate::support::{Fake, Project};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const STOPS: usize = 50;
const MAX_REVIEWS: u64 = 4;

/// What a simulated agent does when the hook blocks.
#[derive(Clone, Copy)]
enum Agent {
    /// Ignores the instruction and tries to stop again.
    NeverWritesPostReview,
    /// Writes the post-review file the reason names, as /taskie:post-R would.
    AlwaysWritesPostReview,
}

/// Per stop: the cycle it belonged to (`next_phase`/`current_task` before the stop, with
/// post-R counted as R) and whether the hook blocked.
struct Trace {
    stops: Vec<(String, bool)>,
}

impl Trace {
    fn blocks(&self) -> usize {
        self.stops.iter().filter(|(_, b)| *b).count()
    }
    fn blocks_per_cycle(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for (cycle, blocked) in &self.stops {
            *m.entry(cycle.clone()).or_default() += usize::from(*blocked);
        }
        m
    }
}

fn cycle_of(state: &Value) -> String {
    let next = state["next_phase"].as_str().unwrap_or("none");
    let review = next.strip_prefix("post-").unwrap_or(next);
    format!("{review}/task {}", state["current_task"])
}

/// The post-review path a block reason asks for.
fn post_review_path(reason: &str) -> String {
    let start = reason
        .find("write what you did to ")
        .map(|i| i + "write what you did to ".len())
        .unwrap_or_else(|| panic!("no post-review file in {reason}"));
    let rest = &reason[start..];
    rest[..rest.find(". ").unwrap()].to_owned()
}

/// Runs `STOPS` stops of a plan in one review cycle.
fn simulate(p: &Project, agent: Agent) -> Trace {
    let mut active = false;
    let mut stops = Vec::new();
    for _ in 0..STOPS {
        let cycle = cycle_of(&p.state_json());
        let run = if active { p.stop_active() } else { p.stop() };
        let blocked = run.is_block();
        if let (true, Agent::AlwaysWritesPostReview, Some(reason)) =
            (blocked, agent, crate::support::block_text(&run.answer()))
            && reason.contains("write what you did to")
        {
            let post = post_review_path(&reason);
            std::fs::write(p.root().join(post), "Addressed every finding.\n").unwrap();
        }
        stops.push((cycle, blocked));
        active = blocked;
    }
    Trace { stops }
}

fn plan_review(max: u64) -> Value {
    json!({"phase": "new-plan", "next_phase": "plan-review", "phase_iteration": 0, "max_reviews": max,
           "review_model": "opus", "consecutive_clean": 0, "current_task": null, "tdd": false})
}

#[test]
fn an_agent_that_never_writes_its_post_review_is_blocked_once() {
    let p = Project::new()
        .plan("p")
        .state(plan_review(MAX_REVIEWS))
        .reviewer(&Fake::fail());
    let trace = simulate(&p, Agent::NeverWritesPostReview);
    assert_eq!(trace.blocks(), 1, "only the review it just ran blocks");
    assert_eq!(p.reviewer_calls(), 1);
    assert!(
        !trace.stops[1].1,
        "the stop_hook_active stop after it is allowed"
    );
}

#[test]
fn an_agent_that_always_writes_its_post_review_is_blocked_at_most_max_reviews_times() {
    let p = Project::new()
        .plan("p")
        .state(plan_review(MAX_REVIEWS))
        .reviewer(&Fake::fail());
    let trace = simulate(&p, Agent::AlwaysWritesPostReview);
    assert_eq!(trace.blocks() as u64, MAX_REVIEWS);
    assert_eq!(p.reviewer_calls() as u64, MAX_REVIEWS);
    assert_eq!(
        p.last_event()["path"],
        "hard-stop",
        "the cycle ends in a hard stop"
    );
}

#[test]
fn alternating_verdicts_never_end_the_cycle_yet_blocks_stay_bounded() {
    let p = Project::new().plan("p").state(plan_review(MAX_REVIEWS));
    // PASS, FAIL, PASS, FAIL…: never two clean reviews in a row.
    p.script_reviewer(&format!(
        "if [ $(wc -l < \"$here/calls\") -gt 0 ] && [ $(( $(wc -l < \"$here/calls\") % 2 )) -eq 0 ]; then\n{REVIEW_FAIL}else\n{REVIEW_PASS}fi"
    ));
    let trace = simulate(&p, Agent::AlwaysWritesPostReview);
    assert_eq!(trace.blocks() as u64, MAX_REVIEWS);
    assert_eq!(p.last_event()["path"], "hard-stop");
}

#[test]
fn a_broken_reviewer_never_blocks_and_stops_being_called_after_three_failures() {
    let p = Project::new()
        .plan("p")
        .state(plan_review(MAX_REVIEWS))
        .reviewer(&Fake::pass().exit(1));
    let trace = simulate(&p, Agent::AlwaysWritesPostReview);
    assert_eq!(trace.blocks(), 0);
    assert_eq!(p.reviewer_calls(), 3);
}

/// Several cycles in a row: code reviews of three tasks with a reviewer that passes, with
/// `auto_continue` on (which adds one block per passed cycle), and a human who starts the
/// next task whenever the hook lets the agent stop. Every cycle stays within
/// `max_reviews` blocks (+1 for the auto-continue block).
#[test]
fn blocks_stay_bounded_in_every_cycle_across_a_whole_plan() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "pending"), (2, "pending"), (3, "pending")])
        .state(
            json!({"phase": "complete-task", "next_phase": "code-review", "phase_iteration": 0,
                      "max_reviews": MAX_REVIEWS, "current_task": 1, "auto_continue": true}),
        )
        .reviewer(&Fake::pass());
    let mut task = 1;
    let start_next_task = |p: &Project, task: &mut u64| {
        let state = p.state_json();
        if state["next_phase"] == "complete-task" && *task < 3 {
            *task += 1;
            let mut s = state.clone();
            s["current_task"] = json!(*task);
            s["phase"] = json!("complete-task");
            s["next_phase"] = json!("code-review");
            s["phase_iteration"] = json!(0);
            s["consecutive_clean"] = json!(0);
            p.put_state(s.to_string().as_bytes());
            // The finished tasks are marked done, so the last code review leads on to
            // the all-code review.
            let mut md = String::from("| Id | Title | Status |\n|----|-------|--------|\n");
            for id in 1..=3 {
                let status = if id < *task { "done" } else { "pending" };
                md.push_str(&format!("| {id} | Task {id} | {status} |\n"));
            }
            std::fs::write(p.plan_dir().join("tasks.md"), md).unwrap();
        }
    };
    // The human also reacts to an auto-continue block, as the agent would.
    let mut active = false;
    let mut stops = Vec::new();
    for _ in 0..STOPS {
        let cycle = cycle_of(&p.state_json());
        let run = if active { p.stop_active() } else { p.stop() };
        let blocked = run.is_block();
        let reason = crate::support::block_text(&run.answer()).unwrap_or_default();
        if reason.contains("write what you did to") {
            std::fs::write(p.root().join(post_review_path(&reason)), "Done.\n").unwrap();
        } else {
            start_next_task(&p, &mut task);
        }
        stops.push((cycle, blocked));
        active = blocked;
    }
    let trace = Trace { stops };
    let per_cycle = trace.blocks_per_cycle();
    assert!(
        per_cycle.len() >= 4,
        "three code reviews and the all-code review ran: {per_cycle:?}"
    );
    for (cycle, blocks) in &per_cycle {
        assert!(
            *blocks as u64 <= MAX_REVIEWS + 1,
            "{cycle}: {blocks} blocks"
        );
    }
    assert_eq!(p.state_json()["next_phase"], "complete", "{per_cycle:?}");
}
