//! The command lines of `taskie` and `taskie-hook`, and the one place that decides
//! exit codes.

use crate::{dryrun, hook};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Taskie: plan → reviewed plan → tasks → reviewed tasks → reviewed code, driven by a
/// Claude Code Stop hook.
#[derive(Debug, Parser)]
#[command(name = "taskie", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the Stop hook, exactly as taskie-hook does.
    Hook(HookArgs),
}

/// Claude Code's Stop hook for Taskie: runs a due review and answers block or allow.
#[derive(Debug, Parser)]
#[command(name = "taskie-hook", version)]
pub struct HookCli {
    #[command(flatten)]
    pub args: HookArgs,
}

#[derive(Debug, Clone, Args)]
pub struct HookArgs {
    /// Report what the hook would do, without running the reviewer or writing anything.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run and no event on stdin: the project directory (default: the current one).
    #[arg(long, value_name = "DIR", requires = "dry_run")]
    pub cwd: Option<PathBuf>,
    /// The plan to act on, instead of the most recently modified one (also TASKIE_PLAN).
    #[arg(long, value_name = "ID")]
    pub plan: Option<String>,
    /// With --dry-run: print the report as one JSON object.
    #[arg(long, requires = "dry_run")]
    pub json: bool,
}

/// `taskie-hook`: exit status 0 whatever happens, even for a bad command line, so a
/// broken setup can never trap the user (SPEC §4).
pub fn hook_main() {
    match HookCli::try_parse() {
        Ok(cli) => run_hook(&cli.args),
        Err(e) => {
            let _ = e.print();
        }
    }
}

fn run_hook(args: &HookArgs) {
    let opts = hook::Options {
        plan: args.plan.clone(),
    };
    if args.dry_run {
        let report = dryrun::report(&opts, args.cwd.clone());
        if args.json {
            println!("{report}");
        } else {
            print!("{}", dryrun::human(&report));
        }
    } else {
        hook::main(&opts);
    }
}

/// `taskie`: 0 success, 1 error, 2 usage error (SPEC §12).
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        Command::Hook(args) => {
            run_hook(&args);
            ExitCode::SUCCESS
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_lines_are_well_formed() {
        Cli::command().debug_assert();
        HookCli::command().debug_assert();
    }
}
