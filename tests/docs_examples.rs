//! docs/commands.md shows real output: each ```console block there is preceded by
//! `<!-- example: NAME -->`, naming a scenario below; the test builds that project, runs
//! the block's `$ taskie …` lines in order and compares what they print (stdout, then
//! stderr, then `[exit status N]` when it is not 0) with the block. Run with
//! `TASKIE_BLESS_DOCS=1` to write the actual output into the document instead, then
//! review the diff.

use crate::support::{Fake, Project, due};
use serde_json::json;

const DOC: &str = "docs/commands.md";
const PLAN: &str = "add-search";

fn doc_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(DOC)
}

fn project() -> Project {
    Project::new().plan(PLAN)
}

fn tasks(p: Project) -> Project {
    tasks_with(p, "pending")
}

/// The example plan with every task at `status`.
fn tasks_with(p: Project, status: &str) -> Project {
    std::fs::write(
        p.plan_dir().join("tasks.md"),
        format!(
            "| Id | Status | Title |\n|----|--------|-------|\n\
             | 1 | {status} | Parse the query |\n\
             | 2 | {status} | Rank the results |\n\
             | 3 | {status} | Show the results |\n"
        ),
    )
    .unwrap();
    for n in 1..=3 {
        std::fs::write(p.plan_dir().join(format!("task-{n}.md")), "# Task\n").unwrap();
    }
    p
}

fn write(p: &Project, name: &str, text: &str) {
    std::fs::write(p.plan_dir().join(name), text).unwrap();
}

/// Plan review #1 failed: its post-review is owed.
fn post_review_owed() -> Project {
    let p = project().state(due("plan-review")).reviewer(&Fake::fail());
    assert!(p.stop().is_block());
    p
}

/// The plan review's three reviews ran (FAIL, PASS, PASS): the cycle passed.
fn plan_review_passed() -> Project {
    let p = post_review_owed();
    write(&p, "plan-post-review-1.md", "Fixed.\n");
    p.set_reviewer(&Fake::pass());
    assert!(p.stop().is_block());
    write(&p, "plan-post-review-2.md", "Nothing to fix.\n");
    p.stop();
    p
}

/// Task 1's code review ran the one review max_reviews allows, failed, and was addressed.
fn code_review_exhausted() -> Project {
    let p = tasks(project())
        .state(
            json!({"phase": "complete-task", "next_phase": "code-review",
                      "phase_iteration": 0, "max_reviews": 1, "current_task": 1,
                      "review_model": "opus", "consecutive_clean": 0, "tdd": false}),
        )
        .reviewer(&Fake::fail());
    assert!(p.stop().is_block());
    write(&p, "task-1-code-post-review-1.md", "Fixed.\n");
    p
}

fn scenario(name: &str) -> Project {
    match name {
        "post-review-owed" => post_review_owed(),
        "post-review-written" => {
            let p = post_review_owed();
            write(&p, "plan-post-review-1.md", "Fixed.\n");
            p
        }
        "post-review-recorded" => {
            let p = post_review_owed();
            write(&p, "plan-post-review-1.md", "Fixed.\n");
            p.run_taskie(&["mark", "post-plan-review"]).ok();
            p
        }
        "complete-task-due" => tasks(project()).state(json!({"phase": "tasks-review",
            "next_phase": "complete-task", "phase_iteration": 3, "review_model": "sonnet",
            "consecutive_clean": 2})),
        "code-review-exhausted" => code_review_exhausted(),
        "code-review-hard-stopped" => {
            let p = code_review_exhausted();
            p.stop();
            p
        }
        "advanced" => {
            let p = code_review_exhausted();
            p.stop();
            p.run_taskie(&["advance"]).ok();
            p
        }
        "all-code-review-passed" => {
            tasks_with(project(), "done").state(json!({"phase": "all-code-review",
            "next_phase": "complete", "phase_iteration": 3, "review_model": "sonnet",
            "consecutive_clean": 2}))
        }
        "plan-review-passed" => plan_review_passed(),
        "stray-file" => project().state(due("plan-review")).file("notes.md", "x\n"),
        "plan-review-due" => project().state(due("plan-review")),
        "no-state" => project(),
        "create-tasks-due" => tasks(plan_review_passed()),
        "complete" => tasks_with(project(), "done")
            .state(json!({"phase": "complete", "next_phase": null,
            "phase_iteration": 1, "max_reviews": 3, "review_model": "sonnet"})),
        other => panic!("{DOC}: no scenario named {other:?}"),
    }
}

/// A block: its scenario, and the line range of its body in the document.
struct Block {
    scenario: String,
    body: std::ops::Range<usize>,
}

fn blocks(lines: &[&str]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i] == "```console" {
            let scenario = lines[..i]
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty())
                .and_then(|l| l.strip_prefix("<!-- example: "))
                .and_then(|l| l.strip_suffix(" -->"))
                .unwrap_or_else(|| {
                    panic!(
                        "{DOC}:{}: a console block without <!-- example: NAME -->",
                        i + 1
                    )
                })
                .to_string();
            let end = (i + 1..lines.len())
                .find(|j| lines[*j] == "```")
                .expect("the block ends");
            out.push(Block {
                scenario,
                body: i + 1..end,
            });
            i = end;
        }
        i += 1;
    }
    out
}

/// What the commands of a block print, in the block's format.
fn actual(p: &Project, commands: &[String]) -> String {
    let mut parts = Vec::new();
    for c in commands {
        let args: Vec<&str> = c.strip_prefix("$ taskie ").unwrap().split(' ').collect();
        let run = p.run_taskie(&args);
        let mut text = format!("{c}\n{}{}", run.stdout, run.stderr);
        if run.code != Some(0) {
            text.push_str(&format!("[exit status {}]\n", run.code.unwrap()));
        }
        parts.push(text.trim_end().to_string());
    }
    let text = parts.join("\n\n");
    text.replace(&p.root().display().to_string(), "/home/you/shop")
}

/// Timings depend on the machine: any duration matches any other.
fn comparable(text: &str) -> String {
    let d = regex::Regex::new(r"\b\d+m \d\ds\b").unwrap();
    let secs = regex::Regex::new(r#""review_seconds": [0-9.e-]+"#).unwrap();
    let text = d.replace_all(text, "[DURATION]");
    secs.replace_all(&text, "\"review_seconds\": [SECONDS]")
        .into_owned()
}

#[test]
fn every_console_example_in_the_commands_doc_is_what_the_commands_print() {
    let doc = std::fs::read_to_string(doc_path()).unwrap();
    let lines: Vec<&str> = doc.lines().collect();
    let bless = std::env::var_os("TASKIE_BLESS_DOCS").is_some();
    let mut new_lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut wrong = Vec::new();
    let found = blocks(&lines);
    assert!(found.len() >= 10, "{} console blocks", found.len());
    // Replaced from the last block up, so earlier line numbers stay valid.
    for b in found.iter().rev() {
        let body = lines[b.body.clone()].join("\n");
        let commands: Vec<String> = lines[b.body.clone()]
            .iter()
            .filter(|l| l.starts_with("$ taskie "))
            .map(|l| l.to_string())
            .collect();
        assert!(!commands.is_empty(), "{DOC}:{}: no command", b.body.start);
        let p = scenario(&b.scenario);
        let got = actual(&p, &commands);
        if comparable(&got) != comparable(&body) {
            wrong.push(format!(
                "{DOC}:{} ({}):\n--- document\n{body}\n--- printed\n{got}",
                b.body.start, b.scenario
            ));
            new_lines.splice(b.body.clone(), got.lines().map(str::to_string));
        }
    }
    if bless && !wrong.is_empty() {
        std::fs::write(doc_path(), new_lines.join("\n") + "\n").unwrap();
        return;
    }
    assert!(
        wrong.is_empty(),
        "examples that differ from real output (TASKIE_BLESS_DOCS=1 rewrites them):\n{}",
        wrong.join("\n\n")
    );
}

/// Every `src/…`, `tests/…`, `docs/…`, `examples/…` or `dist/…` file named in the docs,
/// the README or a source comment exists, so a moved file cannot leave a pointer to
/// nowhere. `a/{b,c}.rs` names both files.
#[test]
fn every_file_the_docs_and_comments_name_exists() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts: Vec<(std::path::PathBuf, String)> = Vec::new();
    let mut dirs = vec![root.join("docs"), root.join("src"), root.join("tests")];
    texts.push((
        root.join("README.md"),
        std::fs::read_to_string(root.join("README.md")).unwrap(),
    ));
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                if !path.ends_with("tests/snapshots") && !path.ends_with("tests/corpus") {
                    dirs.push(path);
                }
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            match path.extension().and_then(|x| x.to_str()) {
                Some("md") => texts.push((path, text)),
                // In code, only comments name files for people.
                Some("rs") => {
                    let comments: Vec<&str> = text
                        .lines()
                        .filter_map(|l| l.split_once("//").map(|(_, c)| c))
                        .collect();
                    texts.push((path, comments.join("\n")));
                }
                _ => {}
            }
        }
    }
    let named =
        regex::Regex::new(r"\b(?:src|tests|docs|examples|dist)/[A-Za-z0-9_./-]*(?:\{[a-z_,]+\})?[A-Za-z0-9_./-]*\.(?:rs|md|sh|js)\b")
            .unwrap();
    let braces = regex::Regex::new(r"\{([a-z_,]+)\}").unwrap();
    let mut missing = Vec::new();
    for (file, text) in &texts {
        for m in named.find_iter(text) {
            let name = m.as_str();
            let names: Vec<String> = match braces.captures(name) {
                Some(c) => c[1]
                    .split(',')
                    .map(|part| name.replace(&c[0], part))
                    .collect(),
                None => vec![name.to_string()],
            };
            for n in names {
                if !root.join(&n).exists() {
                    missing.push(format!(
                        "{} names {n}",
                        file.strip_prefix(root).unwrap().display()
                    ));
                }
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "files named but missing:\n{}",
        missing.join("\n")
    );
}

/// The variables `taskie-hook --help` lists (generated from the one table in the code)
/// each have a row in docs/configuration.md, with the same default where the help names
/// one, so the page a user reads cannot drift from what the binary reads.
#[test]
fn every_variable_the_hook_reads_has_its_row_and_default_in_the_configuration_doc() {
    let help = std::process::Command::new(assert_cmd::cargo::cargo_bin("taskie-hook"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let section = help
        .split_once("Environment:\n")
        .expect("an Environment section")
        .1;
    // Entries start at two spaces and a name; wrapped meanings continue below them.
    let mut vars: Vec<(String, String)> = Vec::new();
    for line in section.lines() {
        let starts_entry = line.starts_with("  ") && !line.starts_with("   ");
        match (starts_entry, vars.last_mut()) {
            (true, _) => {
                let (name, meaning) = line.trim().split_once(' ').unwrap();
                vars.push((name.to_string(), meaning.trim().to_string()));
            }
            (false, Some((_, meaning))) => {
                meaning.push(' ');
                meaning.push_str(line.trim());
            }
            (false, None) => {}
        }
    }
    assert!(vars.len() >= 10, "{section}");
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md"),
    )
    .unwrap();
    for (name, meaning) in vars {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("docs/configuration.md has no row for {name}"));
        let default = meaning
            .strip_suffix(')')
            .and_then(|m| m.rsplit_once("(default: "))
            .map(|(_, d)| d)
            .filter(|d| !d.contains(' '));
        if let Some(d) = default {
            let column = row.split('|').nth(2).unwrap().trim();
            assert_eq!(column, format!("`{d}`"), "{name}'s default: {row}");
        }
    }
}
