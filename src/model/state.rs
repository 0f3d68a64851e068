//! state.json (SPEC §3): typed reading with defaults and old-writer tolerance, and a
//! read-modify-write that keeps unknown fields and key order.

use crate::model::phase::{self, Phase};
use crate::model::reviewers::{Mode, Reviewer, valid_model};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

/// The typed view of state.json. `raw` keeps the object as read, so a write changes
/// only the fields taskie owns and leaves everything else where it was.
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
    raw: Map<String, Value>,
}

/// What a field may hold; drives reading, `taskie state set` and the error texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Count { min: u64 },
    OptionalCount,
    Text,
    OptionalPhase,
    Model,
    Flag,
    Reviewers,
    ReviewMode,
    OptionalMoney,
}

impl Kind {
    fn expected(self) -> String {
        match self {
            Kind::Count { min } => format!("a whole number ≥ {min}"),
            Kind::OptionalCount => "a whole number ≥ 0, or null".into(),
            Kind::Text => "a string".into(),
            Kind::OptionalPhase => "null or a phase name".into(),
            Kind::Model => "a model name matching ^[A-Za-z0-9._\\[\\]-]+$".into(),
            Kind::Flag => "true or false".into(),
            Kind::Reviewers => {
                "a list of \"<kind>:<model>\" with kind claude, codex or gemini".into()
            }
            Kind::ReviewMode => "\"alternate\" or \"panel\"".into(),
            Kind::OptionalMoney => "an amount of US dollars ≥ 0, or null".into(),
        }
    }
}

/// A field of state.json: name, kind, default, and whether it belongs to the
/// established format (always written) or is optional (written only when set).
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub default: &'static str,
    pub established: bool,
}

pub const FIELDS: [Field; 14] = [
    field("max_reviews", Kind::Count { min: 0 }, "8", true),
    field("current_task", Kind::OptionalCount, "null", true),
    field("phase", Kind::Text, "\"\"", true),
    field("next_phase", Kind::OptionalPhase, "null", true),
    field("phase_iteration", Kind::OptionalCount, "null", true),
    field("review_model", Kind::Model, "\"opus\"", true),
    field("consecutive_clean", Kind::Count { min: 0 }, "0", true),
    field("tdd", Kind::Flag, "false", true),
    field("review_failures", Kind::Count { min: 0 }, "0", false),
    field("clean_reviews_required", Kind::Count { min: 1 }, "2", false),
    field("auto_continue", Kind::Flag, "false", false),
    field("reviewers", Kind::Reviewers, "[]", false),
    field("review_mode", Kind::ReviewMode, "\"alternate\"", false),
    field("max_cost_usd", Kind::OptionalMoney, "null", false),
];

const fn field(name: &'static str, kind: Kind, default: &'static str, established: bool) -> Field {
    Field {
        name,
        kind,
        default,
        established,
    }
}

impl Field {
    pub fn default_value(&self) -> Value {
        serde_json::from_str(self.default).unwrap_or(Value::Null)
    }
}

/// The fields and what each may hold, one per line, for `taskie state set --help`.
pub fn fields_help() -> String {
    let width = FIELDS.iter().map(|f| f.name.len()).max().unwrap_or(0);
    let mut text = String::from("Fields (state.json, SPEC §3):\n");
    for f in &FIELDS {
        text.push_str(&format!(
            "  {:width$}  {} (default {})\n",
            f.name,
            f.kind.expected(),
            f.default
        ));
    }
    text.push_str(
        "Setting next_phase to a review phase other than the one in progress starts a new review cycle.",
    );
    text
}

pub fn find_field(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}

/// A state serializes as it is stored (see [`State::to_json`]).
impl Serialize for State {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.stored().serialize(s)
    }
}

/// One field with a value it may not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    pub field: String,
    pub value: String,
    pub expected: String,
    pub example: String,
}

impl fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "field \"{}\" is {}, expected {}; fix it with `taskie state set {}={}`",
            self.field, self.value, self.expected, self.field, self.example
        )
    }
}

/// Why state.json could not be used. The file is never modified in these cases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateError {
    /// The file exists but could not be read (permissions, not a file, …).
    Unreadable(String),
    NotJson(String),
    NotObject,
    Fields(Vec<FieldProblem>),
}

impl StateError {
    /// The problem and how to fix it, for plan `plan`. Recreating state.json is offered
    /// only with what it costs: it restarts the plan.
    pub fn explain(&self, plan: &str) -> String {
        let recreate = format!(
            "or recreate it with `taskie init {plan} --force`, which restarts the plan at its plan review \
             (the progress recorded in state.json is lost)"
        );
        match self {
            StateError::NotJson(_) => {
                format!("{self}; repair it by hand at that position, {recreate}")
            }
            StateError::NotObject => format!("{self}; repair it by hand, {recreate}"),
            _ => self.to_string(),
        }
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::Unreadable(e) => {
                write!(f, "state.json cannot be read ({e}); check its permissions")
            }
            // serde_json's text ends with the line and column of the problem.
            StateError::NotJson(e) => write!(f, "state.json is not valid JSON ({e})"),
            StateError::NotObject => f.write_str("state.json must hold a JSON object"),
            StateError::Fields(problems) => {
                let parts: Vec<String> =
                    problems.iter().map(|p| format!("state.json {p}")).collect();
                f.write_str(&parts.join("; "))
            }
        }
    }
}

impl Default for State {
    fn default() -> Self {
        State {
            max_reviews: 8,
            current_task: None,
            phase: String::new(),
            next_phase: None,
            phase_iteration: None,
            review_model: "opus".into(),
            consecutive_clean: 0,
            tdd: false,
            review_failures: 0,
            clean_reviews_required: 2,
            auto_continue: false,
            reviewers: Vec::new(),
            review_mode: Mode::Alternate,
            max_cost_usd: None,
            raw: Map::new(),
        }
    }
}

impl State {
    pub fn parse(bytes: &[u8]) -> Result<State, StateError> {
        State::from_object(State::object(bytes)?)
    }

    /// The JSON object of state.json as stored. A UTF-8 byte order mark, which some
    /// editors write, is not part of the JSON and is skipped.
    pub fn object(bytes: &[u8]) -> Result<Map<String, Value>, StateError> {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        match serde_json::from_slice(bytes) {
            Ok(Value::Object(raw)) => Ok(raw),
            Ok(_) => Err(StateError::NotObject),
            Err(e) => Err(StateError::NotJson(e.to_string())),
        }
    }

    pub fn from_object(raw: Map<String, Value>) -> Result<State, StateError> {
        let mut state = State {
            raw,
            ..State::default()
        };
        let mut problems = Vec::new();
        for f in &FIELDS {
            if let Some(v) = state.raw.get(f.name).cloned()
                && let Err(p) = state.apply(f, &v)
            {
                problems.push(p);
            }
        }
        if problems.is_empty() {
            Ok(state)
        } else {
            Err(StateError::Fields(problems))
        }
    }

    /// Sets one field from a JSON value, with the reading rules of SPEC §3.
    fn apply(&mut self, f: &Field, v: &Value) -> Result<(), FieldProblem> {
        let bad = || FieldProblem {
            field: f.name.into(),
            value: short(v),
            expected: f.kind.expected(),
            example: example(f),
        };
        match (f.name, f.kind) {
            (_, Kind::Count { min }) => {
                let n = count(v).filter(|n| *n >= min).ok_or_else(bad)?;
                match f.name {
                    "max_reviews" => self.max_reviews = n,
                    "consecutive_clean" => self.consecutive_clean = n,
                    "review_failures" => self.review_failures = n,
                    _ => self.clean_reviews_required = n,
                }
            }
            (_, Kind::OptionalCount) => {
                let n = if v.is_null() {
                    None
                } else {
                    Some(count(v).ok_or_else(bad)?)
                };
                match f.name {
                    "current_task" => self.current_task = n,
                    _ => self.phase_iteration = n,
                }
            }
            (_, Kind::Text) => self.phase = v.as_str().ok_or_else(bad)?.to_owned(),
            (_, Kind::OptionalPhase) => {
                self.next_phase = match v {
                    Value::Null => None,
                    Value::String(s) => Some(s.clone()),
                    _ => return Err(bad()),
                }
            }
            (_, Kind::Model) => {
                let s = v.as_str().filter(|s| valid_model(s)).ok_or_else(bad)?;
                self.review_model = s.to_owned();
            }
            (_, Kind::Flag) => {
                let b = v.as_bool().ok_or_else(bad)?;
                match f.name {
                    "tdd" => self.tdd = b,
                    _ => self.auto_continue = b,
                }
            }
            (_, Kind::Reviewers) => {
                let items = v.as_array().ok_or_else(bad)?;
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    let text = item.as_str().ok_or_else(bad)?;
                    list.push(Reviewer::parse(text).map_err(|why| FieldProblem {
                        expected: format!("{} ({why})", f.kind.expected()),
                        ..bad()
                    })?);
                }
                self.reviewers = list;
            }
            (_, Kind::ReviewMode) => {
                self.review_mode = v.as_str().and_then(Mode::from_name).ok_or_else(bad)?;
            }
            (_, Kind::OptionalMoney) => {
                self.max_cost_usd = match v {
                    Value::Null => None,
                    _ => Some(money(v).ok_or_else(bad)?),
                }
            }
        }
        Ok(())
    }

    /// `taskie state set FIELD=VALUE`: the same rules as reading, from command-line text.
    /// `next_phase` must also be a known phase name here.
    pub fn set_from_text(&mut self, name: &str, text: &str) -> Result<(), String> {
        let Some(f) = find_field(name) else {
            let names: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
            return Err(format!(
                "unknown field \"{name}\"; the fields are: {}",
                names.join(", ")
            ));
        };
        let value = match f.kind {
            Kind::Text | Kind::Model | Kind::ReviewMode => Value::String(text.into()),
            // `claude:opus,codex:gpt-5-codex`, or the JSON array itself.
            Kind::Reviewers if !text.trim_start().starts_with('[') => Value::Array(
                text.split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(|t| Value::String(t.into()))
                    .collect(),
            ),
            Kind::OptionalPhase if text != "null" && !phase::is_known(text) => {
                return Err(format!(
                    "next_phase \"{text}\" is not a phase; use null or one of: {}",
                    phase::PHASES.join(", ")
                ));
            }
            Kind::OptionalPhase if text == "null" => Value::Null,
            Kind::OptionalPhase => Value::String(text.into()),
            _ => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into())),
        };
        self.apply(f, &value).map_err(|p| p.to_string())
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
        let mut out = self.raw.clone();
        for f in &FIELDS {
            let v = self.value_of(f.name);
            if f.established || out.contains_key(f.name) || v != f.default_value() {
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
            out.insert(f.name.into(), self.value_of(f.name));
        }
        for (k, v) in &self.raw {
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

    /// The canonical JSON value of a known field.
    pub fn value_of(&self, name: &str) -> Value {
        match name {
            "max_reviews" => self.max_reviews.into(),
            "current_task" => self.current_task.into(),
            "phase" => self.phase.clone().into(),
            "next_phase" => self.next_phase.clone().into(),
            "phase_iteration" => self.phase_iteration.into(),
            "review_model" => self.review_model.clone().into(),
            "consecutive_clean" => self.consecutive_clean.into(),
            "tdd" => self.tdd.into(),
            "review_failures" => self.review_failures.into(),
            "clean_reviews_required" => self.clean_reviews_required.into(),
            "auto_continue" => self.auto_continue.into(),
            "reviewers" => self
                .reviewers
                .iter()
                .map(|r| Value::String(r.to_string()))
                .collect(),
            "review_mode" => self.review_mode.name().into(),
            "max_cost_usd" => self.max_cost_usd.into(),
            _ => self.raw.get(name).cloned().unwrap_or(Value::Null),
        }
    }
}

/// A non-negative integer, or a string holding one (older writers produced those).
fn count(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => crate::model::text::decimal(s),
        _ => None,
    }
}

/// A finite amount ≥ 0, or a string holding one.
fn money(v: &Value) -> Option<f64> {
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }?;
    (n.is_finite() && n >= 0.0).then_some(n)
}

/// A valid value to suggest in a fix; an empty default is shown quoted so the
/// suggested command still reads as setting a value.
fn example(f: &Field) -> String {
    match f.kind {
        Kind::Reviewers => return "claude:opus,codex:gpt-5-codex".into(),
        Kind::OptionalMoney => return "5".into(),
        _ => {}
    }
    match f.default.trim_matches('"') {
        "" => "\"\"".into(),
        d => d.into(),
    }
}

/// A value as shown in a message, cut so a huge value cannot flood the output.
fn short(v: &Value) -> String {
    crate::model::text::clip(&v.to_string(), 61)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<State, StateError> {
        State::parse(s.as_bytes())
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
                "must match",
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
