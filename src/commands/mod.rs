//! The plan a `taskie` command acts on: the project found from the current directory,
//! the plan chosen by `--plan`, `TASKIE_PLAN` or SPEC §5 step 6, and the reads and
//! writes every command shares. What the commands read from the environment is resolved
//! once, where a command is entered (`settings.rs`, called by `cli`).

use crate::error::Error;
use crate::model::state::State;
use crate::store::atomic;
use crate::store::lock::{self, PlanLock};
use crate::store::project::{self, PlanRef, Project};
use crate::store::select::{self, SelectError};
use crate::store::sessions::{self, SessionId};
use crate::store::snapshot;
use crate::store::snapshot::Gathered;

pub(crate) mod advance;
pub(crate) mod continue_plan;
pub(crate) mod hook_path;
pub(crate) mod init;
pub(crate) mod mark;
pub(crate) mod plans;
pub(crate) mod push;
pub(crate) mod resume;
pub(crate) mod run;
pub(crate) mod settings;
pub(crate) mod state;
pub(crate) mod status;
pub(crate) mod validate;
use std::path::PathBuf;

/// Where the command was started: the parts of the environment every command uses, read
/// once when the command starts (`Invocation::from_env`, `settings.rs`) and passed down.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub cwd: PathBuf,
    /// The highest directory the project is looked for in (`CLAUDE_PROJECT_DIR`, else
    /// `GEMINI_PROJECT_DIR`).
    pub ceiling: Option<PathBuf>,
    /// The Claude Code session the command runs in (`CLAUDE_CODE_SESSION_ID`, SPEC §17).
    pub session: Option<SessionId>,
    /// Whether to colour: `--color`, and for `auto` the terminal, `NO_COLOR` and `TERM`.
    pub paint: crate::paint::Paint,
    /// Who reads what the command prints: what is said to the agent ("stop now") is not
    /// said to a person at a terminal.
    pub audience: Audience,
}

/// Who a command's output is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// An agent (or a script): told what to do next ("stop now").
    Agent,
    /// A person at a terminal: told what happens next, at the agent's stop.
    Person,
}

impl Audience {
    /// A person when stdout is a terminal and no agent host marks the environment. A
    /// terminal alone does not tell: Gemini CLI runs the agent's commands in a
    /// pseudo-terminal (and Codex may), so the variables the hosts set in the agent's
    /// shell decide first: a session id (Claude Code, Codex CLI), `CLAUDECODE`,
    /// `GEMINI_CLI`, or `TASKIE_RUN` (a session `taskie run` started). Output that is
    /// not a terminal, with no host variable, is read by a program: the agent's words.
    pub fn of(stdout_is_terminal: bool, agent_host: bool) -> Audience {
        if stdout_is_terminal && !agent_host {
            Audience::Person
        } else {
            Audience::Agent
        }
    }
}

impl Invocation {
    /// Binds this session, if any, to the plan a command acted on (SPEC §17). A binding
    /// that cannot be written is reported, never a reason to fail the command.
    /// A command that changes one plan's state under its lock (`mark`, `advance`,
    /// `resume`): `change` decides, from the plan as read and its state, the new state (if
    /// any) and what to say; the state is written, the session bound to the plan and the
    /// message printed. Gives back the target and the state as it was.
    pub fn change_state(
        &self,
        plan: Option<&str>,
        out: &mut dyn std::io::Write,
        change: impl FnOnce(&Gathered, &State) -> Result<(Option<State>, String), Error>,
    ) -> Result<(Target, State), Error> {
        let target = self.target(plan)?;
        let (held, gathered, state) = target.locked_state()?;
        let (next, message) = change(&gathered, &state)?;
        if let Some(next) = next {
            target.write_state(&held, &next)?;
        }
        self.bind(&target);
        writeln!(out, "{message}")?;
        Ok((target, state))
    }

    pub fn bind(&self, target: &Target) {
        if let Some(session) = &self.session
            && let Err(e) = sessions::bind(&target.project, session, &target.plan)
        {
            eprintln!(
                "taskie: could not bind this session to plan '{}' in .taskie/sessions ({e})",
                target.plan
            );
        }
    }

    pub fn project(&self) -> Result<Project, Error> {
        project::find_project(&self.cwd, self.ceiling.as_deref())
            .ok_or_else(|| Error::NoProject(self.cwd.clone()))
    }

    /// The plan named by `--plan`, else `TASKIE_PLAN` (clap gives either as `explicit`),
    /// else the plan this session is bound to, else the most recently modified one.
    pub fn target(&self, explicit: Option<&str>) -> Result<Target, Error> {
        let project = self.project()?;
        if !project.plans().is_dir() {
            return match explicit {
                Some(id) => Err(Error::UnknownPlan(format!(
                    "the plan \"{id}\" does not exist: there is no {} directory",
                    project.plans().display()
                ))),
                None => Err(no_plan(&project)),
            };
        }
        let mut warn = |w: String| eprintln!("taskie: {w}");
        match select::select(
            &project,
            explicit,
            self.session.as_ref(),
            select::Selector::Command,
            &mut warn,
        ) {
            Ok(Some(selected)) => Ok(Target {
                project,
                plan: selected.id,
            }),
            Ok(None) => Err(no_plan(&project)),
            Err(SelectError::Explicit(m)) => Err(Error::UnknownPlan(m)),
            // Commands never hide a plan (Selector::Command): only the hook leaves one alone.
            Err(e @ SelectError::Held { .. }) => Err(Error::UnknownPlan(e.to_string())),
            Err(SelectError::Io(e)) => Err(Error::Io(e)),
        }
    }
}

fn no_plan(project: &Project) -> Error {
    Error::NoPlan(format!(
        "no plan in {}; start one with /taskie:new-plan",
        project.plans().display()
    ))
}

/// A selected plan of a project: the plan handle the hook uses too (`store/project.rs`),
/// with what the commands add to it below.
pub type Target = PlanRef;

/// What the commands do with a plan: lock it, read it, write its state.
impl PlanRef {
    /// Takes the plan lock without waiting. While it is held, leftovers of crashed
    /// writers are removed (SPEC §5 step 7), as the hook does.
    /// Every write of a command takes this lock first, so the link rule is checked here:
    /// a command never writes through a link out of `.taskie/` (store/snapshot.rs).
    pub fn lock(&self) -> Result<PlanLock, Error> {
        if let Some(problem) = snapshot::escaping_link(&self.project, &self.plan) {
            return Err(Error::Refused(format!(
                "{problem}; taskie writes only inside .taskie/, so nothing was changed: replace the link with a \
                 real directory"
            )));
        }
        match lock::try_lock(&self.locks(), &self.plan)? {
            Some(held) => {
                atomic::remove_leftovers(&self.dir());
                Ok(held)
            }
            None => Err(Error::Locked {
                plan: self.plan.clone(),
                holder: lock::holder_text(&self.locks(), &self.plan),
            }),
        }
    }

    /// The listing, structure errors, task rows and state, read as the hook reads them.
    pub fn gather(&self) -> Result<Gathered, Error> {
        Ok(Gathered::read(&self.dir(), &self.plan, false)?)
    }

    /// state.json as a usable state: `Ok(None)` when it does not exist.
    pub fn state(&self) -> Result<Option<State>, Error> {
        self.usable(snapshot::read_state(&self.state_path()))
    }

    /// The state of `gathered`, with a state error turned into [`Error::State`].
    pub fn state_of(&self, gathered: &Gathered) -> Result<Option<State>, Error> {
        self.usable(gathered.state.clone())
    }

    /// For the commands that change an existing state: the plan lock, the plan as read
    /// under it, and its state (an error when there is no state.json).
    pub fn locked_state(&self) -> Result<(PlanLock, Gathered, State), Error> {
        let held = self.lock()?;
        let gathered = self.gather()?;
        let state = self
            .state_of(&gathered)?
            .ok_or_else(|| Error::NoState(self.plan.clone()))?;
        Ok((held, gathered, state))
    }

    fn usable(
        &self,
        read: Result<Option<State>, crate::model::state::StateError>,
    ) -> Result<Option<State>, Error> {
        read.map_err(|error| Error::State {
            plan: self.plan.clone(),
            error,
        })
    }

    /// Writes state.json atomically. The lock parameter makes "only under the plan lock"
    /// something the compiler checks.
    pub fn write_state(&self, held: &PlanLock, state: &State) -> Result<(), Error> {
        self.write_state_text(held, &state.to_json())
    }

    pub fn write_state_text(&self, _held: &PlanLock, text: &str) -> Result<(), Error> {
        // A ledger entry a killed hook left pending waits for the state on disk now.
        crate::store::snapshot::settle_ledgers(&self.dir()).map_err(Error::Io)?;
        // atomic::write_durable names the file in its errors.
        atomic::write_durable(&self.state_path(), text.as_bytes()).map_err(Error::Io)
    }
}

#[cfg(test)]
mod tests {
    use super::Audience;

    #[test]
    fn only_a_terminal_without_an_agent_hosts_mark_is_a_person() {
        assert_eq!(Audience::of(true, false), Audience::Person);
        // Gemini CLI's shell is a pseudo-terminal: its variable decides.
        assert_eq!(Audience::of(true, true), Audience::Agent);
        // A pipe is read by a program: a host we do not know, or a script.
        assert_eq!(Audience::of(false, false), Audience::Agent);
        assert_eq!(Audience::of(false, true), Audience::Agent);
    }
}
