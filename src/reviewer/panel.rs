//! A review panel (SPEC §18): every reviewer runs at once on the same iteration, each
//! in its own process group with its own log; their reviews become one review file
//! with a section per reviewer, ending with the panel's verdict. PASS only if every
//! reviewer passes. One reviewer failing makes the run a reviewer failure: the agent
//! cannot fix a broken reviewer, so it is never blocked by one (SPEC §5 step 16).

use crate::model::cycle::{Due, Failover, Failure, Reviewed, Unavailable};
use crate::model::facts::Facts;
use crate::model::reviewers::{Kind, Reviewer};
use crate::model::spend::Spend;
use crate::model::verdict::{Reading, Verdict};
use crate::reviewer::config::Config;
use crate::reviewer::error::ReviewerError;
use crate::reviewer::kinds::ReviewRun;
use crate::reviewer::kinds::{Attempt, FailedRun, GivenReview, Job, StartLine, Ticket};
use crate::reviewer::{claude, codex, gemini, log};
use crate::store::atomic;
use crate::store::event_log::Member;
use crate::store::project::Project;

pub fn run(project: &Project, f: &Facts, due: &Due, config: &Config, stamp: &str) -> ReviewRun {
    let budget = claude::budget(due);
    let line = StartLine::new(due.reviewers.len());
    let line = &line;
    let attempt = |i: usize, reviewer: &Reviewer| -> Attempt {
        let member = format!("{}-{}", i + 1, reviewer.kind.name());
        // Dropped last, so a member that never starts still lets the others go.
        let ticket = Ticket::new(line);
        atomic::pause_point("member-setup", std::path::Path::new(&member));
        let log = log::path(project, f, due, stamp, Some(&member));
        let job = Job {
            project,
            f,
            due,
            config,
            reviewer,
            log: &log,
            budget,
            gate: Some(&ticket),
            // Once per review: the logs directory can hold thousands of files.
            sweep: i == 0,
        };
        match reviewer.kind {
            Kind::Claude => {
                // Its own section file, so no member writes the review file.
                let section = project.logs().join(format!(
                    "panel-{}-{}-{}-{stamp}-{member}.md",
                    f.plan, due.review, due.iteration
                ));
                let rel = project.relative(&section);
                claude::attempt(&job, &section, &rel)
            }
            Kind::Codex => codex::attempt(&job),
            Kind::Gemini => gemini::attempt(&job),
        }
    };
    let attempt = &attempt;
    let attempts: Vec<Attempt> = std::thread::scope(|scope| {
        // Every member but the first on a thread of its own, the first on this thread,
        // which would only wait otherwise (a thread costs ~50 µs to start and end).
        let others: Vec<_> = due
            .reviewers
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, reviewer)| {
                let spawned =
                    std::thread::Builder::new().spawn_scoped(scope, move || attempt(i, reviewer));
                if spawned.is_err() {
                    line.leave();
                }
                spawned
            })
            .collect();
        // A panic in the first member fails that member only, as a thread's would.
        let first = due.reviewers.first().map(|reviewer| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| attempt(0, reviewer)))
                .unwrap_or_else(|_| thread_failed(reviewer))
        });
        let others = others
            .into_iter()
            .zip(due.reviewers.iter().skip(1))
            .map(|(h, reviewer)| {
                h.map_err(|_| ())
                    .and_then(|h| h.join().map_err(|_| ()))
                    .unwrap_or_else(|()| thread_failed(reviewer))
            });
        first.into_iter().chain(others).collect()
    });
    conclude(project, f, due, attempts)
}

/// The attempt of a member whose run panicked, or whose thread could not start.
fn thread_failed(reviewer: &Reviewer) -> Attempt {
    Attempt {
        reviewer: reviewer.clone(),
        log: String::new(),
        started: false,
        spend: Spend::default(),
        result: Err(FailedRun::new(
            ReviewerError::Reported("the reviewer's thread failed".into()),
            None,
        )),
        unsandboxed: None,
    }
}

fn conclude(project: &Project, f: &Facts, due: &Due, attempts: Vec<Attempt>) -> ReviewRun {
    let spend = attempts
        .iter()
        .fold(Spend::default(), |acc, a| acc.alongside(&a.spend));
    let processes = attempts.iter().filter(|a| a.started).count() as u64;
    let members: Vec<Member> = attempts.iter().map(member).collect();
    let unsandboxed = attempts.iter().find_map(|a| a.unsandboxed.clone());
    let said: Vec<(&Reviewer, &GivenReview)> = attempts
        .iter()
        .filter_map(|a| a.result.as_ref().ok().map(|s| (&a.reviewer, s)))
        .collect();
    let reviewed_by = said.len() as u64;
    let reviewed = if said.is_empty() {
        // Nobody reviewed: a failure naming each member, or a pause when all of them
        // are at a usage limit that says when it resets.
        let failed: Vec<(Reviewer, FailedRun, String)> = attempts
            .into_iter()
            .filter_map(|a| match a.result {
                Err(e) => Some((a.reviewer, e, a.log)),
                Ok(_) => None,
            })
            .collect();
        crate::reviewer::all_unavailable(&failed, f.now)
    } else {
        // Unavailable members are left out of this iteration; the panel weighs only who
        // reviewed, and says who did not (SPEC §22).
        let failover = Failover {
            reviewed_by: said.iter().map(|(r, _)| r.to_string()).collect(),
            unavailable: attempts
                .iter()
                .filter_map(|a| {
                    a.result.as_ref().err().map(|e| Unavailable {
                        reviewer: a.reviewer.to_string(),
                        why: e.why(),
                    })
                })
                .collect(),
        };
        let (mut text, reading) = merge(due, &said);
        if failover.happened() {
            text = format!("> Failover: {}.\n\n{text}", failover.sentence());
        }
        let path = project.plan_dir(f.plan).join(&due.review_file);
        match atomic::write_unsynced(&path, text.as_bytes()) {
            Ok(()) => Reviewed::Verdict {
                reading,
                exit: 0,
                // Each member's findings, in panel order, for the block reason.
                findings: said.iter().flat_map(|(_, s)| s.findings.clone()).collect(),
                failover,
                // A finding any member reopened stays open; resolved only if none did.
                verified: {
                    let reopened: Vec<String> = said
                        .iter()
                        .flat_map(|(_, s)| s.verified.reopened.clone())
                        .collect();
                    let resolved = said
                        .iter()
                        .flat_map(|(_, s)| s.verified.resolved.clone())
                        .filter(|id| !reopened.iter().any(|r| r.eq_ignore_ascii_case(id)))
                        .collect();
                    crate::model::findings::Verified { resolved, reopened }
                },
            },
            Err(e) => Reviewed::Failed {
                reason: ReviewerError::Reported(format!("cannot write the review file: {e}"))
                    .to_string(),
                log: attempts.first().map(|a| a.log.clone()).unwrap_or_default(),
                exit: Some(0),
                failure: Failure::Reviewer,
            },
        }
    };
    // The members whose review the panel weighed; an unavailable member ran none.
    let reviews = match reviewed {
        Reviewed::Verdict { .. } => reviewed_by,
        _ => 0,
    };
    ReviewRun {
        reviewed,
        processes,
        reviews,
        spend,
        panel: members,
        unsandboxed,
    }
}

fn member(a: &Attempt) -> Member {
    let (verdict, error) = match &a.result {
        Ok(s) => (s.reading.verdict.as_str().to_owned(), None),
        Err(e) => ("failed".to_owned(), Some(e.error.to_string())),
    };
    Member {
        reviewer: a.reviewer.to_string(),
        verdict,
        error,
        log: a.log.clone(),
        spend: a.spend.clone(),
    }
}

/// The panel's review file and verdict: one section per reviewer, in the order of
/// `reviewers`, then the panel's `VERDICT:` line, which is PASS only if every
/// reviewer's verdict is PASS.
pub fn merge(due: &Due, said: &[(&Reviewer, &GivenReview)]) -> (String, Reading) {
    let all_pass = !said.is_empty() && said.iter().all(|(_, s)| s.reading.verdict == Verdict::Pass);
    let verdict = if all_pass {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let mut text = format!(
        "# {} #{}: a panel of {} reviewers\n\nEach section is one reviewer's review; the panel passes only if \
         every reviewer passes.\n",
        due.review,
        due.iteration,
        said.len()
    );
    let mut sources = Vec::new();
    for (reviewer, s) in said {
        text.push_str(&format!(
            "\n## Reviewer {reviewer}: {}\n\n{}\n",
            s.reading.verdict,
            s.text.trim()
        ));
        sources.push(format!("{reviewer}={}", s.reading.verdict));
    }
    text.push_str(&format!("\nVERDICT: {}\n", verdict.as_str()));
    (
        text,
        Reading {
            verdict,
            source: format!("panel({})", sources.join(",")),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::phase::Review;
    use crate::model::state::State;

    fn due() -> Due {
        Due {
            review: Review::Plan,
            iteration: 1,
            model: String::new(),
            task: None,
            review_file: "plan-review-1.md".into(),
            post_file: "plan-post-review-1.md".into(),
            read: State::default(),
            base: State::default(),
            reviewers: Vec::new(),
            panel: true,
            budget_left: None,
        }
    }

    fn said(v: Verdict) -> GivenReview {
        GivenReview {
            reading: Reading {
                verdict: v,
                source: "x".into(),
            },
            text: format!("Review text.\n\nVERDICT: {}\n", v.as_str()),
            findings: vec![],
            verified: Default::default(),
        }
    }

    #[test]
    fn the_panel_passes_only_when_every_reviewer_passes_and_says_so_last() {
        let (a, b) = (
            Reviewer::parse("claude:opus").unwrap(),
            Reviewer::parse("codex:gpt-5-codex").unwrap(),
        );
        let (pass, fail, unknown) = (
            said(Verdict::Pass),
            said(Verdict::Fail),
            said(Verdict::Unknown),
        );
        let (text, r) = merge(&due(), &[(&a, &pass), (&b, &pass)]);
        assert_eq!(r.verdict, Verdict::Pass);
        assert!(text.ends_with("\nVERDICT: PASS\n"));
        assert!(
            text.contains("## Reviewer claude:opus: PASS")
                && text.contains("## Reviewer codex:gpt-5-codex: PASS")
        );
        assert_eq!(crate::model::verdict::from_text(&text), Some(true));
        let (text, r) = merge(&due(), &[(&a, &pass), (&b, &fail)]);
        assert_eq!(
            (r.verdict, r.source.as_str()),
            (
                Verdict::Fail,
                "panel(claude:opus=PASS,codex:gpt-5-codex=FAIL)"
            )
        );
        assert!(text.ends_with("\nVERDICT: FAIL\n"));
        assert_eq!(
            merge(&due(), &[(&a, &pass), (&b, &unknown)]).1.verdict,
            Verdict::Fail
        );
        assert_eq!(merge(&due(), &[]).1.verdict, Verdict::Fail);
    }
}
