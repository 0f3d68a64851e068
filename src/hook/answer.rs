//! What the hook prints (SPEC §4): nothing, an allow with a message, or a block.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Let the agent stop; the message, if any, is shown to the user.
    Allow(Option<String>),
    /// The agent continues with `reason` as its instruction.
    Block { reason: String },
}

/// How a block reaches Claude Code (docs/claude-code.md has the evidence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Channel {
    /// `hookSpecificOutput.additionalContext`: the conversation continues with the text as
    /// context, `stop_hook_active` is set on the next stop and the consecutive-block cap
    /// applies, as for a block, but the user is not shown a "Stop hook blocking error".
    #[default]
    Context,
    /// `{"decision":"block","reason":…}`, for Claude Code versions that do not continue on
    /// additionalContext (`TASKIE_BLOCK_STYLE=decision`).
    Decision,
}

impl Channel {
    /// `TASKIE_BLOCK_STYLE`: `decision` chooses the classic block; anything else (or
    /// nothing) the context channel. `warn` hears about a value it does not know.
    pub fn from_env(warn: &mut dyn FnMut(String)) -> Channel {
        match std::env::var("TASKIE_BLOCK_STYLE").as_deref() {
            Err(_) | Ok("") | Ok("context") => Channel::Context,
            Ok("decision") => Channel::Decision,
            Ok(other) => {
                warn(format!(
                    "TASKIE_BLOCK_STYLE=\"{other}\" is not `context` or `decision`; using context"
                ));
                Channel::Context
            }
        }
    }
}

/// The JSON objects Claude Code reads from a Stop hook's stdout.
#[derive(Serialize)]
#[serde(untagged)]
enum Wire<'a> {
    Message {
        #[serde(rename = "systemMessage")]
        system_message: &'a str,
    },
    Decision {
        decision: &'static str,
        reason: &'a str,
    },
    Context {
        #[serde(rename = "hookSpecificOutput")]
        hook_specific_output: Context<'a>,
    },
}

#[derive(Serialize)]
struct Context<'a> {
    #[serde(rename = "hookEventName")]
    hook_event_name: &'static str,
    #[serde(rename = "additionalContext")]
    additional_context: &'a str,
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

    /// The stdout of the hook: empty for a silent allow, else one JSON object.
    /// An allow never carries `decision` or `continue`.
    pub fn to_stdout(&self, channel: Channel) -> String {
        let wire = match (self, channel) {
            (Answer::Allow(None), _) => return String::new(),
            (Answer::Allow(Some(m)), _) => Wire::Message { system_message: m },
            (Answer::Block { reason }, Channel::Decision) => Wire::Decision {
                decision: "block",
                reason,
            },
            (Answer::Block { reason }, Channel::Context) => Wire::Context {
                hook_specific_output: Context {
                    hook_event_name: "Stop",
                    additional_context: reason,
                },
            },
        };
        serde_json::to_string(&wire).expect("plain strings serialize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn parsed(a: &Answer, c: Channel) -> Value {
        serde_json::from_str(&a.to_stdout(c)).unwrap()
    }

    #[test]
    fn silent_allow_prints_nothing_and_allows_never_carry_a_decision() {
        assert_eq!(Answer::Allow(None).to_stdout(Channel::Context), "");
        let a = Answer::allow("hi \"there\"");
        for c in [Channel::Context, Channel::Decision] {
            assert_eq!(parsed(&a, c), json!({"systemMessage": "hi \"there\""}));
        }
    }

    #[test]
    fn a_block_continues_through_additional_context_by_default() {
        assert_eq!(
            parsed(&Answer::block("do it"), Channel::default()),
            json!({"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "do it"}})
        );
    }

    #[test]
    fn the_decision_channel_prints_decision_and_reason() {
        assert_eq!(
            parsed(&Answer::block("do it"), Channel::Decision),
            json!({"decision": "block", "reason": "do it"})
        );
    }
}
