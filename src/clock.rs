//! Now: the one clock. Every timestamp is a `jiff::Timestamp`; this file only says what
//! "now" is (the system clock, or in a test build `TASKIE_TEST_NOW`) and the shapes Taskie
//! writes instants in (and `paused_until`'s, to the second, in `model::pause`).

use jiff::Timestamp;

/// An instant as events, locks and bindings store it: `2026-11-22T02:24:05.123Z`.
pub const STAMP: &str = "%Y-%m-%dT%H:%M:%S%.3fZ";

/// An instant in a file name: `20261122T022405Z`.
pub const COMPACT: &str = "%Y%m%dT%H%M%SZ";

/// An instant in a reviewer run's log name, to the millisecond so quick runs never share
/// one: `20261122T022405123Z`.
pub const COMPACT_MS: &str = "%Y%m%dT%H%M%S%3fZ";

/// Now.
pub fn now() -> Timestamp {
    Timestamp::now()
}

/// Now in [`STAMP`] form.
pub fn stamp() -> String {
    now().strftime(STAMP).to_string()
}

/// Now in Unix seconds, for the usage-limit pause (SPEC §22): the system clock, or in a
/// test build `TASKIE_TEST_NOW` when set to a whole number, so tests reach a reset time
/// without sleeping.
pub fn now_unix() -> i64 {
    test_now().unwrap_or_else(|| now().as_second())
}

/// `TASKIE_TEST_NOW`, compiled only with debug assertions as `cargo test` builds the
/// binaries it runs (the same gate as the pause point, docs/reliability.md): what users
/// run reads the real clock whatever the environment says.
#[cfg(debug_assertions)]
fn test_now() -> Option<i64> {
    crate::env::test_switches().now
}

/// Release builds: never.
#[cfg(not(debug_assertions))]
#[inline(always)]
fn test_now() -> Option<i64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_keep_the_shapes_older_files_hold() {
        let at = |ms: i64| Timestamp::from_millisecond(ms).unwrap();
        assert_eq!(
            at(0).strftime(STAMP).to_string(),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(
            at(951_782_400_000).strftime(STAMP).to_string(),
            "2000-02-29T00:00:00.000Z"
        );
        let t = at(1_795_314_245_123);
        assert_eq!(t.strftime(STAMP).to_string(), "2026-11-22T02:24:05.123Z");
        assert_eq!(t.strftime(COMPACT).to_string(), "20261122T022405Z");
        assert_eq!(t.strftime(COMPACT_MS).to_string(), "20261122T022405123Z");
        assert_eq!(
            at(1_795_314_245_007).strftime(COMPACT_MS).to_string(),
            "20261122T022405007Z"
        );
        let back: Timestamp = t.strftime(STAMP).to_string().parse().unwrap();
        assert_eq!(back.as_millisecond(), 1_795_314_245_123);
    }
}
