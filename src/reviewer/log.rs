//! The reviewer logs in `.taskie/logs/`: their names, their content, and the bounded read
//! of a review file.

use crate::model::cycle::Due;
use crate::model::facts::Facts;
use crate::reviewer::config::STDOUT_LIMIT;
use crate::reviewer::process::{self, Ending};
use crate::store::atomic;
use crate::store::project::Project;
use std::path::{Path, PathBuf};

/// `.taskie/logs/review-<plan>-<R>-<N>-<stamp>[-<member>].log`.
pub fn path(project: &Project, f: &Facts, due: &Due, stamp: &str, member: Option<&str>) -> PathBuf {
    let member = member.map(|m| format!("-{m}")).unwrap_or_default();
    project.logs().join(format!(
        "review-{}-{}-{}-{stamp}{member}.log",
        f.plan, due.review, due.iteration
    ))
}

/// The review file as written: through the one reader, so a reviewer that leaves a FIFO
/// or a device there cannot hold the hook.
pub fn read_bounded(path: &Path) -> Option<String> {
    let bytes = crate::store::fs::read_regular(path, STDOUT_LIMIT as u64).ok()??;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

pub fn write(
    log: &Path,
    spec: &process::Spec,
    prompt: &str,
    outcome: &std::io::Result<process::Captured>,
) {
    let mut text = String::new();
    let shown: Vec<String> = spec
        .args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    text.push_str(&format!(
        "command: {} {}\nstdin: <prompt: {} bytes>\n",
        spec.program.to_string_lossy(),
        shown.join(" "),
        prompt.len()
    ));
    text.push_str(&format!(
        "cwd: {}\ntimeout_s: {}\n",
        spec.cwd.display(),
        spec.timeout.as_secs_f64()
    ));
    match outcome {
        Err(e) => text.push_str(&format!("spawn error: {e}\n")),
        Ok(o) => {
            let ending = match o.ending {
                Ending::Exited(c) => format!("exited with status {c}"),
                Ending::Signaled(s) => format!("killed by signal {s}"),
                Ending::TimedOut => "timed out; process group terminated".into(),
            };
            text.push_str(&format!(
                "pid: {}\nending: {ending}\nduration_ms: {}\n",
                o.pid,
                o.duration.as_millis()
            ));
            if o.stragglers_terminated {
                text.push_str(
                    "note: processes it started still held its output after it exited; their process group was terminated\n",
                );
            }
            let trunc = |t: bool| if t { " (truncated)" } else { "" };
            text.push_str(&format!(
                "--- stdout ({} bytes kept{}) ---\n",
                o.stdout.len(),
                trunc(o.stdout_truncated)
            ));
            text.push_str(&String::from_utf8_lossy(&o.stdout));
            text.push_str(&format!(
                "\n--- stderr ({} bytes kept{}) ---\n",
                o.stderr.len(),
                trunc(o.stderr_truncated)
            ));
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            text.push('\n');
        }
    }
    text.push_str(&format!("--- prompt ---\n{prompt}\n"));
    if let Err(e) = atomic::write_unsynced(log, text.as_bytes()) {
        eprintln!("taskie-hook: cannot write the reviewer log: {e}");
    }
}
