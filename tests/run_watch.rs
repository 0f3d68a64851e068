//! Watching `taskie run` (docs/run.md, "Watching a run"): its plain lines when stdout is
//! not a terminal, its `--json` events, and `taskie status` of a run from another
//! terminal, all one view of the run's journal and gates.

use crate::run::{ONE, Repo};
use serde_json::Value;

/// Asserts snapshot `name` of `text` with what differs from run to run masked: paths,
/// the run's id, commits and durations.
fn check(repo: &Repo, name: &str, text: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.add_filter(&regex::escape(&repo.root().display().to_string()), "[TMP]");
    settings.add_filter(r"p-\d{8}T\d{6}Z(-\d+)?", "[RUN]");
    settings.add_filter(r"\b[0-9a-f]{12}\b", "[COMMIT]");
    settings.add_filter(r"\b\d+m \d\ds\b", "[DURATION]");
    // The table's columns are as wide as their widest cell, which the masks changed.
    settings.add_filter(r" {2,}", "  ");
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// The lines a change of a lane's words printed: the first of each, without those that
/// only say a review started or its cost came in (when the driver sees those between two
/// journal entries depends on the machine's speed).
fn changes_of_words(stdout: &str) -> String {
    let mut last: Vec<(String, String)> = Vec::new();
    let mut kept = Vec::new();
    for line in stdout.lines() {
        let Some((words, _)) = line.rsplit_once(" [").filter(|_| line.ends_with(']')) else {
            kept.push(line.to_string());
            continue;
        };
        let lane = words.split(':').next().unwrap_or_default().to_string();
        match last.iter_mut().find(|(l, _)| *l == lane) {
            Some((_, w)) if w == words => continue,
            Some((_, w)) => *w = words.to_string(),
            None => last.push((lane, words.to_string())),
        }
        kept.push(line.to_string());
    }
    kept.join("\n")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_run_whose_stdout_is_not_a_terminal_prints_plain_lines_with_each_lanes_reviews_time_and_cost() {
    let repo = Repo::new(ONE);
    let out = repo.run(&["run", "-j", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains('\x1b'), "no escape codes: {stdout:?}");
    check(&repo, "run_plain_lines", &changes_of_words(&stdout));
}

#[test]
fn status_shows_an_ended_runs_lanes_as_a_table_under_its_headline() {
    let repo = Repo::new(ONE);
    let out = repo.run(&["run", "-j", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let status = text(&repo.run(&["status", "--plan", "p"]).stdout);
    let run_part = &status[status.find("Run ").expect(&status)..];
    check(&repo, "run_status_view", run_part);
}

/// The lanes of `taskie status --json`'s run view, keyed by task.
fn status_lanes(repo: &Repo) -> Vec<Value> {
    let out = repo.run(&["status", "--plan", "p", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["run_view"]["lanes"].as_array().unwrap().clone()
}

#[test]
fn the_json_events_end_with_each_lane_as_status_shows_it_and_the_summary_last() {
    let repo = Repo::new(crate::run::TWO);
    let out = repo.run(&["run", "--json", "-j", "2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let (summary, events) = events.split_last().unwrap();
    assert_eq!(summary["event"], "summary");
    assert_eq!(summary["outcome"], "done");
    // Each lane's last event is the lane as `taskie status` asks the same view for it.
    let mut last: Vec<Value> = Vec::new();
    for e in events.iter().filter(|e| e["event"] == "lane") {
        let mut lane = e.clone();
        let obj = lane.as_object_mut().unwrap();
        obj.remove("event");
        obj.remove("run");
        last.retain(|l| l["task"] != lane["task"]);
        last.push(lane);
    }
    let mut seen = status_lanes(&repo);
    let key = |v: &Value| v["task"].as_str().unwrap_or_default().to_string();
    last.sort_by_key(key);
    seen.sort_by_key(key);
    assert_eq!(last, seen);
    assert_eq!(
        seen.iter().map(|l| l["phase"].clone()).collect::<Vec<_>>(),
        ["merged", "merged", "passed"]
    );
    assert!(
        seen.iter()
            .all(|l| l["reviews"] == 2 && l["cost_usd"] == 0.02),
        "two clean reviews each (the default), at the fake reviewer's $0.01 each: {seen:?}"
    );
    let run = events.iter().rfind(|e| e["event"] == "run").unwrap();
    assert_eq!(run["outcome"], "done");
}

#[test]
fn status_from_another_terminal_sees_a_running_lane_its_live_session_and_its_live_driver() {
    let repo = Repo::new(ONE);
    let taskie = assert_cmd::cargo::cargo_bin("taskie");
    // The session itself asks, from the user's checkout, as a person in another terminal.
    repo.agent_does(
        "1",
        &format!(
            "(cd \"$CHECKOUT\" && env -u TASKIE_RUN -u TASKIE_PLAN '{}' status --plan p --json) > \"$here/status-during.json\"\n\
             echo work > task-1.txt; git add task-1.txt; git commit -q -m t1\n",
            taskie.display()
        ),
    );
    let out = repo.run(&["run", "-j", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let during: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.root().join("agents/status-during.json")).unwrap(),
    )
    .unwrap();
    let view = &during["run_view"];
    assert_eq!(view["driver_alive"], true, "{view}");
    assert_eq!(view["outcome"], Value::Null);
    let lane = &view["lanes"][0];
    assert_eq!(
        (
            &lane["task"],
            &lane["phase"],
            &lane["alive"],
            &lane["reviews"]
        ),
        (
            &Value::from("1"),
            &Value::from("running"),
            &Value::from(true),
            &Value::from(0)
        ),
        "{view}"
    );
    assert!(lane["elapsed_secs"].is_u64(), "{lane}");
    // And once the run is over, nothing runs it.
    let after = status_lanes(&repo);
    assert_eq!(
        after[0]["alive"],
        Value::Null,
        "a merged lane has no session"
    );
    let out = repo.run(&["status", "--plan", "p", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["run_view"]["driver_alive"], false);
}

#[test]
fn a_run_whose_driver_was_killed_shows_as_cut_off_with_its_lane_still_running() {
    let repo = Repo::new(ONE);
    let out = repo
        .taskie(&["run"])
        .env("TASKIE_TEST_KILL_AT", "after:session")
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(9), "{}", text(&out.stderr));
    let status = text(&repo.run(&["status", "--plan", "p"]).stdout);
    assert!(
        status.contains("cut off: no driver runs it (`taskie run --resume` goes on)"),
        "{status}"
    );
    let lanes = status_lanes(&repo);
    assert_eq!(lanes[0]["phase"], "running");
}

#[test]
fn a_journal_written_before_times_still_shows_its_lanes_without_elapsed_time() {
    let repo = Repo::new(ONE);
    assert!(repo.run(&["run"]).status.success());
    let runs = repo.work().join(".taskie/runs");
    // The run's directory, whichever order the file system lists `runs/` in (it holds the
    // runs' lock files too).
    let journal = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path().join("journal.jsonl"))
        .find(|j| j.is_file())
        .expect("a run directory with its journal");
    let old: String = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("ts");
            format!("{v}\n")
        })
        .collect();
    assert!(!old.contains("\"ts\""));
    std::fs::write(&journal, old).unwrap();
    let lanes = status_lanes(&repo);
    assert_eq!(lanes[0]["phase"], "merged");
    assert_eq!(lanes[0]["elapsed_secs"], Value::Null);
    let status = text(&repo.run(&["status", "--plan", "p"]).stdout);
    assert!(status.contains("  1     merged"), "{status}");
}
