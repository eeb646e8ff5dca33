import { existsSync, readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { listSnapshots, SNAPSHOT_REFS } from "../../capture/snapshot.js";
import { dropIndex, orphanIndexes } from "../../capture/private-index.js";
import { clearAllPending } from "../../capture/unfolded.js";
import { pendingIntents } from "../../apply/intent.js";
import { acts } from "../../domain/actions.js";
import { Exit } from "../../domain/errors.js";
import { now } from "../../sys/clock.js";
import { Cas } from "../../store/cas.js";
import { loadConfig, parseDuration } from "../../store/config.js";
import type { Context } from "../../repo/context.js";
import { withLock } from "../../store/lock.js";
import { Receipts, type Receipt } from "../../store/receipts.js";
import { pruneJournal, readJournal } from "../../store/journal.js";
import type { Globals } from "../globals.js";
import { bytes, paint, table, type Output } from "../render.js";
import { open } from "./common.js";

export async function receipts(globals: Globals, opts: { limit?: number }): Promise<Output> {
  const ctx = await open(globals);
  const list = existsSync(join(ctx.store, "receipts")) ? new Receipts(ctx.store).list(opts.limit ?? Infinity) : [];
  const rows = list.map((r) => [r.id, r.kind, `${r.scope.kind}:${r.scope.id}`, countLine(r)]);
  const human = list.length ? table([["RECEIPT", "KIND", "SCOPE", "COUNTS"], ...rows]) : "no receipts";
  return {
    json: { receipts: list.map(({ id, kind, at, scope, counts, recovered }) => ({ id, kind, at, scope, counts, ...(recovered ? { recovered } : {}) })) },
    human,
    exit: Exit.ok,
  };
}

function countLine(r: Receipt): string {
  const c = r.counts;
  return `${c.restore} restored, ${c.delete} deleted, ${c.merge} merged, ${c.skip} skipped, ${c.conflict} conflicts${r.recovered ? " (recovered)" : ""}`;
}

function* walk(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else yield p;
  }
}

function casBlobs(ctx: Context): { sha: string; path: string }[] {
  const root = join(ctx.store, "cas", "sha256");
  const out = [];
  for (const p of walk(root)) {
    const rel = p.slice(root.length + 1).split("/");
    if (rel.length === 2 && !rel[1]!.endsWith(".tmp")) out.push({ sha: rel[0]! + rel[1]!, path: p });
  }
  return out;
}

export async function verify(globals: Globals): Promise<Output> {
  const ctx = await open(globals);
  const problems: string[] = [];
  const cas = new Cas(join(ctx.store, "cas"));
  const blobs = casBlobs(ctx);
  for (const b of blobs) {
    const s = cas.status(b.sha);
    if (s !== "ok") problems.push(`blob ${b.sha} ${s === "mismatch" ? "fails its SHA-256 check" : "cannot be read"}`);
  }
  let receiptCount = 0;
  if (existsSync(join(ctx.store, "receipts"))) {
    const rs = new Receipts(ctx.store);
    problems.push(...rs.verify());
    const list = rs.list();
    receiptCount = list.length;
    for (const r of list) {
      for (const i of r.items) {
        if (!acts(i.action)) continue;
        const sha = i.before?.sha256;
        if (sha && (i.before!.kind === "file" || i.before!.kind === "symlink") && !cas.has(sha)) {
          problems.push(`receipt ${r.id}: content of ${i.path} before the apply (${sha.slice(0, 12)}) is missing`);
        }
      }
    }
  }
  const snaps = await listSnapshots(ctx);
  if (snaps.length > 0) {
    const check = await ctx.git(["cat-file", "--batch-check"], { input: snaps.map((s) => s.tree).join("\n") + "\n" });
    check.stdout
      .toString("utf8")
      .trim()
      .split("\n")
      .forEach((line, k) => {
        if (!/ tree \d+$/.test(line)) problems.push(`snapshot ${snaps[k]!.id}: tree ${snaps[k]!.tree.slice(0, 12)} is missing`);
      });
  }
  const refs = await refCount(ctx);
  if (refs > snaps.length) problems.push(`${refs - snaps.length} snapshot ref(s) carry unreadable metadata`);
  const journal = readJournal(ctx.store);
  for (const d of journal.damaged) problems.push(`journal ${d.file}:${d.line} is damaged: ${d.why}`);
  for (const r of journal.records) {
    if (r.kind !== "file") continue;
    const st = r.state;
    if (st?.sha256 && (st.kind === "file" || st.kind === "symlink") && !cas.has(st.sha256)) {
      problems.push(`journal: content of ${r.path} (${r.session} ${r.phase} ${r.call}) is missing`);
    }
  }
  const pending = existsSync(join(ctx.store, "pending")) ? pendingIntents(ctx.store).length : 0;
  if (pending) problems.push(`${pending} interrupted apply(s) could not be finished`);

  const ok = problems.length === 0;
  const human = ok
    ? `ok: ${blobs.length} blobs, ${journal.records.length} journal records, ${receiptCount} receipts, ${snaps.length} snapshots verified`
    : [paint(`damaged: ${problems.length} problem(s)`, "red"), ...problems.map((p) => `  ${p}`)].join("\n");
  return { json: { ok, blobs: blobs.length, records: journal.records.length, receipts: receiptCount, snapshots: snaps.length, problems }, human, exit: ok ? Exit.ok : Exit.damaged };
}

async function refCount(ctx: Context): Promise<number> {
  if (ctx.mode === "private" && !existsSync(join(ctx.gitDir, "HEAD"))) return 0;
  const r = await ctx.git(["for-each-ref", "--format=%(refname)", SNAPSHOT_REFS]);
  return r.stdout.toString("utf8").split("\n").filter(Boolean).length;
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const p of walk(dir)) {
    try {
      n += statSync(p).size;
    } catch {
      /* vanished */
    }
  }
  return n;
}

export async function status(globals: Globals): Promise<Output> {
  const ctx = await open(globals);
  const exists = existsSync(ctx.store);
  const snaps = exists ? await listSnapshots(ctx) : [];
  const rs = exists && existsSync(join(ctx.store, "receipts")) ? new Receipts(ctx.store).list() : [];
  const errors = readErrors(ctx, 5);
  const journal = exists ? readJournal(ctx.store) : { records: [], damaged: [] };
  const data = {
    root: ctx.root,
    store: ctx.store,
    mode: ctx.mode,
    exists,
    bytes: exists ? dirBytes(ctx.store) : 0,
    blobs: exists ? casBlobs(ctx).length : 0,
    snapshots: snaps.filter((s) => s.root === ctx.root).length,
    snapshotsAllWorktrees: snaps.length,
    receipts: rs.length,
    sessions: new Set(journal.records.map((r) => r.session)).size,
    records: journal.records.length,
    damagedRecords: journal.damaged.length,
    recentErrors: errors,
  };
  const rows = [
    ["root", data.root],
    ["store", `${data.store}${exists ? "" : " (not created yet)"}`],
    ["size", bytes(data.bytes)],
    ["blobs", String(data.blobs)],
    ["snapshots", `${data.snapshots} (all worktrees: ${data.snapshotsAllWorktrees})`],
    ["receipts", String(data.receipts)],
    ["sessions", `${data.sessions} (${data.records} records${data.damagedRecords ? `, ${data.damagedRecords} damaged: run unwind verify` : ""})`],
    ["errors", errors.length ? `${errors.length} recent` : "none"],
  ];
  const lines = [table(rows)];
  for (const e of errors) lines.push(`  ${paint(e.at, "dim")} ${e.message}`);
  return { json: data, human: lines.join("\n"), exit: Exit.ok };
}

interface ErrorRecord {
  at: string;
  message: string;
}

function readErrors(ctx: Context, n: number): ErrorRecord[] {
  const p = join(ctx.store, "errors.jsonl");
  if (!existsSync(p)) return [];
  return readFileSync(p, "utf8")
    .split("\n")
    .filter(Boolean)
    .slice(-n)
    .map((l) => {
      try {
        return JSON.parse(l) as ErrorRecord;
      } catch {
        return { at: "?", message: `unreadable error record: ${l.slice(0, 80)}` };
      }
    });
}

export async function gc(globals: Globals, opts: { ttl?: string; dryRun?: boolean }): Promise<Output> {
  const ctx = await open(globals);
  const ttlText = opts.ttl ?? loadConfig(ctx.store).ttl;
  const ttl = parseDuration(ttlText);
  const dryRun = Boolean(opts.dryRun);
  if (!existsSync(ctx.store)) {
    return { json: { ttl: ttlText, dryRun, snapshots: 0, receipts: 0, records: 0, blobs: 0, bytes: 0, indexes: 0, indexBytes: 0 }, human: "nothing to collect: no store yet", exit: Exit.ok };
  }
  const run = async () => {
    const cutoff = now().getTime() - ttl;
    const rs = new Receipts(ctx.store);
    const droppedReceipts = existsSync(join(ctx.store, "receipts")) ? rs.dropOlderThan(cutoff, dryRun) : [];
    const dropped = new Set(droppedReceipts.map((r) => r.id));
    const live = existsSync(join(ctx.store, "receipts")) ? rs.list().filter((r) => !dropped.has(r.id)) : [];
    // Content a redoable receipt or an interrupted apply still needs stays, whatever its age.
    const keep = new Set<string>();
    const keepSnaps = new Set<string>();
    for (const r of live) {
      if (r.scope.kind === "snapshot") keepSnaps.add(r.scope.id);
      for (const i of r.items) for (const s of [i.before, i.after]) if (s?.sha256) keep.add(s.sha256);
    }
    // The journal's live records keep their content and the snapshots their tree captures name.
    const journal = pruneJournal(ctx.store, new Date(cutoff).toISOString(), dryRun);
    for (const r of journal.live) {
      if (r.kind === "file" && r.state?.sha256) keep.add(r.state.sha256);
      if (r.kind === "tree") keepSnaps.add(r.snapshot);
    }
    for (const intent of existsSync(join(ctx.store, "pending")) ? pendingIntents(ctx.store) : []) {
      for (const i of intent.items) for (const s of [i.before, i.after]) if (s?.sha256) keep.add(s.sha256);
    }
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
    for (const b of casBlobs(ctx)) {
      if (keep.has(b.sha)) continue;
      const st = statSync(b.path);
      if (st.mtimeMs >= cutoff) continue;
      blobCount++;
      blobBytes += st.size;
      if (!dryRun) unlinkSync(b.path);
    }
    // Private indexes of removed worktrees: a cache, dropped whatever its age.
    const orphans = orphanIndexes(ctx);
    if (!dryRun) for (const o of orphans) await dropIndex(ctx, o);
    const indexBytes = orphans.reduce((n, o) => n + o.bytes, 0);
    return { ttl: ttlText, dryRun, snapshots: oldSnaps.length, receipts: droppedReceipts.length, records: journal.dropped, blobs: blobCount, bytes: blobBytes, indexes: orphans.length, indexBytes };
  };
  const res = dryRun ? await run() : await withLock(ctx.store, "gc", run);
  const verb = dryRun ? "would drop" : "dropped";
  const human = `${verb} ${res.snapshots} snapshot(s), ${res.receipts} receipt(s), ${res.records} journal record(s), ${res.blobs} blob(s) (${bytes(res.bytes)}) older than ${ttlText}` +
    (res.indexes ? `\n${verb} ${res.indexes} private index(es) of removed worktrees (${bytes(res.indexBytes)})` : "") +
    (res.snapshots ? "\nsnapshot objects are left to git's own gc" : "");
  return { json: res, human, exit: Exit.ok };
}

