//! The object of state.json as read: its top-level fields in file order, values as JSON.
//! A list rather than serde_json's map: a stop reads state.json every time, and the map
//! (an index map with a randomly keyed hasher) cost a bound stop about 9 000 of its
//! 167 000 instructions for a dozen fields (docs/performance.md). Lookups are linear;
//! there are few fields.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

#[derive(Debug, Clone, Default)]
pub struct Raw(Vec<(String, Value)>);

impl Raw {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// As serde_json's map does: a name seen again keeps its first place, with the last
    /// value.
    fn insert(&mut self, name: String, value: Value) {
        match self.0.iter_mut().find(|(k, _)| *k == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name, value)),
        }
    }

    pub fn to_map(&self) -> Map<String, Value> {
        self.0.iter().cloned().collect()
    }
}

impl From<Map<String, Value>> for Raw {
    fn from(map: Map<String, Value>) -> Raw {
        Raw(map.into_iter().collect())
    }
}

/// Equal as serde_json's maps are: the same fields with the same values, in any order.
impl PartialEq for Raw {
    fn eq(&self, other: &Raw) -> bool {
        self.0.len() == other.0.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Raw, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
                let mut raw = Raw(Vec::with_capacity(map.size_hint().unwrap_or(12)));
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    raw.insert(k, v);
                }
                Ok(raw)
            }
        }
        d.deserialize_map(Fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(text: &str) -> (Raw, Map<String, Value>) {
        (
            serde_json::from_str(text).unwrap(),
            serde_json::from_str(text).unwrap(),
        )
    }

    #[test]
    fn fields_are_read_in_file_order_as_the_map_reads_them() {
        for text in [
            r#"{"zeta": 1, "phase": "x", "alpha": [1, {"b": 2, "a": 1}], "n": null}"#,
            r#"{"a": 1, "b": 2, "a": 3}"#,
            "{}",
        ] {
            let (raw, map) = both(text);
            let from_map: Vec<(String, Value)> = map.clone().into_iter().collect();
            assert_eq!(raw.0, from_map, "{text}");
            assert_eq!(raw.to_map(), map, "{text}");
            assert_eq!(raw, Raw::from(map), "{text}");
        }
    }

    #[test]
    fn equality_ignores_order_as_the_map_does() {
        let (a, _) = both(r#"{"a": 1, "b": 2}"#);
        let (b, _) = both(r#"{"b": 2, "a": 1}"#);
        let (c, _) = both(r#"{"b": 2, "a": 2}"#);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn anything_but_an_object_is_refused() {
        for text in ["[]", "1", "\"x\"", "null"] {
            assert!(serde_json::from_str::<Raw>(text).is_err(), "{text}");
        }
    }
}
