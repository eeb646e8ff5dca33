import { join } from "node:path";
import { sha256 } from "../domain/hash.js";
import type { Context } from "../repo/context.js";
import { Receipts, newReceiptId, type Receipt, type ReceiptItem, type ReceiptKind } from "../store/receipts.js";
import type { ContentReader } from "../store/content.js";
import { BlobError, SYNC_FS_FROM } from "../store/cas.js";
import { syncFileSystem } from "../sys/atomic.js";
import { keepInGit } from "../store/kept.js";
import { keptKey, observeOne, sameObserved, stateOf, unchangedSince, type Reuse } from "../capture/observe.js";
import { sortByPath } from "../domain/paths.js";
import { acts, countActions } from "../domain/actions.js";
import type { Action, Observed, StartedBy, Plan, PlanItem, Sha256, Stamp, State } from "../domain/types.js";
import { batchEnd } from "../domain/batch.js";
import { checkoutForms } from "./checkout-form.js";
import { crashPoint } from "./crash.js";
import { collectAsGrown, collectGarbage, collectIfGrown } from "../sys/heap.js";
import { BoundDir, BoundDirs, inDirOf, splitRel } from "../sys/bound-dir.js";
import { clearIntent, writeIntent, type Intent } from "./intent.js";
import { PerformError, ancestorsOf, commitWrite, performDelete, removeEmptiedDirs, stageWrite, type Staged } from "./perform.js";

/** Paths whose temp files are written before any of them is renamed, at most: docs/design.md, "Apply at scale". */
const BATCH_PATHS = 2000;

/** Content in temp files at once, at most (a single larger file still goes alone): what a batch adds to the disk. */
const BATCH_BYTES = 64 * 1024 * 1024;

/** Deletes deepest first, then writes in path order (so a directory can give way to a file, and back). */
export function applyOrder<T extends { path: string; action: Action }>(items: T[]): T[] {
  const depth = (p: string) => p.split("/").length;
  const deletes = items.filter((i) => i.action === "delete").sort((a, b) => depth(b.path) - depth(a.path));
  const writes = items.filter((i) => i.action === "restore" || i.action === "merge");
  return [...deletes, ...writes];
}

/** Turns an item that could not be done into a conflict that changed nothing. */
export function demote(item: ReceiptItem, reason: ReceiptItem["reason"], detail: string): void {
  item.action = "conflict";
  item.reason = reason;
  item.detail = detail;
  item.after = item.before;
}

/** A failure writing one path is that path's conflict, never the end of the whole apply. */
function failureReason(e: unknown): { reason: ReceiptItem["reason"]; detail: string } {
  if (e instanceof PerformError) return { reason: e.reason, detail: e.message };
  if (e instanceof BlobError) return { reason: e.kind === "missing" ? "missing-blob" : "hash-mismatch", detail: e.message };
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "EISDIR" || code === "ENOTDIR" || code === "ENOTEMPTY") return { reason: "not-regular", detail: String((e as Error).message) };
  return { reason: "io-error", detail: e instanceof Error ? e.message : String(e) };
}

/**
 * Writes the intent's acting items, each re-checked against `expect` right
 * before its rename or unlink. Deletes come first, one by one, and the
 * directories they empty are removed before any write, so a file can take
 * the place of a directory that went away. The writes then go in batches
 * (`BATCH_PATHS` paths, `BATCH_BYTES` of content, whichever comes first):
 * every temp file of the batch is written, the file system is flushed once
 * when the batch holds many files, and then each path is re-checked and its
 * temp renamed over it. On ext4 a rename over a file whose new blocks are
 * not yet on disk writes them out inside the rename; flushed together
 * first, they cost one `syncfs` instead of a few hundred microseconds each
 * (docs/design.md, "Apply at scale"). Shared by apply and recovery.
 */
export async function performAll(
  ctx: Context,
  intent: Intent,
  content: (item: ReceiptItem) => Promise<Buffer | null>,
  expect: (item: ReceiptItem, now: Observed) => "go" | "done" | "changed",
  opts: { progress?: Progress | undefined; reuse?: ((item: ReceiptItem) => Reuse | undefined) | undefined } = {},
): Promise<void> {
  const { progress } = opts;
  // Every recheck and the act after it go through one set of open directories (src/sys/bound-dir.ts).
  let dirs = new BoundDirs(ctx.root);
  const tag = intent.receipt.slice(-8);
  // Positions in the intent (a write's temp file is named by its own): numbers, not a pair a path (6 MB at 100,000).
  const deletes: number[] = [];
  const writes: number[] = [];
  intent.items.forEach((item, i) => {
    if (acts(item.action)) (item.after === null ? deletes : writes).push(i);
  });
  const total = deletes.length + writes.length;
  let n = 0;
  progress?.(0, total);
  // One path finished (done, left alone, or a conflict): counted, and the crash tests' kill point.
  const finished = () => {
    progress?.(++n, total);
    dirs.trim();
    crashPoint(`write:${n}`);
    // What each path's write left behind is garbage at once; collected as it goes, it never piles up (src/sys/heap.ts).
    collectAsGrown();
  };
  // Touches one path through `act`, which calls the recheck right before it unlinks or renames (null: leave
  // the path alone); a path someone changed meanwhile, or a failure, becomes that path's conflict.
  const settle = (item: ReceiptItem, act: (recheck: () => Observed | null) => boolean) => {
    let verdict = "go" as "go" | "done" | "changed"; // set by the recheck, which `act` calls
    const recheck = () => {
      const now = observeOne(ctx.root, item.path, ctx.objectFormat, dirs, { reuse: opts.reuse?.(item) });
      verdict = expect(item, now);
      return verdict === "go" ? now : null;
    };
    try {
      if (!act(recheck) && verdict === "changed") demote(item, "changed-since", "changed while undoing");
    } catch (e) {
      const f = failureReason(e);
      demote(item, f.reason, f.detail);
    }
    finished();
  };

  try {
    for (const i of deletes) {
      const item = intent.items[i]!;
      settle(item, (recheck) => performDelete(dirs, item.path, recheck));
    }
    removeEmptiedDirs(
      dirs,
      deletes.map((i) => intent.items[i]!.path),
      new Set(intent.keepDirs),
    );
    // Opened afresh: a directory held open may have been removed just now.
    dirs.close();
    dirs = new BoundDirs(ctx.root);

    for (let start = 0; start < writes.length; ) {
      const end = batchEnd(writes.length, start, (k) => intent.items[writes[k]!]!.after?.size ?? 0, { count: BATCH_PATHS, bytes: BATCH_BYTES });
      const batch: { item: ReceiptItem; staged: Staged }[] = [];
      for (const i of writes.slice(start, end)) {
        const item = intent.items[i]!;
        try {
          batch.push({ item, staged: stageWrite(dirs, item.path, item.after!, (await content(item))!, `${tag}-${i}`) });
          dirs.trim(); // a batch over many directories: its rename opens its own again, by name, and rechecks there
        } catch (e) {
          const f = failureReason(e);
          demote(item, f.reason, f.detail);
          finished();
        }
      }
      start = end;
      if (batch.length >= SYNC_FS_FROM) syncFileSystem(ctx.root); // best effort: without it, each rename writes its own blocks
      for (const { item, staged } of batch) settle(item, (recheck) => commitWrite(dirs, item.path, staged, recheck));
    }
  } finally {
    dirs.close();
  }
  progress?.(total, total);
}

/** Told how many of the paths to write are done, before each and once at the end. */
export type Progress = (done: number, total: number) => void;

/**
 * Applies a plan. The caller holds the store lock. Order of durability:
 * (1) what each path holds now goes into the CAS, (2) the intent record,
 * (3) each path, re-checked right before it is touched, (4) the receipt,
 * (5) the intent is cleared. A crash anywhere is finished by `recover`.
 *
 * `seal: false` applies without touching the store's record: no intent, no
 * receipt in the chain (the returned one is not kept). For work trees that
 * are thrown away afterwards, as the revert check's is (SPEC section 10):
 * nothing there needs recovering or redoing.
 */
export async function applyPlan(
  ctx: Context,
  reader: ContentReader,
  plan: Plan,
  kind: ReceiptKind,
  merged: ReadonlyMap<Sha256, Buffer>,
  opts: { seal?: boolean; progress?: Progress | undefined; fsNow?: number | undefined; by?: StartedBy | undefined } = {},
): Promise<Receipt> {
  const seal = opts.seal !== false;
  const id = newReceiptId();
  const items: ReceiptItem[] = [];
  const expectOf = new Map(plan.items.map((i) => [i.path, i.expect]));

  // Planning's garbage, and below the intent's text, collected before the next phase adds its own (src/sys/heap.ts).
  collectGarbage();
  await reader.prefetch(plan.items.filter((i) => i.action === "restore").map((i) => i.pre));
  // An older snapshot's blob is git's clean form: where git converts the path's bytes, write what its checkout would.
  const checkout = await checkoutForms(
    ctx,
    reader,
    plan.items.flatMap((i) => (i.action === "restore" && i.pre ? [{ path: i.path, pre: i.pre }] : [])),
  );
  const toKeep: Kept[] = [];
  // Every path's directory through one set of open ones, as the writes go (src/sys/bound-dir.ts).
  const dirs = new BoundDirs(ctx.root);
  try {
    for (const it of plan.items) {
      const s = stateOf(it.expect);
      // One literal, no leading spread: see src/plan/planner.ts.
      const item: ReceiptItem = { path: it.path, action: it.action, reason: it.reason, ...(it.detail ? { detail: it.detail } : {}), before: s, after: acts(it.action) ? null : s };
      items.push(item);
      if (!acts(it.action)) continue;
      try {
        const before = currentState(ctx, reader, it, dirs, opts.fsNow);
        dirs.trim();
        if (before === "changed") {
          demote(item, "changed-since", "changed while undoing");
          continue;
        }
        item.before = before;
        const form = it.action === "restore" ? checkout.get(it.path) : undefined;
        if (form instanceof Error) {
          demote(item, "io-error", form.message);
          continue;
        }
        if (seal && (before?.kind === "file" || before?.kind === "symlink")) toKeep.push({ item, it });
        if (it.action === "restore") {
          item.after = form ?? (await restoredState(reader, it.pre!));
        } else if (it.action === "merge") {
          const data = merged.get(it.merged!)!;
          item.after = withHashes(reader, { kind: "file", mode: it.mergedMode ?? (it.expect.kind === "file" ? it.expect.mode : "100644") }, data, true);
        }
      } catch (e) {
        const f = failureReason(e);
        demote(item, f.reason, f.detail);
      }
      collectAsGrown(); // each path's bytes, read to hash it, are garbage at once
    }
  } finally {
    dirs.close();
  }

  // What each path held, and what a merge writes, is durable before the intent names it: nothing is lost to a power cut.
  collectIfGrown(); // the reads that hashed each path
  if (seal) await keepAll(ctx, reader, id, toKeep);
  toKeep.length = 0; // a pair a path, no longer wanted
  collectIfGrown(); // what asking git for 100,000 blobs left
  reader.cas.syncWritten();
  const ordered = applyOrder(items.filter((i) => acts(i.action)));
  const intent: Intent = {
    v: 1,
    receipt: id,
    kind,
    at: new Date().toISOString(),
    scope: plan.scope,
    items: [...ordered, ...items.filter((i) => !acts(i.action))],
    keepDirs: [...ancestorsOf(items.filter((i) => i.after !== null).map((i) => i.path))],
    ...(opts.by ? { by: opts.by } : {}),
  };
  if (seal && ordered.length > 0) {
    writeIntent(ctx.store, intent);
    crashPoint("intent");
  }
  // The bytes to write are read as each path is written (a restore's from the store or git, within the
  // reader's budget of what it keeps): never every path's at once.
  const fsNow = opts.fsNow;
  collectGarbage();
  await performAll(
    ctx,
    intent,
    async (item) => (item.action === "merge" ? merged.get(item.after!.sha256!)! : item.after ? reader.read(item.after) : null),
    (item, now) => (sameObserved(now, expectOf.get(item.path)!) ? "go" : "changed"),
    { progress: opts.progress, reuse: fsNow === undefined ? undefined : (item) => ({ as: expectOf.get(item.path)!, fsNow }) },
  );
  // Every path is written: what the reader kept (16 MiB and 100,000 keys at most) is read no more, and the
  // receipt and the report are still to be made.
  reader.cache.clear();
  collectGarbage();
  return seal ? finish(ctx, intent) : { ...receiptOf(ctx, intent, false), prev: null };
}

function receiptOf(ctx: Context, intent: Intent, recovered: boolean): Omit<Receipt, "prev"> {
  const sorted = sortByPath([...intent.items]);
  return {
    v: 1,
    id: intent.receipt,
    kind: intent.kind,
    at: intent.at,
    scope: intent.scope,
    items: sorted,
    counts: countActions(sorted),
    ...(recovered ? { recovered: true } : {}),
    doneAt: new Date().toISOString(),
    root: ctx.root,
    ...(intent.by ? { by: intent.by } : {}),
  };
}

/** Seals the receipt and clears the intent; shared with crash recovery. */
export function finish(ctx: Context, intent: Intent, recovered = false): Receipt {
  const receipt = new Receipts(ctx.store).append(receiptOf(ctx, intent, recovered));
  crashPoint("receipt");
  clearIntent(ctx.store, intent.receipt);
  return receipt;
}

/**
 * Keeps `oids` reachable for as long as the receipt lives (a ref of its own,
 * src/store/kept.ts), then makes them and the ref durable with one flush of
 * the file system that holds the objects. False when either cannot be had.
 */
async function keptByRef(ctx: Context, receipt: string, oids: ReadonlySet<string>): Promise<boolean> {
  try {
    await keepInGit(ctx, receipt, oids);
  } catch {
    return false; // an objects directory we cannot write, a ref in the way: the CAS keeps them instead
  }
  return syncFileSystem(join(ctx.commonDir, "objects"));
}

/** A path whose current bytes the receipt must be able to bring back. */
interface Kept {
  item: ReceiptItem;
  it: PlanItem;
}

/**
 * What the path holds now, hashed (nothing stored yet: `keepAll` does
 * that). "changed" when the bytes no longer match what was planned. A file
 * whose stat data proves it unchanged since the plan read it (`fsNow`, the
 * clock before that read: `unchangedSince`) holds what the plan hashed, and
 * is not read again: at 100,000 paths the second read was 4.7 s of the
 * undo. The recheck right before each write looks again, by the same rule.
 */
function currentState(ctx: Context, reader: ContentReader, it: PlanItem, dirs: BoundDirs, fsNow: number | undefined): State | null | "changed" {
  const e = it.expect;
  if (e.kind !== "file" && e.kind !== "symlink") return stateOf(e);
  if (e.kind === "file" && e.stamp && e.oid && fsNow !== undefined && statUnchanged(dirs, it.path, e.stamp, fsNow)) {
    return { kind: "file", mode: e.mode, size: e.size, sha256: e.sha256, oid: e.oid }; // one literal: see src/plan/planner.ts
  }
  const data = currentBytes(ctx, reader, it);
  const kept = withHashes(reader, e.kind === "file" ? { kind: "file", mode: e.mode } : { kind: "symlink", mode: "120000" }, data, false);
  if (kept.sha256 !== e.sha256) return "changed";
  // The plan's strings, not the same hashes made again: two fewer strings a path for the receipt to hold.
  return { kind: kept.kind, mode: kept.mode, size: kept.size, sha256: e.sha256, oid: e.oid ?? kept.oid }; // one literal: see src/plan/planner.ts
}

/** Whether the path's stat data, looked at through `dirs`, proves it unchanged since `stamp` was taken (`unchangedSince`). */
function statUnchanged(dirs: BoundDirs, rel: string, stamp: Stamp, fsNow: number): boolean {
  const [dir, name] = splitRel(rel);
  const d = dirs.dir(dir);
  if (!(d instanceof BoundDir)) return false;
  try {
    return unchangedSince(stamp, d.lstat(name), fsNow);
  } catch {
    return false; // gone, or no longer reachable: read, and found changed
  }
}

/** A file's bytes (those the plan read, where it kept them) or a symlink's target. */
function currentBytes(ctx: Context, reader: ContentReader, it: PlanItem): Buffer {
  const e = it.expect;
  // The bytes the plan read: the recheck right before the write proves the path still holds them.
  if (e.kind === "file") return reader.cache.get(keptKey(it.path, e.sha256)) ?? inDirOf(ctx.root, it.path, (d, name) => d.readFile(name));
  return inDirOf(ctx.root, it.path, (d, name) => d.readlink(name));
}

/**
 * Makes sure the receipt can bring back what each path holds now. Bytes
 * the repository's object store already holds (a snapshot's blobs: most of
 * what an agent's shell call wrote) stay there, kept reachable by a ref of
 * the receipt's own, and the file system that holds them is flushed once;
 * the rest go into the CAS (a blob already
 * there is read back and verified), made durable with it by
 * `syncWritten`. Below a batch, or when the flush cannot be had, all go
 * into the CAS: a flush writes out everything dirty on that file system,
 * worth it for many paths, not for a few. A path whose bytes no longer
 * match is demoted before the intent names it.
 */
async function keepAll(ctx: Context, reader: ContentReader, receipt: string, kept: readonly Kept[]): Promise<void> {
  let held = kept.length >= SYNC_FS_FROM ? await reader.heldByGit(kept.map((k) => k.item.before!)) : new Set<string>();
  if (held.size > 0 && !(await keptByRef(ctx, receipt, held))) held = new Set();
  for (const k of kept) {
    if (held.has(k.item.before!.oid!)) continue;
    try {
      const sha = reader.cas.put(currentBytes(ctx, reader, k.it), { verify: true, sync: false });
      if (sha !== k.item.before!.sha256) demote(k.item, "changed-since", "changed while undoing");
    } catch (e) {
      const f = failureReason(e);
      demote(k.item, f.reason, f.detail);
    }
    collectAsGrown();
  }
}

/**
 * What a restore leaves: the recorded state, whose bytes live in git or the
 * CAS (they are read, verified, as the path is written). Only a state that
 * lacks a hash or its size is read now, to complete it.
 */
async function restoredState(reader: ContentReader, pre: State): Promise<State> {
  if (pre.sha256 && pre.oid && pre.size !== undefined) return { kind: pre.kind, mode: pre.mode, size: pre.size, sha256: pre.sha256, oid: pre.oid };
  const s = withHashes(reader, pre, await reader.read(pre), false);
  // The read checked the bytes against the recorded oid: the record's string serves.
  return { kind: s.kind, mode: s.mode, size: s.size, sha256: s.sha256, oid: pre.oid ?? s.oid };
}

function withHashes(reader: ContentReader, s: State, data: Buffer, keep: boolean): State {
  // Kept unsynced here: applyPlan makes every blob durable in one pass before its intent record.
  const sha = keep ? reader.cas.put(data, { verify: true, sync: false }) : sha256(data);
  return { kind: s.kind, mode: s.mode, size: data.length, sha256: sha, oid: reader.oidOf(data) };
}
