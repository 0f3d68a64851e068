//! npm's `.cmd` shims, read for what they start (Windows). npm installs `codex`, `gemini`
//! and npm's `claude` as a batch file beside a `node_modules` folder; a batch file can only
//! run through `cmd.exe`, which std refuses a multi-line argument and which adds a process
//! and a console for nothing. So the reviewer is started as the program the shim would
//! start: `node <script>` (the `node.exe` beside the shim when there is one, as the shim
//! prefers) or the native `.exe` the package ships. A batch file this reading does not
//! recognise is run as it is.
//!
//! The reading is pure (text in, candidates out), so it is tested on every platform; what
//! exists on disk is the caller's to check ([`resolve`], Windows only).

/// One way a shim starts what it wraps: the program and the arguments that go before the
/// caller's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Launch {
    pub program: String,
    pub args: Vec<String>,
}

/// The ways the batch file `text`, found in directory `dir`, starts its target, in the
/// order it tries them; empty when `text` is not a shim this reading knows.
///
/// Two shapes are known. npm 7 on (cmd-shim 4+) sets `%dp0%` to the shim's folder, picks
/// `_prog` (`%dp0%\node.exe` when it exists, else `node`) and ends in
/// `… "%_prog%" [interpreter args] "%dp0%\<script>" %*`; for a target with no `#!` line
/// (a native program) it ends in `"%dp0%\<program>" %*`. Older npm wrote
/// `"%~dp0\node.exe" "%~dp0\<script>" %*`, then `node "%~dp0\<script>" %*` for the case
/// without a `node.exe` beside it.
pub(crate) fn parse(text: &str, dir: &str) -> Vec<Launch> {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.trim().trim_start_matches('@').trim())
        .collect();
    let runs = lines.iter().filter_map(|l| l.strip_suffix("%*"));
    let mut launches = Vec::new();
    for run in runs {
        let tokens = tokens(run);
        // The interpreter chosen into `_prog`: each value the shim may give it, in order.
        if let Some(at) = tokens.iter().position(|t| t == "%_prog%") {
            let rest = &tokens[at + 1..];
            for prog in lines.iter().filter_map(|l| prog_value(l)) {
                launches.extend(launch(
                    std::iter::once(prog).chain(rest.iter().cloned()),
                    dir,
                ));
            }
        } else {
            launches.extend(launch(tokens.into_iter(), dir));
        }
    }
    launches
}

/// The value a line `SET "_prog=<value>"` gives `_prog`.
fn prog_value(line: &str) -> Option<String> {
    let (set, rest) = line.split_once(char::is_whitespace)?;
    if !set.eq_ignore_ascii_case("set") {
        return None;
    }
    let value = rest.trim().strip_prefix('"')?.strip_suffix('"')?;
    value.strip_prefix("_prog=").map(str::to_owned)
}

/// A program and its arguments, with the shim's folder put in; `None` when a word holds
/// anything else of batch syntax (another variable, a redirection, a command of its own).
fn launch(words: impl Iterator<Item = String>, dir: &str) -> Option<Launch> {
    // Judged before the folder is put in: a folder may hold parentheses or a `%`.
    let batch = |w: &String| {
        let w = w.replace("%dp0%", "").replace("%~dp0", "");
        w.contains(['%', '&', '|', '<', '>', '^', '(', ')'])
    };
    let words: Vec<String> = words.collect();
    let (program, args) = words.split_first()?;
    if program.is_empty() || words.iter().any(batch) {
        return None;
    }
    Some(Launch {
        program: folder_put_in(program, dir),
        args: args.iter().map(|a| folder_put_in(a, dir)).collect(),
    })
}

/// `word` with the shim's folder (`%dp0%` or `%~dp0`, which ends in a separator) put in.
fn folder_put_in(word: &str, dir: &str) -> String {
    let dir = dir.trim_end_matches(['\\', '/']);
    let mut out = word.to_owned();
    for var in ["%dp0%", "%~dp0"] {
        for sep in ["\\", "/"] {
            out = out.replace(&format!("{var}{sep}"), &format!("{dir}\\"));
        }
        out = out.replace(var, &format!("{dir}\\"));
    }
    out
}

/// The words of a batch command line: split at blanks, double quotes grouping and removed.
fn tokens(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut started) = (false, false);
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                started = true;
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// The program to start for `program` (a path, or a name looked up on `path` from `cwd`,
/// with the extensions of PATHEXT), and the arguments that go before the caller's: what an
/// npm shim it names runs, else the file it names. Unchanged when it names nothing (the
/// start then fails, saying so).
#[cfg(windows)]
pub(crate) fn resolve(
    program: &std::ffi::OsStr,
    path: Option<&std::ffi::OsStr>,
    cwd: &std::path::Path,
) -> (std::ffi::OsString, Vec<std::ffi::OsString>) {
    use std::io::Read;
    use std::path::Path;
    let Ok(found) = which::which_in(program, path, cwd) else {
        return (program.to_owned(), Vec::new());
    };
    let batch = found
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("cmd") || e.eq_ignore_ascii_case("bat"));
    let dir = found.parent().map(|d| d.to_string_lossy().into_owned());
    let mut text = String::new();
    // A shim is a few hundred bytes; a batch file far larger is no shim.
    let read =
        std::fs::File::open(&found).and_then(|f| f.take(64 * 1024).read_to_string(&mut text));
    if let (true, Some(dir), Ok(_)) = (batch, dir, read) {
        for l in parse(&text, &dir) {
            let program = if l.program.contains(['\\', '/']) {
                Some(Path::new(&l.program).to_owned()).filter(|p| p.is_file())
            } else {
                which::which_in(&l.program, path, cwd).ok()
            };
            if let Some(program) = program {
                return (program.into(), l.args.into_iter().map(Into::into).collect());
            }
        }
    }
    (found.into(), Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(program: &str, args: &[&str]) -> Launch {
        Launch {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    /// The head every npm 7+ shim starts with: `%dp0%` set to the shim's folder.
    const HEAD: &str = "@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\nCALL :find_dp0\r\n";

    #[test]
    fn a_node_script_s_shim_runs_the_node_beside_it_else_node_on_path_with_the_script() {
        let text = format!(
            "{HEAD}\r\nIF EXIST \"%dp0%\\node.exe\" (\r\n  SET \"_prog=%dp0%\\node.exe\"\r\n) ELSE (\r\n  \
             SET \"_prog=node\"\r\n  SET PATHEXT=%PATHEXT:;.JS;=;%\r\n)\r\n\r\nendLocal & goto #_undefined_# 2>NUL || \
             title %COMSPEC% & \"%_prog%\"  \"%dp0%\\node_modules\\@openai\\codex\\bin\\codex.js\" %*\r\n"
        );
        let script = r"C:\Users\A B\AppData\Roaming\npm\node_modules\@openai\codex\bin\codex.js";
        assert_eq!(
            parse(&text, r"C:\Users\A B\AppData\Roaming\npm\"),
            [
                launch(r"C:\Users\A B\AppData\Roaming\npm\node.exe", &[script]),
                launch("node", &[script]),
            ]
        );
    }

    #[test]
    fn interpreter_arguments_of_the_script_s_first_line_come_before_the_script() {
        let text = format!(
            "{HEAD}IF EXIST \"%dp0%\\node.exe\" (\r\n  SET \"_prog=%dp0%\\node.exe\"\r\n) ELSE (\r\n  SET \"_prog=node\"\r\n)\r\n\
             endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & \"%_prog%\" --no-warnings \"%dp0%\\x\\cli.js\" %*\r\n"
        );
        assert_eq!(
            parse(&text, r"D:\npm"),
            [
                launch(r"D:\npm\node.exe", &["--no-warnings", r"D:\npm\x\cli.js"]),
                launch("node", &["--no-warnings", r"D:\npm\x\cli.js"]),
            ]
        );
    }

    #[test]
    fn a_native_program_s_shim_runs_the_program() {
        let text = format!(
            "{HEAD}\"%dp0%\\node_modules\\taskie-win32-x64\\bin\\taskie-hook.exe\"   %*\r\n"
        );
        assert_eq!(
            parse(&text, r"C:\npm"),
            [launch(
                r"C:\npm\node_modules\taskie-win32-x64\bin\taskie-hook.exe",
                &[]
            )]
        );
    }

    #[test]
    fn an_older_npm_s_shim_is_read_too() {
        let text = "@IF EXIST \"%~dp0\\node.exe\" (\r\n  \"%~dp0\\node.exe\"  \"%~dp0\\node_modules\\g\\cli.js\" %*\r\n\
                    ) ELSE (\r\n  @SETLOCAL\r\n  @SET PATHEXT=%PATHEXT:;.JS;=;%\r\n  node  \"%~dp0\\node_modules\\g\\cli.js\" %*\r\n)";
        assert_eq!(
            parse(text, r"C:\npm\"),
            [
                launch(r"C:\npm\node.exe", &[r"C:\npm\node_modules\g\cli.js"]),
                launch("node", &[r"C:\npm\node_modules\g\cli.js"]),
            ]
        );
    }

    #[test]
    fn a_batch_file_that_is_no_shim_gives_nothing_to_run_instead() {
        for text in [
            "@echo off\r\necho hello\r\n",
            "@echo off\r\ncall \"%~dp0\\setup.cmd\" && \"%MYTOOL%\\tool.exe\" %*\r\n",
            "",
        ] {
            assert_eq!(parse(text, r"C:\x"), [], "{text}");
        }
    }
}
