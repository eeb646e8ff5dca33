import { fsPath } from "../domain/path-bytes.js";
import { readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../domain/hash.js";
import type { Context } from "../repo/context.js";
import { Receipts, newReceiptId, type Receipt, type ReceiptItem, type ReceiptKind } from "../store/receipts.js";
import type { ContentReader } from "../store/content.js";
import { BlobError } from "../store/cas.js";
import { keptKey, observeOne, sameObserved, stateOf, type Reuse } from "../capture/observe.js";
import { sortByPath } from "../domain/paths.js";
import { acts, countActions } from "../domain/actions.js";
import type { Action, Observed, Plan, PlanItem, Sha256, State } from "../domain/types.js";
import { crashPoint } from "./crash.js";
import { clearIntent, writeIntent, type Intent } from "./intent.js";
import { PerformError, ancestorsOf, performOne, removeEmptiedDirs } from "./perform.js";

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
 * Writes the intent's acting items in order, each re-checked against
 * `expect` right before its rename or unlink. Deletes come first and the
 * directories they empty are removed before any write, so a file can take
 * the place of a directory that went away. Shared by apply and recovery.
 */
export async function performAll(
  ctx: Context,
  intent: Intent,
  content: (item: ReceiptItem) => Promise<Buffer | null>,
  expect: (item: ReceiptItem, now: Observed) => "go" | "done" | "changed",
  opts: { progress?: Progress | undefined; reuse?: ((item: ReceiptItem) => Reuse | undefined) | undefined } = {},
): Promise<void> {
  const { progress } = opts;
  const dirs = new Set<string>();
  const tag = intent.receipt.slice(-8);
  let n = 0;
  const total = intent.items.filter((x) => acts(x.action)).length;
  let seen = 0;
  let dirsRemoved = false;
  const removeDirs = () => {
    removeEmptiedDirs(
      ctx.root,
      intent.items.filter((x) => x.action === "delete").map((x) => x.path),
      new Set(intent.keepDirs),
    );
    dirsRemoved = true;
  };
  for (const [i, item] of intent.items.entries()) {
    if (!acts(item.action)) continue;
    progress?.(seen++, total);
    if (item.action !== "delete" && !dirsRemoved) removeDirs();
    let verdict = "go" as "go" | "done" | "changed";
    const recheck = () => {
      const now = observeOne(ctx.root, item.path, ctx.objectFormat, undefined, { reuse: opts.reuse?.(item) });
      verdict = expect(item, now);
      return verdict === "go" ? now : null;
    };
    try {
      const data = await content(item);
      const done = performOne(ctx.root, item.path, item.after, data, `${tag}-${i}`, recheck, dirs);
      if (!done && verdict === "changed") demote(item, "changed-since", "changed while undoing");
    } catch (e) {
      const f = failureReason(e);
      demote(item, f.reason, f.detail);
      continue;
    }
    crashPoint(`write:${++n}`);
  }
  if (!dirsRemoved) removeDirs();
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
  opts: { seal?: boolean; progress?: Progress | undefined; fsNow?: number | undefined } = {},
): Promise<Receipt> {
  const seal = opts.seal !== false;
  const id = newReceiptId();
  const items: ReceiptItem[] = [];
  const expectOf = new Map(plan.items.map((i) => [i.path, i.expect]));

  await reader.prefetch(plan.items.filter((i) => i.action === "restore").map((i) => i.pre));
  for (const it of plan.items) {
    const base = { path: it.path, action: it.action, reason: it.reason, ...(it.detail ? { detail: it.detail } : {}) };
    if (!acts(it.action)) {
      const s = stateOf(it.expect);
      items.push({ ...base, before: s, after: s });
      continue;
    }
    const item: ReceiptItem = { ...base, before: stateOf(it.expect), after: null };
    items.push(item);
    try {
      const before = keepCurrent(ctx, reader, it, seal);
      if (before === "changed") {
        demote(item, "changed-since", "changed while undoing");
        continue;
      }
      item.before = before;
      if (it.action === "restore") {
        item.after = await restoredState(reader, it.pre!);
      } else if (it.action === "merge") {
        const data = merged.get(it.merged!)!;
        item.after = withHashes(reader, { kind: "file", mode: it.mergedMode ?? (it.expect.kind === "file" ? it.expect.mode : "100644") }, data, true);
      }
    } catch (e) {
      const f = failureReason(e);
      demote(item, f.reason, f.detail);
    }
  }

  const ordered = applyOrder(items.filter((i) => acts(i.action)));
  const intent: Intent = {
    v: 1,
    receipt: id,
    kind,
    at: new Date().toISOString(),
    scope: plan.scope,
    items: [...ordered, ...items.filter((i) => !acts(i.action))],
    keepDirs: [...ancestorsOf(items.filter((i) => i.after !== null).map((i) => i.path))],
  };
  // What each path held (and what a merge writes) is durable before the intent names it: nothing is lost to a power cut.
  reader.cas.syncWritten();
  if (seal && ordered.length > 0) {
    writeIntent(ctx.store, intent);
    crashPoint("intent");
  }
  // The bytes to write are read as each path is written (a restore's from the store or git, within the
  // reader's budget of what it keeps): never every path's at once.
  const fsNow = opts.fsNow;
  await performAll(
    ctx,
    intent,
    async (item) => (item.action === "merge" ? merged.get(item.after!.sha256!)! : item.after ? reader.read(item.after) : null),
    (item, now) => (sameObserved(now, expectOf.get(item.path)!) ? "go" : "changed"),
    { progress: opts.progress, reuse: fsNow === undefined ? undefined : (item) => ({ as: expectOf.get(item.path)!, fsNow }) },
  );
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
 * Puts what the path holds now into the CAS (verifying a blob already
 * there), so the receipt can bring it back; without `keep` (no receipt:
 * a throwaway work tree) it is only hashed. "changed" when the bytes no
 * longer match what was planned.
 */
function keepCurrent(ctx: Context, reader: ContentReader, it: PlanItem, keep: boolean): State | null | "changed" {
  const abs = join(ctx.root, it.path);
  const e = it.expect;
  if (e.kind === "file") {
    // The bytes the plan read, where it kept them: the recheck right before the write proves the path still holds them.
    const data = reader.cache.get(keptKey(it.path, e.sha256)) ?? readFileSync(fsPath(abs));
    const kept = withHashes(reader, { kind: "file", mode: e.mode }, data, keep);
    return kept.sha256 === e.sha256 ? kept : "changed";
  }
  if (e.kind === "symlink") {
    const target = readlinkSync(fsPath(abs), "buffer");
    if (!target.equals(e.target)) return "changed";
    return withHashes(reader, { kind: "symlink", mode: "120000" }, target, keep);
  }
  return stateOf(e);
}

/**
 * What a restore leaves: the recorded state, whose bytes live in git or the
 * CAS (they are read, verified, as the path is written). Only a state that
 * lacks a hash or its size is read now, to complete it.
 */
async function restoredState(reader: ContentReader, pre: State): Promise<State> {
  if (pre.sha256 && pre.oid && pre.size !== undefined) return { ...pre };
  return withHashes(reader, pre, await reader.read(pre), false);
}

function withHashes(reader: ContentReader, s: State, data: Buffer, keep: boolean): State {
  // Kept unsynced here: applyPlan makes every blob durable in one pass before its intent record.
  const sha = keep ? reader.cas.put(data, { verify: true, sync: false }) : sha256(data);
  return { ...s, size: data.length, sha256: sha, oid: reader.oidOf(data) };
}
