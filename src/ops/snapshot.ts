import { listSnapshots, finishSnapshot, resolveSnapshot, takeSnapshot, writeWorkTree, type SnapshotLabels, type SnapshotStart } from "../capture/snapshot.js";
import { usage } from "../domain/errors.js";
import type { IdRef } from "../domain/ids.js";
import type { Context } from "../repo/context.js";
import { withLock } from "../store/lock.js";
import { taskName } from "../scope/resolve.js";
import { listed, type ListOptions } from "./list.js";
import { snapshotInfo, type SnapshotInfo } from "./snapshot-info.js";

export { snapshotInfo, type SnapshotInfo };

/**
 * Takes a tree snapshot of the work tree. `start`: its first phase, begun
 * elsewhere with the lock held (src/capture/snapshot.ts, `startSnapshot`);
 * a start begun for another store is settled and the snapshot taken anew.
 */
export async function snapshot(ctx: Context, labels: SnapshotLabels = {}, opts: { start?: SnapshotStart | null | undefined } = {}): Promise<SnapshotInfo> {
  taskName(labels.task);
  // takeSnapshot keeps only the labels that are set.
  const done = opts.start ? await finishSnapshot(ctx, opts.start, labels) : null;
  return snapshotInfo(done ?? (await withLock(ctx.store, "snapshot", () => takeSnapshot(ctx, labels))));
}

export interface SnapshotsOptions extends ListOptions {
  task?: string | undefined;
  session?: string | undefined;
  /** Every worktree's snapshots, not only this one's. */
  all?: boolean | undefined;
}

/** Snapshots, newest first: this worktree's unless `all`. */
export async function snapshots(ctx: Context, opts: SnapshotsOptions = {}): Promise<{ snapshots: SnapshotInfo[]; total: number }> {
  let all = await listSnapshots(ctx);
  if (!opts.all) all = all.filter((s) => s.root === ctx.root);
  if (opts.task !== undefined) all = all.filter((s) => s.task === opts.task);
  if (opts.session !== undefined) all = all.filter((s) => s.session === opts.session);
  const { items, total } = listed(all, opts, (s) => s.at);
  return { snapshots: items.map(snapshotInfo), total };
}

export interface DiffFile {
  path: string;
  added: number;
  deleted: number;
  binary: boolean;
}

export interface DiffReport {
  from: string;
  /** The later snapshot's id, or null for the work tree now. */
  to: string | null;
  files: DiffFile[];
  /** The patch (`patch: true`), as git prints it without colour; null otherwise. */
  patch: string | null;
}

/** What changed from snapshot `a` to snapshot `b` (default: the work tree now). */
export async function diff(ctx: Context, a: IdRef, b?: IdRef | null, opts: { patch?: boolean | undefined } = {}): Promise<DiffReport> {
  if (b !== undefined && b !== null && typeof b !== "string") throw usage("the later side of a diff is an id");
  const from = await resolveSnapshot(ctx, a);
  const to = b ? await resolveSnapshot(ctx, b) : null;
  const current = to ? null : await writeWorkTree(ctx, { scratch: true });
  try {
    const right = to ? to.tree : current!.tree;
    const env = current?.env ?? {};
    const numstat = await ctx.git(["diff-tree", "-r", "-z", "--no-renames", "--numstat", from.tree, right], { env });
    const patch = opts.patch ? (await ctx.git(["diff-tree", "-r", "-p", "--no-renames", "--no-color", from.tree, right], { env })).stdout.toString("utf8") : null;
    return { from: from.id, to: to ? to.id : null, files: parseNumstat(numstat.stdout.toString("utf8")), patch };
  } finally {
    current?.dispose();
  }
}

function parseNumstat(s: string): DiffFile[] {
  const out = [];
  for (const rec of s.split("\0")) {
    if (!rec) continue;
    const m = /^(-|\d+)\t(-|\d+)\t([\s\S]*)$/.exec(rec.replace(/^\n/, ""));
    if (!m) continue;
    out.push({ path: m[3]!, added: m[1] === "-" ? 0 : Number(m[1]), deleted: m[2] === "-" ? 0 : Number(m[2]), binary: m[1] === "-" });
  }
  return out;
}
