//! `taskie push`: the agent runs it after each commit, and it pushes only when the user
//! turned pushing on (`TASKIE_PUSH`). Pushing is opt-in because the agent commits every
//! plan, review and task to whatever branch is checked out, and a team's remote is not
//! the place for that unless its owner says so.

use crate::commands::Invocation;
use crate::error::Error;
use std::io::Write;
use std::process::Command;

/// `enabled`: whether the user turned pushing on (`TASKIE_PUSH`, read where the command
/// was entered: `settings::push_enabled`).
pub fn run(inv: &Invocation, enabled: bool, out: &mut dyn Write) -> Result<(), Error> {
    if !enabled {
        writeln!(
            out,
            "Not pushed: pushing is off (the default). Commit only; the user turns pushing on with {}=1.",
            crate::env::Var::Push.name()
        )?;
        return Ok(());
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(&inv.cwd)
            // A push that would ask for a password fails instead of waiting on a prompt
            // nobody sees.
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .map_err(|e| Error::Refused(format!("cannot run git ({e}); nothing was pushed")))
    };
    let remotes = git(&["remote"])?;
    if !remotes.status.success() {
        return Err(Error::Refused(format!(
            "not a git repository here ({}); nothing was pushed",
            String::from_utf8_lossy(&remotes.stderr).trim()
        )));
    }
    if remotes.stdout.iter().all(u8::is_ascii_whitespace) {
        writeln!(out, "Not pushed: this repository has no remote.")?;
        return Ok(());
    }
    let push = git(&["push"])?;
    out.write_all(&push.stdout)?;
    std::io::stderr().write_all(&push.stderr)?;
    if !push.status.success() {
        return Err(Error::Refused(format!(
            "git push failed ({}): tell the user; never force-push or rewrite history to make it pass",
            push.status
        )));
    }
    writeln!(out, "Pushed ({}=1).", crate::env::Var::Push.name())?;
    Ok(())
}
