//! The verdict parser (SPEC §9): the review-file scan and the three-source rule. The input
//! is split at the first NUL byte into the reviewer's stdout and the review file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use taskie::model::verdict::{self, Verdict};

fuzz_target!(|data: &[u8]| {
    let (stdout, review) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let result: Option<Value> = serde_json::from_slice(stdout).ok();
    let text = String::from_utf8_lossy(review);
    let file = verdict::from_text(&text);
    let reading = verdict::read(result.as_ref(), Some(&text));
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
