//! The verdict parser (SPEC §9): the review-file scan and the three-source rule. The input
//! is split at the first NUL byte into the reviewer's stdout and the review file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taskie::reviewer::result::CliResult;
use taskie::model::verdict::{self, Verdict};

fuzz_target!(|data: &[u8]| {
    let (stdout, review) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let result = CliResult::parse(stdout).ok();
    let text = String::from_utf8_lossy(review);
    let file = verdict::from_text(&text);
    let structured = result.as_ref().and_then(CliResult::structured);
    let older = result.as_ref().and_then(CliResult::result_verdict);
    let reading = verdict::read(&verdict::Claims {
        structured: structured.as_ref().and_then(|s| s.verdict.as_deref()),
        result: older.as_deref(),
        review_file: Some(&text),
    });
    if file == Some(false) {
        assert_eq!(
            reading.verdict,
            Verdict::Fail,
            "a FAIL in the review file always wins"
        );
    }
    if reading.verdict == Verdict::Pass {
        assert_ne!(file, Some(false));
    }
});
