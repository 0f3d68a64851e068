//! Issue 18's terminal and repository manners, and the texts people read that go with
//! them: runtime files stay out of git, status names each task.

use crate::support::{Fake, Project, due};
use serde_json::json;
use std::process::Command;

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_git_add_of_everything_leaves_taskies_runtime_files_out() {
    let p = Project::new()
        .plan("p")
        .state(due("plan-review"))
        .reviewer(&Fake::fail())
        .env("CLAUDE_CODE_SESSION_ID", "s1");
    // A command binds the session (sessions/), a stop takes the lock (locks/), runs a
    // review (logs/) and blocks a session (blocks/).
    p.run_taskie(&["status"]).ok();
    assert!(
        p.run_hook(json!({"hook_event_name": "Stop", "stop_hook_active": false,
                          "session_id": "s1"}))
            .is_block()
    );
    let taskie = p.root().join(".taskie");
    let made: Vec<&str> = ["logs", "locks", "sessions", "blocks"]
        .into_iter()
        .filter(|d| taskie.join(d).is_dir())
        .collect();
    assert_eq!(made, ["logs", "locks", "sessions", "blocks"]);

    git(&p.root(), &["init", "-q"]);
    git(&p.root(), &["add", "-A"]);
    let staged = git(&p.root(), &["diff", "--cached", "--name-only"]);
    for dir in made {
        assert!(
            !staged.contains(&format!(".taskie/{dir}/")),
            ".taskie/{dir} was staged:\n{staged}"
        );
    }
    assert!(staged.contains(".taskie/plans/p/plan.md"), "{staged}");
    assert!(
        staged.contains(".taskie/plans/p/plan-review-1.md"),
        "{staged}"
    );
}

#[test]
fn a_runtime_directory_the_user_made_is_left_as_it_is() {
    let p = Project::new().plan("p").state(due("plan-review"));
    std::fs::create_dir_all(p.root().join(".taskie/locks")).unwrap();
    p.run_taskie(&["state", "set", "tdd=true"]).ok();
    assert!(!p.root().join(".taskie/locks/.gitignore").exists());
}

#[test]
fn status_names_each_task_by_its_title_and_json_carries_it() {
    let p = Project::new().plan("p");
    std::fs::write(
        p.plan_dir().join("tasks.md"),
        "| Id | Status | Task |\n|----|--------|------|\n\
         | 1 | done | Parse the task table |\n\
         | 2 | in progress | Show each task's title in `taskie status`, however long the title is, cut to fit |\n\
         | 10 | pending | |\n",
    )
    .unwrap();
    for n in [1, 2, 10] {
        std::fs::write(p.plan_dir().join(format!("task-{n}.md")), "# Task\n").unwrap();
    }
    p.run_taskie(&["init", "p"]).ok();
    p.run_taskie(&["state", "set", "current_task=2"]).ok();
    let text = p.run_taskie(&["status"]).ok().to_owned();
    assert!(
        text.lines().all(|l| l.chars().count() <= 80),
        "every line fits 80 columns:\n{text}"
    );
    crate::snapshots::check(&p, "status_task_titles", &text);
    let v = p.taskie_json(&["status", "--json"]);
    let titles: Vec<&str> = v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles[0], "Parse the task table");
    assert_eq!(titles[2], "");
}
