//! `taskie run` (docs/run.md): the Depends column, and plans that run themselves in git
//! worktrees with fake agents.

use crate::support::Project;

#[test]
fn validate_names_the_row_and_the_fix_of_an_unknown_dependency_and_a_cycle() {
    let p = Project::new().plan("p").file(
        "tasks.md",
        "| Id | Title | Status | Depends |\n|-|-|-|-|\n| 1 | A | pending | 2 |\n| 2 | B | pending | 1 |\n| 3 | C | pending | 9 |\n",
    );
    for n in 1..=3 {
        std::fs::write(p.plan_dir().join(format!("task-{n}.md")), "# Task\n").unwrap();
    }
    let run = p.run_taskie(&["validate", "--plan", "p"]);
    let err = run.fails_with(1);
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [
            "tasks.md line 5: task 3 depends on 9, which is not a task of the table",
            "tasks.md line 3: the dependencies form a cycle (1 → 2 → 1)",
        ]
    );
    assert!(err.contains("line 5 of .taskie/plans/p/tasks.md"), "{err}");
    assert!(err.contains("remove one dependency of the cycle"), "{err}");
}

// ---- the driver, with fake agents in real git repositories ----

use crate::support::{Fake, git, write_executable};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

/// A fake agent CLI: called with claude's arguments and the prompt on stdin, it does the
/// task's work (the shell in `<agents>/<task>.sh`, default: write `task-<N>.txt` and
/// commit), then stops through the hook named in `--settings`, acting only on what the
/// hook answers: a block names the post-review file to write, an allow ends the session.
const FAKE_AGENT: &str = r#"#!/bin/sh
here=${0%/*}
# Called as codex is before a session (`-c <hook> app-server`): the run's hook, trusted.
if [ "$3" = app-server ]; then
  command=$(printf '%s' "$2" | sed -n 's/.*command=\("[^"]*"\).*/\1/p')
  printf '{"id":2,"result":{"data":[{"cwd":"x","hooks":[{"key":"k","command":%s,"source":"sessionFlags","currentHash":"h","trustStatus":"trusted","enabled":true}]}]}}\n' "$command"
  exit 0
fi
task=${TASKIE_RUN##*:}
# Which CLI it is called as: codex's `exec`, gemini's `--include-directories`, else claude.
vendor=claude
[ "$1" = exec ] && vendor=codex
settings=""
prev=""
for a; do
  if [ "$prev" = "--settings" ]; then settings="$a"; fi
  case "$a" in hooks.Stop=*) settings="$a";; --include-directories) vendor=gemini;; esac
  prev="$a"
done
[ $vendor = gemini ] && settings=$(cat "$GEMINI_CLI_SYSTEM_SETTINGS_PATH")
prompt=$(cat)
if [ $vendor = codex ]; then
  hook=$(printf '%s' "$settings" | sed -n 's/.*command="\([^"]*\)".*/\1/p')
else
  hook=$(printf '%s' "$settings" | sed -n 's/.*"command":"\([^"]*\)".*/\1/p')
fi
echo $vendor >> "$here/vendor-$task"
# How many sessions of this CLI are under way, this one included.
mkdir -p "$here/live-$vendor-$task"
trap 'rmdir "$here/live-$vendor-$task" 2>/dev/null' EXIT
set -- "$here"/live-$vendor-*
echo $# >> "$here/peak-$vendor"
echo "$(date +%s.%N)" > "$here/start-$task"
if [ -f "$here/$task.sh" ]; then . "$here/$task.sh"; elif [ "$task" != all ]; then
  echo "work of task $task" > "task-$task.txt"
  git add "task-$task.txt" && git commit -q -m "task $task"
fi
echo "$(date +%s.%N)" > "$here/end-$task"
rmdir "$here/live-$vendor-$task"
[ -f "$here/$task.nohook" ] && exit 0
# A prompt may carry a review left unanswered by a cut-off session.
owed=$(printf '%s' "$prompt" | sed -n 's/.*write what you did to \([^ ]*\)\. Answer.*/\1/p' | head -1)
[ -n "$owed" ] && printf 'F1: fixed\n' > "$owed"
active=false
i=0
while [ $i -lt 12 ]; do
  i=$((i+1))
  answer=$(printf '{"hook_event_name":"Stop","cwd":"%s","session_id":"s-%s","stop_hook_active":%s}' "$PWD" "$task" "$active" | eval "$hook")
  echo "$answer" >> "$here/answers-$task"
  post=$(printf '%s' "$answer" | sed -n 's/.*write what you did to \([^ ]*\)\. Answer.*/\1/p')
  if [ -z "$post" ]; then break; fi
  printf 'F1: fixed\n' > "$post"
  active=true
done
echo '{"type":"result","subtype":"success","is_error":false,"result":"done"}'
"#;

/// A git repository with a bare `file://` remote, a plan whose tasks.md is `table`, and
/// the fake agent and reviewer.
pub(crate) struct Repo {
    tmp: tempfile::TempDir,
}

impl Repo {
    pub(crate) fn new(table: &str) -> Repo {
        Repo::with_state(table, None)
    }

    /// In a directory no other user may write to, nor any above it: a Gemini lane is
    /// refused where Gemini would ignore its settings.
    fn private(table: &str) -> Repo {
        let tmp = tempfile::tempdir_in(crate::support::private_dir()).unwrap();
        Repo::build(tmp, table, None)
    }

    /// With the plan's state.json committed too.
    fn with_state(table: &str, state: Option<&str>) -> Repo {
        Repo::build(crate::support::tempdir(), table, state)
    }

    fn build(tmp: tempfile::TempDir, table: &str, state: Option<&str>) -> Repo {
        let root = tmp.path();
        for d in ["agents", "reviewer", "data"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        git(root, &["init", "-q", "--bare", "remote.git"]);
        let remote = format!("file://{}", root.join("remote.git").display());
        git(root, &["clone", "-q", &remote, "work"]);
        let work = root.join("work");
        git(&work, &["config", "user.name", "Test"]);
        git(&work, &["config", "user.email", "test@example.com"]);
        git(&work, &["checkout", "-q", "-b", "main"]);
        let plan = work.join(".taskie/plans/p");
        std::fs::create_dir_all(&plan).unwrap();
        std::fs::write(plan.join("plan.md"), "# Plan\n").unwrap();
        std::fs::write(plan.join("tasks.md"), table).unwrap();
        if let Some(state) = state {
            std::fs::write(plan.join("state.json"), state).unwrap();
        }
        for id in task_ids(table) {
            std::fs::write(plan.join(format!("task-{id}.md")), format!("# Task {id}\n")).unwrap();
        }
        std::fs::write(work.join("README"), "hello\n").unwrap();
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", "plan"]);
        git(&work, &["push", "-q", "origin", "main"]);
        write_executable(&root.join("agents/claude"), FAKE_AGENT);
        let repo = Repo { tmp };
        repo.reviewer(&Fake::pass());
        repo
    }

    pub(crate) fn root(&self) -> &Path {
        self.tmp.path()
    }

    pub(crate) fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    /// The fake reviewer, made safe for reviews that run at the same time: the shared
    /// fixture keeps the prompt it read in one file beside it, which a second review
    /// would overwrite before the first read its review file's path from it.
    pub(crate) fn reviewer(&self, fake: &Fake) {
        let shared = fake.script_text();
        let own = shared
            .replace(
                "cat > \"$here/stdin\"\n",
                "mine=\"$here/stdin.$$\"\ncat > \"$mine\"\ncp \"$mine\" \"$here/stdin\"\n",
            )
            .replace("//p' \"$here/stdin\")", "//p' \"$mine\")");
        assert_eq!(
            own.matches("\"$mine\"").count(),
            3,
            "the fake reviewer's script changed; make its prompt private again:\n{shared}"
        );
        write_executable(&self.root().join("reviewer/fake-claude"), &own);
    }

    /// Task `task`'s agent works `secs` seconds, then writes `text` to `file` and commits.
    pub(crate) fn agent_commits(&self, task: &str, secs: f64, file: &str, text: &str) {
        self.agent_does(
            task,
            &format!(
                "sleep {secs}; echo {text} > {file}; git add {file}; git commit -q -m t{task}\n"
            ),
        );
    }

    /// Tasks `a` and `b`'s agents each announce their start and wait for the other's
    /// (a bounded wait: a minute), then write `task-<N>.txt` and commit. Each records
    /// `met-<N>` only if it saw the other one under way: proof that the two sessions ran at
    /// the same time, whatever the machine's speed.
    fn agents_meet(&self, a: &str, b: &str) {
        for (me, other) in [(a, b), (b, a)] {
            self.agent_does(
                me,
                &format!(
                    "touch \"$here/up-{me}\"; i=0\n\
                     while [ ! -f \"$here/up-{other}\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n\
                     [ -f \"$here/up-{other}\" ] && touch \"$here/met-{me}\"\n\
                     echo {me} > task-{me}.txt; git add task-{me}.txt; git commit -q -m t{me}\n"
                ),
            );
        }
    }

    /// Whether task `task`'s agent saw the other one under way (`agents_meet`).
    fn met(&self, task: &str) -> bool {
        self.root().join(format!("agents/met-{task}")).exists()
    }

    /// Shell for task `task`'s agent to run instead of the default work.
    pub(crate) fn agent_does(&self, task: &str, sh: &str) {
        std::fs::write(self.root().join(format!("agents/{task}.sh")), sh).unwrap();
    }

    pub(crate) fn taskie(&self, args: &[&str]) -> Process {
        let mut cmd = Process::new(assert_cmd::cargo::cargo_bin("taskie"));
        cmd.current_dir(self.work())
            .args(args)
            .env_remove("TASKIE_HOOK_SKIP")
            .env_remove("TASKIE_PLAN")
            .env_remove("TASKIE_RUN")
            .env_remove("TASKIE_TEST_KILL_AT")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("CLAUDE_CODE_SESSION_ID")
            .env_remove("TASKIE_CLIENT")
            .env("TASKIE_AGENT", self.root().join("agents/claude"))
            .env("TASKIE_REVIEWER", self.root().join("reviewer/fake-claude"))
            .env("XDG_DATA_HOME", self.root().join("data"))
            .env("CHECKOUT", self.work());
        cmd
    }

    pub(crate) fn run(&self, args: &[&str]) -> std::process::Output {
        self.taskie(args).output().unwrap()
    }

    pub(crate) fn git(&self, args: &[&str]) -> String {
        git(&self.work(), args)
    }

    /// How many merge commits of task `task` the integration branch holds.
    fn merges_of(&self, task: &str) -> usize {
        self.git(&["log", "--merges", "--format=%s", "taskie/p/integration"])
            .lines()
            .filter(|s| s.starts_with(&format!("taskie: merge task {task} ")))
            .count()
    }

    fn file_on(&self, rev: &str, path: &str) -> Option<String> {
        let out = Process::new("git")
            .arg("-C")
            .arg(self.work())
            .args(["show", &format!("{rev}:{path}")])
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// How many sessions of task `task` the fake agent saw start.
    fn sessions(&self, task: &str) -> usize {
        std::fs::read_to_string(self.root().join(format!("agents/vendor-{task}")))
            .map_or(0, |t| t.lines().count())
    }

    fn time(&self, what: &str, task: &str) -> f64 {
        std::fs::read_to_string(self.root().join(format!("agents/{what}-{task}")))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

/// The last line of stdout as JSON: `taskie run --json`'s summary (after its events), or
/// `taskie status --json`'s report (one object, so its last line is the whole of it).
fn json_of(out: &std::process::Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let last = match text.trim_end().rsplit_once('\n') {
        Some((_, l)) if l.starts_with('{') && l.ends_with('}') => l,
        _ => text.trim_end(),
    };
    serde_json::from_str(last).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The report of a run that ended `partial` (exit status 1), after checking it did.
fn partial(out: &std::process::Output) -> Value {
    let report = json_of(out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(report["outcome"], "partial", "{report}");
    report
}

/// Checks that the driver died of SIGKILL (`what` says where, for the message).
fn assert_killed(out: &std::process::Output, what: &str) {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(9),
        "{what}: not killed; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const DIAMOND: &str = "| Id | Title | Status | Depends |\n|----|-------|--------|---------|\n| 1 | One | pending | |\n| 2 | Two | pending | |\n| 3 | Three | pending | 1, 2 |\n";

#[test]
fn a_run_merges_each_reviewed_task_once_in_dependency_order_and_leaves_the_checkout_alone() {
    let repo = Repo::new(DIAMOND);
    repo.agents_meet("1", "2");
    let head = repo.git(&["rev-parse", "HEAD"]);
    let out = repo.run(&["run", "--json", "-j", "2"]);
    let report = json_of(&out);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(report["outcome"], "done", "{report}");
    let tip = repo.git(&["rev-parse", "taskie/p/integration"]);
    assert_eq!(report["all_code_review"], Value::String(tip.clone()));
    for t in ["1", "2", "3"] {
        assert_eq!(repo.merges_of(t), 1, "task {t} merged once");
        assert!(
            repo.file_on(&tip, &format!("task-{t}.txt")).is_some(),
            "task {t}'s file"
        );
    }
    // Task 3 was cut from an integration tip that held both of its dependencies.
    for t in ["1", "2"] {
        assert!(
            repo.file_on("taskie/p/task-3", &format!("task-{t}.txt"))
                .is_some(),
            "task 3 was cut after task {t} merged"
        );
    }
    // Tasks 1 and 2 ran at the same time: each saw the other under way.
    assert!(
        repo.met("1") && repo.met("2"),
        "sessions 1 and 2 never overlapped"
    );
    // The user's checkout: same commit, nothing changed, no worktree left.
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert_eq!(repo.git(&["worktree", "list"]).lines().count(), 1);
    // Statuses: done on the integration branch, by the driver; never on a task branch.
    let tasks_md = ".taskie/plans/p/tasks.md";
    let statuses = repo.file_on(&tip, tasks_md).unwrap();
    for t in ["1", "2", "3"] {
        assert!(
            statuses.contains(&format!("| {t} | ")) && !statuses.contains("pending"),
            "{statuses}"
        );
        assert_eq!(
            repo.file_on(&format!("taskie/p/task-{t}"), tasks_md)
                .unwrap()
                .matches("| pending |")
                .count(),
            3 - usize::from(t == "3") * 2,
            "task {t}'s branch holds the statuses as its base had them"
        );
    }
    // Plan files never reached a task branch: none changed them from where it was cut.
    for t in ["1", "2", "3"] {
        let changed = repo.git(&[
            "diff",
            "--name-only",
            &session_base(&repo, t),
            &format!("taskie/p/task-{t}"),
            "--",
            ".taskie",
        ]);
        assert_eq!(changed, "", "task {t}");
    }
}

/// The ids of a task table's rows (its first column).
fn task_ids(table: &str) -> Vec<String> {
    table
        .lines()
        .skip(2)
        .filter_map(|l| l.split('|').nth(1))
        .map(|c| c.trim().to_string())
        .collect()
}

pub(crate) const TWO: &str = "| Id | Title | Status |\n|----|-------|--------|\n| 1 | One | pending |\n| 2 | Two | pending |\n";
pub(crate) const ONE: &str =
    "| Id | Title | Status |\n|----|-------|--------|\n| 1 | One | pending |\n";

fn lane<'a>(report: &'a Value, task: &str) -> &'a Value {
    report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == task)
        .map(|t| &t["lane"])
        .unwrap_or_else(|| panic!("no task {task} in {report}"))
}

#[test]
fn land_ff_fast_forwards_the_users_branch_to_the_reviewed_tip() {
    let repo = Repo::new(TWO);
    let out = repo.run(&["run", "--json", "--land", "ff"]);
    let report = json_of(&out);
    assert!(out.status.success(), "{report}");
    let tip = repo.git(&["rev-parse", "taskie/p/integration"]);
    assert_eq!(report["landed"], Value::String(tip.clone()));
    assert_eq!(repo.git(&["rev-parse", "main"]), tip);
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert!(repo.work().join("task-2.txt").is_file());
    // `taskie status` shows the run's lanes, as text and as JSON.
    let status = repo.run(&["status", "--plan", "p"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("Run p-") && text.contains(": done;"),
        "{text}"
    );
    assert!(
        text.contains("  task 1: merged (") && text.contains("  task 2: merged ("),
        "{text}"
    );
    let status = json_of(&repo.run(&["status", "--plan", "p", "--json"]));
    assert_eq!(status["run"]["outcome"], "done", "{status}");
    assert_eq!(status["run"]["lanes"][0][1]["state"], "merged", "{status}");
}

#[test]
fn a_session_without_a_heartbeat_is_never_merged_and_its_dependents_are_skipped() {
    let repo = Repo::new(DIAMOND);
    std::fs::write(repo.root().join("agents/1.nohook"), "").unwrap();
    let out = repo.run(&["run", "--json"]);
    let report = partial(&out);
    assert_eq!(lane(&report, "1")["state"], "blocked");
    assert!(
        lane(&report, "1")["reason"]
            .as_str()
            .unwrap()
            .contains("without a heartbeat"),
        "{report}"
    );
    assert_eq!(lane(&report, "2")["state"], "merged");
    assert_eq!(lane(&report, "3")["state"], "skipped");
    assert_eq!(repo.merges_of("1"), 0);
    assert!(
        repo.file_on("taskie/p/task-1", "task-1.txt").is_some(),
        "the branch is kept"
    );
    let statuses = repo
        .file_on("taskie/p/integration", ".taskie/plans/p/tasks.md")
        .unwrap();
    assert_eq!(
        statuses.lines().filter(|l| l.contains("pending")).count(),
        2,
        "only task 2 is done: {statuses}"
    );
    assert!(statuses.contains("| 2 | Two | done"), "{statuses}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ended partial") && stderr.contains("taskie run --resume"),
        "{stderr}"
    );
}

#[test]
fn a_hard_stopped_task_is_blocked_with_its_branch_kept_and_its_dependents_skipped() {
    let state = r#"{"phase":"tasks-review","next_phase":"complete-task","phase_iteration":2,"max_reviews":1,"review_model":"opus","consecutive_clean":0,"current_task":null,"tdd":false}"#;
    let table = "| Id | Title | Status | Depends |\n|-|-|-|-|\n| 1 | One | pending | |\n| 2 | Two | pending | 1 |\n";
    let repo = Repo::with_state(table, Some(state));
    repo.reviewer(&Fake::fail());
    let out = repo.run(&["run", "--json"]);
    let report = partial(&out);
    let reason = lane(&report, "1")["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("hard-stopped"), "{reason}");
    assert_eq!(lane(&report, "2")["state"], "skipped", "{report}");
    assert_eq!(repo.merges_of("1"), 0);
    assert!(
        repo.git(&["branch", "--list", "taskie/p/task-1"])
            .contains("task-1")
    );
    // What is left, and how to go on.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("task 1 is blocked (its review hard-stopped")
            && stderr.contains("task 2 waits for task 1")
            && stderr.contains("`taskie run --resume --plan p` retries what is left"),
        "{stderr}"
    );
}

#[test]
fn a_session_that_writes_into_the_users_checkout_fails_its_task() {
    let repo = Repo::new(ONE);
    repo.agent_does("1", "echo oops > \"$CHECKOUT/outside.txt\"; echo 1 > task-1.txt; git add task-1.txt; git commit -q -m t1\n");
    let out = repo.run(&["run", "--json"]);
    let report = partial(&out);
    let reason = lane(&report, "1")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("outside its worktree") && reason.contains("outside.txt"),
        "{reason}"
    );
    assert_eq!(repo.merges_of("1"), 0);
}

/// Kills `taskie run` at `point` (`before:<step>` or `after:<step>`), resumes it, and
/// checks that nothing was lost or merged twice. The kill point is compiled only with
/// debug assertions, as `cargo test` builds the binaries (`cargo test --release` skips
/// the tests that use it).
#[cfg(debug_assertions)]
fn killed_at_then_resumed(point: &str) {
    let repo = Repo::new(TWO);
    let out = repo
        .taskie(&["run", "--land", "ff"])
        .env("TASKIE_TEST_KILL_AT", point)
        .output()
        .unwrap();
    assert_killed(&out, point);
    let out = repo.run(&["run", "--resume", "--json"]);
    let report = json_of(&out);
    assert!(
        out.status.success(),
        "{point}: {report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(report["outcome"], "done", "{point}");
    let tip = repo.git(&["rev-parse", "taskie/p/integration"]);
    for t in ["1", "2"] {
        assert_eq!(repo.merges_of(t), 1, "{point}: task {t} merged once");
        assert!(
            repo.file_on(&tip, &format!("task-{t}.txt")).is_some(),
            "{point}: task {t}"
        );
    }
    assert_eq!(
        repo.git(&["worktree", "list"]).lines().count(),
        1,
        "{point}: worktrees left"
    );
    assert!(!repo.work().join(".git/index.lock").exists());
    assert_eq!(repo.git(&["rev-parse", "main"]), tip, "{point}: landed");
}

#[cfg(debug_assertions)]
/// Every journal step, before and after its entry is written.
const KILL_POINTS: [&str; 20] = [
    "after:start",
    "before:session",
    "after:session",
    "before:reviewed",
    "after:reviewed",
    "before:merge",
    "after:merge",
    "before:merge-commit",
    "after:merge-commit",
    "before:merged",
    "after:merged",
    "before:final-review",
    "after:final-review",
    "before:final-passed",
    "after:final-passed",
    "before:land",
    "after:land",
    "before:end",
    "after:end",
    "after:merged:2",
];

#[cfg(debug_assertions)]
#[test]
fn a_run_killed_at_a_journal_step_resumes_without_losing_or_repeating_a_merge() {
    // The fast tier kills at the merge steps; the slow tier at every step.
    let points: &[&str] = if crate::SLOW_TIER {
        &KILL_POINTS
    } else {
        &[
            "after:merge",
            "after:merge-commit",
            "before:merged",
            "after:session",
        ]
    };
    for point in points {
        killed_at_then_resumed(point);
    }
}

#[test]
fn resume_after_a_partial_end_runs_what_was_left_and_merges_it_once() {
    let repo = Repo::new(DIAMOND);
    std::fs::write(repo.root().join("agents/1.nohook"), "").unwrap();
    let out = repo.run(&["run", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    std::fs::remove_file(repo.root().join("agents/1.nohook")).unwrap();
    let out = repo.run(&["run", "--resume", "--json"]);
    let report = json_of(&out);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(report["outcome"], "done");
    for t in ["1", "2", "3"] {
        assert_eq!(repo.merges_of(t), 1, "task {t}");
    }
    assert_eq!(repo.git(&["worktree", "list"]).lines().count(), 1);
}

#[test]
fn an_agents_usage_limit_pauses_its_task_and_resume_finishes_it() {
    let repo = Repo::new(ONE);
    repo.agent_does(
        "1",
        "echo '{\"type\":\"result\",\"is_error\":true,\"api_error_status\":429,\"result\":\"Claude AI usage limit reached\"}'; exit 1\n",
    );
    let out = repo.run(&["run", "--json"]);
    let report = partial(&out);
    assert_eq!(lane(&report, "1")["state"], "paused", "{report}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("paused") && stderr.contains("usage limit"),
        "{stderr}"
    );
    std::fs::remove_file(repo.root().join("agents/1.sh")).unwrap();
    let out = repo.run(&["run", "--resume", "--json"]);
    let report = json_of(&out);
    assert!(out.status.success(), "{report}");
    assert_eq!(repo.merges_of("1"), 1);
}

#[test]
fn no_session_starts_once_the_plans_review_budget_is_spent() {
    // Each fake review costs $0.01: task 1's two reviews spend the budget.
    let state = r#"{"phase":"tasks-review","next_phase":"complete-task","phase_iteration":2,"max_reviews":8,"review_model":"opus","consecutive_clean":0,"current_task":null,"tdd":false,"max_cost_usd":0.015}"#;
    let repo = Repo::with_state(TWO, Some(state));
    let out = repo.run(&["run", "--json", "-j", "1"]);
    let report = partial(&out);
    assert_eq!(lane(&report, "1")["state"], "merged", "{report}");
    assert_eq!(lane(&report, "2")["state"], "blocked", "{report}");
    let reason = lane(&report, "2")["reason"].as_str().unwrap();
    assert!(reason.contains("review budget is spent"), "{reason}");
    assert_eq!(repo.merges_of("2"), 0);
}

#[test]
fn a_plan_that_is_not_committed_runs_from_copies_and_stays_untouched() {
    let repo = Repo::new(ONE);
    // Take the plan out of git: the checkout has it as untracked files only.
    repo.git(&["rm", "-r", "-q", "--cached", ".taskie"]);
    repo.git(&["commit", "-q", "-m", "plan untracked"]);
    let before = repo.git(&["status", "--porcelain"]);
    let out = repo.run(&["run", "--json"]);
    let report = json_of(&out);
    assert!(out.status.success(), "{report}");
    assert_eq!(repo.merges_of("1"), 1);
    assert_eq!(repo.git(&["status", "--porcelain"]), before);
    let tip = repo.git(&["rev-parse", "taskie/p/integration"]);
    assert!(
        repo.file_on(&tip, ".taskie/plans/p/tasks.md").is_none(),
        "no plan file was committed"
    );
}

#[test]
fn a_plan_state_json_that_cannot_be_used_stops_the_run_naming_the_file_and_the_field() {
    let repo = Repo::new(ONE);
    let state = repo.work().join(".taskie/plans/p/state.json");
    std::fs::write(&state, "{\"max_reviews\": \"many\"}\n").unwrap();
    let out = repo.run(&["run", "--json"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains(".taskie/plans/p/state.json") && text.contains("max_reviews"),
        "{text}"
    );
    assert_eq!(repo.merges_of("1"), 0, "{text}");
}

#[test]
fn an_untracked_plans_statuses_are_written_into_the_checkout_at_landing_only() {
    let repo = Repo::new(TWO);
    repo.git(&["rm", "-r", "-q", "--cached", ".taskie"]);
    repo.git(&["commit", "-q", "-m", "plan untracked"]);
    let tasks_md = repo.work().join(".taskie/plans/p/tasks.md");
    let before = std::fs::read_to_string(&tasks_md).unwrap();
    // Task 2's session sees the checkout's tasks.md as it was while the run goes on.
    repo.agent_does(
        "2",
        "cp \"$CHECKOUT/.taskie/plans/p/tasks.md\" \"$here/seen-by-2\"; echo 2 > task-2.txt; git add task-2.txt; git commit -q -m t2\n",
    );
    let out = repo.run(&["run", "--json", "--land", "ff", "-j", "1"]);
    let report = json_of(&out);
    assert!(out.status.success(), "{report}");
    let seen = std::fs::read_to_string(repo.root().join("agents/seen-by-2")).unwrap();
    assert_eq!(seen, before, "nothing written before landing");
    let after = std::fs::read_to_string(&tasks_md).unwrap();
    assert!(
        after.contains("| 1 | One | done") && after.contains("| 2 | Two | done"),
        "{after}"
    );
}

#[test]
fn a_second_run_of_a_plan_is_refused_while_its_integration_branch_is_there() {
    let repo = Repo::new(ONE);
    let out = repo.run(&["run"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again = repo.run(&["run"]);
    assert_eq!(again.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("taskie/p/integration exists") && stderr.contains("taskie run --resume"),
        "{stderr}"
    );
}

/// The worktrees of the newest run (`task-<N>`), outside the checkout.
#[cfg(debug_assertions)]
fn run_worktrees(repo: &Repo) -> Vec<PathBuf> {
    let runs = repo.root().join("data/taskie/runs");
    let mut found = Vec::new();
    for run in std::fs::read_dir(&runs).unwrap().flatten() {
        for entry in std::fs::read_dir(run.path()).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("task-") {
                found.push(entry.path());
            }
        }
    }
    found
}

#[cfg(debug_assertions)]
#[test]
fn a_gate_or_its_link_lost_or_stale_after_a_kill_is_made_again_by_resume() {
    type Damage = fn(&Path);
    let damages: [(&str, Damage); 3] = [
        ("the link is gone", |wt| {
            std::fs::remove_file(wt.join(".taskie")).unwrap()
        }),
        ("the link points elsewhere", |wt| {
            let elsewhere = wt.with_file_name(format!(
                "stale-{}",
                wt.file_name().unwrap().to_string_lossy()
            ));
            std::fs::create_dir_all(&elsewhere).unwrap();
            // Replaced at once: a session the kill left running never sees it missing.
            let tmp = wt.join(".taskie.stale");
            std::os::unix::fs::symlink(&elsewhere, &tmp).unwrap();
            std::fs::rename(&tmp, wt.join(".taskie")).unwrap();
        }),
        ("the gate is gone", |wt| {
            // Moved away at once (a session the kill left may still be writing in it).
            let gate = std::fs::read_link(wt.join(".taskie")).unwrap();
            std::fs::rename(&gate, gate.with_extension("lost")).unwrap();
        }),
    ];
    for (what, damage) in damages {
        let repo = Repo::new(TWO);
        let out = repo
            .taskie(&["run"])
            .env("TASKIE_TEST_KILL_AT", "before:reviewed")
            .output()
            .unwrap();
        assert_killed(&out, what);
        let worktrees = run_worktrees(&repo);
        assert!(!worktrees.is_empty(), "{what}: no worktree to damage");
        for wt in &worktrees {
            // A session the kill left running is still linked; damage what is there.
            if std::fs::symlink_metadata(wt.join(".taskie")).is_ok() {
                damage(wt);
            }
        }
        let out = repo.run(&["run", "--resume", "--json"]);
        let report = json_of(&out);
        assert!(
            out.status.success(),
            "{what}: {report}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for t in ["1", "2"] {
            assert_eq!(repo.merges_of(t), 1, "{what}: task {t} merged once");
        }
        assert_eq!(repo.git(&["status", "--porcelain"]), "", "{what}");
    }
}

/// The journal of the newest run in `runs` (`.taskie/runs`).
fn newest_journal(runs: &Path) -> PathBuf {
    let mut journals: Vec<PathBuf> = std::fs::read_dir(runs)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("journal.jsonl"))
        .filter(|j| j.is_file())
        .collect();
    journals.sort();
    journals.pop().expect("a run's journal")
}

/// The steps of the newest run's journal, as `(step, task)`.
fn journal_steps(repo: &Repo) -> Vec<(String, String)> {
    let runs = repo.work().join(".taskie/runs");
    let text = std::fs::read_to_string(newest_journal(&runs)).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            (
                v["step"].as_str().unwrap_or_default().to_string(),
                v["task"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The base the newest run's first session of `task` was cut from, as journalled.
fn session_base(repo: &Repo, task: &str) -> String {
    let runs = repo.work().join(".taskie/runs");
    let text = std::fs::read_to_string(newest_journal(&runs)).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["step"] == "session" && v["task"] == task)
        .and_then(|v| v["base"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no session of task {task}: {text}"))
}

fn position(steps: &[(String, String)], step: &str, task: &str) -> usize {
    steps
        .iter()
        .position(|(s, t)| s == step && t == task)
        .unwrap_or_else(|| panic!("no {step} of task {task} in {steps:?}"))
}

#[test]
fn an_agents_usage_limit_pauses_that_clis_lanes_and_the_run_goes_on_by_itself_after_the_reset() {
    let table = "| Id | Title | Status | Agent |\n|-|-|-|-|\n| 1 | One | pending | claude |\n| 2 | Two | pending | claude |\n| 3 | Three | pending | codex |\n";
    let repo = Repo::new(table);
    // Task 1's first session hits claude's limit; "now" is a second before its reset.
    repo.agent_does(
        "1",
        "if [ ! -f \"$here/limited-at\" ]; then date +%s.%N > \"$here/limited-at\"; \
         echo '{\"type\":\"result\",\"is_error\":true,\"api_error\":\"usage_limit_reached\",\"result\":\"You have hit your limit \u{b7} resets Nov 26, 5:44am (UTC)\"}'; exit 1; fi\n\
         echo 1 > task-1.txt; git add task-1.txt; git commit -q -m t1\n",
    );
    // 05:44:59 UTC: the limit resets at 05:45:00 (the minute after the one shown).
    let out = repo
        .taskie(&["run", "--json", "-j", "1", "--agent", "claude,codex"])
        .env("TASKIE_TEST_NOW", NOW_0544)
        .output()
        .unwrap();
    let report = json_of(&out);
    let stdout_err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{report}\n{stdout_err}");
    assert_eq!(report["outcome"], "done", "{report}");
    for t in ["1", "2", "3"] {
        assert_eq!(repo.merges_of(t), 1, "task {t}");
    }
    assert!(
        stdout_err.contains("task 1: paused: claude's usage limit")
            && stdout_err.contains("no claude session starts until then"),
        "{stdout_err}"
    );
    // Codex went on while claude waited; claude's other task waited for the reset.
    let steps = journal_steps(&repo);
    let paused = position(&steps, "paused", "1");
    let retry = position(&steps, "retry", "1");
    assert!(paused < position(&steps, "session", "3"), "{steps:?}");
    assert!(position(&steps, "session", "3") < retry, "{steps:?}");
    assert!(retry < position(&steps, "session", "2"), "{steps:?}");
    // It waited for the reset before starting task 1 again.
    let limited = repo.time("limited", "at");
    let again = repo.time("start", "1");
    assert!(
        again - limited >= 1.0,
        "started again {}s after the limit",
        again - limited
    );
}

#[test]
fn an_agents_usage_limit_in_the_all_code_review_is_waited_out_and_the_review_runs_again() {
    let repo = Repo::new(ONE);
    // The all-code review's first session hits claude's limit; "now" is a second
    // before its reset.
    repo.agent_does(
        "all",
        "if [ ! -f \"$here/limited-at\" ]; then date +%s.%N > \"$here/limited-at\"; \
         echo '{\"type\":\"result\",\"is_error\":true,\"api_error\":\"usage_limit_reached\",\"result\":\"You have hit your limit \u{b7} resets Nov 26, 5:44am (UTC)\"}'; exit 1; fi\n",
    );
    let stderr = lands_after_a_paused_all_code_review(&repo, "claude's usage limit");
    // The second session started after the reset, not at once.
    let again = repo.time("start", "all");
    assert!(again - repo.time("limited", "at") >= 1.0, "{stderr}");
}

#[test]
fn a_run_of_several_clis_gives_each_at_most_two_sessions_and_honours_a_tasks_agent() {
    let table = "| Id | Title | Status | Agent |\n|-|-|-|-|\n| 1 | A | pending | |\n| 2 | B | pending | |\n| 3 | C | pending | |\n| 4 | D | pending | |\n| 5 | E | pending | |\n| 6 | F | pending | gemini |\n";
    let repo = Repo::private(table);
    // Each works a moment, long enough for a third session of one CLI, were it started at
    // once, to overlap the two under way; never too long for the test.
    for t in 1..=6 {
        let t = t.to_string();
        repo.agent_commits(&t, 0.3, &format!("task-{t}.txt"), &t);
    }
    let out = repo.run(&["run", "--json", "-j", "8", "--agent", "claude,codex"]);
    let report = json_of(&out);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let vendor = |t: &str| {
        std::fs::read_to_string(repo.root().join(format!("agents/vendor-{t}")))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(vendor("6"), "gemini", "task 6 names its agent");
    let used: Vec<String> = (1..=5).map(|t| vendor(&t.to_string())).collect();
    assert!(
        used.iter().all(|v| v == "claude" || v == "codex")
            && used.contains(&"claude".to_string())
            && used.contains(&"codex".to_string()),
        "{used:?}"
    );
    for cli in ["claude", "codex"] {
        let peaks =
            std::fs::read_to_string(repo.root().join(format!("agents/peak-{cli}"))).unwrap();
        let most = peaks
            .lines()
            .filter_map(|l| l.trim().parse::<u32>().ok())
            .max();
        assert!(most.is_some_and(|m| m <= 2), "{cli}: {peaks}");
    }
    let status = String::from_utf8_lossy(&repo.run(&["status", "--plan", "p"]).stdout).into_owned();
    assert!(status.contains("(4 × claude,codex)"), "{status}");
}

#[test]
fn an_agent_cell_naming_no_known_cli_is_refused_with_its_line_and_the_fix() {
    let table = "| Id | Title | Status | Agent |\n|-|-|-|-|\n| 1 | A | pending | cursor |\n";
    let repo = Repo::new(table);
    let out = repo.run(&["run"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".taskie/plans/p/tasks.md line 3: task 1 names the agent \"cursor\"")
            && stderr.contains("write claude, codex or gemini in its Agent cell"),
        "{stderr}"
    );
    assert_eq!(
        repo.git(&["branch", "--list", "taskie/*"]),
        "",
        "no run began"
    );
}

/// Task `t`'s agent writes its own line into shared.txt; asked to resolve a conflict, it
/// runs `resolution` instead.
fn conflicting(repo: &Repo, t: &str, resolution: &str) {
    repo.agent_does(t, &conflicting_script(t, resolution));
}

/// The shell of [`conflicting`].
fn conflicting_script(t: &str, resolution: &str) -> String {
    format!(
        "if printf '%s' \"$prompt\" | grep -q 'resolving a merge conflict'; then {resolution}\n\
         else echo from-task-{t} > shared.txt; git add shared.txt; git commit -q -m t{t}; fi\n"
    )
}

/// The task whose merge conflicted in the newest run.
fn conflicted(repo: &Repo) -> String {
    let steps = journal_steps(repo);
    steps
        .iter()
        .find(|(s, _)| s == "conflict")
        .map(|(_, t)| t.clone())
        .unwrap_or_else(|| panic!("no conflict in {steps:?}"))
}

#[test]
fn a_conflict_becomes_a_session_of_its_own_that_is_reviewed_and_merged() {
    let repo = Repo::new(TWO);
    for t in ["1", "2"] {
        conflicting(
            &repo,
            t,
            "printf 'from-task-1\\nfrom-task-2\\n' > shared.txt; git add shared.txt; git commit -q --no-edit",
        );
    }
    let out = repo.run(&["run", "--json"]);
    let report = json_of(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{report}\n{stderr}");
    let task = conflicted(&repo);
    assert!(
        stderr.contains(&format!(
            "task {task}: claude session resolving its conflict started"
        )),
        "{stderr}"
    );
    for t in ["1", "2"] {
        assert_eq!(repo.merges_of(t), 1, "task {t}");
    }
    let tip = repo.git(&["rev-parse", "taskie/p/integration"]);
    assert_eq!(
        repo.file_on(&tip, "shared.txt").as_deref(),
        Some("from-task-1\nfrom-task-2\n")
    );
    // The resolution was reviewed in a review cycle of its own.
    let steps = journal_steps(&repo);
    let conflict = position(&steps, "conflict", &task);
    assert!(
        steps[conflict..]
            .iter()
            .any(|(s, t)| s == "reviewed" && *t == task),
        "{steps:?}"
    );
}

#[test]
fn a_resolution_that_leaves_markers_or_deletes_a_file_is_blocked_and_nothing_of_it_lands() {
    for (what, resolution, says) in [
        (
            "markers",
            "git add shared.txt; git commit -q --no-edit",
            "left conflict markers in shared.txt",
        ),
        (
            "a deletion",
            "git rm -q shared.txt; git commit -q --no-edit",
            "deletes shared.txt, which both sides have",
        ),
    ] {
        let repo = Repo::new(TWO);
        for t in ["1", "2"] {
            conflicting(&repo, t, resolution);
        }
        let out = repo.run(&["run", "--json"]);
        let report = json_of(&out);
        assert_eq!(out.status.code(), Some(1), "{what}: {report}");
        assert_eq!(report["outcome"], "partial", "{what}");
        let task = conflicted(&repo);
        let lane = lane(&report, &task);
        assert_eq!(lane["state"], "blocked", "{what}: {report}");
        let reason = lane["reason"].as_str().unwrap();
        assert!(
            reason.contains("conflict with taskie/p/integration was not resolved")
                && reason.contains(says),
            "{what}: {reason}"
        );
        assert_eq!(repo.merges_of(&task), 0, "{what}");
        let shared = repo.file_on("taskie/p/integration", "shared.txt").unwrap();
        assert!(!shared.contains("<<<<<<<"), "{what}: {shared}");
        assert!(
            repo.git(&["branch", "--list", &format!("taskie/p/task-{task}")])
                .contains("task-"),
            "{what}: the branch is kept"
        );
    }
}

#[test]
fn a_session_that_leaves_no_change_is_blocked_saying_it_produced_no_commit() {
    let repo = Repo::new(TWO);
    // Task 1's agent works and stops, but nothing it wrote reaches a commit (as under a
    // sandbox that made its writes fail).
    repo.agent_does(
        "1",
        "echo 'could not write task-1.txt: read-only file system'\n",
    );
    let out = repo.run(&["run", "--json"]);
    let report = partial(&out);
    assert_eq!(lane(&report, "1")["state"], "blocked", "{report}");
    let reason = lane(&report, "1")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("the session produced no commit")
            && reason.contains("is the task's base")
            && reason.contains("agent-stdout.log")
            && reason.contains("set its status to done in tasks.md")
            && reason.contains("taskie/p/task-1 is kept"),
        "{reason}"
    );
    assert_eq!(repo.merges_of("1"), 0);
    assert_eq!(lane(&report, "2")["state"], "merged", "{report}");
    let statuses = repo
        .file_on("taskie/p/integration", ".taskie/plans/p/tasks.md")
        .unwrap();
    assert!(statuses.contains("| 1 | One | pending"), "{statuses}");
    // A task that truly needs no change: the user says it is done, and the run ends.
    let tasks_md = repo.work().join(".taskie/plans/p/tasks.md");
    let text = std::fs::read_to_string(&tasks_md).unwrap();
    std::fs::write(
        &tasks_md,
        text.replace("| 1 | One | pending |", "| 1 | One | done |"),
    )
    .unwrap();
    let out = repo.run(&["run", "--resume", "--json"]);
    let report = json_of(&out);
    assert!(out.status.success(), "{report}");
    assert_eq!(report["outcome"], "done", "{report}");
    assert_eq!(repo.merges_of("1"), 0);
}

#[test]
fn work_a_session_leaves_uncommitted_is_committed_by_the_hook_before_its_review_and_merged() {
    let repo = Repo::new(ONE);
    // The agent writes its file and commits nothing (its session's git ignores the gate's
    // link, which the hook's commit must leave out without failing on it).
    repo.agent_does("1", "echo 'work of task 1' > task-1.txt\n");
    let out = repo.run(&["run", "--json"]);
    let report = json_of(&out);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lane(&report, "1")["state"], "merged", "{report}");
    assert_eq!(
        repo.file_on("taskie/p/integration", "task-1.txt")
            .as_deref(),
        Some("work of task 1\n")
    );
    let subjects = repo.git(&["log", "--format=%s", "taskie/p/task-1"]);
    assert_eq!(
        subjects.lines().next(),
        Some("taskie: task 1 as submitted for review 1"),
        "{subjects}"
    );
    // Nothing of the gate was committed: no `.taskie` link, no review file.
    assert_eq!(
        repo.git(&[
            "diff",
            "--name-only",
            &session_base(&repo, "1"),
            "taskie/p/task-1"
        ]),
        "task-1.txt"
    );
}

#[test]
fn commits_that_undo_each_other_are_no_change_either() {
    let repo = Repo::new(ONE);
    repo.agent_does(
        "1",
        "echo 1 > task-1.txt; git add task-1.txt; git commit -q -m t1; git rm -q task-1.txt; git commit -q -m undo\n",
    );
    let out = repo.run(&["run", "--json"]);
    let report = partial(&out);
    let reason = lane(&report, "1")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("the session produced no commit")
            && reason.contains("change nothing from the task's base"),
        "{reason}"
    );
    assert_eq!(repo.merges_of("1"), 0);
}

#[test]
fn a_lane_whose_thread_panics_is_blocked_naming_the_panic_and_the_run_ends_partial() {
    let repo = Repo::new(TWO);
    let out = repo
        .taskie(&["run", "--json"])
        .env("TASKIE_TEST_PANIC_LANE", "1")
        .output()
        .unwrap();
    let report = partial(&out);
    assert_eq!(lane(&report, "1")["state"], "blocked", "{report}");
    let reason = lane(&report, "1")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("lane for it panicked (TASKIE_TEST_PANIC_LANE names task 1)")
            && reason.contains("taskie/p/task-1 is kept"),
        "{reason}"
    );
    assert!(
        repo.git(&["branch", "--list", "taskie/p/task-1"])
            .contains("task-1")
    );
    assert_eq!(lane(&report, "2")["state"], "merged", "{report}");
    assert_eq!(repo.merges_of("1"), 0);
    // Once the bug is gone, `--resume` finishes the task.
    let out = repo.run(&["run", "--resume", "--json"]);
    let report = json_of(&out);
    assert!(out.status.success(), "{report}");
    assert_eq!(repo.merges_of("1"), 1);
}

/// Claude Code's answer at a usage limit, resetting at `when` (e.g. `Nov 26, 5:44am`).
fn claude_limit(when: &str) -> String {
    format!(
        "{{\"type\":\"result\",\"is_error\":true,\"api_error\":\"usage_limit_reached\",\"result\":\"You have hit your limit \u{b7} resets {when} (UTC)\"}}"
    )
}

/// 2026-11-26T05:44:59Z, a second before a limit shown as `5:44am` resets: each test that
/// waits one out waits one second.
const NOW_0544: &str = "1795671899";

#[test]
fn an_agents_limit_that_resets_beyond_the_longest_wait_ends_the_run_partial_saying_how_to_resume() {
    let repo = Repo::new(TWO);
    // A day away: further than the run waits by itself.
    repo.agent_does(
        "1",
        &format!("echo '{}'; exit 1\n", claude_limit("Nov 27, 5:44am")),
    );
    let out = repo
        .taskie(&["run", "--json", "-j", "1"])
        .env("TASKIE_TEST_NOW", NOW_0544)
        .output()
        .unwrap();
    let report = partial(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(lane(&report, "1")["state"], "paused", "{report}");
    assert_eq!(lane(&report, "1")["until"], 1_795_758_300, "{report}");
    // Task 2 is claude's too: it waits for the reset with task 1.
    assert_eq!(lane(&report, "2")["state"], "waiting", "{report}");
    assert!(
        stderr.contains("that is too far to wait for: `taskie run --resume` after it")
            && stderr.contains("task 1 is paused until 2026-11-27")
            && stderr.contains("task 2 has not started")
            && stderr.contains("taskie run --resume --plan p"),
        "{stderr}"
    );
    // It did not wait: one session, and no word of waiting.
    assert_eq!(repo.sessions("1"), 1);
    assert!(!stderr.contains("waiting"), "{stderr}");
}

#[test]
fn an_agents_limit_with_no_reset_time_ends_the_run_partial_saying_how_to_resume() {
    let repo = Repo::new(ONE);
    repo.agent_does(
        "1",
        "echo 'Error: you have hit your usage limit.' >&2; exit 1\n",
    );
    let out = repo.run(&["run", "--json"]);
    let report = partial(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(lane(&report, "1")["state"], "paused", "{report}");
    assert_eq!(lane(&report, "1")["until"], Value::Null, "{report}");
    assert!(
        stderr.contains(
            "with no reset time given; no claude session starts until then: \
             `taskie run --resume` once the limit resets"
        ) && stderr.contains("task 1 is paused (")
            && stderr.contains("resume after the limit resets"),
        "{stderr}"
    );
    assert_eq!(repo.sessions("1"), 1);
    // After the reset, `--resume` finishes it.
    std::fs::remove_file(repo.root().join("agents/1.sh")).unwrap();
    let out = repo.run(&["run", "--resume", "--json"]);
    assert!(out.status.success(), "{}", json_of(&out));
    assert_eq!(repo.merges_of("1"), 1);
}

/// The fake reviewer's first review: Claude Code's usage limit, resetting on Nov 26 at
/// 05:44 UTC (so at 05:45:00); every later review runs. Dated, so the reset is read as
/// that minute's end: an undated time within the current minute waits a whole minute
/// more, which would only make the test slower.
const REVIEWER_LIMIT_ONCE: &str = "if [ ! -f \"$here/limited\" ]; then touch \"$here/limited\"; \
    echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":429,\"api_error\":\"usage_limit_reached\",\"result\":\"You have hit your weekly limit \u{b7} resets Nov 26, 5:44am (UTC)\",\"total_cost_usd\":0}'; \
    exit 1; fi";

#[test]
fn a_reviewers_usage_limit_holds_only_its_task_and_the_run_reviews_it_after_the_reset() {
    let repo = Repo::new(ONE);
    repo.reviewer(&Fake::pass().extra(REVIEWER_LIMIT_ONCE));
    // A second before the reset; this clock does not move, so the review after the
    // wait runs only because the run lifted the pause it waited out.
    let out = repo
        .taskie(&["run", "--json"])
        .env("TASKIE_TEST_NOW", NOW_0544)
        .env("TZ", "UTC")
        .output()
        .unwrap();
    let report = json_of(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{report}\n{stderr}");
    assert_eq!(report["outcome"], "done", "{report}");
    assert_eq!(repo.merges_of("1"), 1);
    assert!(
        stderr.contains("task 1: paused: the reviewer's usage limit, until")
            && stderr.contains("the run starts it again then")
            && stderr.contains("task 1: the usage limit has reset"),
        "{stderr}"
    );
    // The reviewer's limit is not the agent's: no CLI's lanes were held.
    assert!(!stderr.contains("no claude session starts"), "{stderr}");
    let steps = journal_steps(&repo);
    let paused = steps
        .iter()
        .filter(|(s, t)| s == "paused" && t == "1")
        .count();
    assert_eq!(paused, 1, "{steps:?}");
    assert!(position(&steps, "paused", "1") < position(&steps, "reviewed", "1"));
}

#[test]
fn a_reviewers_usage_limit_in_the_all_code_review_is_waited_out_and_the_review_runs_after_it() {
    let repo = Repo::new(ONE);
    // The all-code review (its review file says so) hits the limit once.
    // Its reset has a date, so "now" is a second before it (05:45:00).
    let all_code = REVIEWER_LIMIT_ONCE
        .replace(
            "if [ ! -f \"$here/limited\" ]; then",
            "if [ \"${path#*all-code-review}\" != \"$path\" ] && [ ! -f \"$here/limited\" ]; then",
        )
        .replace("resets 5:44am", "resets Nov 26, 5:44am");
    assert_ne!(all_code, REVIEWER_LIMIT_ONCE);
    repo.reviewer(&Fake::pass().extra(Box::leak(all_code.into_boxed_str())));
    // This clock does not move: the review after the wait runs only because the run
    // lifted the pause it waited out.
    lands_after_a_paused_all_code_review(&repo, "the reviewer's usage limit");
}

/// Runs the plan of `repo` with `--land ff`, "now" a second before 05:45:00 UTC, and
/// checks that the all-code review was paused by `limit`, waited out and passed, and the
/// branch landed on its commit; returns what the run said.
fn lands_after_a_paused_all_code_review(repo: &Repo, limit: &str) -> String {
    let out = repo
        .taskie(&["run", "--json", "--land", "ff"])
        .env("TASKIE_TEST_NOW", NOW_0544)
        .env("TZ", "UTC")
        .output()
        .unwrap();
    let report = json_of(&out);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{report}\n{stderr}");
    assert_eq!(report["outcome"], "done", "{report}\n{stderr}");
    assert!(
        stderr.contains(&format!("all-code review: paused: {limit}"))
            && stderr.contains("the run starts it again then")
            && stderr.contains("all-code review: the usage limit has reset"),
        "{stderr}"
    );
    let tip = repo.git(&["rev-parse", "taskie/p/integration"]);
    assert_eq!(
        report["all_code_review"],
        Value::String(tip.clone()),
        "{report}"
    );
    assert_eq!(report["landed"], Value::String(tip), "{report}");
    stderr
}

#[test]
fn a_driver_killed_during_a_conflict_resolution_resumes_keeping_the_resolution_and_merging_each_task_once()
 {
    let repo = Repo::new(TWO);
    // The resolving session commits its resolution, then kills the driver (kill -9 of
    // its parent) before its review; the session adopted after it is told the merge is
    // made, and only stops.
    let resolution = "printf 'from-task-1\\nfrom-task-2\\n' > shared.txt; git add shared.txt; \
        git commit -q --no-edit; git rev-parse HEAD > \"$here/resolved\"; kill -9 $PPID; exit 0";
    for t in ["1", "2"] {
        repo.agent_does(
            t,
            &format!(
                "if printf '%s' \"$prompt\" | grep -q 'finishing the resolution of a merge conflict'; then \
                 printf '%s' \"$prompt\" > \"$here/adopted\"\n\
                 else\n{}\nfi\n",
                conflicting_script(t, resolution)
            ),
        );
    }
    let out = repo.run(&["run", "--json"]);
    assert_killed(&out, "the resolving session");
    let resolved = std::fs::read_to_string(repo.root().join("agents/resolved"))
        .unwrap()
        .trim()
        .to_string();
    let task = conflicted(&repo);
    let out = repo.run(&["run", "--resume", "--json"]);
    let report = json_of(&out);
    assert!(
        out.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for t in ["1", "2"] {
        assert_eq!(repo.merges_of(t), 1, "task {t} merged once");
    }
    let tip = repo.git(&["rev-parse", "taskie/p/integration"]);
    assert!(
        Process::new("git")
            .current_dir(repo.work())
            .args(["merge-base", "--is-ancestor", &resolved, &tip])
            .status()
            .unwrap()
            .success(),
        "the resolution the killed session committed is merged"
    );
    assert_eq!(
        repo.file_on(&tip, "shared.txt").as_deref(),
        Some("from-task-1\nfrom-task-2\n")
    );
    // Adopted: the resumed session of the task resolves in the same worktree, on the
    // same base, as the one the kill cut off.
    let runs = repo.work().join(".taskie/runs");
    let text = std::fs::read_to_string(newest_journal(&runs)).unwrap();
    let resolving: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["step"] == "session" && v["task"] == task.as_str() && v["resolve"].is_array())
        .collect();
    assert_eq!(resolving.len(), 2, "{text}");
    assert_eq!(resolving[0]["worktree"], resolving[1]["worktree"]);
    let adopted = std::fs::read_to_string(repo.root().join("agents/adopted")).unwrap();
    assert!(
        adopted.contains(&format!("resolution of a merge conflict for task {task}"))
            && adopted.contains("resolved the conflicts in shared.txt and committed the merge"),
        "{adopted}"
    );
    assert_eq!(resolving[0]["base"], resolving[1]["base"]);
    assert_eq!(repo.git(&["worktree", "list"]).lines().count(), 1);
}

#[test]
fn a_session_restarted_after_a_crash_is_held_to_the_plans_review_budget() {
    // One review ($0.01) spends this budget.
    let state = r#"{"phase":"tasks-review","next_phase":"complete-task","phase_iteration":2,"max_reviews":8,"review_model":"opus","consecutive_clean":0,"current_task":null,"tdd":false,"max_cost_usd":0.005}"#;
    let repo = Repo::with_state(ONE, Some(state));
    // The first session commits, stops once (a review is paid for), then the driver is
    // killed (kill -9 of its parent) before the session ends.
    repo.agent_does(
        "1",
        "if [ ! -f \"$here/crashed\" ]; then touch \"$here/crashed\"; \
         echo 1 > task-1.txt; git add task-1.txt; git commit -q -m t1; \
         printf '{\"hook_event_name\":\"Stop\",\"cwd\":\"%s\",\"session_id\":\"s-1\",\"stop_hook_active\":false}' \"$PWD\" | eval \"$hook\" >> \"$here/answers-1\"; \
         kill -9 $PPID; exit 0; fi\n",
    );
    let out = repo.run(&["run", "--json"]);
    assert_killed(&out, "the first session");
    let out = repo.run(&["run", "--resume", "--json"]);
    let report = partial(&out);
    assert_eq!(lane(&report, "1")["state"], "blocked", "{report}");
    let reason = lane(&report, "1")["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("review budget is spent"), "{reason}");
    // The session cut off was not started again, and its commit is kept on its branch.
    assert_eq!(repo.sessions("1"), 1);
    assert!(repo.file_on("taskie/p/task-1", "task-1.txt").is_some());
    assert_eq!(repo.merges_of("1"), 0);
}

// ---- the real agents' hooks, armed before a lane starts (docs/run.md, "The agents") ----

/// A fake `codex`: called as `codex -c <the run's hook> app-server`, it answers
/// `hooks/list` as Codex 0.169 does, listing the hook as trusted once config.toml holds
/// its hash (or, with `$here/codex.none`, listing no hook at all); called for a session,
/// it only records that it started.
const FAKE_CODEX: &str = r#"#!/bin/sh
here=${0%/*}
if [ "$3" = app-server ]; then
  echo list >> "$here/codex-lists"
  if [ -f "$here/codex.none" ]; then
    echo '{"id":2,"result":{"data":[{"cwd":"x","hooks":[]}]}}'
    exit 0
  fi
  command=$(printf '%s' "$2" | sed -n 's/.*command=\("[^"]*"\).*/\1/p')
  trust=untrusted
  grep -q 'trusted_hash = "sha256:fake"' "$CODEX_HOME/config.toml" 2>/dev/null && trust=trusted
  printf '{"id":2,"result":{"data":[{"cwd":"x","hooks":[{"key":"/<session-flags>/config.toml:stop:0:0","command":%s,"source":"sessionFlags","currentHash":"sha256:fake","trustStatus":"%s","enabled":true}]}]}}\n' "$command" "$trust"
  exit 0
fi
echo "$@" > "$here/codex-session-${TASKIE_RUN##*:}"
"#;

#[test]
fn a_codex_lane_starts_only_after_its_hook_is_trusted_in_codex_config_toml() {
    let repo = Repo::new(ONE);
    write_executable(&repo.root().join("agents/codex"), FAKE_CODEX);
    let codex_home = repo.root().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(codex_home.join("config.toml"), "# mine\nmodel = \"o3\"\n").unwrap();
    let out = repo
        .taskie(&["run", "--json", "--agent", "codex"])
        .env("TASKIE_AGENT", repo.root().join("agents/codex"))
        .env("CODEX_HOME", &codex_home)
        .output()
        .unwrap();
    let report = json_of(&out);
    // The trust Codex's /hooks screen records, the user's own lines kept.
    let config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert_eq!(
        config,
        "# mine\nmodel = \"o3\"\n\n[hooks.state.\"/<session-flags>/config.toml:stop:0:0\"]\ntrusted_hash = \"sha256:fake\"\n"
    );
    // Asked before the trust and again after it; then the session started, with no
    // bypass of Codex's hook trust.
    let lists = std::fs::read_to_string(repo.root().join("agents/codex-lists")).unwrap();
    assert_eq!(lists.lines().count(), 2, "{report}");
    let args = std::fs::read_to_string(repo.root().join("agents/codex-session-1"))
        .unwrap_or_else(|e| panic!("the session did not start ({e}): {report}"));
    assert!(args.starts_with("exec --json "), "{args}");
    assert!(!args.contains("bypass"), "{args}");
}

#[test]
fn a_codex_lane_whose_hook_codex_does_not_list_is_refused_before_it_starts() {
    let repo = Repo::new(ONE);
    write_executable(&repo.root().join("agents/codex"), FAKE_CODEX);
    std::fs::write(repo.root().join("agents/codex.none"), "").unwrap();
    let codex_home = repo.root().join("codex-home");
    let out = repo
        .taskie(&["run", "--json", "--agent", "codex"])
        .env("TASKIE_AGENT", repo.root().join("agents/codex"))
        .env("CODEX_HOME", &codex_home)
        .output()
        .unwrap();
    let report = partial(&out);
    assert_eq!(lane(&report, "1")["state"], "blocked", "{report}");
    let reason = lane(&report, "1")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("Codex does not list the run's Stop hook"),
        "{reason}"
    );
    assert!(!repo.root().join("agents/codex-session-1").exists());
    assert!(
        !codex_home.join("config.toml").exists(),
        "nothing trusted that Codex does not run"
    );
}

#[test]
fn a_gemini_lane_whose_settings_gemini_would_skip_is_refused_naming_the_directory() {
    use std::os::unix::fs::PermissionsExt;
    let repo = Repo::new(ONE);
    // Gemini ignores settings below a directory its group or others may write to.
    let open = repo.root().join("open-data");
    std::fs::create_dir_all(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = repo
        .taskie(&["run", "--json", "--agent", "gemini"])
        .env("XDG_DATA_HOME", &open)
        .output()
        .unwrap();
    let report = partial(&out);
    let reason = lane(&report, "1")["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("Gemini CLI would skip the run's hook")
            && reason.contains(&open.display().to_string())
            && reason.contains("XDG_DATA_HOME"),
        "{reason}"
    );
    assert!(
        !repo.root().join("agents/start-1").exists(),
        "the agent never started"
    );
}
