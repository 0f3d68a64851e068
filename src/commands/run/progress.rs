//! What `taskie run` shows while it runs: on a terminal, a live table of its lanes redrawn
//! in place under the run's messages; otherwise one plain line per change of a lane; with
//! `--json`, one JSON event per line for each change. All three are the view
//! `store::run::observe` gives (the one `taskie status` shows), asked again after every
//! journal entry and every second, for what the gates say between entries (reviews, cost).

use crate::model::run::journal::Outcome;
use crate::model::run::view::{self, LaneView, RunView};
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// How the run shows itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// stdout is a terminal: the table, redrawn in place.
    Table,
    /// stdout is a file or a pipe: one line per change, no escape codes.
    Plain,
    /// `--json`: one event per line on stdout; the messages go to stderr.
    Json,
}

/// One line of `taskie run --json` (documented in docs/run.md).
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event<'a> {
    /// A lane changed (beyond the time that passed).
    Lane {
        run: &'a str,
        #[serde(flatten)]
        lane: &'a LaneView,
    },
    /// The run's own state changed: its outcome, the all-code review, the landing.
    Run {
        run: &'a str,
        plan: &'a str,
        outcome: Option<Outcome>,
        integration: &'a str,
        tip: &'a str,
        all_code_review: Option<&'a str>,
        landed: Option<&'a str>,
    },
}

#[derive(Default)]
struct Shown {
    last: Option<RunView>,
    /// Lines of the table now on the screen (table mode).
    drawn: usize,
}

pub struct Progress {
    mode: Mode,
    run_dir: PathBuf,
    locks: PathBuf,
    shown: Mutex<Shown>,
}

impl Progress {
    pub fn new(json: bool, run_dir: PathBuf, locks: PathBuf) -> Progress {
        let mode = if json {
            Mode::Json
        } else if std::io::stdout().is_terminal() {
            Mode::Table
        } else {
            Mode::Plain
        };
        Progress {
            mode,
            run_dir,
            locks,
            shown: Mutex::new(Shown::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shown> {
        self.shown.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Looks at the run again and shows what changed.
    pub fn update(&self) {
        let Some(now) = crate::store::run::observe(&self.run_dir, &self.locks) else {
            return;
        };
        let mut shown = self.lock();
        let mut out = std::io::stdout().lock();
        let _ = match self.mode {
            Mode::Table => redraw(&mut out, &mut shown, &now),
            Mode::Plain | Mode::Json => {
                changes(&mut out, self.mode, shown.last.as_ref(), &now).and_then(|_| out.flush())
            }
        };
        shown.last = Some(now);
    }

    /// A message of the driver: above the table on a terminal, on stdout when not, on
    /// stderr under `--json` (stdout holds only events).
    pub fn say(&self, line: &str) {
        match self.mode {
            Mode::Json => eprintln!("taskie run: {line}"),
            Mode::Plain => println!("{line}"),
            Mode::Table => {
                let mut shown = self.lock();
                let mut out = std::io::stdout().lock();
                let _ = clear(&mut out, &mut shown)
                    .and_then(|_| writeln!(out, "{line}"))
                    .and_then(|_| match shown.last.clone() {
                        Some(v) => redraw(&mut out, &mut shown, &v),
                        None => out.flush(),
                    });
            }
        }
    }

    /// Before the end report: the table stays on the screen as it last was.
    pub fn finish(&self) {
        self.update();
        self.lock().drawn = 0;
    }
}

/// While the driver works: `watch` looks at the run every second until it is told done.
#[derive(Default)]
pub struct Working {
    done: AtomicBool,
}

/// Tells the watch to end when dropped.
pub struct DoneOnDrop<'a>(&'a AtomicBool);

impl Drop for DoneOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Working {
    pub fn done_on_drop(&self) -> DoneOnDrop<'_> {
        DoneOnDrop(&self.done)
    }

    /// Calls `progress.update()` every second until done (checked every 100 ms).
    pub fn watch(&self, progress: &Progress) {
        loop {
            for _ in 0..10 {
                std::thread::sleep(std::time::Duration::from_millis(100));
                if self.done.load(Ordering::Relaxed) {
                    return;
                }
            }
            progress.update();
        }
    }
}

/// Moves up over the table drawn last and clears from there down.
fn clear(out: &mut impl Write, shown: &mut Shown) -> std::io::Result<()> {
    if shown.drawn > 0 {
        write!(out, "\x1b[{}A\x1b[J", shown.drawn)?;
        shown.drawn = 0;
    }
    Ok(())
}

fn redraw(out: &mut impl Write, shown: &mut Shown, v: &RunView) -> std::io::Result<()> {
    clear(out, shown)?;
    let mut rows = vec![view::headline(v)];
    rows.extend(view::table(v));
    for row in &rows {
        writeln!(out, "{row}")?;
    }
    shown.drawn = rows.len();
    out.flush()
}

/// The lines (plain) or events (JSON) for what changed between two views.
fn changes(
    out: &mut impl Write,
    mode: Mode,
    before: Option<&RunView>,
    now: &RunView,
) -> std::io::Result<()> {
    for lane in &now.lanes {
        let old = before.and_then(|b| b.lanes.iter().find(|l| l.task == lane.task));
        if old.is_some_and(|o| !lane.changed_from(o)) {
            continue;
        }
        match mode {
            Mode::Json => json_line(
                out,
                &Event::Lane {
                    run: &now.run,
                    lane,
                },
            )?,
            _ => writeln!(out, "{}", view::line(lane))?,
        }
    }
    let state = |v: &RunView| (v.outcome, v.all_code_review.clone(), v.landed.clone());
    if mode == Mode::Json && before.is_none_or(|b| state(b) != state(now)) {
        json_line(
            out,
            &Event::Run {
                run: &now.run,
                plan: &now.plan,
                outcome: now.outcome,
                integration: &now.integration,
                tip: &now.tip,
                all_code_review: now.all_code_review.as_deref(),
                landed: now.landed.as_deref(),
            },
        )?;
    }
    Ok(())
}

fn json_line(out: &mut impl Write, event: &Event) -> std::io::Result<()> {
    let text = serde_json::to_string(event).map_err(std::io::Error::other)?;
    writeln!(out, "{text}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::run::view::LaneView;

    fn view_with(lanes: Vec<LaneView>) -> RunView {
        RunView {
            run: "p-1".into(),
            plan: "p".into(),
            agent: "claude".into(),
            slots: 2,
            integration: "taskie/p/integration".into(),
            tip: "t".into(),
            outcome: None,
            driver_alive: true,
            lanes,
            all_code_review: None,
            landed: None,
            branch: "main".into(),
        }
    }

    fn lane(phase: &'static str, elapsed: u64) -> LaneView {
        LaneView {
            task: "1".into(),
            phase,
            detail: phase.into(),
            reviews: 0,
            reviewing: false,
            elapsed_secs: Some(elapsed),
            cost_usd: None,
            alive: None,
        }
    }

    fn shown(mode: Mode, before: Option<&RunView>, now: &RunView) -> String {
        let mut out = Vec::new();
        changes(&mut out, mode, before, now).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_lane_is_shown_again_only_when_more_than_its_time_changed() {
        let a = view_with(vec![lane("running", 1)]);
        let b = view_with(vec![lane("running", 9)]);
        let c = view_with(vec![lane("merged", 9)]);
        assert_eq!(shown(Mode::Plain, Some(&a), &b), "");
        assert_eq!(
            shown(Mode::Plain, Some(&b), &c),
            "task 1: merged [0 reviews; 0m 09s; -]\n"
        );
    }

    #[test]
    fn json_events_are_one_object_per_line_with_the_event_first() {
        let a = view_with(vec![lane("running", 1)]);
        let text = shown(Mode::Json, None, &a);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].starts_with(r#"{"event":"lane","run":"p-1","task":"1","phase":"running""#),
            "{text}"
        );
        assert!(
            lines[1].starts_with(r#"{"event":"run","run":"p-1""#),
            "{text}"
        );
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn the_table_is_redrawn_over_the_one_drawn_before() {
        let mut shown = Shown::default();
        let mut out = Vec::new();
        let v = view_with(vec![lane("running", 1)]);
        redraw(&mut out, &mut shown, &v).unwrap();
        assert_eq!(shown.drawn, 3, "the headline, the header, one lane");
        out.clear();
        redraw(&mut out, &mut shown, &v).unwrap();
        assert!(String::from_utf8(out).unwrap().starts_with("\x1b[3A\x1b[J"));
    }
}
