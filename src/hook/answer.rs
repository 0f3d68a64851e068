//! What the hook prints (SPEC §4): nothing, an allow with a message, or a block.

use crate::model::host::Client;
use crate::model::text::clip;
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Let the agent stop; the message, if any, is shown to the user.
    Allow(Option<String>),
    /// The agent continues with `reason` as its instruction.
    Block { reason: String },
}

/// Claude Code truncates a block reason beyond these (SPEC §8).
pub const REASON_MAX_CHARS: usize = 2000;
pub const REASON_MAX_LINES: usize = 20;

/// A reason cut to under the line and character limits, marked with `…` where cut.
fn fit_reason(text: String) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let text = if lines.len() >= REASON_MAX_LINES {
        lines[..REASON_MAX_LINES - 1].join("\n") + "…"
    } else {
        text
    };
    clip(&text, REASON_MAX_CHARS - 1)
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
    /// `TASKIE_BLOCK_STYLE`: `decision` chooses the classic block; `context`, empty or
    /// unset the context channel. `None` for any other value.
    pub fn parse(value: Option<&str>) -> Option<Channel> {
        match value {
            None | Some("") | Some("context") => Some(Channel::Context),
            Some("decision") => Some(Channel::Decision),
            Some(_) => None,
        }
    }
}

impl Channel {
    /// The channel a client continues on (SPEC §20): Claude Code's is `style`
    /// (`TASKIE_BLOCK_STYLE`); Codex CLI rejects `hookSpecificOutput` ("Stop Failed") and
    /// Gemini CLI ignores it, so both get the classic block.
    pub fn for_client(client: Client, style: Channel) -> Channel {
        match client {
            Client::Claude => style,
            Client::Codex | Client::Gemini => Channel::Decision,
        }
    }
}

/// The one JSON object the hook prints, in the field order Claude Code documents.
#[derive(Serialize)]
struct Printed<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(rename = "hookSpecificOutput", skip_serializing_if = "Option::is_none")]
    hook_specific_output: Option<Context<'a>>,
    #[serde(rename = "systemMessage", skip_serializing_if = "Option::is_none")]
    system_message: Option<&'a str>,
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

    /// A block whose reason Claude Code shows whole: every block goes through here, so
    /// none (a long list of structure errors, many findings) is cut off mid-instruction.
    pub fn block(reason: impl Into<String>) -> Answer {
        Answer::Block {
            reason: fit_reason(reason.into()),
        }
    }

    /// The answer with `note` appended to its text (a block's reason is fitted again).
    pub fn with_note(self, note: &str) -> Answer {
        match self {
            Answer::Allow(Some(text)) => Answer::Allow(Some(format!("{text} {note}"))),
            Answer::Allow(None) => Answer::Allow(Some(note.to_string())),
            Answer::Block { reason } => Answer::block(format!("{reason} {note}")),
        }
    }

    pub fn is_block(&self) -> bool {
        matches!(self, Answer::Block { .. })
    }

    pub fn outcome(&self) -> &'static str {
        if self.is_block() { "block" } else { "allow" }
    }

    /// The text shown for this answer, whichever field carries it (for the tests).
    #[cfg(test)]
    pub fn text(&self) -> Option<&str> {
        match self {
            Answer::Allow(m) => m.as_deref(),
            Answer::Block { reason } => Some(reason),
        }
    }

    /// The object printed, `None` for a silent allow. An allow never carries
    /// `decision` or `continue`.
    fn printed(&self, channel: Channel) -> Option<Printed<'_>> {
        let none = Printed {
            decision: None,
            reason: None,
            hook_specific_output: None,
            system_message: None,
        };
        match (self, channel) {
            (Answer::Allow(None), _) => None,
            (Answer::Allow(Some(m)), _) => Some(Printed {
                system_message: Some(m),
                ..none
            }),
            (Answer::Block { reason }, Channel::Decision) => Some(Printed {
                decision: Some("block"),
                reason: Some(reason),
                ..none
            }),
            (Answer::Block { reason }, Channel::Context) => Some(Printed {
                hook_specific_output: Some(Context {
                    hook_event_name: "Stop",
                    additional_context: reason,
                }),
                ..none
            }),
        }
    }

    /// The stdout of the hook on `channel`: empty for a silent allow, else one object.
    /// A `notice` for the user (the plugin launcher's, docs/distribution.md) goes first in
    /// the `systemMessage`, so the hook stays the only writer of its one JSON object.
    pub fn to_stdout_on(&self, channel: Channel, notice: Option<&str>) -> String {
        let combined;
        let printed = match (self.printed(channel), notice.filter(|n| !n.is_empty())) {
            (p, None) => p,
            (None, Some(n)) => Some(Printed {
                decision: None,
                reason: None,
                hook_specific_output: None,
                system_message: Some(n),
            }),
            (Some(mut p), Some(n)) => {
                combined = match p.system_message {
                    Some(m) => format!("{n}\n\n{m}"),
                    None => n.to_owned(),
                };
                p.system_message = Some(&combined);
                Some(p)
            }
        };
        match printed {
            None => String::new(),
            Some(p) => serde_json::to_string(&p).expect("strings always serialize"),
        }
    }

    /// This answer as it is printed on `channel`.
    pub fn on(self, channel: Channel) -> Shown {
        Shown {
            answer: self,
            channel,
        }
    }
}

/// An answer with the channel it is printed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub answer: Answer,
    pub channel: Channel,
}

impl Shown {
    /// The stdout of the hook, empty for a silent allow.
    pub fn to_stdout(&self) -> String {
        self.answer.to_stdout_on(self.channel, None)
    }
}

/// As what the hook prints: the object, or `null` for a silent allow (the dry run's
/// report embeds answers this way).
impl Serialize for Shown {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.answer.printed(self.channel).serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silent_allow_prints_nothing_and_allows_never_carry_a_decision() {
        assert_eq!(Answer::Allow(None).to_stdout_on(Channel::Context, None), "");
        for c in [Channel::Context, Channel::Decision] {
            assert_eq!(
                Answer::allow("hi \"there\"").to_stdout_on(c, None),
                r#"{"systemMessage":"hi \"there\""}"#
            );
        }
    }

    #[test]
    fn a_block_continues_through_additional_context_by_default() {
        assert_eq!(
            Answer::block("do it").to_stdout_on(Channel::default(), None),
            r#"{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"do it"}}"#
        );
    }

    #[test]
    fn the_decision_channel_prints_decision_and_reason() {
        assert_eq!(
            Answer::block("do it").to_stdout_on(Channel::Decision, None),
            r#"{"decision":"block","reason":"do it"}"#
        );
    }

    #[test]
    fn a_launcher_notice_leads_the_system_message_of_every_answer() {
        let c = Channel::Context;
        let n = Some("update the plugin");
        assert_eq!(
            Answer::Allow(None).to_stdout_on(c, n),
            r#"{"systemMessage":"update the plugin"}"#
        );
        assert_eq!(
            Answer::allow("m").to_stdout_on(c, n),
            r#"{"systemMessage":"update the plugin\n\nm"}"#
        );
        assert_eq!(
            Answer::block("do it").to_stdout_on(c, n),
            r#"{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"do it"},"systemMessage":"update the plugin"}"#
        );
        assert_eq!(
            Answer::block("do it").to_stdout_on(Channel::Decision, n),
            r#"{"decision":"block","reason":"do it","systemMessage":"update the plugin"}"#
        );
        assert_eq!(Answer::Allow(None).to_stdout_on(c, Some("")), "");
    }

    #[test]
    fn every_block_reason_stays_within_what_claude_code_shows() {
        let long = Answer::block("x".repeat(5000));
        assert_eq!(long.text().unwrap().chars().count(), REASON_MAX_CHARS - 1);
        let tall = Answer::block(vec!["line"; 40].join("\n"));
        assert_eq!(tall.text().unwrap().lines().count(), REASON_MAX_LINES - 1);
        assert_eq!(Answer::block("short").text(), Some("short"));
    }

    #[test]
    fn the_block_style_is_read_from_its_variable() {
        assert_eq!(Channel::parse(None), Some(Channel::Context));
        assert_eq!(Channel::parse(Some("context")), Some(Channel::Context));
        assert_eq!(Channel::parse(Some("decision")), Some(Channel::Decision));
        assert_eq!(Channel::parse(Some("loud")), None);
    }

    #[test]
    fn an_embedded_answer_is_its_printed_object_or_null() {
        let c = Channel::Context;
        assert_eq!(
            serde_json::to_string(&Answer::Allow(None).on(c)).unwrap(),
            "null"
        );
        assert_eq!(
            serde_json::to_string(&Answer::allow("m").on(c)).unwrap(),
            r#"{"systemMessage":"m"}"#
        );
        assert_eq!(
            serde_json::to_string(&Answer::block("b").on(Channel::Decision)).unwrap(),
            r#"{"decision":"block","reason":"b"}"#
        );
    }

    #[test]
    fn codex_and_gemini_are_answered_with_the_classic_block_whatever_the_block_style() {
        for client in [Client::Codex, Client::Gemini] {
            assert_eq!(
                Channel::for_client(client, Channel::Context),
                Channel::Decision
            );
            let out = Answer::block("go")
                .to_stdout_on(Channel::for_client(client, Channel::Context), None);
            assert!(!out.contains("hookSpecificOutput"), "{out}");
        }
    }
}
