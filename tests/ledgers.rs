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

/// Wraps every installed fake reviewer (claude, codex, gemini) so that it first edits
/// state.json, as a reviewer may (it has every permission), then runs as before. Panel
/// members run at once: each edit is the same and lands by rename, whoever goes last.
fn reviewers_edit_the_state(p: &Project) {
    let state = p.plan_dir().join("state.json");
    for name in ["fake-claude", "fake-codex", "fake-gemini"] {
        let fake = p.reviewer_dir().join(name);
        let real = p.reviewer_dir().join(format!("{name}.real"));
        std::fs::rename(&fake, &real).unwrap();
        crate::support::write_executable(
            &fake,
            &format!(
                "#!/bin/sh\nsed 's/\"max_reviews\": 50/\"max_reviews\": 51/' '{s}' > '{s}.'$$ && mv '{s}.'$$ '{s}'\n\
                 exec '{real}' \"$@\"\n",
                s = state.display(),
                real = real.display()
            ),
        );
    }
}

/// The discard path, in each mode: the reviewers ran and answered, but state.json changed
/// while they ran, so the hook keeps that edit and throws the review away. The ledgers
/// keep no finding of it and count no review; what it cost stays spent, as one failed
/// attempt. The plan then goes on with ledgers that agree with the state.
#[test]
fn a_review_discarded_because_state_json_changed_leaves_no_finding_and_counts_no_review() {
    for mode in MODES {
        let p = project(mode);
        drive_to(&p, 1);
        answer_post_review(&p);
        let before = (json_of(&p, "findings.json"), json_of(&p, "spend.json"));
        reviewers_edit_the_state(&p);
        let run = p.stop();
        assert!(
            run.message()
                .contains("state.json was changed while it ran"),
            "{mode:?}: {}",
            run.stdout
        );
        assert_eq!(
            p.state_json()["max_reviews"],
            51,
            "{mode:?}: the edit is kept"
        );
        assert_eq!(p.state_json()["phase_iteration"], 1, "{mode:?}");
        let spend = json_of(&p, "spend.json");
        assert_eq!(
            (&spend["plan"]["reviews"], &spend["plan"]["failed_attempts"]),
            (&json!(mode.members()), &json!(1)),
            "{mode:?}: the discarded run cost money but is no review: {spend}"
        );
        // Its time stays spent (codex's fake reports tokens, not dollars).
        assert!(
            spend["plan"]["review_seconds"].as_f64() > before.1["plan"]["review_seconds"].as_f64(),
            "{mode:?}: its time stays spent: {spend}"
        );
        // The post-review's answers are recorded; no finding of the discarded run is.
        let ids = |f: &Value| -> Vec<(Value, Value)> {
            f["cycles"][0]["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| (x["id"].clone(), x["opened"].clone()))
                .collect()
        };
        let findings = json_of(&p, "findings.json");
        assert_eq!(
            (ids(&findings), &findings["cycles"][0]["new_per_review"]),
            (ids(&before.0), &before.0["cycles"][0]["new_per_review"]),
            "{mode:?}: only review 1's findings: {findings}"
        );
        assert_eq!(disagreement(&p, mode), (Vec::new(), 0), "{mode:?}");
        // The reviewers no longer edit: the plan goes on, and the ledgers still agree.
        for name in ["fake-claude", "fake-codex", "fake-gemini"] {
            let fake = p.reviewer_dir().join(name);
            std::fs::rename(p.reviewer_dir().join(format!("{name}.real")), &fake).unwrap();
        }
        drive_to(&p, 3);
        assert_eq!(disagreement(&p, mode), (Vec::new(), 0), "{mode:?}");
    }
}
