//! `taskie-hook --dry-run` (SPEC §11): every read-only step of the hook, reported.
//! It never runs the reviewer and never writes anything: no state, logs, locks or
//! directories.

use crate::hook::answer::{Answer, Channel, Shown};
use crate::hook::cap;
use crate::hook::client;
use crate::hook::decide::{self, Step};
use crate::hook::input::Event;
use crate::hook::{self, Located, Settings};
use crate::model::cycle::Reviewed;
use crate::model::host::Client;
use crate::model::state::State;
use crate::model::verdict::{Reading, Verdict};
use crate::reviewer;
use crate::store::blocks;
use crate::store::snapshot::Gathered;
use serde::Serialize;
use serde_json::Value;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// The report. Which fields are present says how far the hook got; `--json` prints it
/// as it is, in this field order.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The event as given: JSON when it parses, else its text.
    pub event: Value,
    /// The client the hook assumes (SPEC §20), when the event could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanChoice>,
    /// The blocks in a row so far and Taskie's cap (SPEC §20); present once a plan is
    /// chosen. Every answer below is the one the cap leaves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<BlocksInARow>,
    /// Structure errors; present once the plan was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<Vec<String>>,
    /// Present once the plan was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<StateRead>,
    /// The branch of SPEC §5 the hook would take.
    pub branch: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What would make this stop go wrong although the plan is fine: a reviewer program
    /// that is not found, a review timeout the hook's own timeout cuts short.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The hook's answer (`null`: a silent allow); absent when a review is due.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<Shown>,
    /// The state the hook would write (`null`: none); only for a decision without review.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_state: Option<Option<State>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewPlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub if_pass: Option<IfVerdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub if_fail: Option<IfVerdict>,
    /// How a block reaches Claude Code (`TASKIE_BLOCK_STYLE`), for the answer shown.
    #[serde(skip)]
    block_style: Channel,
}

#[derive(Debug, Serialize)]
pub struct PlanChoice {
    pub id: String,
    pub why: String,
}

/// How many times the hook has blocked this session (or plan) in a row, and the cap.
#[derive(Debug, Serialize)]
pub struct BlocksInARow {
    pub in_a_row: u64,
    pub cap: u64,
}

/// state.json as read: `null` when missing, the object, or `{"error": …}`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum StateRead {
    Read(Box<State>),
    Error { error: String },
    Missing,
}

/// The review that is due and how the reviewer would be run.
#[derive(Debug, Serialize)]
pub struct ReviewPlan {
    pub review: &'static str,
    pub iteration: u64,
    pub model: String,
    pub task: Option<u64>,
    pub review_file: String,
    pub post_review_file: String,
    pub command: Vec<String>,
    /// The file the first reviewer's program starts as; `null` when it is not found, so
    /// the review would fail to start.
    pub program_path: Option<String>,
    /// The start of the prompt the reviewer reads on stdin, and its length.
    pub stdin: String,
    pub timeout_secs: f64,
    /// The hook's own timeout as Taskie registers it; a review must end before it.
    pub hook_timeout_secs: u64,
}

/// What the hook would do after a PASS or a FAIL.
#[derive(Debug, Serialize)]
pub struct IfVerdict {
    pub branch: &'static str,
    pub new_state: Option<State>,
    pub answer: Shown,
}

/// Which client the hook answers, and why it thinks so.
#[derive(Debug, Serialize)]
pub struct ClientChoice {
    pub name: &'static str,
    pub why: String,
    /// How a block would be sent: `additionalContext` or `decision`.
    pub block: &'static str,
}

/// The event a dry run assumes when stdin gives none.
#[derive(Serialize)]
struct DefaultEvent<'a> {
    cwd: &'a Path,
    stop_hook_active: bool,
}

impl Report {
    fn new(event: Value, block_style: Channel) -> Report {
        Report {
            block_style,
            event,
            client: None,
            project: None,
            plan: None,
            blocks: None,
            validation: None,
            state: None,
            branch: String::new(),
            error: None,
            warnings: Vec::new(),
            answer: None,
            new_state: None,
            review: None,
            if_pass: None,
            if_fail: None,
        }
    }

    fn ended(mut self, branch: &str, answer: Answer) -> Report {
        self.branch = branch.into();
        self.answer = Some(self.capped(answer).on(self.channel()));
        self
    }

    /// The client assumed, once the event was read.
    fn assumed(&self) -> Option<Client> {
        self.client.as_ref().and_then(|c| Client::from_name(c.name))
    }

    /// How blocks are sent to the client assumed.
    fn channel(&self) -> Channel {
        self.assumed().map_or_else(Channel::default, |c| {
            Channel::for_client(c, self.block_style)
        })
    }

    /// `answer` as the block cap leaves it, the same rule the hook applies.
    fn capped(&self, answer: Answer) -> Answer {
        match &self.blocks {
            Some(b) => {
                cap::apply(
                    b.cap,
                    b.in_a_row,
                    answer,
                    self.assumed().unwrap_or_default(),
                )
                .answer
            }
            None => answer,
        }
    }
}

/// Builds the report for the event on stdin (or a default one for `cwd`).
pub fn report(settings: &Settings, cwd: Option<PathBuf>) -> Report {
    let mut input = Vec::new();
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        input = crate::hook::input::read(stdin.lock(), crate::hook::STDIN_LIMIT);
    }
    if input.iter().all(u8::is_ascii_whitespace) {
        let dir = cwd.unwrap_or_else(|| PathBuf::from("."));
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        input = serde_json::to_vec(&DefaultEvent {
            cwd: &dir,
            stop_hook_active: false,
        })
        .unwrap_or_default();
    }
    let mut r = Report::new(
        serde_json::from_slice(&input).unwrap_or_else(|_| String::from_utf8_lossy(&input).into()),
        settings.block_style,
    );
    let host = Event::parse(&input).ok().map(|e| {
        let (host, detected) = client::current(&e, settings);
        r.client = Some(ClientChoice {
            name: detected.client.name(),
            why: detected.why,
            block: match Channel::for_client(detected.client, settings.block_style) {
                Channel::Context => "additionalContext",
                Channel::Decision => "decision",
            },
        });
        host
    });
    if settings.skip {
        return r.ended("recursion-guard", Answer::Allow(None));
    }
    let Located {
        event,
        project,
        selected,
    } = match hook::locate(settings, &input, crate::store::select::Selector::HookDryRun) {
        Ok(l) => l,
        Err((a, branch)) => return r.ended(branch, a),
    };
    let mut r = Report {
        project: Some(project.root.display().to_string()),
        plan: Some(PlanChoice {
            id: selected.id.clone(),
            why: selected.why.clone(),
        }),
        blocks: Some(BlocksInARow {
            in_a_row: blocks::count(
                &project,
                &blocks::Key::new(event.session_id.as_deref(), &selected.id),
            ),
            cap: settings.block_cap,
        }),
        ..r
    };
    let g = match Gathered::read(
        &project.plan_dir(&selected.id),
        &selected.id,
        event.stop_hook_active,
    ) {
        Ok(g) => g,
        Err(e) => {
            r.branch = "internal-error".into();
            r.error = Some(e.to_string());
            return r;
        }
    };
    r.validation = Some(g.errors.iter().map(ToString::to_string).collect());
    r.state = Some(match &g.state {
        Ok(Some(s)) => StateRead::Read(Box::new(s.clone())),
        Ok(None) => StateRead::Missing,
        Err(e) => StateRead::Error {
            error: e.to_string(),
        },
    });
    let mut facts = g.facts();
    let host = host.unwrap_or_default();
    facts.host = &host;
    let channel = r.channel();
    match decide::decide(&facts) {
        Step::Done(o) => {
            r.new_state = Some(o.write);
            r.ended(o.record.branch.as_str(), o.answer)
        }
        Step::HardStop(stop, record) => {
            let o = hook::hard_stop(&project, &facts, stop, record, false);
            r.ended(o.record.branch.as_str(), o.answer)
        }
        Step::Review(due) => {
            let config = &settings.reviewer;
            for w in &config.warnings {
                eprintln!("taskie-hook: {w}");
            }
            // The first reviewer's command line (each panel member has its own).
            let (argv, stdin) = reviewer::command_line(&project, &facts, &due, config, &shorten);
            r.branch = "review-due".into();
            r.warnings.extend(config.timeout_warning());
            let mut kinds = Vec::new();
            for kind in due.reviewers.iter().map(|rv| rv.kind) {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
            let program_path = kinds.first().and_then(|k| config.locate(*k, &project.root));
            for kind in kinds {
                if config.locate(kind, &project.root).is_none() {
                    let missing = std::io::Error::from_raw_os_error(libc::ENOENT);
                    let e =
                        reviewer::ReviewerError::Spawn(kind, config.program(kind).clone(), missing);
                    r.warnings.push(format!(
                        "the {} reviewer program was not found, so this review would fail to start: {e}",
                        kind.name()
                    ));
                }
            }
            r.review = Some(ReviewPlan {
                review: due.review.name(),
                iteration: due.iteration,
                model: due.model.clone(),
                task: due.task,
                review_file: facts.rel(&due.review_file),
                post_review_file: facts.rel(&due.post_file),
                command: argv,
                program_path: program_path.map(|p| p.display().to_string()),
                stdin,
                timeout_secs: config.timeout.as_secs_f64(),
                hook_timeout_secs: reviewer::config::HOOK_TIMEOUT_SECS,
            });
            let [pass, fail] = [Verdict::Pass, Verdict::Fail].map(|verdict| {
                let reviewed = Reviewed::Verdict {
                    failover: Default::default(),
                    verified: Default::default(),
                    reading: Reading {
                        verdict,
                        source: "structured_output".into(),
                    },
                    exit: 0,
                    findings: vec![],
                };
                let o = decide::conclude(&facts, &due, &reviewed);
                IfVerdict {
                    branch: o.record.branch.as_str(),
                    new_state: o.write,
                    answer: r.capped(o.answer).on(channel),
                }
            });
            r.if_pass = Some(pass);
            r.if_fail = Some(fail);
            r
        }
    }
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
pub fn human(r: &Report) -> String {
    let mut out = String::from("taskie-hook --dry-run: nothing was run or written.\n");
    let line = |out: &mut String, k: &str, v: String| out.push_str(&format!("{k:<12} {v}\n"));
    if let Some(c) = &r.client {
        line(
            &mut out,
            "client:",
            format!("{} ({}; a block is sent as {})", c.name, c.why, c.block),
        );
    }
    if let Some(p) = &r.project {
        line(&mut out, "project:", p.clone());
    }
    if let Some(plan) = &r.plan {
        line(&mut out, "plan:", format!("{} ({})", plan.id, plan.why));
    }
    // Said only when there are some: the usual stop follows an allow.
    if let Some(b) = r.blocks.as_ref().filter(|b| b.in_a_row > 0) {
        let reached = if cap::reached(b.cap, b.in_a_row) {
            " reached: a block now is allowed instead"
        } else {
            ""
        };
        line(
            &mut out,
            "blocks:",
            format!("{} in a row (cap {}{reached})", b.in_a_row, b.cap),
        );
    }
    if let Some(errors) = &r.validation {
        if errors.is_empty() {
            line(&mut out, "validation:", "ok".into());
        } else {
            line(
                &mut out,
                "validation:",
                format!("{} error(s)", errors.len()),
            );
            for e in errors {
                out.push_str(&format!("             - {e}\n"));
            }
        }
    }
    match &r.state {
        // The hook never reviews such a plan (SPEC §13): say what starts it, as
        // continue-plan and status do.
        Some(StateRead::Missing) => line(
            &mut out,
            "state:",
            match &r.plan {
                Some(p) => format!(
                    "no state.json: the hook never reviews this plan (`taskie init {}` starts its reviews)",
                    p.id
                ),
                None => "no state.json".into(),
            },
        ),
        // Quoted, as JSON shows a string.
        Some(StateRead::Error { error }) => {
            line(&mut out, "state:", Value::from(error.as_str()).to_string())
        }
        Some(StateRead::Read(s)) => line(&mut out, "state:", summary(Some(s))),
        None => {}
    }
    line(&mut out, "branch:", r.branch.clone());
    if let Some(e) = &r.error {
        line(&mut out, "error:", e.clone());
    }
    if let Some(review) = &r.review {
        line(
            &mut out,
            "review:",
            format!(
                "{} #{} with model {}",
                review.review, review.iteration, review.model
            ),
        );
        // A command that cannot start is not shown as if it could be run.
        match &review.program_path {
            Some(_) => {
                let words: Vec<String> = review
                    .command
                    .iter()
                    .map(|w| crate::model::text::shell_quote(w))
                    .collect();
                line(&mut out, "command:", words.join(" "));
            }
            None => line(
                &mut out,
                "command:",
                format!(
                    "none: `{}` was not found (see the warning below)",
                    review.command.first().map_or("", String::as_str)
                ),
            ),
        }
        line(&mut out, "stdin:", review.stdin.clone());
        line(
            &mut out,
            "timeout:",
            format!(
                "{} s (TASKIE_REVIEW_TIMEOUT; the hook's own timeout is {} s)",
                review.timeout_secs, review.hook_timeout_secs
            ),
        );
        line(&mut out, "review file:", review.review_file.clone());
        for (v, label) in [(&r.if_pass, "if PASS:"), (&r.if_fail, "if FAIL:")] {
            let Some(v) = v else { continue };
            line(
                &mut out,
                label,
                format!("{} → {}", v.branch, summary(v.new_state.as_ref())),
            );
            out.push_str(&format!("             answer: {}\n", shown(&v.answer)));
        }
    } else {
        if let Some(Some(s)) = &r.new_state {
            line(&mut out, "new state:", summary(Some(s)));
        }
        let text = match &r.answer {
            Some(Shown {
                answer: Answer::Allow(None),
                ..
            })
            | None => "allow silently (empty stdout)".into(),
            Some(a) => a.to_stdout(),
        };
        line(&mut out, "answer:", text);
    }
    for w in &r.warnings {
        line(&mut out, "warning:", w.clone());
    }
    out
}

/// The answer as printed, `null` for a silent allow.
fn shown(a: &Shown) -> String {
    match a.to_stdout() {
        s if s.is_empty() => "null".into(),
        s => s,
    }
}

fn summary(state: Option<&State>) -> String {
    [
        "phase",
        "next_phase",
        "phase_iteration",
        "consecutive_clean",
        "review_model",
        "max_reviews",
    ]
    .iter()
    .map(|k| {
        let v = state.map_or(Value::Null, |s| s.value_of(k));
        format!("{k}={v}")
    })
    .collect::<Vec<_>>()
    .join(" ")
}
