//! state.json (SPEC §3): typed reading with defaults and old-writer tolerance, and a
//! read-modify-write that keeps unknown fields and key order. The fields are one table
//! (`field.rs`); the errors and their fixes are in `error.rs`.

mod error;
mod field;
mod raw;

pub use error::{FieldProblem, StateError};
pub use field::{FIELDS, Field, Slot, ValueKind, fields_help, find_field, unknown_field};

use raw::Raw;

use crate::model::phase::Phase;
use crate::model::reviewers::{Mode, Reviewer};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// Reviews allowed per cycle when state.json does not say (SPEC §3).
pub const DEFAULT_MAX_REVIEWS: u64 = 8;

/// The model a cycle starts with (SPEC §1).
pub const FIRST_MODEL: &str = "opus";

/// The typed view of state.json. `raw` keeps the object as read, so a write changes
/// only the fields taskie owns and leaves everything else where it was. A field added
/// here is added to `field::FIELDS` too: `the_table_has_every_field` fails until it is.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    pub max_reviews: u64,
    pub current_task: Option<u64>,
    pub phase: String,
    pub next_phase: Option<String>,
    pub phase_iteration: Option<u64>,
    pub review_model: String,
    pub consecutive_clean: u64,
    pub tdd: bool,
    pub review_failures: u64,
    pub clean_reviews_required: u64,
    pub auto_continue: bool,
    /// SPEC §18: empty means the §8 reviewer (claude with `review_model`).
    pub reviewers: Vec<Reviewer>,
    pub review_mode: Mode,
    /// The plan's review budget in US dollars; `None` is no budget.
    pub max_cost_usd: Option<f64>,
    /// SPEC §22: no reviewer runs before this instant (Unix seconds): a reviewer's usage
    /// limit resets then.
    pub paused_until: Option<i64>,
    /// Who paused the plan and what it said, for the message while paused.
    pub paused_by: Option<String>,
    raw: Raw,
}

/// A state serializes as it is stored (see [`State::to_json`]).
impl Serialize for State {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.stored().serialize(s)
    }
}

impl Default for State {
    fn default() -> Self {
        State {
            max_reviews: DEFAULT_MAX_REVIEWS,
            current_task: None,
            phase: String::new(),
            next_phase: None,
            phase_iteration: None,
            review_model: FIRST_MODEL.into(),
            consecutive_clean: 0,
            tdd: false,
            review_failures: 0,
            clean_reviews_required: 2,
            auto_continue: false,
            reviewers: Vec::new(),
            review_mode: Mode::Alternate,
            max_cost_usd: None,
            paused_until: None,
            paused_by: None,
            raw: Raw::default(),
        }
    }
}

/// The tag of state.json's bytes `bytes` (FNV-1a, 64 bits, in hex). A ledger entry written
/// before the state that records it names the state by this tag (`findings.rs`,
/// `spend.rs`): the entry counts when state.json is that state. A hash fixed here, not
/// std's, whose output may change between releases while a file written by one is read
/// by the next.
pub fn tag(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

impl State {
    pub fn parse(bytes: &[u8]) -> Result<State, StateError> {
        match serde_json::from_slice::<Raw>(without_bom(bytes)) {
            Ok(raw) => State::from_raw(raw),
            // The errors (not JSON, not an object) exactly as the general reader gives them.
            Err(_) => State::from_object(State::object(bytes)?),
        }
    }

    /// The JSON object of state.json as stored.
    pub fn object(bytes: &[u8]) -> Result<Map<String, Value>, StateError> {
        match serde_json::from_slice(without_bom(bytes)) {
            Ok(Value::Object(raw)) => Ok(raw),
            Ok(_) => Err(StateError::NotObject),
            Err(e) => Err(StateError::NotJson(e.to_string())),
        }
    }

    pub fn from_object(raw: Map<String, Value>) -> Result<State, StateError> {
        State::from_raw(Raw::from(raw))
    }

    fn from_raw(raw: Raw) -> Result<State, StateError> {
        let mut state = State {
            raw,
            ..State::default()
        };
        let mut problems = Vec::new();
        for f in &FIELDS {
            if let Some(v) = state.raw.get(f.name).cloned()
                && let Err(p) = f.set(&mut state, &v)
            {
                problems.push(p);
            }
        }
        if !problems.is_empty() {
            return Err(StateError::Fields(problems));
        }
        let misspelt: Vec<(String, &'static str)> = state
            .raw
            .keys()
            .filter(|k| find_field(k).is_none())
            .filter_map(|k| {
                crate::model::text::closest(k, FIELDS.iter().map(|f| f.name))
                    .map(|f| (k.clone(), f))
            })
            .collect();
        if misspelt.is_empty() {
            Ok(state)
        } else {
            Err(StateError::Misspelt(misspelt))
        }
    }

    /// `taskie state set FIELD=VALUE`: the same rules as reading, from command-line text.
    /// `next_phase` must also be a known phase name here.
    pub fn set_from_text(&mut self, name: &str, text: &str) -> Result<(), String> {
        let Some(f) = find_field(name) else {
            return Err(unknown_field(name));
        };
        let value = field::value_from_text(f, text)?;
        f.set(self, &value).map_err(|p| p.to_string())
    }

    /// The JSON text to store: canonical types, unknown fields and key order kept,
    /// pretty-printed with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a JSON object always serializes");
        text.push('\n');
        text
    }

    /// The object as stored: the fields read, in their order, with taskie's fields
    /// in canonical types; established fields always, optional ones when set.
    fn stored(&self) -> Map<String, Value> {
        let mut out = self.raw.to_map();
        let defaults = State::default();
        for f in &FIELDS {
            let v = f.get(self);
            if f.established || out.contains_key(f.name) || v != f.get(&defaults) {
                out.insert(f.name.into(), v);
            }
        }
        out
    }

    /// The effective value of every field, defaults filled in, then the unknown fields
    /// in the order they were read.
    pub fn all_fields(&self) -> Value {
        let mut out = Map::new();
        for f in &FIELDS {
            out.insert(f.name.into(), f.get(self));
        }
        for (k, v) in self.raw.iter() {
            out.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(out)
    }

    /// `next_phase` as a phase; `Some(Err(name))` for a name that is not one, which a
    /// file may hold (SPEC §5 step 11 reports it).
    pub fn next(&self) -> Option<Result<Phase, &str>> {
        self.next_phase.as_deref().map(|n| Phase::parse(n).ok_or(n))
    }

    /// `next_phase` when it is a phase name.
    pub fn scheduled(&self) -> Option<Phase> {
        self.next().and_then(Result::ok)
    }

    /// `phase` when it is a phase name (it may hold any string: it is informational).
    pub fn last(&self) -> Option<Phase> {
        Phase::parse(&self.phase)
    }

    pub fn set_phase(&mut self, p: Phase) {
        self.phase = p.name().into();
    }

    pub fn schedule(&mut self, next: Option<Phase>) {
        self.next_phase = next.map(|p| p.name().into());
    }

    /// The state in one line, as refusals show it.
    pub fn describe(&self) -> String {
        let opt = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_else(|| "null".into());
        format!(
            "phase {}, next_phase {}, phase_iteration {}, current_task {}",
            if self.phase.is_empty() {
                "\"\""
            } else {
                &self.phase
            },
            self.next_phase.as_deref().unwrap_or("null"),
            opt(self.phase_iteration),
            opt(self.current_task)
        )
    }

    /// The canonical JSON value of a field, known or not (`null` when absent).
    pub fn value_of(&self, name: &str) -> Value {
        match find_field(name) {
            Some(f) => f.get(self),
            None => self.raw.get(name).cloned().unwrap_or(Value::Null),
        }
    }
}

/// A UTF-8 byte order mark, which some editors write, is not part of the JSON.
fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_every_field() {
        // Naming every field without `..`: a field added to `State` fails to compile
        // here, as a reminder to add it to `field::FIELDS` and to this list.
        let State {
            max_reviews: _,
            current_task: _,
            phase: _,
            next_phase: _,
            phase_iteration: _,
            review_model: _,
            consecutive_clean: _,
            tdd: _,
            review_failures: _,
            clean_reviews_required: _,
            auto_continue: _,
            reviewers: _,
            review_mode: _,
            max_cost_usd: _,
            paused_until: _,
            paused_by: _,
            raw: _,
        } = State::default();
        let owned = 16;
        assert_eq!(
            FIELDS.len(),
            owned,
            "every field but raw is in field::FIELDS"
        );
    }

    fn parse(s: &str) -> Result<State, StateError> {
        State::parse(s.as_bytes())
    }

    #[test]
    fn state_json_reads_as_the_general_reader_reads_it() {
        for text in [
            r#"{"phase":"x","zeta":{"b":1,"a":2},"max_reviews":"3"}"#,
            r#"{"phase":"x","phase":"y"}"#,
            "\u{feff}{\"tdd\":true}",
            r#"{"max_reviews":"lots"}"#,
            r#"{"max_revews":3}"#,
            "[]",
            "[1,",
            "{",
            "",
            "null",
        ] {
            let general = State::object(text.as_bytes()).and_then(State::from_object);
            let read = parse(text);
            assert_eq!(read, general, "{text}");
            if let (Ok(read), Ok(general)) = (&read, &general) {
                assert_eq!(read.to_json(), general.to_json(), "{text}");
            }
        }
    }

    #[test]
    fn missing_fields_take_their_defaults() {
        let s = parse("{}").unwrap();
        assert_eq!(
            (
                s.max_reviews,
                s.review_model.as_str(),
                s.clean_reviews_required
            ),
            (8, "opus", 2)
        );
        assert_eq!(
            (s.current_task, s.phase_iteration, s.next_phase.clone()),
            (None, None, None)
        );
    }

    #[test]
    fn numeric_strings_are_accepted_and_written_back_as_numbers() {
        let s = parse(r#"{"max_reviews":"3","phase_iteration":"2","current_task":"7"}"#).unwrap();
        assert_eq!(
            (s.max_reviews, s.phase_iteration, s.current_task),
            (3, Some(2), Some(7))
        );
        let v: Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(v["max_reviews"], 3);
        assert_eq!(v["current_task"], 7);
    }

    #[test]
    fn wrong_types_are_state_errors_naming_field_value_and_fix() {
        for (json, field, fix) in [
            (
                r#"{"max_reviews":"lots"}"#,
                "max_reviews",
                "taskie state set max_reviews=8",
            ),
            (
                r#"{"max_reviews":-1}"#,
                "max_reviews",
                "taskie state set max_reviews=8",
            ),
            (r#"{"tdd":"yes"}"#, "tdd", "taskie state set tdd=false"),
            (
                r#"{"current_task":1.5}"#,
                "current_task",
                "taskie state set current_task=null",
            ),
            (
                r#"{"current_task":"-2"}"#,
                "current_task",
                "taskie state set current_task=null",
            ),
            (
                r#"{"clean_reviews_required":0}"#,
                "clean_reviews_required",
                "clean_reviews_required=2",
            ),
            (
                r#"{"review_model":"op us"}"#,
                "review_model",
                "taskie state set review_model=opus",
            ),
            (r#"{"phase":3}"#, "phase", "taskie state set phase=\"\""),
            (r#"{"next_phase":true}"#, "next_phase", "next_phase=null"),
        ] {
            let err = parse(json).unwrap_err().to_string();
            assert!(err.contains(&format!("\"{field}\"")), "{err}");
            assert!(err.contains(fix), "{err}");
            assert!(err.contains("expected"), "{err}");
        }
    }

    #[test]
    fn every_bad_field_is_reported() {
        let err = parse(r#"{"max_reviews":"x","tdd":1}"#).unwrap_err();
        assert!(
            matches!(&err, StateError::Fields(p) if p.len() == 2),
            "{err:?}"
        );
    }

    #[test]
    fn non_objects_and_bad_json_are_errors() {
        assert_eq!(parse("[]").unwrap_err(), StateError::NotObject);
        assert!(matches!(parse("{").unwrap_err(), StateError::NotJson(_)));
    }

    #[test]
    fn writes_keep_unknown_fields_and_key_order() {
        let text =
            "{\n  \"zeta\": 1,\n  \"phase\": \"x\",\n  \"alpha\": [1, 2],\n  \"max_reviews\": 5\n}";
        let mut s = parse(text).unwrap();
        s.phase = "y".into();
        let out = s.to_json();
        let keys: Vec<String> = serde_json::from_str::<Map<String, Value>>(&out)
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(&keys[..4], ["zeta", "phase", "alpha", "max_reviews"]);
        assert!(out.ends_with("}\n"));
        assert!(out.contains("\"alpha\": [\n"));
    }

    #[test]
    fn optional_fields_are_written_only_when_set() {
        let mut s = parse("{}").unwrap();
        assert!(!s.to_json().contains("review_failures"));
        s.review_failures = 1;
        assert!(s.to_json().contains("\"review_failures\": 1"));
        let mut again = parse(&s.to_json()).unwrap();
        again.review_failures = 0;
        assert!(
            again.to_json().contains("\"review_failures\": 0"),
            "a present field stays present"
        );
    }

    #[test]
    fn set_from_text_follows_the_reading_rules() {
        let mut s = State::default();
        s.set_from_text("max_reviews", "4").unwrap();
        s.set_from_text("current_task", "null").unwrap();
        s.set_from_text("next_phase", "code-review").unwrap();
        s.set_from_text("tdd", "true").unwrap();
        assert_eq!(
            (s.max_reviews, s.next_phase.as_deref(), s.tdd),
            (4, Some("code-review"), true)
        );
        assert!(s.set_from_text("max_reviews", "lots").is_err());
        assert!(
            s.set_from_text("next_phase", "bogus")
                .unwrap_err()
                .contains("plan-review")
        );
        assert!(
            s.set_from_text("nope", "1")
                .unwrap_err()
                .contains("max_reviews")
        );
        assert_eq!(s.max_reviews, 4, "a refused value changes nothing");
    }

    #[test]
    fn next_phase_reads_as_a_phase_and_an_unknown_name_stays_readable() {
        let s = State::parse(br#"{"phase":"whatever","next_phase":"code-review"}"#).unwrap();
        assert_eq!(s.next(), Some(Ok(Phase::CodeReview)));
        assert_eq!((s.scheduled(), s.last()), (Some(Phase::CodeReview), None));
        let s = State::parse(br#"{"next_phase":"lunch"}"#).unwrap();
        assert_eq!((s.next(), s.scheduled()), (Some(Err("lunch")), None));
        let mut s = State::default();
        s.set_phase(Phase::PostCodeReview);
        s.schedule(Some(Phase::CodeReview));
        assert_eq!(
            (s.phase.as_str(), s.next_phase.as_deref()),
            ("post-code-review", Some("code-review"))
        );
        s.schedule(None);
        assert_eq!(s.next(), None);
    }

    #[test]
    fn reviewers_mode_and_budget_are_read_set_and_written_only_when_set() {
        let s = parse("{}").unwrap();
        let text = s.to_json();
        for name in ["reviewers", "review_mode", "max_cost_usd"] {
            assert!(
                !text.contains(&format!("\"{name}\"")),
                "{name} is optional: {text}"
            );
        }
        let mut s = State::default();
        s.set_from_text("reviewers", "claude:opus, codex:gpt-5-codex")
            .unwrap();
        s.set_from_text("review_mode", "panel").unwrap();
        s.set_from_text("max_cost_usd", "2.5").unwrap();
        assert_eq!(s.reviewers.len(), 2);
        assert_eq!((s.review_mode, s.max_cost_usd), (Mode::Panel, Some(2.5)));
        let v: Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(
            v["reviewers"],
            serde_json::json!(["claude:opus", "codex:gpt-5-codex"])
        );
        assert_eq!(v["review_mode"], "panel");
        assert_eq!(v["max_cost_usd"], 2.5);
        s.set_from_text("reviewers", r#"["gemini:gemini-2.5-pro"]"#)
            .unwrap();
        assert_eq!(s.reviewers[0].to_string(), "gemini:gemini-2.5-pro");
        s.set_from_text("max_cost_usd", "null").unwrap();
        assert_eq!(s.max_cost_usd, None);
    }

    #[test]
    fn bad_reviewers_mode_or_budget_name_the_field_the_value_and_the_fix() {
        for (json, field, needle) in [
            (
                r#"{"reviewers":"claude:opus"}"#,
                "reviewers",
                "reviewers=claude:opus,codex:gpt-5-codex",
            ),
            (
                r#"{"reviewers":["gpt:4"]}"#,
                "reviewers",
                "not one of claude, codex, gemini",
            ),
            (
                r#"{"reviewers":["claude:op us"]}"#,
                "reviewers",
                "must be a model name matching",
            ),
            (
                r#"{"review_mode":"both"}"#,
                "review_mode",
                "review_mode=alternate",
            ),
            (r#"{"max_cost_usd":-1}"#, "max_cost_usd", "max_cost_usd=5"),
            (r#"{"max_cost_usd":"lots"}"#, "max_cost_usd", "US dollars"),
        ] {
            let err = parse(json).unwrap_err().to_string();
            assert!(err.contains(&format!("\"{field}\"")), "{err}");
            assert!(err.contains(needle), "{err}");
        }
        let mut s = State::default();
        assert!(s.set_from_text("reviewers", "codex").is_err());
        assert!(s.set_from_text("review_mode", "Panel").is_err());
        assert!(s.set_from_text("max_cost_usd", "inf").is_err());
        assert!(s.reviewers.is_empty(), "a refused value changes nothing");
    }
}
