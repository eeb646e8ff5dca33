// Benchmark: `unwind ui` start-up. A person runs it and waits for the URL;
// then the page's first request, the timeline, is what they wait for next.
//
//   unwind ui --no-open, spawn -> the URL line on stdout / node -e 0 (spawn -> exit)
//   unwind ui --no-open, spawn -> the first /api/timeline answer
//
// A small real git repository with a recorded snapshot. Every run is a fresh
// process, stopped with SIGINT (untimed) once the timeline has answered;
// runs are interleaved with the baseline and the order rotates each round.

import { spawn } from "node:child_process";
import { request } from "node:http";
import { BASE_ENV, UNWIND, fmtMs, intEnv, measureAsync, median, REPS, smallRepo, standalone, timeExit } from "./lib.mjs";

const UI_REPS = intEnv("BENCH_UI_REPS", Math.max(REPS, 15));

/** ms from spawn to the URL, and to the timeline's answer; then Ctrl-C, which must exit 0. */
function timeUi(cwd) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
    const child = spawn("node", [UNWIND, "ui", "--no-open"], { cwd, env: BASE_ENV, stdio: ["ignore", "pipe", "pipe"] });
    const at = {};
    let out = "";
    let err = "";
    child.stderr.on("data", (b) => (err += b));
    child.stdout.on("data", (b) => {
      out += b;
      const m = /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]+)\n/.exec(out);
      if (!m || at.url !== undefined) return;
      at.url = ms();
      const req = request({ host: "127.0.0.1", port: Number(m[1]), path: "/api/timeline", headers: { "x-unwind-token": m[2] } }, (res) => {
        res.resume();
        res.on("end", () => {
          if (res.statusCode !== 200) return reject(new Error(`timeline answered ${res.statusCode}`));
          at.timeline = ms();
          child.kill("SIGINT");
        });
      });
      req.on("error", reject);
      req.end();
    });
    child.on("exit", (code) => (code === 0 && at.timeline !== undefined ? resolve(at) : reject(new Error(`unwind ui exited ${code}: ${err.trim()}`))));
  });
}

export async function bench() {
  console.log("unwind ui start-up benchmark");
  const repo = smallRepo("ui-repo");

  const commands = {
    node: async () => ({ node: await timeExit("node", ["-e", "0"], repo) }),
    ui: async () => timeUi(repo),
  };
  console.log("  repo      a small git repository (20 files, a store with one snapshot)");
  console.log(`  median of ${UI_REPS} runs after 1 warm-up, interleaved\n`);
  const samples = await measureAsync(commands, UI_REPS);
  const labels = { node: "node -e 0 (baseline: spawn -> exit)", url: "unwind ui: spawn -> URL on stdout", timeline: "unwind ui: spawn -> first /api/timeline answer" };
  const w = Math.max(...Object.values(labels).map((l) => l.length));
  console.log(`  ${"".padEnd(w)}     median        min        max`);
  for (const [k, label] of Object.entries(labels)) {
    const xs = samples[k];
    console.log(`  ${label.padEnd(w)} ${[median(xs), Math.min(...xs), Math.max(...xs)].map((v) => fmtMs(v).padStart(10)).join(" ")}`);
  }
  console.log(`\n  URL / node -e 0   ${(median(samples.url) / median(samples.node)).toFixed(2)}x`);
}

await standalone(import.meta.url, bench);
