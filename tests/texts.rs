//! Manners in a terminal and in a repository, and the texts people read that go with
//! them: runtime files stay out of git, status names each task.

use crate::support::{Fake, Project, due, git};
use serde_json::json;
use std::path::Path;
use std::process::Command;

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

fn repo() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A `cargo` and a `rustup` that only record that they ran (the fake rustup has no target
/// installed), first on PATH, so the scripts' setup and build steps are seen without
/// building anything or changing the machine's toolchain.
fn fake_toolchain(dir: &std::path::Path) -> std::ffi::OsString {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["cargo", "rustup"] {
        let script = bin.join(tool);
        std::fs::write(
            &script,
            format!("#!/bin/sh\necho \"{tool} $*\" >> \"$(dirname \"$0\")/calls\"\n"),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&path));
    std::env::join_paths(paths).unwrap()
}

#[test]
fn the_demo_says_it_is_building_before_the_silent_build() {
    let tmp = crate::support::tempdir();
    // The script takes its binaries from $CARGO_TARGET_DIR/debug after "building" them.
    let debug = tmp.path().join("target/debug");
    std::fs::create_dir_all(&debug).unwrap();
    let real = Path::new(env!("CARGO_BIN_EXE_taskie")).parent().unwrap();
    for b in ["taskie", "taskie-hook"] {
        std::os::unix::fs::symlink(real.join(b), debug.join(b)).unwrap();
    }
    let out = Command::new("bash")
        .arg(repo().join("examples/demo/run.sh"))
        .env("PATH", fake_toolchain(tmp.path()))
        .env("CARGO_TARGET_DIR", tmp.path().join("target"))
        .env_remove("TASKIE_BIN_DIR")
        .env_remove("TASKIE_PLAN")
        .env_remove("TASKIE_HOOK_SKIP")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let calls = std::fs::read_to_string(tmp.path().join("fake-bin/calls")).unwrap();
    assert!(calls.starts_with("cargo build"), "{calls}");
    assert!(
        !calls.contains("--quiet"),
        "cargo shows its progress during a first build: {calls}"
    );
    assert!(
        stderr.starts_with("demo: building taskie and taskie-hook")
            && stderr.contains("a first build compiles every dependency"),
        "the first thing said is what takes the time, and why: {stderr}"
    );
}

#[test]
fn pack_sh_says_what_it_does_on_stderr_and_prints_only_paths_on_stdout() {
    let tmp = crate::support::tempdir();
    let out = Command::new("bash")
        .arg(repo().join("dist/npm/pack.sh"))
        .args(["--target", "x86_64-unknown-linux-musl", "--skip-main"])
        .arg(tmp.path().join("out"))
        .env("PATH", fake_toolchain(tmp.path()))
        .env("CARGO_TARGET_DIR", tmp.path().join("target"))
        .env("npm_config_cache", tmp.path().join("npm-cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The fake rustup lacks the target and the fake cargo builds nothing, so packing stops
    // at the missing binary; what counts is that each slow step was announced before it
    // started, in the order the steps ran.
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some("pack.sh: adding the Rust target x86_64-unknown-linux-musl (rustup target add)..."),
        "{stderr}"
    );
    assert!(
        lines.get(1).is_some_and(|l| l
            .starts_with("pack.sh: building the release binaries for x86_64-unknown-linux-musl")),
        "{stderr}"
    );
    let calls = std::fs::read_to_string(tmp.path().join("fake-bin/calls")).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(
        calls[..2],
        [
            "rustup target list --installed",
            "rustup target add x86_64-unknown-linux-musl"
        ]
    );
    assert!(calls[2].starts_with("cargo build"), "{calls:?}");
    assert!(stderr.contains("is missing"), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "",
        "stdout is for paths only"
    );
}

#[test]
fn the_install_doc_installs_from_release_tarballs_named_as_pack_sh_names_them() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let pack = std::fs::read_to_string(repo().join("dist/npm/pack.sh")).unwrap();
    let doc = std::fs::read_to_string(repo().join("docs/install.md")).unwrap();
    let install =
        &doc[doc.find("### Without Rust").unwrap()..doc.find("## 2. The plugin").unwrap()];
    assert!(
        install.contains("npm install -g ./taskie-linux-x64-<version>.tgz ./taskie-<version>.tgz"),
        "{install}"
    );
    assert!(
        install.contains("--offline"),
        "the offline advice: {install}"
    );
    // Every platform the README names is one pack.sh packs, and the other way round.
    let suffixes: Vec<&str> = pack
        .lines()
        .filter(|l| {
            l.contains("-unknown-linux-")
                || l.contains("-apple-darwin")
                || l.contains("-pc-windows-")
        })
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(suffixes.len(), 5, "{suffixes:?}");
    for s in suffixes {
        assert!(
            install.contains(&format!("`{s}`")),
            "{s} missing from docs/install.md"
        );
    }
    // A tarball install leaves the platform package behind: the uninstall names it.
    let uninstall = &doc[doc.find("## Uninstall").unwrap()..];
    assert!(
        uninstall.contains("npm uninstall -g taskie taskie-linux-x64")
            && uninstall.contains("lib/node_modules/taskie-linux-x64"),
        "{uninstall}"
    );
    assert!(
        readme.contains("about 865 MB"),
        "the README warns of the end-to-end tests' first download"
    );
}

#[test]
fn the_help_texts_people_read_are_reviewed_as_snapshots() {
    let p = Project::new();
    for (bin, args, name) in [
        ("taskie-hook", &["--help"][..], "help_taskie_hook"),
        ("taskie", &["state", "set", "--help"][..], "help_state_set"),
        ("taskie", &["--help"][..], "help_taskie"),
    ] {
        let out = assert_cmd::Command::cargo_bin(bin)
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{bin} {args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !text.contains("SPEC"),
            "{bin} {args:?} cites the spec:\n{text}"
        );
        crate::snapshots::check(&p, name, &text);
    }
}
