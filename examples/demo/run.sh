#!/usr/bin/env bash
# One plan-review cycle of taskie-hook on a copy of examples/demo/project, with the
# fake reviewer instead of Claude: a dry run, then the real stops.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
hook="$bin/taskie-hook"
plan="$work/.taskie/plans/demo"
stop() { printf '{"hook_event_name":"Stop","cwd":"%s","stop_hook_active":%s}' "$work" "$1" | "$hook"; echo; }

echo "== taskie-hook --dry-run (reads everything, runs and writes nothing)"
"$hook" --dry-run --cwd "$work"
echo
echo "== stop 1: plan-review #1 is due; the reviewer fails it, so the hook blocks"
stop false
echo "== the agent addresses the review and writes its post-review"
# A post-review answers each finding by its id (the review lists them: "> - F1: …").
printf 'F1: fixed — plan.md now says greet keeps the spaces in a name.\n' > "$plan/plan-post-review-1.md"
echo "== stop 2: the hook sees the post-review and runs review #2 (passes: 1 of 2)"
stop true
printf 'No findings to address.\n' > "$plan/plan-post-review-2.md"
echo "== stop 3: review #3 passes too: the cycle is done"
stop true
echo "== state.json now"
cat "$plan/state.json"
echo "== event log"
cat "$work/.taskie/logs/events.jsonl"
