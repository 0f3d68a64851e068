//! SPEC §22: a reviewer's usage limit pauses the plan until it resets, for every reviewer
//! kind; a plain throttle stays a failure; `taskie status` shows the pause and `taskie
//! resume` lifts it. Time is driven with `TASKIE_TEST_NOW`, never by sleeping.

use crate::support::vendors::Vendor;
use crate::support::{Fake, Project, Shape, due};
use serde_json::{Value, json};

/// 2026-11-24T10:00:00Z.
const NOW: i64 = 1_795_514_400;

/// Claude Code's answer when a subscription's 5-hour limit is reached, as the pinned CLI prints it.
const CLAUDE_LIMIT: &str = r#"{"type":"result","subtype":"success","is_error":true,"duration_ms":310,
    "api_error_status":429,"api_error":"usage_limit_reached",
    "result":"You've hit your 5-hour limit · resets 12:14pm (UTC)","total_cost_usd":0}"#;

/// A plain throttle: 429 without the usage-limit claim.
const CLAUDE_THROTTLE: &str = r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429,
    "result":"API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited"}"#;

/// `review_failures`, which is written only once it is not 0.
fn failures(s: &Value) -> u64 {
    s.get("review_failures").map_or(0, |v| v.as_u64().unwrap())
}

fn plan_at(extra: Value, now: i64) -> Project {
    let mut state = due("plan-review");
    for (k, v) in extra.as_object().unwrap() {
        state[k] = v.clone();
    }
    Project::new()
        .plan("p")
        .state(state)
        .env("TASKIE_TEST_NOW", &now.to_string())
        .env("TZ", "UTC")
}

#[test]
fn a_claude_usage_limit_pauses_the_plan_until_the_reset_then_the_review_runs() {
    let mut p =
        plan_at(json!({}), NOW).reviewer(&Fake::fail().shape(Shape::Raw(CLAUDE_LIMIT)).exit(1));
    let run = p.stop();
    assert!(!run.is_block());
    let msg = run.message();
    assert!(
        msg.contains("claude:opus reached its usage limit")
            && msg.contains("resets 12:14pm (UTC)")
            && msg.contains("paused until 2026-11-24 12:15 UTC (in 2 h 15 min)")
            && msg.contains("no failure was counted"),
        "{msg}"
    );
    let s = p.state_json();
    assert_eq!(s["paused_until"], "2026-11-24T12:15:00Z");
    assert_eq!(failures(&s), 0);
    assert_eq!(s["phase_iteration"], 0, "no review was counted");
    assert_eq!(p.last_event()["path"], "paused");

    // Before the reset: no reviewer runs, nothing is written.
    p.set_env("TASKIE_TEST_NOW", &(NOW + 3600).to_string());
    let before = p.state_bytes();
    let msg = p.stop().message();
    assert!(
        msg.contains("paused until 2026-11-24 12:15 UTC (in 1 h 15 min)")
            && msg.contains("No reviewer ran and no failure was counted"),
        "{msg}"
    );
    assert_eq!(p.reviewer_calls(), 1);
    assert_eq!(p.state_bytes(), before);

    // The first stop at or after the reset runs the review.
    p.set_reviewer(&Fake::fail());
    p.set_env("TASKIE_TEST_NOW", &(NOW + 2 * 3600 + 15 * 60).to_string());
    assert!(p.stop().is_block(), "the review ran and failed");
    assert_eq!(p.reviewer_calls(), 2);
    let s = p.state_json();
    assert_eq!(
        (&s["paused_until"], &s["phase_iteration"]),
        (&Value::Null, &json!(1))
    );
}

#[test]
fn a_plain_throttle_is_a_failure_not_a_pause() {
    let p =
        plan_at(json!({}), NOW).reviewer(&Fake::fail().shape(Shape::Raw(CLAUDE_THROTTLE)).exit(1));
    let msg = p.stop().message();
    assert!(
        msg.contains("rate or usage limit") && msg.contains("retried"),
        "{msg}"
    );
    let s = p.state_json();
    assert_eq!(s["review_failures"], 1);
    assert!(s.get("paused_until").is_none_or(Value::is_null), "{s}");
}

#[test]
fn a_usage_limit_without_a_reset_time_is_a_failure() {
    let p = plan_at(json!({}), NOW).reviewer(&Fake::fail().shape(Shape::Raw(
        r#"{"is_error":true,"api_error_status":429,"api_error":"usage_limit_reached","result":"You've hit your limit"}"#,
    )).exit(1));
    p.stop();
    assert_eq!(p.state_json()["review_failures"], 1);
}

#[test]
fn a_codex_usage_limit_pauses_until_the_local_time_it_names() {
    let p = plan_at(json!({"reviewers": ["codex:gpt-5-codex"]}), NOW)
        .env("TZ", "Asia/Kolkata")
        .codex(&Vendor::usage_limit());
    let msg = p.stop().message();
    // 11:27 PM in Kolkata is 17:57 UTC; the pause ends the minute after.
    assert!(
        msg.contains("codex:gpt-5-codex reached its usage limit")
            && msg.contains("paused until 2026-11-24 17:58 UTC"),
        "{msg}"
    );
    let s = p.state_json();
    assert_eq!(
        (&s["paused_until"], failures(&s)),
        (&json!("2026-11-24T17:58:00Z"), 0)
    );
}

#[test]
fn a_gemini_usage_limit_pauses_for_the_suggested_delay() {
    let p = plan_at(json!({"reviewers": ["gemini:gemini-2.5-pro"]}), NOW)
        .gemini(&Vendor::usage_limit());
    let msg = p.stop().message();
    assert!(
        msg.contains("gemini:gemini-2.5-pro reached its usage limit")
            && msg.contains("paused until 2026-11-24 11:00 UTC (in 1 h)"),
        "{msg}"
    );
    assert_eq!(p.state_json()["paused_until"], "2026-11-24T11:00:00Z");
}

#[test]
fn status_shows_the_pause_and_resume_lifts_it_so_the_next_stop_reviews() {
    let p = plan_at(
        json!({"paused_until": "2026-11-24T12:15:00Z", "paused_by": "claude:opus reached its usage limit"}),
        NOW,
    )
    .reviewer(&Fake::fail());
    let text = p
        .run_taskie(&["status"])
        .ok()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        text.contains("paused: a reviewer's usage limit")
            && text.contains(
                "until 2026-11-24 12:15 UTC (in 2 h 15 min) (claude:opus reached its usage limit)"
            )
            && text.contains("taskie resume --plan p"),
        "{text}"
    );
    let j = p.taskie_json(&["status", "--json"]);
    assert_eq!(j["paused"]["until"], "2026-11-24T12:15:00Z");
    assert_eq!(j["cycle"]["status"], "paused");

    p.stop();
    assert_eq!(p.reviewer_calls(), 0, "paused: no reviewer");
    let out = p.run_taskie(&["resume"]).ok().to_string();
    assert!(
        out.contains("Resumed plan 'p'") && out.contains("was paused until"),
        "{out}"
    );
    assert!(p.state_json()["paused_until"].is_null());
    assert!(p.stop().is_block());
    assert_eq!(p.reviewer_calls(), 1);
    let again = p.run_taskie(&["resume"]).ok().to_string();
    assert!(again.contains("is not paused"), "{again}");
}

// ---- failover (SPEC §22) ----

#[test]
fn in_alternate_mode_an_unavailable_reviewers_iteration_goes_to_the_next_kind_and_says_so() {
    let p = plan_at(
        json!({"reviewers": ["claude:opus", "codex:gpt-5-codex"]}),
        NOW,
    )
    .reviewer(
        &Fake::fail()
            .shape(Shape::ApiError {
                status: 500,
                message: "scripted outage",
            })
            .exit(1),
    )
    .codex(&Vendor::fail());
    let run = p.stop();
    assert!(run.is_block(), "codex reviewed and said FAIL");
    let reason = run.reason();
    assert!(
        reason.contains("Failover: codex:gpt-5-codex reviewed; claude:opus was unavailable (reported an error: API Error: 500 scripted outage"),
        "{reason}"
    );
    assert_eq!((p.reviewer_calls(), p.vendor_calls("codex")), (1, 1));
    let review = p.read("plan-review-1.md");
    assert!(
        review.starts_with("> Failover: codex:gpt-5-codex reviewed; claude:opus was unavailable"),
        "{review}"
    );
    assert!(review.trim_end().ends_with("VERDICT: FAIL"), "{review}");
    let s = p.state_json();
    assert_eq!((failures(&s), &s["phase_iteration"]), (0, &json!(1)));
    let e = p.last_event();
    assert_eq!(
        (
            &e["reviewed_by"],
            &e["unavailable"][0]["reviewer"],
            &e["reviews"]
        ),
        (
            &json!(["codex:gpt-5-codex"]),
            &json!("claude:opus"),
            &json!(1)
        ),
        "one review, by codex: claude's run is no review (SPEC §22)"
    );
    // The block names who reviewed, not who was asked and could not.
    assert!(
        reason.starts_with("An independent reviewer (a fresh codex:gpt-5-codex session"),
        "{reason}"
    );
    // The ledger agrees: one review, and claude's run a failed attempt.
    assert_eq!(p.reviews_and_failed_attempts("cycle"), (1, 1));
    assert!(
        p.logs().read_dir().unwrap().flatten().any(|f| f
            .file_name()
            .to_string_lossy()
            .ends_with("-failover-codex.log")),
        "the replacement's own log"
    );
}

#[test]
fn when_every_kind_is_at_its_usage_limit_the_plan_pauses_until_the_first_reset() {
    let p = plan_at(
        json!({"reviewers": ["claude:opus", "codex:gpt-5-codex"]}),
        NOW,
    )
    .reviewer(&Fake::fail().shape(Shape::Raw(CLAUDE_LIMIT)).exit(1))
    .codex(&Vendor::usage_limit());
    let msg = p.stop().message();
    assert!(
        msg.contains("claude:opus reached its usage limit")
            && msg.contains("codex:gpt-5-codex reached its usage limit")
            && msg.contains("paused until 2026-11-24 12:15 UTC"),
        "{msg}"
    );
    let s = p.state_json();
    assert_eq!(
        (&s["paused_until"], failures(&s)),
        (&json!("2026-11-24T12:15:00Z"), 0)
    );
}

#[test]
fn with_one_kind_there_is_no_failover_and_a_failure_is_counted_as_before() {
    let p = plan_at(json!({"reviewers": ["codex:gpt-5-codex", "codex:o3"]}), NOW)
        .codex(&Vendor::rate_limited());
    let msg = p.stop().message();
    assert!(!msg.contains("Failover"), "{msg}");
    assert_eq!(
        p.vendor_calls("codex"),
        1,
        "another model of a kind that is out is not tried"
    );
    assert_eq!(failures(&p.state_json()), 1);
}

/// 'İ' grows and 'ẞ' shrinks when lower-cased: an index found in a lower-cased copy of
/// these words and used on the original sliced into 'é', and the hook panicked (an
/// internal-error allow: the run's cost unrecorded, no failure counted).
#[test]
fn a_usage_limit_text_with_case_changing_letters_is_read_never_a_crash() {
    const UNREADABLE: &str = r#"{"is_error":true,"api_error_status":429,"api_error":"usage_limit_reached",
        "result":"İresets é5pm (UTC)","total_cost_usd":0.03}"#;
    let p = plan_at(json!({}), NOW).reviewer(&Fake::fail().shape(Shape::Raw(UNREADABLE)).exit(1));
    let msg = p.stop().message();
    assert!(!msg.contains("internal error"), "{msg}");
    assert_eq!(
        failures(&p.state_json()),
        1,
        "a limit without a readable reset is a failure"
    );
    let spend: Value = serde_json::from_str(&p.read("spend.json")).unwrap();
    assert_eq!(spend["plan"]["cost_usd"], 0.03, "{spend}");

    const READABLE: &str = r#"{"is_error":true,"api_error_status":429,"api_error":"usage_limit_reached",
        "result":"İİ: You've hit your 5-hour limit · resets 12:14pm (UTC)"}"#;
    let p = plan_at(json!({}), NOW).reviewer(&Fake::fail().shape(Shape::Raw(READABLE)).exit(1));
    p.stop();
    assert_eq!(p.state_json()["paused_until"], "2026-11-24T12:15:00Z");
}

/// One stop with the reviewer at a usage limit whose reset `says` is no pause: the run is
/// a failure, counted, and the plan is not paused.
fn no_pause(p: &Project, says: &str) {
    let msg = p.stop().message();
    assert!(
        msg.contains(&format!("the reset it names ({says}"))
            && msg.contains("so this is no pause: it counts as a failure"),
        "{msg}"
    );
    let s = p.state_json();
    assert_eq!(failures(&s), 1, "{s}");
    assert!(s.get("paused_until").is_none_or(Value::is_null), "{s}");
    assert_eq!(p.last_event()["path"], "reviewer-failed");
}

/// SPEC §22: a reset already past, or more than 8 days ahead, is no pause but an
/// ordinary failure, counted. A pause already over started the reviewer at every stop and
/// never reached the hard stop; one in year 9998 paused the plan for 8,000 years.
#[test]
fn a_claude_reset_in_the_past_or_beyond_eight_days_is_a_counted_failure() {
    const PAST: &str = r#"{"is_error":true,"api_error_status":429,"api_error":"usage_limit_reached",
        "result":"You've hit your weekly limit · resets Nov 23, 11:13pm (UTC)"}"#;
    const FAR: &str = r#"{"is_error":true,"api_error_status":429,"api_error":"usage_limit_reached",
        "result":"You've hit your weekly limit · resets Dec 30, 9998 11:59pm (UTC)"}"#;
    // A date without a year that is more than a day gone is next year's: 361 days away.
    const NEXT_YEAR: &str = r#"{"is_error":true,"api_error_status":429,"api_error":"usage_limit_reached",
        "result":"You've hit your weekly limit · resets Nov 20, 1:00am (UTC)"}"#;
    let p = plan_at(json!({}), NOW).reviewer(&Fake::fail().shape(Shape::Raw(PAST)).exit(1));
    no_pause(&p, "2026-11-23 23:14 UTC) has already passed");
    let p = plan_at(json!({}), NOW).reviewer(&Fake::fail().shape(Shape::Raw(FAR)).exit(1));
    no_pause(&p, "9998-12-31 00:00 UTC) is more than 8 days away");
    let p = plan_at(json!({}), NOW).reviewer(&Fake::fail().shape(Shape::Raw(NEXT_YEAR)).exit(1));
    no_pause(&p, "2027-11-20 01:01 UTC) is more than 8 days away");
}

#[test]
fn a_codex_reset_in_the_past_or_beyond_eight_days_is_a_counted_failure() {
    let codex = |reset| {
        plan_at(json!({"reviewers": ["codex:gpt-5-codex"]}), NOW)
            .codex(&Vendor::usage_limit_until(reset))
    };
    no_pause(
        &codex("Nov 23rd, 2026 12:17 AM"),
        "2026-11-23 00:18 UTC) has already passed",
    );
    no_pause(
        &codex("Dec 30th, 9998 11:59 PM"),
        "9998-12-31 00:00 UTC) is more than 8 days away",
    );
}

#[test]
fn a_gemini_delay_of_nothing_or_beyond_eight_days_is_a_counted_failure() {
    let gemini = |delay| {
        plan_at(json!({"reviewers": ["gemini:gemini-2.5-pro"]}), NOW)
            .gemini(&Vendor::usage_limit_until(delay))
    };
    no_pause(&gemini("0s"), "2026-11-24 10:00 UTC) has already passed");
    no_pause(
        &gemini("864000s"),
        "2026-12-04 10:00 UTC) is more than 8 days away",
    );
    // Eight days is still a pause.
    let p = gemini("691200s");
    p.stop();
    assert_eq!(p.state_json()["paused_until"], "2026-12-02T10:00:00Z");
}

/// A clock at the end of the calendar (year 9999): the reset lies past the last instant a
/// timestamp holds, so `paused_until` is stored as that last instant, a stamp every reader
/// accepts (a bare number was written before, which its own reader refused), and the
/// pause message neither overflows nor panics. The next stop, `taskie validate` and
/// `taskie status` all read the pause back.
#[test]
fn a_pause_past_the_end_of_the_calendar_is_stored_as_a_stamp_every_reader_accepts() {
    let now = jiff::Timestamp::MAX.as_second() - 60;
    let p = plan_at(json!({"reviewers": ["gemini:gemini-2.5-pro"]}), now)
        .gemini(&Vendor::usage_limit_until("3600s"));
    let msg = p.stop().message();
    assert!(
        msg.contains("paused until 9999-12-") && msg.contains("no failure was counted"),
        "{msg}"
    );
    let s = p.state_json();
    let until = s["paused_until"]
        .as_str()
        .unwrap_or_else(|| panic!("a stamp, never a bare number: {s}"));
    assert!(
        until.starts_with("9999-12-") && until.ends_with('Z'),
        "{until}"
    );
    p.run_taskie(&["validate"]).ok();
    let status = p.run_taskie(&["status"]);
    assert!(status.ok().contains("until 9999-12-"), "{}", status.stdout);
    let msg = p.stop().message();
    assert!(
        msg.contains("paused until 9999-12-") && msg.contains("No reviewer ran"),
        "{msg}"
    );
    assert_eq!(
        p.vendor_calls("gemini"),
        1,
        "the paused stop ran no reviewer"
    );
}
