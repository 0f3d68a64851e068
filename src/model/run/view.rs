//! A run in lines people read (`taskie status`).

use crate::model::run::journal::{Lane, Outcome, RunState};

fn short(c: &str) -> &str {
    c.get(..12).unwrap_or(c)
}

/// The run's headline and one line per lane, in the order they were journalled.
pub fn lines(state: &RunState) -> Vec<String> {
    let outcome = match state.outcome {
        Some(Outcome::Done) => "done",
        Some(Outcome::Partial) => "ended partial (`taskie run --resume` goes on)",
        None => "under way, or cut off (`taskie run --resume` goes on)",
    };
    let mut out = vec![format!(
        "Run {} ({} × {}): {outcome}; integration branch {} at {}",
        state.run,
        crate::model::run::schedule::slots(state.jobs, state.agent.split(',').count()),
        state.agent,
        state.integration,
        short(&state.tip)
    )];
    for (task, lane) in &state.lanes {
        let what = match lane {
            Lane::Waiting => "waiting".to_string(),
            Lane::Running {
                branch,
                resolve: Some(files),
                ..
            } => format!("resolving its conflict in {} on {branch}", files.join(", ")),
            Lane::Running { branch, .. } => format!("running on {branch}"),
            Lane::Reviewed { commit, .. } => {
                format!("reviewed on {}, waiting to merge", short(commit))
            }
            Lane::Merging { reviewed, .. } => format!("merging {}", short(reviewed)),
            Lane::Merged { commit } => format!("merged ({})", short(commit)),
            Lane::Blocked { reason } => format!("blocked: {reason}"),
            Lane::Paused { until, reason, .. } => match until {
                Some(t) => format!("paused until {}: {reason}", crate::model::pause::stamp(*t)),
                None => format!("paused: {reason}"),
            },
            Lane::Conflict { files, .. } => format!("conflict in {}", files.join(", ")),
            Lane::Skipped { because } => format!("skipped: depends on task {because}"),
        };
        out.push(format!("  task {task}: {what}"));
    }
    if let Some(c) = &state.final_passed {
        out.push(format!("  all-code review passed on {}", short(c)));
    }
    if let Some(c) = &state.landed {
        out.push(format!("  landed: {} at {}", state.branch, short(c)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::run::journal::{Entry, Land};

    #[test]
    fn each_lane_is_one_line_under_the_headline() {
        let s = RunState::replay(&[
            Entry::Start {
                run: "p-1".into(),
                plan: "p".into(),
                agent: "claude".into(),
                jobs: 2,
                land: Land::None,
                branch: "main".into(),
                base: "0123456789abcdef".into(),
                integration: "taskie/p/integration".into(),
            },
            Entry::Blocked {
                task: "2".into(),
                reason: "no heartbeat".into(),
            },
            Entry::Merged {
                task: "1".into(),
                commit: "fedcba9876543210".into(),
            },
        ])
        .unwrap();
        assert_eq!(
            lines(&s),
            [
                "Run p-1 (2 × claude): under way, or cut off (`taskie run --resume` goes on); integration branch taskie/p/integration at fedcba987654",
                "  task 2: blocked: no heartbeat",
                "  task 1: merged (fedcba987654)",
            ]
        );
    }
}
