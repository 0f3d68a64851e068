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

/// `text` from a file as one line of a prompt: every control character (a NUL, an escape
/// sequence's ESC, a line break) becomes a space, and it is [`clip`]ped to `max`
/// characters, so no file can break the prompt's layout or smuggle terminal codes in.
pub fn prompt_line(text: &str, max: usize) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    clip(&cleaned, max)
}

/// A length of time as status and the messages show it: `3m 04s`, `75m 00s`.
pub fn minutes_seconds(secs: u64) -> String {
    format!("{}m {:02}s", secs / 60, secs % 60)
}

/// The candidate `word` was most likely meant to be, for a "did you mean" hint: the
/// nearest by edit distance, if it is close (at most a third of the word's length, and at
/// least one edit allowed). Ties go to the first candidate.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (distance(word, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Edit distance (insertions, deletions, substitutions, and swaps of two neighbours).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// ` (did you mean "x"?)`, or nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!(" (did you mean \"{c}\"?)"))
        .unwrap_or_default()
}

/// `arg` as a POSIX shell word: as it is when it holds only characters no shell treats
/// specially, else in single quotes (a quote inside as `'\''`), so a printed command line
/// can be copied and run.
pub fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=@%+,-".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_line_has_no_control_characters_and_is_bounded() {
        assert_eq!(
            prompt_line("a\0b\x1b[31mc\r\nd\te\u{85}f", 100),
            "a b [31mc  d e f"
        );
        assert_eq!(prompt_line("ééééé", 3), "éé…");
    }

    #[test]
    fn shell_words_are_quoted_only_when_they_need_it() {
        assert_eq!(shell_quote("--model"), "--model");
        assert_eq!(shell_quote("/usr/bin/claude"), "/usr/bin/claude");
        assert_eq!(shell_quote("{\"a\":1}"), "'{\"a\":1}'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn a_near_miss_is_suggested_and_a_far_one_is_not() {
        let fields = ["max_reviews", "max_cost_usd", "phase", "tdd"];
        assert_eq!(closest("max_review", fields), Some("max_reviews"));
        assert_eq!(
            closest("plan-reveiw", ["plan-review", "code-review"]),
            Some("plan-review")
        );
        assert_eq!(closest("colour", fields), None);
        assert_eq!(did_you_mean("tdb", fields), " (did you mean \"tdd\"?)");
        assert_eq!(did_you_mean("xyz", fields), "");
    }

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
