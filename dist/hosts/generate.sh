#!/bin/sh
# Generates what Codex CLI and Gemini CLI read from this repository (SPEC §20,
# docs/hosts.md) from the one source of the actions, actions/*.md, and from
# .claude-plugin/plugin.json:
#   .codex-plugin/plugin.json           the Codex plugin manifest
#   codex/skills/<action>/SKILL.md       every action as a Codex skill ($taskie:<action>)
#   gemini-extension.json               the Gemini extension manifest
#   commands/taskie/<action>.toml        every action as a Gemini command (/taskie:<action>)
# hooks/hooks.json is written by hand: one file for all three clients.
#
#   sh dist/hosts/generate.sh           write the files
#   sh dist/hosts/generate.sh --check   exit 1, naming them, when any is out of date (CI)
#
# POSIX sh and awk only, so CI and any contributor can run it.
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

# A field of the plugin manifest (a one-line string value).
manifest_field() {
  sed -n "s/^  \"$1\": \"\\(.*\\)\",\$/\\1/p" .claude-plugin/plugin.json | head -n 1
}
name=$(manifest_field name)
version=$(manifest_field version)
[ -n "$name" ] && [ -n "$version" ] || {
  echo "generate.sh: cannot read name and version from .claude-plugin/plugin.json" >&2
  exit 1
}
note="Generated from actions/ by dist/hosts/generate.sh: edit those files, then run the script."

mkdir -p "$out/.codex-plugin" "$out/codex/skills" "$out/commands/taskie"
cat >"$out/.codex-plugin/plugin.json" <<EOF
{
  "name": "$name",
  "version": "$version",
  "description": "Plan, tasks and code, each checked by an independent reviewer until it passes twice in a row; a Stop hook runs the reviews.",
  "author": {
    "name": "Taskie contributors"
  },
  "license": "MIT",
  "skills": "./codex/skills/",
  "hooks": "./hooks/hooks.json"
}
EOF
cat >"$out/gemini-extension.json" <<EOF
{
  "name": "$name",
  "version": "$version",
  "description": "Plan, tasks and code, each checked by an independent reviewer until it passes twice in a row; an AfterAgent hook runs the reviews."
}
EOF

# convert CLIENT FILE: the action's front matter and body, rewritten for CLIENT.
convert() {
  awk -v client="$1" -v action="$2" -v note="$note" '
    function rewrite(line,   out, i, rest, m) {
      if (client == "codex") {
        gsub(/\$\{CLAUDE_PLUGIN_ROOT\}/, "../../..", line)
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
        print "Paths starting with `../../..` are relative to the folder of this SKILL.md: they are in the Taskie plugin."
        print "Another Taskie action, `$taskie:<action>`, is the skill of that name (`../../../codex/skills/<action>/SKILL.md`)."
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
  mkdir -p "$out/codex/skills/$a"
  convert codex "$a" >"$out/codex/skills/$a/SKILL.md"
  convert gemini "$a" >"$out/commands/taskie/$a.toml"
done

generated=".codex-plugin codex gemini-extension.json commands"
if $check; then
  stale=''
  for p in $generated; do
    if ! diff -r "$out/$p" "$p" >/dev/null 2>&1; then
      stale="$stale $p"
    fi
  done
  if [ -n "$stale" ]; then
    echo "generate.sh: out of date:$stale. Run: sh dist/hosts/generate.sh" >&2
    exit 1
  fi
  exit 0
fi
for p in $generated; do
  rm -rf "$p"
  cp -R "$out/$p" "$p"
done
echo "generate.sh: wrote $generated"
