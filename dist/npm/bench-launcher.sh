#!/usr/bin/env bash
# Times the Stop hook launcher (hooks/taskie-stop-hook) against taskie-hook alone, for
# each place it can find the binary; docs/distribution.md records the results.
#
#   bash dist/npm/bench-launcher.sh [RUNS]
# Needs hyperfine, node and npm, and a release build (target/release); RUNS defaults
# to 500. Each stop is the cheapest one (no input), so that the launcher's own cost shows.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-500}
rel=${CARGO_TARGET_DIR:-$root/target}/release
[ -x "$rel/taskie-hook" ] || { echo "bench: build first: cargo build --release --locked" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }

# On a shared machine, run ahead of the neighbours when allowed (as benches/hook.rs does).
renice -n -20 $$ >/dev/null 2>&1 || true

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/work" "$tmp/native" "$tmp/h-npm" "$tmp/h-none" "$tmp/h-dev" "$tmp/plugin" "$tmp/dev/dist"
# The Claude Code plugin as the client installs it, and as it runs from a checkout.
cp -R "$root/dist/claude/." "$tmp/plugin/"
cp -R "$root/dist/claude" "$tmp/dev/dist/"
mkdir -p "$tmp/dev/target/release"
ln -s "$rel/taskie-hook" "$tmp/native/taskie-hook"
ln -s "$rel/taskie-hook" "$tmp/dev/target/release/taskie-hook"

# An npm install in ~/.npm-global, from this checkout's tarballs.
mapfile -t tarballs < <(bash "$root/dist/npm/pack.sh" --bin-dir "$rel" "$tmp/out")
NPM_CONFIG_USERCONFIG=/dev/null npm install -g --offline --prefix "$tmp/h-npm/.npm-global" \
  --cache "$tmp/cache" "${tarballs[@]}" >/dev/null 2>&1
npm_bin=$tmp/h-npm/.npm-global/bin

L=$tmp/plugin/hooks/taskie-stop-hook
D=$tmp/dev/dist/claude/hooks/taskie-stop-hook
e="env -i HOME=$tmp/h-none PATH=/usr/bin:/bin"
# The launchers that look things up once keep the answer; warm those caches first.
$e HOME="$tmp/h-dev" "$D" </dev/null >/dev/null
$e PATH="$tmp/native:/usr/bin:/bin" "$L" </dev/null >/dev/null

cd "$tmp/work"
# -N: no shell in between, so stdin is empty and taskie-hook answers "no input", which
# costs what a stop in a project without plans costs.
hyperfine -N --warmup 20 --runs "$runs" --export-json "$tmp/fast.json" \
  -n "taskie-hook alone" "$e $rel/taskie-hook" \
  -n "launcher: binary on PATH (cargo install)" "$e PATH=$tmp/native:/usr/bin:/bin $L" \
  -n "launcher: npm bin on PATH" "$e PATH=$npm_bin:/usr/bin:/bin $L" \
  -n "launcher: ~/.npm-global, not on PATH" "$e HOME=$tmp/h-npm $L" \
  -n "launcher: plugin's target/release (npm prefix cached)" "$e HOME=$tmp/h-dev $D" \
  -n "launcher: not installed (npm prefix cached)" "$e HOME=$tmp/h-dev $L" >&2
hyperfine -N --warmup 3 --runs 30 --export-json "$tmp/slow.json" \
  -n "npm's taskie-hook (Node launcher) alone" "$e $npm_bin/taskie-hook" \
  -n "launcher: not installed, no cache (asks npm)" "env -i PATH=/usr/bin:/bin $L" \
  -n "npm config get prefix" "$e npm config get prefix" >&2
# Medians and minimums: on a shared machine the mean follows the neighbours' load.
# shellcheck disable=SC2016 # JavaScript
node -e '
  const rows = process.argv.slice(1).flatMap((f) => require(f).results);
  const ms = (s) => (s * 1000).toFixed(1);
  console.log("| stop | median ms | min ms | CPU ms (user+sys) | runs |\n|---|---:|---:|---:|---:|");
  for (const r of rows)
    console.log(`| ${r.command} | ${ms(r.median)} | ${ms(r.min)} | ${ms(r.user + r.system)} | ${r.times.length} |`);
' "$tmp/fast.json" "$tmp/slow.json"
