//! The usage-limit pause (SPEC §22): how `paused_until` is stored, whether a plan is
//! paused at a given instant, and the time as people read it. Pure: "now" is an argument.

/// `paused_until` as state.json stores it: `2026-11-24T23:27:00Z`. An instant outside
/// 1970–9999 is stored as the nearest one inside (a pause before 1970 is over as surely),
/// so what is written is always what [`parse_stamp`] reads back: a bare number, or a
/// negative year, would be refused by its own reader.
pub fn stamp(unix: i64) -> String {
    jiff::Timestamp::from_second(within_calendar(unix))
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// `unix` moved into the calendar a stamp holds (1970–9999), as [`stamp`] stores it. A
/// pause is decided on this instant, so the one state.json records is the one its message
/// names (a reset past year 9999 was named as a bare number of seconds).
pub fn within_calendar(unix: i64) -> i64 {
    unix.clamp(0, jiff::Timestamp::MAX.as_second())
}

/// A stored `paused_until`: an RFC 3339 instant (any offset), to the second.
pub fn parse_stamp(text: &str) -> Option<i64> {
    text.trim()
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_second())
}

/// Whether a plan paused until `until` is still paused at `now`: the first instant at or
/// after the reset runs the review.
pub fn is_paused(until: Option<i64>, now: i64) -> bool {
    until.is_some_and(|u| now < u)
}

/// The longest a usage-limit pause lasts (SPEC §22): the longest limit the reviewers
/// have, a week, and a day's slack for the clock. A reset further away, or already past,
/// is no pause.
pub const LONGEST_PAUSE_SECS: i64 = 8 * 86_400;

/// Why a reset time a reviewer named is no pause: it has passed (the review would run
/// again at once, and no failure would ever be counted) or it is absurdly far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implausible {
    Passed,
    TooFar,
}

/// Whether a reset at `until`, read at `now`, can be a pause: after now and at most
/// [`LONGEST_PAUSE_SECS`] ahead.
pub fn check_reset(until: i64, now: i64) -> Result<(), Implausible> {
    let ahead = i128::from(until) - i128::from(now);
    if ahead <= 0 {
        Err(Implausible::Passed)
    } else if ahead > i128::from(LONGEST_PAUSE_SECS) {
        Err(Implausible::TooFar)
    } else {
        Ok(())
    }
}

/// An instant as people read it: `2026-11-24 23:27 UTC`.
pub fn at(unix: i64) -> String {
    match jiff::Timestamp::from_second(unix) {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M UTC").to_string(),
        Err(_) => unix.to_string(),
    }
}

/// The reset as people read it: `2026-11-24 23:27 UTC (in 2 h 5 min)`.
pub fn when(until: i64, now: i64) -> String {
    let at = at(until);
    let left = until.saturating_sub(now);
    if left <= 0 {
        return format!("{at} (passed)");
    }
    // Whole minutes, rounded up: "in 0 min" would read as "now". (`left` is ≥ 1 here,
    // and may be near i64::MAX: no addition that could overflow.)
    let minutes = (left - 1) / 60 + 1;
    let (h, m) = (minutes / 60, minutes % 60);
    let span = match (h, m) {
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m} min"),
    };
    format!("{at} (in {span})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_reads_back_to_the_same_second() {
        let t = 1_795_994_820; // 2026-11-29T23:27:00Z
        assert_eq!(stamp(t), "2026-11-29T23:27:00Z");
        assert_eq!(parse_stamp(&stamp(t)), Some(t));
        assert_eq!(parse_stamp("2026-11-30T04:57:00+05:30"), Some(t));
        assert_eq!(parse_stamp("tomorrow"), None);
    }

    #[test]
    fn an_instant_beyond_the_calendar_is_stored_as_a_stamp_its_reader_accepts() {
        for unix in [i64::MAX, 253_402_300_800, i64::MIN, -377_705_116_801] {
            let s = stamp(unix);
            assert!(parse_stamp(&s).is_some(), "{unix}: {s}");
        }
        assert!(
            stamp(i64::MAX).starts_with("9999-12-"),
            "{}",
            stamp(i64::MAX)
        );
    }

    #[test]
    fn the_time_left_never_overflows() {
        assert!(
            when(i64::MAX, i64::MIN).contains("(in "),
            "{}",
            when(i64::MAX, i64::MIN)
        );
        assert!(when(i64::MAX, 0).starts_with(&i64::MAX.to_string()));
        assert!(when(i64::MIN, i64::MAX).ends_with("(passed)"));
    }

    #[test]
    fn the_pause_ends_at_the_reset_instant() {
        assert!(is_paused(Some(100), 99));
        assert!(!is_paused(Some(100), 100));
        assert!(!is_paused(None, 0));
    }

    #[test]
    fn a_reset_is_a_pause_only_after_now_and_at_most_eight_days_ahead() {
        let now = 1_795_514_400;
        assert_eq!(check_reset(now - 60, now), Err(Implausible::Passed));
        assert_eq!(check_reset(now, now), Err(Implausible::Passed));
        assert_eq!(check_reset(now + 1, now), Ok(()));
        assert_eq!(check_reset(now + 8 * 86_400, now), Ok(()));
        assert_eq!(
            check_reset(now + 8 * 86_400 + 1, now),
            Err(Implausible::TooFar)
        );
        assert_eq!(check_reset(i64::MAX, i64::MIN), Err(Implausible::TooFar));
        assert_eq!(check_reset(i64::MIN, i64::MAX), Err(Implausible::Passed));
    }

    #[test]
    fn the_reset_time_says_how_long_is_left() {
        let t = 1_795_994_820;
        assert_eq!(when(t, t - 7500), "2026-11-29 23:27 UTC (in 2 h 5 min)");
        assert_eq!(when(t, t - 3600), "2026-11-29 23:27 UTC (in 1 h)");
        assert_eq!(when(t, t - 1), "2026-11-29 23:27 UTC (in 1 min)");
        assert_eq!(when(t, t), "2026-11-29 23:27 UTC (passed)");
    }
}
