//! Small text rules every part needs: how a number is written in names and fields, how
//! a long text is cut for a message, how a length of time is shown.

/// One or more ASCII digits that fit in a u64. `str::parse` alone would accept `+1`,
/// and task ids, iterations and old-style string fields must be plain decimals.
pub fn decimal(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `text` cut to at most `max` characters, the last one an ellipsis when it was cut, so a
/// huge value cannot flood a message or a table.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// A length of time as status and the messages show it: `3m 04s`, `75m 00s`.
pub fn minutes_seconds(secs: u64) -> String {
    format!("{}m {:02}s", secs / 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_plain_digits_that_fit() {
        assert_eq!(decimal("007"), Some(7));
        assert_eq!(decimal("18446744073709551615"), Some(u64::MAX));
        for bad in ["", "+1", "-1", "1.0", " 1", "18446744073709551616", "１"] {
            assert_eq!(decimal(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn clipping_marks_the_cut() {
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
        assert_eq!(clip("ééééé", 3), "éé…");
    }
}
