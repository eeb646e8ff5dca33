/**
 * The real clients for test/real: each installed from the npm registry at an
 * exact version into a cache outside the repository, and run headless inside
 * a network namespace that has nothing but its own loopback, against the fake
 * model server (fake-model-server.mjs) that netns-runner.mjs starts in there.
 *
 * Versions: UNWIND_REAL_CLAUDE, UNWIND_REAL_CODEX, UNWIND_REAL_GEMINI,
 * UNWIND_REAL_QWEN, UNWIND_REAL_COPILOT override the pinned ones; the cache is `${XDG_CACHE_HOME:-~/.cache}/unwind-real-clients`
 * (UNWIND_REAL_CACHE overrides).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { gitStatus, treeState, unwind } from "../helpers.js";

export type ClientName = "claude" | "codex" | "gemini" | "qwen" | "copilot";

export interface ClientSpec {
  pkg: string;
  bin: string;
  version: string;
  versionEnv: string;
}

/** The versions this suite was written against (payloads seen 2026-12-01: docs/clients.md). */
export const CLIENTS: Record<ClientName, ClientSpec> = {
  claude: { pkg: "@anthropic-ai/claude-code", bin: "claude", version: "2.1.332", versionEnv: "UNWIND_REAL_CLAUDE" },
  codex: { pkg: "@openai/codex", bin: "codex", version: "0.169.0", versionEnv: "UNWIND_REAL_CODEX" },
  gemini: { pkg: "@google/gemini-cli", bin: "gemini", version: "0.61.0", versionEnv: "UNWIND_REAL_GEMINI" },
  qwen: { pkg: "@qwen-code/qwen-code", bin: "qwen", version: "0.24.4", versionEnv: "UNWIND_REAL_QWEN" },
  copilot: { pkg: "@github/copilot", bin: "copilot", version: "1.0.102", versionEnv: "UNWIND_REAL_COPILOT" },
};

const HERE = dirname(fileURLToPath(import.meta.url));
const RUNNER = join(HERE, "netns-runner.mjs");
export const RECORDER = join(HERE, "payload-recorder.mjs");

export function clientVersion(name: ClientName): string {
  const spec = CLIENTS[name];
  return process.env[spec.versionEnv] || spec.version;
}

function cacheRoot(): string {
  if (process.env.UNWIND_REAL_CACHE) return resolve(process.env.UNWIND_REAL_CACHE);
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "unwind-real-clients");
}

/**
 * The client's executable, installed first when the cache does not hold that
 * exact version yet. The install goes to a scratch directory renamed into
 * place when npm succeeded, so a broken install is never taken for a cached one.
 */
export function installClient(name: ClientName): string {
  return installPackage(CLIENTS[name], clientVersion(name));
}

/** installClient for a package and version of the caller's (the clients of opencode-cline.ts). */
export function installPackage(spec: ClientSpec, version: string): string {
  if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version)) throw new Error(`${spec.versionEnv}=${version}: give an exact version (e.g. ${spec.version})`);
  const dir = join(cacheRoot(), `${spec.pkg.replace("/", "__")}@${version}`);
  const bin = join(dir, "node_modules", ".bin", spec.bin);
  if (existsSync(join(dir, ".installed")) && existsSync(bin)) return bin;
  mkdirSync(dirname(dir), { recursive: true });
  const scratch = `${dir}.partial-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const r = spawnSync("npm", ["install", "--prefix", scratch, "--no-audit", "--no-fund", "--no-save", `${spec.pkg}@${version}`], { encoding: "utf8", timeout: 600_000 });
  if (r.status !== 0) {
    rmSync(scratch, { recursive: true, force: true });
    throw new Error(`npm install ${spec.pkg}@${version} failed (exit ${r.status ?? r.signal}):\n${tail(r.stderr ?? String(r.error), 30)}`);
  }
  writeFileSync(join(scratch, ".installed"), `${spec.pkg}@${version}\n`);
  // Another run (another worktree) may have finished the same install meanwhile: keep its copy, which it may be running.
  if (existsSync(join(dir, ".installed")) && existsSync(bin)) {
    rmSync(scratch, { recursive: true, force: true });
    return bin;
  }
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(scratch, dir);
  } catch (e) {
    if (!existsSync(join(dir, ".installed"))) throw e;
    rmSync(scratch, { recursive: true, force: true });
  }
  return bin;
}

/** Why a loopback-only network namespace cannot be had here, or null when it can. */
export function netnsProblem(): string | null {
  const probe = spawnSync("unshare", ["-n", "--", "sh", "-c", "ip link set lo up && cat /proc/self/net/dev /proc/self/net/route"], { encoding: "utf8", timeout: 30_000 });
  if (probe.error) return `cannot run unshare: ${probe.error.message}`;
  if (probe.status !== 0) return `unshare -n with loopback up failed (exit ${probe.status}; needs root or user namespaces, and iproute2's ip): ${probe.stderr.trim()}`;
  const lines = probe.stdout.split("\n");
  const interfaces = lines.filter((l) => /^\s*[\w.-]+:\s+\d/.test(l)).map((l) => l.split(":")[0]!.trim());
  const routes = lines.filter((l) => /^\S+\t[0-9A-F]{8}\t/.test(l));
  if (interfaces.length === 0 || interfaces.some((i) => i !== "lo")) return `the namespace has interfaces other than lo: ${interfaces.join(", ")}`;
  if (routes.some((r) => !r.startsWith("lo\t"))) return `the namespace has a route off loopback: ${routes.join(" | ")}`;
  return null;
}

/** One scripted tool call: the tool's name as the client offers it, and its input. */
export interface Step {
  tool: string;
  input: unknown;
  /** Claude only: the fake server answers with this step that many milliseconds late. */
  delayMs?: number;
}

export interface Script {
  steps: Step[];
  final: string;
  /** Claude Code's subagents: a conversation whose first user message holds the key is served this script instead (fake-model-server.mjs). */
  agents?: Record<string, { steps: Step[]; final: string }>;
}

export interface Payload {
  cwd: string;
  env: Record<string, string>;
  payload: Record<string, unknown>;
  /** The event, where the hook command named it (Copilot CLI's payload does not). */
  event?: string;
}

export interface RunResult {
  ok: boolean;
  refused?: string;
  code: number | null;
  timedOut: boolean;
  ms: number;
  stdout: string;
  stderr: string;
  requests: Array<Record<string, unknown>>;
  payloads: Payload[];
  /** The payloads that reached the matcher probe, and a group with no matcher at all (see addRecorder). */
  probed: Payload[];
  all: Payload[];
  /** The client's stderr tail and the fake server's request log, for failure messages. */
  story: string;
}

const PROMPT = "Do the scripted work.";

/** How the client is brought to run project hooks: the way the suite runs it, the user's way, or not at all. */
export interface TrustOptions {
  /** Codex: `--dangerously-bypass-hook-trust` (default), hooks approved in config.toml, or neither. */
  codexHooks?: "bypass" | "approved" | "none";
  /** Gemini: GEMINI_CLI_TRUST_WORKSPACE=true (default), the folder in trustedFolders.json, or neither. */
  geminiTrust?: "env" | "file" | "none";
  /** Copilot: COPILOT_ALLOW_ALL=true (default; it also trusts the folder), or only --allow-all-tools. */
  copilotTrust?: "env" | "none";
}

const UNSHARE = ["-n", "--", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', process.execPath];

/**
 * Runs `name` headless in `repo` against the fake model server serving
 * `script`, inside `unshare -n`. `work` is a scratch directory of the test's
 * own: the client's HOME, temp dir and configuration live there, so nothing
 * of this machine's user configuration is read or written.
 */
export function runClient(name: ClientName, bin: string, repo: string, script: Script, work: string, trust: TrustOptions = {}, timeoutMs = 120_000): RunResult {
  const home = join(work, "home");
  const env = baseEnv(work);
  const templates: string[] = [];
  let args: string[];
  if (name === "claude") {
    Object.assign(env, {
      ANTHROPIC_BASE_URL: "http://127.0.0.1:{{PORT}}",
      ANTHROPIC_API_KEY: "sk-ant-fake-key-for-the-fake-server",
      // As root, --permission-mode bypassPermissions is refused unless the client is told it is sandboxed.
      IS_SANDBOX: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    });
    args = ["-p", PROMPT, "--permission-mode", "bypassPermissions", "--output-format", "text"];
  } else if (name === "codex") {
    const codexHome = join(work, "codex-home");
    mkdirSync(codexHome, { recursive: true });
    const config = join(codexHome, "config.toml");
    // A model Codex knows: its metadata decides the tool set, and only a known one is offered apply_patch.
    const model = process.env.UNWIND_REAL_CODEX_MODEL || "gpt-5.5";
    writeFileSync(
      config,
      [
        `model = ${JSON.stringify(model)}`,
        `model_provider = "fake"`,
        "check_for_update_on_startup = false",
        "",
        "[model_providers.fake]",
        `name = "fake"`,
        `base_url = "http://127.0.0.1:{{PORT}}/v1"`,
        `wire_api = "responses"`,
        `env_key = "FAKE_OPENAI_API_KEY"`,
        "",
        // Codex runs a project's .codex/hooks.json only in a trusted project.
        `[projects.${JSON.stringify(repo)}]`,
        `trust_level = "trusted"`,
        "",
        "[analytics]",
        "enabled = false",
        "",
      ].join("\n"),
    );
    templates.push(config);
    Object.assign(env, { CODEX_HOME: codexHome, FAKE_OPENAI_API_KEY: "sk-fake-key-for-the-fake-server" });
    const hooks = trust.codexHooks ?? "bypass";
    if (hooks === "approved") {
      // Codex's app-server runs in a namespace of its own too: it reaches out at start (plugin sync).
      const r = spawnSync("unshare", [...UNSHARE, join(HERE, "codex-approve-hooks.mjs"), bin, repo], { env, encoding: "utf8", timeout: 90_000 });
      if (r.status !== 0) throw new Error(`approving the Codex hooks failed (exit ${r.status ?? r.signal}): ${tail(r.stderr ?? String(r.error), 20)}`);
    }
    // Project hooks also need approving (/hooks, or hooks.state in config.toml) or this flag; the sandbox is the namespace.
    args = ["exec", ...(hooks === "bypass" ? ["--dangerously-bypass-hook-trust"] : []), "--dangerously-bypass-approvals-and-sandbox", "--color", "never", PROMPT];
  } else if (name === "qwen") {
    const settings = join(home, ".qwen", "settings.json");
    mkdirSync(dirname(settings), { recursive: true });
    writeFileSync(
      settings,
      JSON.stringify(
        {
          security: { auth: { selectedType: "openai" } },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
          general: { disableAutoUpdate: true, disableUpdateNag: true },
        },
        null,
        2,
      ),
    );
    Object.assign(env, {
      OPENAI_API_KEY: "sk-fake-key-for-the-fake-server",
      OPENAI_BASE_URL: "http://127.0.0.1:{{PORT}}/v1",
      OPENAI_MODEL: "fake-model",
      QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
    });
    // A positional prompt is one-shot (-p is deprecated); --yolo approves every tool.
    args = ["--auth-type", "openai", "--yolo", "--max-session-turns", "30", PROMPT];
  } else if (name === "copilot") {
    // Bring-your-own-model: no GitHub login. COPILOT_ALLOW_ALL=true (exactly "true") also trusts the
    // folder; without trust Copilot CLI silently runs none of the repository's hooks.
    Object.assign(env, {
      COPILOT_PROVIDER_BASE_URL: "http://127.0.0.1:{{PORT}}/v1",
      COPILOT_PROVIDER_API_KEY: "sk-fake-key-for-the-fake-server",
      COPILOT_MODEL: "fake-model",
      COPILOT_OFFLINE: "true",
      COPILOT_AUTO_UPDATE: "false",
    });
    if ((trust.copilotTrust ?? "env") === "env") env.COPILOT_ALLOW_ALL = "true";
    args = ["-p", PROMPT, "--allow-all-tools", "--disable-client-telemetry"];
  } else {
    const settings = join(home, ".gemini", "settings.json");
    mkdirSync(dirname(settings), { recursive: true });
    writeFileSync(
      settings,
      JSON.stringify(
        {
          security: { auth: { selectedType: "gemini-api-key" } },
          telemetry: { enabled: false },
          privacy: { usageStatisticsEnabled: false },
          general: { disableAutoUpdate: true, disableUpdateNag: true },
        },
        null,
        2,
      ),
    );
    Object.assign(env, { GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:{{PORT}}", GEMINI_API_KEY: "fake-key-for-the-fake-server" });
    // Headless Gemini CLI exits 55 in a folder it does not trust (and then runs no hooks).
    const folder = trust.geminiTrust ?? "env";
    if (folder === "env") env.GEMINI_CLI_TRUST_WORKSPACE = "true";
    if (folder === "file") writeFileSync(join(home, ".gemini", "trustedFolders.json"), JSON.stringify({ [repo]: "TRUST_FOLDER" }, null, 2));
    args = ["-p", PROMPT, "--yolo", "--output-format", "text"];
  }

  return runInNamespace(`${name} ${clientVersion(name)}`, bin, args, env, templates, repo, script, work, timeoutMs);
}

/** The environment every client runs in: its HOME, temp dir and configuration in `work`, nothing of this machine's user. */
export function baseEnv(work: string): Record<string, string> {
  const home = join(work, "home");
  for (const d of [home, join(work, "out"), join(work, "tmp")]) mkdirSync(d, { recursive: true });
  return {
    // node first: unwind's hook command is a `#!/usr/bin/env node` script; and this checkout's unwind,
    // should the hook command name it by PATH rather than by its absolute path.
    PATH: [dirname(process.execPath), join(HERE, "..", "..", "bin"), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
    HOME: home,
    TMPDIR: join(work, "tmp"),
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    LANG: "C.UTF-8",
    NO_COLOR: "1",
    TERM: "dumb",
  };
}

/**
 * Runs `bin args` in `repo` with `env` inside `unshare -n`, against the fake
 * model server serving `script` (`{{PORT}}` in args, env values and the
 * `templates` files is its port), and reads back what happened.
 */
export function runInNamespace(
  label: string,
  bin: string,
  args: string[],
  env: Record<string, string>,
  templates: string[],
  repo: string,
  script: Script,
  work: string,
  timeoutMs = 120_000,
): RunResult {
  const out = join(work, "out");
  mkdirSync(out, { recursive: true });
  const configFile = join(work, "runner.json");
  writeFileSync(configFile, JSON.stringify({ script, command: bin, args, env, cwd: repo, timeoutMs, templates, out }, null, 2));
  const r = spawnSync("unshare", [...UNSHARE, RUNNER, configFile], {
    encoding: "utf8",
    timeout: timeoutMs + 30_000,
  });
  const read = (f: string) => (existsSync(join(out, f)) ? readFileSync(join(out, f), "utf8") : "");
  const result = JSON.parse(read("result.json") || "{}") as { ok?: boolean; refused?: string; code?: number | null; timedOut?: boolean; ms?: number };
  const stdout = read("stdout.txt");
  const stderr = read("stderr.txt");
  const requests = JSON.parse(read("requests.json") || "[]") as Array<Record<string, unknown>>;
  const story = [
    `${label}: exit ${result.code ?? r.status}${result.timedOut ? " (timed out)" : ""}${result.refused ? `; REFUSED: ${result.refused}` : ""}`,
    `runner stderr: ${tail(r.stderr ?? "", 10)}`,
    `client stderr (tail):\n${tail(stderr, 25)}`,
    `client stdout (tail):\n${tail(stdout, 10)}`,
    `fake model server requests:\n${requests.map((q) => JSON.stringify({ ...q, tools: undefined })).join("\n")}`,
  ].join("\n");
  return {
    ok: result.ok === true,
    ...(result.refused ? { refused: result.refused } : {}),
    code: result.code ?? null,
    timedOut: result.timedOut === true,
    ms: result.ms ?? 0,
    stdout,
    stderr,
    requests,
    payloads: readPayloads(join(work, "payloads")),
    probed: readPayloads(join(work, "probe")),
    all: readPayloads(join(work, "all")),
    story,
  };
}

/** The hook payloads the recorder kept, in the order they came. */
export function readPayloads(dir: string): Payload[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort((a, b) => (BigInt(a.split("-")[0]!) < BigInt(b.split("-")[0]!) ? -1 : 1))
    .map((f) => {
      const rec = JSON.parse(readFileSync(join(dir, f), "utf8")) as { cwd: string; env: Record<string, string>; payload: string; event?: string };
      return { cwd: rec.cwd, env: rec.env, payload: JSON.parse(rec.payload) as Record<string, unknown>, ...(rec.event ? { event: rec.event } : {}) };
    });
}

/**
 * A matcher that leaves out read-only tools by a negative lookahead (issue 16
 * item 3): whether each client accepts it is the question the probe answers.
 */
export const PROBE_MATCHER: Record<"claude" | "codex" | "gemini", string> = {
  claude: "^(?!(?:Read|Glob|Grep|LS)$).*",
  codex: "^(?!(?:view_image|read_file)$).*",
  gemini: "^(?!(?:read_file|glob|grep_search|list_directory)$).*",
};

/**
 * Adds the payload recorder beside unwind's hook in every group `unwind init`
 * wrote (same events, same matcher), so the payloads unwind saw are kept; and
 * for each of those events two groups of its own: one with PROBE_MATCHER,
 * recording into `<work>/probe` what that matcher lets through, and one with
 * no matcher, recording everything into `<work>/all`, whatever matcher
 * `unwind init` chose.
 */
export function addRecorder(repo: string, name: ClientName, work: string): void {
  const file = join(repo, { claude: ".claude/settings.json", codex: ".codex/hooks.json", gemini: ".gemini/settings.json", qwen: ".qwen/settings.json", copilot: ".github/hooks/unwind.json" }[name]);
  const dir = join(work, "payloads");
  const probe = join(work, "probe");
  const all = join(work, "all");
  for (const d of [dir, probe, all]) mkdirSync(d, { recursive: true });
  if (name === "copilot") {
    addFlatRecorder(file, dir, all);
    return;
  }
  const settings = JSON.parse(readFileSync(file, "utf8")) as { hooks: Record<string, Array<{ matcher?: string; hooks: Array<Record<string, unknown>> }>> };
  const command = `${process.execPath} ${RECORDER} ${dir}`;
  let added = 0;
  for (const groups of Object.values(settings.hooks)) {
    for (const group of groups) {
      const ours = group.hooks.find((h) => typeof h.command === "string" && / hook (claude|codex|gemini|qwen)$/.test(h.command));
      if (ours === undefined) continue;
      group.hooks.push({ ...ours, ...(name === "gemini" ? { name: "payload-recorder" } : {}), command });
      added++;
    }
    // The clients added later have no probe: the recorder beside unwind's hook sees what unwind's own matcher lets through.
    const matcher = (PROBE_MATCHER as Partial<Record<ClientName, string>>)[name];
    if (matcher !== undefined) groups.push({ matcher, hooks: [{ type: "command", ...(name === "gemini" ? { name: "matcher-probe" } : {}), command: `${process.execPath} ${RECORDER} ${probe}` }] });
    groups.push({ hooks: [{ type: "command", ...(name === "gemini" ? { name: "every-call" } : {}), command: `${process.execPath} ${RECORDER} ${all}` }] });
  }
  if (added === 0) throw new Error(`no unwind hook found in ${file} to put the recorder beside`);
  writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
}

/**
 * Copilot CLI's entries sit right under each event, each with its matcher: a
 * recorder entry beside unwind's (same matcher) and one with none, each told
 * the event, which the payload does not carry.
 */
function addFlatRecorder(file: string, dir: string, all: string): void {
  const settings = JSON.parse(readFileSync(file, "utf8")) as { hooks: Record<string, Array<Record<string, unknown>>> };
  let added = 0;
  for (const [event, entries] of Object.entries(settings.hooks)) {
    const ours = entries.find((e) => typeof e.bash === "string" && / hook copilot \w+$/.test(e.bash));
    if (ours === undefined) continue;
    entries.push({ ...ours, bash: `${process.execPath} ${RECORDER} ${dir} ${event}` });
    entries.push({ type: "command", bash: `${process.execPath} ${RECORDER} ${all} ${event}`, timeoutSec: 30 });
    added++;
  }
  if (added === 0) throw new Error(`no unwind hook found in ${file} to put the recorder beside`);
  writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
}

export function tail(text: string, lines: number): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

/** A call as `unwind log --json` lists it. */
export interface LogCall {
  call: string;
  session: string;
  tool: string;
  paths: string[];
}

/** What an undo of a client's session must give back, and what its redo must bring back. */
export interface RoundTrip {
  committed: Record<string, string>;
  afterRun: Record<string, string>;
  afterRunStatus: string;
}

/** Undo of `session` gives back the committed tree exactly, with no conflict; redo of its receipt brings the run's tree back exactly. */
export function expectUndoRedo(repo: string, session: string, o: RoundTrip): void {
  const undo = unwind(repo, ["undo", "--session", session, "--json"]);
  expect(undo.code, `${undo.stdout}\n${undo.stderr}`).toBe(0);
  expect(undo.json.counts.conflict).toBe(0);
  expect(gitStatus(repo)).toBe("");
  expect(treeState(repo)).toEqual(o.committed);
  const redo = unwind(repo, ["redo", undo.json.receipt, "--json"]);
  expect(redo.code, `${redo.stdout}\n${redo.stderr}`).toBe(0);
  expect(gitStatus(repo)).toBe(o.afterRunStatus);
  expect(treeState(repo)).toEqual(o.afterRun);
}
