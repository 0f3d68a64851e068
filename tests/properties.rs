//! Bad input, property-based (SPEC §3, §4, §16). Two layers:
//! - the pure functions (State::parse, tasks::parse, validate, verdict::read, Event::parse,
//!   decide/conclude) in-process, with thousands of cases;
//! - the real `taskie-hook` binary, with arbitrary stdin, state.json, tasks.md and file
//!   names, a few hundred cases in all (each case starts a process).
//!
//! Whatever the input, the hook exits 0, prints nothing or one JSON object, does not panic,
//! blocks with `stop_hook_active` only right after a review it ran, and changes state.json
//! only to a state that parses and is valid. Interesting inputs are kept in tests/corpus/
//! and replayed by `the_corpus_keeps_the_hook_protocol`.

use crate::support::processes::*;
use crate::support::{Project, Run, due};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Map, Number, Value, json};
use std::path::Path;
use taskie::hook::decide::{self, Step};
use taskie::hook::input::Event;
use taskie::model::cycle::Reviewed;
use taskie::model::facts::FactsBuilder;
use taskie::model::phase::PHASES;
use taskie::model::state::{State, StateError};
use taskie::model::tasks::{self, TaskRow};
use taskie::model::validate::{self, Listing};
use taskie::model::verdict::{self, Reading, Verdict};

/// Cases for the properties that start the hook binary once per case.
const BINARY_CASES: u32 = 96;
/// Cases for the in-process properties.
const PURE_CASES: u32 = 4096;

fn config(cases: u32) -> ProptestConfig {
    // The fast tier runs an eighth of the cases; the slow tier (the `e2e` crate) all of them.
    let cases = if crate::SLOW_TIER {
        cases
    } else {
        cases.div_ceil(8)
    };
    ProptestConfig {
        cases: cases.saturating_mul(scale()),
        // Failures found here are copied into tests/corpus/ by hand, as regular tests.
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..ProptestConfig::default()
    }
}

/// `TASKIE_TEST_SCALE=<n>` multiplies every case count, for long local runs (see
/// docs/reliability.md); CI runs with 1.
fn scale() -> u32 {
    u32::try_from(crate::support::processes::scale()).unwrap_or(u32::MAX)
}

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

/// Any JSON value, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((".{0,8}", inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

const FIELDS: [&str; 11] = [
    "max_reviews",
    "current_task",
    "phase",
    "next_phase",
    "phase_iteration",
    "review_model",
    "consecutive_clean",
    "tdd",
    "review_failures",
    "clean_reviews_required",
    "auto_continue",
];

/// Values a state field might hold: right ones, near misses and junk.
fn field_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => (0u64..10).prop_map(Value::from),
        1 => prop_oneof![Just(u64::MAX), Just(u64::MAX - 1), Just(i64::MAX as u64)].prop_map(Value::from),
        1 => (-3i64..0).prop_map(Value::from),
        1 => "[0-9]{1,3}".prop_map(Value::String),
        1 => Just(json!("18446744073709551616")),
        1 => Just(json!(1.5)),
        2 => prop::sample::select(PHASES.to_vec()).prop_map(Value::from),
        1 => prop::sample::select(vec!["opus", "sonnet", "haiku", "op us", "", "x;y", "claude-[1m]"])
            .prop_map(Value::from),
        2 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
        1 => any_json(),
    ]
}

/// A state.json object: a valid due state with some fields replaced or added.
fn state_object() -> impl Strategy<Value = Value> {
    let base = prop::sample::select(vec![
        "plan-review",
        "tasks-review",
        "code-review",
        "all-code-review",
        "post-plan-review",
        "post-code-review",
        "complete-task",
    ]);
    let edits = prop::collection::vec(
        (
            prop_oneof![4 => prop::sample::select(FIELDS.to_vec()).prop_map(str::to_owned), 1 => ".{0,8}"],
            field_value(),
        ),
        0..5,
    );
    (base, edits).prop_map(|(next, edits)| {
        let mut s = due(next);
        s["current_task"] = json!(1);
        for (k, v) in edits {
            s[k] = v;
        }
        s
    })
}

/// What state.json may contain: arbitrary bytes, arbitrary JSON, or a plausible object.
fn state_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..64),
        1 => any_json().prop_map(|v| v.to_string().into_bytes()),
        4 => state_object().prop_map(|v| v.to_string().into_bytes()),
    ]
}

/// tasks.md: arbitrary text, or tables with odd rows.
fn tasks_md() -> impl Strategy<Value = String> {
    let cell = prop_oneof![
        Just("1".to_owned()),
        Just("2".to_owned()),
        Just("**Done**".to_owned()),
        Just("pending".to_owned()),
        Just("---".to_owned()),
        Just("99999999999999999999999".to_owned()),
        "[^|\n]{0,10}",
    ];
    let row =
        prop::collection::vec(cell, 0..5).prop_map(|cells| format!("| {} |", cells.join(" | ")));
    let line = prop_oneof![
        6 => row,
        1 => ".{0,20}",
        1 => Just(String::new()),
        1 => Just("| Id | Status |".to_owned()),
        1 => Just("|---|---|".to_owned()),
    ];
    prop_oneof![
        1 => ".{0,200}",
        3 => (prop::collection::vec(line, 0..8), any::<bool>())
            .prop_map(|(lines, crlf)| lines.join(if crlf { "\r\n" } else { "\n" })),
    ]
}

/// A file name that can exist in a directory (no `/`, no NUL), often close to a plan file.
fn file_name() -> impl Strategy<Value = String> {
    let plausible = (
        prop::sample::select(vec![
            "plan",
            "tasks",
            "design",
            "task-1",
            "task-2",
            "task-1-code",
            "all-code",
            "task-",
            "task-01",
        ]),
        prop::sample::select(vec![
            "",
            "-review-",
            "-post-review-",
            "-review-0",
            "-code-review-",
        ]),
        prop::sample::select(vec!["", "1", "2", "007", "18446744073709551616", "x"]),
        prop::sample::select(vec![".md", ".MD", "", ".md.bak", ".json", ".md~"]),
    )
        .prop_map(|(a, b, c, d)| format!("{a}{b}{c}{d}"));
    prop_oneof![
        3 => plausible,
        1 => "[^/\u{0}]{1,16}",
        1 => Just("state.json".to_owned()),
        1 => Just(".taskie-tmp-x".to_owned()),
    ]
    .prop_filter("creatable", |n| !n.is_empty() && n != "." && n != "..")
}

/// A valid state for the in-process decide properties.
fn valid_state() -> impl Strategy<Value = State> {
    let num = prop_oneof![6 => 0u64..6, 1 => Just(u64::MAX), 1 => Just(u64::MAX - 1)];
    (
        (num.clone(), prop::option::of(prop_oneof![1u64..4, Just(u64::MAX)])),
        prop::sample::select(PHASES.to_vec()),
        prop::option::of(prop::sample::select(PHASES.to_vec())),
        prop::option::of(num.clone()),
        prop::sample::select(vec!["opus", "sonnet", "haiku"]),
        (0u64..4, any::<bool>(), 0u64..5, 1u64..4, any::<bool>()),
    )
        .prop_map(|((max, task), phase, next, iter, model, (clean, tdd, fails, req, auto))| {
            let v = json!({"max_reviews": max, "current_task": task, "phase": phase, "next_phase": next,
                "phase_iteration": iter, "review_model": model, "consecutive_clean": clean, "tdd": tdd,
                "review_failures": fails, "clean_reviews_required": req, "auto_continue": auto});
            State::parse(v.to_string().as_bytes()).expect("generated states are valid")
        })
}

/// Names of plan files with small numbers, so reviews and post-reviews line up.
fn plan_files() -> impl Strategy<Value = Vec<String>> {
    let name = (0usize..7, 1u64..4, 1u64..5).prop_map(|(kind, t, i)| match kind {
        0 => format!("task-{t}.md"),
        1 => format!("plan-review-{i}.md"),
        2 => format!("plan-post-review-{i}.md"),
        3 => format!("task-{t}-code-review-{i}.md"),
        4 => format!("task-{t}-code-post-review-{i}.md"),
        5 => format!("tasks-post-review-{i}.md"),
        _ => format!("all-code-post-review-{i}.md"),
    });
    (
        prop::collection::vec(name, 0..8),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(mut v, plan, tasks)| {
            if plan {
                v.push("plan.md".into());
            }
            if tasks {
                v.push("tasks.md".into());
            }
            v.sort();
            v.dedup();
            v
        })
}

fn task_rows() -> impl Strategy<Value = Vec<TaskRow>> {
    prop::collection::vec(
        (
            prop_oneof![Just("1"), Just("2"), Just("3"), Just("x")],
            prop_oneof![Just("done"), Just("pending"), Just("")],
        )
            .prop_map(|(id, status)| TaskRow {
                id: id.into(),
                status: status.into(),
                title: String::new(),
            }),
        0..4,
    )
}

fn reviewed() -> impl Strategy<Value = Reviewed> {
    prop_oneof![
        prop::sample::select(vec![Verdict::Pass, Verdict::Fail, Verdict::Unknown]).prop_map(|v| {
            Reviewed::Verdict {
                reading: Reading {
                    verdict: v,
                    source: "structured_output".into(),
                },
                exit: 0,
                findings: vec!["a finding".into()],
                failover: Default::default(),
                verified: Default::default(),
            }
        }),
        Just(Reviewed::Failed {
            reason: "exited with status 1".into(),
            log: ".taskie/logs/review.log".into(),
            exit: Some(1),
            failure: taskie::model::cycle::Failure::Reviewer,
        }),
    ]
}

// ---------------------------------------------------------------------------------------
// The hook binary: shared checks
// ---------------------------------------------------------------------------------------

/// A plan where every review's preconditions hold, with a quick FAIL reviewer.
fn full_plan() -> Project {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "pending"), (2, "done")]);
    p.script_reviewer(REVIEW_FAIL);
    p
}

/// Runs the hook with `stdin` from the project directory (so a relative or missing `cwd`
/// can only ever mean this project).
fn run_bytes(p: &Project, stdin: &[u8]) -> Run {
    let out = p
        .hook_command()
        .current_dir(p.root())
        .write_stdin(stdin.to_vec())
        .output()
        .unwrap();
    Run::from(out)
}

/// The hook protocol and the safety rules, for one run. `before` is state.json before it.
fn check_run(p: &Project, run: &Run, active: bool, before: Option<&[u8]>, calls_before: usize) {
    let answer = run.answer(); // exit 0, empty or one JSON object, no `continue` on allows
    assert!(
        !run.stderr.contains("internal error") && !run.stderr.contains("panicked"),
        "the hook panicked: {}",
        run.stderr
    );
    if answer.is_object() {
        let keys: Vec<&String> = answer.as_object().unwrap().keys().collect();
        assert!(
            keys.iter().all(
                |k| ["decision", "reason", "systemMessage", "hookSpecificOutput"]
                    .contains(&k.as_str())
            ),
            "{answer}"
        );
    }
    let reviewed = p.reviewer_calls() > calls_before;
    let block = crate::support::block_text(&answer);
    if let Some(reason) = &block {
        assert!(!reason.is_empty());
        if active {
            assert!(
                reviewed,
                "blocked with stop_hook_active without a review: {answer}"
            );
        }
    }
    let after = std::fs::read(p.state_path()).ok();
    if after.as_deref() != before {
        let after = after.expect("the hook never deletes state.json");
        let parsed = State::parse(&after);
        assert!(
            parsed.is_ok(),
            "state.json was changed to an invalid state: {}",
            String::from_utf8_lossy(&after)
        );
        let before = before.expect("the hook never creates state.json");
        assert!(
            State::parse(before).is_ok(),
            "an invalid state.json was modified: {}",
            String::from_utf8_lossy(before)
        );
    }
    assert!(
        p.temp_files().is_empty(),
        "temporary files left: {:?}",
        p.temp_files()
    );
}

/// Runs one stop on `p` and checks it.
fn stop_and_check(p: &Project, active: bool) -> Run {
    let before = std::fs::read(p.state_path()).ok();
    let calls = p.reviewer_calls();
    let run = if active { p.stop_active() } else { p.stop() };
    check_run(p, &run, active, before.as_deref(), calls);
    run
}

// ---------------------------------------------------------------------------------------
// The hook binary: properties
// ---------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(BINARY_CASES))]

    #[test]
    fn the_hook_survives_arbitrary_bytes_on_stdin(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let p = full_plan().state(due("plan-review"));
        let before = p.state_bytes();
        let run = run_bytes(&p, &bytes);
        check_run(&p, &run, false, Some(&before), 0);
        // Bytes that are not a JSON object are reported, and nothing runs.
        if serde_json::from_slice::<Value>(&bytes).map(|v| !v.is_object()).unwrap_or(true) {
            prop_assert!(run.message().starts_with("Taskie: the Stop hook"));
            prop_assert_eq!(p.reviewer_calls(), 0);
        }
    }

    #[test]
    fn the_hook_survives_arbitrary_json_on_stdin(
        value in any_json(),
        fields in prop::collection::vec(
            (prop::sample::select(vec!["cwd", "stop_hook_active", "hook_event_name", "session_id"]), any_json()),
            0..4),
        real_cwd in any::<bool>(),
    ) {
        let p = full_plan().state(due("plan-review"));
        let mut event = value;
        if let Value::Object(map) = &mut event {
            for (k, v) in fields {
                map.insert(k.into(), v);
            }
            if real_cwd {
                map.insert("cwd".into(), json!(p.root()));
            }
        }
        let active = event.get("stop_hook_active") == Some(&Value::Bool(true));
        let before = p.state_bytes();
        let run = run_bytes(&p, event.to_string().as_bytes());
        check_run(&p, &run, active, Some(&before), 0);
    }

    #[test]
    fn the_hook_survives_arbitrary_state_json(bytes in state_bytes(), active in any::<bool>()) {
        let p = full_plan();
        p.put_state(&bytes);
        let run = stop_and_check(&p, active);
        if State::parse(&bytes).is_err() {
            prop_assert_eq!(p.state_bytes(), bytes, "an invalid state is left untouched");
            prop_assert!(!run.is_block());
        }
    }

    #[test]
    fn the_hook_survives_arbitrary_tasks_md(
        md in tasks_md(),
        next in prop::sample::select(vec!["tasks-review", "code-review", "all-code-review"]),
        active in any::<bool>(),
    ) {
        let p = full_plan().file("tasks.md", &md);
        let mut state = due(next);
        state["current_task"] = json!(1);
        let p = p.state(state);
        stop_and_check(&p, active);
    }

    #[test]
    fn the_hook_survives_arbitrary_file_names(
        names in prop::collection::vec(file_name(), 0..6),
        active in any::<bool>(),
    ) {
        let p = full_plan().state(due("plan-review"));
        for name in &names {
            let path = p.plan_dir().join(name);
            if name != "state.json" && !path.exists() {
                // A name the file system refuses (too long, say) is simply not created.
                let _ = std::fs::write(path, "x\n");
            }
        }
        let outside_before = tree(&p.root()).into_iter().filter(|f| !f.starts_with(".taskie")).count();
        stop_and_check(&p, active);
        let outside_after = tree(&p.root()).into_iter().filter(|f| !f.starts_with(".taskie")).count();
        prop_assert_eq!(outside_before, outside_after, "nothing written outside .taskie");
    }
}

/// Several stops in a row on arbitrary state: whatever the start, the hook never loops
/// (blocks stay within max_reviews per cycle, plus one auto-continue block).
#[test]
fn the_hook_stays_bounded_from_arbitrary_valid_starting_states() {
    let mut runner = proptest::test_runner::TestRunner::new(config(24));
    runner
        .run(&state_object(), |state| {
            let p = full_plan().state(state.clone());
            let Ok(parsed) = State::parse(state.to_string().as_bytes()) else {
                return Ok(());
            };
            let mut active = false;
            let mut blocks = 0u64;
            for _ in 0..12 {
                let run = stop_and_check(&p, active);
                if let Some(reason) = run.answer()["reason"].as_str()
                    && let Some(i) = reason.find("write what you did to ")
                {
                    let rest = &reason[i + "write what you did to ".len()..];
                    let post = &rest[..rest.find(". ").unwrap()];
                    std::fs::write(p.root().join(post), "done\n").unwrap();
                }
                active = run.is_block();
                blocks += u64::from(active);
            }
            prop_assert!(
                blocks <= parsed.max_reviews.saturating_add(1),
                "{blocks} blocks with max_reviews {}",
                parsed.max_reviews
            );
            Ok(())
        })
        .unwrap();
}

// ---------------------------------------------------------------------------------------
// Pure functions, in-process
// ---------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(PURE_CASES))]

    #[test]
    fn state_parse_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..128)) {
        let _ = State::parse(&bytes);
    }

    /// A state that parses writes back canonically: the written text parses to the same
    /// state, writing again gives the same text, and unknown fields survive.
    #[test]
    fn a_parsed_state_writes_back_to_itself(obj in state_object(), extra in ".{0,6}", extra_value in any_json()) {
        let mut obj = obj;
        let extra_key = format!("x-{extra}");
        obj[&extra_key] = extra_value.clone();
        let Ok(state) = State::parse(obj.to_string().as_bytes()) else { return Ok(()) };
        let text = state.to_json();
        prop_assert!(text.ends_with("}\n"), "pretty with a trailing newline");
        let again = State::parse(text.as_bytes()).expect("a written state parses");
        prop_assert_eq!(again.to_json(), text.clone());
        let v: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(&v[&extra_key], &extra_value);
        for f in FIELDS {
            if let Some(n) = v.get(f).and_then(Value::as_u64) {
                prop_assert_eq!(state.value_of(f), Value::from(n), "numbers are written as numbers");
            }
        }
    }

    /// A state error names every bad field and never hides one behind another.
    #[test]
    fn state_errors_name_the_bad_fields(obj in state_object()) {
        if let Err(StateError::Fields(problems)) = State::parse(obj.to_string().as_bytes()) {
            prop_assert!(!problems.is_empty());
            for pr in problems {
                prop_assert!(FIELDS.contains(&pr.field.as_str()));
                prop_assert!(pr.to_string().contains("taskie state set"));
            }
        }
    }

    #[test]
    fn tasks_parse_never_panics_and_rows_come_from_the_table(md in tasks_md()) {
        if let Ok(rows) = tasks::parse(&md) {
            prop_assert!(!rows.is_empty());
            for r in rows {
                let _ = (r.number(), r.is_finished());
            }
        }
    }

    #[test]
    fn tasks_parse_never_panics_on_any_text(md in ".{0,300}") {
        let _ = tasks::parse(&md);
    }

    #[test]
    fn validation_never_panics_and_reports_each_error_once(
        names in prop::collection::vec(file_name(), 0..10),
        md in prop::option::of(tasks_md()),
        nested in any::<bool>(),
    ) {
        let mut files = names;
        files.sort();
        files.dedup();
        let listing = Listing { files, nested_md: nested };
        let errors = validate::validate(&listing, md.as_deref());
        let mut unique = errors.clone();
        unique.sort();
        unique.dedup();
        prop_assert_eq!(unique.len(), errors.len(), "{:?}", errors);
    }

    /// PASS only if some source says PASS and none says FAIL (SPEC §9).
    #[test]
    fn a_verdict_is_pass_only_without_a_fail_anywhere(
        result in prop::option::of(any_json()),
        structured in prop::option::of(prop::sample::select(vec!["PASS", "FAIL", "pass", "maybe", ""])),
        text in prop::option::of(prop_oneof![
            ".{0,80}",
            prop::sample::select(vec!["VERDICT: PASS", "VERDICT: FAIL", "**Verdict:** pass", "x\nVERDICT: FAIL\r\n"])
                .prop_map(str::to_owned),
        ]),
    ) {
        // The older object-shaped `result` carries a verdict only when it is an object.
        let older = result.as_ref().and_then(|r| r.get("verdict")).and_then(Value::as_str);
        let claims = verdict::Claims { structured, result: older, review_file: text.as_deref() };
        let reading = verdict::read(&claims);
        let file = text.as_deref().and_then(verdict::from_text);
        let so = structured.map(|s| s.trim().to_ascii_uppercase());
        if reading.verdict == Verdict::Pass {
            prop_assert_ne!(file, Some(false));
            prop_assert_ne!(so.as_deref(), Some("FAIL"));
        }
        if file == Some(false) || so.as_deref() == Some("FAIL") {
            prop_assert_eq!(reading.verdict, Verdict::Fail);
        }
    }

    #[test]
    fn event_parse_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..128), value in any_json()) {
        let _ = Event::parse(&bytes);
        if let Ok(e) = Event::parse(value.to_string().as_bytes()) {
            prop_assert!(value.is_object());
            prop_assert_eq!(e.stop_hook_active, value["stop_hook_active"] == Value::Bool(true));
        }
    }

    /// The decision procedure on arbitrary facts: never panics; blocks before a review
    /// only for structure errors on a fresh stop; every state it writes is valid; a review
    /// it runs is a later iteration within max_reviews; and after a review it blocks only
    /// to start a post-review of that iteration or (auto_continue) after a passed cycle.
    #[test]
    fn decide_and_conclude_keep_loop_safety_on_arbitrary_facts(
        state in valid_state(),
        files in plan_files(),
        rows in task_rows(),
        errors in prop_oneof![4 => Just(Vec::new()), 1 => Just(vec![validate::StructureError::MissingPlan])],
        active in any::<bool>(),
        result in reviewed(),
    ) {
        let names: Vec<&str> = files.iter().map(String::as_str).collect();
        let b = FactsBuilder::new("p").active(active).errors(errors.clone()).state(Ok(Some(state))).files(&names).task_rows(rows);
        let f = b.facts();
        match decide::decide(&f) {
            Step::Done(o) => {
                if o.answer.is_block() {
                    prop_assert!(!active && !errors.is_empty(), "{:?}", o.answer);
                }
                if let Some(s) = o.write {
                    prop_assert!(State::parse(s.to_json().as_bytes()).is_ok());
                }
            }
            Step::HardStop(_, record) => prop_assert!(!record.outcome.is_empty()),
            Step::Review(due) => {
                prop_assert!(errors.is_empty());
                let done_before = due.base.phase_iteration.unwrap_or(0);
                prop_assert!(due.iteration > done_before, "iteration {} after {}", due.iteration, done_before);
                prop_assert!(due.iteration <= due.base.max_reviews);
                let o = decide::conclude(&f, &due, &result);
                let written = o.write.expect("a review always writes state");
                let reparsed = State::parse(written.to_json().as_bytes());
                prop_assert!(reparsed.is_ok());
                if o.answer.is_block() {
                    let post_review = written.next_phase.as_deref() == Some(due.review.post_name())
                        && written.phase_iteration == Some(due.iteration);
                    prop_assert!(post_review || written.auto_continue, "{:?}", written);
                }
                if matches!(result, Reviewed::Failed { .. }) {
                    prop_assert!(!o.answer.is_block());
                    prop_assert_eq!(written.review_failures, due.read.review_failures + 1);
                }
            }
        }
    }
}

/// A pure simulation of many stops with random verdicts and an agent that always writes
/// its post-review: within one cycle (same review and task) the hook blocks at most
/// max_reviews times, plus one auto-continue block when the cycle passes.
#[test]
fn blocks_per_cycle_never_exceed_max_reviews_in_a_pure_simulation() {
    let mut runner = proptest::test_runner::TestRunner::new(config(1024));
    let strategy = (
        valid_state(),
        task_rows(),
        prop::collection::vec(reviewed(), 50),
        prop::collection::vec(any::<bool>(), 50),
    );
    runner
        .run(&strategy, |(state, rows, verdicts, writes_post)| {
            let mut state = state;
            let mut files: Vec<String> = vec!["plan.md".into(), "tasks.md".into()];
            files.extend((1..4).map(|t| format!("task-{t}.md")));
            let mut active = false;
            let mut per_cycle = std::collections::BTreeMap::<(&str, Option<u64>), u64>::new();
            for stop in 0..50 {
                let names: Vec<&str> = files.iter().map(String::as_str).collect();
                let b = FactsBuilder::new("p")
                    .active(active)
                    .state(Ok(Some(state.clone())))
                    .files(&names)
                    .task_rows(rows.clone());
                let f = b.facts();
                let (blocked, next, new_files) = match decide::decide(&f) {
                    Step::Done(o) => (o.answer.is_block(), o.write, vec![]),
                    Step::HardStop(..) => (false, None, vec![]),
                    Step::Review(due) => {
                        let o = decide::conclude(&f, &due, &verdicts[stop]);
                        let mut new = vec![];
                        if matches!(verdicts[stop], Reviewed::Verdict { .. }) {
                            new.push(due.review_file.clone());
                        }
                        if o.answer.is_block() {
                            *per_cycle.entry((due.review.name(), due.task)).or_default() += 1;
                            if writes_post[stop] {
                                new.push(due.post_file.clone());
                            }
                        }
                        (o.answer.is_block(), o.write, new)
                    }
                };
                prop_assert!(
                    !(blocked && active && next.is_none()),
                    "a block with stop_hook_active and no review"
                );
                if let Some(s) = next {
                    state = s;
                }
                files.extend(new_files);
                files.sort();
                files.dedup();
                active = blocked;
            }
            for (cycle, blocks) in per_cycle {
                prop_assert!(
                    blocks <= state.max_reviews.saturating_add(1),
                    "{cycle:?}: {blocks} blocks, max_reviews {}",
                    state.max_reviews
                );
            }
            Ok(())
        })
        .unwrap();
}

// ---------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------

fn corpus(kind: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(kind);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Every input kept in tests/corpus/ (found by the properties above, by fuzzing, or
/// written as known edge cases), replayed through the real hook with both values of
/// stop_hook_active.
#[test]
fn the_corpus_keeps_the_hook_protocol() {
    let mut cases = 0;
    for (name, bytes) in corpus("stdin") {
        let p = full_plan().state(due("plan-review"));
        let before = p.state_bytes();
        let run = run_bytes(&p, &bytes);
        check_run(&p, &run, false, Some(&before), 0);
        assert!(!run.is_block() || p.reviewer_calls() == 1, "stdin/{name}");
        cases += 1;
    }
    for (name, bytes) in corpus("state") {
        for active in [false, true] {
            let p = full_plan();
            p.put_state(&bytes);
            let run = stop_and_check(&p, active);
            if State::parse(&bytes).is_err() {
                assert_eq!(p.state_bytes(), bytes, "state/{name}");
                assert!(!run.is_block(), "state/{name}");
            }
            cases += 1;
        }
    }
    for (name, bytes) in corpus("tasks") {
        for active in [false, true] {
            let p = full_plan()
                .file("tasks.md", &String::from_utf8_lossy(&bytes))
                .state(json!({"phase": "create-tasks", "next_phase": "tasks-review", "phase_iteration": 0}));
            let run = stop_and_check(&p, active);
            assert!(run.code == Some(0), "tasks/{name}");
            cases += 1;
        }
    }
    assert!(cases >= 20, "the corpus is there: {cases} cases");
}

/// Keeps the corpus readable: a map of the decoded state corpus, checked against the
/// parser, so a change in what is accepted shows up here first.
#[test]
fn the_state_corpus_parses_as_recorded() {
    let expectations: Map<String, Value> = serde_json::from_slice(
        &std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/state-expectations.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for (name, bytes) in corpus("state") {
        let want = expectations
            .get(&name)
            .and_then(Value::as_str)
            .unwrap_or_else(|| {
                panic!("tests/corpus/state-expectations.json has no entry for {name}")
            });
        let got = if State::parse(&bytes).is_ok() {
            "valid"
        } else {
            "state-error"
        };
        assert_eq!(got, want, "state/{name}");
    }
}

/// Found by `decide_and_conclude_keep_loop_safety_on_arbitrary_facts` (the hard-stop path
/// counted down from phase_iteration to 1 looking for the last review: effectively forever
/// at u64::MAX) and by the corpus (an overflow in the diagnostics text). Also: at u64::MAX
/// the iteration saturated, so the same review number could run again and again.
#[test]
fn iteration_counts_near_u64_max_end_the_cycle_without_hanging() {
    let max = u64::MAX;
    let p = full_plan().state(json!({"phase": "new-plan", "next_phase": "plan-review",
        "phase_iteration": max, "max_reviews": max}));
    let msg = stop_and_check(&p, false).message();
    assert!(msg.contains("max_reviews"), "a hard stop: {msg}");
    assert_eq!(p.reviewer_calls(), 0);

    let q = full_plan().state(json!({"phase": "new-plan", "next_phase": "plan-review",
        "phase_iteration": max - 1, "max_reviews": max}));
    let reason = stop_and_check(&q, false).reason();
    assert!(
        reason.contains(&format!("plan-review-{max}.md")),
        "{reason}"
    );
    std::fs::write(
        q.plan_dir().join(format!("plan-post-review-{max}.md")),
        "done\n",
    )
    .unwrap();
    let msg = stop_and_check(&q, true).message();
    assert!(msg.contains("max_reviews"), "no review #{max} again: {msg}");
    assert_eq!(q.reviewer_calls(), 1);
}

// ---------------------------------------------------------------------------------------
// The usage-limit parsers (SPEC §22): whatever text a reviewer answers with
// ---------------------------------------------------------------------------------------

/// Text around the words the limit parsers look for: arbitrary Unicode, letters whose
/// lower case has another length ('İ' grows, 'ẞ' and 'Ⱥ' shrink), the parsers' own
/// keywords, dates, hours and zones, in any order.
fn limit_words() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<String>(),
        ".{0,4}",
        prop::sample::select(vec![
            "İ",
            "ẞ",
            "Ⱥ",
            "ı",
            "K",
            "é",
            "·",
            "\u{2019}",
            " ",
            "resets ",
            "RESETS ",
            "try again at ",
            "Try Again At ",
            "usage limit",
            "Suggested retry after ",
            "retry after ",
            "Nov 26, ",
            "nov 24th, 2026 ",
            "Dec 30, 9998 ",
            "5",
            "12",
            ":44",
            ":5",
            "am",
            "PM",
            "pm ",
            " (UTC)",
            " (Asia/Kolkata)",
            " (Mars/Olympus)",
            "(",
            ")",
            "s.",
            "3600",
            "1e400",
            "0.5",
            "9999999999999999999",
            ".",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

/// "Now": the usual, the far ends of the calendar, and any second at all.
fn any_now() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(1_795_514_400i64),
        -377_705_116_800i64..=253_402_300_799,
        any::<i64>(),
    ]
}

proptest! {
    #![proptest_config(config(PURE_CASES))]

    /// Every parser that reads a usage limit or a reset time, and every kind's reading of
    /// a failed run that carries one, takes any text without a panic: a panic in the hook
    /// is an internal-error allow that loses the run's cost and counts no failure.
    #[test]
    fn no_limit_parser_panics_on_any_text(words in limit_words(), now in any_now()) {
        use taskie::model::reviewers::{Kind, Reviewer};
        use taskie::model::limit;
        use taskie::reviewer::{codex, gemini, kinds, result::CliResult};
        use jiff::tz::TimeZone;
        let kolkata = TimeZone::get("Asia/Kolkata").unwrap();
        for zone in [None, Some(TimeZone::UTC), Some(kolkata.clone())] {
            let _ = limit::claude_reset(&words, now, &|_| zone.clone());
        }
        for local in [TimeZone::UTC, kolkata.clone()] {
            let _ = limit::codex_reset(&words, now, &local);
        }
        let _ = limit::gemini_reset(&words, now);
        let _ = (limit::is_codex_usage_limit(&words), limit::is_gemini_usage_limit(&words));
        for kind in [Kind::Claude, Kind::Codex, Kind::Gemini] {
            let _ = limit::reset(kind, &words, now, &kolkata);
            let _ = limit::agent_limit(kind, &words, now, &kolkata);
            let reviewer = Reviewer { kind, model: "m".into() };
            let _ = kinds::limited(&words, 1).usage_limit(&words).concluded(&reviewer, "log", now);
            let _ = kinds::reported(&words, 1).concluded(&reviewer, "log", now);
        }
        let quoted = serde_json::to_string(&words).unwrap();
        let claude = format!(
            r#"{{"is_error":true,"api_error_status":429,"api_error":"usage_limit_reached","result":{quoted}}}"#
        );
        let r = CliResult::parse(claude.as_bytes()).unwrap();
        prop_assert!(r.is_usage_limit());
        let _ = (r.failure(), r.is_rate_limit());
        let turn = format!(r#"{{"type":"turn.failed","error":{{"message":{quoted}}}}}"#);
        let _ = codex::Events::parse(turn.as_bytes()).said(1, words.as_bytes());
        let error = format!(r#"{{"error":{{"message":{quoted},"code":429}}}}"#);
        let _ = gemini::Output::parse(b"", error.as_bytes()).said(173, error.as_bytes());
    }
}

/// The texts that made the hook panic (a lower-cased copy searched, the original sliced
/// at that index): read, never a crash.
#[test]
fn usage_limit_texts_with_case_changing_letters_are_read_without_a_panic() {
    use taskie::model::limit;
    let now = 1_795_514_400;
    let utc = |_: &str| Some(jiff::tz::TimeZone::UTC);
    assert_eq!(limit::claude_reset("İresets é5pm (UTC)", now, &utc), None);
    assert_eq!(
        limit::claude_reset("ẞẞẞẞẞẞẞẞresets 5pm (UTC)", now, &utc),
        Some(now + 7 * 3600 + 60)
    );
    assert_eq!(
        limit::codex_reset("İİİtry again at é", now, &jiff::tz::TimeZone::UTC),
        None
    );
}
