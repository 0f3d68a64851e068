//! SPEC §18: reviewer kinds (claude, codex, gemini), alternate and panel modes, what
//! reviews cost, and the budget — against the real `taskie-hook` and `taskie` with fake
//! reviewer programs that have the real CLIs' argv and output shapes.

use crate::support::vendors::Vendor;
use crate::support::{Fake, Project, Shape, due};
use serde_json::{Value, json};

/// The strict answer schema codex is given (one home: `reviewer::result`).
fn codex_schema() -> String {
    taskie::reviewer::result::answer_schema(true)
}

/// A plan whose plan review is due, with these extra state fields.
fn plan_review(extra: Value) -> Project {
    let mut state = due("plan-review");
    for (k, v) in extra.as_object().unwrap() {
        state[k] = v.clone();
    }
    Project::new().plan("p").state(state)
}

/// The agent's post-review of review `n`, so the next stop runs review n+1.
fn post_review(p: &Project, n: u64) {
    std::fs::write(
        p.plan_dir().join(format!("plan-post-review-{n}.md")),
        "Addressed.\n",
    )
    .unwrap();
}

fn last_line(text: &str) -> &str {
    text.trim_end().lines().last().unwrap_or("")
}

#[test]
fn without_reviewers_the_claude_reviewer_runs_as_before_and_its_spend_is_logged() {
    let p = plan_review(json!({})).reviewer(&Fake::pass().shape(crate::support::Shape::Raw(
        r#"{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.25,
            "num_turns":4,"duration_ms":900,"usage":{"input_tokens":321,"output_tokens":45},
            "structured_output":{"verdict":"PASS"}}"#,
    )));
    assert!(
        p.stop().is_block(),
        "one PASS of two: the agent owes a post-review"
    );
    let args = p.reviewer_args();
    assert_eq!(args[..3], ["--print", "--model", "opus"]);
    assert!(
        !args.iter().any(|a| a == "--max-budget-usd"),
        "no budget, no cap"
    );
    let e = p.last_event();
    assert_eq!(e["model"], "opus");
    assert_eq!(
        (
            &e["reviews"],
            &e["cost_usd"],
            &e["input_tokens"],
            &e["output_tokens"],
            &e["num_turns"]
        ),
        (&json!(1), &json!(0.25), &json!(321), &json!(45), &json!(4))
    );
    assert!(e["reviewer_ms"].as_u64().is_some(), "{e}");
    assert!(e.get("panel").is_none(), "{e}");
    assert_eq!(p.vendor_calls("codex") + p.vendor_calls("gemini"), 0);
}

/// SPEC §18: an amount that is not a finite number ≥ 0 is skipped, never the review it
/// came with (before: the whole result was unreadable, the review a failure, its cost lost).
#[test]
fn odd_amounts_in_a_claude_result_are_skipped_and_the_review_and_its_cost_kept() {
    let p = plan_review(json!({})).reviewer(&Fake::fail().shape(crate::support::Shape::Raw(
        r#"{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.25,
            "num_turns":"3","usage":{"input_tokens":-5,"output_tokens":2.5},
            "structured_output":{"verdict":"FAIL","summary":"One problem.","findings":["fix X"]}}"#,
    )));
    let run = p.stop();
    assert!(run.is_block(), "the review stands: {}", run.message());
    assert!(run.reason().contains("fix X"), "{}", run.reason());
    let s = p.state_json();
    assert!(s.get("review_failures").is_none_or(|f| f == 0), "{s}");
    let e = p.last_event();
    assert_eq!(
        (&e["verdict"], &e["cost_usd"]),
        (&json!("FAIL"), &json!(0.25))
    );
    for skipped in ["num_turns", "input_tokens", "output_tokens"] {
        assert!(e.get(skipped).is_none(), "{skipped}: {e}");
    }
    let v = p.taskie_json(&["status", "--json"]);
    assert_eq!(
        (
            &v["spend"]["plan"]["reviews"],
            &v["spend"]["plan"]["cost_usd"]
        ),
        (&json!(1), &json!(0.25)),
        "{v}"
    );
}

#[test]
fn alternate_mode_runs_claude_then_codex_by_iteration_and_codex_gets_its_documented_command() {
    let p = plan_review(json!({"reviewers": ["claude:opus", "codex:gpt-5-codex"]}))
        .codex(&Vendor::pass());
    assert_eq!(
        p.taskie_json(&["status", "--json"])["cycle"]["model"],
        "claude:opus"
    );
    assert!(p.stop().is_block());
    assert_eq!(
        p.taskie_json(&["status", "--json"])["cycle"]["model"],
        "codex:gpt-5-codex",
        "status names the next review's reviewer"
    );
    assert_eq!((p.reviewer_calls(), p.vendor_calls("codex")), (1, 0));
    assert_eq!(p.last_event()["model"], "claude:opus");
    post_review(&p, 1);

    let answer = p.stop().answer();
    assert_eq!((p.reviewer_calls(), p.vendor_calls("codex")), (1, 1));
    assert!(
        answer["systemMessage"]
            .as_str()
            .unwrap()
            .contains("2 clean reviews"),
        "{answer}"
    );
    assert_eq!(p.state_json()["next_phase"], "create-tasks");
    let args = p.vendor_args("codex");
    let schema_path = p.logs().join("codex-output-schema.json");
    assert_eq!(
        args,
        [
            "exec",
            "--json",
            "--output-schema",
            schema_path.to_str().unwrap(),
            "-m",
            "gpt-5-codex",
            "--sandbox",
            "read-only",
            "-c",
            "approval_policy=\"never\"",
            "--skip-git-repo-check",
            "--ephemeral",
            "--color",
            "never",
            // The prompt is read from stdin.
            "-"
        ]
    );
    let prompt = p.reviewer_saw("codex-stdin");
    assert!(prompt.contains("read-only sandbox"), "{prompt}");
    assert!(!prompt.contains("Write your review to exactly this file"));
    assert_eq!(
        std::fs::read_to_string(p.reviewer_dir().join("codex-schema")).unwrap(),
        codex_schema()
    );
    assert_eq!(p.reviewer_saw("codex-skip"), "1", "the recursion guard");
    // Codex cannot write (read-only sandbox): taskie wrote the review from its answer.
    let review = p.read("plan-review-2.md");
    assert!(
        review.contains("Codex looked at the plan and says PASS."),
        "{review}"
    );
    assert_eq!(last_line(&review), "VERDICT: PASS");
    let e = p.last_event();
    assert_eq!(
        (
            &e["model"],
            &e["verdict_source"],
            &e["input_tokens"],
            &e["output_tokens"],
            &e["num_turns"]
        ),
        (
            &json!("codex:gpt-5-codex"),
            &json!("structured_output"),
            &json!(1234),
            &json!(56),
            &json!(1)
        )
    );
    assert!(e.get("cost_usd").is_none(), "codex reports no cost: {e}");
}

#[test]
fn a_claude_entry_runs_the_claude_reviewer_with_its_model() {
    let p = plan_review(json!({"reviewers": ["claude:sonnet"], "review_model": "opus"}));
    p.stop();
    assert_eq!(p.reviewer_args()[..3], ["--print", "--model", "sonnet"]);
    assert_eq!(p.last_event()["model"], "claude:sonnet");
}

#[test]
fn gemini_reviews_with_its_documented_command_and_its_verdict_line_decides() {
    let p = plan_review(json!({"reviewers": ["gemini:gemini-2.5-pro"]})).gemini(&Vendor::fail());
    let reason = p.stop().reason();
    assert!(reason.contains("plan-review-1.md"), "{reason}");
    let args = p.vendor_args("gemini");
    assert_eq!(
        args,
        [
            // Headless, the prompt read from stdin (before the empty `-p` text).
            "-p",
            "",
            "--output-format",
            "json",
            "-m",
            "gemini-2.5-pro",
            "--skip-trust",
            "--approval-mode",
            "default"
        ]
    );
    assert_eq!(p.reviewer_saw("gemini-skip"), "1");
    let prompt = p.reviewer_saw("gemini-stdin");
    assert!(
        prompt.contains("Do not create or change any file"),
        "{prompt}"
    );
    let review = p.read("plan-review-1.md");
    assert!(review.contains("- Name the config file"), "{review}");
    assert_eq!(last_line(&review), "VERDICT: FAIL");
    assert_eq!(p.state_json()["consecutive_clean"], 0);
    let e = p.last_event();
    assert_eq!(
        (
            &e["verdict"],
            &e["verdict_source"],
            &e["input_tokens"],
            &e["output_tokens"],
            &e["num_turns"]
        ),
        (
            &json!("FAIL"),
            &json!("response"),
            &json!(2345),
            &json!(67),
            &json!(2)
        )
    );
}

#[test]
fn a_vendor_reviewer_that_hits_a_rate_limit_is_a_reviewer_failure_saying_so() {
    let p = plan_review(json!({"reviewers": ["gemini:gemini-2.5-pro"]}))
        .gemini(&Vendor::rate_limited());
    let msg = p.stop().message();
    assert!(msg.contains("rate or usage limit"), "{msg}");
    assert!(
        msg.contains("Resource exhausted: quota (code 429)"),
        "{msg}"
    );
    assert!(msg.contains("retried at the next stop"), "{msg}");
    assert_eq!(p.state_json()["review_failures"], 1);
    assert!(!p.exists("plan-review-1.md"));
    assert_eq!(p.last_event()["reviewer_exit"], 173);
}

#[test]
fn a_vendor_program_that_is_missing_names_its_variable() {
    let p = plan_review(json!({"reviewers": ["codex:gpt-5-codex"]}));
    let msg = p.stop().message();
    assert!(msg.contains("TASKIE_CODEX"), "{msg}");
    assert_eq!(p.state_json()["review_failures"], 1);
    assert!(
        p.last_event().get("reviews").is_none(),
        "nothing ran, nothing spent"
    );
}

#[test]
fn a_passing_panel_of_two_passes_the_cycle_in_one_stop_with_one_merged_review() {
    let p = plan_review(
        json!({"reviewers": ["claude:opus", "codex:gpt-5-codex"], "review_mode": "panel"}),
    )
    .codex(&Vendor::pass());
    let msg = p.stop().message();
    assert!(
        msg.contains("plan-review passed (2 clean reviews in a row)"),
        "{msg}"
    );
    assert_eq!((p.reviewer_calls(), p.vendor_calls("codex")), (1, 1));
    let s = p.state_json();
    assert_eq!(
        (&s["next_phase"], &s["phase_iteration"]),
        (&json!("create-tasks"), &json!(1))
    );
    let review = p.read("plan-review-1.md");
    assert!(review.contains("## Reviewer claude:opus: PASS"), "{review}");
    assert!(
        review.contains("## Reviewer codex:gpt-5-codex: PASS"),
        "{review}"
    );
    assert!(review.contains("Codex looked at the plan"), "{review}");
    assert!(
        review.contains("The error message does not name the file"),
        "claude's section: {review}"
    );
    assert_eq!(last_line(&review), "VERDICT: PASS");
    // Claude wrote its section outside the plan directory, not the review file.
    assert!(!p.reviewer_prompt().contains("plan-review-1.md"));
    let e = p.last_event();
    assert_eq!((&e["reviews"], &e["verdict"]), (&json!(2), &json!("PASS")));
    assert_eq!(e["model"], "claude:opus,codex:gpt-5-codex");
    assert_eq!(e["cost_usd"], 0.01, "only claude reports a cost");
    assert_eq!(e["input_tokens"], 1234);
    let members = e["panel"].as_array().unwrap();
    assert_eq!(members.len(), 2);
    assert_eq!(
        (&members[0]["reviewer"], &members[0]["verdict"]),
        (&json!("claude:opus"), &json!("PASS"))
    );
    assert_eq!(
        (&members[1]["reviewer"], &members[1]["verdict"]),
        (&json!("codex:gpt-5-codex"), &json!("PASS"))
    );
}

#[test]
fn a_panel_with_one_fail_fails_and_blocks_with_the_merged_review() {
    let p = plan_review(
        json!({"reviewers": ["claude:opus", "codex:gpt-5-codex"], "review_mode": "panel"}),
    )
    .codex(&Vendor::fail());
    let reason = p.stop().reason();
    assert!(reason.contains("plan-post-review-1.md"), "{reason}");
    assert!(
        reason.starts_with("A panel of independent reviewers (claude:opus and codex:gpt-5-codex,"),
        "each member named, not one \"claude:opus,codex:…\" session: {reason}"
    );
    assert!(!reason.contains("claude:opus,codex"), "{reason}");
    assert_eq!(p.state_json()["consecutive_clean"], 0);
    let review = p.read("plan-review-1.md");
    assert!(
        review.contains("## Reviewer codex:gpt-5-codex: FAIL"),
        "{review}"
    );
    assert!(
        review.contains("The parser drops the last line"),
        "{review}"
    );
    assert_eq!(last_line(&review), "VERDICT: FAIL");
    assert_eq!(
        p.last_event()["verdict_source"],
        "panel(claude:opus=PASS,codex:gpt-5-codex=FAIL)"
    );
}

#[test]
fn an_unavailable_panel_member_is_left_out_and_named_and_the_panel_weighs_only_who_reviewed() {
    let p = plan_review(
        json!({"reviewers": ["claude:opus", "codex:gpt-5-codex"], "review_mode": "panel"}),
    )
    .codex(&Vendor::rate_limited());
    let run = p.stop();
    assert!(
        run.is_block(),
        "claude reviewed: the agent owes a post-review"
    );
    let reason = run.reason();
    assert!(
        reason.contains("Failover: claude:opus reviewed; codex:gpt-5-codex was unavailable (reported an error: hit a rate or usage limit (exceeded retry limit, last status: 429 Too Many Requests))"),
        "{reason}"
    );
    assert!(!reason.contains("retried at the next stop"), "{reason}");
    let review = p.read("plan-review-1.md");
    assert!(
        review.starts_with("> Failover: claude:opus reviewed; codex:gpt-5-codex was unavailable"),
        "{review}"
    );
    let s = p.state_json();
    assert_eq!(
        (&s["consecutive_clean"], &s["phase_iteration"]),
        (&json!(1), &json!(1)),
        "a PASS of one reviewer counts once"
    );
    assert!(s.get("review_failures").is_none_or(|f| f == 0), "{s}");
    let e = p.last_event();
    assert_eq!(
        (&e["path"], &e["reviews"], &e["reviewed_by"]),
        (&json!("review-blocked"), &json!(1), &json!(["claude:opus"])),
        "the member that was out ran no review (SPEC §22)"
    );
    assert_eq!(e["unavailable"][0]["reviewer"], "codex:gpt-5-codex");
    assert_eq!(e["panel"][1]["verdict"], "failed");
    assert_eq!(e["cost_usd"], 0.01, "the member that ran still cost money");
    // The block names who reviewed, not the panel as configured.
    assert!(
        reason.starts_with("An independent reviewer (a fresh claude:opus session"),
        "{reason}"
    );
    assert_eq!(p.reviews_and_failed_attempts("cycle"), (1, 1));
}

#[test]
fn a_panel_of_three_with_one_member_out_counts_two_reviews_and_names_the_two() {
    let p = plan_review(json!({
        "reviewers": ["claude:opus", "codex:gpt-5-codex", "gemini:gemini-2.5-pro"],
        "review_mode": "panel"
    }))
    .codex(&Vendor::fail())
    .gemini(&Vendor::rate_limited());
    let run = p.stop();
    let reason = run.reason();
    assert!(
        reason.starts_with(
            "A panel of independent reviewers (claude:opus and codex:gpt-5-codex, each a fresh session"
        ),
        "{reason}"
    );
    assert!(
        reason.contains("Failover: claude:opus and codex:gpt-5-codex reviewed; gemini:gemini-2.5-pro was unavailable"),
        "{reason}"
    );
    let e = p.last_event();
    assert_eq!(
        (&e["reviews"], &e["reviewed_by"]),
        (&json!(2), &json!(["claude:opus", "codex:gpt-5-codex"]))
    );
    assert_eq!(p.reviews_and_failed_attempts("plan"), (2, 1));
}

#[test]
fn a_panel_with_every_member_unavailable_is_a_reviewer_failure_naming_each() {
    let p = plan_review(
        json!({"reviewers": ["claude:opus", "codex:gpt-5-codex"], "review_mode": "panel"}),
    )
    .reviewer(
        &crate::support::Fake::fail()
            .shape(Shape::ApiError {
                status: 500,
                message: "scripted outage",
            })
            .exit(1),
    )
    .codex(&Vendor::rate_limited());
    let msg = p.stop().message();
    assert!(
        msg.contains("every reviewer was unavailable: claude:opus")
            && msg.contains("scripted outage")
            && msg.contains("codex:gpt-5-codex reported an error: hit a rate or usage limit"),
        "{msg}"
    );
    let s = p.state_json();
    assert_eq!(
        (&s["review_failures"], &s["phase_iteration"]),
        (&json!(1), &json!(0))
    );
    assert!(!p.exists("plan-review-1.md"));
    assert_eq!(p.last_event()["path"], "reviewer-failed");
}

#[test]
fn panel_reviewers_run_at_the_same_time() {
    let p = plan_review(json!({"reviewers": ["codex:gpt-5-codex", "gemini:gemini-2.5-pro"], "review_mode": "panel"}))
        .codex(&Vendor::pass().sleep(1.0))
        .gemini(&Vendor::pass().sleep(1.0));
    p.stop().message();
    let (cs, ce) = (
        p.vendor_stamp("codex", "start"),
        p.vendor_stamp("codex", "end"),
    );
    let (gs, ge) = (
        p.vendor_stamp("gemini", "start"),
        p.vendor_stamp("gemini", "end"),
    );
    // In sequence, one would start only after the other ended.
    assert!(
        cs.max(gs) < ce.min(ge),
        "both started before either ended: codex {cs}..{ce}, gemini {gs}..{ge}"
    );
}

#[test]
fn a_spent_budget_hard_stops_the_next_review_and_claude_gets_what_remains() {
    let p = plan_review(json!({"max_cost_usd": 0.015})).reviewer(&Fake::fail());
    assert!(p.stop().is_block());
    let args = p.reviewer_args();
    let at = args
        .iter()
        .position(|a| a == "--max-budget-usd")
        .expect("the cap");
    assert_eq!(args[at + 1], "0.015");
    post_review(&p, 1);
    assert!(p.stop().is_block());
    let args = p.reviewer_args();
    let at = args.iter().position(|a| a == "--max-budget-usd").unwrap();
    assert_eq!(
        args[at + 1],
        "0.005",
        "0.015 less the 0.01 the first review cost"
    );
    post_review(&p, 2);

    let before = p.state_bytes();
    let msg = p.stop().message();
    assert_eq!(p.reviewer_calls(), 2, "no review ran");
    assert_eq!(p.state_bytes(), before, "state.json unchanged");
    // Money as people read it: two decimals (SPEC §18).
    assert!(msg.contains("$0.02 of its $0.01 budget"), "{msg}");
    assert!(
        msg.contains("taskie state set --plan p max_cost_usd="),
        "{msg}"
    );
    assert!(msg.contains("taskie advance --plan p"), "{msg}");
    let diag: Value = serde_json::from_str(
        &std::fs::read_to_string(p.logs().join("p-diagnostics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(diag["stop_reason"], "budget_exhausted");
    assert_eq!(diag["spent_usd"], 0.02);
    let status = p.taskie_json(&["status", "--json"]);
    assert_eq!(status["cycle"]["status"], "hard-stop");
    assert_eq!(status["hard_stop"]["stop_reason"], "budget_exhausted");
    let route = p.run_taskie(&["continue-plan"]);
    assert!(
        route.stdout.contains("max_cost_usd=") && route.stdout.contains("taskie advance"),
        "continue-plan asks the human with the resolving commands: {}",
        route.stdout
    );

    p.run_taskie(&["state", "set", "max_cost_usd=1"]).ok();
    assert!(p.stop().is_block(), "a raised budget lets review #3 run");
    assert_eq!(p.reviewer_calls(), 3);
}

#[test]
fn status_shows_the_cycles_and_the_plans_reviews_time_and_cost() {
    let p = Project::new().plan("p").state(due("plan-review"));
    p.stop();
    post_review(&p, 1);
    p.stop();
    let v = p.taskie_json(&["status", "--json"]);
    assert_eq!(v["spend"]["plan"]["reviews"], 2, "{v}");
    assert_eq!(v["spend"]["plan"]["cost_usd"], 0.02);
    assert!(v["spend"]["plan"]["review_seconds"].as_f64().unwrap() > 0.0);
    assert_eq!(
        v["spend"]["cycle"]["reviews"], 2,
        "the cycle that just passed: {v}"
    );

    // The next cycle starts empty; the plan keeps its total.
    p.run_taskie(&[
        "state",
        "set",
        "next_phase=plan-review",
        "phase_iteration=0",
        "consecutive_clean=0",
    ])
    .ok();
    let v = p.taskie_json(&["status", "--json"]);
    assert_eq!(
        (
            &v["spend"]["cycle"]["reviews"],
            &v["spend"]["plan"]["reviews"]
        ),
        (&json!(0), &json!(2))
    );
    let text = p.run_taskie(&["status"]);
    let line = text
        .ok()
        .lines()
        .find(|l| l.starts_with("Spend"))
        .expect("a Spend line");
    assert!(line.contains("cycle 0 reviews"), "{line}");
    assert!(line.contains("plan 2 reviews"), "{line}");
    assert!(line.contains("$0.02"), "{line}");
}

#[test]
fn init_and_state_set_take_reviewers_mode_and_budget_and_refuse_bad_ones_clearly() {
    let p = Project::new().plan("p");
    p.run_taskie(&[
        "init",
        "p",
        "--reviewer",
        "claude:opus",
        "--reviewer",
        "codex:gpt-5-codex",
        "--review-mode",
        "panel",
        "--max-cost-usd",
        "5",
    ])
    .ok();
    let s = p.state_json();
    assert_eq!(s["reviewers"], json!(["claude:opus", "codex:gpt-5-codex"]));
    assert_eq!(
        (&s["review_mode"], &s["max_cost_usd"]),
        (&json!("panel"), &json!(5.0))
    );

    let err = p.run_taskie(&["init", "q", "--reviewer", "gpt:4"]);
    let err = err.fails_with(2);
    assert!(
        err.contains("reviewers") && err.contains("claude, codex, gemini"),
        "{err}"
    );

    p.run_taskie(&["state", "set", r#"reviewers=["gemini:gemini-2.5-pro"]"#])
        .ok();
    assert_eq!(
        p.state_json()["reviewers"],
        json!(["gemini:gemini-2.5-pro"])
    );
    let before = p.state_bytes();
    let run = p.run_taskie(&["state", "set", "reviewers=codex"]);
    assert_ne!(run.code, Some(0));
    assert!(run.stderr.contains("\"reviewers\""), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("reviewers=claude:opus,codex:gpt-5-codex"),
        "the fix: {}",
        run.stderr
    );
    let run = p.run_taskie(&["state", "set", "max_cost_usd=-1"]);
    assert!(run.stderr.contains("max_cost_usd"), "{}", run.stderr);
    assert_eq!(p.state_bytes(), before, "refused sets change nothing");
}

#[test]
fn a_state_json_with_a_bad_reviewer_is_a_state_error_and_nothing_runs() {
    let p = plan_review(json!({"reviewers": ["claude:op us"]}));
    let msg = p.stop().message();
    assert!(msg.contains("\"reviewers\""), "{msg}");
    assert!(msg.contains("taskie state set reviewers="), "{msg}");
    assert_eq!(p.reviewer_calls(), 0);
}

/// A passing panel of two added two clean reviews; when its review file is lost, the
/// rerun must start from the streak before it, not keep one of the two.
#[test]
fn a_lost_panel_review_is_rerun_from_the_streak_before_it() {
    let p = plan_review(json!({
        "phase": "plan-review", "next_phase": "post-plan-review", "phase_iteration": 1,
        "consecutive_clean": 2, "clean_reviews_required": 3,
        "reviewers": ["claude:opus", "codex:gpt-5-codex"], "review_mode": "panel"
    }))
    .codex(&Vendor::pass());
    // No plan-review-1.md: the review was lost, so the hook sets the state back and runs it.
    let run = p.stop();
    assert!(
        run.is_block(),
        "one visible panel is 2 clean reviews, not 3"
    );
    let s = p.state_json();
    assert_eq!(
        (
            &s["next_phase"],
            &s["phase_iteration"],
            &s["consecutive_clean"]
        ),
        (&json!("post-plan-review"), &json!(1), &json!(2)),
        "{s:#}"
    );
}

/// A model name a CLI would read as an option never reaches a command line: refused by
/// `state set` and `init`, and a hand-edited one is a state error the hook runs nothing for.
#[test]
fn a_model_name_starting_with_a_dash_is_refused_everywhere() {
    let p = plan_review(json!({}));
    let err = p
        .run_taskie(&[
            "state",
            "set",
            "reviewers=claude:--dangerously-skip-permissions",
        ])
        .fails_with(1)
        .to_string();
    assert!(
        err.contains("--dangerously-skip-permissions") && err.contains("does not start with \"-\""),
        "{err}"
    );
    let err = p
        .run_taskie(&["state", "set", "review_model=-p"])
        .fails_with(1)
        .to_string();
    assert!(
        err.contains("review_model") && err.contains("taskie state set"),
        "{err}"
    );
    let err = p
        .run_taskie(&["init", "p", "--force", "--reviewer", "codex:-c"])
        .fails_with(2)
        .to_string();
    assert!(err.contains("does not start with \"-\""), "{err}");

    let hand_edited = plan_review(json!({"reviewers": ["claude:--dangerously-skip-permissions"]}));
    let msg = hand_edited.stop().message();
    assert!(
        msg.contains("reviewers") && msg.contains("does not start with"),
        "{msg}"
    );
    assert_eq!(hand_edited.reviewer_calls(), 0);
}

// ---------------------------------------------------------------------------
// The spend ledger (SPEC §18)

/// Writes `.taskie/logs/events.jsonl` as an older taskie (or a hostile hand) left it:
/// one review record of plan `p` per cost.
fn logged_costs(p: &Project, costs: &[&str]) {
    std::fs::create_dir_all(p.logs()).unwrap();
    let lines: Vec<String> = costs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                r#"{{"plan":"p","path":"review-blocked","review":"plan-review","iteration":{},"reviews":1,"cost_usd":{c}}}"#,
                i + 1
            )
        })
        .collect();
    std::fs::write(p.logs().join("events.jsonl"), lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_hostile_log_row_cannot_reopen_a_spent_budget() {
    let p = plan_review(json!({"max_cost_usd": 0.5}));
    logged_costs(&p, &["0.75", "-1e300"]);
    let msg = p.stop().message();
    assert_eq!(p.reviewer_calls(), 0, "the budget is spent: {msg}");
    assert!(msg.contains("have cost $0.75 of its $0.50 budget"), "{msg}");
}

#[test]
fn huge_log_rows_cannot_make_the_spend_infinite_and_the_advice_is_a_command_that_works() {
    let p = plan_review(json!({"max_cost_usd": 5}));
    logged_costs(&p, &["1e308", "1e308"]);
    let v = p.taskie_json(&["status", "--json"]);
    let cost = v["spend"]["plan"]["cost_usd"].as_f64();
    assert!(cost.is_some_and(f64::is_finite), "a number, not null: {v}");
    let msg = p.stop().message();
    assert_eq!(p.reviewer_calls(), 0);
    let command = msg
        .split('`')
        .find(|c| c.contains("max_cost_usd="))
        .expect("a budget command")
        .to_string();
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    p.run_taskie(&args).ok();
}

#[test]
fn the_plans_spend_survives_the_event_log_and_failed_attempts_count_in_cost_only() {
    let p = plan_review(json!({"max_cost_usd": 10}));
    // A failed attempt that was paid for: an error answer with a cost.
    p.set_reviewer(&Fake::pass().shape(Shape::Raw(
        r#"{"type":"result","subtype":"error_during_execution","is_error":true,"result":"API Error: overloaded","total_cost_usd":0.25}"#,
    )));
    p.stop();
    p.set_reviewer(&Fake::fail());
    assert!(p.stop().is_block());
    assert!(p.exists("spend.json"), "the ledger sits beside the state");
    // The log rotates away, or is deleted: the ledger keeps the total.
    std::fs::remove_dir_all(p.logs()).unwrap();
    let v = p.taskie_json(&["status", "--json"]);
    let plan = &v["spend"]["plan"];
    assert_eq!(
        (
            &plan["reviews"],
            &plan["failed_attempts"],
            &plan["cost_usd"]
        ),
        (&json!(1), &json!(1), &json!(0.26)),
        "{v}"
    );
    let text = p.run_taskie(&["status"]).ok().to_string();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("plan 1 review and 1 failed attempt") && text.contains("$0.26 of $10.00"),
        "{text}"
    );
    // And validation accepts the ledger.
    p.run_taskie(&["validate"]).ok();
}

/// A plan an older taskie ran (a log, no ledger, no budget): its first stop builds the
/// ledger from the log once; from then on `taskie status` reads the ledger, not the log
/// (so it costs the same at any log size, and later log lines change nothing).
#[test]
fn a_plan_without_a_ledger_gets_one_at_its_first_stop_and_status_stops_reading_the_log() {
    // No review is due: the stop itself runs no reviewer.
    let p = plan_review(json!({"phase": "plan-review", "next_phase": "create-tasks",
        "phase_iteration": 2, "consecutive_clean": 2}));
    logged_costs(&p, &["0.5", "0.25"]);
    assert!(!p.exists("spend.json"));
    p.stop();
    assert!(p.exists("spend.json"), "built at the first stop");
    logged_costs(&p, &["99", "99"]);
    let v = p.taskie_json(&["status", "--json"]);
    assert_eq!(p.reviewer_calls(), 0);
    assert_eq!(v["spend"]["plan"]["cost_usd"], json!(0.75), "{v}");
}

#[test]
fn init_with_a_zero_budget_says_the_next_stop_is_a_hard_stop() {
    let p = Project::new().plan("p");
    let out = p
        .run_taskie(&["init", "p", "--max-cost-usd", "0"])
        .ok()
        .to_string();
    assert!(!out.contains("runs plan-review #1"), "{out}");
    assert!(
        out.contains("the next stop is a hard stop") && out.contains("$0.00"),
        "{out}"
    );
    let msg = p.stop().message();
    assert!(msg.contains("hard stop"), "{msg}");
    let out = p
        .run_taskie(&["state", "set", "max_cost_usd=-0"])
        .ok()
        .to_string();
    assert!(!out.contains("-0"), "{out}");
    let status = p.run_taskie(&["status"]).ok().to_string();
    assert!(!status.contains("$-0"), "{status}");
}

/// What a stop forced to disk, in order: each finished fsync ("fsync <file>") and each
/// durable rename ("rename <file>"), which test builds trace, after checking the review
/// ran (iteration 1 recorded). The review file and the new state.json are synced at the
/// same time, so those two come in either order: they are returned sorted.
fn fsyncs(p: Project) -> Vec<String> {
    fsyncs_with(p, "trace:fsync")
}

/// [`fsyncs`] with `directives` for the test pause points (they include trace:fsync).
fn fsyncs_with(p: Project, directives: &str) -> Vec<String> {
    let p = p.env("TASKIE_TEST_PAUSE_AT", directives);
    let run = p.run_hook(
        json!({"hook_event_name": "Stop", "stop_hook_active": false, "session_id": "s-fsync"}),
    );
    let _ = run.answer();
    assert_eq!(p.state_json()["phase_iteration"], 1, "{}", run.stderr);
    let mut traced: Vec<String> = run
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("taskie-hook: test "))
        .filter(|l| l.starts_with("fsync ") || l.starts_with("rename "))
        .map(str::to_owned)
        .collect();
    if traced.len() >= 2 {
        traced[..2].sort();
    }
    traced
}

#[test]
fn a_review_forces_only_its_review_file_then_state_json_to_disk() {
    // SPEC §5 step 18: every other write around a review (the writability
    // probe, the session binding, the reviewer log, the spend ledger, the block count)
    // survives a kill by its rename and is not worth an fsync at every review.
    // Both files are on disk before the rename that makes the new state the state.
    let want = [
        "fsync plan-review-1.md",
        "fsync state.json",
        "rename state.json",
        "fsync p",
    ];
    let single = plan_review(json!({"max_cost_usd": 5.0}));
    assert_eq!(fsyncs(single), want);
    let panel = plan_review(
        json!({"reviewers": ["claude:opus", "codex:gpt-5-codex", "gemini:gemini-2.5-pro"],
        "review_mode": "panel", "max_cost_usd": 5.0}),
    )
    .codex(&Vendor::fail())
    .gemini(&Vendor::pass());
    assert_eq!(fsyncs(panel), want);
}

#[test]
fn the_state_is_renamed_only_once_the_review_file_is_on_disk_however_slow_its_sync() {
    // The review file's fsync runs beside the state's own writes; made 300 ms
    // slower, it still finishes before the rename that makes the state point to it.
    let p = plan_review(json!({}));
    let traced = fsyncs_with(p, "trace:fsync,slow:fsync:plan-review-1.md");
    assert_eq!(
        traced,
        [
            "fsync plan-review-1.md",
            "fsync state.json",
            "rename state.json",
            "fsync p"
        ]
    );
}

#[test]
fn a_panel_member_starts_only_once_every_member_is_set_up() {
    // Members used to start each right after its own setup, so a slow setup
    // (here codex's, made 300 ms slower; it writes codex's schema file) started the
    // panel staggered. Claude's fake notes whether codex's setup was done when it started.
    let p = plan_review(
        json!({"reviewers": ["claude:opus", "codex:gpt-5-codex"], "review_mode": "panel"}),
    )
    .reviewer(&Fake::pass().extra(
        "if [ -e .taskie/logs/codex-output-schema.json ]; then echo set; else echo early; fi > \"$here/others\"",
    ))
    .codex(&Vendor::pass())
    .env("TASKIE_TEST_PAUSE_AT", "slow:member-setup:2-codex");
    let msg = p.stop().message();
    assert!(msg.contains("plan-review passed"), "{msg}");
    assert_eq!(p.reviewer_saw("others").trim(), "set");
}

#[test]
fn a_panel_member_whose_run_panics_fails_alone_while_the_others_review() {
    // The first member runs on the hook's own thread, the others on threads of their
    // own: a panic in either kind of member costs that member only.
    for (member, failed, reviewed) in [
        ("1-claude", "claude:opus", "codex:gpt-5-codex"),
        ("2-codex", "codex:gpt-5-codex", "claude:opus"),
    ] {
        let p = plan_review(
            json!({"reviewers": ["claude:opus", "codex:gpt-5-codex"], "review_mode": "panel"}),
        )
        .codex(&Vendor::pass())
        .env(
            "TASKIE_TEST_PAUSE_AT",
            &format!("panic:member-setup:{member}"),
        );
        let reason = p.stop().reason();
        let failover = format!("Failover: {reviewed} reviewed; {failed} was unavailable");
        assert!(reason.contains(&failover), "{member}: {reason}");
        assert!(
            reason.contains("the reviewer's thread failed"),
            "{member}: {reason}"
        );
        assert!(p.exists("plan-review-1.md"), "{member}");
    }
}
