//! The usage-limit parsers (SPEC §22): the reset time of each reviewer kind, the words that
//! mark a usage limit, and each kind's reading of a failed run that carries them. The first
//! 8 bytes are "now" (Unix seconds, little-endian); the rest is the reviewer's words.
#![no_main]

use jiff::tz::TimeZone;
use libfuzzer_sys::fuzz_target;
use taskie::model::reviewers::{Kind, Reviewer};
use taskie::reviewer::result::CliResult;
use taskie::reviewer::{codex, gemini, kinds, limit};

fuzz_target!(|data: &[u8]| {
    let (now, words) = match data.split_first_chunk::<8>() {
        Some((head, rest)) => (i64::from_le_bytes(*head), rest),
        None => (1_795_514_400, data),
    };
    let words = String::from_utf8_lossy(words);
    let words = words.as_ref();
    let kolkata = TimeZone::get("Asia/Kolkata").ok();
    for zone in [None, Some(TimeZone::UTC), kolkata.clone()] {
        let _ = limit::claude_reset(words, now, &|_| zone.clone());
    }
    for local in [Some(TimeZone::UTC), kolkata].into_iter().flatten() {
        let _ = limit::codex_reset(words, now, &local);
    }
    if let Some(t) = limit::gemini_reset(words, now) {
        assert!(t >= now, "a delay never ends before it starts");
    }
    let _ = (
        limit::is_codex_usage_limit(words),
        limit::is_gemini_usage_limit(words),
    );
    for kind in [Kind::Claude, Kind::Codex, Kind::Gemini] {
        let _ = limit::reset(kind, words, now);
        let reviewer = Reviewer {
            kind,
            model: "m".into(),
        };
        let _ = kinds::limited(words, 1)
            .usage_limit(words)
            .concluded(&reviewer, "log", now);
        let _ = kinds::reported(words, 1).concluded(&reviewer, "log", now);
    }
    let quoted = serde_json::to_string(words).expect("a string serializes");
    let claude = format!(
        r#"{{"is_error":true,"api_error_status":429,"api_error":"usage_limit_reached","result":{quoted}}}"#
    );
    if let Ok(r) = CliResult::parse(claude.as_bytes()) {
        let _ = (r.failure(), r.is_rate_limit(), r.is_usage_limit());
    }
    let turn = format!(r#"{{"type":"turn.failed","error":{{"message":{quoted}}}}}"#);
    let _ = codex::Events::parse(turn.as_bytes()).said(1, words.as_bytes());
    let error = format!(r#"{{"error":{{"message":{quoted},"code":429}}}}"#);
    let _ = gemini::Output::parse(b"", error.as_bytes()).said(173, error.as_bytes());
});
