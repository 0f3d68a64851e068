//! Opening a run: a new one (its journal, its integration branch at the user's HEAD) or,
//! with `--resume`, the newest run of the plan as its journal tells it.

use crate::commands::Target;
use crate::commands::run::Options;
use crate::commands::run::context::Context;
use crate::error::Error;
use crate::model::depends;
use crate::model::host::Client;
use crate::model::run::journal::{Entry, RunState};
use crate::model::run::schedule::Task;
use crate::store::git::Git;
use crate::store::run::{self, Journal};

/// The plan's tasks, with their dependencies, from tasks.md.
/// The tasks, and each one's title.
type Table = (Vec<Task>, Vec<(String, String)>);

fn tasks(target: &Target) -> Result<Table, Error> {
    let text = std::fs::read_to_string(target.dir().join("tasks.md")).map_err(|e| {
        Error::Refused(format!(
            "taskie run needs the plan's task table, {}: {e}",
            target.rel("tasks.md")
        ))
    })?;
    let rows = crate::model::tasks::parse(&text)
        .map_err(|e| Error::Refused(format!("{}: {e}", target.rel("tasks.md"))))?;
    let deps = depends::rows(&text).unwrap_or_default();
    let mut agents = Vec::new();
    for (id, line, cell) in depends::agents(&text).unwrap_or_default() {
        if cell.is_empty() || matches!(cell.as_str(), "-" | "—" | "–") {
            continue;
        }
        let agent = Client::from_name(&cell.to_lowercase()).ok_or_else(|| {
            Error::Refused(format!(
                "{} line {line}: task {id} names the agent \"{cell}\", which is not one taskie run starts; \
                 write claude, codex or gemini in its Agent cell, or leave it empty",
                target.rel("tasks.md")
            ))
        })?;
        agents.push((depends::key(&id), agent));
    }
    let mut tasks = Vec::new();
    let mut titles = Vec::new();
    for row in rows {
        let id = depends::key(&row.id);
        if !crate::model::plan_file::valid_id(&id) {
            return Err(Error::Refused(format!(
                "{}: the task id \"{}\" cannot name a branch; use numbers in the Id column",
                target.rel("tasks.md"),
                row.id
            )));
        }
        let depends = deps
            .iter()
            .find(|d| depends::key(&d.id) == id)
            .map(|d| d.depends.iter().map(|x| depends::key(x)).collect())
            .unwrap_or_default();
        titles.push((id.clone(), row.title.clone()));
        let agent = agents.iter().find(|(a, _)| *a == id).map(|(_, c)| *c);
        tasks.push(Task {
            finished: row.is_finished(),
            id,
            depends,
            agent,
        });
    }
    Ok((tasks, titles))
}

/// Opens the run `opts` asks for.
/// `common`: the repository's common git directory, beside which the run's work
/// directory is kept when no data directory is set.
pub fn open(
    target: &Target,
    checkout: Git,
    common: &std::path::Path,
    opts: &Options,
) -> Result<(Context, RunState), Error> {
    let (tasks, titles) = tasks(target)?;
    let refused = |m: String| Error::Refused(m);
    let plan = target.plan.clone();
    let integration = format!("taskie/{plan}/integration");
    // Known to be missing when a new run checked for it (it refuses one that is there).
    let mut integration_missing = false;
    let (run_dir, entries) = if opts.resume {
        let dir = run::latest(&target.project.taskie(), &plan).ok_or_else(|| {
            refused(format!(
                "plan '{plan}' has no run to resume in .taskie/runs; start one with `taskie run --plan {plan}`"
            ))
        })?;
        let entries = Journal::new(&dir).read();
        (dir, entries)
    } else {
        if let Some(tip) = checkout.ref_target(&format!("refs/heads/{integration}")) {
            return Err(refused(format!(
                "the branch {integration} exists (at {}) from an earlier run of plan '{plan}': `taskie run --resume` \
                 continues that run; to start over, land or delete it (`git branch -D {integration}`)",
                &tip[..tip.len().min(12)]
            )));
        }
        integration_missing = true;
        let branch = checkout.current_branch().ok_or_else(|| {
            refused("the checkout's HEAD is detached: switch to the branch the run should start from and land on".into())
        })?;
        let base = checkout
            .commit_of("HEAD")
            .map_err(|e| refused(e.to_string()))?;
        let id = format!(
            "{plan}-{}-{}",
            crate::clock::now().strftime(crate::clock::COMPACT),
            std::process::id()
        );
        let dir = run::runs_dir(&target.project.taskie()).join(&id);
        let start = Entry::Start {
            run: id,
            plan: plan.clone(),
            agent: opts
                .agents
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(","),
            jobs: opts.jobs,
            land: opts.land,
            branch,
            base,
            integration: integration.clone(),
        };
        Journal::new(&dir).append(&start)?;
        (dir, vec![start])
    };
    let state = RunState::replay(&entries).ok_or_else(|| {
        refused(format!(
            "{} has no start entry: it is not a run's journal",
            Journal::new(&run_dir).path.display()
        ))
    })?;
    // The integration branch starts at the user's HEAD as the run recorded it.
    if integration_missing
        || checkout
            .ref_target(&format!("refs/heads/{integration}"))
            .is_none()
    {
        checkout
            .run(&["branch", &integration, &state.base])
            .map_err(|e| refused(e.to_string()))?;
    }
    let work = run::work_dir(
        &state.run,
        common,
        opts.settings.data_home.as_deref(),
        opts.settings.home.as_deref(),
    );
    fs_err::create_dir_all(&work)?;
    let work = work.canonicalize()?;
    // The run's CLIs as it began with them.
    let mut agents: Vec<Client> = state
        .agent
        .split(',')
        .filter_map(Client::from_name)
        .collect();
    if agents.is_empty() {
        agents = opts.agents.clone();
    }
    if agents.is_empty() {
        agents.push(Client::Claude);
    }
    let progress = crate::commands::run::progress::Progress::new(
        opts.json,
        run_dir.clone(),
        target.project.locks(),
    );
    let ctx = Context {
        progress,
        project: target.project.clone(),
        plan,
        run: state.run.clone(),
        checkout,
        journal: Journal::new(&run_dir),
        work,
        tasks,
        titles,
        agents,
        json: opts.json,
        settings: opts.settings.clone(),
        registered: Default::default(),
        tracked_tasks_md: Default::default(),
    };
    Ok((ctx, state))
}
