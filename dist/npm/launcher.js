"use strict";
// The npm package's `taskie` and `taskie-hook` commands: each runs the native binary of
// the same name from the platform package npm installed beside this one (one of the
// optionalDependencies, chosen by npm from their os/cpu/libc fields). dist/npm/pack.sh
// copies this file into the main package as lib/launcher.js; docs/distribution.md says why.

const { spawn } = require("child_process");
const os = require("os");
const path = require("path");

const pkg = require("../package.json");

// Linux has two builds per cpu; a static musl binary also runs on glibc systems, the
// glibc one not on musl systems.
function isMusl() {
  try {
    return !process.report.getReport().header.glibcVersionRuntime;
  } catch {
    return false;
  }
}

// The platform packages that could serve this machine, best first.
function wanted() {
  const base = `${pkg.name}-${process.platform}-${process.arch}`;
  if (process.platform !== "linux") return [base];
  return [`${base}-gnu`, `${base}-musl`];
}

// The binary `name` of the first installed platform package that fits, or null.
function findBinary(name) {
  const found = [];
  for (const p of wanted()) {
    try {
      const dir = path.dirname(require.resolve(`${p}/package.json`));
      found.push(path.join(dir, "bin", name));
    } catch {
      // not installed: npm skipped it, or it is another platform's
    }
  }
  // Only when both libc builds are there (npm without libc support) does it matter which.
  if (found.length > 1 && isMusl()) found.reverse();
  return found.length ? found[0] : null;
}

// The hook must never fail (Claude Code shows a non-zero exit as a hook error): as a hook
// it answers with a message and exits 0; as a command it exits 1.
function fail(name, why) {
  const text =
    `Taskie: ${why}. Reinstall with: npm install -g ${pkg.name} ` +
    `(without --omit=optional), or with Rust: cargo install --locked --path <taskie checkout>`;
  process.stderr.write(`${name}: ${text}\n`);
  if (name === "taskie-hook" && process.argv.length <= 2) {
    process.stdout.write(JSON.stringify({ systemMessage: text }) + "\n");
    process.exit(0);
  }
  process.exit(1);
}

function run(name) {
  const bin = findBinary(name);
  if (!bin) {
    fail(name, `no ${pkg.name} binary for ${process.platform}-${process.arch} is installed (looked for ${wanted().join(", ")})`);
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
