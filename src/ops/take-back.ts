import { storePath } from "../domain/store-layout.js";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { decodePath, encodePath, fsPath } from "../domain/path-bytes.js";
import { splitZ } from "../git/git.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Context } from "../repo/context.js";
import { insideRoot, jsonPath } from "../domain/paths.js";
import { UnwindError, usage } from "../domain/errors.js";
import { Cas } from "../store/cas.js";
import { createHash } from "node:crypto";
import { sha256 } from "../domain/hash.js";
import { loadConfig } from "../store/config.js";
import { fsClock } from "../sys/files.js";
import { inDirOf } from "../sys/bound-dir.js";
import type { ReceiptItem, ReceiptKind } from "../store/receipts.js";
import { applyPlan, type Progress } from "../apply/apply.js";
import { checkoutBytes } from "../apply/checkout-form.js";
import { ContentReader } from "../store/content.js";
import { matches } from "../domain/states.js";
import { gitPatch, hunksOf, isText, revertHunks } from "../domain/hunks.js";
import { acts, countActions, isPartial } from "../domain/actions.js";
import { plan as makePlan } from "../plan/planner.js";
import { observe } from "../capture/observe.js";
import { collectAsGrown, collectIfGrown } from "../sys/heap.js";
import type {
  Action,
  ChangeEntry,
  ChangeSet,
  Counts,
  GitOid,
  Interleaved,
  LaterWrite,
  Observed,
  StartedBy,
  Plan,
  PlanInput,
  PlanItem,
  Reason,
  RepoPath,
  Scope,
  Sha256,
  State,
  UncapturedCall,
} from "../domain/types.js";

export interface UndoOptions {
  dryRun: boolean;
  force: boolean;
  merge: boolean;
  kind: ReceiptKind;
  /** false: apply without intent or receipt, for a work tree that is thrown away after (src/apply/apply.ts). */
  seal?: boolean | undefined;
  /** Told how many of the paths to write are written, as the apply goes. */
  progress?: Progress | undefined;
  /** Apply only if the plan's digest is this one (a preview's `plan`); else nothing is done (SPEC section 4). */
  expect?: string | undefined;
  laterWrites?: ReadonlyMap<RepoPath, LaterWrite> | undefined;
  interleaved?: ReadonlyMap<RepoPath, Interleaved> | undefined;
  /** Paths kept as they are, reported as `skip` / `retained` (a run's `allow` paths under `--safe-only`). */
  retained?: ReadonlySet<string> | undefined;
  /** The change set is another machine's record: a path git ignores here is never written (`ignored-path`). */
  fetched?: boolean | undefined;
  /** Take back only these hunks (1-based, as `changes --patch` numbers them) of the one path in the change set. */
  hunks?: readonly number[] | undefined;
  /** Who started it, for the receipt (SPEC section 13). */
  by?: StartedBy | undefined;
  /** With `dryRun`: the report carries `patch`, what each path would hold after, as a patch from what it holds now. */
  patch?: boolean | undefined;
}

/** What a path held when it was planned, as plain data (a symlink's target as its hash). */
export type NowState =
  | { kind: "absent" }
  | { kind: "dir" }
  | { kind: "other" }
  | { kind: "file"; mode: string; size: number; sha256: Sha256; oid: GitOid | null }
  | { kind: "symlink"; sha256: Sha256; oid: GitOid | null }
  | { kind: "blocked"; at: string; file?: true };

export interface ReportItem {
  /** The path, with bytes that are not UTF-8 as U+FFFD (then `pathBytes` holds them). */
  path: string;
  /** The path's bytes in base64 when they are not UTF-8 (src/domain/path-bytes.ts). */
  pathBytes?: string;
  action: Action;
  reason: Reason | null;
  detail: string | null;
  pre: State | null;
  post: State | null;
  /** What the path held when it was planned (what it holds now, for a dry run). */
  now: NowState;
}

/** The undo / restore / redo report of SPEC section 4. */
export interface UndoReport {
  receipt: string | null;
  scope: Scope;
  dryRun: boolean;
  /** The plan's digest: pass it as `expect` to apply exactly this plan. */
  plan: string;
  items: ReportItem[];
  counts: Counts;
  /** Conflicts, or skips other than `unchanged`, remain: the command exits 1. */
  partial: boolean;
  /** A dry run's, when asked: the content each path would get, as git's patch from what it holds now (`git apply` makes it so). */
  patch?: string;
  /** With `patch`: paths the undo writes whose content is no text (binary, a symlink), so not in the patch. */
  notText?: string[];
  /**
   * The scope's calls no capture saw (imported shell calls): not taken back,
   * since nobody knows what they changed; the command exits 1 when there are
   * any (docs/import.md). Absent when there are none.
   */
  uncaptured?: UncapturedCall[];
}

/**
 * The one engine: change set → plan → (apply → receipt). Every scope comes
 * through here. With `dryRun` nothing is written anywhere; otherwise the
 * caller holds the store lock.
 */
export async function runUndo(ctx: Context, cs: ChangeSet, opts: UndoOptions): Promise<UndoReport> {
  const r = await takeBack(ctx, cs, opts);
  // Work the record never saw remains, whatever the plan did: the undo is done only as far as it knows.
  return cs.uncaptured?.length ? { ...r, uncaptured: cs.uncaptured, partial: true } : r;
}

async function takeBack(ctx: Context, cs: ChangeSet, opts: UndoOptions): Promise<UndoReport> {
  // The fold's garbage, collected before the plan adds its own (src/sys/heap.ts).
  collectIfGrown();
  const { plan, reader, merged, fsNow } = await planFor(ctx, cs, opts);
  // The plan holds what it needs of each entry; the change set, the caller's own, need not hold them through
  // the writes too (a 100,000-path shell call's entries were 12.9 MB of the undo's heap). Its scope stays.
  cs.entries = [];
  let planned: ReportItem[] | null = plan.items.map((i) => reportItem(i));
  const digest = planDigest(cs.scope, planned);
  if (opts.expect !== undefined && !sameDigest(opts.expect, digest)) {
    throw new UnwindError("E_PLAN_CHANGED", `the plan is no longer the one previewed (${short(opts.expect)}; now ${short(digest)}): nothing was done`, {
      hint: "preview it again (--dry-run; undo_preview or restore_preview over MCP), check it, and apply with the new digest",
    });
  }
  if (opts.dryRun) return { ...report(null, cs.scope, true, digest, planned), ...(opts.patch ? await planPatch(ctx, reader, plan, merged) : {}) };
  // Nothing to write: no receipt, so the chain, `receipts` and redo hold only what changed something.
  if (!plan.items.some((i) => acts(i.action))) return report(null, cs.scope, false, digest, planned);
  // The apply's report is made from its receipt: a row a path less to hold while it writes.
  planned = null;
  const receipt = await applyPlan(ctx, reader, plan, opts.kind, merged, { seal: opts.seal !== false, progress: opts.progress, fsNow, by: opts.by });
  const byPath = new Map<string, PlanItem>(plan.items.map((i) => [i.path, i]));
  const items = receipt.items.map((r) => reportItem(byPath.get(r.path)!, r));
  return report(opts.seal === false ? null : receipt.id, cs.scope, false, digest, items);
}

const short = (d: string) => d.slice(0, 12);

/**
 * What each path the plan writes would hold after it, as git's patch from
 * what it holds now: a restore's earlier state, a merge's result, nothing
 * for a delete. Read only; the patch shows content where the report's
 * hashes do not. A side that is no text leaves the path to `notText`.
 */
async function planPatch(ctx: Context, reader: ContentReader, plan: Plan, merged: ReadonlyMap<Sha256, Buffer>): Promise<{ patch: string; notText: string[] }> {
  const parts: string[] = [];
  const notText: string[] = [];
  const side = (bytes: Buffer | null | undefined, mode: string) => (bytes && isText(bytes) ? { text: bytes.toString("utf8"), mode } : undefined);
  for (const i of plan.items) {
    if (!acts(i.action)) continue;
    const now = i.expect.kind === "absent" ? null : i.expect.kind === "file" ? side(currentBytes(ctx, i.path), i.expect.mode) : undefined;
    const mode = i.expect.kind === "file" ? i.expect.mode : "100644";
    const after =
      i.action === "delete"
        ? null
        : i.action === "merge"
          ? side(i.merged ? merged.get(i.merged) : undefined, i.mergedMode ?? mode)
          : i.pre?.kind === "file"
            ? side(await fileForm(ctx, reader, i.path, i.pre), i.pre.mode ?? mode)
            : undefined;
    if (now === undefined || after === undefined) notText.push(i.path);
    else parts.push(gitPatch(i.path, now, after));
  }
  return { patch: parts.join(""), notText };
}

/** A digest as a person copies it: the whole of it, or its first 12+ hex digits. Checked before anything is read. */
export function checkDigest(expect: string | undefined): void {
  if (expect !== undefined && !/^[0-9a-f]{12,64}$/.test(expect)) throw usage(`--expect ${expect}: not a plan digest`, "give the digest a dry run printed (its first 12+ hex digits)");
}

function sameDigest(expect: string, digest: string): boolean {
  checkDigest(expect);
  return digest.startsWith(expect);
}

function report(receipt: string | null, scope: Scope, dryRun: boolean, plan: string, items: ReportItem[]): UndoReport {
  return { receipt, scope, dryRun, plan, items, counts: countActions(items), partial: isPartial(items) };
}

/**
 * SHA-256 of what a preview shows: the scope and, per path, the action, its
 * reason, the states it goes between and what the path held. Any change to
 * the work tree or the record that would change the plan changes it. Each
 * item is hashed as a fixed-order tuple (a state's fields named by position),
 * so the digest does not depend on the order keys were set in, and 5,000
 * paths hash in a few milliseconds. One JSON line a row, hashed as it is
 * made: no text of the whole plan is built.
 */
export function planDigest(scope: Scope, items: readonly ReportItem[]): string {
  const h = createHash("sha256").update(`${JSON.stringify(["unwind-plan-2", scope.kind, scope.id])}\n`);
  for (const i of items) h.update(`${JSON.stringify([i.path, i.pathBytes ?? null, i.action, i.reason, i.detail, stateTuple(i.pre), stateTuple(i.post), nowTuple(i.now)])}\n`);
  return h.digest("hex");
}

const stateTuple = (s: State | null) => (s ? [s.kind, s.mode ?? null, s.size ?? null, s.sha256 ?? null, s.oid ?? null] : null);

function nowTuple(n: NowState): unknown[] {
  if (n.kind === "file") return [n.kind, n.mode, n.size, n.sha256, n.oid];
  if (n.kind === "symlink") return [n.kind, null, null, n.sha256, n.oid];
  if (n.kind === "blocked") return n.file ? [n.kind, n.at, "file"] : [n.kind, n.at];
  return [n.kind];
}

/** Observes everything the planner needs (the give-way rule included), then plans: the planner itself touches nothing. */
async function planFor(ctx: Context, cs: ChangeSet, opts: UndoOptions): Promise<{ plan: Plan; reader: ContentReader; merged: Map<Sha256, Buffer>; fsNow: number | undefined }> {
  const cfg = loadConfig(ctx.store);
  const paths = cs.entries.map((e) => e.path);
  const clean = new Set(cs.entries.filter((e) => e.pre?.clean || e.post?.clean).map((e) => e.path));
  const reader = new ContentReader(ctx, Cas.in(ctx.store));
  // Taken before anything is read: a file whose stat data is older proves itself unchanged at the write (src/capture/observe.ts).
  // A throwaway work tree (seal: false) has no writer to race: it reads everything, and writes nothing to the store.
  const fsNow = opts.dryRun || opts.seal === false ? undefined : fsClock(storePath(ctx.store, "clock"));
  // Every path's git blob id, not only where a record lacks SHA-256: a report names what a path holds now by it, as it names
  // the record's states (one id family on every surface: docs/design.md); the bytes are read anyway, hashing them costs little.
  const current = await observe(ctx, paths, { oids: true, clean, keep: opts.dryRun ? undefined : reader.cache, unreadOver: cfg.sizeCap });
  shareHashes(current, cs.entries);
  await reader.prefetch(cs.entries.map((e) => e.pre));
  const ignored = opts.fetched ? await ignoredHere(ctx, paths) : null;

  const merged = new Map<Sha256, Buffer>();
  const partial = opts.hunks ? await hunkTarget(ctx, reader, cs, opts.hunks) : null;
  const inputs: PlanInput[] = [];
  for (const original of cs.entries) {
    const entry = partial ? partial.entry : original;
    const cur = current.get(entry.path)!;
    const input: PlanInput = { entry, current: cur };
    if (opts.retained?.has(entry.path)) {
      inputs.push({ ...input, retained: true });
      continue;
    }
    if (ignored?.has(entry.path)) input.ignored = true;
    // A hunk undo's `pre` is text made here, kept in no store: the merge alone writes it.
    if (partial) input.partial = true;
    else if (entry.pre && (entry.pre.kind === "file" || entry.pre.kind === "symlink")) input.preBlob = await reader.status(entry.pre);
    const later = opts.laterWrites?.get(entry.path);
    if (later) input.laterWrite = later;
    const between = opts.interleaved?.get(entry.path);
    if (between) input.interleaved = between;
    const m = partial
      ? cur.kind === "file" && !matches(cur, entry.pre)
        ? await mergeBytes(ctx, currentBytes(ctx, entry.path), partial.post, partial.target)
        : null
      : opts.merge && cur.kind === "file" && cur.text && !matches(cur, entry.pre) && !matches(cur, entry.post)
        ? await threeWay(ctx, reader, entry.pre, entry.post, entry.path)
        : null;
    if (m) {
      input.merge = m.clean ? { clean: true, sha256: sha256(m.data) } : { clean: false };
      if (m.clean) merged.set(sha256(m.data), m.data);
    }
    inputs.push(input);
    collectAsGrown();
  }
  const storeRel = insideRoot(ctx.root, ctx.store);
  const reserved = storeRel ? [storeRel] : [];
  const planOpts = { force: opts.force, merge: opts.merge, sizeCap: cfg.sizeCap, reserved };
  return { plan: makePlan(cs.scope, giveWay(ctx.root, inputs, makePlan(cs.scope, inputs, planOpts)), planOpts), reader, merged, fsNow };
}

/**
 * What a path holds now is most often what the scope left there: its hashes
 * become the record's own strings, not a second copy of each that lives as
 * long as the plan (a shell call's states have only the oid to share: 56
 * bytes a path).
 */
function shareHashes(current: ReadonlyMap<RepoPath, Observed>, entries: readonly ChangeEntry[]): void {
  for (const e of entries) {
    const cur = current.get(e.path);
    if ((cur?.kind !== "file" && cur?.kind !== "symlink") || !e.post) continue;
    // Each on its own: a shell call's states, read from its snapshot, have an oid and no SHA-256.
    if (e.post.sha256 !== undefined && cur.sha256 === e.post.sha256) cur.sha256 = e.post.sha256;
    if (e.post.oid !== undefined && cur.oid === e.post.oid) cur.oid = e.post.oid;
  }
}

/**
 * What `undo --hunk` makes of the one path in the change set: the change's
 * result with the named hunks taken back (SPEC section 4). The entry's `pre`
 * becomes that text, so the plan, its digest and the receipt say what the
 * path will hold. Hunks are of text changes only; a file the scope deleted
 * comes back whole.
 */
async function hunkTarget(ctx: Context, reader: ContentReader, cs: ChangeSet, hunks: readonly number[]): Promise<{ entry: ChangeEntry; post: Buffer; target: Buffer }> {
  const hint = "list each path's hunks with: unwind changes SCOPE --path P --patch";
  if (cs.entries.length !== 1) throw usage(`--hunk takes hunks of one path; the ${cs.scope.kind} ${cs.scope.id} has ${cs.entries.length} in scope`, `name one with --path; ${hint}`);
  const entry = cs.entries[0]!;
  if (entry.post?.kind !== "file" || (entry.pre !== null && entry.pre.kind !== "file")) {
    throw usage(`--hunk: ${entry.path} is ${entry.post === null ? "deleted by the scope" : "not a file change"}: it has no hunks`, "take it back whole, without --hunk");
  }
  const pre = entry.pre === null ? Buffer.alloc(0) : await fileForm(ctx, reader, entry.path, entry.pre);
  const post = await fileForm(ctx, reader, entry.path, entry.post);
  if (!pre || !post) throw new UnwindError("E_STORE_DAMAGED", `the recorded bytes of ${entry.path} cannot be read`, { hint: "run unwind verify" });
  if (!isText(pre) || !isText(post)) throw usage(`--hunk: ${entry.path} is not text: it has no hunks`, "take it back whole, without --hunk");
  const text = revertHunks(pre.toString("utf8"), post.toString("utf8"), hunks);
  if (text === null) throw usage(`--hunk ${hunks.join(",")}: ${entry.path} has ${hunksOf(pre.toString("utf8"), post.toString("utf8")).length} hunk(s)`, hint);
  const target = Buffer.from(text, "utf8");
  const state: State = { kind: "file", mode: entry.post.mode ?? "100644", size: target.length, sha256: sha256(target) as Sha256 };
  return { entry: { ...entry, pre: state }, post, target };
}

/**
 * Which of `paths` git ignores in this work tree, as `git status` would
 * (a tracked file is not ignored): one `git check-ignore` for them all. A
 * fetched record's write there would be a file no `git status` shows, an
 * executable under `node_modules/.bin` the next test run picks up.
 */
async function ignoredHere(ctx: Context, paths: readonly string[]): Promise<Set<string>> {
  if (paths.length === 0) return new Set();
  // Exit 1: none of them is ignored.
  const r = await ctx.git(["check-ignore", "-z", "--stdin"], { input: Buffer.concat(paths.map((p) => Buffer.concat([encodePath(p), Buffer.from([0])]))), okCodes: [1] });
  return new Set(splitZ(r.stdout));
}

/**
 * A directory where the record has a file, or a symlinked parent, blocks a
 * path, unless the same plan deletes everything in the way: the files under
 * the directory, or the symlink itself. Apply deletes first and removes the
 * directories it emptied, so such a path is planned as if already absent.
 */
function giveWay(root: string, inputs: PlanInput[], first: Plan): PlanInput[] {
  const deletes = new Set<string>(first.items.filter((i) => i.action === "delete").map((i) => i.path));
  const blocked = new Set(first.items.filter((i) => i.action === "conflict" && ((i.expect.kind === "dir" && i.reason === "not-regular") || i.expect.kind === "blocked")).map((i) => i.path as string));
  if (blocked.size === 0) return inputs;
  return inputs.map((input) => {
    const cur = input.current;
    if (!blocked.has(input.entry.path)) return input;
    if (cur.kind === "blocked" && deletes.has(cur.at)) return { ...input, current: { kind: "absent" } };
    if (cur.kind === "dir") {
      const inside = filesUnder(root, input.entry.path);
      if (inside.length > 0 && inside.every((f) => deletes.has(f))) return { ...input, current: { kind: "absent" } };
    }
    return input;
  });
}

/** Every non-directory under `rel`, without following symlinks. */
function filesUnder(root: string, rel: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(fsPath(join(root, rel)), { withFileTypes: true, encoding: "buffer" })) {
    const p = `${rel}/${decodePath(e.name)}`;
    if (e.isDirectory()) out.push(...filesUnder(root, p));
    else out.push(p);
  }
  return out;
}

/** A plan's item as reported; `done`: what the apply did with it (its detail, where it has one, wins). */
function reportItem(i: PlanItem, done?: Pick<ReceiptItem, "action" | "reason" | "detail">): ReportItem {
  const { path, pathBytes } = jsonPath(i.path);
  // A literal, not `{ ...jsonPath(path), ... }`: see src/plan/planner.ts on leading spreads.
  return {
    path,
    ...(pathBytes === undefined ? {} : { pathBytes }),
    action: done ? done.action : i.action,
    reason: done ? done.reason : i.reason,
    detail: (done?.detail ? done.detail : i.detail) ?? null,
    pre: i.pre,
    post: i.post,
    now: nowState(i.expect),
  };
}

function nowState(o: Observed): NowState {
  if (o.kind === "file") return { kind: "file", mode: o.mode, size: o.size, sha256: o.sha256, oid: o.oid ?? null };
  if (o.kind === "symlink") return { kind: "symlink", sha256: o.sha256, oid: o.oid ?? null };
  return o;
}

/** A recorded state's bytes in the file's own form (an older snapshot's blob is git's clean form: a CRLF file's lines as LF), null where it is no file or its bytes are gone. */
export async function fileForm(ctx: Context, reader: ContentReader, path: RepoPath, state: State | null): Promise<Buffer | null> {
  if (state?.kind !== "file") return null;
  try {
    return (await checkoutBytes(ctx, path, state)) ?? (await reader.read(state));
  } catch {
    return null;
  }
}

/** What a path holds now, read through the directory it was checked in (src/sys/bound-dir.ts). */
const currentBytes = (ctx: Context, path: RepoPath) => inDirOf(ctx.root, path, (d, name) => d.readFile(name));

/** `merge-file`: `current` <- (`base` -> `other`), bytes in, the result and whether it was clean out. */
async function mergeBytes(ctx: Context, current: Buffer, base: Buffer, other: Buffer): Promise<{ clean: boolean; data: Buffer }> {
  const dir = mkdtempSync(join(tmpdir(), "unwind-merge-"));
  try {
    const cur = join(dir, "current");
    writeFileSync(cur, current);
    writeFileSync(join(dir, "base"), base);
    writeFileSync(join(dir, "other"), other);
    const r = await ctx.git(["merge-file", "-p", "--quiet", cur, join(dir, "base"), join(dir, "other")], {
      okCodes: Array.from({ length: 127 }, (_, i) => i + 1),
    });
    return { clean: r.code === 0, data: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Three-way merge that takes back only this scope's hunks: the scope turned
 * `pre` into `post`; someone then turned `post` into what is on disk. Merging
 * current ← (post → pre) keeps their hunks and reverts ours.
 */
async function threeWay(ctx: Context, reader: ContentReader, pre: State | null, post: State | null, path: RepoPath): Promise<{ clean: boolean; data: Buffer } | null> {
  if (!pre || !post || pre.kind !== "file" || post.kind !== "file") return null;
  // Both sides in the file's form, as the current bytes are.
  const preData = await fileForm(ctx, reader, path, pre);
  const postData = await fileForm(ctx, reader, path, post);
  if (!preData || !postData) return null;
  return mergeBytes(
    ctx,
    inDirOf(ctx.root, path, (d, name) => d.readFile(name)),
    postData,
    preData,
  );
}
