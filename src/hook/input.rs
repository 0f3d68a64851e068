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
///
/// Reading stops at the end of the first complete JSON value, without waiting for the end
/// of input: a client that never closes the hook's stdin (seen with Claude Code under Git
/// Bash on Windows) must not hold every stop until the client's own timeout.
pub fn read(mut reader: impl std::io::Read, whole: u64) -> Vec<u8> {
    use std::io::Read;
    let mut input = Vec::new();
    let mut value = ValueEnd::default();
    let mut chunk = [0u8; 16 * 1024];
    while (input.len() as u64) < whole {
        let room = (whole - input.len() as u64).min(chunk.len() as u64) as usize;
        let n = match reader.read(&mut chunk[..room]) {
            Ok(0) => return input,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return input,
        };
        if let Some(end) = value.feed(&chunk[..n]) {
            input.extend_from_slice(&chunk[..end]);
            return input;
        }
        input.extend_from_slice(&chunk[..n]);
    }
    let rest = std::io::Cursor::new(&input).chain(reader);
    match reduce(std::io::BufReader::with_capacity(64 * 1024, rest)) {
        Ok(reduced) => reduced,
        Err(_) => input,
    }
}

/// Finds where the first JSON value of a stream ends, fed a piece at a time: it follows
/// strings and nesting only (the value's validity is the parser's to judge, afterwards).
/// An object, array or string ends at its closing byte; a bare number or word (never an
/// event, but the reading must say so, not wait) at the first byte that cannot continue it.
#[derive(Debug, Default)]
struct ValueEnd {
    state: Scan,
    depth: usize,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Scan {
    /// Before the value: whitespace only so far.
    #[default]
    Before,
    /// Inside an object or array, outside any string.
    Nested,
    /// Inside a string; `escaped` after a backslash.
    Text { escaped: bool },
    /// Inside a bare number or word at the top level.
    Bare,
}

impl ValueEnd {
    /// The length of `piece` up to and including the value's last byte, once it has ended.
    fn feed(&mut self, piece: &[u8]) -> Option<usize> {
        for (i, &b) in piece.iter().enumerate() {
            match self.state {
                Scan::Before => match b {
                    b' ' | b'\t' | b'\n' | b'\r' => {}
                    b'{' | b'[' => {
                        self.state = Scan::Nested;
                        self.depth = 1;
                    }
                    b'"' => self.state = Scan::Text { escaped: false },
                    _ => self.state = Scan::Bare,
                },
                Scan::Nested => match b {
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    b'"' => self.state = Scan::Text { escaped: false },
                    _ => {}
                },
                Scan::Text { escaped: true } => self.state = Scan::Text { escaped: false },
                Scan::Text { escaped: false } => match b {
                    b'\\' => self.state = Scan::Text { escaped: true },
                    b'"' if self.depth == 0 => return Some(i + 1),
                    b'"' => self.state = Scan::Nested,
                    _ => {}
                },
                Scan::Bare => {
                    if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'[' | b'"' | b',') {
                        return Some(i);
                    }
                }
            }
        }
        None
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
    // No check for the end of input after it: the value is all that is read.
    let used = Used::deserialize(&mut de)?;
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
            // Read up to the value's end: what follows it is never waited for.
            assert_eq!(read(input.as_bytes(), 4096), input.trim_end().as_bytes());
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

    /// A stdin that the client never closes: it gives `input` at most `piece` bytes a read,
    /// then fails the test on the read that would wait for more.
    struct NeverClosed<'a> {
        input: &'a [u8],
        piece: usize,
    }

    impl std::io::Read for NeverClosed<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            assert!(
                !self.input.is_empty(),
                "read on after the event's end: a client that keeps stdin open would hang the hook"
            );
            let n = self.piece.min(buf.len()).min(self.input.len());
            buf[..n].copy_from_slice(&self.input[..n]);
            self.input = &self.input[n..];
            Ok(n)
        }
    }

    #[test]
    fn reading_stops_after_one_complete_json_value_without_waiting_for_the_end_of_input() {
        let long = "y".repeat(200);
        for input in [
            r#"{"cwd":"/p","hook_event_name":"Stop"}"#.to_owned(),
            r#" {"a":"} \" { [","b":[{"c":"]"}],"cwd":"/q\\"}"#.to_owned(),
            format!(r#"{{"prompt_response":"{long}","stop_hook_active":true}}"#),
            "[1, [2], {\"x\": \"]\"}]".to_owned(),
            "\"text\"".to_owned(),
        ] {
            for piece in [1, 3, 64, 4096] {
                for whole in [64, 1 << 20] {
                    let got = read(
                        NeverClosed {
                            input: input.as_bytes(),
                            piece,
                        },
                        whole,
                    );
                    // Below the bound the value as sent, above it the fields Taskie reads.
                    if input.len() < whole as usize {
                        assert_eq!(got, input.as_bytes(), "{input} in pieces of {piece}");
                    }
                    let expected = Event::parse(input.as_bytes());
                    assert_eq!(Event::parse(&got), expected, "{input} in pieces of {piece}");
                }
            }
        }
    }

    #[test]
    fn the_value_s_end_is_where_serde_json_s_stream_reading_ends_it() {
        let values = [
            r#"{"cwd":"/p","stop_hook_active":true,"x":{"y":[1,{"z":"}]\"\\"}]}}"#,
            r#"  {}"#,
            r#"["a", "\u005d", []]"#,
            r#""a \" string""#,
            "17 ",
            "-1.5e3\n",
            "true ",
            "null,",
        ];
        for value in values {
            let followed = format!("{value} {{\"next\":1}}");
            let mut stream =
                serde_json::Deserializer::from_str(&followed).into_iter::<serde::de::IgnoredAny>();
            stream.next().unwrap().unwrap();
            let end = stream.byte_offset();
            for split in 0..followed.len() {
                let mut scan = ValueEnd::default();
                let (a, b) = followed.as_bytes().split_at(split);
                let found = scan.feed(a).or_else(|| scan.feed(b).map(|n| split + n));
                assert_eq!(found, Some(end), "{value} split at {split}");
            }
        }
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
