//! The cost of checking that a reviewer changed no file of the work (SPEC §8) on a
//! repository of 20,000 files: `git status` (files, HEAD and index) and the fingerprints
//! before a review, the same after it, and the comparison (docs/performance.md). Its own harness:
//! `cargo bench --bench worktree`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use taskie::reviewer::worktree_check;
use taskie::store::project::Project;

const FILES: usize = 20_000;
const ROUNDS: usize = 15;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=b", "-c", "user.email=b@example.com"])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git runs")
        .success();
    assert!(ok, "git {args:?} failed");
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs bench targets without `--bench`: nothing to do.
        println!("worktree bench: skipped (run it with `cargo bench --bench worktree`)");
        return;
    }
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let root = tmp.path();
    // 20,000 small source files in 200 directories, committed.
    for d in 0..FILES / 100 {
        let dir = root.join(format!("src/m{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(
                dir.join(format!("f{f:02}.rs")),
                format!("pub fn f{d}_{f}() -> u32 {{ {f} }}\n"),
            )
            .unwrap();
        }
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "20,000 files"]);
    // The agent's uncommitted work: 20 changed files, 20 untracked, and an ignored build.
    for i in 0..20 {
        std::fs::write(root.join(format!("src/m{i:03}/f00.rs")), "changed\n").unwrap();
        std::fs::write(root.join(format!("new{i}.rs")), "new\n").unwrap();
    }
    // Half of the changed files staged: the index entries the check compares too.
    let staged: Vec<String> = (0..10).map(|i| format!("src/m{i:03}/f00.rs")).collect();
    let mut add = vec!["add", "--"];
    add.extend(staged.iter().map(String::as_str));
    git(root, &add);
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("target/big.bin"), vec![0u8; 1 << 20]).unwrap();
    let project = Project::new(root);
    std::fs::create_dir_all(project.logs()).unwrap();
    let diff = project.logs().join("bench.diff");
    let quiet = rounds(&project, &diff, 0, |_| {});
    // A reviewer that changed 10 clean tracked files and left 10 outputs: the same check,
    // plus git's diff of the tracked files and a line diff of the others, saved.
    let changed = rounds(&project, &diff, 20, |undo| {
        for i in 0..10 {
            let f = root.join(format!("src/m{:03}/f01.rs", 100 + i));
            if undo {
                git(root, &["checkout", "-q", "--", f.to_str().unwrap()]);
                std::fs::remove_file(root.join(format!("target-out{i}.txt"))).unwrap();
            } else {
                std::fs::write(&f, "tampered\n").unwrap();
                std::fs::write(root.join(format!("target-out{i}.txt")), "out\n").unwrap();
            }
        }
    });
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    for (what, times) in [("nothing changed", quiet), ("20 files changed", changed)] {
        println!(
            "worktree check (note before + compare after) on {FILES} tracked files, {ROUNDS} rounds, \
             {what}: median {:.1} ms, min {:.1} ms, max {:.1} ms",
            ms(times[ROUNDS / 2]),
            ms(times[0]),
            ms(times[ROUNDS - 1])
        );
    }
}

/// Times [`ROUNDS`] checks, sorted; `change(false)` runs between the note and the
/// comparison (the reviewer's doing, not timed) and changes `files`, `change(true)` undoes
/// it afterwards.
fn rounds(project: &Project, diff: &Path, files: usize, change: impl Fn(bool)) -> Vec<Duration> {
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let before = worktree_check::note(project, "p", "plan-review-1.md");
        let noted = t.elapsed();
        change(false);
        let t = Instant::now();
        let report = worktree_check::compare(project, before, diff);
        times.push(noted + t.elapsed());
        change(true);
        assert!(
            report.skipped.is_none() && report.changed.len() == files,
            "{report:?}"
        );
    }
    times.sort();
    times
}
