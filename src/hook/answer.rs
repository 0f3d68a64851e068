//! What the hook prints (SPEC §4): nothing, an allow with a message, or a block.

use serde_json::json;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Let the agent stop; the message, if any, is shown to the user.
    Allow(Option<String>),
    /// The agent continues with `reason` as its instruction.
    Block {
        reason: String,
        message: Option<String>,
    },
}

impl Answer {
    pub fn allow(message: impl Into<String>) -> Answer {
        Answer::Allow(Some(message.into()))
    }

    pub fn block(reason: impl Into<String>) -> Answer {
        Answer::Block {
            reason: reason.into(),
            message: None,
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
            Answer::Block { reason, .. } => Some(reason),
        }
    }

    /// The stdout of the hook: empty for a silent allow, else one JSON object.
    /// An allow never carries `decision` or `continue`.
    pub fn to_stdout(&self) -> String {
        match self {
            Answer::Allow(None) => String::new(),
            Answer::Allow(Some(m)) => json!({ "systemMessage": m }).to_string(),
            Answer::Block {
                reason,
                message: None,
            } => json!({ "decision": "block", "reason": reason }).to_string(),
            Answer::Block {
                reason,
                message: Some(m),
            } => json!({ "decision": "block", "reason": reason, "systemMessage": m }).to_string(),
        }
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
        let v: serde_json::Value =
            serde_json::from_str(&Answer::block("do it").to_stdout()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"decision": "block", "reason": "do it"})
        );
    }
}
