import { checkName } from "../domain/paths.js";
import { createHash } from "node:crypto";
import { captureEvent } from "../capture/capture.js";
import type { CaptureEvent, Phase } from "../capture/event.js";
import { usage } from "../domain/errors.js";
import { ensureStore, type Context } from "../repo/context.js";
import { taskName } from "../scope/resolve.js";
import type { Harness } from "../capture/harness/rules.js";
import { loadMcpAllow, MCP_ALLOW, saveMcpAllow, type McpAllow } from "../store/config.js";

export type { Harness };

export interface RecordOptions {
  session: string;
  phase: string;
  task?: string | undefined;
  /** The run capsule the capture is made inside (the CLI passes `UNWIND_RUN`); a value that is no run id is left off. */
  run?: string | undefined;
  agent?: string | undefined;
  tool?: string | undefined;
  call?: string | undefined;
  /** The directory relative PATHs are resolved from (default: the process's). */
  cwd?: string | undefined;
}

export interface RecordReport {
  session: string;
  phase: "pre" | "post";
  call: string;
  files: string[];
  /** The snapshot taken for a tree capture; null for file captures. */
  snapshot: string | null;
  /** How many PATHs were not captured (see `status`); the command exits 1 when any were. */
  skipped: number;
}

/**
 * `unwind record`: the generic capture for orchestrators without a hook
 * format of their own. Unlike a hook, it reports failures with an exit code:
 * the caller asked for this capture explicitly.
 */
/** The options of a capture, checked before anything is read or written; the task label it carries. */
export function checkRecord(opts: RecordOptions): string | undefined {
  if (opts.phase !== "pre" && opts.phase !== "post") throw usage(`--phase ${opts.phase}: expected pre or post`);
  if (!opts.session.trim()) throw usage("--session is empty");
  return taskName(opts.task);
}

export async function record(ctx: Context, paths: readonly string[], opts: RecordOptions): Promise<RecordReport> {
  const task = checkRecord(opts);
  await ensureStore(ctx);
  const session = opts.session.includes(":") ? opts.session : `record:${opts.session}`;
  const tool = opts.tool ?? "record";
  // Without --call, pre and post of the same tool on the same paths pair up by that key, and
  // the capture gives each pair an id of its own: the same capture twice is two calls.
  const call =
    opts.call ??
    "r-" +
      createHash("sha256")
        .update([session, tool, ...[...paths].sort()].join("\0"))
        .digest("hex")
        .slice(0, 16);
  const ev: CaptureEvent = {
    harness: session.slice(0, session.indexOf(":")),
    session,
    phase: opts.phase as Phase,
    tool,
    call,
    cwd: opts.cwd ?? process.cwd(),
    ...(opts.agent ? { agent: opts.agent } : {}),
    target: paths.length > 0 ? { kind: "files", paths: [...paths] } : { kind: "tree" },
    ...(opts.call === undefined ? { pairing: "key" as const } : {}),
  };
  const records = await captureEvent(
    { mode: ctx.mode, root: ctx.root, store: ctx.store, objectFormat: ctx.objectFormat, ctx },
    ev,
    { ...(task ? { task } : {}), ...(opts.run && runLabel(opts.run) ? { run: opts.run } : {}) },
    120_000,
  );
  // This capture's own records: the others closed calls of the session still open.
  const own = records.filter((r) => r.closedBy === undefined);
  const files = own.flatMap((r) => (r.kind === "file" ? [r.path] : []));
  const tree = own.find((r) => r.kind === "tree");
  return { session, phase: opts.phase as Phase, call: own[0]?.call ?? call, files, snapshot: tree && tree.kind === "tree" ? tree.snapshot : null, skipped: paths.length - files.length };
}

/**
 * Creates the store and merges unwind's hooks into each named harness's
 * project settings (idempotent); with `mcp`, also registers `unwind mcp` in
 * each one's MCP configuration. `command`: the hook command's binary (shell
 * quoted); `bin`: the binary the MCP client runs (default: this one);
 * `mcpAllow`: what an agent may take back over MCP, kept in the store's
 * config.json (SPEC section 13).
 */
export async function init(
  ctx: Context,
  harnesses: readonly Harness[],
  opts: { command?: string | undefined; mcp?: boolean | undefined; bin?: string | undefined; local?: boolean | undefined; mcpAllow?: string | undefined } = {},
) {
  const allow = opts.mcpAllow;
  if (allow !== undefined && !MCP_ALLOW.includes(allow as McpAllow))
    throw usage(`--mcp-allow ${allow}: expected own or any`, "own: an agent takes back only its own session's work over MCP; any: whatever you could");
  const { HARNESSES } = await import("../capture/harness/index.js");
  const without = opts.mcp ? harnesses.filter((h) => HARNESSES[h].mcp === undefined) : [];
  if (without.length > 0)
    throw usage(`--mcp: unwind does not register its MCP server with ${without.join(", ")} yet`, `run unwind init --${without[0]} without --mcp, and --mcp with the other clients`);
  const { hookCommand, installHooks } = await import("../capture/harness/settings.js");
  const { installOwnFiles, isOwnHarness } = await import("../capture/harness/own-files.js");
  const { installMcpServer } = await import("../capture/harness/mcp-config.js");
  const { HOOK_ENV, hookProgram, nextSteps } = await import("../capture/harness/setup.js");
  const command = opts.command ?? `${HOOK_ENV} ${hookProgram(thisBinary())}`;
  const entry = { command: opts.bin ?? thisBinary(), args: ["mcp"] };
  // Every file is read and checked before any is written: one that cannot be parsed leaves them all as they were.
  const pass = (write: boolean) => {
    try {
      const hooks = harnesses.map((h) => (isOwnHarness(h) ? installOwnFiles(ctx.root, h, hookCommand(h, command), write) : installHooks(ctx.root, h, command, write, opts.local === true)));
      // After the hooks: Gemini CLI keeps both in .gemini/settings.json, so this reads what the hooks wrote.
      const mcp = opts.mcp ? harnesses.map((h) => installMcpServer(ctx.root, h, entry, write)) : [];
      return { hooks, mcp };
    } catch (e) {
      throw usage(e instanceof Error ? e.message : String(e));
    }
  };
  pass(false);
  await ensureStore(ctx);
  const written = pass(true);
  if (allow !== undefined) saveMcpAllow(ctx.store, allow as McpAllow);
  // The steps each client still needs, read from its own files once the hooks are in (not in the checking pass).
  const hooks = written.hooks.map((r) => ({ ...r, command: hookCommand(r.harness, command, Object.keys(HARNESSES[r.harness].events)[0]), next: nextSteps(ctx.root, r.harness) }));
  const { mcp } = written;
  return { store: ctx.store, root: ctx.root, hooks, mcp, mcpAllow: loadMcpAllow(ctx.store) };
}

/** This very binary, by absolute path (Node resolves the script's path), so it works whether or not `unwind` is on PATH. */
function thisBinary(): string {
  return process.argv[1] ?? "unwind";
}

/** Whether `UNWIND_RUN` can name a run (a run id is a ref name without `/`). */
export function runLabel(run: string): boolean {
  return checkName(run) === null && !run.includes("/");
}
