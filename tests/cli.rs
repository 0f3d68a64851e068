//! The `taskie` command line: status, validate, init, state get/set, plan selection
//! from subdirectories, and exit statuses.

use crate::support::{Project, due};
use serde_json::{Value, json};

fn code_cycle() -> Value {
    json!({"max_reviews": 8, "current_task": 2, "phase": "code-review",
           "next_phase": "post-code-review", "phase_iteration": 2, "review_model": "opus",
           "consecutive_clean": 1, "tdd": false})
}

fn status_project() -> Project {
    Project::new()
        .plan("p")
        .tasks(&[(1, "done"), (2, "in progress"), (3, "pending")])
        .state(code_cycle())
        .file("task-2-code-review-1.md", "VERDICT: FAIL\n")
        .file("task-2-code-post-review-1.md", "fixed\n")
        .file("task-2-code-review-2.md", "VERDICT: PASS\n")
}

// ---- status ----

#[test]
fn status_json_reports_every_part_of_the_plan() {
    let p = status_project();
    let v = p.taskie_json(&["status", "--json"]);
    assert_eq!(v["plan"], "p");
    assert_eq!(v["dir"], ".taskie/plans/p");
    assert_eq!(v["phase"], "code-review");
    assert_eq!(v["next_phase"], "post-code-review");
    assert_eq!(v["current_task"], 2);
    assert_eq!(v["state"]["max_reviews"], 8);
    assert_eq!(v["state"]["clean_reviews_required"], 2);
    assert_eq!(v["state_error"], Value::Null);
    let c = &v["cycle"];
    assert_eq!(c["review"], "code-review");
    assert_eq!(c["task"], 2);
    assert_eq!(c["iteration"], 2);
    assert_eq!(c["max_reviews"], 8);
    assert_eq!(c["model"], "opus");
    assert_eq!(c["consecutive_clean"], 1);
    assert_eq!(c["clean_reviews_required"], 2);
    assert_eq!(c["status"], "post-review-owed");
    assert_eq!(
        v["tasks"],
        json!([
            {"id": "1", "title": "Task 1", "status": "done", "finished": true, "current": false},
            {"id": "2", "title": "Task 2", "status": "in progress", "finished": false, "current": true},
            {"id": "3", "title": "Task 3", "status": "pending", "finished": false, "current": false},
        ])
    );
    let r = &v["reviews"];
    assert_eq!(r.as_array().unwrap().len(), 2);
    assert_eq!(r[0]["iteration"], 1);
    assert_eq!(r[0]["file"], "task-2-code-review-1.md");
    assert_eq!(r[0]["exists"], true);
    assert_eq!(r[0]["post_review"], true);
    assert_eq!(r[0]["verdict"], Value::Null, "no event log, so no verdict");
    assert_eq!(r[1]["post_review"], false);
    assert_eq!(v["hard_stop"], Value::Null);
    assert_eq!(v["errors"], json!([]));
}

#[test]
fn status_takes_verdicts_from_the_event_log() {
    let p = Project::new()
        .plan("p")
        .state(crate::support::due("plan-review"))
        .reviewer(&crate::support::Fake::fail());
    assert!(p.stop().is_block());
    let v = p.taskie_json(&["status", "--json"]);
    assert_eq!(v["reviews"][0]["verdict"], "FAIL");
    assert_eq!(v["cycle"]["model"], "sonnet");
    let text = p.run_taskie(&["status"]).ok().to_owned();
    assert!(text.contains("#1   FAIL"), "{text}");
}

#[test]
fn status_for_people_fits_80_columns_without_colour_off_a_terminal() {
    let p = status_project().file("task-9.md", &"x".repeat(10));
    let text = p.run_taskie(&["status"]).ok().to_owned();
    assert!(
        !text.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
    for part in [
        "Plan      p",
        "Phase     code-review → post-code-review",
        "Cycle     code-review of task 2: 2/8 reviews run, post-review owed",
        "clean streak 1/2",
        "Tasks     1/3 finished",
        "[x] 1",
        "[ ] 2",
        "← current",
        "task-2-code-review-2.md",
    ] {
        assert!(text.contains(part), "{part:?} missing from:\n{text}");
    }
}

#[test]
fn status_shows_problems_instead_of_failing() {
    let p = Project::new()
        .plan("p")
        .state(json!({"max_reviews": "lots"}))
        .file("notes.md", "x");
    let v = p.taskie_json(&["status", "--json"]);
    assert!(
        v["state_error"].as_str().unwrap().contains("max_reviews"),
        "{v:#}"
    );
    assert_eq!(v["errors"], json!(["Invalid filename: notes.md"]));
    let text = p.run_taskie(&["status"]).ok().to_owned();
    assert!(text.contains("Invalid filename: notes.md"), "{text}");
    assert!(text.contains("taskie state set max_reviews=8"), "{text}");
}

#[test]
fn status_without_state_json_suggests_init() {
    let p = Project::new().plan("p").tasks(&[(1, "pending")]);
    let text = p.run_taskie(&["status"]).ok().to_owned();
    assert!(text.contains("taskie init p"), "{text}");
    assert_eq!(p.taskie_json(&["status", "--json"])["state"], Value::Null);
}

// ---- validate ----

#[test]
fn validate_prints_ok_for_a_valid_plan() {
    let p = status_project();
    let out = p.run_taskie(&["validate"]).ok().to_owned();
    assert!(out.starts_with("ok: plan 'p'"), "{out}");
}

#[test]
fn validate_prints_each_error_on_its_own_line_and_exits_1() {
    let p = Project::new()
        .plan("p")
        .file("notes.md", "x")
        .file("plan-review-2.md", "x")
        .file("scratch.txt", "x");
    let run = p.run_taskie(&["validate", "--plan", "p"]);
    let err = run.fails_with(1);
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [
            "Invalid filename: notes.md",
            "Invalid file in plan directory: scratch.txt (only .md files, state.json and the ledgers spend.json and \
             findings.json allowed)",
        ]
    );
    assert!(err.contains("2 structure errors"), "{err}");
    assert_eq!(err.lines().count(), 1);
}

// ---- init ----

#[test]
fn init_creates_the_state_of_a_new_plan() {
    let p = Project::new().plan("p");
    let out = p.run_taskie(&["init", "p"]).ok().to_owned();
    assert!(out.contains(".taskie/plans/p/state.json"), "{out}");
    assert_eq!(
        p.state_json(),
        json!({"max_reviews": 8, "current_task": null, "phase": "new-plan",
               "next_phase": "plan-review", "phase_iteration": 0, "review_model": "opus",
               "consecutive_clean": 0, "tdd": false})
    );
    assert!(p.read("state.json").ends_with("}\n"));
    assert!(p.root().join(".taskie/locks").is_dir());
}

#[test]
fn init_takes_max_reviews_and_tdd() {
    let p = Project::new().plan("p");
    p.run_taskie(&["init", "p", "--max-reviews", "3", "--tdd"])
        .ok();
    let s = p.state_json();
    assert_eq!(
        (s["max_reviews"].clone(), s["tdd"].clone()),
        (json!(3), json!(true))
    );
}

#[test]
fn init_refuses_to_overwrite_without_force() {
    let p = Project::new()
        .plan("p")
        .state(json!({"phase": "complete-task", "next_phase": "code-review", "current_task": 4}));
    let before = p.state_bytes();
    let err = p.run_taskie(&["init", "p"]).fails_with(1).to_owned();
    assert!(err.contains("already exists"), "{err}");
    assert!(err.contains("--force"), "{err}");
    assert_eq!(p.state_bytes(), before);
    p.run_taskie(&["init", "p", "--force"]).ok();
    assert_eq!(p.state_json()["phase"], "new-plan");
}

#[test]
fn init_needs_the_plan_md() {
    let p = Project::new().plan("p");
    std::fs::create_dir_all(p.root().join(".taskie/plans/other")).unwrap();
    let err = p.run_taskie(&["init", "other"]).fails_with(1).to_owned();
    assert!(
        err.contains(".taskie/plans/other/plan.md does not exist"),
        "{err}"
    );
    assert!(!p.root().join(".taskie/plans/other/state.json").exists());
}

#[test]
fn init_rejects_a_bad_plan_id_as_a_usage_error() {
    let p = Project::new().plan("p");
    p.run_taskie(&["init", "../p"]).fails_with(2);
    p.run_taskie(&["status", "--plan", "a/b"]).fails_with(2);
}

// ---- state get / set ----

#[test]
fn state_get_prints_every_field_or_one_value() {
    let p = Project::new().plan("p").state(code_cycle());
    let v = p.taskie_json(&["state", "get"]);
    assert_eq!(v["phase"], "code-review");
    assert_eq!(v["review_failures"], 0, "defaults are filled in");
    assert_eq!(
        v.as_object().unwrap().len(),
        16,
        "the 11 of SPEC §3, the 3 of §18 and the 2 of §22"
    );
    assert_eq!(p.run_taskie(&["state", "get", "tdd"]).ok(), "false\n");
    assert_eq!(
        p.run_taskie(&["state", "get", "phase"]).ok(),
        "code-review\n"
    );
    assert_eq!(
        p.run_taskie(&["state", "get", "current_task", "--plan", "p"])
            .ok(),
        "2\n"
    );
    let err = p
        .run_taskie(&["state", "get", "bogus"])
        .fails_with(1)
        .to_owned();
    assert!(err.contains("max_reviews"), "{err}");
}

#[test]
fn state_set_changes_several_fields_and_keeps_the_rest() {
    let mut s = code_cycle();
    s["zzz"] = json!({"keep": [1, 2]});
    let p = Project::new().plan("p").state(s);
    let out = p
        .run_taskie(&[
            "state",
            "set",
            "max_reviews=10",
            "review_failures=0",
            "current_task=null",
        ])
        .ok()
        .to_owned();
    assert!(out.contains("max_reviews: 8 → 10"), "{out}");
    let s = p.state_json();
    assert_eq!(s["max_reviews"], 10);
    assert_eq!(s["review_failures"], 0);
    assert_eq!(s["current_task"], Value::Null);
    assert_eq!(s["zzz"], json!({"keep": [1, 2]}));
    let text = p.read("state.json");
    let keys: Vec<String> = serde_json::from_str::<serde_json::Map<String, Value>>(&text)
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys[0], "max_reviews");
    assert_eq!(keys[8], "zzz", "unknown fields keep their place");
}

#[test]
fn state_set_with_any_invalid_value_writes_nothing() {
    let p = Project::new().plan("p").state(code_cycle());
    let before = p.state_bytes();
    for args in [
        &["state", "set", "max_reviews=lots"][..],
        &["state", "set", "max_reviews=-1"],
        &["state", "set", "tdd=yes"],
        &["state", "set", "current_task=1.5"],
        &["state", "set", "next_phase=bogus"],
        &["state", "set", "review_model=op us"],
        &["state", "set", "clean_reviews_required=0"],
        &["state", "set", "max_reviews=3", "tdd=yes"],
        &["state", "set", "nope=1"],
    ] {
        let err = p.run_taskie(args).fails_with(1).to_owned();
        assert!(
            err.contains("nothing was changed in .taskie/plans/p/state.json"),
            "{err}"
        );
        assert_eq!(p.state_bytes(), before, "{args:?}");
    }
    let err = p.run_taskie(&["state", "set", "tdd=yes"]).stderr;
    assert!(err.contains("expected true or false"), "{err}");
}

#[test]
fn state_set_without_an_assignment_is_a_usage_error() {
    let p = Project::new().plan("p").state(code_cycle());
    p.run_taskie(&["state", "set", "max_reviews"]).fails_with(2);
    p.run_taskie(&["state", "set"]).fails_with(2);
}

#[test]
fn state_set_without_state_json_says_to_run_init() {
    let p = Project::new().plan("p");
    let err = p
        .run_taskie(&["state", "set", "max_reviews=3"])
        .fails_with(1)
        .to_owned();
    assert!(err.contains("taskie init p"), "{err}");
    assert!(!p.exists("state.json"));
}

#[test]
fn state_set_repairs_a_state_error() {
    let p = Project::new()
        .plan("p")
        .state(json!({"max_reviews": "lots", "phase_iteration": "2", "next_phase": "plan-review"}));
    p.run_taskie(&["state", "set", "max_reviews=8"]).ok();
    let s = p.state_json();
    assert_eq!(s["max_reviews"], 8);
    assert_eq!(s["phase_iteration"], 2, "written back as a number");
    p.run_taskie(&["continue-plan"]).ok();
}

// ---- plan selection, subdirectories, exit statuses ----

#[test]
fn every_command_works_from_a_subdirectory() {
    let p = status_project();
    let v: Value =
        serde_json::from_str(p.run_taskie_in("src/deep", &["status", "--json"]).ok()).unwrap();
    assert_eq!(v["plan"], "p");
    let v: Value = serde_json::from_str(
        p.run_taskie_in("src/deep", &["continue-plan", "--json"])
            .ok(),
    )
    .unwrap();
    assert_eq!(v["action"], "post-code-review");
    p.run_taskie_in("src", &["validate"]).ok();
    p.run_taskie_in("src", &["state", "set", "max_reviews=9"])
        .ok();
    assert_eq!(p.state_json()["max_reviews"], 9);
    p.run_taskie_in("src", &["mark", "code-review"])
        .fails_with(1);
}

#[test]
fn plan_flag_and_taskie_plan_choose_among_several_plans() {
    let p = Project::new()
        .plan("alpha")
        .state(crate::support::due("plan-review"))
        .plan("beta");
    assert_eq!(p.taskie_json(&["status", "--json"])["plan"], "beta");
    assert_eq!(
        p.taskie_json(&["status", "--json", "--plan", "alpha"])["plan"],
        "alpha"
    );
    let p = p.env("TASKIE_PLAN", "alpha");
    assert_eq!(p.taskie_json(&["status", "--json"])["plan"], "alpha");
    // A bare subcommand (parsed without clap) reads it as clap does.
    assert!(
        p.run_taskie(&["validate"]).ok().contains("'alpha'"),
        "TASKIE_PLAN chooses the plan of a bare subcommand"
    );
    assert_eq!(
        p.taskie_json(&["status", "--json", "--plan", "beta"])["plan"],
        "beta",
        "--plan wins over TASKIE_PLAN"
    );
}

#[test]
fn a_taskie_plan_that_is_not_a_plan_id_is_refused_as_a_bad_plan_flag_is() {
    let p = Project::new().plan("p").env("TASKIE_PLAN", "../p");
    for args in [&["status"][..], &["status", "--json"], &["validate"]] {
        let err = p.run_taskie(args).fails_with(2).to_owned();
        assert!(
            err.contains("'../p'") && err.contains("plan id"),
            "{args:?}: {err}"
        );
    }
    // The hook never refuses: it allows the stop and says why it chose no plan.
    let answer = p.stop().answer();
    assert!(answer.get("decision").is_none(), "{answer}");
    assert!(answer.to_string().contains("../p"), "{answer}");
}

#[test]
fn a_missing_plan_or_project_is_an_error_with_exit_1() {
    let p = Project::new();
    let err = p.run_taskie(&["status"]).fails_with(1).to_owned();
    assert!(err.contains("no .taskie directory"), "{err}");
    let p = Project::new().plan("p");
    let err = p
        .run_taskie(&["status", "--plan", "nope"])
        .fails_with(1)
        .to_owned();
    assert!(err.contains("\"nope\""), "{err}");
    assert!(err.starts_with("taskie: "), "{err}");
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let p = Project::new().plan("p");
    p.run_taskie(&["frobnicate"]).fails_with(2);
    p.run_taskie(&["status", "--bogus"]).fails_with(2);
    p.run_taskie(&["init"]).fails_with(2);
    p.run_taskie(&["init", "p", "--max-reviews", "-1"])
        .fails_with(2);
    let help = p.run_taskie(&["--help"]).ok().to_owned();
    for cmd in [
        "continue-plan",
        "status",
        "validate",
        "init",
        "mark",
        "state",
        "advance",
        "hook",
    ] {
        assert!(help.contains(cmd), "{cmd} missing from --help");
    }
}

#[test]
fn the_command_forms_used_by_the_workflow_prompts_parse() {
    let p = Project::new()
        .plan("p")
        .tasks(&[(1, "pending")])
        .state(crate::support::due("plan-review"));
    for args in [
        &["continue-plan"][..],
        &["continue-plan", "--plan", "p"],
        &["status"],
        &["status", "--plan", "p"],
        &["validate"],
        &["validate", "--plan", "p"],
        &["state", "get"],
        &["state", "get", "tdd"],
        &["state", "set", "max_reviews=10"],
        &["state", "set", "review_failures=0"],
        &["state", "set", "--plan", "p", "max_reviews=12"],
        &["state", "set", "--plan", "p", "review_failures=0"],
        &["advance", "--plan", "p"],
        &["mark", "create-tasks", "--plan", "p"],
        &["mark", "continue-task", "--plan", "p"],
        &["mark", "complete-task", "--task", "1", "--plan", "p"],
        &["mark", "add-task", "--task", "1", "--plan", "p"],
        &["init", "p", "--max-reviews", "4", "--tdd", "--force"],
    ] {
        let run = p.run_taskie(args);
        assert_ne!(run.code, Some(2), "{args:?} must parse: {}", run.stderr);
    }
}

/// Runs `taskie status` on a pseudo-terminal through util-linux `script`, when present.
fn status_on_a_terminal(p: &Project, no_color: Option<&str>) -> Option<String> {
    let script = std::path::Path::new("/usr/bin/script");
    if !script.exists() {
        return None;
    }
    let taskie = assert_cmd::cargo::cargo_bin("taskie");
    let mut cmd = std::process::Command::new(script);
    cmd.args(["-qec", &format!("{} status", taskie.display()), "/dev/null"])
        .current_dir(p.root())
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null());
    if let Some(v) = no_color {
        cmd.env("NO_COLOR", v);
    }
    let out = cmd.output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn status_is_coloured_on_a_terminal_unless_no_color_is_set() {
    let p = status_project();
    let Some(coloured) = status_on_a_terminal(&p, None) else {
        return;
    };
    assert!(coloured.contains("\x1b["), "{coloured:?}");
    let plain = status_on_a_terminal(&p, Some("1")).unwrap();
    assert!(plain.contains("Tasks"), "{plain:?}");
    assert!(!plain.contains('\x1b'), "{plain:?}");
}

#[test]
fn status_continue_plan_and_mark_cope_with_the_largest_iteration() {
    let max = u64::MAX;
    let p = Project::new()
        .plan("p")
        .file(&format!("plan-review-{max}.md"), "VERDICT: FAIL\n")
        .file(&format!("plan-post-review-{max}.md"), "done\n")
        .state(serde_json::json!({
            "phase": "plan-review", "next_phase": "post-plan-review",
            "phase_iteration": max, "max_reviews": max}));
    let status = p.taskie(&["status", "--json"]).output().unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let mark = p.taskie(&["mark", "post-plan-review"]).output().unwrap();
    assert!(
        mark.status.success(),
        "{}",
        String::from_utf8_lossy(&mark.stderr)
    );
    let route = p.taskie(&["continue-plan", "--json"]).output().unwrap();
    for out in [&status, &route, &mark] {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && out.status.code() != Some(101),
            "{stderr}"
        );
    }
}

// ---- a reader that leaves early, file modes ----

/// Runs `cmd` with stdout a pipe whose reading end is already closed, as in
/// `taskie status | head -1` once head has gone: every write fails with EPIPE.
fn with_closed_stdout(cmd: assert_cmd::Command) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    // assert_cmd always captures stdout, so the same command is rebuilt on std's.
    let mut std_cmd = std::process::Command::new(cmd.get_program());
    std_cmd.args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => std_cmd.env(k, v),
            None => std_cmd.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        std_cmd.current_dir(dir);
    }
    std_cmd
        .stdin(std::process::Stdio::null())
        .stdout(writer)
        .output()
        .unwrap()
}

#[test]
fn a_reader_that_leaves_early_is_not_an_error() {
    let p = status_project();
    for args in [
        &["status"][..],
        &["status", "--json"],
        &["continue-plan"],
        &["state", "get"],
    ] {
        let out = with_closed_stdout(p.taskie(args));
        assert_eq!(out.status.code(), Some(0), "taskie {args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "taskie {args:?}");
    }
    let mut hook = p.hook_command();
    hook.args(["--dry-run", "--cwd"]).arg(p.root());
    let out = with_closed_stdout(hook);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the hook exits 0 whatever happens"
    );
}

#[test]
fn a_real_error_still_fails_when_stdout_is_closed() {
    let p = status_project();
    let out = with_closed_stdout(p.taskie(&["status", "--plan", "nope"]));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn writing_state_json_keeps_its_permission_bits() {
    use std::os::unix::fs::PermissionsExt;
    let p = status_project();
    let path = p.plan_dir().join("state.json");
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    for bits in [0o644, 0o640] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(bits)).unwrap();
        p.taskie(&["state", "set", &format!("max_reviews={}", bits % 7 + 3)])
            .assert()
            .success();
        assert_eq!(mode(&path), bits, "{bits:o}");
    }
}

// ---------------------------------------------------------------------------
// Suggestions (did you mean …) and misspelt fields.

#[test]
fn a_misspelt_field_gets_a_suggestion_instead_of_the_whole_list() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let err = p
        .run_taskie(&["state", "set", "max_review=3"])
        .fails_with(1)
        .to_string();
    assert!(err.contains("did you mean \"max_reviews\"?"), "{err}");
    assert!(!err.contains("clean_reviews_required"), "no list: {err}");
}

/// A hand-edited `"max_review": 6` would be ignored silently; it is reported instead, by
/// status and by the hook, which runs no review until it is fixed.
#[test]
fn a_misspelt_key_in_state_json_is_reported_not_ignored() {
    let mut state = due("plan-review");
    state["max_review"] = json!(6);
    let p = Project::new().plan("p").state(state);
    let status = p.run_taskie(&["status"]).ok().to_string();
    let status = status.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        status.contains("\"max_review\", which is not a field"),
        "{status}"
    );
    assert!(status.contains("did you mean \"max_reviews\"?"), "{status}");
    // validate says it too, in the same words (one rule), and fails.
    let validate = p.run_taskie(&["validate"]).fails_with(1).to_string();
    assert!(
        validate.contains("\"max_review\", which is not a field (did you mean \"max_reviews\"?)"),
        "{validate}"
    );
    let msg = p.stop().message();
    assert!(msg.contains("max_review"), "{msg}");
    assert_eq!(p.reviewer_calls(), 0);
}

#[test]
fn an_unknown_plan_lists_the_plans_that_exist_with_a_suggestion() {
    let p = Project::new().plan("add-search").plan("fix-login");
    let err = p
        .run_taskie(&["status", "--plan", "add-serch"])
        .fails_with(1)
        .to_string();
    assert!(
        err.contains("the plans are: add-search, fix-login")
            && err.contains("did you mean \"add-search\"?"),
        "{err}"
    );
}

#[test]
fn the_dry_run_command_line_is_shell_quoted_so_it_can_be_run() {
    let p = Project::new().plan("p").state(due("plan-review"));
    let out = p.run_taskie(&["hook", "--dry-run"]).ok().to_string();
    let line = out
        .lines()
        .find(|l| l.starts_with("command:"))
        .expect("a command line");
    assert!(
        line.contains("--json-schema '{\"type\":\"object\""),
        "{line}"
    );
}
