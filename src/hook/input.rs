//! The Stop hook's input (SPEC §4): one JSON object, every field optional.

use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    pub cwd: Option<String>,
    pub stop_hook_active: bool,
    pub hook_event_name: Option<String>,
}

impl Event {
    /// Fields of the wrong type are treated as absent: the hook must accept any input.
    pub fn parse(input: &[u8]) -> Result<Event, String> {
        if input.iter().all(u8::is_ascii_whitespace) {
            return Err(
                "Taskie: the Stop hook received no input on stdin, so it did nothing.".into(),
            );
        }
        let value: Value = serde_json::from_slice(input).map_err(|e| {
            format!("Taskie: the Stop hook input is not JSON ({e}), so it did nothing.")
        })?;
        let Value::Object(map) = value else {
            return Err(
                "Taskie: the Stop hook input is not a JSON object, so it did nothing.".into(),
            );
        };
        let text = |k: &str| map.get(k).and_then(Value::as_str).map(str::to_owned);
        Ok(Event {
            cwd: text("cwd").filter(|c| !c.is_empty()),
            stop_hook_active: map
                .get("stop_hook_active")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            hook_event_name: text("hook_event_name"),
        })
    }

    pub fn is_subagent_stop(&self) -> bool {
        self.hook_event_name.as_deref() == Some("SubagentStop")
    }
}

/// `TASKIE_HOOK_SKIP` set to anything but empty, `0` or `false` (SPEC §4).
pub fn skip_requested() -> bool {
    std::env::var_os("TASKIE_HOOK_SKIP")
        .is_some_and(|v| !(v.is_empty() || v == "0" || v == "false"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
                hook_event_name: Some("Stop".into())
            }
        );
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
