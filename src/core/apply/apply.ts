import { readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import type { Context } from "../../store/context.js";
import { Receipts, newReceiptId, type Receipt, type ReceiptItem, type ReceiptKind } from "../../store/receipts.js";
import type { ContentReader } from "../content.js";
import { observe, sameObserved, stateOf } from "../observe.js";
import { countActions } from "../plan/planner.js";
import type { Plan, PlanItem, RepoPath, Sha256, State } from "../types.js";
import { crashPoint } from "./crash.js";
import { clearIntent, writeIntent, type Intent } from "./intent.js";
import { PerformError, ancestorsOf, performOne, removeEmptiedDirs } from "./perform.js";
import { sha256 } from "../../store/cas.js";

const acts = (a: PlanItem["action"]) => a === "restore" || a === "delete" || a === "merge";

/** Deletes deepest first (so a directory can give way to a file), then writes in path order. */
export function applyOrder<T extends { path: string; action: PlanItem["action"]; after?: State | null }>(items: T[]): T[] {
  const depth = (p: string) => p.split("/").length;
  const deletes = items.filter((i) => i.action === "delete").sort((a, b) => depth(b.path) - depth(a.path));
  const writes = items.filter((i) => i.action === "restore" || i.action === "merge");
  return [...deletes, ...writes];
}

/**
 * Applies a plan. The caller holds the store lock. Order of durability:
 * (1) what each path holds now goes into the CAS, (2) the intent record,
 * (3) each path, re-checked right before it is touched, (4) the receipt,
 * (5) the intent is cleared. A crash anywhere is finished by `recover`.
 */
export async function applyPlan(
  ctx: Context,
  reader: ContentReader,
  plan: Plan,
  kind: ReceiptKind,
  merged: ReadonlyMap<Sha256, Buffer>,
): Promise<Receipt> {
  const id = newReceiptId();
  const items: ReceiptItem[] = [];
  const payload = new Map<RepoPath, Buffer | null>();

  await reader.prefetch(plan.items.filter((i) => i.action === "restore").map((i) => i.pre));
  for (const it of plan.items) {
    const base = { path: it.path, action: it.action, reason: it.reason, ...(it.detail ? { detail: it.detail } : {}) };
    if (!acts(it.action)) {
      const s = stateOf(it.expect);
      items.push({ ...base, before: s, after: s });
      continue;
    }
    const before = keepCurrent(ctx, reader, it);
    if (before === "changed") {
      items.push({ ...base, action: "conflict", reason: "changed-since", detail: "changed while undoing", before: stateOf(it.expect), after: stateOf(it.expect) });
      continue;
    }
    let after: State | null = null;
    let data: Buffer | null = null;
    if (it.action === "restore") {
      data = await reader.read(it.pre!);
      // Restored bytes already live in git or the CAS: hash them, do not copy them.
      after = withHashes(reader, it.pre!, data, false);
    } else if (it.action === "merge") {
      data = merged.get(it.merged!)!;
      const mode = it.expect.kind === "file" ? it.expect.mode : "100644";
      after = withHashes(reader, { kind: "file", mode }, data, true);
    }
    payload.set(it.path, data);
    items.push({ ...base, before, after });
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
  if (ordered.length > 0) {
    writeIntent(ctx.store, intent);
    crashPoint("intent");
  }

  const expectOf = new Map(plan.items.map((i) => [i.path, i.expect]));
  let n = 0;
  for (const item of ordered) {
    const now = (await observe(ctx, [item.path])).get(item.path)!;
    if (!sameObserved(now, expectOf.get(item.path)!)) {
      demote(item, "changed-since", "changed while undoing");
      continue;
    }
    try {
      performOne(ctx.root, item.path, item.after, payload.get(item.path) ?? null, id.slice(-8));
    } catch (e) {
      if (!(e instanceof PerformError)) throw e;
      demote(item, e.reason, e.message);
      continue;
    }
    crashPoint(`write:${++n}`);
  }
  return finish(ctx, intent, items);
}

function demote(item: ReceiptItem, reason: ReceiptItem["reason"], detail: string): void {
  item.action = "conflict";
  item.reason = reason;
  item.detail = detail;
  item.after = item.before;
}

/** Tidies up after the writes and seals the receipt; shared with crash recovery. */
export function finish(ctx: Context, intent: Intent, items: ReceiptItem[], recovered = false): Receipt {
  const deleted = items.filter((i) => i.action === "delete").map((i) => i.path);
  removeEmptiedDirs(ctx.root, deleted, new Set(intent.keepDirs));
  const receipts = new Receipts(ctx.store);
  const sorted = [...items].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const receipt = receipts.append({
    v: 1,
    id: intent.receipt,
    kind: intent.kind,
    at: intent.at,
    scope: intent.scope,
    items: sorted,
    counts: countActions(sorted),
    ...(recovered ? { recovered: true } : {}),
  });
  crashPoint("receipt");
  clearIntent(ctx.store, intent.receipt);
  return receipt;
}

/**
 * Puts what the path holds now into the CAS, so the receipt can bring it
 * back. Returns "changed" when the bytes no longer match what was planned.
 */
function keepCurrent(ctx: Context, reader: ContentReader, it: PlanItem): State | null | "changed" {
  const abs = join(ctx.root, it.path);
  const e = it.expect;
  try {
    if (e.kind === "file") {
      const data = readFileSync(abs);
      const kept = withHashes(reader, { kind: "file", mode: e.mode }, data, true);
      return kept.sha256 === e.sha256 ? kept : "changed";
    }
    if (e.kind === "symlink") {
      const target = readlinkSync(abs);
      if (target !== e.target) return "changed";
      return withHashes(reader, { kind: "symlink", mode: "120000" }, Buffer.from(target), true);
    }
  } catch {
    return "changed";
  }
  return stateOf(e);
}

function withHashes(reader: ContentReader, s: State, data: Buffer, keep: boolean): State {
  const sha = keep ? reader.cas.put(data) : sha256(data);
  return { ...s, size: data.length, sha256: sha, oid: reader.oidOf(data) };
}
