//! `taskie run` (docs/run.md): the Depends column, and plans that run themselves in git
//! worktrees with fake agents.

use crate::support::Project;

#[test]
fn validate_names_the_row_and_the_fix_of_an_unknown_dependency_and_a_cycle() {
    let p = Project::new().plan("p").file(
        "tasks.md",
        "| Id | Title | Status | Depends |\n|-|-|-|-|\n| 1 | A | pending | 2 |\n| 2 | B | pending | 1 |\n| 3 | C | pending | 9 |\n",
    );
    for n in 1..=3 {
        std::fs::write(p.plan_dir().join(format!("task-{n}.md")), "# Task\n").unwrap();
    }
    let run = p.run_taskie(&["validate", "--plan", "p"]);
    let err = run.fails_with(1);
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [
            "tasks.md line 5: task 3 depends on 9, which is not a task of the table",
            "tasks.md line 3: the dependencies form a cycle (1 → 2 → 1)",
        ]
    );
    assert!(err.contains("line 5 of .taskie/plans/p/tasks.md"), "{err}");
    assert!(err.contains("remove one dependency of the cycle"), "{err}");
}
