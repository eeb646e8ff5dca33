import { listSnapshots, resolveSnapshot, takeSnapshot, writeWorkTree, type Snapshot } from "../../capture/snapshot.js";
import { Exit, usage } from "../../domain/errors.js";
import { withLock } from "../../store/lock.js";
import type { Globals } from "../globals.js";
import { paint, progress, showPath, table, type Output } from "../render.js";
import { open, taskLabel } from "./common.js";
import { takeEarlySnapshot } from "../early.js";

export async function snapshot(globals: Globals, opts: { task?: string; session?: string; label?: string }): Promise<Output> {
  const labels = { task: taskLabel(opts.task ?? process.env.UNWIND_TASK), session: opts.session, label: opts.label };
  const done = progress("snapshotting");
  let snap: Snapshot;
  try {
    // Started before the command line was parsed (src/cli/early.ts), with the store lock held.
    const early = await takeEarlySnapshot();
    if (early) {
      try {
        snap = await takeSnapshot(early.ctx, labels, {}, early.started);
      } finally {
        early.release();
      }
    } else {
      const ctx = await open(globals);
      snap = await withLock(ctx.store, "snapshot", () => takeSnapshot(ctx, labels));
    }
  } finally {
    done();
  }
  const lines = [`${paint(snap.id, "bold")}  tree ${snap.tree.slice(0, 8)}`];
  for (const p of snap.toolarge) lines.push(`${paint("toolarge", "yellow")}  ${showPath(p)} (over the size cap: not captured)`);
  return { json: snap, human: lines.join("\n"), exit: Exit.ok };
}

export async function snapshots(
  globals: Globals,
  opts: { task?: string; session?: string; limit?: number; all?: boolean },
): Promise<Output> {
  const ctx = await open(globals);
  let list = await listSnapshots(ctx);
  if (!opts.all) list = list.filter((s) => s.root === ctx.root);
  if (opts.task) list = list.filter((s) => s.task === opts.task);
  if (opts.session) list = list.filter((s) => s.session === opts.session);
  if (opts.limit) list = list.slice(0, opts.limit);
  const rows = list.map((s) => [s.id, s.at.replace("T", " ").replace(/\.\d+Z$/, "Z"), s.tree.slice(0, 8), describe(s)]);
  const human = list.length ? table([["ID", "TIME", "TREE", "LABEL"], ...rows]) : "no snapshots";
  return { json: { snapshots: list }, human, exit: Exit.ok };
}

function describe(s: Snapshot): string {
  return [s.label, s.task && `task=${s.task}`, s.session && `session=${s.session}`].filter(Boolean).join(" ");
}

export async function diff(globals: Globals, a: string, b: string | undefined, opts: { stat?: boolean; patch?: boolean }): Promise<Output> {
  if (opts.stat && opts.patch) throw usage("--stat and --patch exclude each other");
  const ctx = await open(globals);
  const from = await resolveSnapshot(ctx, a);
  const to = b ? await resolveSnapshot(ctx, b) : null;
  const now = to ? null : await writeWorkTree(ctx, { scratch: true });
  try {
    const right = to ? to.tree : now!.tree;
    const env = now?.env ?? {};
    const files = await ctx.git(["diff-tree", "-r", "-z", "--no-renames", "--numstat", from.tree, right], { env });
    const stats = parseNumstat(files.stdout.toString("utf8"));
    let human: string;
    if (opts.patch) {
      const color = process.stdout.isTTY && !process.env.NO_COLOR ? "--color=always" : "--no-color";
      human = (await ctx.git(["diff-tree", "-r", "-p", "--no-renames", color, from.tree, right], { env })).stdout.toString("utf8");
    } else {
      human = stats.length
        ? table(stats.map((s) => [s.binary ? "bin" : `+${s.added}`, s.binary ? "" : `-${s.deleted}`, showPath(s.path)]), ["green", "red", null]) +
          `\n${stats.length} path(s) changed`
        : "no changes";
    }
    return { json: { from: from.id, to: to ? to.id : "worktree", files: stats }, human, exit: Exit.ok };
  } finally {
    now?.dispose();
  }
}

function parseNumstat(s: string): { path: string; added: number; deleted: number; binary: boolean }[] {
  const out = [];
  for (const rec of s.split("\0")) {
    if (!rec) continue;
    const m = /^(-|\d+)\t(-|\d+)\t([\s\S]*)$/.exec(rec.replace(/^\n/, ""));
    if (!m) continue;
    out.push({ path: m[3]!, added: m[1] === "-" ? 0 : Number(m[1]), deleted: m[2] === "-" ? 0 : Number(m[2]), binary: m[1] === "-" });
  }
  return out;
}
