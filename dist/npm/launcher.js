"use strict";
// The npm package's `taskie` and `taskie-hook` commands: each runs the native binary of
// the same name from the platform package npm installed beside this one (one of the
// optionalDependencies, chosen by npm from their os/cpu fields). dist/npm/pack.sh
// copies this file into the main package as lib/launcher.js; docs/distribution.md says why.

const { spawn } = require("child_process");
const os = require("os");
const path = require("path");

const pkg = require("../package.json");

// The platform package that serves this machine (on Linux a static musl build, which
// runs on glibc and musl systems alike).
function wanted() {
  return `${pkg.name}-${process.platform}-${process.arch}`;
}

// The binary `name` of the installed platform package, or null.
function findBinary(name) {
  try {
    const dir = path.dirname(require.resolve(`${wanted()}/package.json`));
    return path.join(dir, "bin", process.platform === "win32" ? `${name}.exe` : name);
  } catch {
    return null; // not installed: npm skipped it (--omit=optional), or another platform
  }
}

// The hook must never fail (Claude Code shows a non-zero exit as a hook error): as a hook
// it answers with a message and exits 0; as a command it exits 1.
function fail(name, why) {
  // Said once with one prefix: "taskie-hook: …" on stderr, "Taskie: …" to the client. The
  // reinstall names the tarballs this install came from (the registry has no package yet).
  const text =
    `${why}. Reinstall both tarballs in one command, without --omit=optional: ` +
    `npm install -g ./${wanted()}-${pkg.version}.tgz ./${pkg.name}-${pkg.version}.tgz ` +
    `(bash dist/npm/pack.sh <dir> makes them in a Taskie checkout), or with Rust: ` +
    `cargo install --locked --path <taskie checkout>`;
  process.stderr.write(`${name}: ${text}\n`);
  if (name === "taskie-hook" && process.argv.length <= 2) {
    process.stdout.write(JSON.stringify({ systemMessage: `Taskie: ${text}` }) + "\n");
    process.exit(0);
  }
  process.exit(1);
}

function run(name) {
  const bin = findBinary(name);
  if (!bin) {
    fail(name, `no ${pkg.name} binary for ${process.platform}-${process.arch} is installed (looked for ${wanted()})`);
    return;
  }
  const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });
  // Signals sent to this process go on to the binary; its own exit decides ours.
  const signals = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
  const forward = (sig) => {
    try {
      child.kill(sig);
    } catch {
      // already gone
    }
  };
  for (const s of signals) process.on(s, forward);
  child.on("error", (err) => fail(name, `cannot run ${bin}: ${err.message}`));
  child.on("exit", (code, signal) => {
    for (const s of signals) process.removeListener(s, forward);
    if (signal) {
      // Die of the same signal, so whoever started us sees what happened to the binary.
      try {
        process.kill(process.pid, signal);
      } catch {
        // fall through to the shell's convention
      }
      process.exit(128 + (os.constants.signals[signal] || 0));
    }
    process.exit(code === null ? 1 : code);
  });
}

module.exports = { run };
