#!/usr/bin/env bash
# CI for the npm distribution (docs/distribution.md): packs the tarballs with
# dist/npm/pack.sh, installs them with npm into temporary prefixes with no cargo on
# PATH, and runs taskie, taskie-hook and the Claude plugin's launcher (dist/claude/hooks/).
#
#   bash dist/npm/ci-check.sh [--bin-dir DIR]
# --bin-dir packs binaries already built into DIR instead of building the release ones.
# Needs node and npm; uses no network but 127.0.0.1.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pack=(bash "$root/dist/npm/pack.sh")
[ "${1:-}" != --bin-dir ] || pack+=(--bin-dir "$2")

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok    $1"; }
bad() { failed=$((failed + 1)); echo "FAIL  $1"; [ $# -lt 2 ] || printf '      %s\n' "${@:2}"; }
# check NAME COMMAND…: passes when the command succeeds.
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "ci-check: $tool is needed (Node.js)" >&2; exit 1; }
done
tmp=$(mktemp -d)
registry_pid=''
cleanup() {
  [ -z "$registry_pid" ] || kill "$registry_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

version=$(awk -F'"' '/^\[/ { p = ($0 == "[package]") } p && /^version[ \t]*=/ { print $2; exit }' "$root/Cargo.toml")
host=$("${pack[@]}" --host-target)

# The environment of every install and run: no cargo, no user npm config, a fresh HOME.
mkdir -p "$tmp/home" "$tmp/work" "$tmp/empty" "$tmp/out"
: >"$tmp/npmrc"
clean_env=(env -i "HOME=$tmp/home" "XDG_CACHE_HOME=$tmp/home/.cache" "NPM_CONFIG_USERCONFIG=$tmp/npmrc"
  "NPM_CONFIG_UPDATE_NOTIFIER=false" "NPM_CONFIG_FUND=false" "NPM_CONFIG_AUDIT=false")
sys_path=/usr/bin:/bin
# shellcheck disable=SC2016
check "no cargo on the PATH used below ($sys_path)" "${clean_env[@]}" PATH=$sys_path sh -c '! command -v cargo >/dev/null'

# --- pack ------------------------------------------------------------------------------
"${pack[@]}" "$tmp/out" >"$tmp/packed"
main_tgz=$tmp/out/taskie-$version.tgz
host_tgz=$(grep -v "/taskie-$version.tgz\$" "$tmp/packed")
check "pack.sh wrote the main package taskie-$version.tgz" test -f "$main_tgz"
check "pack.sh wrote one platform package for $host ($(basename "$host_tgz"))" test "$(wc -l <"$tmp/packed")" = 2

# static_elf FILE: a Linux binary with no program interpreter (PT_INTERP), so no dynamic
# loader and no libc of the system's: it runs on glibc and musl distributions alike.
static_elf() {
  # shellcheck disable=SC2016 # JavaScript, not shell
  node -e 'const b = require("fs").readFileSync(process.argv[1]);
    if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2) process.exit(1); // ELF, 64-bit
    const off = Number(b.readBigUInt64LE(0x20)), size = b.readUInt16LE(0x36), n = b.readUInt16LE(0x38);
    for (let i = 0; i < n; i++) if (b.readUInt32LE(off + i * size) === 3) process.exit(1);' "$1"
}
if [ "$(uname -s)" = Linux ]; then
  mkdir -p "$tmp/unpacked"
  tar -xzf "$host_tgz" -C "$tmp/unpacked"
  for b in taskie taskie-hook; do
    check "the Linux package's $b is statically linked (no program interpreter)" static_elf "$tmp/unpacked/package/bin/$b"
  done
fi

# The other platforms' packages, with stand-in binaries that fail loudly if ever run.
mkdir -p "$tmp/fake"
for b in taskie taskie-hook taskie.exe taskie-hook.exe; do
  printf '#!/bin/sh\necho "wrong platform package" >&2\nexit 99\n' >"$tmp/fake/$b"
done
for t in $("${pack[@]}" --list-targets); do
  [ "$t" = "$host" ] || "${pack[@]}" --target "$t" --bin-dir "$tmp/fake" --skip-main "$tmp/out" >/dev/null
done

# run_binaries PREFIX HOW: the installed commands, through npm's bin links.
run_binaries() {
  local bin=$1/bin how=$2 out
  out=$("${clean_env[@]}" PATH="$bin:$sys_path" taskie --version 2>&1) || true
  check "$how: taskie --version prints taskie $version" test "$out" = "taskie $version"
  out=$("${clean_env[@]}" PATH="$bin:$sys_path" taskie-hook --version 2>&1) || true
  check "$how: taskie-hook --version prints taskie-hook $version" test "$out" = "taskie-hook $version"
  if out=$(cd "$tmp/work" && echo '{}' | "${clean_env[@]}" PATH="$bin:$sys_path" taskie-hook 2>&1); then
    check "$how: echo '{}' | taskie-hook exits 0 with no answer (no plans here)" test -z "$out"
  else
    bad "$how: echo '{}' | taskie-hook exits 0" "$out"
  fi
}

# --- 1. the tarballs themselves, offline ------------------------------------------------
p1=$tmp/p1
if "${clean_env[@]}" PATH=$sys_path npm install -g --offline --prefix "$p1" --cache "$tmp/cache1" \
  "$main_tgz" "$host_tgz" >"$tmp/install1.log" 2>&1; then
  ok "npm install -g --offline of the two tarballs"
  run_binaries "$p1" "tarballs"
else
  bad "npm install -g --offline of the two tarballs" "$(cat "$tmp/install1.log")"
fi

# --- 2. `npm install -g taskie` from a registry on 127.0.0.1 serving all six platforms -----
node "$root/dist/npm/test-registry.js" "$tmp/out" "$tmp/requests" >"$tmp/port" &
registry_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
registry="http://127.0.0.1:$(cat "$tmp/port")/"
prefix=$tmp/home/.npm-global # a usual user prefix, which the launcher must find
if "${clean_env[@]}" PATH=$sys_path npm install -g --prefix "$prefix" --registry "$registry" \
  --cache "$tmp/cache2" taskie >"$tmp/install2.log" 2>&1; then
  ok "npm install -g taskie (registry on 127.0.0.1)"
  installed=$(cd "$prefix/lib/node_modules" && find . taskie/node_modules -mindepth 1 -maxdepth 1 -name 'taskie-*' 2>/dev/null | sort | tr '\n' ' ')
  want=$(basename "$host_tgz" "-$version.tgz")
  check "npm chose the platform package itself: only $want is installed (found: $installed)" \
    test "$installed" = "taskie/node_modules/$want "
  fetched=$(sed -n 's|^GET /-/tarballs/||p' "$tmp/requests" | sort | tr '\n' ' ')
  check "npm downloaded no other platform's tarball (downloaded: $fetched)" \
    test "$fetched" = "$(printf '%s\n' "taskie-$version.tgz" "$(basename "$host_tgz")" | sort | tr '\n' ' ')"
  run_binaries "$prefix" "registry"
  # A hook registered by hand names the native binary, not npm's Node launcher.
  out=$("${clean_env[@]}" PATH="$prefix/bin:$sys_path" taskie hook-path 2>&1) || true
  check "taskie hook-path names the platform package's native taskie-hook ($out)" \
    test "$out" = "$(cd "$prefix/lib/node_modules/taskie/node_modules/$want/bin" && pwd -P)/taskie-hook"
else
  bad "npm install -g taskie (registry on 127.0.0.1)" "$(cat "$tmp/install2.log")"
fi
kill "$registry_pid" 2>/dev/null || true
registry_pid=''

# --- 3. the main package without its platform package ------------------------------------
p3=$tmp/p3
"${clean_env[@]}" PATH=$sys_path npm install -g --offline --prefix "$p3" --cache "$tmp/cache3" \
  "$main_tgz" >"$tmp/install3.log" 2>&1 || bad "npm install -g --offline of the main tarball alone" "$(cat "$tmp/install3.log")"
out=$(cd "$tmp/work" && echo '{}' | "${clean_env[@]}" PATH="$p3/bin:$sys_path" taskie-hook 2>/dev/null) && rc=0 || rc=$?
check "no platform package: taskie-hook still exits 0 as a hook" test "$rc" = 0
check "no platform package: its answer is one systemMessage naming the tarballs to reinstall, with one prefix" \
  node -e 'const a = JSON.parse(process.argv[1]), m = a.systemMessage || ""; if (Object.keys(a).join() !== "systemMessage" || !m.includes("npm install -g ./taskie-") || !m.startsWith("Taskie: no ") || m.includes("Taskie: Taskie")) process.exit(1)' "$out"
"${clean_env[@]}" PATH="$p3/bin:$sys_path" taskie --version >/dev/null 2>&1 && rc=0 || rc=$?
check "no platform package: taskie exits 1 (rc $rc)" test "$rc" = 1

# --- 3b. test-only switches are not in what users run -----------------------------------
# TASKIE_TEST_NOW moves "now" in test builds only (cargo test's debug binaries): the
# installed release binaries read the real clock whatever it says, so a plan paused until
# 2100 stays paused with the variable set to 2128 (a test build would run the review).
clock=$tmp/clock
mkdir -p "$clock/.taskie/plans/p"
printf '# Plan\n\nDo it.\n' >"$clock/.taskie/plans/p/plan.md"
in_clock() { (cd "$clock" && "${clean_env[@]}" PATH="$p1/bin:$sys_path" TASKIE_TEST_NOW=5000000000 "$@" 2>&1); }
if ! { in_clock taskie init p && in_clock taskie state set paused_until=2100-01-01T00:00:00Z; } >/dev/null; then
  bad "a plan paused until 2100 for the clock checks" "$(in_clock taskie status)"
fi
out=$(in_clock taskie status) || true
check "release taskie ignores TASKIE_TEST_NOW: the plan is still paused until 2100" \
  grep -q 'Paused    until 2100-01-01 00:00 UTC' <<<"$out"
out=$(echo '{"session_id":"ci-1","hook_event_name":"Stop","cwd":"'"$clock"'"}' | in_clock taskie-hook) || true
check "release taskie-hook ignores TASKIE_TEST_NOW: no review, paused until 2100 ($out)" \
  grep -q 'paused until 2100-01-01 00:00 UTC' <<<"$out"

# --- 4. the plugin's launcher ------------------------------------------------------------
# A copy of the Claude Code plugin as the client installs it (no checkout around it, so
# no target/): only the npm install can serve it.
plugin=$tmp/plugin
mkdir -p "$plugin"
cp -R "$root/dist/claude/." "$plugin/"
launcher=$plugin/hooks/taskie-stop-hook
event='{"session_id":"ci-1","hook_event_name":"Stop","cwd":"'$tmp/work'"}'

out=$(echo "$event" | "${clean_env[@]}" PATH="$prefix/bin:$sys_path" "$launcher" 2>&1) && rc=0 || rc=$?
check "launcher, npm bin on PATH: exits 0, no answer (rc $rc, out '$out')" test "$rc:$out" = "0:"
out=$("${clean_env[@]}" PATH="$tmp/empty" "$launcher" --version 2>&1) || true
check "launcher, empty PATH (no node): finds ~/.npm-global's native binary ($out)" test "$out" = "taskie-hook $version"
out=$("${clean_env[@]}" PATH="$tmp/empty" NPM_CONFIG_PREFIX="$p1" HOME="$tmp/empty" "$launcher" --version 2>&1) || true
check "launcher, \$NPM_CONFIG_PREFIX: finds its native binary ($out)" test "$out" = "taskie-hook $version"
mkdir -p "$tmp/home2"
ln -s "$prefix" "$tmp/home2/npm-custom"
printf 'fund=false\nprefix = ~/npm-custom\n' >"$tmp/home2/.npmrc"
out=$("${clean_env[@]}" PATH="$tmp/empty" HOME="$tmp/home2" "$launcher" --version 2>&1) || true
check "launcher, the prefix line of ~/.npmrc: finds its native binary ($out)" test "$out" = "taskie-hook $version"
out=$(echo "$event" | "${clean_env[@]}" PATH="$prefix/bin:$sys_path" TASKIE_HOOK_SKIP=1 "$launcher" 2>&1) || true
check "launcher, TASKIE_HOOK_SKIP=1: prints nothing" test -z "$out"

# Nothing installed: one line, one systemMessage, npm first, cargo second.
mkdir -p "$tmp/nohome"
out=$(echo "$event" | env -i HOME="$tmp/nohome" PATH=$sys_path "$launcher" 2>/dev/null) && rc=0 || rc=$?
check "launcher, nothing installed: exits 0 with one line (rc $rc)" test "$rc:$(printf '%s\n' "$out" | wc -l)" = "0:1"
not_installed_message() {
  node -e 'const a = JSON.parse(process.argv[1]), m = a.systemMessage || "";
    const c = m.indexOf("cargo install --locked --path"), n = m.indexOf("dist/npm/pack.sh");
    if (Object.keys(a).length !== 1 || c < 0 || n < c || m.includes("npm install -g taskie")) process.exit(1)' "$1"
}
check "launcher, nothing installed: one systemMessage, cargo first, then the tarballs ($out)" \
  not_installed_message "$out"
out=$(echo "$event" | env -i HOME="$tmp/nohome" PATH="$tmp/empty" "$launcher" 2>/dev/null) || true
check "launcher, nothing installed, empty PATH: the same message" not_installed_message "$out"

# The launcher is one shell and one exec: it tells taskie-hook where the plugin is
# (TASKIE_PLUGIN_ROOT; taskie-hook compares the versions itself) and stdin reaches it byte
# for byte, even with a PATH that has no cat or sed; it never runs the binary to ask its
# version.
mkdir -p "$tmp/old"
cat >"$tmp/old/taskie-hook" <<EOF
#!/bin/sh
[ "\${1:-}" != --version ] || { echo asked >"$tmp/old/asked"; echo "taskie-hook 0.0.0-old"; exit 0; }
while IFS= read -r line || [ -n "\$line" ]; do printf '%s\n' "\$line"; done >"$tmp/old/stdin"
printf '%s' "\${TASKIE_PLUGIN_ROOT:-}" >"$tmp/old/root"
EOF
chmod +x "$tmp/old/taskie-hook"
stop_old() { printf '%s\n' "$1" | "${clean_env[@]}" PATH="$tmp/old" "$launcher" 2>/dev/null; }
# shellcheck disable=SC2016 # the $ and ` are data
tricky='{"session_id":"s-1","text":"a \\"quoted\\" $HOME `x` \\\\ line\\nend"}'
stop_old "$tricky"
check "launcher: taskie-hook's stdin is the event, byte for byte, with no cat on PATH" \
  cmp -s "$tmp/old/stdin" <(printf '%s\n' "$tricky")
check "launcher: taskie-hook is told where the plugin is" test -s "$tmp/old/root"
check "launcher: the binary is never asked its version" test ! -e "$tmp/old/asked"

echo "npm dist: $passed passed, $failed failed"
[ "$failed" = 0 ]
