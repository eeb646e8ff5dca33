import { alive } from "../sys/procs.js";
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, rmSync } from "node:fs";
import { lastScan, type ScanKind } from "../capture/watched.js";
import { UnwindError } from "../domain/errors.js";
import { ensureStore, storeReady, type Context } from "../repo/context.js";
import { ask, readWatchInfo, watchFiles, type StatusAnswer, type WatchFiles } from "../watch/protocol.js";
import { mkdirPrivate } from "../sys/files.js";

/** `unwind watch status --json` (and what start and stop report). */
export interface WatchReport {
  root: string;
  running: boolean;
  pid: number | null;
  /** When the daemon began watching (ISO), null when none runs. */
  since: string | null;
  /** File system events it has seen; paths changed since the last snapshot took its token. */
  events: number | null;
  pending: number | null;
  /** Whether the next snapshot can be told what changed (false right after start: that snapshot scans everything). */
  canVouch: boolean;
  /** While it cannot vouch, why (just started, an overflow, a watch error, the clock); else null. */
  trouble: string | null;
  /** How this work tree's last snapshot found its changes, while a watcher ran. */
  lastSnapshot: { scan: ScanKind; reason: string | null; at: string } | null;
}

/** How long `watch start` waits for the daemon to watch every directory (a million-file tree takes seconds). */
const START_TIMEOUT_MS = Number(process.env.UNWIND_WATCH_START_TIMEOUT_MS) || 120_000;

async function probe(files: WatchFiles): Promise<StatusAnswer | null> {
  try {
    return await ask<StatusAnswer>(files.socket, { op: "status" }, 1000);
  } catch {
    return null;
  }
}

function report(ctx: Context, s: StatusAnswer | null): WatchReport {
  return {
    root: ctx.root,
    running: s !== null,
    pid: s?.pid ?? null,
    since: s?.since ?? null,
    events: s?.events ?? null,
    pending: s?.pending ?? null,
    canVouch: s?.canVouch ?? false,
    trouble: s ? s.trouble : null,
    lastSnapshot: lastScan(ctx),
  };
}

export async function watchStatus(ctx: Context): Promise<WatchReport> {
  return report(ctx, await probe(watchFiles(ctx.root, ctx.store)));
}

/** Files a daemon that died without stopping left: its info file would otherwise send every snapshot to a dead socket. */
function clearStale(files: WatchFiles): void {
  rmSync(files.info, { force: true });
  rmSync(files.socket, { force: true });
  rmSync(files.cookies, { recursive: true, force: true });
}

/**
 * Starts the daemon for this root (`daemon`: the path of dist/watch.cjs),
 * detached, and returns once it watches everything; one already running is
 * left as it is (`started: false`).
 */
export async function watchStart(ctx: Context, daemon: string): Promise<WatchReport & { started: boolean }> {
  // The cookie sync relies on inotify: every watch on one descriptor, events in the kernel's order. Elsewhere fs.watch promises no such order.
  if (process.platform !== "linux") throw new UnwindError("E_WATCH", `the watcher is built on Linux's inotify; not available on ${process.platform}`, { hint: "snapshots work as before without it" });
  if (!storeReady(ctx)) await ensureStore(ctx);
  const files = watchFiles(ctx.root, ctx.store);
  const running = await probe(files);
  if (running) return { ...report(ctx, running), started: false };
  clearStale(files);
  mkdirPrivate(files.dir);
  const log = openSync(files.log, "a");
  let exited: number | null = null;
  try {
    const child = spawn(process.execPath, [daemon, ctx.root, ctx.store], { detached: true, stdio: ["ignore", log, log], cwd: "/" });
    child.on("exit", (code) => {
      exited = code ?? 1;
    });
    child.unref();
  } finally {
    closeSync(log);
  }
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    // The info file is written once every directory is watched; another start racing this one may have won.
    if (existsSync(files.info)) {
      const s = await probe(files);
      if (s) return { ...report(ctx, s), started: true };
    }
    if (exited !== null && !existsSync(files.info)) {
      throw new UnwindError("E_WATCH", `the watcher could not start: ${lastLine(files.log) || `it exited with ${exited}`}`, { hint: `see ${files.log}` });
    }
    if (Date.now() > deadline) throw new UnwindError("E_WATCH", `the watcher did not start within ${START_TIMEOUT_MS / 1000} s`, { hint: `see ${files.log}` });
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Stops this root's daemon; says whether one was running. Files a killed one left are cleared either way. */
export async function watchStop(ctx: Context): Promise<WatchReport & { stopped: boolean }> {
  const files = watchFiles(ctx.root, ctx.store);
  const running = await probe(files);
  if (!running) {
    clearStale(files);
    return { ...report(ctx, null), stopped: false };
  }
  await ask(files.socket, { op: "stop" }, 2000).catch(() => undefined);
  const deadline = Date.now() + 5000;
  while (alive(running.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  // It answered with this pid a moment ago: still our daemon, stuck.
  if (alive(running.pid)) process.kill(running.pid, "SIGKILL");
  if (readWatchInfo(files)?.instance === running.instance) clearStale(files);
  return { ...report(ctx, null), pid: running.pid, stopped: true };
}

function lastLine(file: string): string {
  try {
    return readFileSync(file, "utf8").trim().split("\n").pop() ?? "";
  } catch {
    return "";
  }
}
