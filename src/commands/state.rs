//! `taskie state get [FIELD]` and `taskie state set FIELD=VALUE…` (SPEC §3, §12): read
//! and edit state.json with the reading rules of §3. A set is all-or-nothing.

use crate::commands::Invocation;
use crate::error::Error;
use crate::model::cycle;
use crate::model::state::{FIELDS, State, StateError, find_field};
use crate::store::snapshot;
use serde_json::{Map, Value};
use std::io::Write;

/// A value as `state get FIELD` prints it: strings bare, so scripts can use it directly.
pub fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Splits `FIELD=VALUE` words and checks each value alone; all problems are reported.
pub fn parse_assignments(words: &[String]) -> Result<Vec<(String, Value)>, Error> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for word in words {
        let Some((name, text)) = word.split_once('=') else {
            return Err(Error::Usage(format!(
                "\"{word}\" is not FIELD=VALUE; for example `taskie state set max_reviews=10`"
            )));
        };
        let mut probe = State::default();
        match probe.set_from_text(name, text) {
            Ok(()) => out.push((name.to_owned(), probe.value_of(name))),
            Err(e) => problems.push(e),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(Error::Refused(problems.join("; ")))
    }
}

/// The new text of state.json: the assignments put into the stored object in place, so
/// unknown fields and key order stay. When the result is a valid state it is written in
/// canonical form; otherwise (other fields still invalid) the object as it is, with the
/// remaining problem returned so the user can fix it next.
pub fn apply(
    stored: &Map<String, Value>,
    assignments: &[(String, Value)],
) -> (String, Option<StateError>) {
    let mut raw = stored.clone();
    for (name, value) in assignments {
        raw.insert(name.clone(), value.clone());
    }
    // SPEC §14: scheduling another review starts its cycle afresh, or the old cycle's
    // streak would end the new one early. Fields assigned explicitly keep their value.
    let next = |m: &Map<String, Value>| {
        m.get("next_phase")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    if cycle::starts_new(next(stored).as_deref(), next(&raw).as_deref())
        && let Ok(s) = State::from_object(raw.clone())
    {
        let fresh = crate::model::machine::rescheduled(&s);
        for f in &FIELDS {
            let assigned = assignments.iter().any(|(n, _)| n == f.name);
            if !assigned && fresh.value_of(f.name) != s.value_of(f.name) {
                raw.insert(f.name.into(), fresh.value_of(f.name));
            }
        }
    }
    match State::from_object(raw.clone()) {
        Ok(s) => (s.to_json(), None),
        Err(e) => {
            let mut text = serde_json::to_string_pretty(&Value::Object(raw))
                .expect("a JSON object always serializes");
            text.push('\n');
            (text, Some(e))
        }
    }
}

/// SPEC §12: `current_task` must be a task of tasks.md (when it lists any): an id it
/// does not list is most likely a slip, and would send the code review to a task file
/// that is not there.
fn unlisted_task(
    target: &crate::commands::Target,
    assignments: &[(String, Value)],
) -> Result<(), Error> {
    let Some(task) = assignments
        .iter()
        .find(|(name, _)| name == "current_task")
        .and_then(|(_, v)| v.as_u64())
    else {
        return Ok(());
    };
    let read = target.gather()?;
    if read.tasks.is_empty() || read.tasks.iter().any(|t| t.number() == Some(task)) {
        return Ok(());
    }
    let ids: Vec<&str> = read.tasks.iter().map(|t| t.id.as_str()).collect();
    Err(Error::Refused(format!(
        "nothing was changed in {}: current_task {task} is not a task of {} (it lists {}); use one of those \
         ids, or add the task first (/taskie:add-task)",
        target.rel(crate::model::plan_file::STATE_FILE),
        target.rel("tasks.md"),
        ids.join(", ")
    )))
}

/// `taskie state get [FIELD] [--plan ID]`.
pub fn get(
    inv: &Invocation,
    plan: Option<&str>,
    field: Option<&str>,
    out: &mut dyn Write,
) -> Result<(), Error> {
    if let Some(name) = field {
        known(name)?;
    }
    let target = inv.target(plan)?;
    let state = target
        .state()?
        .ok_or_else(|| Error::NoState(target.plan.clone()))?;
    match field {
        Some(name) => writeln!(out, "{}", plain(&state.value_of(name)))?,
        None => writeln!(out, "{:#}", state.all_fields())?,
    }
    Ok(())
}

fn known(name: &str) -> Result<(), Error> {
    match find_field(name) {
        Some(_) => Ok(()),
        None => Err(Error::Refused(crate::model::state::unknown_field(name))),
    }
}

/// `taskie state set FIELD=VALUE… [--plan ID]`.
pub fn set(
    inv: &Invocation,
    plan: Option<&str>,
    words: &[String],
    out: &mut dyn Write,
) -> Result<(), Error> {
    let target = inv.target(plan)?;
    let assignments = parse_assignments(words).map_err(|e| match e {
        Error::Refused(m) => Error::Refused(format!(
            "nothing was changed in {}: {m}",
            target.rel(crate::model::plan_file::STATE_FILE)
        )),
        other => other,
    })?;
    let held = target.lock()?;
    unlisted_task(&target, &assignments)?;
    let bad = |error| Error::State {
        plan: target.plan.clone(),
        error,
    };
    // The one reader of state.json: no links, no FIFOs, a size cap (store/snapshot.rs).
    let bytes = match snapshot::state_bytes(&target.state_path()) {
        Ok(Some(b)) => b,
        Ok(None) => return Err(Error::NoState(target.plan.clone())),
        Err(e) => return Err(bad(StateError::Unreadable(e.to_string()))),
    };
    let stored = State::object(&bytes).map_err(bad)?;
    let (text, remaining) = apply(&stored, &assignments);
    if text.as_bytes() != bytes.as_slice() {
        target.write_state_text(&held, &text)?;
    }
    inv.bind(&target);
    let next = |m: &Map<String, Value>| {
        m.get("next_phase")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    if let Ok(after) = State::object(text.as_bytes())
        && cycle::starts_new(next(&stored).as_deref(), next(&after).as_deref())
    {
        writeln!(
            out,
            "A new review cycle starts: phase_iteration, consecutive_clean, review_failures and review_model \
             were reset, except those set on this command line."
        )?;
    }
    for (name, value) in &assignments {
        let before = stored
            .get(name)
            .map(|v| v.to_string())
            .unwrap_or_else(|| "unset".into());
        writeln!(out, "{name}: {before} → {value}")?;
    }
    if let Some(e) = remaining {
        writeln!(
            out,
            "Saved, but {} still needs fixing: {e}",
            target.rel(crate::model::plan_file::STATE_FILE)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn assignments_take_canonical_types() {
        let a = parse_assignments(&words(&[
            "max_reviews=10",
            "current_task=null",
            "tdd=true",
            "paused_by=x=y",
        ]))
        .unwrap();
        assert_eq!(
            a,
            vec![
                ("max_reviews".into(), Value::from(10)),
                ("current_task".into(), Value::Null),
                ("tdd".into(), Value::Bool(true)),
                ("paused_by".into(), Value::from("x=y")),
            ]
        );
    }

    #[test]
    fn every_bad_assignment_is_reported_at_once() {
        let err = parse_assignments(&words(&["max_reviews=lots", "tdd=yes", "phase=ok"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("max_reviews") && err.contains("tdd"), "{err}");
        assert!(matches!(
            parse_assignments(&words(&["max_reviews"])),
            Err(Error::Usage(_))
        ));
    }

    #[test]
    fn applying_keeps_key_order_and_unknown_fields() {
        let stored: Map<String, Value> =
            serde_json::from_str(r#"{"zeta":1,"max_reviews":"3","phase":"x"}"#).unwrap();
        let (text, remaining) = apply(&stored, &[("max_reviews".into(), Value::from(9))]);
        assert!(remaining.is_none());
        let keys: Vec<String> = serde_json::from_str::<Map<String, Value>>(&text)
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(&keys[..3], ["zeta", "max_reviews", "phase"]);
        assert!(text.contains("\"max_reviews\": 9"));
    }

    #[test]
    fn one_bad_field_can_be_fixed_while_another_stays_bad() {
        let stored: Map<String, Value> =
            serde_json::from_str(r#"{"max_reviews":"lots","tdd":"yes"}"#).unwrap();
        let (text, remaining) = apply(&stored, &[("max_reviews".into(), Value::from(8))]);
        assert!(text.contains("\"max_reviews\": 8") && text.contains("\"tdd\": \"yes\""));
        assert!(remaining.unwrap().to_string().contains("tdd"));
    }

    #[test]
    fn all_fields_lists_defaults_then_unknown_fields() {
        let s = State::parse(br#"{"extra":true,"phase":"x"}"#).unwrap();
        let v = s.all_fields();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), FIELDS.len() + 1);
        assert_eq!(keys[0], "max_reviews");
        assert_eq!(keys[FIELDS.len()], "extra");
        assert_eq!(v["clean_reviews_required"], 2);
        assert_eq!(plain(&v["phase"]), "x");
        assert_eq!(plain(&v["current_task"]), "null");
    }
}
