//! Who reviews (SPEC §18): the reviewer kinds, the `"<kind>:<model>"` entries of the
//! optional `reviewers` list, the review mode, and which reviewers run at an iteration.

use std::fmt;

/// The rule a model name obeys, in words, for every message that refuses one.
pub const MODEL_RULE: &str =
    "a model name matching ^[A-Za-z0-9._\\[\\]-]+$ that does not start with \"-\"";

/// `review_model` reaches a command line, so it is restricted (SPEC §8): no character a
/// shell or a CLI would read as more than a name, and no leading `-`, which a CLI would
/// take for an option (`claude:--dangerously-skip-permissions`).
pub fn valid_model(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._[]-".contains(&b))
}

/// A reviewer program family; each has its own command line and output (SPEC §18).
pub type Kind = crate::model::vendor::Vendor;

/// One entry of `reviewers`: a kind and the model it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reviewer {
    pub kind: Kind,
    pub model: String,
}

impl Reviewer {
    /// `"codex:gpt-5-codex"` → codex with model gpt-5-codex. The model reaches a command
    /// line, so it obeys the same rule as `review_model` (SPEC §8).
    pub fn parse(text: &str) -> Result<Reviewer, String> {
        let (kind, model) = text.split_once(':').ok_or_else(|| {
            format!("\"{text}\" is not \"<kind>:<model>\" (for example \"codex:gpt-5-codex\")")
        })?;
        let kind = Kind::from_name(kind).ok_or_else(|| {
            format!("\"{text}\": the kind \"{kind}\" is not one of claude, codex, gemini")
        })?;
        if !valid_model(model) {
            return Err(format!(
                "\"{text}\": the model \"{model}\" must be {MODEL_RULE}"
            ));
        }
        Ok(Reviewer {
            kind,
            model: model.into(),
        })
    }
}

impl fmt::Display for Reviewer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind.name(), self.model)
    }
}

/// `review_mode`: one reviewer per iteration in turn, or all of them together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, strum::EnumString, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Mode {
    #[default]
    Alternate,
    Panel,
}

impl Mode {
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn from_name(name: &str) -> Option<Mode> {
        name.parse().ok()
    }
}

/// The reviewers of iteration `n` (≥ 1): all of them in a panel, otherwise
/// `reviewers[(n-1) mod len]`. An empty list means the §8 reviewer: claude with
/// `review_model`.
pub fn for_iteration(list: &[Reviewer], mode: Mode, n: u64, review_model: &str) -> Vec<Reviewer> {
    if list.is_empty() {
        return vec![Reviewer {
            kind: Kind::Claude,
            model: review_model.into(),
        }];
    }
    match mode {
        Mode::Panel => list.to_vec(),
        Mode::Alternate => {
            let i = (n.saturating_sub(1) % list.len() as u64) as usize;
            vec![list[i].clone()]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Vec<Reviewer> {
        items.iter().map(|s| Reviewer::parse(s).unwrap()).collect()
    }

    #[test]
    fn entries_name_a_known_kind_and_a_safe_model() {
        assert_eq!(
            Reviewer::parse("codex:gpt-5-codex").unwrap(),
            Reviewer {
                kind: Kind::Codex,
                model: "gpt-5-codex".into()
            }
        );
        assert!(
            Reviewer::parse("opus")
                .unwrap_err()
                .contains("<kind>:<model>")
        );
        assert!(
            Reviewer::parse("gpt:4")
                .unwrap_err()
                .contains("claude, codex, gemini")
        );
        assert!(
            Reviewer::parse("claude:op us")
                .unwrap_err()
                .contains("must be a model name matching")
        );
        assert!(
            Reviewer::parse("claude:--dangerously-skip-permissions")
                .unwrap_err()
                .contains("does not start with \"-\"")
        );
        assert!(Reviewer::parse("claude:").is_err());
        assert_eq!(
            Reviewer::parse("gemini:gemini-2.5-pro")
                .unwrap()
                .to_string(),
            "gemini:gemini-2.5-pro"
        );
    }

    #[test]
    fn alternate_takes_the_reviewers_in_turn_by_iteration() {
        let l = list(&["claude:opus", "codex:gpt-5-codex"]);
        let at = |n| for_iteration(&l, Mode::Alternate, n, "opus")[0].to_string();
        assert_eq!(at(1), "claude:opus");
        assert_eq!(at(2), "codex:gpt-5-codex");
        assert_eq!(at(3), "claude:opus");
        assert_eq!(at(u64::MAX), "claude:opus");
    }

    #[test]
    fn a_panel_runs_every_reviewer_and_no_list_means_claude_with_review_model() {
        let l = list(&["claude:opus", "gemini:gemini-2.5-pro"]);
        assert_eq!(for_iteration(&l, Mode::Panel, 3, "opus"), l);
        assert_eq!(
            for_iteration(&[], Mode::Panel, 1, "sonnet"),
            list(&["claude:sonnet"])
        );
    }
}
