//! A scripted model behind the fake Messages API, for driving the real Claude Code through
//! a whole Taskie plan.
//!
//! The **agent** acts only on what it was told: each reply is worked out from the request
//! alone (Claude Code sends the whole conversation every time), from the latest
//! instruction in it — a slash command's action text, the hook's block text — and from the
//! tool results since. Every `taskie …` command, slash command and file path it uses is
//! taken from that text (an action's code spans, `taskie continue-plan`'s answer, the
//! block's "write what you did to …"), never from the test, so a wrong instruction makes the
//! story go wrong and the test fail. What it writes (a plan, tasks, code) is its own.
//! Anything it cannot follow is recorded in [`Agent::troubles`] and ends the turn.
//!
//! The **reviewer** is recognised by the `StructuredOutput` tool that `--json-schema` adds:
//! it reads the files the prompt lists, then gives the verdict the test chose for the
//! review file the prompt names.

use super::fake_api::{Block, Reply, Request};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the agent receives when the hook makes it continue, on either channel.
pub const CONTINUATION_MARKERS: [&str; 2] =
    ["Stop hook additional context:", "Stop hook feedback:"];

/// A reviewer session: the CLI turns `--json-schema` into a `StructuredOutput` tool.
pub fn is_reviewer(r: &Request) -> bool {
    r.has_tool("StructuredOutput")
}

// ---------- reading the conversation ----------

/// The latest thing the agent was told to do.
#[derive(Debug, Clone)]
pub enum Instruction {
    /// A slash command as Claude Code expands it: `name` without the slash
    /// (`taskie:new-plan`), its arguments, and the action's text.
    Command {
        name: String,
        args: String,
        text: String,
    },
    /// The text of a hook's block.
    Hook(String),
    /// A plain prompt.
    Prompt(String),
}

impl Instruction {
    /// A short label for the journal.
    pub fn label(&self) -> String {
        match self {
            Instruction::Command { name, args, .. } => format!("/{name} {args}").trim().into(),
            Instruction::Hook(_) => "hook block".into(),
            Instruction::Prompt(p) => format!("prompt {p:?}"),
        }
    }
}

/// One tool call the agent made since the instruction, with its result.
#[derive(Debug, Clone)]
pub struct Step {
    pub name: String,
    pub input: Value,
    pub output: String,
    pub is_error: bool,
}

/// The part of a request the agent acts on.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// "Primary working directory" of the environment Claude Code describes.
    pub cwd: PathBuf,
    pub instruction: Instruction,
    pub steps: Vec<Step>,
}

impl Conversation {
    pub fn of(req: &Request) -> Conversation {
        let mut all_text = req.system_text();
        let mut latest = (0, Instruction::Prompt(String::new()));
        for (i, m) in req.messages.iter().enumerate() {
            let text = m.content.text(false);
            all_text.push('\n');
            all_text.push_str(&text);
            if m.role != "user" {
                continue;
            }
            if let Some(found) = instruction_in(&text) {
                latest = (i, found);
            }
        }
        let (at, instruction) = latest;
        let mut results: HashMap<&str, (String, bool)> = HashMap::new();
        let mut calls = Vec::new();
        for m in &req.messages[at..] {
            for b in m.content.blocks() {
                match b {
                    Block::ToolUse { id, name, input } => calls.push((id, name, input)),
                    Block::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } => {
                        let text = content.as_ref().map(|c| c.text(true)).unwrap_or_default();
                        results.insert(tool_use_id, (text, *is_error));
                    }
                    _ => {}
                }
            }
        }
        let steps = calls
            .into_iter()
            .filter_map(|(id, name, input)| {
                let (output, is_error) = results.get(id.as_str())?.clone();
                Some(Step {
                    name: name.clone(),
                    input: input.clone(),
                    output,
                    is_error,
                })
            })
            .collect();
        let cwd = word_after(&all_text, "Primary working directory: ")
            .map(PathBuf::from)
            .unwrap_or_default();
        Conversation {
            cwd,
            instruction,
            steps,
        }
    }
}

/// The instruction a user message carries, if any (tool results carry none).
fn instruction_in(text: &str) -> Option<Instruction> {
    if let Some(name) = between(text, "<command-name>/", "</command-name>") {
        let args = between(text, "<command-args>", "</command-args>").unwrap_or_default();
        let body = match text.find("</command-args>") {
            Some(at) => &text[at + "</command-args>".len()..],
            None => text,
        };
        return Some(Instruction::Command {
            name: name.trim().into(),
            args: args.trim().into(),
            text: body.into(),
        });
    }
    for m in CONTINUATION_MARKERS {
        if let Some(at) = text.find(m) {
            let rest = &text[at + m.len()..];
            let rest = rest.split("</system-reminder>").next().unwrap_or(rest);
            return Some(Instruction::Hook(rest.trim().into()));
        }
    }
    None
}

// ---------- reading instructions ----------

/// The text between `open` and the next `close`.
pub fn between(text: &str, open: &str, close: &str) -> Option<String> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    Some(text[start..start + len].to_string())
}

/// The text after `marker` up to the next whitespace.
pub fn word_after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &text[text.find(marker)? + marker.len()..];
    rest.split_whitespace().next()
}

/// What an instruction shows as code: inline `spans` and the lines of fenced blocks.
pub fn code_spans(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            spans.push(trimmed.to_string());
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(code), Some(_)) = (parts.next(), parts.next()) {
            spans.push(code.to_string());
        }
    }
    spans
}

/// The first code span of `text` that starts with `prefix`.
pub fn command_in(text: &str, prefix: &str) -> Option<String> {
    code_spans(text).into_iter().find(|s| s.starts_with(prefix))
}

/// Fills a template such as `taskie mark complete-task --task <N> --plan <plan-id>`.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    values
        .iter()
        .fold(template.to_string(), |t, (k, v)| t.replace(k, v))
}

/// The Read tool shows files with line numbers; this is the file's own text.
pub fn strip_line_numbers(shown: &str) -> String {
    let mut out = String::new();
    for line in shown.lines() {
        let body = line.trim_start();
        let digits = body.len() - body.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let rest = &body[digits..];
        let rest = if digits > 0 {
            rest.strip_prefix('\t')
                .or_else(|| rest.strip_prefix('→'))
                .unwrap_or(line)
        } else {
            line
        };
        out.push_str(rest);
        out.push('\n');
    }
    out
}

/// `taskie continue-plan`'s answer, as printed for people.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub plan: Option<String>,
    /// The `next` field, its wrapped lines joined.
    pub next: String,
    pub why: String,
}

impl Answer {
    pub fn parse(out: &str) -> Answer {
        let mut answer = Answer::default();
        let mut field: Option<&str> = None;
        for line in out.lines() {
            let (key, value) = match line.split_once(char::is_whitespace) {
                Some((k, v)) if ["plan", "next", "why"].contains(&k) => (Some(k), v.trim()),
                _ if line.starts_with("      ") => (None, line.trim()),
                _ => {
                    field = None;
                    continue;
                }
            };
            if let Some(k) = key {
                field = Some(k);
            }
            let slot = match field {
                Some("plan") => {
                    answer.plan = Some(value.to_string());
                    continue;
                }
                Some("next") => &mut answer.next,
                Some("why") => &mut answer.why,
                _ => continue,
            };
            if !slot.is_empty() {
                slot.push(' ');
            }
            slot.push_str(value);
        }
        answer
    }

    /// The action it names (`create-tasks`), without `/taskie:`.
    pub fn action(&self) -> Option<&str> {
        let rest = self.next.strip_prefix("/taskie:")?;
        rest.split_whitespace().next()
    }

    /// The task it names: `(task 2)`.
    pub fn task(&self) -> Option<String> {
        between(&self.next, "(task ", ")")
    }
}

// ---------- the agent ----------

/// One reply of the agent, for the test's assertions and for a readable failure.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The instruction the reply follows ([`Instruction::label`]).
    pub instruction: String,
    /// `Bash: <command>`, `Write: <path>`, …, or `end: <text>` when the turn ends.
    pub did: String,
    /// The result of the step before, as the agent saw it (shortened).
    pub saw: String,
}

/// What the agent already did or does next: a step already in the conversation gives its
/// result, a new one becomes the reply (as `Err`, which ends the computation).
type Act<T> = Result<T, Box<Reply>>;

/// Where the agent is in one reply's computation.
struct Run<'a> {
    convo: &'a Conversation,
    done: usize,
    troubles: &'a Mutex<Vec<String>>,
}

/// The context an action is performed in: what `taskie continue-plan` named.
#[derive(Debug, Clone, Default)]
struct Known {
    plan: Option<String>,
    task: Option<String>,
    /// continue-plan's reason, which names the files of a post-review.
    why: String,
}

impl Run<'_> {
    /// Records that the agent cannot go on, and ends the turn saying so.
    fn trouble(&self, what: String) -> Box<Reply> {
        self.troubles.lock().unwrap().push(what.clone());
        Box::new(Reply::text(format!("I cannot go on: {what}")))
    }

    /// The result of the next step if the conversation has it, else the reply that makes it.
    fn call(&mut self, name: &str, key: &str, input: Value) -> Act<Step> {
        let Some(step) = self.convo.steps.get(self.done) else {
            return Err(Box::new(Reply::tool(name, input)));
        };
        if step.name != name || step.input.get(key) != input.get(key) {
            return Err(self.trouble(format!(
                "the conversation has {} {} where the agent expects {name} {}",
                step.name, step.input, input
            )));
        }
        self.done += 1;
        Ok(step.clone())
    }

    fn path(&self, rel: &str) -> String {
        self.convo.cwd.join(rel).display().to_string()
    }

    /// Runs a command that must succeed; its output.
    fn bash(&mut self, command: &str) -> Act<String> {
        let input = json!({"command": command, "description": "Run what the instructions say"});
        let step = self.call("Bash", "command", input)?;
        if step.is_error {
            return Err(self.trouble(format!("`{command}` failed: {}", step.output)));
        }
        Ok(step.output)
    }

    /// Reads a file that must exist; its text without line numbers.
    fn read(&mut self, rel: &str) -> Act<String> {
        let path = self.path(rel);
        let step = self.call("Read", "file_path", json!({"file_path": path}))?;
        if step.is_error {
            return Err(self.trouble(format!("cannot read {rel}: {}", step.output)));
        }
        Ok(strip_line_numbers(&step.output))
    }

    fn write(&mut self, rel: &str, content: &str) -> Act<()> {
        let path = self.path(rel);
        let input = json!({"file_path": path, "content": content});
        let step = self.call("Write", "file_path", input)?;
        if step.is_error {
            return Err(self.trouble(format!("cannot write {rel}: {}", step.output)));
        }
        Ok(())
    }

    /// Reads the file (the Edit tool wants that), then replaces `old` with `new` in it.
    fn edit(&mut self, rel: &str, old: &str, new: &str) -> Act<()> {
        let text = self.read(rel)?;
        if !text.contains(old) {
            return Err(self.trouble(format!("{rel} has no {old:?}")));
        }
        let path = self.path(rel);
        let input = json!({"file_path": path, "old_string": old, "new_string": new});
        let step = self.call("Edit", "file_path", input)?;
        if step.is_error {
            return Err(self.trouble(format!("cannot edit {rel}: {}", step.output)));
        }
        Ok(())
    }

    /// A command the instruction `text` shows exactly.
    fn told_exactly(&self, text: &str, command: &str, what: &str) -> Act<String> {
        match code_spans(text).into_iter().find(|s| s == command) {
            Some(c) => Ok(c),
            None => Err(self.trouble(format!(
                "the instructions for {what} do not show the command `{command}`"
            ))),
        }
    }

    /// A command the instruction `text` shows, starting with `prefix`.
    fn told(&self, text: &str, prefix: &str, what: &str) -> Act<String> {
        command_in(text, prefix).ok_or_else(|| {
            self.trouble(format!(
                "the instructions for {what} show no command starting with `{prefix}`"
            ))
        })
    }
}

/// The scripted agent.
pub struct Agent {
    troubles: Mutex<Vec<String>>,
    journal: Mutex<Vec<Entry>>,
}

impl Default for Agent {
    fn default() -> Self {
        Self::new()
    }
}

impl Agent {
    pub fn new() -> Agent {
        Agent {
            troubles: Mutex::new(Vec::new()),
            journal: Mutex::new(Vec::new()),
        }
    }

    /// What the agent could not follow, since the start.
    pub fn troubles(&self) -> Vec<String> {
        self.troubles.lock().unwrap().clone()
    }

    /// Every reply so far, in order.
    pub fn journal(&self) -> Vec<Entry> {
        self.journal.lock().unwrap().clone()
    }

    /// The agent's answer to one request.
    pub fn reply(&self, req: &Request) -> Reply {
        let convo = Conversation::of(req);
        let mut run = Run {
            convo: &convo,
            done: 0,
            troubles: &self.troubles,
        };
        let reply = match follow(&mut run, &convo.instruction) {
            Ok(r) => r,
            Err(r) => *r,
        };
        let did = match reply.tool_calls.first() {
            Some((name, input)) => {
                let what = input
                    .get("command")
                    .or_else(|| input.get("file_path"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                format!("{name}: {what}")
            }
            None => format!("end: {}", reply.text.clone().unwrap_or_default()),
        };
        let saw = convo.steps.last().map(|s| s.output.as_str()).unwrap_or("");
        let saw: String = saw.chars().take(400).collect();
        self.journal.lock().unwrap().push(Entry {
            instruction: convo.instruction.label(),
            did,
            saw,
        });
        reply
    }
}

fn follow(run: &mut Run, instruction: &Instruction) -> Act<Reply> {
    match instruction {
        Instruction::Command { name, args, text } => match name.strip_prefix("taskie:") {
            Some(action) => perform(run, action, text, args, Known::default()),
            None => Ok(Reply::text(format!("I do not know /{name}."))),
        },
        Instruction::Hook(text) => address_block(run, text),
        Instruction::Prompt(_) => Ok(Reply::text("Nothing to do.")),
    }
}

/// Performs action `action` whose instructions are `text`.
fn perform(run: &mut Run, action: &str, text: &str, args: &str, known: Known) -> Act<Reply> {
    match action {
        "new-plan" => new_plan(run, text, args),
        "continue-plan" => continue_plan(run, text, args),
        "create-tasks" => create_tasks(run, text, known),
        "complete-task" => complete_task(run, text, args, known),
        "continue-task" => continue_task(run, text, known),
        a if a.starts_with("post-") => {
            let review = word_after(&known.why, "read ").map(|w| w.trim_end_matches(','));
            let post = word_after(&known.why, ", write ").map(|w| w.trim_end_matches(','));
            match (review, post) {
                (Some(review), Some(post)) => post_review(run, review, post),
                _ => Err(run.trouble(format!(
                    "/taskie:{a}: continue-plan named no review and post-review file: {}",
                    known.why
                ))),
            }
        }
        other => Err(run.trouble(format!("the script has no way to perform /taskie:{other}"))),
    }
}

/// A plan id from the description, as a person would pick one.
fn slug(description: &str) -> String {
    let words: Vec<String> = description
        .split_whitespace()
        .take(3)
        .map(|w| {
            w.chars()
                .filter(char::is_ascii_alphanumeric)
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    words.join("-")
}

fn new_plan(run: &mut Run, text: &str, args: &str) -> Act<Reply> {
    if args.trim().is_empty() || args.contains("$ARGUMENTS") {
        return Ok(Reply::text("What should the plan be about?"));
    }
    let listed = run.bash("ls -1 .taskie/plans 2>/dev/null || true")?;
    let mut id = slug(args);
    if listed.lines().any(|l| l.trim() == id) {
        id.push_str("-2");
    }
    let values = [("<plan-id>", id.as_str())];
    let plan_md = run.told(text, ".taskie/plans/<plan-id>/plan.md", "new-plan")?;
    run.write(
        &fill(&plan_md, &values),
        &format!(
            "# Plan: {args}\n\n## Goal\n\n{args}.\n\n## Approach\n\nTwo small steps, each with its test.\n\n\
             ## Testing\n\n`sh test.sh`\n"
        ),
    )?;
    let validate = run.told(text, "taskie validate", "new-plan")?;
    run.bash(&fill(&validate, &values))?;
    let add = run.told(text, "git add ", "new-plan")?;
    let commit = run.told(text, "git commit ", "new-plan")?;
    run.bash(&format!(
        "{} && {}",
        fill(&add, &values),
        fill(&commit, &values)
    ))?;
    let init = run.told(text, "taskie init", "new-plan")?;
    run.bash(&fill(&init, &values))?;
    Ok(Reply::text(format!(
        "Plan {id} is written to {}; the automated plan review starts when I stop.",
        fill(&plan_md, &values)
    )))
}

fn continue_plan(run: &mut Run, text: &str, args: &str) -> Act<Reply> {
    let plan = args.split_whitespace().next().filter(|a| !a.contains('$'));
    let command = match plan {
        Some(p) => fill(
            &run.told(text, "taskie continue-plan --plan", "continue-plan")?,
            &[("<plan-id>", p)],
        ),
        None => run.told_exactly(text, "taskie continue-plan", "continue-plan")?,
    };
    let answer = Answer::parse(&run.bash(&command)?);
    let known = Known {
        plan: answer.plan.clone(),
        task: answer.task(),
        why: answer.why.clone(),
    };
    if let Some(action) = answer.action() {
        // "perform that action now, following its own instructions in …/actions/<action>.md"
        let Some(file) = code_spans(text)
            .into_iter()
            .find(|s| s.ends_with("/actions/<action>.md"))
        else {
            return Err(
                run.trouble("continue-plan names no file with the action's instructions".into())
            );
        };
        let file = fill(&file, &[("<action>", action)]);
        let action_text = run.read(&file)?;
        return perform(run, action, &action_text, "", known);
    }
    if answer.next.starts_with("stop") {
        return Ok(Reply::text("Taskie says to stop here; ending my turn."));
    }
    if answer.next.contains("complete") {
        return Ok(Reply::text(format!("The plan is complete: {}", answer.why)));
    }
    Ok(Reply::text(format!(
        "Taskie asks you to decide: {} ({})",
        answer.next, answer.why
    )))
}

/// Runs `taskie continue-plan` as an action's text suggests, to learn the plan and step.
fn ask_taskie(run: &mut Run, text: &str, what: &str) -> Act<Answer> {
    let command = run.told_exactly(text, "taskie continue-plan", what)?;
    Ok(Answer::parse(&run.bash(&command)?))
}

fn create_tasks(run: &mut Run, text: &str, mut known: Known) -> Act<Reply> {
    if known.plan.is_none() {
        known.plan = ask_taskie(run, text, "create-tasks")?.plan;
    }
    let Some(id) = known.plan.clone() else {
        return Err(run.trouble("create-tasks: no plan id".into()));
    };
    let values = [("<plan-id>", id.as_str())];
    let tasks_md = fill(
        &run.told(text, ".taskie/plans/<plan-id>/tasks.md", "create-tasks")?,
        &values,
    );
    let dir = tasks_md.trim_end_matches("tasks.md").to_string();
    run.read(&format!("{dir}plan.md"))?;
    // The table in the shape the action shows: its header and separator rows.
    let example: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('|'))
        .take(2)
        .collect();
    if example.len() < 2 {
        return Err(run.trouble("create-tasks shows no tasks.md table".into()));
    }
    let table = format!(
        "{}\n{}\n| 1 | pending | First step | The first half of the plan |\n\
         | 2 | pending | Second step | The second half of the plan |\n",
        example[0], example[1]
    );
    run.write(&tasks_md, &table)?;
    let task_file = run.told(text, "task-<N>.md", "create-tasks")?;
    for n in ["1", "2"] {
        run.write(
            &format!("{dir}{}", fill(&task_file, &[("<N>", n)])),
            &format!(
                "# Task {n}\n\nGoal: step {n} of the plan.\n\n## Acceptance criteria\n\n- `src/step-{n}.txt` exists\n"
            ),
        )?;
    }
    let validate = run.told(text, "taskie validate", "create-tasks")?;
    run.bash(&fill(&validate, &values))?;
    run.bash(&format!(
        "git add {dir} && git commit -q -m \"{id}: tasks\""
    ))?;
    let mark = run.told(text, "taskie mark ", "create-tasks")?;
    run.bash(&fill(&mark, &values))?;
    Ok(Reply::text(format!(
        "Tasks written to {tasks_md}; the tasks review runs when I stop."
    )))
}

fn complete_task(run: &mut Run, text: &str, args: &str, mut known: Known) -> Act<Reply> {
    let given = args
        .split_whitespace()
        .next()
        .filter(|a| a.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_string);
    if known.plan.is_none() {
        // "If you are unsure whether this is the right step, run `taskie continue-plan`":
        // a new turn does not know the plan, so ask.
        let answer = ask_taskie(run, text, "complete-task")?;
        match answer.action() {
            Some("complete-task") => {
                known.plan = answer.plan.clone();
                known.task = answer.task();
            }
            Some(other) => {
                return Err(run.trouble(format!(
                    "/taskie:complete-task was asked for, but taskie continue-plan says /taskie:{other} ({})",
                    answer.why
                )));
            }
            None => {
                return Err(run.trouble(format!(
                    "/taskie:complete-task was asked for, but taskie continue-plan says: {} ({})",
                    answer.next, answer.why
                )));
            }
        }
    }
    let (Some(id), Some(n)) = (known.plan.clone(), given.or(known.task.clone())) else {
        return Err(run.trouble(format!("complete-task: no plan or task ({known:?})")));
    };
    let values = [("<plan-id>", id.as_str()), ("<N>", n.as_str())];
    let dir = format!(".taskie/plans/{id}/");
    let task_file = run.told(text, "task-<N>.md", "complete-task")?;
    run.read(&format!("{dir}{}", fill(&task_file, &values)))?;
    let tasks = format!("{dir}tasks.md");
    let row = |status: &str| format!("| {n} | {status} |");
    let in_progress = run.told(text, "in progress", "complete-task")?;
    run.edit(&tasks, &row("pending"), &row(&in_progress))?;
    run.write(&format!("src/step-{n}.txt"), &format!("step {n} of {id}\n"))?;
    let done = run.told(text, "done", "complete-task")?;
    run.edit(&tasks, &row(&in_progress), &row(&done))?;
    run.bash(&format!(
        "git add -A && git commit -q -m \"{id}: implement task {n}\""
    ))?;
    let mark = run.told(text, "taskie mark ", "complete-task")?;
    run.bash(&fill(&mark, &values))?;
    Ok(Reply::text(format!(
        "Task {n} is implemented; its code review runs when I stop."
    )))
}

fn continue_task(run: &mut Run, text: &str, known: Known) -> Act<Reply> {
    let Some(id) = known.plan.clone() else {
        return Err(run.trouble("continue-task: no plan id".into()));
    };
    let values = [("<plan-id>", id.as_str())];
    let status = run.told(text, "taskie status", "continue-task")?;
    run.bash(&fill(&status, &values))?;
    // The work on disk is complete (this agent never leaves work half done), so there
    // is nothing to redo: record the step and stop.
    let mark = run.told(text, "taskie mark ", "continue-task")?;
    run.bash(&fill(&mark, &values))?;
    Ok(Reply::text(
        "The work was already finished; the review runs when I stop.",
    ))
}

/// The hook's block: "Now perform /taskie:post-…: read <review>, …, and write what you did to
/// <post>." (or, with auto_continue, "run `taskie continue-plan` now").
fn address_block(run: &mut Run, text: &str) -> Act<Reply> {
    if let Some(at) = text.find("Now perform /taskie:") {
        let rest = &text[at..];
        let review = word_after(rest, " read ").map(|w| w.trim_end_matches(','));
        let post = word_after(rest, "write what you did to ").map(|w| w.trim_end_matches('.'));
        if let (Some(review), Some(post)) = (review, post) {
            return post_review(run, review, post);
        }
    }
    Err(run.trouble(format!(
        "the hook's block names no post-review to do: {text}"
    )))
}

fn post_review(run: &mut Run, review: &str, post: &str) -> Act<Reply> {
    let text = run.read(review)?;
    // The ids the review file's header gives (`> - F1: …`), answered as the block says.
    let findings: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("> - "))
        .collect();
    let mut answer = format!("# Post-review of {review}\n\n");
    for f in &findings {
        let (id, what) = f.split_once(": ").unwrap_or((f, ""));
        answer.push_str(&format!("{id}: fixed — addressed \"{what}\"\n"));
    }
    if findings.is_empty() {
        answer.push_str("No findings; nothing changed.\n");
    }
    run.write(post, &answer)?;
    run.bash(&format!(
        "git add -A && git commit -q -m \"address {review}\""
    ))?;
    Ok(Reply::text(format!(
        "Wrote {post}; stopping so the next review runs."
    )))
}

// ---------- the reviewer ----------

/// The scripted reviewer: the verdict for each review file is the test's choice.
pub struct Reviewer {
    /// Review file (relative to the project) → verdict.
    verdicts: HashMap<String, &'static str>,
    /// The review files reviews were started for, in order.
    started: Mutex<Vec<String>>,
    troubles: Mutex<Vec<String>>,
}

impl Reviewer {
    pub fn new(verdicts: &[(&str, &'static str)]) -> Reviewer {
        Reviewer {
            verdicts: verdicts.iter().map(|(f, v)| (f.to_string(), *v)).collect(),
            started: Mutex::new(Vec::new()),
            troubles: Mutex::new(Vec::new()),
        }
    }

    pub fn started(&self) -> Vec<String> {
        self.started.lock().unwrap().clone()
    }

    pub fn troubles(&self) -> Vec<String> {
        self.troubles.lock().unwrap().clone()
    }

    /// Records that a review started: called for a review's first request as it arrives,
    /// before anything may hold it, so a held request that is answered late (after its
    /// CLI was killed) is counted when it happened, not when it is let go.
    pub fn record_start(&self, req: &Request) {
        if req.assistant_turns() == 0 {
            let file = Reviewer::review_file(req).unwrap_or_default();
            self.started.lock().unwrap().push(file);
        }
    }

    /// The review file the prompt of `req` asks for.
    pub fn review_file(req: &Request) -> Option<String> {
        let prompt = req.first_user_text();
        word_after(
            &prompt,
            "Write your review to exactly this file, creating it: ",
        )
        .map(str::to_string)
    }

    pub fn reply(&self, req: &Request) -> Reply {
        let prompt = req.first_user_text();
        let file = Reviewer::review_file(req).unwrap_or_default();
        let project = word_after(&prompt, "Your working directory is the project: ")
            .map(|w| Path::new(w.trim_end_matches('.')).to_path_buf())
            .unwrap_or_default();
        match req.assistant_turns() {
            0 => {
                // Read what the prompt lists, all at once.
                let listed: Vec<String> = prompt
                    .split("- Read these files first:\n")
                    .nth(1)
                    .unwrap_or_default()
                    .lines()
                    .map_while(|l| l.strip_prefix("  - "))
                    .map(|f| project.join(f).display().to_string())
                    .collect();
                let mut reply = Reply::text("Reading the files.");
                for f in listed {
                    reply = reply.and_tool("Read", json!({"file_path": f}));
                }
                if reply.tool_calls.is_empty() {
                    self.troubles
                        .lock()
                        .unwrap()
                        .push(format!("{file}: the prompt lists no file to read"));
                }
                reply
            }
            1 => {
                let unreadable: Vec<String> = req
                    .tool_results()
                    .into_iter()
                    .filter(|r| r.is_error)
                    .map(|r| r.text)
                    .collect();
                if !unreadable.is_empty() {
                    self.troubles
                        .lock()
                        .unwrap()
                        .push(format!("{file}: cannot read {unreadable:?}"));
                }
                let verdict = match self.verdicts.get(&file) {
                    Some(v) => *v,
                    None => {
                        self.troubles
                            .lock()
                            .unwrap()
                            .push(format!("no verdict scripted for {file}"));
                        "FAIL"
                    }
                };
                let name = Path::new(&file)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let findings: Vec<String> = if verdict == "FAIL" {
                    vec![format!("{name}: the work misses a test for the empty case")]
                } else {
                    Vec::new()
                };
                Reply::tool(
                    "StructuredOutput",
                    json!({"verdict": verdict, "summary": format!("Scripted review {name}: {verdict}."), "findings": findings}),
                )
            }
            _ => Reply::text("Done."),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_plans_answer_is_read_across_wrapped_lines_and_unknown_lines() {
        let out = "plan  add-search\nnote  plan add-search was used by session 1234 five minutes\n      ago\n\
                   next  /taskie:post-plan-review\nwhy   plan-review #1 asked for changes: read\n      \
                   .taskie/plans/add-search/plan-review-1.md, address every finding, write\n      \
                   .taskie/plans/add-search/plan-post-review-1.md, then stop\n";
        let a = Answer::parse(out);
        assert_eq!(a.plan.as_deref(), Some("add-search"));
        assert_eq!(a.action(), Some("post-plan-review"));
        assert_eq!(
            word_after(&a.why, ", write "),
            Some(".taskie/plans/add-search/plan-post-review-1.md,")
        );
        let task = Answer::parse("next  /taskie:complete-task (task 2)\n");
        assert_eq!(
            (task.action(), task.task().as_deref()),
            (Some("complete-task"), Some("2"))
        );
    }

    #[test]
    fn code_spans_are_inline_spans_and_fenced_lines() {
        let text =
            "Run `taskie validate --plan <plan-id>` now.\n\n```bash\ntaskie init <plan-id>\n```\n";
        assert_eq!(
            code_spans(text),
            ["taskie validate --plan <plan-id>", "taskie init <plan-id>"]
        );
    }

    #[test]
    fn the_read_tools_line_numbers_are_stripped_from_either_separator() {
        assert_eq!(
            strip_line_numbers("     1\t# Title\n     2→| 1 | done |\n"),
            "# Title\n| 1 | done |\n"
        );
    }
}
