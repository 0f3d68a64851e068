//! The facts about one plan that every decision is made from: a borrowed view of a
//! plan snapshot (`store::snapshot`), so the rules in `model` and `hook::decide` never
//! touch the disk.

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
}

impl Facts<'_> {
    pub fn has_file(&self, name: &str) -> bool {
        self.files.iter().any(|f| f == name)
    }

    /// Path of a plan file relative to the project directory, as the agent sees it.
    pub fn rel(&self, name: &str) -> String {
        format!(".taskie/plans/{}/{}", self.plan, name)
    }
}
