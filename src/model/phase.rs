//! Phase names (SPEC §3) and the four review cycles.

use serde::{Serialize, Serializer};
use std::fmt;

/// Every name `next_phase` may hold, in declaration order (derived from [`Phase`]).
pub const PHASES: &[&str] = <Phase as strum::VariantNames>::VARIANTS;

pub fn is_known(name: &str) -> bool {
    Phase::parse(name).is_some()
}

/// One of the 17 phase names of SPEC §3; each is spelt as its variant in kebab case.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantNames,
    strum::VariantArray,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Phase {
    NewPlan,
    PlanReview,
    PostPlanReview,
    CreateTasks,
    TasksReview,
    PostTasksReview,
    NextTask,
    NextTaskTdd,
    CompleteTask,
    CompleteTaskTdd,
    ContinueTask,
    CodeReview,
    PostCodeReview,
    AllCodeReview,
    PostAllCodeReview,
    AddTask,
    Complete,
}

impl Phase {
    /// Every phase, in the order of [`PHASES`].
    pub const ALL: &[Phase] = <Phase as strum::VariantArray>::VARIANTS;

    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn parse(name: &str) -> Option<Phase> {
        name.parse().ok()
    }

    /// The review this phase is, if it is one of the four review phases.
    pub fn review(self) -> Option<Review> {
        Review::ALL.iter().copied().find(|r| r.phase() == self)
    }

    /// The review R when this phase is its post-review `post-R`.
    pub fn post_review_of(self) -> Option<Review> {
        Review::ALL.iter().copied().find(|r| r.post_phase() == self)
    }

    /// Phases after which implementation work may be unfinished (SPEC §13).
    pub fn is_implementation(self) -> bool {
        matches!(
            self,
            Phase::NextTask
                | Phase::NextTaskTdd
                | Phase::CompleteTask
                | Phase::CompleteTaskTdd
                | Phase::ContinueTask
        )
    }

    /// The implementation phase of the task loop: its TDD variant when `tdd` is set.
    pub fn implement(tdd: bool) -> Phase {
        if tdd {
            Phase::CompleteTaskTdd
        } else {
            Phase::CompleteTask
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One of the four phases whose due-ness makes the hook run a reviewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::VariantArray)]
pub enum Review {
    Plan,
    Tasks,
    Code,
    AllCode,
}

impl Review {
    pub const ALL: &[Review] = <Review as strum::VariantArray>::VARIANTS;

    /// The review phase R.
    pub fn phase(self) -> Phase {
        match self {
            Review::Plan => Phase::PlanReview,
            Review::Tasks => Phase::TasksReview,
            Review::Code => Phase::CodeReview,
            Review::AllCode => Phase::AllCodeReview,
        }
    }

    /// Its post-review phase `post-R`.
    pub fn post_phase(self) -> Phase {
        match self {
            Review::Plan => Phase::PostPlanReview,
            Review::Tasks => Phase::PostTasksReview,
            Review::Code => Phase::PostCodeReview,
            Review::AllCode => Phase::PostAllCodeReview,
        }
    }

    pub fn name(self) -> &'static str {
        self.phase().name()
    }

    pub fn post_name(self) -> &'static str {
        self.post_phase().name()
    }

    pub fn from_name(name: &str) -> Option<Review> {
        Phase::parse(name)?.review()
    }
}

/// A review serialises as its phase name (`"code-review"`).
impl Serialize for Review {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
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
        for &r in Review::ALL {
            assert_eq!(Review::from_name(r.name()), Some(r));
            assert_eq!(
                Phase::parse(r.post_name()).unwrap().post_review_of(),
                Some(r)
            );
            assert!(is_known(r.name()) && is_known(r.post_name()));
        }
        assert_eq!(Review::from_name("post-plan-review"), None);
    }

    #[test]
    fn every_phase_name_parses_back_to_its_phase() {
        for (i, &p) in Phase::ALL.iter().enumerate() {
            assert_eq!(p.name(), PHASES[i]);
            assert_eq!(Phase::parse(p.name()), Some(p));
        }
        assert_eq!(Phase::parse("Complete"), None);
        assert_eq!(Phase::parse("post-review"), None);
    }

    #[test]
    fn exactly_four_phases_are_reviews_and_four_are_their_post_reviews() {
        let reviews: Vec<Phase> = Phase::ALL
            .iter()
            .copied()
            .filter(|p| p.review().is_some())
            .collect();
        let posts: Vec<Phase> = Phase::ALL
            .iter()
            .copied()
            .filter(|p| p.post_review_of().is_some())
            .collect();
        assert_eq!(
            reviews,
            [
                Phase::PlanReview,
                Phase::TasksReview,
                Phase::CodeReview,
                Phase::AllCodeReview
            ]
        );
        for p in posts {
            assert_eq!(p.name(), format!("post-{}", p.post_review_of().unwrap()));
        }
        assert_eq!(Phase::CodeReview.post_review_of(), None);
        assert_eq!(Phase::PostCodeReview.review(), None);
    }

    #[test]
    fn models_alternate_and_unknown_models_stay() {
        assert_eq!(toggle_model("opus"), "sonnet");
        assert_eq!(toggle_model("sonnet"), "opus");
        assert_eq!(toggle_model("haiku"), "haiku");
    }
}
