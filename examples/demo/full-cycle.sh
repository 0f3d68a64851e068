#!/usr/bin/env bash
# A whole Taskie plan, start to finish, on a copy of examples/demo/project, with the fake
# reviewer instead of Claude: plan review → create-tasks → tasks review → two tasks, each
# with its code review → review of the whole implementation → complete.
#
# The script plays the agent: it writes the files an agent would write and runs the
# `taskie` commands the actions name. taskie-hook plays itself, exactly as Claude Code
# would run it on each stop. With the fake reviewer every cycle goes the same way:
# review #1 fails, #2 and #3 pass, and two passes in a row end the cycle.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
plan="$work/.taskie/plans/demo"
cd "$work"

taskie() { "$bin/taskie" "$@"; }

show_state() {
  printf '   state.json: phase=%s next_phase=%s phase_iteration=%s consecutive_clean=%s review_model=%s current_task=%s\n' \
    "$(taskie state get phase)" "$(taskie state get next_phase)" \
    "$(taskie state get phase_iteration)" "$(taskie state get consecutive_clean)" \
    "$(taskie state get review_model)" "$(taskie state get current_task)"
}

# One stop of the agent; $1 is Claude Code's stop_hook_active (true while it is
# continuing because the hook blocked).
stop() {
  echo "-- the agent stops (stop_hook_active=$1); taskie-hook answers:"
  answer=$(printf '{"hook_event_name":"Stop","cwd":"%s","stop_hook_active":%s}' "$work" "$1" |
    "$bin/taskie-hook")
  printf '   %s\n' "${answer:-(nothing: the stop is allowed silently)}"
  show_state
}

agent() {
  echo
  echo "== agent: $*"
}

run() {
  echo "\$ $*"
  "$@"
}

# A review cycle: $1 is the post-review file name without "-<i>.md".
cycle() {
  stop false
  agent "reads the review, fixes its finding, writes $1-1.md (/taskie:post-…), stops"
  # Each finding is answered by its id, as the post-review actions ask.
  printf '# Post-review\n\nF1: fixed — the finding is addressed and covered by a test.\n' > "$plan/$1-1.md"
  stop true
  agent "review #2 passed but one clean review is not enough: writes $1-2.md, stops"
  printf '# Post-review\n\nNo findings to address.\n' > "$plan/$1-2.md"
  stop true
}

# tasks.md with the statuses of task 1 and task 2.
write_tasks() {
  printf '%s\n' \
    '| Id | Status | Title | Description |' \
    '|----|--------|-------|-------------|' \
    "| 1 | $1 | Parse the name | Read NAME from the arguments; refuse an empty name with exit 1 |" \
    "| 2 | $2 | Print the greeting | Print Hello, NAME! and add tests for both cases |" \
    > "$plan/tasks.md"
}

echo "== start: plan.md is written and \`taskie init demo\` was run (/taskie:new-plan)"
show_state
cycle plan-post-review

agent "the plan review passed; the user runs /taskie:continue-plan"
run taskie continue-plan
agent "writes tasks.md, task-1.md and task-2.md (/taskie:create-tasks)"
write_tasks pending pending
printf '# Task 1: parse the name\n\nAcceptance: `greet ""` exits 1 with a message.\n' > "$plan/task-1.md"
printf '# Task 2: print the greeting\n\nAcceptance: `greet Ada` prints `Hello, Ada!`.\n' > "$plan/task-2.md"
run taskie mark create-tasks
show_state
cycle tasks-post-review

for task in 1 2; do
  agent "a cycle passed; the user runs /taskie:continue-plan"
  run taskie continue-plan
  agent "implements task $task, sets its status to done (/taskie:complete-task)"
  if [ "$task" = 1 ]; then write_tasks done pending; else write_tasks done done; fi
  run taskie mark complete-task --task "$task"
  show_state
  cycle "task-$task-code-post-review"
done

agent "every task passed its code review; the user runs /taskie:continue-plan"
run taskie continue-plan
agent "finds nothing left over (/taskie:continue-task) and stops so the review runs"
run taskie mark continue-task
cycle all-code-post-review

agent "the whole implementation passed; the user runs /taskie:continue-plan"
run taskie continue-plan
show_state
echo
echo "== one more stop: nothing is due, so the hook stays silent"
stop false
echo
run taskie status
echo
echo "== files of the plan"
ls "$plan"
