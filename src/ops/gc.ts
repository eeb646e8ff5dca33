import { storePath } from "../domain/store-layout.js";
import { existsSync, rmSync, statSync, unlinkSync } from "node:fs";
import { pendingIntents } from "../apply/intent.js";
import { dropIndex, orphanIndexes } from "../capture/private-index.js";
import { listSnapshots, SNAPSHOT_REFS } from "../capture/snapshot.js";
import { clearAllPending } from "../capture/unfolded.js";
import type { Context } from "../repo/context.js";
import { checkIds, dropBaseline, dropCheckResult, listBaselines } from "../store/baselines.js";
import { Cas } from "../store/cas.js";
import { dropKept, keptRefs } from "../store/kept.js";
import { loadConfig, parseDuration } from "../store/config.js";
import { pruneJournal } from "../store/journal.js";
import { pairDiffsFile } from "../store/pair-diffs.js";
import { dropKeptChangeSets } from "../store/changeset-cache.js";
import { withLock } from "../store/lock.js";
import { Receipts } from "../store/receipts.js";
import { Capsules } from "../store/capsules.js";
import { now } from "../sys/clock.js";

export interface GcReport {
  ttl: string;
  dryRun: boolean;
  snapshots: number;
  receipts: number;
  records: number;
  blobs: number;
  bytes: number;
  indexes: number;
  indexBytes: number;
  /** Stage baselines last captured before the TTL, and revert-check results older than it. */
  baselines: number;
  revertChecks: number;
  /** Run capsules dropped (older than the TTL), with their seals. */
  runs: number;
}

/**
 * Drops records and content older than the TTL that nothing live needs
 * (SPEC section 7): what a redoable receipt, a live journal record, a kept
 * snapshot or an interrupted apply names stays, whatever its age.
 */
export async function gc(ctx: Context, opts: { ttl?: string | undefined; dryRun?: boolean | undefined } = {}): Promise<GcReport> {
  const ttlText = opts.ttl ?? loadConfig(ctx.store).ttl;
  const ttl = parseDuration(ttlText);
  const dryRun = Boolean(opts.dryRun);
  if (!existsSync(ctx.store)) return { ttl: ttlText, dryRun, snapshots: 0, receipts: 0, records: 0, blobs: 0, bytes: 0, indexes: 0, indexBytes: 0, baselines: 0, revertChecks: 0, runs: 0 };
  const run = async (): Promise<GcReport> => {
    const cutoff = now().getTime() - ttl;
    const rs = new Receipts(ctx.store);
    const droppedReceipts = existsSync(storePath(ctx.store, "receipts")) ? rs.dropOlderThan(cutoff, dryRun) : [];
    const dropped = new Set(droppedReceipts.map((r) => r.id));
    // Content a redoable receipt or an interrupted apply still needs stays, whatever its age (one receipt read at a time).
    const keep = new Set<string>();
    const keepSnaps = new Set<string>();
    const live: string[] = [];
    for (const { head: r, items } of rs.walkLazily()) {
      if (dropped.has(r.id)) continue;
      live.push(r.id);
      if (r.scope.kind === "snapshot") keepSnaps.add(r.scope.id);
      for (const i of items()) for (const s of [i.before, i.after]) if (s?.sha256) keep.add(s.sha256);
    }
    // The journal's live records keep their content and the snapshots their tree captures name.
    const journal = pruneJournal(ctx.store, new Date(cutoff).toISOString(), dryRun);
    for (const r of journal.live) {
      if (r.kind === "file" && r.state?.sha256) keep.add(r.state.sha256);
      if (r.kind === "tree") keepSnaps.add(r.snapshot);
    }
    const intents = existsSync(storePath(ctx.store, "pending")) ? pendingIntents(ctx.store) : [];
    for (const intent of intents) {
      for (const i of intent.items) for (const s of [i.before, i.after]) if (s?.sha256) keep.add(s.sha256);
    }
    // The blobs a receipt brings back from git stay reachable through its kept ref while it lives (src/store/kept.ts).
    const kept = await keptRefs(ctx);
    const keptLive = new Set([...live, ...intents.map((i) => i.receipt)]);
    if (!dryRun)
      await dropKept(
        ctx,
        kept,
        [...kept.keys()].filter((id) => !keptLive.has(id)),
      );
    // A baseline lives while it is being captured into: its bytes stay until its last capture is older than the TTL.
    let droppedBaselines = 0;
    for (const b of listBaselines(ctx.store)) {
      if (Date.parse(b.captures.at(-1)?.at ?? "") < cutoff) {
        droppedBaselines++;
        if (!dryRun) dropBaseline(ctx.store, b.key);
        continue;
      }
      for (const s of Object.values(b.entries)) if (s.sha256 && (s.kind === "file" || s.kind === "symlink")) keep.add(s.sha256);
    }
    const oldChecks = checkIds(ctx.store).filter((id) => checkTime(id) < cutoff);
    if (!dryRun) for (const id of oldChecks) dropCheckResult(ctx.store, id);
    const allSnaps = await listSnapshots(ctx);
    const oldSnaps = allSnaps.filter((s) => Date.parse(s.at) < cutoff && !keepSnaps.has(s.id));
    // A snapshot that stays keeps the ignore rules it was taken under (src/capture/excludes.ts).
    const dropping = new Set(oldSnaps.map((s) => s.id));
    for (const s of allSnaps) {
      if (dropping.has(s.id)) continue;
      if (s.excludes?.info) keep.add(s.excludes.info);
      if (s.excludes?.global) keep.add(s.excludes.global);
    }
    if (!dryRun && oldSnaps.length > 0) {
      clearAllPending(ctx); // first: a record may build on a tree only these snapshots keep
      // Compare-and-swap deletes: a ref that moved since we read it is left alone.
      const lines = oldSnaps.map((s) => `delete ${SNAPSHOT_REFS}${s.id} ${s.commit}`).join("\n") + "\n";
      await ctx.git(["update-ref", "--stdin"], { input: lines });
    }
    let blobCount = 0;
    let blobBytes = 0;
    for (const b of Cas.in(ctx.store).blobs()) {
      if (keep.has(b.sha)) continue;
      const st = statSync(b.path);
      if (st.mtimeMs >= cutoff) continue;
      blobCount++;
      blobBytes += st.size;
      if (!dryRun) unlinkSync(b.path);
    }
    // The diffs of snapshot pairs: a cache that may name snapshots just dropped; the next long fold asks git again.
    if (!dryRun && oldSnaps.length > 0) rmSync(pairDiffsFile(ctx.store), { force: true });
    // Kept change sets (up to 64 MiB): a cache, folded again on the next `changes`; gc frees their bytes.
    if (!dryRun) dropKeptChangeSets(ctx.store);
    // Private indexes of removed worktrees: a cache, dropped whatever its age.
    const orphans = orphanIndexes(ctx);
    if (!dryRun) for (const o of orphans) await dropIndex(ctx, o);
    const indexBytes = orphans.reduce((n, o) => n + o.bytes, 0);
    // A capsule lives for the TTL like every record; its seal ref keeps its snapshots' objects until then.
    const runs = (await new Capsules(ctx).dropOlderThan(cutoff, dryRun)).length;
    return {
      ttl: ttlText,
      dryRun,
      snapshots: oldSnaps.length,
      receipts: droppedReceipts.length,
      records: journal.dropped,
      blobs: blobCount,
      bytes: blobBytes,
      indexes: orphans.length,
      indexBytes,
      baselines: droppedBaselines,
      revertChecks: oldChecks.length,
      runs,
    };
  };
  return dryRun ? run() : withLock(ctx.store, "gc", run);
}

/** The time in a revert check's id (`c-20261201T101500123Z-…`), as milliseconds. */
function checkTime(id: string): number {
  const m = /^c-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-/.exec(id);
  return m ? Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`) : Number.POSITIVE_INFINITY;
}
