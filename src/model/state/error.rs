//! Why state.json could not be used, with the fix in every message.

use std::fmt;

/// One field with a value it may not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    pub field: String,
    pub value: String,
    pub expected: String,
    pub example: String,
}

impl fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "field \"{}\" is {}, expected {}; fix it with `taskie state set {}={}`",
            self.field, self.value, self.expected, self.field, self.example
        )
    }
}

/// Why state.json could not be used. The file is never modified in these cases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateError {
    /// The file exists but could not be read (permissions, not a file, …).
    Unreadable(String),
    NotJson(String),
    NotObject,
    Fields(Vec<FieldProblem>),
    /// Keys that are not fields but nearly are (`max_review`): a typo whose value taskie
    /// would silently ignore. (key, the field it is near)
    Misspelt(Vec<(String, &'static str)>),
}

impl StateError {
    /// The problem and how to fix it, for plan `plan`. Recreating state.json is offered
    /// only with what it costs: it restarts the plan.
    pub fn explain(&self, plan: &str) -> String {
        let recreate = format!(
            "or recreate it with `taskie init {plan} --force`, which restarts the plan at its plan review \
             (the progress recorded in state.json is lost)"
        );
        match self {
            StateError::NotJson(_) => {
                format!("{self}; repair it by hand at that position, {recreate}")
            }
            StateError::NotObject => format!("{self}; repair it by hand, {recreate}"),
            _ => self.to_string(),
        }
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::Unreadable(e) => {
                write!(f, "state.json cannot be read ({e}); check its permissions")
            }
            // serde_json's text ends with the line and column of the problem.
            StateError::NotJson(e) => write!(f, "state.json is not valid JSON ({e})"),
            StateError::NotObject => f.write_str("state.json must hold a JSON object"),
            StateError::Fields(problems) => {
                let parts: Vec<String> =
                    problems.iter().map(|p| format!("state.json {p}")).collect();
                f.write_str(&parts.join("; "))
            }
            StateError::Misspelt(keys) => {
                let parts: Vec<String> = keys
                    .iter()
                    .map(|(key, field)| {
                        format!(
                            "state.json has \"{key}\", which is not a field (did you mean \"{field}\"?), so its \
                             value is ignored; rename it to \"{field}\" (or remove it) by hand"
                        )
                    })
                    .collect();
                f.write_str(&parts.join("; "))
            }
        }
    }
}
