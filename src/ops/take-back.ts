import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { decodePath, fsPath } from "../domain/path-bytes.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Context } from "../repo/context.js";
import { insideRoot } from "../domain/paths.js";
import { Cas } from "../store/cas.js";
import { sha256 } from "../domain/hash.js";
import { loadConfig } from "../store/config.js";
import type { ReceiptKind } from "../store/receipts.js";
import { applyPlan } from "../apply/apply.js";
import { ContentReader } from "../store/content.js";
import { matches } from "../domain/states.js";
import { countActions } from "../domain/actions.js";
import { plan as makePlan } from "../plan/planner.js";
import { observe } from "../capture/observe.js";
import type { ChangeSet, Counts, Interleaved, LaterWrite, Observed, Plan, PlanInput, Reason, RepoPath, Scope, Sha256, State } from "../domain/types.js";

export interface UndoOptions {
  dryRun: boolean;
  force: boolean;
  merge: boolean;
  kind: ReceiptKind;
  laterWrites?: ReadonlyMap<RepoPath, LaterWrite>;
  interleaved?: ReadonlyMap<RepoPath, Interleaved>;
}

export interface ReportItem {
  path: RepoPath;
  action: Plan["items"][number]["action"];
  reason: Reason | null;
  detail?: string;
  pre: State | null;
  post: State | null;
  /** What the path held when it was planned (what it holds now, for a dry run). */
  now: Observed;
}

/** The undo / restore / redo report of SPEC section 4. */
export interface UndoReport {
  receipt: string | null;
  scope: Scope;
  dryRun: boolean;
  items: ReportItem[];
  counts: Counts;
}

/**
 * The one engine: change set → plan → (apply → receipt). Every scope comes
 * through here. With `dryRun` nothing is written anywhere; otherwise the
 * caller holds the store lock.
 */
export async function runUndo(ctx: Context, cs: ChangeSet, opts: UndoOptions): Promise<UndoReport> {
  const cfg = loadConfig(ctx.store);
  const paths = cs.entries.map((e) => e.path);
  const needOids = cs.entries.some((e) => [e.pre, e.post].some((s) => s && !s.sha256 && s.oid));
  const current = await observe(ctx, paths, { oids: needOids });
  const reader = new ContentReader(ctx, new Cas(join(ctx.store, "cas")));
  await reader.prefetch(cs.entries.map((e) => e.pre));

  const merged = new Map<Sha256, Buffer>();
  const inputs: PlanInput[] = [];
  for (const entry of cs.entries) {
    const cur = current.get(entry.path)!;
    const input: PlanInput = { entry, current: cur };
    if (entry.pre && (entry.pre.kind === "file" || entry.pre.kind === "symlink")) input.preBlob = await reader.status(entry.pre);
    const later = opts.laterWrites?.get(entry.path);
    if (later) input.laterWrite = later;
    const between = opts.interleaved?.get(entry.path);
    if (between) input.interleaved = between;
    if (opts.merge && cur.kind === "file" && cur.text && !matches(cur, entry.pre) && !matches(cur, entry.post)) {
      const m = await threeWay(ctx, reader, entry.pre, entry.post, entry.path);
      if (m) {
        input.merge = m.clean ? { clean: true, sha256: sha256(m.data) } : { clean: false };
        if (m.clean) merged.set(sha256(m.data), m.data);
      }
    }
    inputs.push(input);
  }
  const storeRel = insideRoot(ctx.root, ctx.store);
  const reserved = storeRel ? [storeRel] : [];
  const planOpts = { force: opts.force, merge: opts.merge, sizeCap: cfg.sizeCap, reserved };
  const plan = makePlan(cs.scope, giveWay(ctx.root, inputs, makePlan(cs.scope, inputs, planOpts)), planOpts);

  if (opts.dryRun) {
    const items = plan.items.map(reportItem);
    return { receipt: null, scope: cs.scope, dryRun: true, items, counts: countActions(items) };
  }
  const receipt = await applyPlan(ctx, reader, plan, opts.kind, merged);
  const byPath = new Map(plan.items.map((i) => [i.path, i]));
  const items = receipt.items.map((r) => {
    const p = byPath.get(r.path)!;
    return reportItem({ ...p, action: r.action, reason: r.reason, ...(r.detail ? { detail: r.detail } : {}) });
  });
  return { receipt: receipt.id, scope: cs.scope, dryRun: false, items, counts: countActions(items) };
}

/**
 * A directory where the record has a file, or a symlinked parent, blocks a
 * path, unless the same plan deletes everything in the way: the files under
 * the directory, or the symlink itself. Apply deletes first and removes the
 * directories it emptied, so such a path is planned as if already absent.
 */
function giveWay(root: string, inputs: PlanInput[], first: Plan): PlanInput[] {
  const deletes = new Set<string>(first.items.filter((i) => i.action === "delete").map((i) => i.path));
  const blocked = new Set(
    first.items
      .filter((i) => i.action === "conflict" && ((i.expect.kind === "dir" && i.reason === "not-regular") || i.expect.kind === "blocked"))
      .map((i) => i.path as string),
  );
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

function reportItem(i: Plan["items"][number]): ReportItem {
  return { path: i.path, action: i.action, reason: i.reason, ...(i.detail ? { detail: i.detail } : {}), pre: i.pre, post: i.post, now: i.expect };
}

/**
 * Three-way merge that takes back only this scope's hunks: the scope turned
 * `pre` into `post`; someone then turned `post` into what is on disk. Merging
 * current ← (post → pre) keeps their hunks and reverts ours.
 */
async function threeWay(
  ctx: Context,
  reader: ContentReader,
  pre: State | null,
  post: State | null,
  path: RepoPath,
): Promise<{ clean: boolean; data: Buffer } | null> {
  if (!pre || !post || pre.kind !== "file" || post.kind !== "file") return null;
  let preData: Buffer;
  let postData: Buffer;
  try {
    preData = await reader.read(pre);
    postData = await reader.read(post);
  } catch {
    return null;
  }
  const dir = mkdtempSync(join(tmpdir(), "unwind-merge-"));
  try {
    const cur = join(dir, "current");
    writeFileSync(cur, readFileSync(fsPath(join(ctx.root, path))));
    writeFileSync(join(dir, "base"), postData);
    writeFileSync(join(dir, "other"), preData);
    const r = await ctx.git(["merge-file", "-p", "--quiet", cur, join(dir, "base"), join(dir, "other")], {
      okCodes: Array.from({ length: 127 }, (_, i) => i + 1),
    });
    return { clean: r.code === 0, data: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
