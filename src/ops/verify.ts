import { storePath } from "../domain/store-layout.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pendingIntents } from "../apply/intent.js";
import { listSnapshots, SNAPSHOT_REFS } from "../capture/snapshot.js";
import { acts } from "../domain/actions.js";
import type { Context } from "../repo/context.js";
import { readBaselines } from "../store/baselines.js";
import { Cas } from "../store/cas.js";
import { ContentReader } from "../store/content.js";
import type { State } from "../domain/types.js";
import { readJournal } from "../store/journal.js";
import { Receipts } from "../store/receipts.js";
import { Capsules } from "../store/capsules.js";
import { checkFetched, checkFetchedRun, fetchedRuns, fetchedSessions } from "../store/shared.js";

/** One thing `verify` found wrong: what kind of thing, which one, and what is wrong with it. */
export interface Problem {
  kind: "blob" | "receipt" | "chain" | "snapshot" | "journal" | "intent" | "baseline" | "run" | "shared";
  /** The blob's SHA-256, the receipt or snapshot id, the journal file and line; null for the chain or intents as a whole. */
  id: string | null;
  message: string;
}

export interface VerifyReport {
  ok: boolean;
  blobs: number;
  records: number;
  receipts: number;
  snapshots: number;
  /** Run capsules whose seals were checked. */
  runs: number;
  /** Fetched sessions and runs checked (SPEC section 14): seal, records, content. */
  shared: number;
  problems: Problem[];
}

/** Checks every stored blob, journal record, snapshot tree, run capsule seal and the receipt chain; `ok: false` is exit 4. */
export async function verify(ctx: Context): Promise<VerifyReport> {
  const problems: Problem[] = [];
  const cas = Cas.in(ctx.store);
  let blobs = 0;
  for (const b of cas.blobs()) {
    blobs++;
    const s = cas.status(b.sha);
    if (s !== "ok") problems.push({ kind: "blob", id: b.sha, message: `blob ${b.sha} ${s === "mismatch" ? "fails its SHA-256 check" : "cannot be read"}` });
  }
  let receiptCount = 0;
  if (existsSync(storePath(ctx.store, "receipts"))) {
    const rs = new Receipts(ctx.store);
    for (const message of rs.verify()) problems.push({ kind: "chain", id: null, message });
    const list = rs.list();
    receiptCount = list.length;
    // What each path held before an apply: in the CAS, or in git where a snapshot already held it (src/apply/apply.ts).
    const notInCas: { id: string; path: string; before: State }[] = [];
    for (const r of list) {
      for (const i of r.items) {
        const b = i.before;
        if (acts(i.action) && b?.sha256 && (b.kind === "file" || b.kind === "symlink") && !cas.has(b.sha256)) notInCas.push({ id: r.id, path: i.path, before: b });
      }
    }
    const inGit = await new ContentReader(ctx, cas).heldByGit(notInCas.map((m) => m.before));
    for (const m of notInCas) {
      if (m.before.oid && inGit.has(m.before.oid)) continue;
      problems.push({ kind: "receipt", id: m.id, message: `receipt ${m.id}: content of ${m.path} before the apply (${m.before.sha256!.slice(0, 12)}) is missing` });
    }
  }
  const snaps = await listSnapshots(ctx);
  if (snaps.length > 0) {
    const check = await ctx.git(["cat-file", "--batch-check", "--buffer"], { input: snaps.map((s) => s.tree).join("\n") + "\n" });
    check.stdout
      .toString("utf8")
      .trim()
      .split("\n")
      .forEach((line, k) => {
        const s = snaps[k]!;
        if (!/ tree \d+$/.test(line)) problems.push({ kind: "snapshot", id: s.id, message: `snapshot ${s.id}: tree ${s.tree.slice(0, 12)} is missing` });
      });
  }
  const refs = await refCount(ctx);
  if (refs > snaps.length) problems.push({ kind: "snapshot", id: null, message: `${refs - snaps.length} snapshot ref(s) carry unreadable metadata` });
  const journal = readJournal(ctx.store);
  for (const d of journal.damaged) problems.push({ kind: "journal", id: `${d.file}:${d.line}`, message: `journal ${d.file}:${d.line} is damaged: ${d.why}` });
  const snapIds = new Set(snaps.map((s) => s.id));
  for (const r of journal.records) {
    if (r.kind === "tree") {
      // gc keeps every snapshot a live record names: one gone is damage, and without it the call's changes would read as none.
      if (!snapIds.has(r.snapshot))
        problems.push({ kind: "journal", id: `${r.session} ${r.call}`, message: `journal: snapshot ${r.snapshot} of ${r.session} ${r.phase} ${r.call} is missing (its ref was removed)` });
      continue;
    }
    if (r.kind === "unknown") continue;
    const st = r.state;
    if (st?.sha256 && (st.kind === "file" || st.kind === "symlink") && !cas.has(st.sha256)) {
      problems.push({ kind: "journal", id: `${r.session} ${r.call}`, message: `journal: content of ${r.path} (${r.session} ${r.phase} ${r.call}) is missing` });
    }
  }
  // A baseline whose bytes are gone would revert its paths to nothing: the revert check would then refuse to decide.
  const { baselines, damaged } = readBaselines(ctx.store);
  for (const f of damaged) problems.push({ kind: "baseline", id: f, message: `baseline file baselines/${f} is damaged: it does not parse` });
  for (const b of baselines) {
    const lost = Object.entries(b.entries).filter(([, st]) => st.sha256 && (st.kind === "file" || st.kind === "symlink") && !cas.has(st.sha256));
    if (lost.length) problems.push({ kind: "baseline", id: b.key, message: `baseline ${b.key}: content of ${lost[0]![0]}${lost.length > 1 ? ` and ${lost.length - 1} more` : ""} is missing` });
  }
  // Each capsule's bytes against the seal kept in git and the one the chain of runs names (SPEC section 9).
  const capsules = new Capsules(ctx);
  const runCount = capsules.ids().length;
  for (const p of await capsules.verify()) problems.push({ kind: "run", id: p.id, message: `run ${p.id}: ${p.message}` });
  // Fetched records (SPEC section 14): each one's seal, records and content; the ref names it.
  const fetched = await fetchedSessions(ctx);
  for (const f of fetched) {
    for (const message of await checkFetched(ctx, f)) problems.push({ kind: "shared", id: f.ref, message: `fetched session ${f.session ?? f.ref} (origin ${f.origin}): ${message}` });
  }
  const fetchedRunList = await fetchedRuns(ctx);
  for (const f of fetchedRunList) {
    for (const message of await checkFetchedRun(ctx, f)) problems.push({ kind: "shared", id: f.ref, message: `fetched run ${f.run ?? f.ref} (origin ${f.origin}): ${message}` });
  }
  const pending = existsSync(storePath(ctx.store, "pending")) ? pendingIntents(ctx.store).length : 0;
  if (pending) problems.push({ kind: "intent", id: null, message: `${pending} interrupted apply(s) could not be finished` });
  return {
    ok: problems.length === 0,
    blobs,
    records: journal.records.length,
    receipts: receiptCount,
    snapshots: snaps.length,
    runs: runCount,
    shared: fetched.length + fetchedRunList.length,
    problems,
  };
}

async function refCount(ctx: Context): Promise<number> {
  if (ctx.mode === "private" && !existsSync(join(ctx.gitDir, "HEAD"))) return 0;
  const r = await ctx.git(["for-each-ref", "--format=%(refname)", SNAPSHOT_REFS]);
  return r.stdout.toString("utf8").split("\n").filter(Boolean).length;
}
