// Compares the candidate watching libraries on a large tree, outside the
// suite (it needs @parcel/watcher, which unwind does not depend on):
//
//   npm i --no-save @parcel/watcher@2.6.0 && node bench/watch-libs.mjs DIR
//
// For each: time to start watching DIR, resident memory after start, and the
// delay from creating a file to its event (median of 21), in a fresh process.
import { spawnSync } from "node:child_process";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node bench/watch-libs.mjs DIR");
  process.exit(2);
}

// Each candidate runs in a child of its own, so memory and start-up are its alone.
const child = `
const fs = require("node:fs"), path = require("node:path");
const [kind, dir] = process.argv.slice(1);
const rss0 = process.memoryUsage().rss;
const t0 = performance.now();
let onEvent = () => {};
const seen = (name) => onEvent(String(name));
async function start() {
  if (kind === "parcel") {
    const w = require(process.env.PARCEL_PATH || "@parcel/watcher");
    await w.subscribe(dir, (err, events) => { for (const e of events) seen(e.path); }, { ignore: [".git"] });
  } else if (kind === "recursive") {
    fs.watch(dir, { recursive: true }, (ev, name) => seen(path.join(dir, String(name))));
  } else {
    const walk = (d) => {
      fs.watch(d, (ev, name) => seen(path.join(d, String(name))));
      for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory() && e.name !== ".git") walk(path.join(d, e.name));
    };
    walk(dir);
  }
}
start().then(async () => {
  const startMs = performance.now() - t0;
  const rss = process.memoryUsage().rss - rss0;
  const lat = [];
  for (let i = 0; i < 21; i++) {
    const f = path.join(dir, "a0", "cookie-" + kind + "-" + i);
    const got = new Promise((res) => { onEvent = (p) => { if (p === f) res(); }; });
    const t = performance.now();
    fs.writeFileSync(f, "x");
    await Promise.race([got, new Promise((r) => setTimeout(r, 2000))]);
    lat.push(performance.now() - t);
    fs.rmSync(f);
    await new Promise((r) => setTimeout(r, 20));
  }
  lat.sort((a, b) => a - b);
  console.log(JSON.stringify({ kind, startMs: Math.round(startMs), rssMiB: +(rss / 2 ** 20).toFixed(1), latencyMs: +lat[10].toFixed(2), latencyMaxMs: +lat[20].toFixed(2) }));
  process.exit(0);
});
`;

for (const kind of ["parcel", "recursive", "per-dir"]) {
  const r = spawnSync(process.execPath, ["-e", child, kind, dir], { encoding: "utf8", timeout: 300_000 });
  console.log(r.stdout.trim() || `${kind}: ${r.stderr.trim().split("\n").slice(-3).join(" | ")}`);
}
