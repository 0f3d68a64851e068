//! One whole plan, end to end, in the real Claude Code (the pinned CLI): the plugin
//! installed as the README says into a throwaway HOME, our fake Messages API on
//! 127.0.0.1, the real `claude -p` as the reviewer, and a scripted model
//! (tests/e2e/support/scripted_model.rs) that acts only on the text it receives. One plan goes
//! from `/taskie:new-plan` to `complete` through every review cycle, across new sessions,
//! a second session on its own plan, and a CLI killed while a review runs.
//! docs/claude-code.md records what this proves.

use crate::support::claude_user::{self, CliResult, Turn, UserInstall};
use crate::support::fake_api::FakeApi;
use crate::support::git;
use crate::support::scripted_model::{Agent, Entry, Reviewer, is_reviewer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Generous bounds for a loaded machine; a run normally takes seconds.
const TURN: Duration = Duration::from_secs(300);
const GONE: Duration = Duration::from_secs(60);

/// The plan ids the scripted agent picks from the descriptions (its first three words).
const GREETING: &str = "add-a-greeting";
const FAREWELL: &str = "add-a-farewell";

/// The review whose reviewer is held at the API while the CLI is killed.
const INTERRUPTED: &str = "task-2-code-review-2.md";

/// What the scripted reviewer says about each review file of the whole story.
fn verdicts() -> Vec<(String, &'static str)> {
    let f = |f: &str| format!(".taskie/plans/{FAREWELL}/{f}");
    vec![
        (g("plan-review-1.md"), "FAIL"),
        (g("plan-review-2.md"), "PASS"),
        (g("plan-review-3.md"), "PASS"),
        (g("tasks-review-1.md"), "PASS"),
        (g("tasks-review-2.md"), "PASS"),
        (g("task-1-code-review-1.md"), "FAIL"),
        (g("task-1-code-review-2.md"), "PASS"),
        (g("task-1-code-review-3.md"), "PASS"),
        (g("task-2-code-review-1.md"), "FAIL"),
        (g(INTERRUPTED), "PASS"),
        (g("task-2-code-review-3.md"), "PASS"),
        (g("all-code-review-1.md"), "PASS"),
        (g("all-code-review-2.md"), "PASS"),
        (f("plan-review-1.md"), "PASS"),
        (f("plan-review-2.md"), "PASS"),
    ]
}

/// Holds the first reviewer request for one review file until released, so a test can
/// act while that review is running.
struct Hold {
    file: String,
    /// (a request is held, the hold was released)
    state: Mutex<(bool, bool)>,
    changed: Condvar,
}

impl Hold {
    fn new(file: String) -> Hold {
        Hold {
            file,
            state: Mutex::new((false, false)),
            changed: Condvar::new(),
        }
    }

    /// Called by the API for each reviewer request: blocks the first one for `file`.
    fn pass(&self, file: &str) {
        if file != self.file {
            return;
        }
        let mut s = self.state.lock().unwrap();
        if s.0 {
            return;
        }
        s.0 = true;
        self.changed.notify_all();
        // Bounded: the API's threads must end even if the test never releases.
        let _ = self
            .changed
            .wait_timeout_while(s, Duration::from_secs(240), |s| !s.1)
            .unwrap();
    }

    fn wait_held(&self, within: Duration) -> bool {
        let s = self.state.lock().unwrap();
        let (s, _) = self
            .changed
            .wait_timeout_while(s, within, |s| !s.0)
            .unwrap();
        s.0
    }

    fn release(&self) {
        self.state.lock().unwrap().1 = true;
        self.changed.notify_all();
    }
}

/// Every file of a directory with its bytes, to prove nothing in it changed.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap_or_default())
        })
        .collect();
    files.sort();
    files
}

struct Story {
    project: tempfile::TempDir,
    user: UserInstall,
    agent: Arc<Agent>,
    reviewer: Arc<Reviewer>,
    hold: Arc<Hold>,
    api: FakeApi,
}

impl Story {
    /// A git project, the plugin installed, the fake API with the scripted agent and a
    /// reviewer giving `verdicts`; the first review of `hold` (a review file) is held.
    fn new(verdicts: &[(String, &'static str)], hold: String) -> Story {
        let project = tempfile::tempdir().unwrap();
        let root = project.path();
        std::fs::write(root.join("README.md"), "# Greeter\n\nSays hello.\n").unwrap();
        for args in [
            &["init", "-q", "-b", "main"][..],
            &["config", "user.name", "Test User"],
            &["config", "user.email", "test@example.com"],
            &["add", "README.md"],
            &["commit", "-q", "-m", "start"],
        ] {
            git(root, args);
        }
        let verdicts: Vec<(&str, &'static str)> =
            verdicts.iter().map(|(f, v)| (f.as_str(), *v)).collect();
        let reviewer = Arc::new(Reviewer::new(&verdicts));
        let agent = Arc::new(Agent::new());
        let hold = Arc::new(Hold::new(hold));
        let (a, r, h) = (agent.clone(), reviewer.clone(), hold.clone());
        let api = FakeApi::start(move |req| {
            if is_reviewer(req) {
                r.record_start(req);
                if req.assistant_turns() == 0 {
                    h.pass(&Reviewer::review_file(req).unwrap_or_default());
                }
                return r.reply(req);
            }
            a.reply(req)
        });
        Story {
            project,
            user: UserInstall::new(),
            agent,
            reviewer,
            hold,
            api,
        }
    }

    fn root(&self) -> &Path {
        self.project.path()
    }

    fn start(&self, prompt: &str, resume: Option<&str>) -> Turn {
        Turn::start(
            self.root(),
            self.user.home(),
            &self.api.base_url(),
            prompt,
            resume,
        )
    }

    /// One whole `claude -p` run; what the agent did in it.
    fn turn(&self, prompt: &str, resume: Option<&str>) -> (CliResult, Vec<Entry>) {
        let before = self.agent.journal().len();
        let result = self.start(prompt, resume).finish(TURN);
        let did = self.agent.journal()[before..].to_vec();
        self.no_trouble(prompt);
        (result, did)
    }

    fn no_trouble(&self, step: &str) {
        let (agent, reviewer) = (self.agent.troubles(), self.reviewer.troubles());
        assert!(
            agent.is_empty() && reviewer.is_empty(),
            "{step}: the agent could not follow its instructions: {agent:#?}\nthe reviewer: {reviewer:#?}\n\
             what the agent did:\n{}",
            self.transcript()
        );
    }

    fn transcript(&self) -> String {
        self.agent
            .journal()
            .iter()
            .map(|e| {
                let saw = match e.saw.as_str() {
                    "" => String::new(),
                    saw => format!("      saw: {}\n", saw.replace('\n', "\n           ")),
                };
                format!("{saw}  [{}] {}\n", e.instruction, e.did)
            })
            .collect()
    }

    fn plan_dir(&self, plan: &str) -> PathBuf {
        self.root().join(".taskie/plans").join(plan)
    }

    fn plans(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(self.root().join(".taskie/plans"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        ids.sort();
        ids
    }

    fn state(&self, plan: &str) -> Value {
        let path = self.plan_dir(plan).join("state.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), self.transcript()));
        serde_json::from_str(&text).unwrap()
    }

    /// Asserts the fields of a plan's state that say where it stands.
    #[track_caller]
    fn expect_state(
        &self,
        plan: &str,
        phase: &str,
        next: Option<&str>,
        iteration: u64,
        clean: u64,
        task: Option<u64>,
    ) {
        let s = self.state(plan);
        assert_eq!(
            (
                s["phase"].as_str(),
                s["next_phase"].as_str(),
                s["phase_iteration"].as_u64(),
                s["consecutive_clean"].as_u64(),
                s["current_task"].as_u64(),
            ),
            (Some(phase), next, Some(iteration), Some(clean), task),
            "state of {plan}: {s}\nplans: {:?}\nwhat the agent did:\n{}",
            self.plans(),
            self.transcript()
        );
    }

    /// Asserts that the plan holds exactly these plan files (taskie's own state.json and
    /// spend.json aside).
    #[track_caller]
    fn expect_files(&self, plan: &str, files: &[&str]) {
        let mut have: Vec<String> = snapshot(&self.plan_dir(plan))
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| !taskie::model::plan_file::TASKIE_FILES.contains(&n.as_str()))
            .collect();
        have.sort();
        let mut want: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        want.sort();
        assert_eq!(have, want, "files of {plan}\n{}", self.transcript());
    }

    /// Asserts the reviews started since `from` (an index of Reviewer::started), in order.
    #[track_caller]
    fn expect_reviews(&self, from: usize, files: &[String]) {
        assert_eq!(
            self.reviewer.started()[from..],
            *files,
            "the reviews that ran\nwhat the agent did:\n{}",
            self.transcript()
        );
    }

    fn git_log(&self) -> String {
        git(self.root(), &["log", "--format=%s"])
    }

    /// Waits until no process works in the project any more (hooks, reviewers).
    #[track_caller]
    fn expect_no_process_left(&self) {
        let end = Instant::now() + GONE;
        loop {
            let left = claude_user::processes_in(self.root());
            if left.is_empty() {
                return;
            }
            assert!(
                Instant::now() < end,
                "processes still running in the project: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Story {
    fn drop(&mut self) {
        // Frees a held API thread, so the server can stop.
        self.hold.release();
    }
}

fn g(f: &str) -> String {
    format!(".taskie/plans/{GREETING}/{f}")
}

/// The Bash commands of a turn, in order.
fn commands(did: &[Entry]) -> Vec<String> {
    did.iter()
        .filter_map(|e| e.did.strip_prefix("Bash: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn one_plan_goes_from_new_plan_to_complete_through_new_sessions_a_second_plan_and_a_killed_cli() {
    let story = Story::new(&verdicts(), g(INTERRUPTED));
    let s = &story;

    // 1. The plan, and its review cycle: FAIL, PASS, PASS, in the turn that wrote it.
    let (first, _) = s.turn("/taskie:new-plan Add a greeting command", None);
    assert_eq!(s.plans(), [GREETING]);
    s.expect_state(GREETING, "plan-review", Some("create-tasks"), 3, 2, None);
    s.expect_files(
        GREETING,
        &[
            "plan.md",
            "plan-review-1.md",
            "plan-post-review-1.md",
            "plan-review-2.md",
            "plan-post-review-2.md",
            "plan-review-3.md",
        ],
    );
    s.expect_reviews(
        0,
        &[
            g("plan-review-1.md"),
            g("plan-review-2.md"),
            g("plan-review-3.md"),
        ],
    );
    assert!(s.git_log().contains(&format!("{GREETING}: plan")));

    // 2. A new session (what /clear, a crash or a restart give): continue-plan resumes the
    //    same plan at create-tasks, and the tasks review runs (PASS, PASS).
    let reviews = s.reviewer.started().len();
    let (second, _) = s.turn("/taskie:continue-plan", None);
    assert_ne!(second.session_id, first.session_id, "a new session");
    assert_eq!(s.plans(), [GREETING], "no second plan was started");
    s.expect_state(GREETING, "tasks-review", Some("complete-task"), 2, 2, None);
    s.expect_reviews(reviews, &[g("tasks-review-1.md"), g("tasks-review-2.md")]);
    let tasks = std::fs::read_to_string(s.plan_dir(GREETING).join("tasks.md")).unwrap();
    assert!(
        tasks.contains("| 1 | pending |") && tasks.contains("| 2 | pending |"),
        "{tasks}"
    );

    // 3. Task 1 with /taskie:complete-task in that session: its code review FAIL, PASS, PASS.
    let reviews = s.reviewer.started().len();
    let (third, _) = s.turn("/taskie:complete-task", Some(&second.session_id));
    assert_eq!(
        third.session_id, second.session_id,
        "the same session, resumed"
    );
    s.expect_state(
        GREETING,
        "code-review",
        Some("complete-task"),
        3,
        2,
        Some(1),
    );
    s.expect_reviews(
        reviews,
        &[
            g("task-1-code-review-1.md"),
            g("task-1-code-review-2.md"),
            g("task-1-code-review-3.md"),
        ],
    );
    assert!(s.root().join("src/step-1.txt").is_file());
    assert!(
        s.git_log()
            .contains(&format!("{GREETING}: implement task 1"))
    );

    // 4. A second session in the same repository, on a plan of its own: its reviews are of
    //    its plan only, and the first plan does not change by one byte.
    let greeting = snapshot(&s.plan_dir(GREETING));
    let reviews = s.reviewer.started().len();
    let (other, _) = s.turn("/taskie:new-plan Add a farewell command", None);
    assert_ne!(other.session_id, third.session_id);
    assert_eq!(s.plans(), [FAREWELL, GREETING]);
    s.expect_state(FAREWELL, "plan-review", Some("create-tasks"), 2, 2, None);
    let f = |f: &str| format!(".taskie/plans/{FAREWELL}/{f}");
    s.expect_reviews(reviews, &[f("plan-review-1.md"), f("plan-review-2.md")]);
    assert!(
        snapshot(&s.plan_dir(GREETING)) == greeting,
        "the second session changed the first plan"
    );
    let farewell = snapshot(&s.plan_dir(FAREWELL));

    // 5. Task 2, named, back in the first plan's session. Its code review #1 fails; the
    //    agent addresses it and stops; while review #2 runs the CLI is killed (SIGTERM, what
    //    closing the terminal or Ctrl-C sends).
    let mut killed = s.start("/taskie:complete-task 2", Some(&second.session_id));
    assert!(
        s.hold.wait_held(TURN),
        "{INTERRUPTED} never started\n{}",
        s.transcript()
    );
    // The hook runs that review, from the plugin as installed: Claude Code 2.1.330 runs a
    // plugin added from a local directory in that directory, not in its cache copy.
    let hooks: Vec<libc::pid_t> = claude_user::processes_in(s.root())
        .into_iter()
        .filter(|&pid| claude_user::program(pid).ends_with("/taskie-hook"))
        .collect();
    assert!(!hooks.is_empty(), "no taskie-hook runs the review");
    for &hook in &hooks {
        assert_eq!(
            claude_user::env_of(hook, "CLAUDE_PLUGIN_ROOT").as_deref(),
            Some(s.user.checkout().join("dist/claude").to_str().unwrap())
        );
    }
    let before = snapshot(&s.plan_dir(GREETING));
    let log_before = s.git_log();
    killed.signal(libc::SIGTERM);
    assert!(
        killed.wait_exit(GONE).is_some(),
        "claude did not end on SIGTERM"
    );
    // Claude Code ends the hook it started; the hook's reviewer goes with it.
    s.expect_no_process_left();
    s.hold.release();
    drop(killed);
    s.no_trouble("/taskie:complete-task 2");
    // Nothing is lost: the plan, its state and the history are as they were when the
    // interrupted review started, and that review left no file.
    assert!(
        snapshot(&s.plan_dir(GREETING)) == before,
        "the killed review changed the plan"
    );
    assert_eq!(s.git_log(), log_before);
    s.expect_state(
        GREETING,
        "code-review",
        Some("post-code-review"),
        1,
        0,
        Some(2),
    );
    assert!(!s.plan_dir(GREETING).join(INTERRUPTED).exists());
    assert!(
        s.plan_dir(GREETING)
            .join("task-2-code-post-review-1.md")
            .is_file()
    );
    assert!(s.root().join("src/step-2.txt").is_file());
    assert!(
        s.git_log()
            .contains(&format!("{GREETING}: implement task 2"))
    );

    // 6. A new session: continue-plan says to stop, and stopping runs the interrupted
    //    review again (PASS), then the last one of the cycle (PASS).
    let reviews = s.reviewer.started().len();
    let (fourth, did) = s.turn("/taskie:continue-plan", None);
    assert_ne!(fourth.session_id, second.session_id, "a new session");
    assert_eq!(
        commands(&did)[..1],
        ["taskie continue-plan"],
        "{}",
        s.transcript()
    );
    s.expect_reviews(reviews, &[g(INTERRUPTED), g("task-2-code-review-3.md")]);
    s.expect_state(
        GREETING,
        "code-review",
        Some("all-code-review"),
        0,
        0,
        Some(2),
    );

    // 7. The all-code review: continue-plan says to stop so it runs (PASS, PASS).
    let reviews = s.reviewer.started().len();
    let (_, did) = s.turn("/taskie:continue-plan", Some(&fourth.session_id));
    assert_eq!(
        did.iter()
            .filter(|e| e.instruction == "/taskie:continue-plan")
            .map(|e| e.did.as_str())
            .collect::<Vec<_>>(),
        [
            "Bash: taskie continue-plan",
            "end: Taskie says to stop here; ending my turn."
        ],
        "continue-plan must say to stop so the all-code review runs\n{}",
        s.transcript()
    );
    s.expect_reviews(
        reviews,
        &[g("all-code-review-1.md"), g("all-code-review-2.md")],
    );
    s.expect_state(GREETING, "all-code-review", Some("complete"), 2, 2, Some(2));

    // 8. Complete.
    let (_, did) = s.turn("/taskie:continue-plan", Some(&fourth.session_id));
    let last = did.last().map(|e| e.did.clone()).unwrap_or_default();
    assert!(
        last.starts_with("end: The plan is complete"),
        "{}",
        s.transcript()
    );
    let state = s.state(GREETING);
    assert_eq!(
        (state["phase"].as_str(), state["next_phase"].as_str()),
        (Some("complete"), None),
        "{state}"
    );
    s.expect_files(
        GREETING,
        &[
            "plan.md",
            "plan-review-1.md",
            "plan-post-review-1.md",
            "plan-review-2.md",
            "plan-post-review-2.md",
            "plan-review-3.md",
            "tasks.md",
            "task-1.md",
            "task-2.md",
            "tasks-review-1.md",
            "tasks-post-review-1.md",
            "tasks-review-2.md",
            "task-1-code-review-1.md",
            "task-1-code-post-review-1.md",
            "task-1-code-review-2.md",
            "task-1-code-post-review-2.md",
            "task-1-code-review-3.md",
            "task-2-code-review-1.md",
            "task-2-code-post-review-1.md",
            "task-2-code-review-2.md",
            "task-2-code-post-review-2.md",
            "task-2-code-review-3.md",
            "all-code-review-1.md",
            "all-code-post-review-1.md",
            "all-code-review-2.md",
        ],
    );
    let tasks = std::fs::read_to_string(s.plan_dir(GREETING).join("tasks.md")).unwrap();
    assert!(
        tasks.contains("| 1 | done |") && tasks.contains("| 2 | done |"),
        "{tasks}"
    );
    // The second plan was never touched after its own session.
    assert!(
        snapshot(&s.plan_dir(FAREWELL)) == farewell,
        "the first plan's sessions changed the second"
    );
    s.expect_no_process_left();
}

#[test]
fn a_cli_killed_outright_leaves_its_review_to_finish_and_a_new_session_takes_up_the_post_review() {
    let verdicts = [
        (g("plan-review-1.md"), "FAIL"),
        (g("plan-review-2.md"), "PASS"),
        (g("plan-review-3.md"), "PASS"),
    ];
    let s = Story::new(&verdicts, g("plan-review-1.md"));
    let mut killed = s.start("/taskie:new-plan Add a greeting command", None);
    assert!(
        s.hold.wait_held(TURN),
        "plan-review-1 never started\n{}",
        s.transcript()
    );
    // SIGKILL gives Claude Code no chance to end its hook: the review goes on without it.
    killed.signal(libc::SIGKILL);
    assert!(killed.wait_exit(GONE).is_some(), "claude survived SIGKILL");
    assert!(
        claude_user::processes_in(s.root())
            .into_iter()
            .any(|pid| claude_user::program(pid).ends_with("/taskie-hook")),
        "the hook runs on after its CLI was killed"
    );
    s.hold.release();
    drop(killed);
    s.expect_no_process_left();
    // Its outcome was saved, although nobody read its answer.
    s.expect_state(
        GREETING,
        "plan-review",
        Some("post-plan-review"),
        1,
        0,
        None,
    );
    s.expect_files(GREETING, &["plan.md", "plan-review-1.md"]);

    // A new session learns from continue-plan what the lost block said, and goes on.
    let reviews = s.reviewer.started().len();
    let (_, did) = s.turn("/taskie:continue-plan", None);
    assert_eq!(commands(&did)[..1], ["taskie continue-plan"]);
    s.expect_reviews(reviews, &[g("plan-review-2.md"), g("plan-review-3.md")]);
    s.expect_state(GREETING, "plan-review", Some("create-tasks"), 3, 2, None);
    s.expect_files(
        GREETING,
        &[
            "plan.md",
            "plan-review-1.md",
            "plan-post-review-1.md",
            "plan-review-2.md",
            "plan-post-review-2.md",
            "plan-review-3.md",
        ],
    );
    s.expect_no_process_left();
}
