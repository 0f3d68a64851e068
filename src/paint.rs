//! Terminal output for people: colour only on a terminal and never with `NO_COLOR`
//! (no-color.org), and text wrapped to fit 80 columns.

/// Output width the human reports are laid out for.
pub const WIDTH: usize = 80;

/// Whether to colour: a terminal, no `NO_COLOR`, and not `TERM=dumb`.
fn colour(no_color: bool, term: Option<&str>, terminal: bool) -> bool {
    terminal && !no_color && term != Some("dumb")
}

/// `--color`: when to colour.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Choice {
    // On a terminal, unless `NO_COLOR` is set or `TERM=dumb`. (No doc comment: clap would
    // turn the one-line option help into a list of values.)
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    on: bool,
}

impl Paint {
    pub fn new(on: bool) -> Paint {
        Paint { on }
    }

    /// `--color`: `auto` detects, the others decide. `auto` colours when stdout is a
    /// `terminal`, `no_color` (`NO_COLOR` set and not empty) is false, and the terminal is
    /// not `TERM=dumb` (which shows escape codes as they are).
    pub fn choose(choice: Choice, no_color: bool, term: Option<&str>, terminal: bool) -> Paint {
        match choice {
            Choice::Auto => Paint::new(colour(no_color, term, terminal)),
            Choice::Always => Paint::new(true),
            Choice::Never => Paint::new(false),
        }
    }

    fn sgr(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn bold(&self, text: &str) -> String {
        self.sgr("1", text)
    }

    pub fn green(&self, text: &str) -> String {
        self.sgr("32", text)
    }

    pub fn yellow(&self, text: &str) -> String {
        self.sgr("33", text)
    }

    pub fn red(&self, text: &str) -> String {
        self.sgr("1;31", text)
    }

    pub fn dim(&self, text: &str) -> String {
        self.sgr("2", text)
    }
}

/// Wraps `text` at word boundaries so every line, `indent` included, fits `width`
/// columns; the first line is not indented (the caller has already written a label).
/// A word longer than a line is cut so nothing ever overflows.
pub fn wrap(text: &str, indent: usize, width: usize) -> String {
    let room = width.saturating_sub(indent).max(20);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word = word.to_owned();
        while word.chars().count() > room {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            let head: String = word.chars().take(room).collect();
            word = word.chars().skip(room).collect();
            lines.push(head);
        }
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > room {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines.join(&format!("\n{}", " ".repeat(indent)))
}

#[cfg(test)]
mod tests {

    #[test]
    fn colour_only_on_a_terminal_without_no_color_that_is_not_dumb() {
        assert!(colour(false, Some("xterm-256color"), true));
        assert!(colour(false, None, true));
        assert!(!colour(false, Some("dumb"), true));
        assert!(!colour(true, Some("xterm"), true));
        assert!(!colour(false, Some("xterm"), false));
    }
    use super::*;

    #[test]
    fn colour_is_added_only_when_on() {
        assert_eq!(Paint::new(false).red("x"), "x");
        assert_eq!(Paint::new(true).red("x"), "\x1b[1;31mx\x1b[0m");
    }

    #[test]
    fn wrapped_lines_fit_the_width_and_keep_every_word() {
        let text = "the quick brown fox jumps over the lazy dog ".repeat(6);
        let out = wrap(&text, 10, 40);
        for (i, line) in out.lines().enumerate() {
            let first = if i == 0 { 10 } else { 0 };
            assert!(line.chars().count() + first <= 40, "{line:?}");
        }
        let words: Vec<&str> = out.split_whitespace().collect();
        assert_eq!(words, text.split_whitespace().collect::<Vec<_>>());
    }

    #[test]
    fn a_word_longer_than_the_line_is_cut() {
        let long = "x".repeat(50);
        let out = wrap(&long, 0, 30);
        assert!(out.lines().all(|l| l.chars().count() <= 30), "{out}");
        assert_eq!(out.replace('\n', ""), long);
    }
}
