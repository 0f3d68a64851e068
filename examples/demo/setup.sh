# Sourced by run.sh and full-cycle.sh: builds (or finds) the binaries and copies the demo
# project to a temporary directory. Sets `bin` (the directory of taskie and taskie-hook),
# `work` (the copy, removed on exit) and TASKIE_REVIEWER (the fake reviewer).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# TASKIE_BIN_DIR: a directory with the binaries already built (the tests use it);
# otherwise build the debug binaries here.
if [ -n "${TASKIE_BIN_DIR:-}" ]; then
  bin=$TASKIE_BIN_DIR
else
  # Said on stderr, so a first build (about 30 s) is not mistaken for a hang.
  echo "demo: building taskie and taskie-hook (cargo build; the first build takes about 30 s)..." >&2
  cargo build --quiet --bins --manifest-path "$root/Cargo.toml"
  echo "demo: built; running the demo" >&2
  bin=${CARGO_TARGET_DIR:-$root/target}/debug
fi
unset TASKIE_PLAN TASKIE_HOOK_SKIP
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "$here/project/." "$work/"
export TASKIE_REVIEWER="$here/fake-reviewer"
