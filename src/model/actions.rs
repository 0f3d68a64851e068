//! Every action (`actions/*.md`), as the binary carries them: a hook registered by hand,
//! with no plugin installed, still names a file of instructions a model can read
//! (taskie-hook writes these into its cache; `src/hook/client.rs`).

/// Each action's name and text, exactly as in `actions/`.
pub const ALL: [(&str, &str); 18] = [
    ("add-task", include_str!("../../actions/add-task.md")),
    (
        "all-code-review",
        include_str!("../../actions/all-code-review.md"),
    ),
    ("code-review", include_str!("../../actions/code-review.md")),
    (
        "complete-task-tdd",
        include_str!("../../actions/complete-task-tdd.md"),
    ),
    (
        "complete-task",
        include_str!("../../actions/complete-task.md"),
    ),
    (
        "continue-plan",
        include_str!("../../actions/continue-plan.md"),
    ),
    (
        "continue-task",
        include_str!("../../actions/continue-task.md"),
    ),
    (
        "create-tasks",
        include_str!("../../actions/create-tasks.md"),
    ),
    (
        "ground-rules",
        include_str!("../../actions/ground-rules.md"),
    ),
    ("new-plan", include_str!("../../actions/new-plan.md")),
    (
        "next-task-tdd",
        include_str!("../../actions/next-task-tdd.md"),
    ),
    ("next-task", include_str!("../../actions/next-task.md")),
    ("plan-review", include_str!("../../actions/plan-review.md")),
    (
        "post-all-code-review",
        include_str!("../../actions/post-all-code-review.md"),
    ),
    (
        "post-code-review",
        include_str!("../../actions/post-code-review.md"),
    ),
    (
        "post-plan-review",
        include_str!("../../actions/post-plan-review.md"),
    ),
    (
        "post-tasks-review",
        include_str!("../../actions/post-tasks-review.md"),
    ),
    (
        "tasks-review",
        include_str!("../../actions/tasks-review.md"),
    ),
];
