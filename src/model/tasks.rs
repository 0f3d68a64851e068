//! The task table in `tasks.md` (SPEC §2, §6, §7 rule 9).

use std::fmt;

/// One task row; cells are trimmed but otherwise as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRow {
    pub id: String,
    pub status: String,
    /// What the task is, from the title column (empty when the table has none).
    pub title: String,
}

impl TaskRow {
    /// The id as a task number, if it is a plain decimal integer (decoration allowed).
    pub fn number(&self) -> Option<u64> {
        crate::model::text::decimal(strip_decoration(&self.id))
    }

    /// Whether the status counts as finished (§6).
    pub fn is_finished(&self) -> bool {
        is_finished(&self.status)
    }
}

/// The unfinished tasks of a plan that has reached `complete` (SPEC §13), in words
/// naming each with its status; `None` when every task is finished. `tasks_md` is the
/// file as the reader sees it.
pub fn unfinished_at_complete(rows: &[TaskRow], tasks_md: &str) -> Option<String> {
    let open: Vec<String> = rows
        .iter()
        .filter(|t| !t.is_finished())
        .map(|t| format!("task {} (\"{}\")", t.id, t.status))
        .collect();
    (!open.is_empty()).then(|| {
        format!(
            "{tasks_md} still lists {} as unfinished: implement {}, or set {} status to done, postponed or \
             cancelled",
            open.join(", "),
            if open.len() == 1 { "it" } else { "them" },
            if open.len() == 1 { "its" } else { "their" }
        )
    })
}

/// Why `tasks.md` is not a usable task table.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum TasksError {
    NonTable,
    NoRows,
    HeaderOnly,
}

impl TasksError {
    /// The exact §7 rule 9 message.
    pub fn message(&self) -> &'static str {
        match self {
            TasksError::NonTable => "tasks.md contains non-table content",
            TasksError::NoRows => "tasks.md has no table rows",
            TasksError::HeaderOnly => "tasks.md has no task rows (header-only table)",
        }
    }
}

impl fmt::Display for TasksError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for TasksError {}

/// Headers of the column that names a task (compared without case or emphasis).
const TITLE_HEADERS: [&str; 6] = ["title", "task", "name", "description", "summary", "subject"];

/// Parses the task table; rows come back in file order.
pub fn parse(content: &str) -> Result<Vec<TaskRow>, TasksError> {
    // Editors on Windows may save a UTF-8 BOM; it is not content the user wrote.
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let mut rows = Vec::new();
    // `lines()` also drops the `\r` of CRLF endings.
    for line in content.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !line.starts_with('|') {
            // Checked over the whole file before anything else, so prose anywhere wins.
            return Err(TasksError::NonTable);
        }
        rows.push(line);
    }
    if rows.is_empty() {
        return Err(TasksError::NoRows);
    }
    if rows.len() < 3 {
        return Err(TasksError::HeaderOnly);
    }

    let header = cells(rows[0]);
    let (id_col, status_col) = id_and_status(&header);
    // The task's name: a column headed like one, else the first other column.
    let title_col = column(&header, |h| TITLE_HEADERS.contains(&h))
        .or_else(|| (0..header.len()).find(|i| *i != id_col && *i != status_col));

    // Row 2 is the separator; later separator-looking (or all-blank) rows are layout, not tasks.
    let tasks: Vec<TaskRow> = rows[2..]
        .iter()
        .filter(|row| !is_separator(row))
        .map(|row| {
            let cells = cells(row);
            let cell = |i: usize| cells.get(i).map(|c| c.to_string()).unwrap_or_default();
            TaskRow {
                id: cell(id_col),
                status: cell(status_col),
                title: title_col.map(cell).unwrap_or_default(),
            }
        })
        .collect();
    if tasks.is_empty() {
        return Err(TasksError::HeaderOnly);
    }
    Ok(tasks)
}

/// `content` with the status of each task in `ids` (normalised, [`key`]) set to
/// `status`: only those cells change, each padded to its old width when it fits, every
/// other byte (line endings included) kept. A text that is not a task table is returned
/// as it is.
pub fn with_status(content: &str, ids: &[String], status: &str) -> String {
    let Some(header) = content
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && *l != "\u{feff}")
    else {
        return content.to_string();
    };
    let (id_col, status_col) = id_and_status(&cells(header.trim_start_matches('\u{feff}')));
    let mut out = String::with_capacity(content.len());
    let mut rows_seen = 0;
    for line in content.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let trimmed = body.trim();
        let is_row = trimmed.starts_with('|');
        if is_row {
            rows_seen += 1;
        }
        let wanted = is_row
            && rows_seen > 2
            && !is_separator(trimmed)
            && cells(trimmed)
                .get(id_col)
                .is_some_and(|id| ids.contains(&key(id)));
        if !wanted {
            out.push_str(line);
            continue;
        }
        // Pieces between pipes: piece k + 1 is cell k (piece 0 is before the first pipe).
        let mut pieces: Vec<String> = body.split('|').map(str::to_string).collect();
        if let Some(piece) = pieces.get_mut(status_col + 1) {
            let width = piece.chars().count().saturating_sub(2).max(status.len());
            *piece = format!(" {status:<width$} ");
        }
        out.push_str(&pieces.join("|"));
        out.push_str(ending);
    }
    out
}

/// The first column whose header (without case or emphasis) `pred` accepts.
fn column(header: &[&str], pred: fn(&str) -> bool) -> Option<usize> {
    header
        .iter()
        .position(|c| pred(&strip_decoration(c).to_lowercase()))
}

/// The Id column (else the first) and the Status column (else the second) of a header.
fn id_and_status(header: &[&str]) -> (usize, usize) {
    (
        column(header, |h| h == "id" || h == "#").unwrap_or(0),
        column(header, |h| h == "status").unwrap_or(1),
    )
}

/// Two spellings of one id (`01`, `**1**`) are one task.
pub fn key(id: &str) -> String {
    let id = strip_decoration(id);
    match crate::model::text::decimal(id) {
        Some(n) => n.to_string(),
        None => id.to_lowercase(),
    }
}

/// Whether a status counts as finished (§6): done, completed, complete, cancelled,
/// canceled, postponed or skipped, ignoring case, whitespace and emphasis.
pub fn is_finished(status: &str) -> bool {
    matches!(
        strip_decoration(status).to_lowercase().as_str(),
        "done" | "completed" | "complete" | "cancelled" | "canceled" | "postponed" | "skipped"
    )
}

/// Users decorate cells (`**Done**`, `` `ID` ``); matching ignores the decoration.
pub(crate) fn strip_decoration(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || matches!(c, '*' | '_' | '`' | '~'))
}

/// The cells of a trimmed row that starts with `|`; the trailing pipe is optional.
pub(crate) fn cells(row: &str) -> Vec<&str> {
    let inner = &row[1..];
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').map(str::trim).collect()
}

pub(crate) fn is_separator(row: &str) -> bool {
    row.chars()
        .all(|c| matches!(c, '-' | ':' | '|') || c.is_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, status: &str) -> TaskRow {
        TaskRow {
            id: id.to_string(),
            status: status.to_string(),
            title: String::new(),
        }
    }

    /// The rows without their titles, for the tests about ids and statuses.
    fn untitled(md: &str) -> Result<Vec<TaskRow>, TasksError> {
        parse(md).map(|rows| {
            rows.into_iter()
                .map(|r| TaskRow {
                    title: String::new(),
                    ..r
                })
                .collect()
        })
    }

    #[test]
    fn the_title_comes_from_a_title_like_column_else_the_first_other_one() {
        let titles =
            |md: &str| -> Vec<String> { parse(md).unwrap().into_iter().map(|r| r.title).collect() };
        assert_eq!(
            titles("| Id | Status | **Task** |\n|-|-|-|\n| 1 | done | Write the parser |\n"),
            ["Write the parser"]
        );
        assert_eq!(
            titles("| # | What | Status |\n|-|-|-|\n| 1 | Parse it | done |\n"),
            ["Parse it"]
        );
        assert_eq!(titles("| Id | Status |\n|-|-|\n| 1 | done |\n"), [""]);
    }

    #[test]
    fn simple_table_parses_in_order() {
        let md = "| Id | Title | Status |\n|---|---|---|\n| 1 | A | done |\n| 2 | B | pending |\n";
        assert_eq!(
            untitled(md),
            Ok(vec![row("1", "done"), row("2", "pending")])
        );
    }

    #[test]
    fn crlf_table_parses() {
        let md = "| Id | Status |\r\n|----|--------|\r\n| 1 | done |\r\n| 2 | in progress |\r\n";
        assert_eq!(
            untitled(md),
            Ok(vec![row("1", "done"), row("2", "in progress")])
        );
    }

    #[test]
    fn uppercase_id_header_is_found() {
        let md = "| Title | ID | Status |\n|-|-|-|\n| A | 7 | Done |\n";
        assert_eq!(untitled(md), Ok(vec![row("7", "Done")]));
    }

    #[test]
    fn hash_header_is_the_id_column() {
        let md = "| Title | # | Status |\n|-|-|-|\n| A | 3 | pending |\n";
        assert_eq!(untitled(md), Ok(vec![row("3", "pending")]));
    }

    #[test]
    fn status_in_column_three_is_found() {
        let md = "| # | Title | Status | Notes |\n|---|---|---|---|\n| 1 | A | done | x |\n";
        assert_eq!(untitled(md), Ok(vec![row("1", "done")]));
    }

    #[test]
    fn headers_with_emphasis_are_found() {
        let md = "| Title | **ID** | `Status` |\n|-|-|-|\n| A | 2 | skipped |\n";
        assert_eq!(untitled(md), Ok(vec![row("2", "skipped")]));
    }

    #[test]
    fn without_known_headers_first_column_is_id_and_second_is_status() {
        let md = "| Task | State | Title |\n|-|-|-|\n| 1 | done | A |\n";
        assert_eq!(untitled(md), Ok(vec![row("1", "done")]));
    }

    #[test]
    fn only_the_missing_header_falls_back_to_its_default_column() {
        let md = "| Task | Title | Status |\n|-|-|-|\n| 4 | A | done |\n";
        assert_eq!(untitled(md), Ok(vec![row("4", "done")]));
    }

    #[test]
    fn missing_cell_becomes_empty_string() {
        let md = "| Id | Title | Status |\n|-|-|-|\n| 1 |\n";
        assert_eq!(untitled(md), Ok(vec![row("1", "")]));
    }

    #[test]
    fn trailing_pipe_is_optional() {
        let md = "| Id | Status\n|---|---\n| 1 | done\n| 2 | pending |\n";
        assert_eq!(
            untitled(md),
            Ok(vec![row("1", "done"), row("2", "pending")])
        );
    }

    #[test]
    fn blank_lines_and_indentation_are_ignored() {
        let md = "\n  \n  | Id | Status |\n\t|---|---|\n\n   | 1 | done |   \n \n";
        assert_eq!(untitled(md), Ok(vec![row("1", "done")]));
    }

    #[test]
    fn later_separator_rows_are_skipped() {
        let md = "| Id | Status |\n|---|---|\n| 1 | done |\n| :-- | --: |\n| 2 | pending |\n";
        assert_eq!(
            untitled(md),
            Ok(vec![row("1", "done"), row("2", "pending")])
        );
    }

    #[test]
    fn utf8_bom_is_tolerated() {
        let md = "\u{feff}| Id | Status |\n|---|---|\n| 1 | done |\n";
        assert_eq!(untitled(md), Ok(vec![row("1", "done")]));
    }

    #[test]
    fn prose_is_non_table_content() {
        assert_eq!(parse("# Tasks\n"), Err(TasksError::NonTable));
        assert_eq!(
            parse("Some notes\n| Id | Status |\n|---|---|\n| 1 | done |\n"),
            Err(TasksError::NonTable)
        );
    }

    #[test]
    fn non_table_is_checked_before_row_counts() {
        assert_eq!(
            parse("| Id | Status |\ntrailing prose\n"),
            Err(TasksError::NonTable)
        );
    }

    #[test]
    fn empty_file_has_no_table_rows() {
        assert_eq!(parse(""), Err(TasksError::NoRows));
        assert_eq!(parse(" \r\n\n\t\n"), Err(TasksError::NoRows));
    }

    #[test]
    fn header_and_separator_only_is_header_only() {
        assert_eq!(
            parse("| Id | Status |\n|---|---|\n"),
            Err(TasksError::HeaderOnly)
        );
        assert_eq!(parse("| Id | Status |\n"), Err(TasksError::HeaderOnly));
    }

    #[test]
    fn table_whose_only_rows_are_separators_is_header_only() {
        assert_eq!(
            parse("| Id | Status |\n|---|---|\n|---|---|\n| | |\n"),
            Err(TasksError::HeaderOnly)
        );
    }

    #[test]
    fn error_messages_are_the_spec_texts() {
        assert_eq!(
            TasksError::NonTable.message(),
            "tasks.md contains non-table content"
        );
        assert_eq!(TasksError::NoRows.message(), "tasks.md has no table rows");
        assert_eq!(
            TasksError::HeaderOnly.message(),
            "tasks.md has no task rows (header-only table)"
        );
        assert_eq!(
            TasksError::HeaderOnly.to_string(),
            TasksError::HeaderOnly.message()
        );
    }

    #[test]
    fn number_accepts_decorated_digits_only() {
        assert_eq!(row("12", "").number(), Some(12));
        assert_eq!(row("**3**", "").number(), Some(3));
        assert_eq!(row("`4`", "").number(), Some(4));
        assert_eq!(row("007", "").number(), Some(7));
        assert_eq!(row("", "").number(), None);
        assert_eq!(row("T1", "").number(), None);
        assert_eq!(row("1.5", "").number(), None);
        assert_eq!(row("-1", "").number(), None);
        assert_eq!(row("+1", "").number(), None);
        assert_eq!(row("99999999999999999999", "").number(), None);
    }

    #[test]
    fn finished_statuses_are_recognised() {
        for s in [
            "done",
            "completed",
            "complete",
            "cancelled",
            "canceled",
            "postponed",
            "skipped",
            "Done",
            "DONE",
            "  done  ",
            "**Done**",
            "`done`",
            "_Completed_",
            "~~skipped~~",
            "** `Cancelled` **",
        ] {
            assert!(is_finished(s), "{s:?}");
        }
    }

    #[test]
    fn other_statuses_are_unfinished() {
        for s in [
            "",
            "pending",
            "in progress",
            "in-progress",
            "blocked",
            "todo",
            "done?",
            "not done",
            "done!",
            "**",
            "d one",
        ] {
            assert!(!is_finished(s), "{s:?}");
        }
    }

    #[test]
    fn row_is_finished_uses_its_status() {
        assert!(row("1", "**Done**").is_finished());
        assert!(!row("1", "pending").is_finished());
    }

    #[test]
    fn a_status_is_set_in_its_cell_only_and_everything_else_is_kept() {
        let table = "| Id | Title | Status | Depends |\r\n|----|-------|---------|----|\r\n| 1 | A | pending | |\r\n| **02** | B | in progress | 1 |\r\n| 3 | C | pending | |";
        let ids = ["1".to_string(), "2".to_string()];
        let out = with_status(table, &ids, "done");
        assert_eq!(
            out,
            "| Id | Title | Status | Depends |\r\n|----|-------|---------|----|\r\n| 1 | A | done    | |\r\n| **02** | B | done        | 1 |\r\n| 3 | C | pending | |"
        );
        let rows = parse(&out).unwrap();
        assert!(rows[0].is_finished() && rows[1].is_finished() && !rows[2].is_finished());
        assert_eq!(with_status("no table", &ids, "done"), "no table");
    }
}
