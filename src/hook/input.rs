//! The Stop hook's input (SPEC §4): one JSON object, every field optional.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    pub cwd: Option<String>,
    pub stop_hook_active: bool,
    pub hook_event_name: Option<String>,
    /// The stopping session (SPEC §17); absent in older clients.
    pub session_id: Option<String>,
    /// Codex CLI's turn id and model: its Stop event has both, Claude Code's neither
    /// (SPEC §20).
    pub turn_id: Option<String>,
    pub model: Option<String>,
}

/// The event as sent: every field optional, unknown fields ignored. Each is kept as any
/// JSON value and read by its type below, so a field of the wrong type counts as absent:
/// the hook must accept any input.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Wire {
    cwd: Value,
    stop_hook_active: Value,
    hook_event_name: Value,
    session_id: Value,
    turn_id: Value,
    model: Value,
}

impl Event {
    pub fn parse(input: &[u8]) -> Result<Event, String> {
        if input.iter().all(u8::is_ascii_whitespace) {
            return Err(crate::hook::message::bad_input(
                "received no input on stdin",
            ));
        }
        // An object read straight into its fields: no map of every field the client sent
        // (a map hashes each name, with a randomly keyed hasher whose keys cost a system
        // call; docs/performance.md). Anything else, or an object this reading refuses (a
        // field given twice), goes the general way, which says exactly what is wrong.
        let object = input.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        if object && let Ok(wire) = serde_json::from_slice::<Wire>(input) {
            return Ok(Event::from(wire));
        }
        Self::wire_of_any(input).map(Event::from)
    }

    /// The general reading: any JSON value first, then its fields.
    fn wire_of_any(input: &[u8]) -> Result<Wire, String> {
        let value: Value = serde_json::from_slice(input)
            .map_err(|e| crate::hook::message::bad_input(&format!("input is not JSON ({e})")))?;
        if !value.is_object() {
            return Err(crate::hook::message::bad_input(
                "input is not a JSON object",
            ));
        }
        Wire::deserialize(value)
            .map_err(|e| crate::hook::message::bad_input(&format!("input could not be read ({e})")))
    }

    pub fn is_subagent_stop(&self) -> bool {
        self.hook_event_name.as_deref() == Some("SubagentStop")
    }
}

impl From<Wire> for Event {
    fn from(wire: Wire) -> Event {
        let text = |v: Value| match v {
            Value::String(s) => Some(s),
            _ => None,
        };
        let nonempty = |v: Value| text(v).filter(|s| !s.is_empty());
        Event {
            cwd: nonempty(wire.cwd),
            stop_hook_active: wire.stop_hook_active.as_bool().unwrap_or(false),
            hook_event_name: text(wire.hook_event_name),
            session_id: nonempty(wire.session_id),
            turn_id: nonempty(wire.turn_id),
            model: nonempty(wire.model),
        }
    }
}

/// The recursion guard (SPEC §4), read from this process's environment.
pub fn skip_requested() -> bool {
    crate::store::project::inside_reviewer()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_direct_reading_gives_what_the_general_one_gives() {
        for input in [
            r#"{"cwd":"/p","stop_hook_active":true,"hook_event_name":"Stop","x":{"y":[1,{"z":2}]}}"#,
            r#" {"session_id":"a","session_id":"b"}"#,
            r#"{"cwd":5,"stop_hook_active":"yes","turn_id":"","model":null}"#,
            "[]",
            r#"["/p", true]"#,
            "{nope",
            "{} x",
            "\u{feff}{}",
            "7",
        ] {
            let general = Event::wire_of_any(input.as_bytes()).map(Event::from);
            assert_eq!(Event::parse(input.as_bytes()), general, "{input}");
        }
    }

    #[test]
    fn reads_the_used_fields_and_ignores_the_rest() {
        let e =
            Event::parse(br#"{"cwd":"/p","stop_hook_active":true,"hook_event_name":"Stop","x":1}"#)
                .unwrap();
        assert_eq!(
            e,
            Event {
                cwd: Some("/p".into()),
                stop_hook_active: true,
                hook_event_name: Some("Stop".into()),
                session_id: None,
                turn_id: None,
                model: None,
            }
        );
    }

    #[test]
    fn the_session_id_is_read_when_it_is_a_string() {
        let e = Event::parse(br#"{"session_id":"abc-1"}"#).unwrap();
        assert_eq!(e.session_id.as_deref(), Some("abc-1"));
        let e = Event::parse(br#"{"session_id":7}"#).unwrap();
        assert_eq!(e.session_id, None);
    }

    #[test]
    fn wrong_types_count_as_absent() {
        let e = Event::parse(br#"{"cwd":5,"stop_hook_active":"yes"}"#).unwrap();
        assert_eq!(e, Event::default());
    }

    #[test]
    fn empty_non_json_and_non_objects_are_named() {
        assert!(Event::parse(b"  \n").unwrap_err().contains("no input"));
        assert!(Event::parse(b"{nope").unwrap_err().contains("not JSON"));
        assert!(
            Event::parse(b"[1]")
                .unwrap_err()
                .contains("not a JSON object")
        );
    }
}
