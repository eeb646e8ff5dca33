// Runs one real client against the fake model server, both inside the
// caller's network namespace (the suite starts this under `unshare -n` with
// loopback up: the namespace's loopback is its own, so the server must live in
// here too). Refuses to start anything when the namespace has any interface
// but `lo`: then nothing can leave the machine.
//
// Usage: node netns-runner.mjs <config.json>
// config: { script, command, args, env, cwd, timeoutMs, templates, out }
//   `{{PORT}}` in args, env values and the files named in `templates` is
//   replaced by the server's port before the client starts.
//   `out` receives stdout.txt, stderr.txt, requests.json and result.json.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeModelServer } from "./fake-model-server.mjs";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = config.out;

function finish(result) {
  writeFileSync(join(out, "result.json"), JSON.stringify(result, null, 2));
  process.exit(result.ok ? 0 : 1);
}

// Only loopback: no other interface, so no route anywhere else.
// /proc/self/net is this process's namespace (/sys/class/net shows the namespace sysfs was mounted in).
const interfaces = readFileSync("/proc/self/net/dev", "utf8")
  .trim()
  .split("\n")
  .slice(2)
  .map((l) => l.split(":")[0].trim());
const routes = readFileSync("/proc/self/net/route", "utf8").trim().split("\n").slice(1);
if (interfaces.some((i) => i !== "lo") || routes.some((r) => !r.startsWith("lo\t"))) {
  finish({ ok: false, refused: `not an isolated network namespace: interfaces ${interfaces.join(", ")}; routes ${routes.join(" | ")}` });
}

const server = await startFakeModelServer(config.script);
const port = String(server.port);
const fill = (s) => s.replaceAll("{{PORT}}", port);
for (const file of config.templates ?? []) writeFileSync(file, fill(readFileSync(file, "utf8")));
const env = Object.fromEntries(Object.entries(config.env).map(([k, v]) => [k, fill(v)]));

const started = Date.now();
// Its own process group: a client that hangs is killed with everything it started (shells, hooks).
const child = spawn(config.command, config.args.map(fill), { cwd: config.cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
const killGroup = () => {
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    /* already gone */
  }
};
let stdout = "";
let stderr = "";
child.stdout.on("data", (d) => (stdout += d));
child.stderr.on("data", (d) => (stderr += d));
let timedOut = false;
const timer = setTimeout(() => {
  timedOut = true;
  killGroup();
}, config.timeoutMs);
child.on("error", (e) => {
  stderr += `\nspawn failed: ${e.message}`;
});
child.on("close", async (code, signal) => {
  clearTimeout(timer);
  // Whatever the client left running (a background shell) goes with it: the next test starts clean.
  killGroup();
  writeFileSync(join(out, "stdout.txt"), stdout);
  writeFileSync(join(out, "stderr.txt"), stderr);
  writeFileSync(join(out, "requests.json"), JSON.stringify(server.log.entries, null, 2));
  await server.close();
  finish({ ok: code === 0 && !timedOut, code, signal, timedOut, ms: Date.now() - started, port: server.port });
});
