//! SPEC §21: the findings ledger through the real binaries with a fake reviewer: ids in
//! the review file and the block text, answers by id in the post-review (unanswered ids
//! reported), the reviewer's reopen/resolve, the next prompt, validation and status.

use crate::support::{Fake, Project, Shape, due};
use serde_json::json;

const REVIEW_2: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"{}",
    "structured_output":{"verdict":"FAIL","summary":"F1 is not fixed; one more.","findings":["The README is stale"],
    "resolved":[],"reopened":["F1"]}}"#;

#[test]
fn findings_keep_their_ids_across_a_cycle_and_status_counts_them() {
    let p = Project::new().plan("p").state(due("plan-review")).reviewer(
        &Fake::fail().file(None).shape(Shape::Review {
            verdict: "FAIL",
            summary: "Two problems.",
            findings: &["Step 2 has no test", "The name is unclear"],
        }),
    );
    let reason = p.stop().reason();
    assert!(
        reason.contains("- F1: Step 2 has no test") && reason.contains("- F2: The name is unclear"),
        "{reason}"
    );
    assert!(p.read("plan-review-1.md").starts_with(
        "> Finding ids (answer each in the post-review, e.g. `F1: fixed — how`):\n> - F1: Step 2 has no test\n> - F2: The name is unclear\n"
    ));
    // The agent answers F1 only.
    std::fs::write(
        p.plan_dir().join("plan-post-review-1.md"),
        "# Post-review\n\n- **F1**: fixed — added a test step\n",
    )
    .unwrap();
    p.run_taskie(&["validate"]).ok();
    p.set_reviewer(&Fake::fail().file(None).shape(Shape::Raw(REVIEW_2)));
    let reason = p.stop().reason();
    assert!(reason.contains("- F3: The README is stale"), "{reason}");
    assert!(
        reason.contains(
            "plan-post-review-1.md did not answer F2 by id, so the findings ledger keeps it open."
        ),
        "{reason}"
    );
    let prompt = p.reviewer_prompt();
    assert!(
        prompt.contains("  - F1 [fixed] Step 2 has no test — agent: fixed — added a test step\n")
            && prompt.contains("  - F2 [open] The name is unclear\n"),
        "{prompt}"
    );
    let j = p.taskie_json(&["status", "--json"]);
    assert_eq!(
        j["findings"],
        json!({"opened": 3, "fixed": 0, "dismissed": 0, "reopened": 1, "open": 3})
    );
    assert_eq!(
        (
            &j["reviews"][0]["new_findings"],
            &j["reviews"][1]["new_findings"]
        ),
        (&json!(2), &json!(1))
    );
    let text = p.run_taskie(&["status"]).ok().to_string();
    assert!(
        text.contains("Findings  3 opened, 0 fixed, 0 dismissed, 1 reopened, 3 open")
            && text.contains(", 2 new findings"),
        "{text}"
    );
}

/// A plan whose plan review is due, and a reviewer that fails it with `findings`,
/// answering as the claude CLI does.
fn failing_with(findings: &[String]) -> Project {
    let answer = json!({"type":"result","subtype":"success","is_error":false,"result":"{}",
        "structured_output":{"verdict":"FAIL","summary":"Many problems.","findings":findings}});
    let raw: &'static str = Box::leak(answer.to_string().into_boxed_str());
    Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail().file(None).shape(Shape::Raw(raw)))
}

/// A ledger past what one argument may hold (128 KiB on Linux), with a NUL and terminal
/// codes in a finding and in the agent's answer, still reaches the next reviewer: the
/// prompt is on stdin, each text is one clean line, and past its bound the prompt names
/// findings.json instead of quoting it.
#[test]
fn a_ledger_past_128_kib_with_a_nul_in_a_finding_still_reaches_the_next_reviewer() {
    let long = "a long finding text ".repeat(150);
    let findings: Vec<String> = (1..=80)
        .map(|i| format!("Finding {i}\u{0}\u{1b}[2J: {long}"))
        .collect();
    let p = failing_with(&findings);
    assert!(p.stop().reason().contains("- F1: Finding 1"));
    let ledger = p.read("findings.json");
    assert!(ledger.len() > 128 * 1024, "{} bytes", ledger.len());
    assert!(
        ledger.contains("Finding 1\\u0000"),
        "the NUL is kept in the ledger"
    );
    std::fs::write(
        p.plan_dir().join("plan-post-review-1.md"),
        "# Post-review\n\n- F1: fixed \u{0}\u{7} with a \u{1b}]0;title\u{7} test\n",
    )
    .unwrap();
    p.set_reviewer(&Fake::fail());
    let run = p.stop();
    assert_eq!(p.reviewer_calls(), 2, "review #2 ran");
    assert!(run.reason().contains("Verdict: FAIL"), "{}", run.reason());
    let prompt = p.reviewer_prompt();
    assert!(
        !prompt.chars().any(|c| c.is_control() && c != '\n'),
        "no control character in the prompt"
    );
    assert!(
        prompt.contains("  - F1 [fixed] Finding 1  [2J: a long finding text a long")
            && prompt.contains(" — agent: fixed    with a  ]0;title  test\n"),
        "{prompt}"
    );
    let more = prompt
        .lines()
        .find(|l| l.starts_with("  - … and "))
        .expect("the findings past the bound are named by their file");
    assert!(
        more.ends_with("more, too long to quote here: read them (cycle `plan-review`) in .taskie/plans/p/findings.json"),
        "{more}"
    );
    assert!(prompt.len() < 100 * 1024, "{} bytes", prompt.len());
}

#[test]
fn a_finding_the_agent_will_not_fix_is_counted_as_dismissed_and_not_open() {
    let p = Project::new().plan("p").state(due("plan-review")).reviewer(
        &Fake::fail().file(None).shape(Shape::Review {
            verdict: "FAIL",
            summary: "One.",
            findings: &["Use tabs"],
        }),
    );
    p.stop();
    std::fs::write(
        p.plan_dir().join("plan-post-review-1.md"),
        "F1: won't fix — the project uses spaces\n",
    )
    .unwrap();
    p.set_reviewer(&Fake::pass());
    p.stop();
    let j = p.taskie_json(&["status", "--json"]);
    assert_eq!(j["findings"]["dismissed"], 1);
    // Only what review 2 raised is open.
    assert_eq!(j["findings"]["open"], j["reviews"][1]["new_findings"]);
}

#[test]
fn taskie_mark_post_review_reports_the_ids_it_leaves_unanswered() {
    let p = Project::new().plan("p").state(due("plan-review")).reviewer(
        &Fake::fail().file(None).shape(Shape::Review {
            verdict: "FAIL",
            summary: "Two problems.",
            findings: &["Step 2 has no test", "The name is unclear"],
        }),
    );
    p.stop();
    std::fs::write(
        p.plan_dir().join("plan-post-review-1.md"),
        "F1: fixed — added the test\n",
    )
    .unwrap();
    let out = p.run_taskie(&["mark", "post-plan-review"]).ok().to_string();
    assert!(
        out.contains(
            "plan-post-review-1.md does not answer F2 by id: the findings ledger keeps it open."
        ),
        "{out}"
    );
    assert_eq!(p.state_json()["next_phase"], "plan-review");
}

/// Each ledger, as a directory or as a link to a file outside the project (whose text
/// would then go into the reviewer's prompt), is refused by `taskie validate`, naming it.
#[test]
fn taskie_validate_refuses_a_ledger_that_is_a_directory_or_a_link_out_of_taskie() {
    for (linked, dir) in [
        ("findings.json", "spend.json"),
        ("spend.json", "findings.json"),
    ] {
        let p = Project::new().plan("p").state(due("plan-review"));
        let outside = crate::support::tempdir();
        std::fs::write(outside.path().join("secret.json"), "{\"cycles\":[]}\n").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.json"),
            p.plan_dir().join(linked),
        )
        .unwrap();
        std::fs::create_dir(p.plan_dir().join(dir)).unwrap();
        let run = p.run_taskie(&["validate"]);
        let err = run.fails_with(1).to_string();
        assert!(
            run.stdout.contains(&format!(
                ".taskie/plans/p/{linked} is a symbolic link; taskie neither reads nor writes its files through a link"
            )) && run.stdout.contains(&format!(
                ".taskie/plans/p/{dir} is a directory; taskie keeps a file there"
            )),
            "{}",
            run.stdout
        );
        assert!(err.contains("files taskie cannot use"), "{err}");
        // The hook refuses the linked findings ledger too: nothing of the outside file
        // reaches a reviewer's prompt.
        if linked == "findings.json" {
            std::fs::remove_dir(p.plan_dir().join(dir)).unwrap();
            p.set_reviewer(&Fake::fail());
            let run = p.stop();
            let message = run.message();
            assert!(
                !run.is_block()
                    && message.contains("findings.json cannot be read (it is a symbolic link"),
                "{message}"
            );
            assert_eq!(p.reviewer_calls(), 0, "no review was started");
        }
    }
}

/// A cycle of the longest findings a reviewer can give (more than a review adds, each as
/// long as a finding keeps, in NULs that JSON writes as six bytes), every one answered at
/// length, passed the 4 MiB the ledger's reader takes within three reviews, and every
/// later reading (the next stop, `taskie status`) said the ledger could not be read. Now
/// the ledger keeps shorter texts past its bound, and every id is still counted.
#[test]
fn a_cycle_of_the_longest_findings_never_outgrows_the_ledgers_reader() {
    let text = "\u{0}".repeat(2000);
    let findings: Vec<String> = (0..105).map(|_| text.clone()).collect();
    let p = failing_with(&findings);
    let long_answer = "漢".repeat(2000);
    for review in 1..=3u64 {
        let run = p.stop();
        assert!(
            run.is_block() && run.reason().contains("Verdict: FAIL"),
            "review {review}: {}",
            run.stdout
        );
        assert_eq!(p.reviewer_calls(), review as usize);
        let ledger = std::fs::read(p.plan_dir().join("findings.json")).unwrap();
        assert!(ledger.len() <= 2 * 1024 * 1024, "{} bytes", ledger.len());
        let answers: String = (1..=review * 101)
            .map(|i| format!("F{i}: won't fix — {long_answer}\n"))
            .collect();
        std::fs::write(
            p.plan_dir().join(format!("plan-post-review-{review}.md")),
            answers,
        )
        .unwrap();
    }
    let v = p.taskie_json(&["status", "--json"]);
    assert_eq!(
        (&v["findings"]["opened"], &v["findings"]["dismissed"]),
        // The third post-review's answers are recorded at the next stop.
        (&json!(3 * 101), &json!(2 * 101)),
        "{v}"
    );
}

#[test]
fn the_ids_header_keeps_every_byte_of_a_review_over_32_mib_that_is_not_utf8() {
    // The reviewer writes 40 MiB with bytes that are not UTF-8, and reports two findings.
    let p = Project::new().plan("p").state(due("plan-review")).reviewer(
        &Fake::fail()
            .file(None)
            .shape(Shape::Review {
                verdict: "FAIL",
                summary: "Two problems.",
                findings: &["Step 2 has no test", "The name is unclear"],
            })
            .extra(
                "{ printf '# Review\\n\\377\\376\\n'; head -c 41943040 /dev/zero | tr '\\0' x; \
                 printf '\\nVERDICT: FAIL\\n'; } > \"$path\"",
            ),
    );
    let review = p.plan_dir().join("plan-review-1.md");
    let run = p.stop();
    assert!(
        run.reason().contains("- F1: Step 2 has no test"),
        "{}",
        run.stdout
    );
    let bytes = std::fs::read(&review).unwrap();
    let header = "> Finding ids (answer each in the post-review, e.g. `F1: fixed — how`):\n\
                  > - F1: Step 2 has no test\n> - F2: The name is unclear\n\n";
    assert!(bytes.starts_with(header.as_bytes()));
    let body = &bytes[header.len()..];
    assert!(
        body.starts_with(b"# Review\n\xff\xfe\nxxx"),
        "{:?}",
        &body[..16]
    );
    assert_eq!(body.len(), 9 + 3 + 41_943_040 + 15);
    assert!(body.ends_with(b"x\nVERDICT: FAIL\n"));
}

#[test]
fn a_findings_ledger_that_cannot_be_read_is_reported_and_never_silently_started_again() {
    for (what, bytes) in [
        ("not JSON", b"{\"cycles\": [".to_vec()),
        ("over 4 MiB", {
            let mut b = b"{\"cycles\":[],\"x\":\"".to_vec();
            b.extend(std::iter::repeat_n(b'x', 5 * 1024 * 1024));
            b.extend(b"\"}\n");
            b
        }),
    ] {
        let p = Project::new()
            .plan("p")
            .state(due("plan-review"))
            .reviewer(&Fake::fail());
        std::fs::write(p.plan_dir().join("findings.json"), &bytes).unwrap();
        let run = p.stop();
        let message = run.message();
        assert!(
            !run.is_block()
                && message.contains("plan-review #1 is due, but the findings ledger")
                && message.contains(".taskie/plans/p/findings.json cannot be read")
                && message.contains("move it out of the plan directory"),
            "{what}: {message}"
        );
        assert_eq!(p.reviewer_calls(), 0, "{what}: no review was started");
        assert_eq!(
            std::fs::read(p.plan_dir().join("findings.json")).unwrap(),
            bytes,
            "{what}: the ledger is left as it was"
        );
        assert_eq!(p.last_event()["path"], "ledger-error", "{what}");
    }
}
