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

    /// For file names: `20261122T022405Z`.
    pub fn compact(&self) -> String {
        format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// Now in Unix seconds, for the usage-limit pause (SPEC §22): `TASKIE_TEST_NOW` when set
/// to a whole number, so tests reach a reset time without sleeping; the system clock
/// otherwise.
pub fn now_unix() -> i64 {
    if let Some(t) = crate::env::Var::TestNow
        .get()
        .and_then(|t| t.trim().parse::<i64>().ok())
    {
        return t;
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
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
}
