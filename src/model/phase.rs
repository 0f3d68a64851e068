//! Phase names (SPEC §3) and the four review cycles.

use std::fmt;

/// Every name `next_phase` may hold.
pub const PHASES: [&str; 17] = [
    "new-plan",
    "plan-review",
    "post-plan-review",
    "create-tasks",
    "tasks-review",
    "post-tasks-review",
    "next-task",
    "next-task-tdd",
    "complete-task",
    "complete-task-tdd",
    "continue-task",
    "code-review",
    "post-code-review",
    "all-code-review",
    "post-all-code-review",
    "add-task",
    "complete",
];

pub fn is_known(name: &str) -> bool {
    PHASES.contains(&name)
}

/// One of the four phases whose due-ness makes the hook run a reviewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Review {
    Plan,
    Tasks,
    Code,
    AllCode,
}

impl Review {
    pub const ALL: [Review; 4] = [Review::Plan, Review::Tasks, Review::Code, Review::AllCode];

    pub fn name(self) -> &'static str {
        match self {
            Review::Plan => "plan-review",
            Review::Tasks => "tasks-review",
            Review::Code => "code-review",
            Review::AllCode => "all-code-review",
        }
    }

    pub fn post_name(self) -> &'static str {
        match self {
            Review::Plan => "post-plan-review",
            Review::Tasks => "post-tasks-review",
            Review::Code => "post-code-review",
            Review::AllCode => "post-all-code-review",
        }
    }

    pub fn from_name(name: &str) -> Option<Review> {
        Review::ALL.into_iter().find(|r| r.name() == name)
    }

    pub fn from_post_name(name: &str) -> Option<Review> {
        Review::ALL.into_iter().find(|r| r.post_name() == name)
    }
}

impl fmt::Display for Review {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The reviewer model after `current`: opus and sonnet alternate, others stay.
pub fn toggle_model(current: &str) -> &str {
    match current {
        "opus" => "sonnet",
        "sonnet" => "opus",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn review_names_round_trip() {
        for r in Review::ALL {
            assert_eq!(Review::from_name(r.name()), Some(r));
            assert_eq!(Review::from_post_name(r.post_name()), Some(r));
            assert!(is_known(r.name()) && is_known(r.post_name()));
        }
        assert_eq!(Review::from_name("post-plan-review"), None);
    }

    #[test]
    fn models_alternate_and_unknown_models_stay() {
        assert_eq!(toggle_model("opus"), "sonnet");
        assert_eq!(toggle_model("sonnet"), "opus");
        assert_eq!(toggle_model("haiku"), "haiku");
    }
}
