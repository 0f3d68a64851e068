#!/usr/bin/env bash
# The checks of docs/windows.md that only a real Windows machine can make, run by the
# release workflow's `windows` job in Git Bash, with the release binaries in BINDIR:
# each client's registered hook command, run through the shell that client uses on
# Windows, must reach taskie-hook.exe with the event on stdin. The answer to `[1]` (a JSON
# value that is not an object) is taskie-hook's own message, so it proves both.
#
#   bash .ci/wine/real-windows.sh BINDIR
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { # NAME OUTPUT
  if printf '%s' "$2" | grep -q 'not a JSON object'; then
    passed=$((passed + 1)); echo "ok    $1"
  else
    failed=$((failed + 1)); echo "FAIL  $1"; printf '      %s\n' "$2"
  fi
}

# npm's global layout on Windows under a stand-in %APPDATA%: the package's taskie-hook.exe
# in node_modules, and in the prefix (on PATH) npm's sh shim, which starts Node and must
# never be the one run.
appdata=$tmp/appdata
pkg=$appdata/npm/node_modules/taskie/node_modules/taskie-win32-x64/bin
mkdir -p "$pkg"
cp "$bin/taskie-hook.exe" "$pkg/"
printf '#!/bin/sh\necho "npm shim ran"\n' >"$appdata/npm/taskie-hook"
chmod 755 "$appdata/npm/taskie-hook"
export APPDATA
APPDATA=$(cygpath -w "$appdata")
PATH="$appdata/npm:$PATH"

# Claude Code: Git Bash runs the launcher (exec form, or a shell command naming it).
out=$(printf '[1]' | dist/claude/hooks/taskie-stop-hook 2>&1) || true
check "Git Bash: the Claude plugin's launcher ran taskie-hook.exe from npm's layout" "$out"

# command_of CLIENT EVENT ROOT: the client's registered command, its root substituted.
command_of() {
  node -e 'const [f, e, k, r] = process.argv.slice(1);
    const h = require(f).hooks[e][0].hooks[0];
    process.stdout.write((h.commandWindows || h.command).split(k).join(r));' \
    "$PWD/dist/$1/hooks/hooks.json" "$2" "$3" "$(cygpath -w "$PWD/dist/$1")"
}
codex=$(command_of codex Stop '${PLUGIN_ROOT}')
gemini=$(command_of gemini AfterAgent '${extensionPath}')
for ps in pwsh powershell; do
  command -v "$ps" >/dev/null || { failed=$((failed + 1)); echo "FAIL  $ps is not installed"; continue; }
  out=$(printf '[1]' | "$ps" -NoProfile -NonInteractive -Command "$codex" 2>&1) || true
  check "$ps: Codex's commandWindows reached taskie-hook.exe with the event" "$out"
  out=$(printf '[1]' | "$ps" -NoProfile -NonInteractive -Command "$gemini" 2>&1) || true
  check "$ps: Gemini's one command for bash and PowerShell reached taskie-hook.exe with the event" "$out"
done
echo "windows checks: $passed passed, $failed failed"
[ "$failed" = 0 ]
