//! The ledgers agree with the state (SPEC §18, §21): a review state.json does not record
//! leaves no trace in findings.json or spend.json. The hook writes the run into both
//! ledgers as pending on the state it is about to write, then the state, then settles
//! them; whoever reads a ledger settles a pending run against the state on disk. Here the
//! hook is killed at each step of that order, in single, alternate and panel mode, and
//! the plan is driven on; the slow tier's soak (tests/e2e/ledger_soak.rs) kills it at
//! random moments a thousand times.

use crate::support::processes::*;
use crate::support::vendors::Vendor;
use crate::support::{Fake, Project, Shape, due};
use serde_json::{Value, json};
use std::time::Duration;

/// Who reviews.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// claude alone.
    Single,
    /// claude at odd iterations, codex at even ones.
    Alternate,
    /// claude, codex and gemini together: three reviews a stop.
    Panel,
}

pub const MODES: [Mode; 3] = [Mode::Single, Mode::Alternate, Mode::Panel];

impl Mode {
    /// Reviews one stop's review counts as.
    pub fn members(self) -> u64 {
        match self {
            Mode::Panel => 3,
            Mode::Single | Mode::Alternate => 1,
        }
    }
}

/// A plan whose plan review is due, reviewed in `mode` by fakes that always FAIL with
/// findings (claude two, codex and gemini one each), so every review adds ids.
pub fn project(mode: Mode) -> Project {
    let mut state = due("plan-review");
    let (reviewers, how) = match mode {
        Mode::Single => (json!(["claude:opus"]), "alternate"),
        Mode::Alternate => (json!(["claude:opus", "codex:gpt-5-codex"]), "alternate"),
        Mode::Panel => (
            json!(["claude:opus", "codex:gpt-5-codex", "gemini:gemini-2.5-pro"]),
            "panel",
        ),
    };
    state["reviewers"] = reviewers;
    state["review_mode"] = json!(how);
    state["max_reviews"] = json!(50);
    Project::new()
        .plan("p")
        .state(state)
        .reviewer(&Fake::fail().file(None).shape(Shape::Review {
            verdict: "FAIL",
            summary: "Two problems.",
            findings: &["Step 2 has no test", "The name is unclear"],
        }))
        .codex(&Vendor::fail())
        .gemini(&Vendor::fail())
}

/// Starts the hook as `Project::stop` does, with `env` on top, for a test to kill.
pub fn spawn(p: &Project, env: &[(&str, &str)]) -> std::process::Child {
    let fake = |name: &str| p.reviewer_dir().join(name);
    let (codex, gemini) = (fake("fake-codex"), fake("fake-gemini"));
    let mut all = vec![
        ("TASKIE_CODEX", codex.to_str().unwrap()),
        ("TASKIE_GEMINI", gemini.to_str().unwrap()),
    ];
    all.extend_from_slice(env);
    p.spawn_hook(stop_event(false), &all)
}

fn json_of(p: &Project, name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(p.plan_dir().join(name)).unwrap()).unwrap()
}

/// When the post-review of the newest review is owed, the agent writes it, answering every
/// id the ledger has (up to 200 ids: more than any test raises).
pub fn answer_post_review(p: &Project) {
    let s = p.state_json();
    if s["next_phase"] == "post-plan-review" {
        let n = s["phase_iteration"].as_u64().unwrap();
        let answers: String = (1..=200).map(|i| format!("F{i}: fixed\n")).collect();
        std::fs::write(
            p.plan_dir().join(format!("plan-post-review-{n}.md")),
            answers,
        )
        .unwrap();
    }
}

/// Stops (answering each owed post-review) until state.json records `reviews` reviews.
pub fn drive_to(p: &Project, reviews: u64) {
    for _ in 0..(2 * reviews + 4) {
        answer_post_review(p);
        if p.state_json()["phase_iteration"].as_u64().unwrap_or(0) >= reviews {
            return;
        }
        p.stop();
    }
    panic!(
        "state.json never recorded {reviews} reviews: {}",
        p.state_json()
    );
}

/// What the ledgers say against what state.json says. Returns the phantom ids (findings
/// no recorded review raised) and the reviews spend.json counts beyond those recorded.
pub fn disagreement(p: &Project, mode: Mode) -> (Vec<String>, i64) {
    let s = p.state_json();
    let recorded = s["phase_iteration"].as_u64().unwrap_or(0);
    let findings = json_of(p, "findings.json");
    let spend = json_of(p, "spend.json");
    assert!(
        findings.get("pending").is_none() && spend.get("pending").is_none(),
        "a completed stop leaves nothing pending: {findings} {spend}"
    );
    let cycles = findings["cycles"].as_array().unwrap();
    assert_eq!(cycles.len(), 1, "{findings}");
    let said: Vec<(u64, u64)> = cycles[0]["new_per_review"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x[0].as_u64().unwrap(), x[1].as_u64().unwrap()))
        .collect();
    // A finding is a phantom when its review is not recorded, or when its review raised
    // fewer findings than carry its iteration (a second run of the same review).
    let mut phantoms = Vec::new();
    for i in 1..=recorded.max(1) + 1 {
        let of_i: Vec<&Value> = cycles[0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["opened"] == i)
            .collect();
        let raised = said.iter().find(|(at, _)| *at == i).map_or(0, |x| x.1);
        let keep = if i <= recorded { raised as usize } else { 0 };
        phantoms.extend(
            of_i.iter()
                .skip(keep)
                .map(|f| f["id"].as_str().unwrap().to_owned()),
        );
    }
    let counted = spend["plan"]["reviews"].as_u64().unwrap();
    (
        phantoms,
        counted as i64 - (recorded * mode.members()) as i64,
    )
}

/// Every step of the commit order where a kill leaves something different on disk.
const STEPS: [&str; 5] = [
    // Both ledgers hold the run as pending; the state is the old one.
    "ledgers-pending:state.json",
    // The same, a moment later: the new state is written but not yet renamed.
    "before-rename:state.json",
    // The new state is on disk; both ledgers still hold the run as pending.
    "after-state-write:state.json",
    // findings.json is settled; spend.json still holds the run as pending.
    "findings-settled:state.json",
    // The first write of the stop: the post-review's answers, before the reviewer ran.
    "after-rename:findings.json",
];

#[cfg(debug_assertions)]
#[test]
fn a_kill_at_each_step_of_a_review_leaves_ledgers_that_agree_with_the_state() {
    for mode in MODES {
        for step in STEPS {
            let p = project(mode);
            drive_to(&p, 1);
            answer_post_review(&p);
            // Review 2 is killed at `step`.
            let mut child = spawn(&p, &[("TASKIE_TEST_PAUSE_AT", step)]);
            let lines = stderr_lines(&mut child);
            assert!(
                wait_for_line(
                    &lines,
                    &format!("test pause at {step}"),
                    Duration::from_secs(20)
                ),
                "{mode:?} {step}: the hook never got there"
            );
            child.kill().unwrap();
            child.wait().unwrap();
            // Whatever was on disk, whoever reads next sees the ledgers the state records.
            let status = p.taskie_json(&["status", "--json"]);
            let recorded = p.state_json()["phase_iteration"].as_u64().unwrap();
            assert_eq!(
                status["spend"]["plan"]["reviews"].as_u64(),
                Some(recorded * mode.members()),
                "{mode:?} {step}: {status}"
            );
            drive_to(&p, 3);
            assert_eq!(
                disagreement(&p, mode),
                (Vec::new(), 0),
                "{mode:?} {step}: {}\n{}",
                p.read("findings.json"),
                p.read("spend.json")
            );
        }
    }
}

#[test]
fn a_review_discarded_because_state_json_changed_leaves_no_finding_and_counts_no_review() {
    let p = project(Mode::Single);
    drive_to(&p, 1);
    answer_post_review(&p);
    // The reviewer edits state.json while it runs (it may: it has every permission).
    p.set_reviewer(
        &Fake::fail()
            .file(None)
            .shape(Shape::Review {
                verdict: "FAIL",
                summary: "Two problems.",
                findings: &["Step 2 has no test", "The name is unclear"],
            })
            .extra(
                "sed 's/\"max_reviews\": 50/\"max_reviews\": 51/' .taskie/plans/p/state.json > s.tmp \
                 && mv s.tmp .taskie/plans/p/state.json",
            ),
    );
    let run = p.stop();
    assert!(
        run.message()
            .contains("state.json was changed while it ran"),
        "{}",
        run.stdout
    );
    assert_eq!(p.state_json()["max_reviews"], 51);
    let spend = json_of(&p, "spend.json");
    assert_eq!(
        (&spend["plan"]["reviews"], &spend["plan"]["failed_attempts"]),
        (&json!(1), &json!(1)),
        "the discarded run cost money but is no review: {spend}"
    );
    let findings = json_of(&p, "findings.json");
    assert_eq!(
        findings["cycles"][0]["findings"].as_array().unwrap().len(),
        2,
        "only review 1's findings: {findings}"
    );
    p.set_reviewer(&Fake::fail().file(None).shape(Shape::Review {
        verdict: "FAIL",
        summary: "Two problems.",
        findings: &["Step 2 has no test", "The name is unclear"],
    }));
    drive_to(&p, 3);
    assert_eq!(disagreement(&p, Mode::Single), (Vec::new(), 0));
}
