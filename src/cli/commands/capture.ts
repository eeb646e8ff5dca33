import { createHash } from "node:crypto";
import { captureEvent } from "../../capture/capture.js";
import type { CaptureEvent, Phase } from "../../capture/event.js";
import { Exit, usage } from "../../domain/errors.js";
import { ensureStore } from "../../repo/context.js";
import type { Globals } from "../globals.js";
import { showPath, type Output } from "../render.js";
import { open, taskLabel } from "./common.js";

export interface RecordOpts {
  session: string;
  phase: string;
  task?: string;
  agent?: string;
  tool?: string;
  call?: string;
}

/**
 * `unwind record`: the generic capture for orchestrators without a hook
 * format of their own. Unlike a hook, it reports failures with an exit code:
 * the caller asked for this capture explicitly.
 */
export async function record(globals: Globals, paths: string[], opts: RecordOpts): Promise<Output> {
  if (opts.phase !== "pre" && opts.phase !== "post") throw usage(`--phase ${opts.phase}: expected pre or post`);
  if (!opts.session.trim()) throw usage("--session is empty");
  const ctx = await open(globals);
  await ensureStore(ctx);
  const session = opts.session.includes(":") ? opts.session : `record:${opts.session}`;
  const tool = opts.tool ?? "record";
  // Without --call, pre and post of the same tool on the same paths pair up.
  const call = opts.call ?? "r-" + createHash("sha256").update([session, tool, ...[...paths].sort()].join("\0")).digest("hex").slice(0, 16);
  const ev: CaptureEvent = {
    harness: session.slice(0, session.indexOf(":")),
    session,
    phase: opts.phase as Phase,
    tool,
    call,
    cwd: process.cwd(),
    ...(opts.agent ? { agent: opts.agent } : {}),
    target: paths.length > 0 ? { kind: "files", paths } : { kind: "tree" },
  };
  const task = taskLabel(opts.task ?? process.env.UNWIND_TASK);
  const records = await captureEvent({ mode: ctx.mode, root: ctx.root, store: ctx.store, objectFormat: ctx.objectFormat, ctx }, ev, task ? { task } : {}, 120_000);
  const files = records.flatMap((r) => (r.kind === "file" ? [r.path] : []));
  const snapshot = records.find((r) => r.kind === "tree");
  const skipped = paths.length - files.length;
  const human =
    snapshot && snapshot.kind === "tree"
      ? `${session} ${opts.phase} ${call}: snapshot ${snapshot.snapshot}`
      : `${session} ${opts.phase} ${call}: ${files.map(showPath).join(" ") || "nothing"}${skipped > 0 ? ` (${skipped} path(s) skipped: see unwind status)` : ""}`;
  return {
    json: { session, phase: opts.phase, call, files, snapshot: snapshot && snapshot.kind === "tree" ? snapshot.snapshot : null, skipped },
    human,
    exit: skipped > 0 ? Exit.partial : Exit.ok,
  };
}

export async function init(globals: Globals, opts: { claude?: boolean; codex?: boolean; gemini?: boolean }): Promise<Output> {
  const ctx = await open(globals);
  await ensureStore(ctx);
  const { installHooks } = await import("../../capture/harness/settings.js");
  const harnesses = (["claude", "codex", "gemini"] as const).filter((h) => opts[h]);
  const command = hookCommand();
  const results = [];
  for (const h of harnesses) {
    try {
      results.push(installHooks(ctx.root, h, command));
    } catch (e) {
      throw usage(e instanceof Error ? e.message : String(e));
    }
  }
  const lines = [`store ${ctx.store}`];
  for (const r of results) {
    const what = [...r.added.map((e) => `+${e}`), ...r.updated.map((e) => `~${e}`)].join(", ");
    lines.push(`${r.changed ? "updated  " : "unchanged"}  ${r.file}${what ? `  (${what})` : ""}`);
  }
  if (harnesses.length === 0) lines.push("no harness named: pass --claude, --codex and/or --gemini to install hooks");
  return { json: { store: ctx.store, root: ctx.root, hooks: results }, human: lines.join("\n"), exit: Exit.ok };
}

/**
 * The command a harness runs: this very binary, by absolute path, so it works
 * from any directory of the project whether or not `unwind` is on PATH.
 */
function hookCommand(): string {
  const bin = process.argv[1] ?? "unwind";
  return /^[\w./@+-]+$/.test(bin) ? bin : `'${bin.replace(/'/g, `'\\''`)}'`;
}
