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

/// The event as read from `reader` (stdin), for [`Event::parse`]: as sent when it is under
/// `whole` bytes (every real stop: one read, no copy); a larger one, which a client sends
/// when the agent's last message is long (Gemini's `prompt_response`, Codex's
/// `last_assistant_message`), is read as a stream and reduced to the fields Taskie reads,
/// every other field skipped without being kept, so no field Taskie ignores can keep a
/// due review from running. A large input that is not a JSON object is returned as far
/// as it was read: its reading then says what is wrong.
pub fn read(mut reader: impl std::io::Read, whole: u64) -> Vec<u8> {
    use std::io::Read;
    let mut input = Vec::new();
    let _ = (&mut reader).take(whole).read_to_end(&mut input);
    if (input.len() as u64) < whole {
        return input;
    }
    let rest = std::io::Cursor::new(&input).chain(reader);
    match reduce(std::io::BufReader::with_capacity(64 * 1024, rest)) {
        Ok(reduced) => reduced,
        Err(_) => input,
    }
}

/// The names of the event's fields Taskie reads: [`Wire`]'s.
const FIELDS: [&str; 6] = [
    "cwd",
    "stop_hook_active",
    "hook_event_name",
    "session_id",
    "turn_id",
    "model",
];

/// A JSON object streamed from `reader`, as an object of [`FIELDS`] alone (of a field
/// given twice, the last, as the general reading keeps it).
fn reduce(reader: impl std::io::Read) -> Result<Vec<u8>, serde_json::Error> {
    struct Used(serde_json::Map<String, Value>);
    struct Fields;
    impl<'de> serde::de::Visitor<'de> for Fields {
        type Value = Used;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Used, A::Error> {
            let mut used = serde_json::Map::new();
            while let Some(key) = map.next_key::<String>()? {
                if FIELDS.contains(&key.as_str()) {
                    used.insert(key, map.next_value::<Value>()?);
                } else {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(Used(used))
        }
    }
    impl<'de> Deserialize<'de> for Used {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Used, D::Error> {
            d.deserialize_map(Fields)
        }
    }
    let mut de = serde_json::Deserializer::from_reader(reader);
    let used = Used::deserialize(&mut de)?;
    de.end()?;
    serde_json::to_vec(&Value::Object(used.0))
}

/// The event as sent: every field optional, unknown fields ignored. Each is kept as any
/// JSON value and read by its type below, so a field of the wrong type counts as absent:
/// the hook must accept any input.
#[derive(Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
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
    fn an_event_of_any_size_is_read_for_the_fields_taskie_uses() {
        let long = "x".repeat(300);
        for input in [
            format!(
                r#"{{"cwd":"/p","prompt_response":"{long}","stop_hook_active":true,"hook_event_name":"AfterAgent"}}"#
            ),
            format!(
                r#"{{"session_id":"a","last_assistant_message":["{long}",{{"y":"\u00e9\n"}}],"session_id":"b","turn_id":"t","model":"m"}}"#
            ),
            format!(r#"  {{"cwd":5,"stop_hook_active":"yes","x":"{long}"}}  "#),
        ] {
            let whole = Event::parse(input.as_bytes());
            // Read whole below the bound, streamed and reduced above it: the same event.
            let streamed = read(input.as_bytes(), 64);
            assert!(
                streamed.len() < input.len(),
                "{}",
                String::from_utf8_lossy(&streamed)
            );
            assert_eq!(Event::parse(&streamed), whole, "{input}");
            assert_eq!(read(input.as_bytes(), 4096), input.as_bytes());
        }
        // Not an object, or not JSON, past the bound: its reading says what is wrong.
        let list = format!("[\"{long}\"]");
        assert!(Event::parse(&read(list.as_bytes(), 64)).is_err());
        let broken = format!("{{\"cwd\":\"{long}");
        assert!(
            Event::parse(&read(broken.as_bytes(), 64))
                .unwrap_err()
                .contains("not JSON")
        );
    }

    #[test]
    fn the_streamed_reading_keeps_the_fields_the_direct_reading_has() {
        let wire = serde_json::to_value(Wire::default()).unwrap();
        let names: Vec<&String> = wire.as_object().unwrap().keys().collect();
        assert_eq!(names, FIELDS);
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
