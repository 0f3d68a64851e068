//! The layout rule of docs/architecture.md, checked on the source: model ← store ←
//! {hook, commands}; reviewer only from hook; commands never import the hook, the
//! reviewer or each other.

use std::path::{Path, PathBuf};

/// The layer a source file belongs to, and for commands the command's name.
fn layer_of(path: &Path) -> (String, Option<String>) {
    let rel = path.strip_prefix(src()).unwrap();
    let mut parts = rel.iter().map(|p| p.to_string_lossy().into_owned());
    let first = parts.next().unwrap();
    match parts.next() {
        Some(file) => {
            let name = file.trim_end_matches(".rs").to_string();
            (first, (name != "mod").then_some(name))
        }
        None => (first.trim_end_matches(".rs").to_string(), None),
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `crate::a::b` path in the file, as (a, b).
fn crate_paths(text: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        let word = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        let top = word(rest);
        let sub = rest[top.len()..]
            .strip_prefix("::")
            .map(word)
            .filter(|w| !w.is_empty());
        found.push((top, sub));
    }
    found
}

#[test]
fn the_dependency_rule_holds() {
    let allowed = |from: &str, to: &str| -> bool {
        match from {
            "model" => to == "model",
            "store" => matches!(to, "model" | "store" | "clock" | "env"),
            "reviewer" => matches!(to, "model" | "store" | "reviewer" | "clock" | "env"),
            "hook" => matches!(
                to,
                "model" | "store" | "hook" | "reviewer" | "clock" | "env"
            ),
            "commands" => matches!(
                to,
                "model" | "store" | "commands" | "error" | "paint" | "clock" | "env"
            ),
            // The environment table is a leaf.
            "env" => to == "env",
            _ => true,
        }
    };
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for file in &files {
        let (layer, command) = layer_of(file);
        let text = std::fs::read_to_string(file).unwrap();
        for (to, sub) in crate_paths(&text) {
            if !allowed(&layer, &to) {
                wrong.push(format!("{} imports crate::{to}", file.display()));
            }
            // A command may use what commands/mod.rs shares, and the commands' settings
            // (commands/settings.rs, resolved where a command is entered), never another
            // command.
            if layer == "commands"
                && to == "commands"
                && let (Some(this), Some(other)) = (&command, &sub)
                && this != other
                && other != "settings"
                && files
                    .iter()
                    .any(|f| f.ends_with(format!("commands/{other}.rs")))
            {
                wrong.push(format!(
                    "{} imports the command crate::commands::{other}",
                    file.display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against docs/architecture.md:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_source_tree_has_the_documented_shape() {
    let top: Vec<String> = std::fs::read_dir(src())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".rs"))
        .collect();
    assert!(
        top.len() <= 8,
        "more than 8 files directly in src/: {top:?}"
    );
    for dir in ["model", "store", "hook", "reviewer", "commands"] {
        assert!(src().join(dir).join("mod.rs").is_file(), "src/{dir}/mod.rs");
    }
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let suffixed: Vec<_> = files
        .iter()
        .filter(|f| f.to_string_lossy().ends_with("_cmd.rs"))
        .collect();
    assert!(suffixed.is_empty(), "{suffixed:?}");
}

#[test]
fn unsafe_blocks_are_few_and_each_says_why() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut count = 0;
    // Windows' system calls: std has no safe wrapper for a Job Object or a byte-range
    // lock at an offset, and every windows-sys function is unsafe. They live in files
    // named windows.rs and have a budget of their own.
    let mut windows = 0;
    let mut unexplained = Vec::new();
    for file in &files {
        let on_windows = file.file_name().is_some_and(|n| n == "windows.rs");
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("unsafe {") || code.trim_end().ends_with("unsafe") {
                if on_windows {
                    windows += 1;
                } else {
                    count += 1;
                }
                let before = &lines[i.saturating_sub(6)..i];
                if !before.iter().any(|l| l.contains("// SAFETY:")) {
                    unexplained.push(format!("{}:{}", file.display(), i + 1));
                }
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "unsafe without a SAFETY line: {unexplained:?}"
    );
    assert!(count <= 2, "{count} unsafe blocks; the budget is 2");
    assert!(
        windows <= 16,
        "{windows} unsafe blocks for Windows; the budget is 16"
    );
}

/// The file a `crate::a::b::…` path lands in: the longest prefix of its segments that is a
/// file, `a/b.rs` or `a/b/mod.rs` (then `a.rs` or `a/mod.rs`, and so on).
fn file_of(segments: &[String]) -> Option<String> {
    (1..=segments.len()).rev().find_map(|n| {
        let dir = segments[..n].join("/");
        [format!("{dir}.rs"), format!("{dir}/mod.rs")]
            .into_iter()
            .find(|f| src().join(f).is_file())
    })
}

/// Every file a source file imports from, through `crate::a::b`, `crate::a::{b, c::d}`.
fn imported_files(text: &str) -> Vec<String> {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    // The `::`-separated words at the start of `s`, and what follows them.
    let path = |mut s: &str| -> (Vec<String>, String) {
        let mut out = Vec::new();
        loop {
            let w = word(s);
            if w.is_empty() {
                break;
            }
            s = &s[w.len()..];
            out.push(w);
            match s.strip_prefix("::") {
                Some(rest) => s = rest,
                None => break,
            }
        }
        (out, s.to_string())
    };
    let mut out = Vec::new();
    for (i, _) in text.match_indices("crate::") {
        let (prefix, rest) = path(&text[i + "crate::".len()..]);
        let mut targets = vec![prefix.clone()];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let (more, _) = path(item.trim());
                targets.push(prefix.iter().cloned().chain(more).collect());
            }
        }
        for t in targets {
            if let Some(file) = file_of(&t)
                && !out.contains(&file)
            {
                out.push(file);
            }
        }
    }
    out
}

#[test]
fn no_source_file_imports_itself_through_other_files() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut edges: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for file in &files {
        let rel = file
            .strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(file).unwrap();
        let targets = imported_files(&text)
            .into_iter()
            .filter(|t| *t != rel)
            .collect();
        edges.insert(rel, targets);
    }
    // Depth-first search; a back edge closes a cycle, reported with its path.
    fn visit(
        node: &str,
        edges: &std::collections::BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
        cycles: &mut Vec<String>,
    ) {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            cycles.push(cycle.join(" → "));
            return;
        }
        if done.contains(node) {
            return;
        }
        path.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            visit(next, edges, path, done, cycles);
        }
        path.pop();
        done.insert(node.to_string());
    }
    let mut done = Default::default();
    let mut cycles = Vec::new();
    for node in edges.keys() {
        visit(node, &edges, &mut Vec::new(), &mut done, &mut cycles);
    }
    assert!(
        cycles.is_empty(),
        "import cycles between files (docs/architecture.md: none allowed):\n{}",
        cycles.join("\n")
    );
}

/// Every source path the docs, the README and the code's comments name (under `src/`, a
/// layer folder such as `model/`, or `tests/`) exists, so a moved file cannot leave a
/// pointer to nowhere.
#[test]
fn every_source_path_named_in_docs_and_comments_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts: Vec<PathBuf> = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    for dir in ["docs"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                texts.push(path);
            }
        }
    }
    rust_files(&src(), &mut texts);
    rust_files(&root.join("tests"), &mut texts);
    let layers = [
        "model/",
        "store/",
        "hook/",
        "reviewer/",
        "commands/",
        "bin/",
        "support/",
    ];
    let mut missing = Vec::new();
    for file in &texts {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for word in line
                .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.' | '-')))
            {
                let word = word.trim_end_matches('.');
                let named = word.ends_with(".rs")
                    && (word.starts_with("src/")
                        || word.starts_with("tests/")
                        || layers.iter().any(|l| word.starts_with(l)));
                if !named {
                    continue;
                }
                let exists = [
                    root.join(word),
                    src().join(word),
                    root.join("tests").join(word),
                ]
                .iter()
                .any(|p| p.is_file());
                if !exists {
                    missing.push(format!(
                        "{}:{}: {word}",
                        file.strip_prefix(root).unwrap().display(),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths that do not exist:\n{}",
        missing.join("\n")
    );
}

/// A file's code without its test module (`#[cfg(test)]`, then any other attributes, then
/// `mod`), which sets up helper processes through the environment as it likes; other
/// `#[cfg(test)]` items stay, as they are code of the file.
fn without_test_module(text: &str) -> &str {
    let lines: Vec<&str> = text.lines().collect();
    let mut offset = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.trim() == "#[cfg(test)]"
            && lines[i + 1..]
                .iter()
                .find(|l| !l.trim().starts_with("#["))
                .is_some_and(|l| l.trim_start().starts_with("mod ") || l.contains(" mod "))
        {
            return &text[..offset];
        }
        offset += line.len() + 1;
    }
    text
}

/// What in `code` reads an environment variable: a call of `std::env::var*`, or of a
/// reader of the table (`Var::…​.env_value()`, `env_value_os`, `env_raw`,
/// `env_value_or_default`).
fn environment_reads(code: &str) -> Vec<&'static str> {
    [
        "env::var(",
        "env::var_os(",
        "env::vars(",
        "env::vars_os(",
        ".env_value(",
        ".env_value_os(",
        ".env_raw(",
        ".env_value_or_default(",
    ]
    .into_iter()
    .filter(|call| code.contains(call))
    .collect()
}

#[test]
fn the_environment_read_check_finds_every_reader_but_not_a_name_or_a_test_module() {
    for read in [
        "let p = Var::Plan.env_value();",
        "let p = crate::env::Var::Home\n    .env_value_os()",
        "[Var::ClaudeCode].into_iter().any(|v| v.env_raw().is_some())",
        "std::env::var_os(\"PATH\")",
        "#[cfg(test)]\nuse x::Y;\nfn f() { Var::Push.env_value(); }",
    ] {
        assert!(
            !environment_reads(without_test_module(read)).is_empty(),
            "{read}"
        );
    }
    for not_a_read in [
        "println!(\"{}=1\", Var::Push.name());",
        "let d = Var::BlockCap.default_number();",
        "fn f() {}\n#[cfg(test)]\n#[cfg(unix)]\nmod tests {\n    std::env::var_os(\"X\");\n}",
    ] {
        assert!(
            environment_reads(without_test_module(not_a_read)).is_empty(),
            "{not_a_read}"
        );
    }
}

/// Settings are resolved once where a process is entered and passed down as typed values
/// (docs/architecture.md, "The dependency rule"): only these files read the environment,
/// and only `env.rs`, the table of variables, calls `std::env::var`. Every other file gets
/// what it needs from the settings it is handed.
#[test]
fn the_environment_is_read_only_where_a_process_is_entered() {
    // Each file that may read, and why.
    let readers = [
        (
            "env.rs",
            "the table and its readers; the test-only switches, read once per process",
        ),
        (
            "cli.rs",
            "TASKIE_PLAN for a subcommand taken without clap, as clap would",
        ),
        (
            "hook/settings.rs",
            "taskie-hook, taskie hook and --dry-run: the hook's settings",
        ),
        (
            "commands/settings.rs",
            "every taskie subcommand, plans, push and taskie run",
        ),
        (
            "reviewer/process/windows.rs",
            "the PATH a spawned child inherits, where the spawn looks its program up",
        ),
    ];
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut outside = Vec::new();
    let mut std_readers = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(src())
            .unwrap()
            .display()
            .to_string()
            .replace('\\', "/");
        let text = std::fs::read_to_string(file).unwrap();
        let reads = environment_reads(without_test_module(&text));
        if reads.iter().any(|r| r.starts_with("env::")) {
            std_readers.push(rel.clone());
        }
        if !reads.is_empty() && !readers.iter().any(|(f, _)| *f == rel) {
            outside.push(format!("{rel}: {reads:?}"));
        }
    }
    assert_eq!(std_readers, ["env.rs"], "files that call std::env::var*");
    assert!(
        outside.is_empty(),
        "the environment is read outside the entry points (resolve it in the entry's \
         settings and pass it down):\n{}",
        outside.join("\n")
    );
}

/// Where the code of `src/` (outside the folders `skip`, comments and test modules left
/// out) contains one of `forbidden`: `file:line text` for each.
fn code_lines_containing(forbidden: &[&str], skip: &[&str]) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut found = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(src()).unwrap();
        if skip.iter().any(|s| rel.starts_with(s)) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            if let Some(f) = forbidden.iter().find(|f| line.contains(*f)) {
                found.push(format!("{}:{} {f}", rel.display(), n + 1));
            }
        }
    }
    found
}

/// A plan's files are found through the plan handle (`store::project::PlanRef`) and the
/// names in `model/plan_file.rs`: outside `store/` and `model/` no code joins "plans", a
/// ledger's or the state's file name, or builds `.taskie/plans/<id>` in a format string.
#[test]
fn plan_paths_are_joined_only_in_store_and_model() {
    let forbidden = [
        "join(\"plans\")",
        "\"state.json\"",
        "\"findings.json\"",
        "\"spend.json\"",
        "\"events.jsonl\"",
        ".taskie/plans/{",
        ".taskie/plans\")",
        "join(STATE_FILE",
        "join(crate::model::plan_file::STATE_FILE",
        "-diagnostics.json\"",
    ];
    let found = code_lines_containing(&forbidden, &["store", "model"]);
    assert!(
        found.is_empty(),
        "plan paths built by hand (use store::project::PlanRef): {found:#?}"
    );
}

/// The state machine has one home (docs/architecture.md, `model/machine.rs`): outside
/// `model/` no code moves a plan's phase, resets a cycle or sets a cycle's counters by
/// hand. The hook and the commands decide whether a transition happens and call its
/// named function; `taskie state set` goes through the field table of `model/state`.
#[test]
fn states_change_only_through_the_model() {
    let forbidden = [
        ".set_phase(",
        ".schedule(",
        "cycle::reset(",
        "apply_advance(",
        "advance_by_decision(",
        ".next_phase = ",
        ".phase_iteration = ",
        ".consecutive_clean = ",
        ".review_failures = ",
        ".review_model = ",
        ".current_task = ",
        ".max_reviews = ",
        ".paused_by = ",
    ];
    let found = code_lines_containing(&forbidden, &["model"]);
    assert!(
        found.is_empty(),
        "state transitions outside the model (add a named function to model/machine.rs): {found:#?}"
    );
}

/// The texts Taskie puts into the agent's conversation (every one begins `Taskie:`) are
/// written in three files, so their voice and their commands are reviewed together:
/// `hook/message.rs` (every answer of the hook), `store/diagnostics.rs` (the hard stop's
/// summary, which the hook answers with and `taskie status` reads back) and
/// `store/notify.rs` (the one-line summaries of notifications). docs/architecture.md,
/// "Where the texts live", says where the other texts people read are.
#[test]
fn the_texts_in_the_agents_conversation_have_three_homes() {
    const HOMES: [&str; 3] = ["hook/message.rs", "store/diagnostics.rs", "store/notify.rs"];
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut elsewhere = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if HOMES.contains(&rel.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            if line.contains("\"Taskie:") && !line.trim_start().starts_with("//") {
                elsewhere.push(format!("{rel}:{}", n + 1));
            }
        }
    }
    assert!(
        elsewhere.is_empty(),
        "texts for the agent's conversation outside {HOMES:?}: {elsewhere:?}"
    );
}

/// The entry layer: the two binaries call `cli` and nothing else; `cli` parses the command
/// line and calls the hook or a command, and of the lower layers' inner parts it uses only
/// the roles the binary is re-run in (`reviewer::guardian`, `store::notify`); nothing below
/// it imports it.
#[test]
fn cli_is_the_only_entry_and_reaches_below_hook_and_commands_only_for_roles() {
    let mut wrong = Vec::new();
    for bin in ["main.rs", "bin/taskie-hook.rs"] {
        let text = std::fs::read_to_string(src().join(bin)).unwrap();
        for (i, _) in text.match_indices("taskie::") {
            if !text[i..].starts_with("taskie::cli::") {
                wrong.push(format!(
                    "src/{bin} uses {}",
                    text[i..].split(['(', ';', ' ']).next().unwrap()
                ));
            }
        }
        if text.contains("crate::") || text.contains("mod ") {
            wrong.push(format!("src/{bin} has code of its own beyond calling cli"));
        }
    }
    let cli = std::fs::read_to_string(src().join("cli.rs")).unwrap();
    for (top, sub) in crate_paths(&cli) {
        let role = matches!(
            (top.as_str(), sub.as_deref()),
            ("reviewer", Some("guardian")) | ("store", Some("notify"))
        );
        if matches!(top.as_str(), "reviewer" | "store") && !role {
            wrong.push(format!(
                "src/cli.rs imports crate::{top}::{}: go through hook or commands",
                sub.unwrap_or_default()
            ));
        }
    }
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        if crate_paths(&text).iter().any(|(top, _)| top == "cli") && !file.ends_with("cli.rs") {
            wrong.push(format!("{} imports crate::cli", file.display()));
        }
    }
    assert!(
        wrong.is_empty(),
        "the entry layer of docs/architecture.md:\n{}",
        wrong.join("\n")
    );
}

/// docs/architecture.md describes the tree as it is: every source file has its row
/// (`commands/<subcommand>.rs` stands for the subcommands).
#[test]
fn every_source_file_has_its_place_in_architecture_md() {
    let doc = std::fs::read_to_string(src().join("../docs/architecture.md")).unwrap();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let missing: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(src()).unwrap().display().to_string())
        .filter(|rel| {
            let named = doc.contains(&format!("`{rel}`")) || doc.contains(&format!("{rel},"));
            let subcommand = rel.starts_with("commands/") && rel != "commands/mod.rs";
            let binary = rel == "main.rs" || rel == "lib.rs" || rel.starts_with("bin/");
            !(named || subcommand || binary || doc.contains(&format!("`{rel}`")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "not in docs/architecture.md: {missing:?}"
    );
}

/// The test support hides no dead code: an unused helper is deleted, not allowed.
#[test]
fn the_test_support_allows_no_dead_code() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        &mut files,
    );
    let allowing: Vec<String> = files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f).unwrap().lines().any(|l| {
                l.trim_start().starts_with("#![allow(dead_code)]")
                    || l.trim_start().starts_with("#[allow(dead_code)]")
            })
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(allowing.is_empty(), "{allowing:?}");
}

/// The slow tier (tests/e2e/main.rs) runs every module of the fast tier again at full
/// strength, so a module added to one crate must be in the other.
#[test]
fn fast_tier_modules_are_all_in_the_slow_tier() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let modules = |file: &str| -> Vec<String> {
        std::fs::read_to_string(root.join(file))
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
            .filter(|m| *m != "support")
            .map(str::to_owned)
            .collect()
    };
    let slow = modules("e2e/main.rs");
    let missing: Vec<String> = modules("main.rs")
        .into_iter()
        .filter(|m| !slow.contains(m))
        .collect();
    assert!(missing.is_empty(), "add to tests/e2e/main.rs: {missing:?}");
}

/// Text files of the tree a cloner reads: `dir` walked (`target` and hidden directories
/// left out), files that are not UTF-8 text skipped.
fn text_files(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') && name != "node_modules" {
                text_files(&path, out);
            }
        } else if let Ok(text) = std::fs::read_to_string(&path)
            && !text.contains('\0')
        {
            out.push((path, text));
        }
    }
}

/// Where a line points at something only the project's maintainers have: the team's
/// shared notes (a path into their shared directory) or their issue tracker (the word
/// issue or issues followed by a number, a number in brackets after a hash sign, an issue
/// or pull request address). `None` when the line has none. A review's number
/// (`review #2`) is not such a reference. The examples below are spelled in pieces so that
/// the test does not find itself.
fn unfollowable_reference(line: &str) -> Option<&'static str> {
    let lower = line.to_ascii_lowercase();
    // Spelled in two pieces so that this test does not find itself.
    let shared = ["shared", "/"].concat();
    if lower.contains(&shared) {
        return Some("a path into the maintainers' shared notes");
    }
    let number_after = |at: usize| {
        lower[at..]
            .trim_start_matches('#')
            .starts_with(|c: char| c.is_ascii_digit())
    };
    for word in ["issue ", "issues "] {
        for (i, _) in lower.match_indices(word) {
            let starts_word = lower[..i]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric());
            if starts_word && number_after(i + word.len()) {
                return Some("an issue number");
            }
        }
    }
    for url in ["/issues/", "/pull/"] {
        for (i, _) in lower.match_indices(url) {
            if number_after(i + url.len()) {
                return Some("an issue or pull request address");
            }
        }
    }
    for (i, _) in lower.match_indices("(#") {
        let rest = &lower[i + 2..];
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(')') {
            return Some("an issue number");
        }
    }
    None
}

#[test]
fn the_reference_check_finds_issue_numbers_and_shared_paths_but_not_review_numbers() {
    for line in [
        ["see ", "shared", "/clients.md"].concat(),
        ["as ", "issue", " 20 asks"].concat(),
        ["Issue", " #7: the cap"].concat(),
        ["(issues", " 3 and 4)"].concat(),
        ["fixed in (#", "31)"].concat(),
        ["https://github.com/o/r/issues/", "12"].concat(),
        ["https://github.com/o/r/pull/", "9"].concat(),
    ] {
        assert!(unfollowable_reference(&line).is_some(), "{line}");
    }
    for line in [
        "plan-review #2 runs",
        "Verdicts: #1 FAIL, #2 PASS.",
        "the issues this plan raises",
        "tissue 3",
        "see docs/behaviour.md §20",
    ] {
        assert_eq!(unfollowable_reference(line), None, "{line}");
    }
}

/// Whoever clones the repository has its files and nothing else: no code, test or page
/// may send them to the maintainers' shared notes or to an issue by its number. What such
/// a note says belongs in the docs (the behaviour contract is docs/behaviour.md).
#[test]
fn no_file_refers_to_what_a_cloner_cannot_follow() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "src", "tests", "docs", "actions", "dist", "benches", "examples", "hooks",
    ] {
        text_files(&root.join(dir), &mut files);
    }
    for file in ["README.md", "CHANGELOG.md", "Cargo.toml"] {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        files.push((path, text));
    }
    let mut found = Vec::new();
    for (path, text) in &files {
        for (n, line) in text.lines().enumerate() {
            if let Some(what) = unfollowable_reference(line) {
                found.push(format!(
                    "{}:{}: {what}: {}",
                    path.strip_prefix(root).unwrap().display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "references a cloner cannot follow (say what is meant instead):\n{}",
        found.join("\n")
    );
}

/// The sections of the behaviour contract, in order. Code, tests and docs cite them as
/// "SPEC §N", so a section is never renumbered, dropped or missing from
/// docs/behaviour.md; a new one is added here and there at the end.
const BEHAVIOUR_SECTIONS: [&str; 25] = [
    "§1 What Taskie is",
    "§2 A plan directory",
    "§3 state.json",
    "§4 Hook protocol (Claude Code Stop hook)",
    "§5 The hook's decision procedure",
    "§6 Advance targets and cycle resets",
    "§7 Plan structure validation",
    "§8 The reviewer",
    "§9 Verdict",
    "§10 Event log and diagnostics",
    "§11 `taskie-hook --dry-run`",
    "§12 `taskie` command line",
    "§13 continue-plan routing",
    "§14 `taskie mark` transitions",
    "§15 Packaging as a Claude Code plugin",
    "§16 Quality bars",
    "§17 Sessions",
    "§18 Reviewer kinds, panels and spend",
    "§19 Distribution",
    "§20 Hosts: Claude Code, Codex CLI, Gemini CLI",
    "§21 Findings that converge",
    "§22 Reviewer availability",
    "§23 Plans that run themselves: `taskie run`",
    "§24 Notifications",
    "§25 Windows",
];

/// docs/behaviour.md has every section of the contract, in order, each with its link
/// target (`#spec-N`) right above it and a link from the contents at the top.
#[test]
fn the_behaviour_contract_has_every_section_in_order() {
    let doc = std::fs::read_to_string(src().join("../docs/behaviour.md")).unwrap();
    let lines: Vec<&str> = doc.lines().collect();
    let headings: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("## §"))
        .collect();
    let want: Vec<&str> = BEHAVIOUR_SECTIONS
        .iter()
        .map(|s| s.strip_prefix('§').unwrap())
        .collect();
    assert_eq!(headings, want, "the `## §N` headings of docs/behaviour.md");
    let contents = doc.split("\n## ").next().unwrap();
    for (i, section) in BEHAVIOUR_SECTIONS.iter().enumerate() {
        let n = i + 1;
        let at = lines
            .iter()
            .position(|l| l == &format!("## {section}"))
            .unwrap();
        let anchor = lines[..at].iter().rev().find(|l| !l.trim().is_empty());
        assert_eq!(
            anchor.copied(),
            Some(format!("<a id=\"spec-{n}\"></a>").as_str()),
            "the link target above {section}"
        );
        assert!(
            contents.contains(&format!("[§{n}](#spec-{n})")),
            "the contents link to {section}"
        );
    }
}
