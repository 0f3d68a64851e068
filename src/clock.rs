//! UTC timestamps without a date-time dependency: the hook needs two formats only.

use std::time::{SystemTime, UNIX_EPOCH};

/// A UTC instant split into calendar fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utc {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub millis: u32,
}

impl Utc {
    pub fn now() -> Utc {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Utc::from_unix_millis(since.as_millis() as i64)
    }

    pub fn from_unix_millis(ms: i64) -> Utc {
        let secs = ms.div_euclid(1000);
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let (year, month, day) = civil_from_days(days);
        Utc {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            millis: ms.rem_euclid(1000) as u32,
        }
    }

    /// RFC 3339, e.g. `2026-11-22T02:24:05.123Z`.
    pub fn rfc3339(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.millis
        )
    }

    /// Milliseconds since 1970-01-01T00:00:00Z.
    pub fn unix_millis(&self) -> i64 {
        let days = days_from_civil(self.year, self.month, self.day);
        let secs = days * 86_400
            + i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second);
        secs * 1000 + i64::from(self.millis)
    }

    /// Reads back what [`Utc::rfc3339`] wrote (exactly that shape); `None` otherwise.
    pub fn parse_rfc3339(s: &str) -> Option<Utc> {
        let b = s.as_bytes();
        let shape = b.len() == 24
            && b[4] == b'-'
            && b[7] == b'-'
            && b[10] == b'T'
            && b[13] == b':'
            && b[16] == b':'
            && b[19] == b'.'
            && b[23] == b'Z';
        if !shape {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<u32> {
            let t = s.get(r)?;
            t.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| t.parse().ok())?
        };
        let t = Utc {
            year: i64::from(num(0..4)?),
            month: num(5..7)?,
            day: num(8..10)?,
            hour: num(11..13)?,
            minute: num(14..16)?,
            second: num(17..19)?,
            millis: num(20..23)?,
        };
        let valid = (1..=12).contains(&t.month)
            && (1..=31).contains(&t.day)
            && t.hour < 24
            && t.minute < 60
            && t.second < 60;
        valid.then_some(t)
    }

    /// For file names: `20261122T022405Z`.
    pub fn compact(&self) -> String {
        format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// Now in Unix seconds, for the usage-limit pause (SPEC §22): the system clock, or in a
/// test build `TASKIE_TEST_NOW` when set to a whole number, so tests reach a reset time
/// without sleeping.
pub fn now_unix() -> i64 {
    test_now().unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    })
}

/// `TASKIE_TEST_NOW`, compiled only with debug assertions as `cargo test` builds the
/// binaries it runs (the same gate as the pause point, docs/reliability.md): what users
/// run reads the real clock whatever the environment says.
#[cfg(debug_assertions)]
fn test_now() -> Option<i64> {
    crate::env::Var::TestNow
        .get()
        .and_then(|t| t.trim().parse::<i64>().ok())
}

/// Release builds: never.
#[cfg(not(debug_assertions))]
#[inline(always)]
fn test_now() -> Option<i64> {
    None
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar,
/// by counting 400-year eras from 0000-03-01 so leap days fall at the end of a year.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The inverse of [`civil_from_days`].
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(
            Utc::from_unix_millis(0).rfc3339(),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(
            Utc::from_unix_millis(951_782_400_000).rfc3339(),
            "2000-02-29T00:00:00.000Z"
        );
        let t = Utc::from_unix_millis(1_795_314_245_123);
        assert_eq!(t.rfc3339(), "2026-11-22T02:24:05.123Z");
        assert_eq!(t.compact(), "20261122T022405Z");
    }

    #[test]
    fn an_instant_reads_back_from_its_rfc3339_text() {
        for ms in [0, 951_782_400_000, 1_795_314_245_123, 4_102_444_799_999] {
            let t = Utc::from_unix_millis(ms);
            let back = Utc::parse_rfc3339(&t.rfc3339()).unwrap();
            assert_eq!((back, back.unix_millis()), (t, ms));
        }
        for bad in [
            "",
            "2026-11-22T02:24:05Z",
            "2026-13-22T02:24:05.123Z",
            "2026-11-22T02:24:05.12xZ",
        ] {
            assert_eq!(Utc::parse_rfc3339(bad), None, "{bad}");
        }
    }
}
