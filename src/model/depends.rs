//! The optional `Depends` column of tasks.md (SPEC §23): which tasks must be merged before
//! a task may start, and the two ways it can be wrong (an unknown id, a cycle), which are
//! structure errors (§7 rule 9).

use crate::model::tasks::{cells, is_separator, strip_decoration};

/// Headers naming the column (compared without case or emphasis).
const HEADERS: [&str; 5] = ["depends", "depends on", "dependencies", "deps", "after"];

/// One task's row with its dependencies, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The task's id, as in the Id column (decoration stripped).
    pub id: String,
    /// The 1-based line of tasks.md holding the row.
    pub line: usize,
    /// The ids the row names, in order, decoration stripped.
    pub depends: Vec<String>,
}

/// A dependency that cannot be satisfied.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Problem {
    /// The row on `line` (task `task`) names `missing`, which no row has as its id.
    Unknown {
        line: usize,
        task: String,
        missing: String,
    },
    /// The tasks of `cycle` (first repeated at the end) wait for each other; `line` is
    /// the row of the first.
    Cycle { line: usize, cycle: Vec<String> },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Unknown {
                line,
                task,
                missing,
            } => write!(
                f,
                "tasks.md line {line}: task {task} depends on {missing}, which is not a task of the table"
            ),
            Problem::Cycle { line, cycle } => write!(
                f,
                "tasks.md line {line}: the dependencies form a cycle ({})",
                cycle.join(" → ")
            ),
        }
    }
}

impl Problem {
    /// How to repair it, for the tasks.md at `file` (as the user sees the path).
    pub fn fix(&self, file: &str) -> String {
        match self {
            Problem::Unknown { line, task, .. } => format!(
                "fix the Depends cell of task {task} on line {line} of {file}: list ids from its Id column, comma-separated"
            ),
            Problem::Cycle { line, .. } => format!(
                "remove one dependency of the cycle from the Depends column of {file} (starting at line {line})"
            ),
        }
    }
}

pub use crate::model::tasks::key;

/// The rows of a table that has a Depends column; `None` without one (or when the text is
/// not a task table: validation reports that on its own).
pub fn rows(content: &str) -> Option<Vec<Row>> {
    Some(
        column(content, &HEADERS)?
            .into_iter()
            .map(|(id, line, cell)| Row {
                id,
                line,
                depends: ids(&cell),
            })
            .collect(),
    )
}

/// Headers naming the optional Agent column (SPEC §23): the CLI a task's session runs.
const AGENT_HEADERS: [&str; 3] = ["agent", "cli", "vendor"];

/// The Agent cell of each row (id, line, cell, decoration stripped); `None` without the
/// column.
pub fn agents(content: &str) -> Option<Vec<(String, usize, String)>> {
    Some(
        column(content, &AGENT_HEADERS)?
            .into_iter()
            .map(|(id, line, cell)| (id, line, strip_decoration(&cell).trim().to_string()))
            .collect(),
    )
}

/// Each row's id, line and cell of the column one of `headers` names; `None` without
/// such a column (or when the text is no table).
fn column(content: &str, headers: &[&str]) -> Option<Vec<(String, usize, String)>> {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let mut lines = content
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (_, header) = lines.next()?;
    if !header.starts_with('|') {
        return None;
    }
    let header = cells(header);
    let column = |pred: &dyn Fn(&str) -> bool| {
        header
            .iter()
            .position(|c| pred(&strip_decoration(c).to_lowercase()))
    };
    let wanted = column(&|h| headers.contains(&h))?;
    let id_col = column(&|h| h == "id" || h == "#").unwrap_or(0);
    lines.next()?; // the separator row
    let mut out = Vec::new();
    for (line, row) in lines {
        if !row.starts_with('|') {
            return None;
        }
        if is_separator(row) {
            continue;
        }
        let cells = cells(row);
        let cell = |i: usize| cells.get(i).copied().unwrap_or_default();
        out.push((
            strip_decoration(cell(id_col)).to_string(),
            line,
            cell(wanted).to_string(),
        ));
    }
    Some(out)
}

/// The ids of one Depends cell: separated by commas or spaces; `-`, `—`, `none` and an
/// empty cell name none.
fn ids(cell: &str) -> Vec<String> {
    cell.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .map(strip_decoration)
        .filter(|s| {
            !s.is_empty() && !matches!(*s, "-" | "—" | "–") && !s.eq_ignore_ascii_case("none")
        })
        .map(str::to_string)
        .collect()
}

/// Every unknown id and every cycle, in line order.
pub fn problems(rows: &[Row]) -> Vec<Problem> {
    let known: Vec<String> = rows.iter().map(|r| key(&r.id)).collect();
    let mut out = Vec::new();
    for r in rows {
        for d in &r.depends {
            if !known.contains(&key(d)) {
                out.push(Problem::Unknown {
                    line: r.line,
                    task: r.id.clone(),
                    missing: d.clone(),
                });
            }
        }
    }
    out.extend(cycles(rows));
    out.sort();
    out.dedup();
    out
}

/// Each cycle once (found by a depth-first walk from each row in file order).
fn cycles(rows: &[Row]) -> Vec<Problem> {
    let index = |id: &str| rows.iter().position(|r| key(&r.id) == key(id));
    // 0 unseen, 1 on the current path, 2 finished.
    let mut mark = vec![0u8; rows.len()];
    let mut found: Vec<Vec<usize>> = Vec::new();
    fn walk(
        at: usize,
        rows: &[Row],
        index: &dyn Fn(&str) -> Option<usize>,
        mark: &mut [u8],
        path: &mut Vec<usize>,
        found: &mut Vec<Vec<usize>>,
    ) {
        mark[at] = 1;
        path.push(at);
        for d in &rows[at].depends {
            let Some(next) = index(d) else { continue };
            match mark[next] {
                0 => walk(next, rows, index, mark, path, found),
                1 => {
                    let from = path.iter().position(|&p| p == next).unwrap_or(0);
                    found.push(path[from..].to_vec());
                }
                _ => {}
            }
        }
        path.pop();
        mark[at] = 2;
    }
    for start in 0..rows.len() {
        if mark[start] == 0 {
            walk(start, rows, &index, &mut mark, &mut Vec::new(), &mut found);
        }
    }
    found
        .into_iter()
        .map(|members| {
            // Named from the member nearest the top of the file, following the edges.
            let first = members
                .iter()
                .position(|&m| m == *members.iter().min().unwrap())
                .unwrap();
            let mut cycle: Vec<String> = members[first..]
                .iter()
                .chain(&members[..first])
                .map(|&m| rows[m].id.clone())
                .collect();
            cycle.push(cycle[0].clone());
            Problem::Cycle {
                line: rows[*members.iter().min().unwrap()].line,
                cycle,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "| Id | Title | Status | Depends |\n|---|---|---|---|\n";

    fn table(rows: &str) -> String {
        format!("{TABLE}{rows}")
    }

    fn messages(md: &str) -> Vec<String> {
        problems(&rows(md).unwrap())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_table_without_the_column_has_no_dependencies() {
        assert_eq!(rows("| Id | Status |\n|-|-|\n| 1 | done |\n"), None);
    }

    #[test]
    fn the_cell_lists_ids_by_comma_or_space_with_decoration_and_blanks_ignored() {
        let got = rows(&table(
            "| 1 | A | pending | |\n| 2 | B | pending | 1 |\n| **3** | C | pending | `1`, 2 |\n| 4 | D | pending | - |\n| 5 | E | x | 1 2;3 |\n",
        ))
        .unwrap();
        let deps: Vec<(&str, usize, Vec<&str>)> = got
            .iter()
            .map(|r| {
                (
                    r.id.as_str(),
                    r.line,
                    r.depends.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            deps,
            [
                ("1", 3, vec![]),
                ("2", 4, vec!["1"]),
                ("3", 5, vec!["1", "2"]),
                ("4", 6, vec![]),
                ("5", 7, vec!["1", "2", "3"]),
            ]
        );
    }

    #[test]
    fn the_column_is_found_by_any_of_its_names_and_ids_by_the_id_column() {
        let md = "| Task | Depends on | # | Status |\n|-|-|-|-|\n| A | 7 | 8 | pending |\n| B | | 7 | done |\n";
        let got = rows(md).unwrap();
        assert_eq!(got[0].id, "8");
        assert_eq!(got[0].depends, ["7"]);
        assert!(problems(&got).is_empty());
    }

    #[test]
    fn an_unknown_id_is_named_with_its_row_and_line() {
        assert_eq!(
            messages(&table(
                "| 1 | A | pending | |\n| 2 | B | pending | 1, 9 |\n"
            )),
            ["tasks.md line 4: task 2 depends on 9, which is not a task of the table"]
        );
    }

    #[test]
    fn ids_match_by_number_so_leading_zeros_are_the_same_task() {
        assert!(messages(&table("| 01 | A | pending | |\n| 2 | B | pending | 1 |\n")).is_empty());
    }

    #[test]
    fn a_cycle_is_reported_once_from_its_first_row() {
        assert_eq!(
            messages(&table(
                "| 1 | A | pending | 3 |\n| 2 | B | pending | 1 |\n| 3 | C | pending | 2 |\n| 4 | D | pending | 1 |\n"
            )),
            ["tasks.md line 3: the dependencies form a cycle (1 → 3 → 2 → 1)"]
        );
    }

    #[test]
    fn a_task_depending_on_itself_is_a_cycle() {
        assert_eq!(
            messages(&table("| 1 | A | pending | 1 |\n")),
            ["tasks.md line 3: the dependencies form a cycle (1 → 1)"]
        );
    }

    #[test]
    fn a_diamond_is_not_a_cycle() {
        assert!(
            messages(&table(
                "| 1 | A | pending | |\n| 2 | B | pending | 1 |\n| 3 | C | pending | 1 |\n| 4 | D | pending | 2, 3 |\n"
            ))
            .is_empty()
        );
    }

    #[test]
    fn each_problem_has_a_fix_naming_the_file_and_the_line() {
        let file = ".taskie/plans/p/tasks.md";
        let unknown = Problem::Unknown {
            line: 4,
            task: "2".into(),
            missing: "9".into(),
        };
        assert!(
            unknown
                .fix(file)
                .contains("task 2 on line 4 of .taskie/plans/p/tasks.md")
        );
        let cycle = Problem::Cycle {
            line: 3,
            cycle: vec!["1".into(), "1".into()],
        };
        assert!(
            cycle
                .fix(file)
                .contains("Depends column of .taskie/plans/p/tasks.md")
        );
    }
}
