#!/usr/bin/env bash
# CI's Windows x64 tier (SPEC §25; docs/windows.md): the cross-built binaries run under
# Wine. Installs what it needs when missing (Debian's mingw-w64 and Wine), makes a Wine
# prefix of its own, then:
#   1. the library's unit tests, built for x86_64-pc-windows-gnu (Job Objects, the lock,
#      atomic replace, npm shims started for real);
#   2. an end-to-end review: taskie.exe init, then taskie-hook.exe on a Stop event with a
#      reviewer compiled for Windows (examples/windows_fake_reviewer.rs), named once as a
#      program and once by an npm-style .cmd shim found on PATH;
#   3. hooks/taskie-stop-hook.cmd (the launcher Codex and Gemini run on Windows) through
#      Wine's cmd, finding taskie-hook.exe in npm's Windows layout;
#   4. the win32-x64 npm package from dist/npm/pack.sh, its binaries run from the tarball.
# Wine is not Windows: docs/windows.md says what only a real Windows machine proves (the
# release workflow's windows job). Wine 8 lacks bcryptprimitives.dll, which every recent
# Rust program imports: the prefix gets the stand-in built from .ci/wine/, for tests only.
#
#   bash .ci/wine/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
started=$(date +%s)
target=x86_64-pc-windows-gnu

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok    $1"; }
bad() { failed=$((failed + 1)); echo "FAIL  $1"; [ $# -lt 2 ] || printf '      %s\n' "${@:2}"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

missing=''
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing="$missing gcc-mingw-w64-x86-64"
command -v wine >/dev/null 2>&1 || missing="$missing wine64 wine"
if [ -n "$missing" ]; then
  sudo=''
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  # shellcheck disable=SC2086 # one word per package
  $sudo apt-get update && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
fi
rustup target add "$target" >/dev/null 2>&1 || rustup target add "$target"

# A prefix of our own, made once and kept (wineboot takes ~20 s; the prefix ~700 MB).
export WINEPREFIX=${TASKIE_WINEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/taskie-wine}
export WINEDEBUG=-all WINEDLLOVERRIDES='mscoree,mshtml=' # no Mono or Gecko installer
mkdir -p "$(dirname "$WINEPREFIX")"
tmp=$(mktemp -d)
cleanup() {
  wineserver -k >/dev/null 2>&1 || true # Wine's server would outlive us by a few seconds
  rm -rf "$tmp"
}
trap cleanup EXIT
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "wine: making the prefix $WINEPREFIX (wineboot -u)"
  wineboot -u >/dev/null 2>&1 || true
  wineserver -w
fi
x86_64-w64-mingw32-gcc -O2 -shared -o "$tmp/bcryptprimitives.dll" \
  .ci/wine/bcryptprimitives.c .ci/wine/bcryptprimitives.def -ladvapi32
cp "$tmp/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine

# --- 1. unit tests ------------------------------------------------------------------------
cargo test --locked --target "$target" --lib -- --test-threads 2

# --- 2. an end-to-end review --------------------------------------------------------------
cargo build --locked --target "$target" --bins --example windows_fake_reviewer
bin=${CARGO_TARGET_DIR:-$root/target}/$target/debug
win() { winepath -w "$1" 2>/dev/null; }
proj=$tmp/project
mkdir -p "$proj/.taskie/plans/p"
printf '# Plan\n\nAdd a search box to the list page.\n' >"$proj/.taskie/plans/p/plan.md"
(cd "$proj" && wine "$bin/taskie.exe" init p >"$tmp/init.out" 2>&1) ||
  bad "taskie.exe init p" "$(cat "$tmp/init.out")"
event() { printf '{"hook_event_name":"Stop","stop_hook_active":false,"cwd":"%s"}' "$(win "$proj" | sed 's/\\/\\\\/g')"; }
clean() { sed -n 's/.*"consecutive_clean": *\([0-9]*\).*/\1/p' "$proj/.taskie/plans/p/state.json"; }

# stop N VERDICT CLEAN REVIEWER HOW [PATH]: one stop after the post-review of review N-1;
# review N must run (its file written, the prompt read on stdin) and leave CLEAN clean
# reviews in a row.
post() {
  [ "$1" = 1 ] || printf 'F1: fixed.\n' >"$proj/.taskie/plans/p/plan-post-review-$(($1 - 1)).md"
}
stop() {
  local n=$1 verdict=$2 want=$3 reviewer=$4 how=$5 path=${6:-}
  post "$n"
  event | (cd "$proj" && TASKIE_REVIEWER=$reviewer TASKIE_FAKE_VERDICT=$verdict TASKIE_FAKE_SAW=$(win "$tmp/saw$n") \
    WINEPATH=$path wine "$bin/taskie-hook.exe" >"$tmp/answer$n" 2>"$tmp/stderr$n") || true
  reviewed "$n" "$want" "$how"
}
reviewed() {
  local n=$1 want=$2 how=$3
  check "review $n ($how): plan-review-$n.md written" test -f "$proj/.taskie/plans/p/plan-review-$n.md"
  check "review $n ($how): $want clean in a row (state: $(clean))" test "$(clean)" = "$want"
  check "review $n ($how): the prompt came on stdin" grep -q '^- Write your review to exactly this file' "$tmp/saw$n"
}
fake=$(win "$bin/examples/windows_fake_reviewer.exe")
stop 1 PASS 1 "$fake" "the reviewer named by its path"
check "review 1: the hook answered JSON" node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$tmp/answer1"

# An npm shim as `npm install -g` writes one for a native program, found on PATH by name.
npm_dir=$tmp/npm
mkdir -p "$npm_dir/node_modules/fakecli/bin"
cp "$bin/examples/windows_fake_reviewer.exe" "$npm_dir/node_modules/fakecli/bin/fakecli.exe"
printf '@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\nCALL :find_dp0\r\n"%%dp0%%\\node_modules\\fakecli\\bin\\fakecli.exe"   %%*\r\n' \
  >"$npm_dir/fakecli.cmd"
stop 2 FAIL 0 fakecli "an npm .cmd shim on PATH" "$(win "$npm_dir")"

# --- 3. the Windows launcher, finding taskie-hook.exe in npm's Windows layout --------------
# Wine sets %APPDATA% itself: npm's default prefix is %APPDATA%\npm inside the Wine prefix.
appdata=$(winepath -u "$(wine cmd /c 'echo %APPDATA%' 2>/dev/null | tr -d '\r')")
pkg=$appdata/npm/node_modules/taskie/node_modules/taskie-win32-x64/bin
rm -rf "$appdata/npm"
plugin=$tmp/plugin
mkdir -p "$plugin/hooks"
cp dist/codex/hooks/taskie-stop-hook.cmd "$plugin/hooks/"
launch() { (cd "$proj" && wine cmd /c "$(win "$plugin/hooks/taskie-stop-hook.cmd")" 2>&1) || true; }
out=$(printf '[1]' | launch)
check "taskie-stop-hook.cmd without taskie-hook.exe answers one systemMessage ($out)" \
  node -e 'const a = JSON.parse(process.argv[1]); if (!/not installed/.test(a.systemMessage)) process.exit(1)' "$out"
mkdir -p "$pkg"
cp "$bin/taskie-hook.exe" "$pkg/"
out=$(printf '[1]' | launch)
check "taskie-stop-hook.cmd ran %APPDATA%\\npm's taskie-hook.exe with the event on stdin ($out)" \
  node -e 'const a = JSON.parse(process.argv[1]); if (!/not a JSON object/.test(a.systemMessage)) process.exit(1)' "$out"
rm -rf "$appdata/npm"
mkdir -p "$tmp/prefix/node_modules/taskie-win32-x64/bin"
cp "$bin/taskie-hook.exe" "$tmp/prefix/node_modules/taskie-win32-x64/bin/"
post 3
event | (cd "$proj" && NPM_CONFIG_PREFIX=$(win "$tmp/prefix") TASKIE_REVIEWER=$fake TASKIE_FAKE_SAW=$(win "$tmp/saw3") \
  wine cmd /c "$(win "$plugin/hooks/taskie-stop-hook.cmd")" >"$tmp/answer3" 2>&1) || true
reviewed 3 1 "through taskie-stop-hook.cmd and a hoisted package under NPM_CONFIG_PREFIX"

# --- 4. the win32-x64 npm package -----------------------------------------------------------
if command -v npm >/dev/null 2>&1; then
  # The debug build stands in for the release one (the same code, minutes less to build);
  # the release workflow packs a release build.
  tgz=$(bash dist/npm/pack.sh --target "$target" --bin-dir "$bin" --skip-main "$tmp/npm-out")
  mkdir -p "$tmp/unpacked"
  tar -xzf "$tgz" -C "$tmp/unpacked"
  check "the win32-x64 package is for os win32, cpu x64" \
    node -e 'const m = require(process.argv[1]); if (m.os[0] !== "win32" || m.cpu[0] !== "x64") process.exit(1)' "$tmp/unpacked/package/package.json"
  version=$(wine "$tmp/unpacked/package/bin/taskie.exe" --version 2>/dev/null | tr -d '\r')
  check "the package's taskie.exe runs ($version)" test -n "$version"
  version=$(wine "$tmp/unpacked/package/bin/taskie-hook.exe" --version 2>/dev/null | tr -d '\r')
  check "the package's taskie-hook.exe runs ($version)" test -n "$version"
else
  bad "npm is needed to pack the win32-x64 package (Node.js)"
fi

echo "windows tier under wine: $passed passed, $failed failed, $(($(date +%s) - started)) s"
[ "$failed" = 0 ]
