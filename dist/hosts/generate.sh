#!/bin/sh
# Generates what Claude Code, Codex CLI and Gemini CLI read (SPEC §15, §20; docs/hosts.md)
# from one source: the actions (actions/*.md), the launcher (hooks/taskie-stop-hook), the
# crate's version (Cargo.toml) and the tables below. Each client gets a directory of its
# own, holding only what it reads, so that none sees another's files (no warnings) and
# none copies build output (target/) when it installs from a checkout:
#   .claude-plugin/marketplace.json     Claude Code's marketplace: the plugin dist/claude
#   .agents/plugins/marketplace.json    Codex CLI's marketplace: the plugin dist/codex
#   dist/claude/   .claude-plugin/plugin.json, actions/ (the slash commands),
#                  hooks/hooks.json (Stop, run as a program: no shell)
#   dist/codex/    .codex-plugin/plugin.json, skills/<action>/SKILL.md ($taskie:<action>),
#                  actions/, hooks/hooks.json (Stop, for any login shell)
#   dist/gemini/   gemini-extension.json, commands/taskie/<action>.toml (/taskie:<action>),
#                  actions/, hooks/hooks.json (AfterAgent, the same command)
# and in each, hooks/taskie-stop-hook: the launcher, whose build in place is the
# checkout's target/release two directories up.
#
#   sh dist/hosts/generate.sh           write the files
#   sh dist/hosts/generate.sh --check   exit 1, naming them, when any is out of date (CI)
#
# POSIX sh, sed and awk only, so CI and any contributor can run it.
set -eu
cd "$(dirname "$0")/../.."

check=false
case "${1:-}" in
  --check) check=true ;;
  '') ;;
  *) echo "usage: sh dist/hosts/generate.sh [--check]" >&2; exit 2 ;;
esac

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

name=taskie
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || {
  echo "generate.sh: cannot read the version from Cargo.toml" >&2
  exit 1
}
pitch="Plan, tasks and code, each checked by an independent reviewer until it passes twice in a row"
note="Generated from actions/ by dist/hosts/generate.sh: edit those files, then run the script."
# The hook's time limit: 30 minutes (Claude Code and Codex read seconds, Gemini milliseconds).
timeout=1800
status="Taskie: checking for a due review…"

mkdir -p "$out/.claude-plugin" "$out/.agents/plugins"
for client in claude codex gemini; do
  mkdir -p "$out/dist/$client/actions" "$out/dist/$client/hooks"
  cp actions/*.md "$out/dist/$client/actions/"
  # The launcher, one directory deeper than in the checkout: its build in place is the
  # checkout's target/release.
  sed 's|^checkout=\$plugin$|checkout=$plugin/../..|' hooks/taskie-stop-hook \
    >"$out/dist/$client/hooks/taskie-stop-hook"
  chmod 755 "$out/dist/$client/hooks/taskie-stop-hook"
  grep -q '^checkout=\$plugin/\.\./\.\.$' "$out/dist/$client/hooks/taskie-stop-hook" || {
    echo "generate.sh: hooks/taskie-stop-hook has no line 'checkout=\$plugin' to rewrite" >&2
    exit 1
  }
  # The Windows launcher (batch, CRLF), for the clients that run hooks through PowerShell
  # there: the same rewrite.
  sed 's|^set "checkout=%~dp0\.\."|set "checkout=%~dp0..\\..\\.."|' hooks/taskie-stop-hook.cmd \
    >"$out/dist/$client/hooks/taskie-stop-hook.cmd"
  grep -q '^set "checkout=%~dp0\.\.\\\.\.\\\.\."' "$out/dist/$client/hooks/taskie-stop-hook.cmd" || {
    echo "generate.sh: hooks/taskie-stop-hook.cmd has no line 'set \"checkout=%~dp0..\"' to rewrite" >&2
    exit 1
  }
done

cat >"$out/.claude-plugin/marketplace.json" <<EOF
{
  "name": "$name",
  "owner": {
    "name": "Taskie contributors"
  },
  "metadata": {
    "description": "Taskie: plan, tasks and independent review loops for Claude Code",
    "version": "$version"
  },
  "plugins": [
    {
      "name": "$name",
      "source": "./dist/claude",
      "description": "Stateful plan → tasks → implementation workflow with independent reviews run by a Stop hook.",
      "version": "$version",
      "author": {
        "name": "Taskie contributors"
      },
      "license": "MIT",
      "keywords": ["workflow", "planning", "code-review"],
      "category": "development"
    }
  ]
}
EOF
cat >"$out/.agents/plugins/marketplace.json" <<EOF
{
  "name": "$name",
  "owner": {
    "name": "Taskie contributors"
  },
  "plugins": [
    {
      "name": "$name",
      "source": {
        "source": "local",
        "path": "./dist/codex"
      },
      "description": "$pitch; a Stop hook runs the reviews."
    }
  ]
}
EOF

mkdir -p "$out/dist/claude/.claude-plugin"
cat >"$out/dist/claude/.claude-plugin/plugin.json" <<EOF
{
  "name": "$name",
  "version": "$version",
  "description": "Stateful plan → tasks → implementation workflow for Claude Code, where every plan, task list and task is checked by an independent reviewer until it passes twice in a row.",
  "author": {
    "name": "Taskie contributors"
  },
  "license": "MIT",
  "keywords": [
    "workflow",
    "planning",
    "tasks",
    "code-review",
    "tdd",
    "stop-hook"
  ],
  "commands": "./actions"
}
EOF
# Claude Code runs a hook with `args` as a program, with no shell: whatever the user's
# shell, and with CLAUDE_PLUGIN_ROOT substituted as a plain string (spaces and quotes in
# the path are harmless). The launcher finds the plugin from its own path.
cat >"$out/dist/claude/hooks/hooks.json" <<EOF
{
  "description": "Taskie: runs the independent review of a Taskie plan when the agent stops and a review is due",
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "\${CLAUDE_PLUGIN_ROOT}/hooks/taskie-stop-hook",
            "args": [],
            "timeout": $timeout,
            "statusMessage": "$status"
          }
        ]
      }
    ]
  }
}
EOF

mkdir -p "$out/dist/codex/.codex-plugin" "$out/dist/codex/skills"
cat >"$out/dist/codex/.codex-plugin/plugin.json" <<EOF
{
  "name": "$name",
  "version": "$version",
  "description": "$pitch; a Stop hook runs the reviews.",
  "author": {
    "name": "Taskie contributors"
  },
  "license": "MIT",
  "skills": "./skills/",
  "hooks": "./hooks/hooks.json"
}
EOF
# The command for a client that runs it through a shell it chose: the launcher sourced
# into that shell (no second shell: what a POSIX shell, bash or zsh does), and when the
# shell cannot source it (fish and csh fail that command: not their syntax), the launcher
# started with /bin/sh. Every quoted path is single-quoted, which all of them read alike;
# ROOT is the client's placeholder for the plugin directory.
shell_command() {
  printf "TASKIE_PLUGIN_ROOT='%s' . '%s/hooks/taskie-stop-hook'; exec /bin/sh '%s/hooks/taskie-stop-hook'" "$1" "$1" "$1"
}
# The command for PowerShell (Windows): the batch launcher, called with `&` (a quoted path
# alone is only a string to PowerShell).
powershell_command() {
  printf "& '%s/hooks/taskie-stop-hook.cmd'" "$1"
}
# One command for a client with no per-platform field that runs hooks with bash on Unix
# and PowerShell on Windows (Gemini). Both read `set "\" <# "` to the first `;`: bash as
# `set` of one quoted word (\" escapes the quote), PowerShell as `set` (Set-Variable) of
# the variable `\`, after which `<#` opens a comment that `#>` closes. So PowerShell skips
# the POSIX command, and bash never reaches the PowerShell one: the launcher ends in exec
# or exit, and for bash all after ` #>` is a comment. bash's `shift` drops the word `set`
# made its first argument, which the sourced launcher would pass on to taskie-hook.
polyglot_command() {
  printf 'set \\"\\\\\\" <# \\"; shift; %s #> %s' "$(shell_command "$1")" "$(powershell_command "$1")"
}
# Codex runs a hook through the user's login shell (`$SHELL -lc`: sh, bash, zsh, fish…),
# after substituting ${PLUGIN_ROOT} in the text.
cat >"$out/dist/codex/hooks/hooks.json" <<EOF
{
  "description": "Taskie: runs the independent review of a Taskie plan when the agent stops and a review is due",
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "$(shell_command '${PLUGIN_ROOT}')",
            "commandWindows": "$(powershell_command '${PLUGIN_ROOT}')",
            "timeout": $timeout,
            "statusMessage": "$status"
          }
        ]
      }
    ]
  }
}
EOF

mkdir -p "$out/dist/gemini/commands/taskie"
cat >"$out/dist/gemini/gemini-extension.json" <<EOF
{
  "name": "$name",
  "version": "$version",
  "description": "$pitch; an AfterAgent hook runs the reviews."
}
EOF
# Gemini 0.61 runs a hook with `bash -c`, whatever the user's shell, after substituting
# ${extensionPath}: the same command as Codex's, so a Gemini that used the user's shell
# would run it too.
cat >"$out/dist/gemini/hooks/hooks.json" <<EOF
{
  "description": "Taskie: runs the independent review of a Taskie plan when the agent stops and a review is due",
  "hooks": {
    "AfterAgent": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "$(polyglot_command '${extensionPath}')",
            "timeout": ${timeout}000
          }
        ]
      }
    ]
  }
}
EOF

# convert CLIENT ACTION: the action's front matter and body, rewritten for CLIENT.
convert() {
  awk -v client="$1" -v action="$2" -v note="$note" '
    function rewrite(line,   out, i, rest, m) {
      if (client == "codex") {
        gsub(/\$\{CLAUDE_PLUGIN_ROOT\}/, "../..", line)
        gsub(/\$ARGUMENTS/, "(the text given with this skill, if any)", line)
        # /taskie:<action> is the skill $taskie:<action> here.
        out = ""
        while ((i = index(line, "/taskie:")) > 0) {
          out = out substr(line, 1, i - 1) "$taskie:"
          line = substr(line, i + 8)
        }
        return out line
      }
      gsub(/\$\{CLAUDE_PLUGIN_ROOT\}/, "<taskie>", line)
      gsub(/\$ARGUMENTS/, "{{args}}", line)
      return line
    }
    NR == 1 && $0 == "---" { front = 1; next }
    front && $0 == "---" {
      front = 0
      if (client == "codex") {
        print "---"
        print "name: " action
        print "description: " description
        print "---"
        print ""
        print "<!-- " note " -->"
        print ""
        print "Paths starting with `../..` are relative to the folder of this SKILL.md: they are in the Taskie plugin."
        print "Another Taskie action, `$taskie:<action>`, is the skill of that name (`../../skills/<action>/SKILL.md`)."
      } else {
        print "# " note
        print "description = " description
        print "prompt = '\'''\'''\''"
        print "`<taskie>` below is the Taskie extension directory: `gemini extensions list` shows its path (usually ~/.gemini/extensions/taskie)."
      }
      next
    }
    front && /^description: / { description = substr($0, 14); next }
    front { next }
    { print rewrite($0) }
    END { if (client == "gemini") print "'\'''\'''\''" }
  ' "actions/$2.md"
}

for f in actions/*.md; do
  a=${f#actions/}
  a=${a%.md}
  if grep -q "'''" "$f"; then
    echo "generate.sh: $f contains ''' , which cannot stand in a TOML literal string; rephrase it" >&2
    exit 1
  fi
  mkdir -p "$out/dist/codex/skills/$a"
  convert codex "$a" >"$out/dist/codex/skills/$a/SKILL.md"
  convert gemini "$a" >"$out/dist/gemini/commands/taskie/$a.toml"
done

generated=".claude-plugin/marketplace.json .agents/plugins/marketplace.json dist/claude dist/codex dist/gemini"
# Where each client read its files before they had directories of their own.
retired=".claude-plugin/plugin.json .codex-plugin codex gemini-extension.json commands hooks/hooks.json"
if $check; then
  stale=''
  for p in $generated; do
    if ! diff -r "$out/$p" "$p" >/dev/null 2>&1; then
      stale="$stale $p"
    fi
  done
  for p in $retired; do
    if [ -e "$p" ]; then
      stale="$stale $p(remove)"
    fi
  done
  if [ -n "$stale" ]; then
    echo "generate.sh: out of date:$stale. Run: sh dist/hosts/generate.sh" >&2
    exit 1
  fi
  exit 0
fi
for p in $retired; do
  rm -rf "$p"
done
for p in $generated; do
  rm -rf "$p"
  mkdir -p "$(dirname "$p")"
  cp -R "$out/$p" "$p"
done
echo "generate.sh: wrote $generated"
