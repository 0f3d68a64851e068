//! When a reviewer's usage limit resets (SPEC §22), from the words each kind answers with
//! (measured with the real pinned binaries; docs/reviewers.md lists them):
//!
//! - claude: `api_error: "usage_limit_reached"`, `result: "You've hit your 5-hour limit ·
//!   resets 5:44am (Asia/Kolkata)"` — a wall-clock time in the zone named in brackets, with
//!   a date (`resets Nov 26, 11:13pm (UTC)`) when the reset is more than a day away;
//! - codex: `You’ve hit your usage limit. … try again at 11:27 PM.` — the machine's local
//!   time, with a date on another day (`Nov 24th, 2026 12:17 AM`);
//! - gemini: HTTP 429 with `Suggested retry after 3600s.` — a delay from now.
//!
//! A limit whose reset cannot be read is no pause: it stays a failure, named as a limit.
//! Nor is a reset read here that has passed or is absurdly far (`model::pause`), which
//! the caller decides.

use crate::model::reviewers::Kind;
use jiff::civil::{Date, DateTime};
use jiff::tz::{Offset, TimeZone};

/// The instant (Unix seconds) at which `kind`'s usage limit, reported in `words`, resets;
/// `None` when the words give no time that can be read. `now` is Unix seconds; `local`
/// the machine's time zone, which codex prints its reset in.
pub fn reset(kind: Kind, words: &str, now: i64, local: &TimeZone) -> Option<i64> {
    match kind {
        Kind::Claude => claude_reset(words, now, &|name| TimeZone::get(name).ok()),
        Kind::Codex => codex_reset(words, now, local),
        Kind::Gemini => gemini_reset(words, now),
    }
}

/// Whether codex's words are its usage-limit answer (not a plain 429 it gave up on).
pub fn is_codex_usage_limit(words: &str) -> bool {
    end_of(words, "usage limit").is_some() && end_of(words, "try again at").is_some()
}

/// Whether gemini's error is a quota with a stated delay (a 429 it did not retry).
pub fn is_gemini_usage_limit(words: &str) -> bool {
    end_of(words, "suggested retry after").is_some()
}

/// `resets [<Mon> <d>, ]<h>[:<mm>]<am|pm> (<zone>)`. A zone this machine does not know is
/// read as the easternmost offset (UTC+14): the earliest instant the text can mean, so
/// the plan never waits longer than the limit lasts (a review tried too early pauses
/// again, at no cost).
pub fn claude_reset(words: &str, now: i64, zone: &dyn Fn(&str) -> Option<TimeZone>) -> Option<i64> {
    let rest = &words[end_of(words, "resets ")?..];
    let (when, rest) = wall_clock(rest)?;
    let name = rest
        .trim_start()
        .strip_prefix('(')?
        .split(')')
        .next()?
        .trim();
    let tz = zone(name)
        .unwrap_or_else(|| TimeZone::fixed(Offset::from_seconds(14 * 3600).unwrap_or(Offset::UTC)));
    when.instant(now, &tz)
}

/// `try again at [<Mon> <d>th, <yyyy> ]<h>:<mm> <AM|PM>` in the machine's zone (`local`).
pub fn codex_reset(words: &str, now: i64, local: &TimeZone) -> Option<i64> {
    let (when, _) = wall_clock(&words[end_of(words, "try again at ")?..])?;
    when.instant(now, local)
}

/// `Suggested retry after <n>s`.
pub fn gemini_reset(words: &str, now: i64) -> Option<i64> {
    let digits: String = words[end_of(words, "retry after ")?..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let secs: f64 = digits.parse().ok()?;
    if !secs.is_finite() {
        return None;
    }
    // Saturates: a delay past i64 is as far as can be, which no pause reaches (SPEC §22).
    Some(now.saturating_add(secs.ceil() as i64))
}

/// A usage limit that an agent of `taskie run` reported (SPEC §23): its words, and when
/// it resets when they say so (within a pause's reach, `model::pause::check_reset`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentLimit {
    pub words: String,
    pub until: Option<i64>,
}

/// The usage limit an agent's output (stdout and stderr) reports, if any: claude's result
/// object (`is_error` with `usage_limit_reached`, HTTP 429, or a result naming a limit),
/// codex's and gemini's usage-limit words, or a line of any CLI naming a limit (then with
/// no reset). `now` is Unix seconds; `local` the machine's zone (codex's resets).
pub fn agent_limit(kind: Kind, output: &str, now: i64, local: &TimeZone) -> Option<AgentLimit> {
    let says_limit = |t: &str| {
        [
            "usage limit",
            "rate limit",
            "hit your limit",
            "quota exceeded",
            "resource_exhausted",
        ]
        .iter()
        .any(|w| end_of(t, w).is_some())
    };
    let claude = output.lines().find_map(|line| {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let result = v["result"].as_str().unwrap_or_default();
        (v["is_error"] == true
            && (v["api_error"] == "usage_limit_reached"
                || v["api_error_status"] == 429
                || says_limit(result)))
        .then(|| result.to_string())
    });
    let words = claude
        .or_else(|| {
            output
                .lines()
                .find(|l| is_codex_usage_limit(l) || is_gemini_usage_limit(l))
                .map(str::to_string)
        })
        .or_else(|| output.lines().find(|l| says_limit(l)).map(str::to_string))?;
    let until = reset(kind, &words, now, local)
        .filter(|&t| crate::model::pause::check_reset(t, now).is_ok());
    Some(AgentLimit {
        words: crate::model::text::clip(words.trim(), 200),
        until,
    })
}

/// A wall-clock time as a reset text gives it: maybe a date (maybe without a year).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WallClock {
    date: Option<(Option<i16>, i8, i8)>,
    hour: i8,
    minute: i8,
}

impl WallClock {
    /// The instant it names in `tz`, plus the minute it is shown to: the CLIs print the
    /// reset to the minute, so the first instant it has surely passed is a minute later.
    /// Without a date, the next such time after `now`; a time up to 15 minutes gone is
    /// the reset just passing (or the clocks differing), which waits that one minute, not
    /// a day. Without a year, this year's unless that is more than a day gone.
    fn instant(self, now: i64, tz: &TimeZone) -> Option<i64> {
        const SHOWN_TO: i64 = 60;
        let today = jiff::Timestamp::from_second(now)
            .ok()?
            .to_zoned_datetime(tz.clone())
            .date();
        let at = |d: Date| -> Option<i64> {
            let dt = DateTime::from_parts(d, jiff::civil::time(self.hour, self.minute, 0, 0));
            let t = dt
                .to_zoned_datetime(tz.clone())
                .ok()?
                .timestamp()
                .as_second();
            Some(t + SHOWN_TO)
        };
        match self.date {
            None => {
                let t = at(today)?;
                if t > now - 15 * 60 {
                    Some(t.max(now + SHOWN_TO))
                } else {
                    at(today.tomorrow().ok()?)
                }
            }
            Some((Some(y), m, d)) => at(Date::new(y, m, d).ok()?),
            Some((None, m, d)) => {
                let t = at(Date::new(today.year(), m, d).ok()?)?;
                if t >= now - 86_400 {
                    Some(t)
                } else {
                    at(Date::new(today.year() + 1, m, d).ok()?)
                }
            }
        }
    }
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// Reads `[<Mon> <d>[st|nd|rd|th],[ <yyyy>] ]<h>[:<mm>][ ]<am|pm>` at the start of `text`;
/// returns it and the text after it.
fn wall_clock(text: &str) -> Option<(WallClock, &str)> {
    let mut rest = text.trim_start();
    let mut date = None;
    if let Some(m) = MONTHS.iter().position(|m| starts_with(rest, m)) {
        let after = rest.split_once(' ')?.1.trim_start();
        let (day, after) = number(after)?;
        let after = after.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        let after = after.strip_prefix(',').unwrap_or(after).trim_start();
        // A year is four digits followed by a space; an hour is shorter.
        let (year, after) = match number(after) {
            Some((y, tail)) if y >= 1000 && tail.starts_with(' ') => (Some(y), tail.trim_start()),
            _ => (None, after),
        };
        date = Some((
            year.map(|y| i16::try_from(y).ok()).unwrap_or(None),
            (m + 1) as i8,
            i8::try_from(day).ok()?,
        ));
        if year.is_some_and(|y| i16::try_from(y).is_err()) {
            return None;
        }
        rest = after;
    }
    let (hour, after) = number(rest)?;
    let (minute, after) = match after.strip_prefix(':') {
        Some(m) => number(m)?,
        None => (0, after),
    };
    let after = after.trim_start();
    let pm = if starts_with(after, "pm") {
        true
    } else if starts_with(after, "am") {
        false
    } else {
        return None;
    };
    if !(1..=12).contains(&hour) || minute > 59 {
        return None;
    }
    let hour = (hour % 12) + if pm { 12 } else { 0 };
    Some((
        WallClock {
            date,
            hour: hour as i8,
            minute: minute as i8,
        },
        &after[2..],
    ))
}

/// The index in `text` just past the first occurrence of `word` (ASCII), in any case.
/// Found in `text` itself, never in a lower-cased copy: lower-casing changes lengths ('İ'
/// grows to three bytes, 'ẞ' shrinks to two), so a copy's index points elsewhere in the
/// original, or into the middle of a character. An ASCII byte is never part of another
/// character in UTF-8, so the index is always a character boundary.
fn end_of(text: &str, word: &str) -> Option<usize> {
    debug_assert!(word.is_ascii() && !word.is_empty());
    text.as_bytes()
        .windows(word.len())
        .position(|w| w.eq_ignore_ascii_case(word.as_bytes()))
        .map(|i| i + word.len())
}

/// Whether `text` starts with `word` (ASCII), in any case.
fn starts_with(text: &str, word: &str) -> bool {
    text.as_bytes()
        .get(..word.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(word.as_bytes()))
}

/// Leading decimal digits (at most 4) as a number, and the text after them.
fn number(text: &str) -> Option<(u32, &str)> {
    let len = text.bytes().take_while(u8::is_ascii_digit).count();
    if len == 0 || len > 4 {
        return None;
    }
    Some((text[..len].parse().ok()?, &text[len..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-24T10:00:00Z.
    const NOW: i64 = 1_795_514_400;

    fn stamp(t: i64) -> String {
        crate::model::pause::stamp(t)
    }

    fn known(name: &str) -> Option<TimeZone> {
        TimeZone::get(name).ok()
    }

    #[test]
    fn claude_resets_at_the_next_such_time_in_the_named_zone() {
        // 5:44am in Kolkata (UTC+5:30) is 00:14 UTC; at 10:00 UTC that is tomorrow's, and
        // the pause ends the minute after the one shown.
        let t = claude_reset(
            "You've hit your 5-hour limit · resets 5:44am (Asia/Kolkata)",
            NOW,
            &known,
        );
        assert_eq!(stamp(t.unwrap()), "2026-11-25T00:15:00Z");
        let t = claude_reset(
            "You've hit your 5-hour limit · resets 12:14pm (UTC)",
            NOW,
            &known,
        );
        assert_eq!(stamp(t.unwrap()), "2026-11-24T12:15:00Z");
        let t = claude_reset("resets 12:14am (UTC)", NOW, &known);
        assert_eq!(stamp(t.unwrap()), "2026-11-25T00:15:00Z");
        let t = claude_reset("resets 5pm (UTC)", NOW, &known);
        assert_eq!(stamp(t.unwrap()), "2026-11-24T17:01:00Z");
    }

    #[test]
    fn claude_resets_more_than_a_day_away_carry_a_date() {
        let t = claude_reset(
            "You've hit your weekly limit · resets Nov 26, 11:13pm (UTC)",
            NOW,
            &known,
        );
        assert_eq!(stamp(t.unwrap()), "2026-11-26T23:14:00Z");
        // A date early in the year, read in December, is next year's.
        let t = claude_reset("resets Jan 2, 1:00am (UTC)", NOW, &known);
        assert_eq!(stamp(t.unwrap()), "2027-01-02T01:01:00Z");
    }

    #[test]
    fn an_unknown_zone_is_read_as_the_earliest_instant_it_can_mean() {
        let t = claude_reset("resets 5:44am (Mars/Olympus)", NOW, &known);
        // 05:44 at UTC+14 is 15:44 UTC the day before: tomorrow's 05:44 there (+1 min).
        assert_eq!(stamp(t.unwrap()), "2026-11-24T15:45:00Z");
    }

    #[test]
    fn a_reset_time_just_passed_waits_a_minute_not_a_day() {
        // 10:00 UTC now; "resets 9:59am" is the reset passing as it was printed.
        let t = claude_reset("resets 9:59am (UTC)", NOW, &known);
        assert_eq!(t, Some(NOW + 60));
        let t = claude_reset("resets 9:40am (UTC)", NOW, &known);
        assert_eq!(stamp(t.unwrap()), "2026-11-25T09:41:00Z");
    }

    #[test]
    fn claude_words_without_a_reset_time_give_none() {
        for words in [
            "Server is temporarily limiting requests (not your usage limit)",
            "You've hit your limit",
            "resets soon (UTC)",
            "resets 13:00pm (UTC)",
            "resets 5:44am",
        ] {
            assert_eq!(claude_reset(words, NOW, &known), None, "{words}");
        }
    }

    #[test]
    fn codex_resets_in_local_time_with_a_date_on_another_day() {
        let kolkata = TimeZone::get("Asia/Kolkata").unwrap();
        let words = "You\u{2019}ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), or try again at 11:27 PM.";
        assert!(is_codex_usage_limit(words));
        let t = codex_reset(words, NOW, &kolkata);
        assert_eq!(stamp(t.unwrap()), "2026-11-24T17:58:00Z");
        let t = codex_reset(words, NOW, &TimeZone::UTC);
        assert_eq!(stamp(t.unwrap()), "2026-11-24T23:28:00Z");
        let t = codex_reset(
            "You\u{2019}ve hit your usage limit. … try again at Nov 26th, 2026 12:17 AM.",
            NOW,
            &TimeZone::UTC,
        );
        assert_eq!(stamp(t.unwrap()), "2026-11-26T00:18:00Z");
        assert!(!is_codex_usage_limit(
            "exceeded retry limit, last status: 429 Too Many Requests"
        ));
    }

    #[test]
    fn gemini_resets_after_the_suggested_delay() {
        let words = "You have exhausted your capacity on this model.\nSuggested retry after 3600s. (code 429)";
        assert!(is_gemini_usage_limit(words));
        assert_eq!(gemini_reset(words, NOW), Some(NOW + 3600));
        assert_eq!(
            gemini_reset("Suggested retry after 12.2s.", NOW),
            Some(NOW + 13)
        );
        assert!(!is_gemini_usage_limit(
            "You have exhausted your daily quota on this model."
        ));
        assert_eq!(gemini_reset("Resource exhausted: fake 429", NOW), None);
    }

    #[test]
    fn an_agents_usage_limit_is_read_with_its_reset_when_its_words_name_one() {
        let utc = &TimeZone::UTC;
        let claude = r#"{"type":"result","is_error":true,"api_error":"usage_limit_reached","result":"You've hit your 5-hour limit · resets 12:14pm (UTC)"}"#;
        let l = agent_limit(Kind::Claude, claude, NOW, utc).unwrap();
        assert!(l.words.starts_with("You've hit your 5-hour limit"), "{l:?}");
        assert_eq!(l.until.map(stamp).as_deref(), Some("2026-11-24T12:15:00Z"));
        let bare = r#"{"type":"result","is_error":true,"api_error_status":429,"result":"Claude AI usage limit reached"}"#;
        assert_eq!(
            agent_limit(Kind::Claude, bare, NOW, utc).unwrap().until,
            None
        );
        let codex = "{\"type\":\"error\",\"message\":\"You\u{2019}ve hit your usage limit. try again at 11:27 PM.\"}";
        let l = agent_limit(Kind::Codex, codex, NOW, utc).unwrap();
        assert_eq!(l.until.map(stamp).as_deref(), Some("2026-11-24T23:28:00Z"));
        let gemini = "Error: quota\nSuggested retry after 60s.";
        assert_eq!(
            agent_limit(Kind::Gemini, gemini, NOW, utc).unwrap().until,
            Some(NOW + 60)
        );
        // A reset further than a pause reaches is a limit without a reset.
        let far = "Suggested retry after 99999999s.";
        assert_eq!(
            agent_limit(Kind::Gemini, far, NOW, utc).unwrap().until,
            None
        );
        assert_eq!(
            agent_limit(
                Kind::Claude,
                r#"{"is_error":false,"result":"done"}"#,
                NOW,
                utc
            ),
            None
        );
        assert_eq!(agent_limit(Kind::Codex, "all good\n", NOW, utc), None);
    }

    /// 'İ' lower-cases to three bytes, 'ẞ' to two: an index found in a lower-cased copy
    /// pointed elsewhere in the original, into the middle of 'é' (a panic) or past the
    /// hour (a reset misread).
    #[test]
    fn case_changing_letters_before_the_reset_neither_panic_nor_move_the_reading() {
        let utc = |w: &str| claude_reset(w, NOW, &known).map(stamp);
        assert_eq!(utc("İresets é5pm (UTC)"), None);
        assert_eq!(
            utc("ẞẞẞẞẞẞẞẞresets 5pm (UTC)").as_deref(),
            Some("2026-11-24T17:01:00Z")
        );
        assert_eq!(
            utc("İİ: you've hit your 5-hour limit · resets 5:44pm (UTC)").as_deref(),
            Some("2026-11-24T17:45:00Z")
        );
        assert_eq!(
            utc("RESETS NOV 26, 11:13PM (UTC)").as_deref(),
            Some("2026-11-26T23:14:00Z")
        );
        assert_eq!(codex_reset("İİİtry again at é", NOW, &TimeZone::UTC), None);
        let t = codex_reset("İstanbul: try again at 11:27 PM.", NOW, &TimeZone::UTC);
        assert_eq!(stamp(t.unwrap()), "2026-11-24T23:28:00Z");
        assert_eq!(gemini_reset("ẞİ retry after 60s", NOW), Some(NOW + 60));
        assert!(is_codex_usage_limit(
            "İ You\u{2019}ve hit your USAGE LIMIT. Try again at 1 PM"
        ));
        assert!(is_gemini_usage_limit("İ Suggested Retry After 5s"));
    }
}
