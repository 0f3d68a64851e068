#!/bin/bash
# Reliability soak (docs/reliability.md, "Adversarial testing"); not run by cargo test: hostile plan files, concurrent hooks at the log
# rotation boundary, hostile environment values. Prints counts.
set -u
HOOK=${HOOK:-/work/wt-reliability/target/debug/taskie-hook}
TASKIE=${TASKIE:-/work/wt-reliability/target/debug/taskie}
N=${N:-20}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat > "$W/reviewer" <<'R'
#!/bin/sh
for a; do prompt="$a"; done
path=$(printf '%s\n' "$prompt" | sed -n 's/^- Write your review to exactly this file, creating it: //p')
printf '# Review\n\nVERDICT: FAIL\n' > "$path"
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","structured_output":{"verdict":"FAIL"}}'
R
chmod +x "$W/reviewer"
export TASKIE_REVIEWER="$W/reviewer"
unset TASKIE_PLAN TASKIE_HOOK_SKIP
mk() { # fresh project in $1
  rm -rf "$1" "$W/elsewhere"; mkdir -p "$1/.taskie/plans/p"
  printf '# Plan\n' > "$1/.taskie/plans/p/plan.md"
  printf '{"phase":"new-plan","next_phase":"plan-review","phase_iteration":0,"max_reviews":8}' > "$1/.taskie/plans/p/state.json"
}
ok=0; bad=0; hung=0
run_case() { # name, project
  local out rc
  out=$(printf '{"cwd":"%s"}' "$2" | timeout ${T:-20} "$HOOK" 2>/dev/null); rc=$?
  if [ $rc -eq 124 ]; then hung=$((hung+1)); echo "HUNG: $1";
  elif [ $rc -ne 0 ] || ! { [ -z "$out" ] || printf '%s' "$out" | python3 -c 'import json,sys; v=json.load(sys.stdin); assert isinstance(v,dict)'; }; then bad=$((bad+1)); echo "BAD: $1 rc=$rc $out";
  else ok=$((ok+1)); fi
}
for i in $(seq 1 "$N"); do
  P="$W/p$i"
  for c in fifo-state fifo-tasks fifo-lock fifo-events devzero-tasks huge-tasks nonutf8-tasks bom-state badjson-state links-logs links-locks timeout-huge timeout-nan; do
    mk "$P"; d="$P/.taskie/plans/p"
    unset TASKIE_REVIEW_TIMEOUT
    case $c in
      fifo-state) rm "$d/state.json"; mkfifo "$d/state.json";;
      fifo-tasks) mkfifo "$d/tasks.md";;
      fifo-lock) mkdir -p "$P/.taskie/locks"; mkfifo "$P/.taskie/locks/p.lock";;
      fifo-events) mkdir -p "$P/.taskie/logs"; mkfifo "$P/.taskie/logs/events.jsonl";;
      devzero-tasks) ln -s /dev/zero "$d/tasks.md";;
      huge-tasks) truncate -s 100M "$d/tasks.md";;
      nonutf8-tasks) printf '| Id | Status |\n|---|---|\n| 1 | caf\xe9 |\n' > "$d/tasks.md";;
      bom-state) printf '\xef\xbb\xbf{"next_phase":"plan-review","phase_iteration":0}' > "$d/state.json";;
      badjson-state) printf '{"phase": ,}' > "$d/state.json";;
      links-logs) mkdir -p "$P/src"; ln -s ../src "$P/.taskie/logs";;
      links-locks) mkdir -p "$W/elsewhere"; ln -s "$W/elsewhere" "$P/.taskie/locks";;
      timeout-huge) export TASKIE_REVIEW_TIMEOUT=1e300;;
      timeout-nan) export TASKIE_REVIEW_TIMEOUT=NaN;;
    esac
    run_case "$c" "$P"
    # The CLI on the same hostile project must finish too.
    for args in "status" "state set max_reviews=3" "validate" "continue-plan"; do
      (cd "$P" && timeout ${T:-20} "$TASKIE" $args >/dev/null 2>&1); rc=$?
      if [ $rc -eq 124 ]; then hung=$((hung+1)); echo "HUNG: taskie $args on $c";
      elif [ $rc -gt 1 ]; then bad=$((bad+1)); echo "BAD: taskie $args on $c rc=$rc";
      else ok=$((ok+1)); fi
    done
    [ -n "$(ls -A "$P/src" 2>/dev/null)" ] && { bad=$((bad+1)); echo "WROTE INTO src: $c"; }
    [ -n "$(ls -A "$W/elsewhere" 2>/dev/null)" ] && { bad=$((bad+1)); echo "WROTE OUTSIDE: $c"; }
  done
done
echo "bad-input runs: ok=$ok bad=$bad hung=$hung"
# Concurrency at the rotation boundary: a log just below 10 MiB, C hooks at once, R rounds.
C=${C:-200}; R=${R:-5}; lost=0
for round in $(seq 1 "$R"); do
mk "$W/c"; L="$W/c/.taskie/logs"; mkdir -p "$L"
python3 - "$L/events.jsonl" <<'PY'
import sys, json
line = json.dumps({"ts":"x","plan":"other","path":"no-review-due"}) + "\n"
n = (10*1024*1024 - 200) // len(line)
open(sys.argv[1], "w").write(line * n)
print(n, file=open(sys.argv[1] + ".count", "w"))
PY
before=$(cat "$L/events.jsonl.count"); rm "$L/events.jsonl.count"
printf '{"phase":"new-plan","next_phase":null}' > "$W/c/.taskie/plans/p/state.json"
for j in $(seq 1 "$C"); do printf '{"cwd":"%s"}' "$W/c" | "$HOOK" >/dev/null 2>&1 & done; wait
after=$(cat "$L/events.jsonl" "$L/events.jsonl.1" 2>/dev/null | wc -l)
lost=$((lost + before + C - after))
done
echo "rotation: $R rounds of $C concurrent hooks across the 10 MiB boundary, lines lost: $lost"
