// Approves a project's Codex hooks the way Codex itself keeps approvals: asks
// `codex app-server` (JSON-RPC over stdio) for `hooks/list`, then writes each
// project hook's `currentHash` into the user config as
//   [hooks.state."<hooks.json path>:<event>:<group>:<handler>"]
//   trusted_hash = "sha256:..."
// Codex computes the hash itself; it covers the event and the handler, so it
// is asked for rather than recomputed here. Prints the hooks list as JSON.
//
// Usage (env: CODEX_HOME, HOME as the client will have them):
//   node codex-approve-hooks.mjs <codex bin> <project dir>
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { join } from "node:path";

const [bin, project] = process.argv.slice(2);
const server = spawn(bin, ["app-server"], { cwd: project, env: process.env, stdio: ["pipe", "pipe", "pipe"] });
let stderr = "";
server.stderr.on("data", (d) => (stderr += d));
const pending = new Map();
let buffered = "";
server.stdout.on("data", (d) => {
  buffered += d;
  for (let i = buffered.indexOf("\n"); i >= 0; i = buffered.indexOf("\n")) {
    const line = buffered.slice(0, i);
    buffered = buffered.slice(i + 1);
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      continue;
    }
    if (message.id !== undefined && pending.has(message.id)) {
      pending.get(message.id)(message);
      pending.delete(message.id);
    }
  }
});
let next = 0;
const call = (method, params) =>
  new Promise((resolve) => {
    const id = ++next;
    pending.set(id, resolve);
    server.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
  });
const timer = setTimeout(() => {
  process.stderr.write(`codex app-server did not answer in time\n${stderr}`);
  server.kill("SIGKILL");
  process.exit(1);
}, 60_000);

await call("initialize", { clientInfo: { name: "unwind-real-clients", version: "1" } });
server.stdin.write(`${JSON.stringify({ method: "initialized" })}\n`);
const listed = await call("hooks/list", { cwds: [project] });
clearTimeout(timer);
server.kill();
if (listed.error) {
  process.stderr.write(`hooks/list failed: ${JSON.stringify(listed.error)}\n${stderr}`);
  process.exit(1);
}
const hooks = (listed.result?.data ?? []).flatMap((d) => d.hooks ?? []).filter((h) => h.source === "project");
const tables = hooks.map((h) => `\n[hooks.state.${JSON.stringify(h.key)}]\ntrusted_hash = ${JSON.stringify(h.currentHash)}\n`).join("");
appendFileSync(join(process.env.CODEX_HOME, "config.toml"), tables);
process.stdout.write(JSON.stringify(hooks, null, 2));
process.exit(0);
