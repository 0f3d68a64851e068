//! Every text the hook shows the agent or the user. Each one says what happened and
//! the exact next action, so nobody has to guess.

use crate::model::cycle::{Due, Failure, MAX_REVIEW_FAILURES};
use crate::model::facts::Facts;
use crate::model::host::Client;
use crate::model::next_stop::Then;
use crate::model::pause;
use crate::model::phase::{self, Phase, Review};
use crate::model::state::StateError;
use crate::model::text::clip;
use crate::model::verdict::{Reading, Verdict};

pub fn invalid_plan(plan: &str, errors: &[crate::model::validate::StructureError]) -> String {
    format!(
        "Plan '{plan}': {}. Fix: {}; then run `taskie validate --plan {plan}`. \
         Nothing else happens for this plan until it is valid.",
        crate::model::validate::joined(errors),
        crate::model::validate::fixes(plan, errors).join("; ")
    )
}

pub fn state_error(plan: &str, e: &StateError) -> String {
    // StateError's text starts with "state.json", so prefixing the directory names the file.
    format!(
        "Taskie: plan '{plan}': {}/{}. The file was left unchanged; no review runs until it is fixed.",
        crate::model::plan_file::rel_dir(plan),
        e.explain(plan)
    )
}

pub fn no_current_task(plan: &str, r: Review) -> String {
    format!(
        "Taskie: plan '{plan}' is in a {r} cycle but state.json has no current_task, so the post-review file cannot be named. \
         Set it with `taskie state set current_task=<N>`."
    )
}

pub fn post_review_owed(f: &Facts, r: Review, n: u64, path: &str, then: Then) -> String {
    let plan = f.plan;
    let after = match then {
        Then::Review => "the next review runs at the first stop after that file exists".to_string(),
        Then::HardStop(_) => format!(
            "that was the last review this cycle allows, so the first stop after that file exists is a hard \
             stop and a human decides how to go on (no review #{} runs by itself)",
            n.saturating_add(1)
        ),
        Then::Paused { until } => format!(
            "review #{} then waits for a reviewer's usage limit to reset: paused until {} (`taskie resume --plan \
             {plan}` lifts the pause)",
            n.saturating_add(1),
            pause::when(until, f.now)
        ),
    };
    format!(
        "Taskie: plan '{plan}': {r} #{n} is waiting for its post-review. Perform /taskie:{} and write {path}; \
         {after}.",
        r.post_name()
    )
}

/// When a passed cycle leads to `complete` while tasks.md has unfinished tasks (SPEC
/// §13): a sentence naming them, else nothing.
pub fn unfinished_at_complete(f: &Facts, target: Phase) -> String {
    match crate::model::tasks::unfinished_at_complete(f.tasks, &f.rel("tasks.md")) {
        Some(open) if target == Phase::Complete => format!(" But {open}."),
        _ => String::new(),
    }
}

pub fn unknown_next_phase(plan: &str, name: &str) -> String {
    format!(
        "Taskie: plan '{plan}': next_phase \"{name}\" in state.json is not a phase{}, so no review runs. \
         Fix it with `taskie state set --plan {plan} next_phase=<phase>` (or `null`); phases: {}.",
        crate::model::text::did_you_mean(name, phase::PHASES.iter().copied()),
        phase::PHASES.join(", ")
    )
}

pub fn reviews_disabled(target: Phase) -> String {
    format!(
        "Reviews are disabled (max_reviews=0): advanced to {target}. Run /taskie:continue-plan."
    )
}

pub fn precondition(plan: &str, r: Review, missing: &str) -> String {
    format!(
        "Taskie: plan '{plan}': {r} is due but cannot run: missing {missing}. Create it, then stop again; state.json is unchanged."
    )
}

pub fn cannot_save(plan: &str, due: &Due, problem: &str) -> String {
    format!(
        "Taskie: plan '{plan}': {} #{} is due, but the plan directory cannot be written ({problem}), so its outcome \
         could not be saved: no review was started. Make {}/ writable (or free disk space), then \
         stop again.",
        due.review,
        due.iteration,
        crate::model::plan_file::rel_dir(plan)
    )
}

/// Review `due` is due, but the findings ledger cannot be read (`problem` names the file
/// and the fix).
pub fn ledger_unreadable(plan: &str, due: &Due, problem: &str) -> String {
    format!(
        "Taskie: plan '{plan}': {} #{} is due, but {problem}. No review was started; stop again once it is fixed.",
        due.review, due.iteration
    )
}

/// Review `due` failed (`failure` says how); at the last attempt the plan's reviews are
/// hard-stopped, and the text names the fix for what failed.
pub fn reviewer_failed(
    plan: &str,
    due: &Due,
    reason: &str,
    log: &str,
    failures: u64,
    failure: Failure,
) -> String {
    let r = due.review;
    let head = format!(
        "Taskie: plan '{plan}': the {r} reviewer (review #{}, model {}) failed: {reason}. Log: {log}.",
        due.iteration, due.model
    );
    if failures < MAX_REVIEW_FAILURES {
        format!(
            "{head} It will be retried at the next stop (attempt {failures} of {} failed).",
            MAX_REVIEW_FAILURES
        )
    } else {
        let fix = match failure {
            Failure::Reviewer => {
                let mut vars: Vec<&str> = due
                    .reviewers
                    .iter()
                    .map(|r| crate::reviewer::program_var(r.kind).name())
                    .collect();
                vars.sort_unstable();
                vars.dedup();
                let vars = if vars.is_empty() {
                    "`TASKIE_REVIEWER`".to_string()
                } else {
                    format!("`{}`", vars.join("`, `"))
                };
                format!("Fix the reviewer (see the log; {vars} chooses the program)")
            }
            Failure::CheckoutChanged => {
                "Find what changed the checkout while the reviews ran: the \
                reviewer, or another session working in this checkout (the log is the diff of \
                the last change)"
                    .to_string()
            }
            Failure::StateEdited => "Leave state.json alone while a review runs".to_string(),
        };
        format!(
            "{head} That was attempt {failures} of {}: reviews for this plan are hard-stopped. {fix}, then \
             run `taskie state set --plan {plan} review_failures=0`, or skip this review with \
             `taskie advance --plan {plan}`.",
            MAX_REVIEW_FAILURES
        )
    }
}

/// A reviewer's usage limit paused the plan (SPEC §22): one message, no failure counted.
pub fn paused(plan: &str, due: &Due, by: &str, until: i64, now: i64, log: &str) -> String {
    format!(
        "Taskie: plan '{plan}': the {} reviewer (review #{}) could not run: {by}. Reviews for this plan are \
         paused until {}; no failure was counted, and the first stop after that runs the review. Log: {log}. \
         `taskie resume --plan {plan}` runs it at the next stop instead.",
        due.review,
        due.iteration,
        pause::when(until, now)
    )
}

/// A stop while the plan is paused (SPEC §22): nothing ran.
pub fn still_paused(
    plan: &str,
    r: Review,
    n: u64,
    by: Option<&str>,
    until: i64,
    now: i64,
) -> String {
    let by = by.map(|b| format!(" ({b})")).unwrap_or_default();
    format!(
        "Taskie: plan '{plan}': {r} review #{n} waits for a reviewer's usage limit to reset{by}: paused until {}. \
         No reviewer ran and no failure was counted. `taskie resume --plan {plan}` runs it at the next stop instead.",
        pause::when(until, now)
    )
}

/// The post-review `post` left these open findings unanswered (SPEC §21).
pub fn unanswered(post: &Option<String>, ids: &[String]) -> String {
    let post = post.as_deref().unwrap_or("the post-review");
    format!(
        "{post} did not answer {} by id, so the findings ledger keeps {} open.",
        ids.join(", "),
        if ids.len() == 1 { "it" } else { "them" }
    )
}

/// Appended to the answer when the reviewer changed files of the project (SPEC §8): which,
/// what that means for the verdict, and what the agent should check. `None` when nothing
/// changed. Nothing is reverted: another session may be working in the same checkout.
pub fn worktree(report: &crate::model::worktree::Report) -> Option<String> {
    if !report.found_something() {
        return None;
    }
    let diff = report
        .diff
        .as_deref()
        .map(|d| format!(" (diff: {d})"))
        .unwrap_or_default();
    Some(if report.voided {
        let head = report
            .head
            .as_ref()
            .and_then(|m| Some((m.before.commit.as_deref()?, m.after.commit.as_deref()?)))
            .map(|(b, a)| format!(" (`git log {b}..{a}` shows the commits)"))
            .unwrap_or_default();
        format!(
            "While the review ran, the project changed in git ({}): {}{diff}{head}. A commit, a \
             staged change or a change to a file git tracks voids the review: its verdict is not \
             counted. Nothing was reverted: check each change, keep or undo it, then stop again.",
            crate::model::worktree::WHO,
            report.what()
        )
    } else {
        format!(
            "While the review ran, untracked files appeared or changed: {}{diff}. The verdict stands; \
             check whether they are build or test outputs to delete or to ignore in .gitignore.",
            report.files()
        )
    })
}

/// Appended to the answer after a failover (SPEC §22): who reviewed, who could not and
/// why. Empty when there was none.
pub fn failover_note(failover: &crate::model::cycle::Failover) -> String {
    if failover.happened() {
        format!(" Failover: {}.", failover.sentence())
    } else {
        String::new()
    }
}

pub fn passed(r: Review, streak: u64, target: Phase) -> String {
    format!(
        "{r} passed ({streak} clean reviews in a row). Next: {target}. Run /taskie:continue-plan."
    )
}

pub fn auto_continue(r: Review, streak: u64, target: Phase) -> String {
    format!(
        "{r} passed ({streak} clean reviews in a row). Next: {target}. auto_continue is on: run `taskie continue-plan` \
         now and do what it says."
    )
}

/// The block reason after a review that did not end the cycle (SPEC §5 step 17).
/// `failover`: who reviewed when someone asked could not (SPEC §22).
pub fn address_review(
    f: &Facts,
    due: &Due,
    failover: &crate::model::cycle::Failover,
    reading: &Reading,
    findings: &[String],
    streak: u64,
    required: u64,
) -> String {
    let r = due.review;
    let review = f.rel(&due.review_file);
    let post = f.rel(&due.post_file);
    let verdict = match reading.verdict {
        Verdict::Pass => format!(
            "Verdict: PASS ({streak} of {required} clean reviews in a row needed to end the cycle)."
        ),
        Verdict::Fail => "Verdict: FAIL.".to_string(),
        Verdict::Unknown => "The reviewer gave no verdict, so it counts as FAIL.".to_string(),
    };
    let what = match due.task {
        Some(t) => format!("task {t} of plan '{}'", f.plan),
        None => format!("plan '{}'", f.plan),
    };
    let next = due.iteration.saturating_add(1);
    let then = if next > due.base.max_reviews {
        format!(
            "stop: that was the last review max_reviews={} allows, so the next stop is a hard stop and a human \
             decides how to go on (no review #{next} runs by itself)",
            due.base.max_reviews
        )
    } else {
        format!("stop, so review #{next} runs")
    };
    // The findings, when quoted, stand on lines of their own between the verdict and
    // the instruction.
    let quoted = match quote_findings(findings) {
        q if q.is_empty() => " ".to_string(),
        q => q,
    };
    // Who reviewed, never who was asked and could not (SPEC §22). A panel is named
    // member by member, never as one "claude:opus,codex:…" session.
    let names: Vec<String> = if failover.happened() {
        failover.reviewed_by.clone()
    } else if due.panel {
        due.reviewers.iter().map(ToString::to_string).collect()
    } else {
        vec![due.model.clone()]
    };
    let who = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!(
            "A panel of independent reviewers ({} and {last}, each a fresh session with none of your context)",
            rest.join(", ")
        ),
        _ => format!(
            "An independent reviewer (a fresh {} session with none of your context)",
            names.first().unwrap_or(&due.model)
        ),
    };
    format!(
        "{who} ran {r} #{n} on {what} and wrote {review}. \
         {verdict}{quoted}Now perform /taskie:{post_action}: read {review}, address every finding (fix it, or explain why not), \
         and write what you did to {post}. Answer each finding by its id, one line each (`F1: fixed — how` or \
         `F1: won't fix — why`): the next reviewer checks them. Do not edit state.json by hand: the hook detects {post_file} by itself. \
         When that file is written and committed, {then}.",
        n = due.iteration,
        post_action = r.post_name(),
        post_file = due.post_file,
    )
}

/// Findings quoted in a block reason, at most this many, each at most this long.
const QUOTED_FINDINGS: usize = 3;
const QUOTED_FINDING_CHARS: usize = 200;

/// The first findings, one per line, so the agent sees what to fix before it opens the file.
fn quote_findings(findings: &[String]) -> String {
    let shown: Vec<String> = findings
        .iter()
        .map(|f| f.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|f| !f.is_empty())
        .take(QUOTED_FINDINGS)
        .map(|f| format!("\n- {}", clip(&f, QUOTED_FINDING_CHARS)))
        .collect();
    if shown.is_empty() {
        return String::new();
    }
    let more = findings.len().saturating_sub(shown.len());
    let tail = if more > 0 {
        format!("\n(and {more} more in the review file)")
    } else {
        String::new()
    };
    format!(" First findings:{}{tail}\n", shown.concat())
}

/// The allow that replaces a block past `TASKIE_BLOCK_CAP` (SPEC §20), shown to the user.
pub fn block_cap(cap: u64, reason: &str, client: Client) -> String {
    format!(
        "Taskie: the agent was sent back to work {cap} times in a row without a stop in between \
         (TASKIE_BLOCK_CAP={cap}), so this stop is allowed: no loop runs on unattended. The plan's state is saved. \
         What Taskie would have told the agent: \"{reason}\" To resume, ask the agent to go on, or run {}.",
        client.user_action("continue-plan")
    )
}

/// A block whose count of blocks in a row could not be saved (`error`), so the cap could
/// not hold: allowed instead (SPEC §20).
pub fn block_count_unsaved(error: &str, reason: &str, client: Client) -> String {
    format!(
        "Taskie: the count of blocks in a row could not be saved ({error}), and without it TASKIE_BLOCK_CAP \
         cannot hold, so this stop is allowed: no loop runs on unattended. The plan's state is saved. What \
         Taskie would have told the agent: \"{reason}\" To resume, fix that, then ask the agent to go on, or \
         run {}.",
        client.user_action("continue-plan")
    )
}

/// The Stop hook's input could not be used: `what` (e.g. "input is not JSON (…)").
pub fn bad_input(what: &str) -> String {
    format!("Taskie: the Stop hook {what}, so it did nothing.")
}

/// `taskie-hook` was registered with arguments it does not take (`problem`: clap's first
/// line); without this the hook would do nothing at every stop with nobody told.
pub fn bad_command_line(problem: &str) -> String {
    format!(
        "Taskie: taskie-hook was started with a bad command line ({problem}), so it did nothing at this \
         stop. Fix the command where the hook is registered (a hooks.json or settings.json); `taskie-hook --help` lists \
         the options."
    )
}

pub fn panicked() -> String {
    "Taskie: the hook hit an internal error (details on stderr) and allowed this stop; state.json was not \
     left half-written. Please report it."
        .into()
}

pub fn no_project_dir(dir: &std::path::Path) -> String {
    format!(
        "Taskie: the project directory {} does not exist, so the hook did nothing.",
        dir.display()
    )
}

/// The plan named by --plan / TASKIE_PLAN does not exist, or is held by another session.
pub fn not_selected(why: &str) -> String {
    format!("Taskie: {why}.")
}

pub fn selection_failed(why: &str) -> String {
    format!("Taskie: {why}; the hook did nothing.")
}

pub fn internal(plan: &str, what: &str) -> String {
    format!("Taskie: plan '{plan}': {what}; the hook allowed this stop and changed nothing.")
}

pub fn escaping_link(plan: &str, problem: &str) -> String {
    format!(
        "Taskie: plan '{plan}': {problem}. The hook never follows a link out of .taskie/, so it did nothing; \
         replace the link with a real directory."
    )
}

pub fn busy(plan: &str, holder: &str) -> String {
    format!("Taskie: plan '{plan}' is busy: {holder}; this stop was allowed.")
}

pub fn state_not_written(plan: &str, error: &str) -> String {
    format!(
        "Taskie: plan '{plan}': could not write state.json ({error}); it still holds the previous state, so the \
         next stop repeats this step."
    )
}

/// The plugin and the binary disagree on the version (`notice.rs`).
pub fn version_mismatch(own: &str, binary: &str, plugin: &str, client: Client) -> String {
    format!(
        "Taskie: taskie-hook {own} at {binary} does not match the Taskie plugin {plugin}. Update the older one: \
         taskie-hook {}; the plugin {}.",
        reinstall(binary),
        update_plugin(client)
    )
}

/// How to update the plugin in the client it was installed into (docs/install.md, "Update").
pub fn update_plugin(client: Client) -> &'static str {
    match client {
        Client::Claude => {
            "with claude plugin marketplace update taskie, then claude plugin update taskie@taskie, then restart \
             Claude Code"
        }
        // A local marketplace is read again from the checkout; a git one is refreshed first.
        Client::Codex => {
            "from the updated checkout with codex plugin add taskie@taskie (codex plugin marketplace upgrade taskie \
             first if you added the marketplace from git), then trust the hook again in /hooks"
        }
        Client::Gemini => {
            "with gemini extensions update taskie (an extension installed with gemini extensions link follows its \
             checkout)"
        }
    }
}

/// How to update the binary at `binary`, by where it was installed: a command that works
/// for that route (the npm registry has no taskie package yet, so never `npm install -g
/// taskie`).
pub fn reinstall(binary: &str) -> &'static str {
    if binary.contains("/node_modules/") {
        "from new npm tarballs: in an updated Taskie checkout run bash dist/npm/pack.sh <dir>, then npm install -g \
         both tarballs it prints"
    } else if binary.ends_with("/target/release/taskie-hook") {
        "by rebuilding that checkout: git pull, then cargo build --release"
    } else {
        "from an updated Taskie checkout: git pull, then cargo install --locked --path ."
    }
}

/// A run session (SPEC §23) stopped where its gate is not: it reviews nothing there.
pub fn outside_run_gate(run: &str, task: &str) -> String {
    format!(
        "Taskie: this session works on task {task} of run {run}, in the worktree `taskie run` made for it; this \
         stop is outside it, so nothing was reviewed. Work only in that worktree."
    )
}

/// A run session stopped while a review other than its own is due.
pub fn run_refusal(run: &str, task: &str, review: &str) -> String {
    format!(
        "Taskie: this session works on task {task} of run {run} only; the {review} review that is due belongs to \
         the run's driver, which starts it itself. Stop now."
    )
}

#[cfg(test)]
mod tests {
    use crate::model::host::Client;

    #[test]
    fn the_version_notice_names_the_plugin_update_of_the_client_it_was_installed_into() {
        let notice = |c| super::version_mismatch("0.1.0", "/u/.cargo/bin/taskie-hook", "0.2.0", c);
        assert!(notice(Client::Claude).contains("claude plugin update taskie@taskie"));
        assert!(notice(Client::Codex).contains("codex plugin add taskie@taskie"));
        assert!(notice(Client::Gemini).contains("gemini extensions update taskie"));
        for c in [Client::Codex, Client::Gemini] {
            assert!(!notice(c).contains("claude plugin"), "{c}");
        }
    }

    #[test]
    fn the_version_notice_names_an_update_that_works_for_how_the_binary_was_installed() {
        let npm = "/home/u/.npm-global/lib/node_modules/taskie-linux-x64/bin/taskie-hook";
        let cargo = "/home/u/.cargo/bin/taskie-hook";
        let built = "/src/taskie/target/release/taskie-hook";
        assert!(
            super::version_mismatch("0.1.0", npm, "0.2.0", Client::Claude)
                .contains("dist/npm/pack.sh")
        );
        assert!(super::reinstall(cargo).contains("cargo install --locked --path ."));
        assert!(super::reinstall(built).contains("cargo build --release"));
        for b in [npm, cargo, built] {
            assert!(
                !super::version_mismatch("1", b, "2", Client::Codex)
                    .contains("npm install -g taskie"),
                "{b}"
            );
        }
    }
}
