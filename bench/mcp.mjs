// Benchmark: MCP server start-up. A client starts `unwind mcp` when a
// session begins and waits for its `initialize` answer before the agent can
// use any tool, so its start-up next to bare Node is what a person waits for.
//
//   unwind mcp, spawn -> initialize response / node -e 0 (spawn -> exit)
//   unwind mcp, spawn -> tools/list response / node -e 0
//   require(dist/mcp.cjs) alone, and unwind --version, for where the time goes
//
// No target: the figures are reported. Most of the start-up is loading the
// SDK (its zod schemas of the whole protocol, ajv), which a server built on
// it cannot avoid; the server's own set-up and the handshake are a few ms.
//
// A small real git repository with a recorded session (so the server has a
// store to serve). Every run is a fresh process, as a client starts it: the
// JSON-RPC messages are written to its stdin as a client writes them, the
// times are taken when each response line arrives on stdout, then stdin is
// closed and the server's exit awaited (untimed). Runs are interleaved with
// the baseline and the order rotates each round (lib.mjs `measure`, here
// asynchronous because the answers arrive while the process runs).

import { spawn } from "node:child_process";
import { join } from "node:path";
import { BASE_ENV, ROOT, UNWIND, fmtMs, intEnv, measureAsync, median, REPS, smallRepo, standalone, timeExit } from "./lib.mjs";

const MCP_REPS = intEnv("BENCH_MCP_REPS", Math.max(REPS, 21));

// Nothing in the environment names a calling session: the server starts as it would under any client.
const ENV = Object.fromEntries(Object.entries(BASE_ENV).filter(([k]) => !/^(CLAUDE_CODE_SESSION_ID|CLAUDE_PROJECT_DIR|GEMINI_PROJECT_DIR)$/.test(k)));

const INITIALIZE = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } } };
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };
const LIST = { jsonrpc: "2.0", id: 2, method: "tools/list" };

/** One server start: ms from spawn to the initialize response, and to the tools/list response; checks both answers. */
function timeServer(cwd) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn("node", [UNWIND, "mcp"], { cwd, env: ENV, stdio: ["pipe", "pipe", "pipe"] });
    const at = {};
    let out = "";
    let err = "";
    child.on("error", reject);
    child.stderr.on("data", (b) => (err += b));
    child.stdout.on("data", (b) => {
      out += b;
      let nl;
      while ((nl = out.indexOf("\n")) >= 0) {
        const msg = JSON.parse(out.slice(0, nl));
        out = out.slice(nl + 1);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (msg.id === 1) {
          if (msg.result?.serverInfo?.name !== "unwind") return reject(new Error(`bad initialize answer: ${JSON.stringify(msg)}`));
          at.init = ms;
          // What a client does next: say it is initialized, then ask for the tools.
          child.stdin.write(`${JSON.stringify(INITIALIZED)}\n${JSON.stringify(LIST)}\n`);
        } else if (msg.id === 2) {
          if (!Array.isArray(msg.result?.tools) || msg.result.tools.length !== 11) return reject(new Error(`bad tools/list answer: ${JSON.stringify(msg).slice(0, 200)}`));
          at.list = ms;
          child.stdin.end();
        }
      }
    });
    child.on("exit", (code) => (code === 0 && at.list !== undefined ? resolve(at) : reject(new Error(`unwind mcp exited ${code} before answering: ${err.trim()}`))));
    child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
  });
}

export async function bench() {
  console.log("unwind mcp start-up benchmark");
  const repo = smallRepo("mcp-repo");

  const commands = {
    node: async () => ({ node: await timeExit("node", ["-e", "0"], repo, ENV) }),
    version: async () => ({ version: await timeExit("node", [UNWIND, "--version"], repo, ENV) }),
    load: async () => ({ load: await timeExit("node", ["-e", `require(${JSON.stringify(join(ROOT, "dist", "mcp.cjs"))})`], repo, ENV) }),
    mcp: async () => {
      const at = await timeServer(repo);
      return { init: at.init, list: at.list };
    },
  };
  const labels = {
    node: "node -e 0 (baseline: spawn -> exit)",
    version: "unwind --version (spawn -> exit)",
    load: "node -e 'require(\"dist/mcp.cjs\")' (spawn -> exit)",
    init: "unwind mcp: spawn -> initialize response",
    list: "unwind mcp: spawn -> tools/list response",
  };
  console.log("  repo      a small git repository (20 files, a store with one snapshot)");
  console.log("  client    JSON-RPC over the server's stdin/stdout, as an MCP client speaks it");
  console.log(`  median of ${MCP_REPS} runs after 1 warm-up, interleaved\n`);
  const samples = await measureAsync(commands, MCP_REPS);
  const w = Math.max(...Object.values(labels).map((l) => l.length));
  console.log(`  ${"".padEnd(w)}     median        min        max`);
  for (const [k, label] of Object.entries(labels)) {
    const xs = samples[k];
    console.log(`  ${label.padEnd(w)} ${[median(xs), Math.min(...xs), Math.max(...xs)].map((v) => fmtMs(v).padStart(10)).join(" ")}`);
  }
  const med = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, median(xs)]));
  const paired = (a, b) => median(samples[a].map((x, i) => x / samples[b][i]));
  console.log("\n  ratios (of medians; median of per-round ratios in brackets)");
  console.log(`  mcp initialize / node -e 0        ${(med.init / med.node).toFixed(2).padStart(6)}x   [${paired("init", "node").toFixed(2)}x]`);
  console.log(`  mcp tools/list / node -e 0        ${(med.list / med.node).toFixed(2).padStart(6)}x   [${paired("list", "node").toFixed(2)}x]`);
  console.log(`  unwind --version / node -e 0      ${(med.version / med.node).toFixed(2).padStart(6)}x   (the command line's start-up, for scale)`);
  console.log("\n  where the server's start-up goes (differences of medians)");
  console.log(`  loading dist/mcp.cjs (the SDK, zod, ajv, the library)   ${fmtMs(med.load - med.node).padStart(10)}`);
  console.log(`  the server's set-up, stdio and the initialize answer    ${fmtMs(med.init - med.load).padStart(10)}`);
  console.log(`  tools/list after initialize (11 input schemas)          ${fmtMs(med.list - med.init).padStart(10)}`);
}

await standalone(import.meta.url, bench);
