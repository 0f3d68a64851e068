//! The facts about one plan that every decision is made from: a borrowed view of a
//! plan snapshot (`store::snapshot`), so the rules in `model` and `hook::decide` never
//! touch the disk.

use crate::model::host::{self, Host};
use crate::model::state::{State, StateError};
use crate::model::tasks::TaskRow;

/// What the hook knows about the selected plan before any decision.
pub struct Facts<'a> {
    pub plan: &'a str,
    pub stop_hook_active: bool,
    /// Structure errors (SPEC §7), in order.
    pub errors: &'a [crate::model::validate::StructureError],
    /// state.json: `Ok(None)` when it does not exist.
    pub state: &'a Result<Option<State>, StateError>,
    /// Names of the entries directly in the plan directory.
    pub files: &'a [String],
    /// Rows of tasks.md; empty when it is missing or not a valid table.
    pub tasks: &'a [TaskRow],
    /// What the plan's logged reviews cost (SPEC §18); read only when state.json sets a
    /// budget, 0 otherwise.
    pub spent_usd: f64,
    /// Now, in Unix seconds: whether a usage-limit pause is over (SPEC §22).
    pub now: i64,
    /// The client the hook answers and where its plugin is (SPEC §20): how the texts
    /// name an action.
    pub host: &'a Host,
}

impl Facts<'_> {
    pub fn has_file(&self, name: &str) -> bool {
        self.files.iter().any(|f| f == name)
    }

    /// The task files tasks.md's rows need and that do not exist (the ground rules: one
    /// `task-<id>.md` per listed id). Not a structure error of SPEC §7, which the hook
    /// blocks on, but `mark create-tasks` refuses and `validate` warns.
    pub fn missing_task_files(&self) -> Vec<String> {
        self.tasks
            .iter()
            .filter_map(|t| t.number())
            .map(|n| format!("task-{n}.md"))
            .filter(|name| !self.has_file(name))
            .collect()
    }

    /// Path of a plan file relative to the project directory, as the agent sees it.
    pub fn rel(&self, name: &str) -> String {
        crate::model::plan_file::rel(self.plan, name)
    }
}

/// Everything read of one plan, owned: what `store::snapshot` reads from the plan
/// directory, or what a test sets up with [`FactsBuilder`]; [`Gathered::facts`] borrows it.
#[derive(Debug, Clone)]
pub struct Gathered {
    pub plan: String,
    pub stop_hook_active: bool,
    pub files: Vec<String>,
    pub errors: Vec<crate::model::validate::StructureError>,
    pub tasks: Vec<TaskRow>,
    pub state: Result<Option<State>, StateError>,
    /// What the plan's recorded reviews cost; read only when state.json sets
    /// `max_cost_usd`.
    pub spent_usd: f64,
    /// When the plan was read (Unix seconds, `TASKIE_TEST_NOW` in tests).
    pub now: i64,
}

impl Gathered {
    pub fn facts(&self) -> Facts<'_> {
        Facts {
            plan: &self.plan,
            stop_hook_active: self.stop_hook_active,
            errors: &self.errors,
            state: &self.state,
            files: &self.files,
            tasks: &self.tasks,
            spent_usd: self.spent_usd,
            now: self.now,
            host: &host::CLAUDE,
        }
    }
}

/// Facts that own their data, built up step by step (tests only: the `testing` feature): the one fixture for every test of a
/// decision (`route`, `decide`, `transition`, `advance`), so a field added to [`Facts`] is
/// added here once.
#[cfg(any(test, feature = "testing"))]
#[derive(Debug, Clone)]
pub struct FactsBuilder(Gathered);

#[cfg(any(test, feature = "testing"))]
impl FactsBuilder {
    /// Plan `plan` with no files, no state.json and no tasks.
    pub fn new(plan: &str) -> FactsBuilder {
        FactsBuilder(Gathered {
            plan: plan.into(),
            stop_hook_active: false,
            errors: Vec::new(),
            state: Ok(None),
            files: Vec::new(),
            tasks: Vec::new(),
            spent_usd: 0.0,
            now: 0,
        })
    }

    /// Plan `p` with plan.md and this state.json: where most decision tests start.
    pub fn plan(state_json: &str) -> FactsBuilder {
        FactsBuilder::new("p")
            .files(&["plan.md", "state.json"])
            .state_json(state_json)
    }

    /// state.json as this text would read (an error when it is not a valid state).
    pub fn state_json(mut self, json: &str) -> FactsBuilder {
        self.0.state = State::parse(json.as_bytes()).map(Some);
        self
    }

    pub fn state(mut self, state: Result<Option<State>, StateError>) -> FactsBuilder {
        self.0.state = state;
        self
    }

    /// Adds entries of the plan directory.
    pub fn files(mut self, names: &[&str]) -> FactsBuilder {
        self.0.files.extend(names.iter().map(|n| n.to_string()));
        self
    }

    /// tasks.md's rows, as (id, status).
    pub fn tasks(mut self, rows: &[(&str, &str)]) -> FactsBuilder {
        self.0.tasks = rows
            .iter()
            .map(|(id, status)| TaskRow {
                id: id.to_string(),
                status: status.to_string(),
                title: String::new(),
            })
            .collect();
        self
    }

    pub fn task_rows(mut self, rows: Vec<TaskRow>) -> FactsBuilder {
        self.0.tasks = rows;
        self
    }

    pub fn errors(mut self, errors: Vec<crate::model::validate::StructureError>) -> FactsBuilder {
        self.0.errors = errors;
        self
    }

    pub fn active(mut self, stop_hook_active: bool) -> FactsBuilder {
        self.0.stop_hook_active = stop_hook_active;
        self
    }

    pub fn now(mut self, unix: i64) -> FactsBuilder {
        self.0.now = unix;
        self
    }

    pub fn spent(mut self, usd: f64) -> FactsBuilder {
        self.0.spent_usd = usd;
        self
    }

    /// The state read, when it is one.
    pub fn read_state(&self) -> Option<&State> {
        self.0.state.as_ref().ok().and_then(Option::as_ref)
    }

    pub fn facts(&self) -> Facts<'_> {
        self.0.facts()
    }
}
