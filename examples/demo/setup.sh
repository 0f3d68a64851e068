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
  # Said on stderr, so a first build is not mistaken for a hang; cargo's own progress
  # (one line per crate it compiles) follows. A first build compiles every dependency:
  # about a minute on two cores; later runs take a second.
  echo "demo: building taskie and taskie-hook (cargo build; a first build compiles every dependency, about a minute on two cores, with cargo's progress below)..." >&2
  cargo build --bins --manifest-path "$root/Cargo.toml"
  echo "demo: built; running the demo" >&2
  bin=${CARGO_TARGET_DIR:-$root/target}/debug
fi
unset TASKIE_PLAN TASKIE_HOOK_SKIP
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "$here/project/." "$work/"
export TASKIE_REVIEWER="$here/fake-reviewer"
