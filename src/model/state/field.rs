//! The fields of state.json (SPEC §3): one table. Each entry names the field, says what
//! it may hold and whether it is always written, and carries the getter and setter that
//! reach it in [`State`]; reading, writing, `taskie state set` and the help all go through
//! it, so a field is wired in one place. Defaults are `State::default()`'s.

use crate::model::phase;
use crate::model::reviewers::{Mode, Reviewer, valid_model};
use crate::model::state::State;
use crate::model::state::error::FieldProblem;
use serde_json::Value;

/// What a field may hold, in words for the error texts and the help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Count { min: u64 },
    OptionalCount,
    Text,
    OptionalPhase,
    Model,
    Flag,
    Reviewers,
    ReviewMode,
    OptionalMoney,
    OptionalTime,
    OptionalText,
}

impl ValueKind {
    pub fn expected(self) -> String {
        match self {
            ValueKind::Count { min } => format!("a whole number ≥ {min}"),
            ValueKind::OptionalCount => "a whole number ≥ 0, or null".into(),
            ValueKind::Text => "a string".into(),
            ValueKind::OptionalPhase => "null or a phase name".into(),
            ValueKind::Model => crate::model::reviewers::MODEL_RULE.into(),
            ValueKind::Flag => "true or false".into(),
            ValueKind::Reviewers => {
                "a list of \"<kind>:<model>\" with kind claude, codex or gemini".into()
            }
            ValueKind::ReviewMode => "\"alternate\" or \"panel\"".into(),
            ValueKind::OptionalMoney => "an amount of US dollars ≥ 0, or null".into(),
            ValueKind::OptionalTime => {
                "null or an RFC 3339 instant such as \"2026-11-24T23:27:00Z\"".into()
            }
            ValueKind::OptionalText => "a string, or null".into(),
        }
    }
}

/// Where a field lives in [`State`], typed: a getter and a setter of the field's own type.
#[derive(Clone, Copy)]
pub enum Slot {
    Count {
        min: u64,
        get: fn(&State) -> u64,
        set: fn(&mut State, u64),
    },
    OptionalCount {
        get: fn(&State) -> Option<u64>,
        set: fn(&mut State, Option<u64>),
    },
    Text {
        get: fn(&State) -> &str,
        set: fn(&mut State, String),
    },
    OptionalPhase {
        get: fn(&State) -> Option<&str>,
        set: fn(&mut State, Option<String>),
    },
    Model {
        get: fn(&State) -> &str,
        set: fn(&mut State, String),
    },
    Flag {
        get: fn(&State) -> bool,
        set: fn(&mut State, bool),
    },
    Reviewers {
        get: fn(&State) -> &[Reviewer],
        set: fn(&mut State, Vec<Reviewer>),
    },
    ReviewMode {
        get: fn(&State) -> Mode,
        set: fn(&mut State, Mode),
    },
    OptionalMoney {
        get: fn(&State) -> Option<f64>,
        set: fn(&mut State, Option<f64>),
    },
    /// An instant in Unix seconds, stored as RFC 3339 text.
    OptionalTime {
        get: fn(&State) -> Option<i64>,
        set: fn(&mut State, Option<i64>),
    },
    OptionalText {
        get: fn(&State) -> Option<&str>,
        set: fn(&mut State, Option<String>),
    },
}

/// A field of state.json: its name, where it lives, and whether it belongs to the
/// established format (always written) or is optional (written only when set).
pub struct Field {
    pub name: &'static str,
    pub slot: Slot,
    pub established: bool,
}

/// Every field taskie owns, in the order they are written.
pub const FIELDS: [Field; 16] = [
    Field {
        name: "max_reviews",
        slot: Slot::Count {
            min: 0,
            get: |s| s.max_reviews,
            set: |s, v| s.max_reviews = v,
        },
        established: true,
    },
    Field {
        name: "current_task",
        slot: Slot::OptionalCount {
            get: |s| s.current_task,
            set: |s, v| s.current_task = v,
        },
        established: true,
    },
    Field {
        name: "phase",
        slot: Slot::Text {
            get: |s| &s.phase,
            set: |s, v| s.phase = v,
        },
        established: true,
    },
    Field {
        name: "next_phase",
        slot: Slot::OptionalPhase {
            get: |s| s.next_phase.as_deref(),
            set: |s, v| s.next_phase = v,
        },
        established: true,
    },
    Field {
        name: "phase_iteration",
        slot: Slot::OptionalCount {
            get: |s| s.phase_iteration,
            set: |s, v| s.phase_iteration = v,
        },
        established: true,
    },
    Field {
        name: "review_model",
        slot: Slot::Model {
            get: |s| &s.review_model,
            set: |s, v| s.review_model = v,
        },
        established: true,
    },
    Field {
        name: "consecutive_clean",
        slot: Slot::Count {
            min: 0,
            get: |s| s.consecutive_clean,
            set: |s, v| s.consecutive_clean = v,
        },
        established: true,
    },
    Field {
        name: "tdd",
        slot: Slot::Flag {
            get: |s| s.tdd,
            set: |s, v| s.tdd = v,
        },
        established: true,
    },
    Field {
        name: "review_failures",
        slot: Slot::Count {
            min: 0,
            get: |s| s.review_failures,
            set: |s, v| s.review_failures = v,
        },
        established: false,
    },
    Field {
        name: "clean_reviews_required",
        slot: Slot::Count {
            min: 1,
            get: |s| s.clean_reviews_required,
            set: |s, v| s.clean_reviews_required = v,
        },
        established: false,
    },
    Field {
        name: "auto_continue",
        slot: Slot::Flag {
            get: |s| s.auto_continue,
            set: |s, v| s.auto_continue = v,
        },
        established: false,
    },
    Field {
        name: "reviewers",
        slot: Slot::Reviewers {
            get: |s| &s.reviewers,
            set: |s, v| s.reviewers = v,
        },
        established: false,
    },
    Field {
        name: "review_mode",
        slot: Slot::ReviewMode {
            get: |s| s.review_mode,
            set: |s, v| s.review_mode = v,
        },
        established: false,
    },
    Field {
        name: "max_cost_usd",
        slot: Slot::OptionalMoney {
            get: |s| s.max_cost_usd,
            set: |s, v| s.max_cost_usd = v,
        },
        established: false,
    },
    Field {
        name: "paused_until",
        slot: Slot::OptionalTime {
            get: |s| s.paused_until,
            set: |s, v| s.paused_until = v,
        },
        established: false,
    },
    Field {
        name: "paused_by",
        slot: Slot::OptionalText {
            get: |s| s.paused_by.as_deref(),
            set: |s, v| s.paused_by = v,
        },
        established: false,
    },
];

impl Field {
    pub fn kind(&self) -> ValueKind {
        match self.slot {
            Slot::Count { min, .. } => ValueKind::Count { min },
            Slot::OptionalCount { .. } => ValueKind::OptionalCount,
            Slot::Text { .. } => ValueKind::Text,
            Slot::OptionalPhase { .. } => ValueKind::OptionalPhase,
            Slot::Model { .. } => ValueKind::Model,
            Slot::Flag { .. } => ValueKind::Flag,
            Slot::Reviewers { .. } => ValueKind::Reviewers,
            Slot::ReviewMode { .. } => ValueKind::ReviewMode,
            Slot::OptionalMoney { .. } => ValueKind::OptionalMoney,
            Slot::OptionalTime { .. } => ValueKind::OptionalTime,
            Slot::OptionalText { .. } => ValueKind::OptionalText,
        }
    }

    /// The field's canonical JSON value in `s`.
    pub fn get(&self, s: &State) -> Value {
        match self.slot {
            Slot::Count { get, .. } => get(s).into(),
            Slot::OptionalCount { get, .. } => get(s).into(),
            Slot::Text { get, .. } | Slot::Model { get, .. } => get(s).into(),
            Slot::OptionalPhase { get, .. } => get(s).into(),
            Slot::Flag { get, .. } => get(s).into(),
            Slot::Reviewers { get, .. } => get(s)
                .iter()
                .map(|r| Value::String(r.to_string()))
                .collect(),
            Slot::ReviewMode { get, .. } => get(s).name().into(),
            Slot::OptionalMoney { get, .. } => get(s).into(),
            Slot::OptionalTime { get, .. } => get(s).map(crate::model::pause::stamp).into(),
            Slot::OptionalText { get, .. } => get(s).into(),
        }
    }

    /// Sets the field in `s` from a JSON value, with the reading rules of SPEC §3.
    pub fn set(&self, s: &mut State, v: &Value) -> Result<(), FieldProblem> {
        let bad = || FieldProblem {
            field: self.name.into(),
            value: short(v),
            expected: self.kind().expected(),
            example: self.example(),
        };
        match self.slot {
            Slot::Count { min, set, .. } => set(s, count(v).filter(|n| *n >= min).ok_or_else(bad)?),
            Slot::OptionalCount { set, .. } => {
                let n = if v.is_null() {
                    None
                } else {
                    Some(count(v).ok_or_else(bad)?)
                };
                set(s, n)
            }
            Slot::Text { set, .. } => set(s, v.as_str().ok_or_else(bad)?.to_owned()),
            Slot::OptionalPhase { set, .. } => set(
                s,
                match v {
                    Value::Null => None,
                    Value::String(text) => Some(text.clone()),
                    _ => return Err(bad()),
                },
            ),
            Slot::Model { set, .. } => {
                let text = v.as_str().filter(|m| valid_model(m)).ok_or_else(bad)?;
                set(s, text.to_owned())
            }
            Slot::Flag { set, .. } => set(s, v.as_bool().ok_or_else(bad)?),
            Slot::Reviewers { set, .. } => {
                let items = v.as_array().ok_or_else(bad)?;
                let mut list = Vec::with_capacity(items.len());
                for item in items {
                    let text = item.as_str().ok_or_else(bad)?;
                    list.push(Reviewer::parse(text).map_err(|why| FieldProblem {
                        expected: format!("{} ({why})", self.kind().expected()),
                        ..bad()
                    })?);
                }
                set(s, list)
            }
            Slot::ReviewMode { set, .. } => {
                set(s, v.as_str().and_then(Mode::from_name).ok_or_else(bad)?)
            }
            Slot::OptionalMoney { set, .. } => set(
                s,
                match v {
                    Value::Null => None,
                    _ => Some(money(v).ok_or_else(bad)?),
                },
            ),
            Slot::OptionalTime { set, .. } => set(
                s,
                match v {
                    Value::Null => None,
                    _ => Some(
                        v.as_str()
                            .and_then(crate::model::pause::parse_stamp)
                            .ok_or_else(bad)?,
                    ),
                },
            ),
            Slot::OptionalText { set, .. } => set(
                s,
                match v {
                    Value::Null => None,
                    Value::String(text) => Some(text.clone()),
                    _ => return Err(bad()),
                },
            ),
        }
        Ok(())
    }

    /// The value a state without this field has.
    pub fn default_value(&self) -> Value {
        self.get(&State::default())
    }

    /// A valid value to suggest in a fix; an empty default is shown quoted so the
    /// suggested command still reads as setting a value.
    fn example(&self) -> String {
        match self.kind() {
            ValueKind::Reviewers => return "claude:opus,codex:gpt-5-codex".into(),
            ValueKind::OptionalMoney => return "5".into(),
            ValueKind::OptionalTime | ValueKind::OptionalText => return "null".into(),
            _ => {}
        }
        match self.default_value() {
            Value::String(text) if text.is_empty() => "\"\"".into(),
            Value::String(text) => text,
            other => other.to_string(),
        }
    }
}

/// The fields and what each may hold, one per line, for `taskie state set --help`.
pub fn fields_help() -> String {
    let width = FIELDS.iter().map(|f| f.name.len()).max().unwrap_or(0);
    let mut text = String::from("Fields of state.json:\n");
    for f in &FIELDS {
        text.push_str(&format!(
            "  {:width$}  {} (default {})\n",
            f.name,
            f.kind().expected(),
            f.default_value()
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

/// The refusal of a name that is not a field: the field it nearly is, else the list.
pub fn unknown_field(name: &str) -> String {
    let names: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
    match crate::model::text::closest(name, names.iter().copied()) {
        Some(near) => format!("unknown field \"{name}\"; did you mean \"{near}\"?"),
        None => format!(
            "unknown field \"{name}\"; the fields are: {}",
            names.join(", ")
        ),
    }
}

/// `taskie state set FIELD=VALUE`: the command-line text of `f` as the JSON value the
/// reading rules take. `phase` and `next_phase` must also be known phase names here.
pub fn value_from_text(f: &Field, text: &str) -> Result<Value, String> {
    Ok(match f.kind() {
        // `phase` is informational when read (any string), but a command writes only a
        // phase (SPEC §12).
        ValueKind::Text if !phase::is_known(text) => {
            return Err(format!(
                "{} \"{text}\" is not a phase{}; use one of: {}",
                f.name,
                crate::model::text::did_you_mean(text, phase::PHASES.iter().copied()),
                phase::PHASES.join(", ")
            ));
        }
        ValueKind::Text | ValueKind::Model | ValueKind::ReviewMode => Value::String(text.into()),
        ValueKind::OptionalTime | ValueKind::OptionalText if text == "null" => Value::Null,
        ValueKind::OptionalTime | ValueKind::OptionalText => Value::String(text.into()),
        // `claude:opus,codex:gpt-5-codex`, or the JSON array itself.
        ValueKind::Reviewers if !text.trim_start().starts_with('[') => Value::Array(
            text.split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(|t| Value::String(t.into()))
                .collect(),
        ),
        ValueKind::OptionalPhase if text != "null" && !phase::is_known(text) => {
            return Err(format!(
                "next_phase \"{text}\" is not a phase{}; use null or one of: {}",
                crate::model::text::did_you_mean(text, phase::PHASES.iter().copied()),
                phase::PHASES.join(", ")
            ));
        }
        ValueKind::OptionalPhase if text == "null" => Value::Null,
        ValueKind::OptionalPhase => Value::String(text.into()),
        _ => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into())),
    })
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
    // `+ 0.0` turns -0 into 0, so "-0" is never stored or shown.
    (n.is_finite() && n >= 0.0).then_some(n + 0.0)
}

/// A value as shown in a message, cut so a huge value cannot flood the output.
fn short(v: &Value) -> String {
    crate::model::text::clip(&v.to_string(), 61)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of the field's type that is not its default.
    fn other_value(f: &Field) -> Value {
        match f.kind() {
            ValueKind::Count { min } => (min + 7).into(),
            ValueKind::OptionalCount => 7.into(),
            ValueKind::Text => "complete".into(),
            ValueKind::OptionalPhase => "code-review".into(),
            ValueKind::Model => "sonnet".into(),
            ValueKind::Flag => true.into(),
            ValueKind::Reviewers => serde_json::json!(["codex:gpt-5-codex"]),
            ValueKind::ReviewMode => "panel".into(),
            ValueKind::OptionalMoney => 2.5.into(),
            ValueKind::OptionalTime => "2026-11-24T23:27:00Z".into(),
            ValueKind::OptionalText => "codex:gpt-5-codex reached its usage limit".into(),
        }
    }

    #[test]
    fn each_field_sets_and_gets_its_own_slot_and_no_other() {
        for f in &FIELDS {
            let mut s = State::default();
            let v = other_value(f);
            assert_ne!(f.default_value(), v, "{}", f.name);
            f.set(&mut s, &v)
                .unwrap_or_else(|p| panic!("{}: {p}", f.name));
            assert_eq!(f.get(&s), v, "{} reads back what was set", f.name);
            for g in FIELDS.iter().filter(|g| g.name != f.name) {
                assert_eq!(
                    g.get(&s),
                    g.default_value(),
                    "setting {} changed {}",
                    f.name,
                    g.name
                );
            }
        }
    }

    #[test]
    fn field_names_are_unique() {
        let mut names: Vec<&str> = FIELDS.iter().map(|f| f.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FIELDS.len());
    }
}
