#!/usr/bin/env bash
# Writes Taskie's npm tarballs (docs/distribution.md). This script is the only place
# that knows what the packages contain: their package.json files are generated here.
#
#   bash dist/npm/pack.sh OUTDIR
#       cargo build --release --locked for this host's packaged target (on Linux the
#       static musl one, added with rustup if missing), then pack this host's platform
#       package and the main package into OUTDIR.
#   bash dist/npm/pack.sh --target TRIPLE [--bin-dir DIR] [--skip-main] OUTDIR
#       the platform package of TRIPLE, from the binaries in DIR (prebuilt, e.g. by a
#       cross build) or, without --bin-dir, from `cargo build --release --target TRIPLE`.
#   bash dist/npm/pack.sh --main-only OUTDIR
#       only the main package (it holds no binary, so nothing is built).
#   bash dist/npm/pack.sh --list-targets
#       the target triples that have a platform package, one a line.
#   bash dist/npm/pack.sh --host-target
#       the triple whose package serves this machine (what OUTDIR alone builds).
#
# Prints the path of each tarball it wrote, one a line; what it is doing goes to stderr.
set -euo pipefail

usage() {
  sed -n '5,18p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

root=$(cd "$(dirname "$0")/../.." && pwd)
launcher="$root/dist/npm/launcher.js"

# The npm package names. Platform packages are "<main>-<suffix>".
main_name=taskie

# Linux gets one package per cpu: a static musl build runs on glibc and musl systems
# alike and starts faster than a dynamic one (no loader; docs/performance.md).
# Windows x64 is built with the GNU toolchain (mingw-w64), which cross-builds from Linux:
# the same build CI's Windows tier tests under Wine. Its binaries end in .exe.
# triple                      suffix        os      cpu
platforms='
x86_64-unknown-linux-musl     linux-x64     linux   x64
aarch64-unknown-linux-musl    linux-arm64   linux   arm64
x86_64-apple-darwin           darwin-x64    darwin  x64
aarch64-apple-darwin          darwin-arm64  darwin  arm64
x86_64-pc-windows-gnu         win32-x64     win32   x64
'

# The packaged triple for this machine: the host's, with Linux's libc swapped for musl.
host_target() {
  rustc -vV | sed -n 's/^host: //p' | sed 's/-linux-gnu$/-linux-musl/'
}

target='' bin_dir='' skip_main=0 main_only=0 out=''
while [ $# -gt 0 ]; do
  case $1 in
    --target) [ $# -ge 2 ] || usage; target=$2; shift 2 ;;
    --bin-dir) [ $# -ge 2 ] || usage; bin_dir=$2; shift 2 ;;
    --skip-main) skip_main=1; shift ;;
    --main-only) main_only=1; shift ;;
    --list-targets) printf '%s\n' "$platforms" | awk 'NF { print $1 }'; exit 0 ;;
    --host-target) host_target; exit 0 ;;
    -h | --help) usage ;;
    -*) echo "pack.sh: unknown option $1" >&2; usage ;;
    *) [ -z "$out" ] || usage; out=$1; shift ;;
  esac
done
[ -n "$out" ] || usage
if [ "$main_only" = 1 ] && { [ "$skip_main" = 1 ] || [ -n "$target$bin_dir" ]; }; then
  echo "pack.sh: --main-only takes no --target, --bin-dir or --skip-main" >&2
  exit 2
fi
command -v npm >/dev/null || { echo "pack.sh: npm is needed (it comes with Node.js)" >&2; exit 1; }

# The crate's version: the first `version = "…"` of the [package] table.
version=$(awk -F'"' '/^\[/ { in_pkg = ($0 == "[package]") }
                     in_pkg && /^version[ \t]*=/ { print $2; exit }' "$root/Cargo.toml")
[ -n "$version" ] || { echo "pack.sh: no [package] version in Cargo.toml" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# What the script is doing, on stderr (stdout carries only the tarball paths): a release
# build takes minutes, and silence that long looks like a hang.
say() { echo "pack.sh: $*" >&2; }

# npm pack DIR into OUTDIR; prints the tarball's path.
pack() {
  local file
  say "packing ${1##*/} with npm pack..."
  file=$(cd "$1" && npm pack --silent --pack-destination "$out" 2>/dev/null | tail -n 1)
  [ -f "$out/$file" ] || { echo "pack.sh: npm pack of $1 wrote no tarball" >&2; exit 1; }
  echo "$out/$file"
}

# package.json from a JS object literal, with the shared fields filled in.
write_manifest() { # DIR, then the extra fields as JSON
  # shellcheck disable=SC2016 # JavaScript, not shell
  VERSION=$version EXTRA=$2 node -e '
    const e = process.env, extra = JSON.parse(e.EXTRA);
    const m = Object.assign({ name: "", version: e.VERSION, description: "", license: "MIT" }, extra);
    if (e.GITHUB_REPOSITORY) // set in GitHub Actions: lets npm show the source and
      m.repository = { type: "git", url: `git+${e.GITHUB_SERVER_URL}/${e.GITHUB_REPOSITORY}.git` };
    process.stdout.write(JSON.stringify(m, null, 2) + "\n");' >"$1/package.json"
}

# The platforms row of $target; refuses a target that has no package.
platform_row() {
  local row
  row=$(printf '%s\n' "$platforms" | awk -v t="$target" '$1 == t')
  if [ -z "$row" ]; then
    echo "pack.sh: no npm package for target $target; known targets:" >&2
    printf '%s\n' "$platforms" | awk 'NF { print "  " $1 }' >&2
    exit 1
  fi
  echo "$row"
}

pack_platform() {
  local row suffix os cpu dir name
  row=$(platform_row)
  read -r _ suffix os cpu <<<"$row"
  name="$main_name-$suffix"
  dir="$stage/$name"
  mkdir -p "$dir/bin"
  local exe=''
  [ "$os" != win32 ] || exe=.exe
  for b in taskie taskie-hook; do
    [ -f "$bin_dir/$b$exe" ] || { echo "pack.sh: $bin_dir/$b$exe is missing" >&2; exit 1; }
    cp "$bin_dir/$b$exe" "$dir/bin/$b$exe"
    chmod 755 "$dir/bin/$b$exe"
  done
  write_manifest "$dir" "{ \"name\": \"$name\",
    \"description\": \"The taskie and taskie-hook binaries for $os $cpu; installed by the $main_name package\",
    \"os\": [\"$os\"], \"cpu\": [\"$cpu\"],
    \"files\": [\"bin\"], \"preferUnplugged\": true }"
  cat >"$dir/README.md" <<MD
# $name

The native \`taskie\` and \`taskie-hook\` binaries of Taskie $version for $os $cpu$([ "$os" != linux ] || echo ' (static, any libc)').
Install the \`$main_name\` package instead: npm picks this one for you.
MD
  pack "$dir"
}

pack_main() {
  local dir="$stage/$main_name" deps
  mkdir -p "$dir/bin" "$dir/lib"
  cp "$launcher" "$dir/lib/launcher.js"
  for b in taskie taskie-hook; do
    printf '#!/usr/bin/env node\n"use strict";\nrequire("../lib/launcher.js").run("%s");\n' "$b" >"$dir/bin/$b.js"
    chmod 755 "$dir/bin/$b.js"
  done
  deps=$(printf '%s\n' "$platforms" |
    awk -v m="$main_name" -v v="$version" 'NF { printf "%s\"%s-%s\": \"%s\"", sep, m, $2, v; sep = ", " }')
  write_manifest "$dir" "{ \"name\": \"$main_name\",
    \"description\": \"Taskie for Claude Code: plan, tasks and code, each checked by an independent reviewer (prebuilt taskie and taskie-hook)\",
    \"keywords\": [\"claude-code\", \"plugin\", \"stop-hook\", \"code-review\", \"workflow\"],
    \"bin\": { \"taskie\": \"bin/taskie.js\", \"taskie-hook\": \"bin/taskie-hook.js\" },
    \"files\": [\"bin\", \"lib\"],
    \"engines\": { \"node\": \">=16\" },
    \"optionalDependencies\": { $deps } }"
  cat >"$dir/README.md" <<MD
# $main_name

Taskie $version: the \`taskie\` command line and the \`taskie-hook\` Stop hook for Claude Code,
prebuilt, so no Rust toolchain is needed.

    npm install -g $main_name

npm installs the one \`$main_name-<os>-<cpu>\` package that matches this machine; \`taskie\` and
\`taskie-hook\` run its binaries. Then add the plugin of your agent CLI, as the project's docs/install.md
says.
MD
  pack "$dir"
}

if [ "$main_only" = 0 ]; then
  cargo_target_dir=${CARGO_TARGET_DIR:-$root/target}
  [ -n "$target" ] || target=$(host_target)
  platform_row >/dev/null # before any build: a target without a package is refused at once
  if [ -z "$bin_dir" ]; then
    # A fresh machine has only the host's standard library: add the target's (Rust's
    # musl targets bring their own libc and linker setup, nothing else is needed on x64).
    if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$target"; then
      say "adding the Rust target $target (rustup target add)..."
      rustup target add "$target" >&2
    fi
    say "building the release binaries for $target (cargo build --release; a first build takes a few minutes)..."
    (cd "$root" && cargo build --release --locked --target "$target" >&2)
    bin_dir="$cargo_target_dir/$target/release"
  fi
  pack_platform
fi
[ "$skip_main" = 1 ] || pack_main
