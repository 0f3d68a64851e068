//! `taskie-hook --dry-run` (SPEC §11): every read-only step of the hook, reported.
//! It never runs the reviewer and never writes anything: no state, logs, locks or
//! directories.

use crate::hook::answer::Answer;
use crate::hook::decide::{self, Step};
use crate::hook::{self, Located, Options};
use crate::model::cycle::Reviewed;
use crate::model::state::State;
use crate::model::verdict::{Reading, Verdict};
use crate::reviewer;
use crate::store::snapshot::Gathered;
use serde_json::{Map, Value, json};
use std::io::{IsTerminal, Read};
use std::path::PathBuf;

/// Builds the report for the event on stdin (or a default one for `cwd`).
pub fn report(opts: &Options, cwd: Option<PathBuf>) -> Value {
    let mut input = Vec::new();
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let _ = stdin.lock().take(4 * 1024 * 1024).read_to_end(&mut input);
    }
    if input.iter().all(u8::is_ascii_whitespace) {
        let dir = cwd.unwrap_or_else(|| PathBuf::from("."));
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        input = json!({ "cwd": dir, "stop_hook_active": false })
            .to_string()
            .into_bytes();
    }
    let mut r = Map::new();
    r.insert(
        "event".into(),
        serde_json::from_slice(&input).unwrap_or_else(|_| String::from_utf8_lossy(&input).into()),
    );
    if crate::hook::input::skip_requested() {
        r.insert("branch".into(), "recursion-guard".into());
        r.insert("answer".into(), answer(&Answer::Allow(None)));
        return Value::Object(r);
    }
    let Located {
        event,
        project,
        selected,
    } = match hook::locate(opts, &input) {
        Ok(l) => l,
        Err((a, branch)) => {
            r.insert("branch".into(), branch.into());
            r.insert("answer".into(), answer(&a));
            return Value::Object(r);
        }
    };
    r.insert("project".into(), project.root.display().to_string().into());
    r.insert(
        "plan".into(),
        json!({ "id": selected.id, "why": selected.why }),
    );
    let g = match Gathered::read(
        &project.plan_dir(&selected.id),
        &selected.id,
        event.stop_hook_active,
    ) {
        Ok(g) => g,
        Err(e) => {
            r.insert("branch".into(), "internal-error".into());
            r.insert("error".into(), e.to_string().into());
            return Value::Object(r);
        }
    };
    r.insert("validation".into(), json!(g.errors));
    r.insert(
        "state".into(),
        match &g.state {
            Ok(Some(s)) => serde_json::from_str(&s.to_json()).unwrap_or(Value::Null),
            Ok(None) => Value::Null,
            Err(e) => json!({ "error": e.to_string() }),
        },
    );
    let facts = g.facts();
    match decide::decide(&facts) {
        Step::Done(o) => {
            r.insert("branch".into(), o.record.path.as_str().into());
            r.insert("answer".into(), answer(&o.answer));
            r.insert(
                "new_state".into(),
                o.write.as_ref().map(state_json).unwrap_or(Value::Null),
            );
        }
        Step::HardStop(stop, record) => {
            let o = hook::hard_stop(&project, &facts, stop, record, false);
            r.insert("branch".into(), o.record.path.as_str().into());
            r.insert("answer".into(), answer(&o.answer));
        }
        Step::Review(due) => {
            let config = reviewer::Config::from_env(&mut |w| eprintln!("taskie-hook: {w}"));
            let prompt = crate::reviewer::prompt::build(&project.root, &facts, &due);
            let mut argv = vec![config.program.to_string_lossy().into_owned()];
            argv.extend(
                reviewer::args(&due.model, &shorten(&prompt))
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned()),
            );
            r.insert("branch".into(), "review-due".into());
            r.insert(
                "review".into(),
                json!({
                    "review": due.review.name(),
                    "iteration": due.iteration,
                    "model": due.model,
                    "task": due.task,
                    "review_file": facts.rel(&due.review_file),
                    "post_review_file": facts.rel(&due.post_file),
                    "command": argv,
                    "timeout_secs": config.timeout.as_secs_f64(),
                }),
            );
            for (key, verdict) in [("if_pass", Verdict::Pass), ("if_fail", Verdict::Fail)] {
                let reviewed = Reviewed::Verdict {
                    reading: Reading {
                        verdict,
                        source: "structured_output".into(),
                    },
                    exit: 0,
                };
                let o = decide::conclude(&facts, &due, &reviewed);
                r.insert(
                    key.into(),
                    json!({
                        "branch": o.record.path.as_str(),
                        "new_state": o.write.as_ref().map(state_json),
                        "answer": answer(&o.answer),
                    }),
                );
            }
        }
    }
    Value::Object(r)
}

fn state_json(s: &State) -> Value {
    serde_json::from_str(&s.to_json()).unwrap_or(Value::Null)
}

/// The hook's stdout for an answer, as JSON (`null` for a silent allow).
fn answer(a: &Answer) -> Value {
    serde_json::from_str(&a.to_stdout()).unwrap_or(Value::Null)
}

fn shorten(prompt: &str) -> String {
    let head: String = prompt
        .chars()
        .take(60)
        .collect::<String>()
        .replace('\n', " ");
    format!("{head}… ({} bytes)", prompt.len())
}

/// The report for a person.
pub fn human(r: &Value) -> String {
    let mut out = String::from("taskie-hook --dry-run: nothing was run or written.\n");
    let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("{k:<12} {v}\n"));
    if let Some(p) = r["project"].as_str() {
        line(&mut out, "project:", p.into());
    }
    if let Some(id) = r["plan"]["id"].as_str() {
        line(
            &mut out,
            "plan:",
            format!("{id} ({})", r["plan"]["why"].as_str().unwrap_or("")),
        );
    }
    if let Some(errors) = r["validation"].as_array() {
        if errors.is_empty() {
            line(&mut out, "validation:", "ok".into());
        } else {
            line(
                &mut out,
                "validation:",
                format!("{} error(s)", errors.len()),
            );
            for e in errors {
                out.push_str(&format!("             - {}\n", e.as_str().unwrap_or("")));
            }
        }
    }
    match &r["state"] {
        Value::Null if r.get("validation").is_some() => {
            line(&mut out, "state:", "no state.json".into())
        }
        Value::Object(o) if o.contains_key("error") => {
            line(&mut out, "state:", o["error"].to_string())
        }
        Value::Object(_) => line(&mut out, "state:", summary(&r["state"])),
        _ => {}
    }
    line(
        &mut out,
        "branch:",
        r["branch"].as_str().unwrap_or("").into(),
    );
    if let Some(e) = r.get("error").and_then(Value::as_str) {
        line(&mut out, "error:", e.into());
    }
    if let Some(review) = r.get("review") {
        line(
            &mut out,
            "review:",
            format!(
                "{} #{} with model {}",
                review["review"].as_str().unwrap_or(""),
                review["iteration"],
                review["model"].as_str().unwrap_or("")
            ),
        );
        let cmd: Vec<&str> = review["command"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        line(&mut out, "command:", cmd.join(" "));
        line(
            &mut out,
            "review file:",
            review["review_file"].as_str().unwrap_or("").into(),
        );
        for (k, label) in [("if_pass", "if PASS:"), ("if_fail", "if FAIL:")] {
            line(
                &mut out,
                label,
                format!(
                    "{} → {}",
                    r[k]["branch"].as_str().unwrap_or(""),
                    summary(&r[k]["new_state"])
                ),
            );
            out.push_str(&format!("             answer: {}\n", r[k]["answer"]));
        }
    } else {
        if let Some(s) = r.get("new_state").filter(|s| !s.is_null()) {
            line(&mut out, "new state:", summary(s));
        }
        let a = &r["answer"];
        line(
            &mut out,
            "answer:",
            if a.is_null() {
                "allow silently (empty stdout)".into()
            } else {
                a.to_string()
            },
        );
    }
    out
}

fn summary(state: &Value) -> String {
    [
        "phase",
        "next_phase",
        "phase_iteration",
        "consecutive_clean",
        "review_model",
        "max_reviews",
    ]
    .iter()
    .map(|k| format!("{k}={}", state[*k]))
    .collect::<Vec<_>>()
    .join(" ")
}
