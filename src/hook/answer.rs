//! What the hook prints (SPEC §4): nothing, an allow with a message, or a block.

use serde::{Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Let the agent stop; the message, if any, is shown to the user.
    Allow(Option<String>),
    /// The agent continues with `reason` as its instruction.
    Block { reason: String },
}

/// The one JSON object the hook prints, in the field order Claude Code documents.
#[derive(Serialize)]
struct Printed<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(rename = "systemMessage", skip_serializing_if = "Option::is_none")]
    system_message: Option<&'a str>,
}

impl Answer {
    pub fn allow(message: impl Into<String>) -> Answer {
        Answer::Allow(Some(message.into()))
    }

    pub fn block(reason: impl Into<String>) -> Answer {
        Answer::Block {
            reason: reason.into(),
        }
    }

    pub fn is_block(&self) -> bool {
        matches!(self, Answer::Block { .. })
    }

    pub fn outcome(&self) -> &'static str {
        if self.is_block() { "block" } else { "allow" }
    }

    /// The text shown for this answer, whichever field carries it.
    pub fn text(&self) -> Option<&str> {
        match self {
            Answer::Allow(m) => m.as_deref(),
            Answer::Block { reason } => Some(reason),
        }
    }

    /// The object printed, `None` for a silent allow. An allow never carries
    /// `decision` or `continue`.
    fn printed(&self) -> Option<Printed<'_>> {
        match self {
            Answer::Allow(None) => None,
            Answer::Allow(Some(m)) => Some(Printed {
                decision: None,
                reason: None,
                system_message: Some(m),
            }),
            Answer::Block { reason } => Some(Printed {
                decision: Some("block"),
                reason: Some(reason),
                system_message: None,
            }),
        }
    }

    /// The stdout of the hook: empty for a silent allow, else one JSON object.
    pub fn to_stdout(&self) -> String {
        match self.printed() {
            None => String::new(),
            Some(p) => serde_json::to_string(&p).expect("strings always serialize"),
        }
    }
}

/// As what the hook prints: the object, or `null` for a silent allow (the dry run's
/// report embeds answers this way).
impl Serialize for Answer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.printed().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silent_allow_prints_nothing_and_allows_never_carry_a_decision() {
        assert_eq!(Answer::Allow(None).to_stdout(), "");
        let out = Answer::allow("hi \"there\"").to_stdout();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v, serde_json::json!({"systemMessage": "hi \"there\""}));
    }

    #[test]
    fn block_prints_decision_and_reason() {
        assert_eq!(
            Answer::block("do it").to_stdout(),
            r#"{"decision":"block","reason":"do it"}"#
        );
    }

    #[test]
    fn an_embedded_answer_is_its_printed_object_or_null() {
        assert_eq!(serde_json::to_string(&Answer::Allow(None)).unwrap(), "null");
        assert_eq!(
            serde_json::to_string(&Answer::allow("m")).unwrap(),
            r#"{"systemMessage":"m"}"#
        );
    }
}
