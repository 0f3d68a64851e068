"use strict";
// A read-only npm registry on 127.0.0.1 for dist/npm/ci-check.sh: it serves the
// tarballs of one directory, so that `npm install -g taskie` can be run the way users
// run it (npm choosing the platform package itself) without the real registry.
//
//   node test-registry.js DIR LOG
// prints the port on stdout, appends one line per request to LOG, and exits on its own
// after 10 minutes at most.

const crypto = require("crypto");
const fs = require("fs");
const http = require("http");
const path = require("path");
const { execFileSync } = require("child_process");

const [dir, log] = process.argv.slice(2);
const packages = new Map(); // name -> { manifest, file, data }

for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".tgz"))) {
  const data = fs.readFileSync(path.join(dir, file));
  const manifest = JSON.parse(
    execFileSync("tar", ["-xzOf", path.join(dir, file), "package/package.json"]),
  );
  packages.set(manifest.name, { manifest, file, data });
}

function packument(name, base) {
  const { manifest, file, data } = packages.get(name);
  const dist = {
    tarball: `${base}/-/tarballs/${file}`,
    shasum: crypto.createHash("sha1").update(data).digest("hex"),
    integrity: "sha512-" + crypto.createHash("sha512").update(data).digest("base64"),
  };
  const version = Object.assign({}, manifest, { _id: `${name}@${manifest.version}`, dist });
  return {
    _id: name,
    name,
    "dist-tags": { latest: manifest.version },
    versions: { [manifest.version]: version },
  };
}

const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split("?")[0]).replace(/^\/+/, "");
  fs.appendFileSync(log, `${req.method} /${url}\n`);
  const base = `http://${req.headers.host}`;
  const send = (status, type, body) => {
    res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
    res.end(body);
  };
  if (url.startsWith("-/tarballs/")) {
    const file = url.slice("-/tarballs/".length);
    const hit = [...packages.values()].find((p) => p.file === file);
    if (hit) return send(200, "application/octet-stream", hit.data);
  } else if (packages.has(url)) {
    return send(200, "application/json", JSON.stringify(packument(url, base)));
  }
  send(404, "application/json", JSON.stringify({ error: "Not found" }));
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${server.address().port}\n`);
});
setTimeout(() => process.exit(0), 10 * 60 * 1000).unref();
