//! A lane whose CLI runs Taskie's hook twice at each stop: the run's own hook and the
//! user's installed Taskie plugin (docs/run.md, "Your own Taskie plugin in a lane"). The
//! CLIs run a stop's hooks side by side; the second finds the plan busy while the first
//! reviews, and lets the stop go without a review of its own.

use crate::run::{ONE, Repo};
use crate::support::{Fake, write_executable};

/// A fake claude that, at each stop, runs the hook as two hooks of one stop run side by
/// side: the first in the background; once it announces a review in the plan lock (the
/// reviewer then waits for `go`), the second; then it releases the reviewer. The block
/// of either is the stop's answer, as the CLIs combine them.
const TWICE_AGENT: &str = r#"#!/bin/sh
here=${0%/*}
task=${TASKIE_RUN##*:}
settings=""
prev=""
for a; do
  if [ "$prev" = "--settings" ]; then settings="$a"; fi
  prev="$a"
done
cat > /dev/null
hook=$(printf '%s' "$settings" | sed -n 's/.*"command":"\([^"]*\)".*/\1/p')
if [ "$task" != all ]; then
  echo "work of task $task" > "task-$task.txt"
  git add "task-$task.txt" && git commit -q -m "task $task"
fi
lock="$PWD/.taskie/locks/p.lock"
active=false
i=0
while [ $i -lt 12 ]; do
  i=$((i+1))
  input=$(printf '{"hook_event_name":"Stop","cwd":"%s","session_id":"s-%s","stop_hook_active":%s}' "$PWD" "$task" "$active")
  printf '%s' "$input" | eval "$hook" > "$here/first.out" &
  first=$!
  while kill -0 $first 2>/dev/null && [ ! -s "$lock" ]; do sleep 0.02; done
  if [ -s "$lock" ]; then
    printf '%s' "$input" | eval "$hook" >> "$here/second-$task"
    echo >> "$here/second-$task"
    touch "$REVIEWER_GO"
  fi
  wait $first
  answer=$(cat "$here/first.out")
  post=$(printf '%s' "$answer" | sed -n 's/.*write what you did to \([^ ]*\)\. Answer.*/\1/p')
  if [ -z "$post" ]; then break; fi
  printf 'F1: fixed\n' > "$post"
  active=true
done
echo '{"type":"result","subtype":"success","is_error":false,"result":"done"}'
"#;

#[test]
fn a_second_taskie_hook_at_the_same_stop_finds_the_plan_busy_and_reviews_nothing() {
    let repo = Repo::new(ONE);
    write_executable(&repo.root().join("agents/claude"), TWICE_AGENT);
    // The reviewer waits until the second hook has answered.
    repo.reviewer(
        &Fake::pass()
            .extra("while [ ! -f \"$REVIEWER_GO\" ]; do sleep 0.02; done\nrm -f \"$REVIEWER_GO\""),
    );
    let out = repo
        .taskie(&["run", "-j", "1"])
        .env("REVIEWER_GO", repo.root().join("go"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Two clean reviews of the task and two of the whole: each ran once, not twice.
    let calls = std::fs::read_to_string(repo.root().join("reviewer/calls")).unwrap();
    assert_eq!(calls.lines().count(), 4, "{calls}");
    // Each review's stop had its second hook, and each was told the plan was busy.
    for task in ["1", "all"] {
        let second =
            std::fs::read_to_string(repo.root().join(format!("agents/second-{task}"))).unwrap();
        let answers: Vec<&str> = second.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(answers.len(), 2, "task {task}: {second}");
        assert!(
            answers.iter().all(|a| a.contains("is busy")
                && a.contains("systemMessage")
                && !a.contains("decision")
                && !a.contains("additionalContext")),
            "task {task}: {second}"
        );
    }
    assert_eq!(
        repo.git(&["log", "--merges", "--format=%s", "taskie/p/integration"])
            .lines()
            .count(),
        1,
        "merged once"
    );
}
