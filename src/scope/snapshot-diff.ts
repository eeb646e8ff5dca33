import { excludeTexts, loadExcludes } from "../capture/excludes.js";
import type { Snapshot, TreeResult } from "../capture/snapshot.js";
import type { Cas } from "../store/cas.js";
import { usage } from "../domain/errors.js";
import { sortByPath } from "../domain/paths.js";
import { changeKind } from "../domain/states.js";
import { sameTooLarge, tooLargeState, type TooLarge } from "../capture/toolarge.js";
import type { Context } from "../repo/context.js";
import type { ChangeSet, RepoPath, Scope, State } from "../domain/types.js";
import { treeChangeSet } from "./tree.js";
import { storedAsIs } from "../capture/conversion.js";
import { correctVisibility, type DiffEntry, type Rules } from "./visibility.js";

/**
 * What a diff between two snapshots of one work tree means (SPEC section
 * 2): git's tree diff, with what the trees cannot hold put back in (files
 * over the size cap) and what only changed visibility (ignore rules) taken
 * out. Every scope built on snapshots reads them through here.
 */

/** One side of the diff: a snapshot, or the scratch tree of the work tree now. */
export interface Side extends Rules {
  /** Files left out of the tree for being over the size cap. */
  toolarge?: Readonly<Record<string, TooLarge>> | undefined;
  /** The tree holds git's clean form of its files where git converts (an older snapshot: `legacyForm`). */
  clean?: boolean;
  /** The untracked nested repositories it saw (`dir/`), where it knows (a full status). */
  nested?: readonly string[] | undefined;
}

/**
 * A tree leaves untracked nested repositories out, so one that is gone on
 * the later side (an agent's `rm -rf`, its uncommitted work with it) shows
 * in no tree diff: it gets an entry of its own, its earlier state never
 * recorded (`unknown`: undo says it cannot bring it back), never silence.
 * Only where both sides know what they saw. Pure.
 */
export function goneNested(entries: readonly DiffEntry[], from: Pick<Side, "nested">, to: Pick<Side, "nested">): DiffEntry[] {
  if (!from.nested?.length || !to.nested) return [...entries];
  const now = new Set(to.nested);
  const have = new Set(entries.map((e) => e.path as string));
  const out = [...entries];
  for (const d of from.nested) {
    const path = d.replace(/\/$/, "");
    if (now.has(d) || have.has(path)) continue;
    out.push({ path: path as RepoPath, pre: { kind: "unknown" }, post: null });
  }
  return out;
}

/**
 * Whether snapshot `s` holds git's clean form of files git converts: taken
 * before snapshots kept bytes as on disk, in a repository where git
 * converts (judged by the sources git reads for a path at the root:
 * config, and attributes files outside the tree and at its root).
 */
export function legacyForm(ctx: Context, s: Pick<Snapshot, "bytes">): boolean {
  return s.bytes !== "disk" && !storedAsIs(ctx, [".gitattributes"]);
}

/** `entries` with each clean-form side's states marked so, and what differs only by form taken out. */
export async function inForms(ctx: Context, entries: readonly DiffEntry[], from: Pick<Side, "clean">, to: Pick<Side, "clean">, env: Record<string, string>): Promise<DiffEntry[]> {
  const m = marked(entries, from, to);
  return Boolean(from.clean) === Boolean(to.clean) ? m : acrossForms(ctx, m, env);
}

/** `entries` with the states of a clean-form side marked so (`State.clean`). */
function marked(entries: readonly DiffEntry[], from: Pick<Side, "clean">, to: Pick<Side, "clean">): DiffEntry[] {
  if (!from.clean && !to.clean) return [...entries];
  const mark = (s: State | null, clean: boolean | undefined): State | null => (clean && s?.kind === "file" ? { ...s, clean: true } : s);
  return entries.map((e) => ({ ...e, pre: mark(e.pre, from.clean), post: mark(e.post, to.clean) }));
}

/**
 * Across the change of form (an older snapshot and a newer one), a file
 * git converts differs by id though nothing changed: it is no change where
 * the bytes of the newer, put through git's conversion at its path, give
 * the older's id. One git process per such path, only across the change.
 */
async function acrossForms(ctx: Context, entries: DiffEntry[], env: Record<string, string>): Promise<DiffEntry[]> {
  const out: DiffEntry[] = [];
  for (const e of entries) {
    const { pre, post } = e;
    if (pre?.kind === "file" && post?.kind === "file" && Boolean(pre.clean) !== Boolean(post.clean) && pre.oid && post.oid && pre.mode === post.mode) {
      const [clean, disk] = pre.clean ? [pre, post] : [post, pre];
      const bytes = (await ctx.git(["cat-file", "blob", disk.oid!], { env })).stdout;
      const id = (await ctx.git(["hash-object", `--path=${e.path}`, "--stdin"], { input: bytes })).stdout.toString("utf8").trim();
      if (id === clean.oid) continue;
    }
    out.push(e);
  }
  return out;
}

/**
 * A path over the cap on one side is absent from that side's tree, so the
 * tree diff alone would call it added or deleted, or miss it: its recorded
 * size and hash go back in. Pure.
 */
export function withTooLarge(entries: readonly DiffEntry[], from: Side["toolarge"], to: Side["toolarge"]): DiffEntry[] {
  const big = new Set([...Object.keys(from ?? {}), ...Object.keys(to ?? {})]);
  if (big.size === 0) return [...entries];
  const byPath = new Map(entries.map((e) => [e.path as string, e]));
  const out = entries.filter((e) => !big.has(e.path));
  for (const p of big) {
    const e = byPath.get(p);
    const a = from?.[p];
    const b = to?.[p];
    if (a && b && sameTooLarge(a, b)) continue;
    const pre: State | null = a ? tooLargeState(a) : (e?.pre ?? null);
    const post: State | null = b ? tooLargeState(b) : (e?.post ?? null);
    if (pre === null && post === null) continue;
    out.push({ path: p as RepoPath, pre, post });
  }
  return out;
}

/** The corrected diff from `from` (taken at `at`) to `to`. */
async function snapshotDiff(ctx: Context, from: Side & { at: string }, to: Side): Promise<DiffEntry[]> {
  const cs = await treeChangeSet(ctx, { kind: "snapshot", id: "-" }, from.tree, to.tree, [], [], { ...from.env, ...to.env });
  return correctDiff(ctx, cs.entries, from, to);
}

/** A raw tree diff between two sides, corrected. */
export async function correctDiff(ctx: Context, entries: readonly DiffEntry[], from: Side & { at: string }, to: Side): Promise<DiffEntry[]> {
  // Either side's objects may live in a scratch dir: each tree is read with both environments.
  const env = { ...from.env, ...to.env };
  const forms = await inForms(ctx, entries, from, to, env);
  return correctVisibility(ctx, goneNested(withTooLarge(forms, from.toolarge, to.toolarge), from, to), { ...from, env }, { ...to, env });
}

/** A snapshot as one side of a diff: its tree, its ignore rules (kept in the CAS) and its over-cap files. */
export function snapshotSide(ctx: Context, cas: Cas, s: Snapshot): Side & { at: string } {
  return { tree: s.tree, env: {}, excludes: loadExcludes(cas, s.excludes), toolarge: s.toolargeFiles, at: s.at, clean: legacyForm(ctx, s), nested: s.nested };
}

/** The work tree now (a tree `writeWorkTree` wrote) as one side of a diff. */
export function nowSide(ctx: Context, now: TreeResult): Side {
  return { tree: now.tree, env: now.env, excludes: excludeTexts(ctx), toolarge: now.toolargeFiles, nested: now.nested };
}

/**
 * The change set from snapshot `from` to `to`, limited to `paths` (a path
 * takes itself and everything below it). A path that names nothing in the
 * change set nor on either side is a usage error: a typo must not read as
 * "nothing to do".
 */
export async function snapshotChangeSet(ctx: Context, scope: Scope, from: Side & { at: string }, to: Side, paths: readonly RepoPath[] = []): Promise<ChangeSet> {
  let entries = await snapshotDiff(ctx, from, to);
  if (paths.length > 0) {
    const under = (p: string, q: string) => p === q || p.startsWith(q + "/");
    entries = entries.filter((e) => paths.some((q) => under(e.path, q)));
    const unmatched = paths.filter((q) => !entries.some((e) => under(e.path, q)));
    for (const q of unmatched) {
      const onSide = async (s: Side) =>
        Object.keys(s.toolarge ?? {}).some((p) => under(p, q)) ||
        (await ctx.git(["--literal-pathspecs", "ls-tree", "--name-only", "-z", s.tree, "--", q], { env: { ...from.env, ...to.env } })).stdout.length > 0;
      if (!(await onSide(from)) && !(await onSide(to))) {
        throw usage(`path '${q}' matches nothing in the snapshot or the work tree`, "paths are relative to the current directory; check the spelling");
      }
    }
  }
  return { scope, entries: sortByPath(entries.map((e) => ({ path: e.path, change: changeKind(e.pre, e.post), pre: e.pre, post: e.post, by: ["snapshot"] }))) };
}
