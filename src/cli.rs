//! The command lines of `taskie` and `taskie-hook`, and the one place that decides
//! exit codes. Parsing and dispatch only: each command lives in its own module.

use crate::commands::Invocation;
use crate::commands::mark::Mark;
use crate::commands::{
    advance, continue_plan, init, mark, plans, push, resume, run, settings, state, status, validate,
};
use crate::error::Error;
use crate::hook::{self, dry_run};
use clap::{Args, CommandFactory, Parser, Subcommand};
use std::io::{ErrorKind, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Taskie: plan → reviewed plan → tasks → reviewed tasks → reviewed code, driven by the
/// stop hook of Claude Code, Codex CLI or Gemini CLI.
#[derive(Debug, Parser)]
#[command(
    name = "taskie",
    version,
    after_help = "\
The plan is .taskie/plans/<plan-id>/, found from the current directory upwards. Which plan:
--plan (-p), else TASKIE_PLAN, else the plan this session is bound to (a command binds the
session to the plan it acted on), else the plan whose files changed last. `taskie plans`
lists them all.

Usual flow: the agent runs `taskie continue-plan`, performs the /taskie:<action> it names,
records it with `taskie mark <phase>`, and stops; the stop hook runs the reviews.
After a hard stop the human decides: `taskie state set --plan <id> max_reviews=<n>`,
`taskie advance --plan <id>` or `taskie state set --plan <id> review_failures=0`
(`taskie status` prints the exact commands).

Exit status: 0 success, 1 error (one line on stderr), 2 usage error."
)]
pub struct Cli {
    /// Run as if taskie had been started in DIR.
    #[arg(short = 'C', long = "directory", value_name = "DIR", global = true)]
    pub directory: Option<PathBuf>,
    /// When to colour the output: auto (on a terminal, unless NO_COLOR is set), always or
    /// never.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t, global = true)]
    pub color: crate::paint::Choice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the next step: the /taskie:<action> to perform, why, and the task.
    ContinuePlan(ReportArgs),
    /// Show the plan at a glance: phase, review cycle, tasks, verdicts, hard stop.
    Status(ReportArgs),
    /// Check the plan directory's structure; prints each error, exit status 1 if any.
    Validate(PlanArg),
    /// Create state.json for a plan whose plan.md exists (its plan review is due next).
    Init(InitArgs),
    /// Record that a phase is finished; refused when it does not fit the current state.
    Mark(MarkArgs),
    /// Read or edit state.json fields (with the same type rules the hook reads them by).
    #[command(subcommand)]
    State(StateCommand),
    /// After a hard stop: accept the current review cycle as passed and move on.
    Advance(PlanArg),
    /// Lift a reviewer usage-limit pause: the next stop runs the review.
    Resume(PlanArg),
    /// Run the plan's tasks unattended: one agent session per ready task in a git worktree
    /// of its own, each gated by the hook, merged when its review passed (docs/run.md).
    Run(RunArgs),
    /// List every plan of the project: phase, whether it is paused or hard-stopped, which
    /// session works on it, when it last changed.
    Plans(JsonArg),
    /// After a commit: push it, only if the user turned pushing on (TASKIE_PUSH=1).
    Push,
    /// Run the Stop hook, exactly as taskie-hook does.
    Hook(HookArgs),
    /// Print where the native taskie-hook is, to register the hook by hand (no Node per stop).
    HookPath,
    /// Print the shell completion script for SHELL (docs/commands.md says where it goes).
    Completions {
        /// bash, elvish, fish, powershell or zsh.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Clone, Default, Args)]
pub struct PlanArg {
    /// The plan to act on (default: TASKIE_PLAN, else the plan this session is bound to,
    /// else the most recently modified plan).
    #[arg(short, long, value_name = "ID", value_parser = plan_id, env = "TASKIE_PLAN", hide_env = true)]
    pub plan: Option<String>,
}

impl PlanArg {
    /// What clap makes of no `--plan`: `TASKIE_PLAN`, for a subcommand taken without clap
    /// ([`Command::bare`]). `None` when the variable is not a plan id: clap then parses the
    /// command line and refuses it as it refuses a bad `--plan`.
    fn from_env() -> Option<PlanArg> {
        match crate::env::Var::Plan.env_value() {
            Some(id) if plan_id(&id).is_err() => None,
            plan => Some(PlanArg { plan }),
        }
    }
}

#[derive(Debug, Clone, Default, Args)]
pub struct JsonArg {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Default, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub plan: PlanArg,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

impl Command {
    /// A subcommand that takes only options, typed with none (`taskie status`, what an agent
    /// runs most): what clap would parse, without building clap's tree of every command,
    /// which costs such a command a sixth of its run (docs/performance.md). The test
    /// `a_bare_subcommand_parses_as_clap_would` holds it to clap's answer.
    fn bare(name: &std::ffi::OsStr) -> Option<Command> {
        Some(match name.to_str()? {
            "continue-plan" => Command::ContinuePlan(ReportArgs {
                plan: PlanArg::from_env()?,
                json: false,
            }),
            "status" => Command::Status(ReportArgs {
                plan: PlanArg::from_env()?,
                json: false,
            }),
            "validate" => Command::Validate(PlanArg::from_env()?),
            "advance" => Command::Advance(PlanArg::from_env()?),
            "resume" => Command::Resume(PlanArg::from_env()?),
            "plans" => Command::Plans(JsonArg::default()),
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Args)]
pub struct InitArgs {
    /// The plan: .taskie/plans/<PLAN_ID>/plan.md must exist.
    #[arg(value_parser = plan_id)]
    pub plan_id: String,
    /// Reviews allowed per review cycle; 0 disables reviews.
    #[arg(long, value_name = "N", default_value_t = crate::model::state::DEFAULT_MAX_REVIEWS)]
    pub max_reviews: u64,
    /// Implement tasks test-first (complete-task-tdd).
    #[arg(long)]
    pub tdd: bool,
    /// Replace an existing state.json.
    #[arg(long)]
    pub force: bool,
    /// A reviewer as KIND:MODEL, kind claude, codex or gemini (repeat for several; they
    /// take turns, or run together with --review-mode panel). Default: claude with
    /// review_model.
    #[arg(long = "reviewer", value_name = "KIND:MODEL")]
    pub reviewers: Vec<String>,
    /// alternate (one reviewer per review, in turn) or panel (all at once).
    #[arg(long, value_name = "MODE")]
    pub review_mode: Option<String>,
    /// The plan's review budget in US dollars: reviews stop once it is spent.
    #[arg(long, value_name = "USD")]
    pub max_cost_usd: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub plan: PlanArg,
    /// Agent sessions at once (at most 2 of one vendor).
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 2)]
    pub jobs: usize,
    /// The agent CLIs sessions run, comma-separated (`claude,codex`): a task without an
    /// Agent cell goes to the least busy one. TASKIE_AGENT names another program called
    /// the same way.
    #[arg(long, value_name = "CLI", default_value = "claude", value_delimiter = ',', value_parser = ["claude", "codex", "gemini"])]
    pub agent: Vec<String>,
    /// none: leave the integration branch and print its name; ff: fast-forward your branch
    /// to it once the all-code review passed (never a force).
    #[arg(long, value_name = "HOW", default_value = "none", value_parser = ["none", "ff"])]
    pub land: String,
    /// Continue the plan's last run after a crash or a partial end.
    #[arg(long)]
    pub resume: bool,
    /// Print one JSON object at the end (progress goes to stderr).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct MarkArgs {
    /// The finished phase: create-tasks, complete-task[-tdd], next-task[-tdd], continue-task,
    /// post-<review>, <review> (standalone), add-task or complete.
    #[arg(value_name = "PHASE", value_parser = Mark::parse_arg)]
    pub phase: Mark,
    /// The task (for complete-task, complete-task-tdd, next-task, next-task-tdd, add-task).
    #[arg(long, value_name = "N", value_parser = task_id)]
    pub task: Option<u64>,
    #[command(flatten)]
    pub plan: PlanArg,
}

#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// Print every field as JSON (defaults filled in), or the value of one field.
    Get {
        /// One field, e.g. tdd or current_task; strings are printed without quotes.
        field: Option<String>,
        #[command(flatten)]
        plan: PlanArg,
    },
    /// Set fields, e.g. `max_reviews=10 review_failures=0`; if any value is invalid
    /// nothing is written.
    #[command(after_help = crate::model::state::fields_help())]
    Set {
        /// Assignments such as max_reviews=10, tdd=true, current_task=null.
        #[arg(value_name = "FIELD=VALUE", required = true)]
        assignments: Vec<String>,
        #[command(flatten)]
        plan: PlanArg,
    },
}

/// Plan ids end up in paths, so a bad one is a usage error before anything runs.
fn plan_id(s: &str) -> Result<String, String> {
    if crate::model::plan_file::valid_id(s) {
        Ok(s.to_owned())
    } else {
        Err(crate::model::plan_file::ID_RULE.into())
    }
}

/// What `taskie-hook --help` says after the options; the environment comes from the one
/// table of variables (`env.rs`).
fn hook_help() -> String {
    format!(
        "\
Reads one JSON event (the stop hook's input from Claude Code, Codex CLI or Gemini CLI: cwd,
session_id, stop_hook_active, hook_event_name) on stdin and answers with nothing or one JSON
object on stdout, in the form that client reads: a block,
which hands the agent instructions (the review to address) and keeps it working, or an
allow, with a systemMessage for the user when there is something to say. Diagnostics go
to stderr. The exit status is always 0, even on errors, so a broken setup never traps a
session.

{}",
        wrap_columns(crate::env::help().trim_end())
    )
}

/// A two-column list ("  NAME  meaning") with each meaning wrapped under itself, so no
/// line of the help is wider than a terminal.
fn wrap_columns(list: &str) -> String {
    list.lines()
        .map(|line| {
            let name_end = line
                .char_indices()
                .skip_while(|(_, c)| *c == ' ')
                .find(|(_, c)| *c == ' ')
                .map_or(line.len(), |(i, _)| i);
            let rest = &line[name_end..];
            let start = name_end + rest.len() - rest.trim_start().len();
            if start >= line.len() {
                return line.to_string();
            }
            format!(
                "{}{}",
                &line[..start],
                crate::paint::wrap(&line[start..], start, crate::paint::WIDTH)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Taskie's stop hook for Claude Code, Codex CLI and Gemini CLI: runs a due review and
/// answers block or allow.
#[derive(Debug, Parser)]
#[command(
    name = "taskie-hook",
    version,
    after_help = hook_help()
)]
pub struct HookCli {
    #[command(flatten)]
    pub args: HookArgs,
}

#[derive(Debug, Clone, Default, Args)]
pub struct HookArgs {
    /// Report what the hook would do, without running the reviewer or writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run and no event on stdin: the project directory (default: the current one).
    #[arg(long, value_name = "DIR", requires = "dry_run")]
    pub cwd: Option<PathBuf>,
    /// The plan to act on (also TASKIE_PLAN), instead of the one this session is bound to,
    /// else the most recently modified one.
    #[arg(short, long, value_name = "ID", env = "TASKIE_PLAN", hide_env = true)]
    pub plan: Option<String>,
    /// With --dry-run: print the report as one JSON object.
    #[arg(long, requires = "dry_run")]
    pub json: bool,
}

/// `--task N`: a task's number, as in the Id column of tasks.md.
fn task_id(text: &str) -> Result<u64, String> {
    crate::model::text::decimal(text.trim()).ok_or_else(|| {
        format!("\"{text}\" is not a task id: use the number in the Id column of tasks.md, as in --task 2")
    })
}

/// A binary started as a reviewer's guardian (`reviewer/guardian.rs`) or a notifier's
/// supervisor (`store/notify.rs`) is only that.
fn guardian_role() {
    let first = std::env::args_os().nth(1);
    if first.as_deref() == Some(crate::reviewer::guardian::ROLE_ARG.as_ref()) {
        crate::reviewer::guardian::serve();
    }
    if first.as_deref() == Some(crate::store::notify::ROLE_ARG.as_ref()) {
        crate::store::notify::serve(std::env::args_os().skip(2));
    }
}

/// `taskie-hook`: exit status 0 whatever happens, even for a bad command line, so a
/// broken setup can never trap the user (SPEC §4).
pub fn hook_main() {
    guardian_role();
    // The registered command passes no arguments: building clap's command (with its
    // generated help) would be most of a stop's own work (docs/performance.md).
    if std::env::args_os().len() <= 1 {
        return run_hook(&HookArgs::default());
    }
    match HookCli::try_parse() {
        Ok(cli) => run_hook(&cli.args),
        Err(e) => {
            let _ = e.print();
            // A bad command line in hooks.json would otherwise do nothing at every stop
            // with nobody told: say so where the user sees it (help and version are not errors).
            if e.use_stderr() {
                let first = e.to_string();
                let first = first.lines().next().unwrap_or_default();
                let first = first.strip_prefix("error: ").unwrap_or(first);
                let answer = crate::hook::answer::Answer::allow(
                    crate::hook::message::bad_command_line(first),
                );
                println!("{}", answer.to_stdout_on(Default::default(), None));
            }
        }
    }
}

fn run_hook(args: &HookArgs) {
    let settings = hook::Settings::resolve(args.plan.clone());
    if args.dry_run {
        let report = dry_run::report(&settings, args.cwd.clone());
        let text = if args.json {
            // Pretty, as `taskie status --json`: the report is read by people too.
            serde_json::to_string_pretty(&report).expect("a report always serializes") + "\n"
        } else {
            dry_run::human(&report)
        };
        // print! would panic on a closed stdout; the hook exits 0 whatever happens.
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    } else {
        hook::main(&settings);
    }
}

/// `taskie`: 0 success, 1 error, 2 usage error (SPEC §12).
pub fn main() -> ExitCode {
    guardian_role();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let bare = match args.as_slice() {
        [_, name] => Command::bare(name).map(|command| Cli {
            directory: None,
            color: Default::default(),
            command,
        }),
        _ => None,
    };
    let cli = match bare.map_or_else(|| Cli::try_parse_from(&args), Ok) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    // As `git -C`: everything after this runs as if started in DIR.
    if let Some(dir) = &cli.directory
        && let Err(e) = std::env::set_current_dir(dir)
    {
        eprintln!(
            "taskie: -C {}: cannot change to that directory ({e})",
            dir.display()
        );
        return ExitCode::from(2);
    }
    if let Command::Hook(args) = &cli.command {
        run_hook(args);
        return ExitCode::SUCCESS;
    }
    if let Command::Completions { shell } = cli.command {
        // Into memory first: clap_complete panics on a write error (`… | head`).
        let mut script = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "taskie", &mut script);
        let _ = std::io::stdout().lock().write_all(&script);
        return ExitCode::SUCCESS;
    }
    // Not locked for the whole command: `taskie run` shows its lanes from a thread of its
    // own too, which would wait forever for a lock this thread held.
    let mut stdout = std::io::stdout();
    let result =
        Invocation::from_env(cli.color).and_then(|inv| dispatch(cli.command, &inv, &mut stdout));
    let _ = stdout.flush();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match exit_code(&e) {
            0 => ExitCode::SUCCESS,
            code => {
                eprintln!("taskie: {e}");
                ExitCode::from(code)
            }
        },
    }
}

fn exit_code(e: &Error) -> u8 {
    match e {
        // The reader left early (`taskie status | head -1`): it has all it wanted.
        Error::Io(io) if io.kind() == ErrorKind::BrokenPipe => 0,
        Error::Usage(_) => 2,
        _ => 1,
    }
}

fn dispatch(command: Command, inv: &Invocation, out: &mut dyn Write) -> Result<(), Error> {
    match command {
        Command::ContinuePlan(r) => continue_plan::run(inv, r.plan.plan.as_deref(), r.json, out),
        Command::Status(r) => status::run(inv, r.plan.plan.as_deref(), r.json, out),
        Command::Validate(p) => validate::run(inv, p.plan.as_deref(), out),
        Command::Init(a) => {
            let mut options = Vec::new();
            if !a.reviewers.is_empty() {
                options.push(("reviewers", a.reviewers.join(",")));
            }
            options.extend(a.review_mode.map(|m| ("review_mode", m)));
            options.extend(a.max_cost_usd.map(|c| ("max_cost_usd", c)));
            init::run(
                inv,
                &a.plan_id,
                a.max_reviews,
                a.tdd,
                a.force,
                &options,
                out,
            )
        }
        Command::Mark(a) => mark::run(inv, a.plan.plan.as_deref(), a.phase, a.task, out),
        Command::State(StateCommand::Get { field, plan }) => {
            state::get(inv, plan.plan.as_deref(), field.as_deref(), out)
        }
        Command::State(StateCommand::Set { assignments, plan }) => {
            state::set(inv, plan.plan.as_deref(), &assignments, out)
        }
        Command::Advance(p) => advance::run(inv, p.plan.as_deref(), out),
        Command::Resume(p) => resume::run(inv, p.plan.as_deref(), out),
        Command::Run(a) => run::run(
            inv,
            &run::Options {
                plan: a.plan.plan,
                jobs: a.jobs,
                agents: a
                    .agent
                    .iter()
                    .filter_map(|n| crate::model::host::Client::from_name(n))
                    .fold(Vec::new(), |mut all, c| {
                        if !all.contains(&c) {
                            all.push(c);
                        }
                        all
                    }),
                land: if a.land == "ff" {
                    crate::model::run::journal::Land::Ff
                } else {
                    crate::model::run::journal::Land::None
                },
                json: a.json,
                resume: a.resume,
                settings: settings::RunSettings::from_env(),
            },
            out,
        ),
        Command::Plans(j) => plans::run(inv, settings::plans_default().as_deref(), j.json, out),
        Command::Push => push::run(inv, settings::push_enabled(), out),
        Command::Hook(args) => {
            run_hook(&args);
            Ok(())
        }
        Command::HookPath => {
            let path = crate::commands::hook_path::path().map_err(Error::Refused)?;
            writeln!(out, "{}", path.display())?;
            Ok(())
        }
        // Answered in `main` before any project is looked for.
        Command::Completions { .. } => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_well_formed() {
        Cli::command().debug_assert();
        HookCli::command().debug_assert();
    }

    #[test]
    fn a_bare_subcommand_parses_as_clap_would() {
        let names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .collect();
        // Every name taken bare is one of clap's, and parses as clap parses it.
        let mut bare = Vec::new();
        for name in &names {
            if let Some(fast) = Command::bare(name.as_ref()) {
                bare.push(name.as_str());
                let parsed = Cli::try_parse_from(["taskie", name.as_str()]).unwrap();
                assert_eq!(
                    format!("{fast:?}"),
                    format!("{:?}", parsed.command),
                    "{name}"
                );
            }
        }
        assert_eq!(
            bare,
            [
                "continue-plan",
                "status",
                "validate",
                "advance",
                "resume",
                "plans"
            ]
        );
        assert!(Command::bare("status --json".as_ref()).is_none());
    }
}
