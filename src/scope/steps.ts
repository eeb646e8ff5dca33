import { loadExcludes } from "../capture/excludes.js";
import type { Snapshot } from "../capture/snapshot.js";
import type { Context } from "../repo/context.js";
import { Cas } from "../store/cas.js";
import type { PairDiffsRead, PathsWanted } from "../store/pair-diffs.js";
import { correctDiff, legacyForm, type Side } from "./snapshot-diff.js";
import { diffPairs, treeChangeSet } from "./tree.js";
import type { DiffEntry } from "./visibility.js";

/**
 * A work tree's snapshots as a fold reads them, one after another: what
 * the timeline (src/scope/calls.ts) and a kept change set carried forward
 * (src/scope/carry.ts) both diff.
 */

export type Diff = { index: number; entries: DiffEntry[] };

/** One snapshot of the sequence: a commit, or the scratch tree of the work tree now. */
export type Step = Side & { at: string; commit?: string };

/**
 * The diff between each two consecutive snapshots (one git process for all
 * of them), plus one for a last scratch tree that has no commit. `cache`:
 * the kept pair diffs the caller reads for all its asks (by default, as
 * many pairs as these say).
 */
export async function consecutiveDiffs(ctx: Context, seq: readonly Step[], which: (index: number) => boolean, only: PathsWanted | null, cache?: PairDiffsRead | null): Promise<Diff[]> {
  const pairs: { from: string; to: string; index: number }[] = [];
  for (let i = 0; i + 1 < seq.length; i++) {
    const a = seq[i]!;
    const b = seq[i + 1]!;
    if (a.commit && b.commit && which(i)) pairs.push({ from: a.commit, to: b.commit, index: i });
  }
  const out: Diff[] = (await diffPairs(ctx, pairs, only, cache)).map((entries, k) => ({ index: pairs[k]!.index, entries }));
  const last = seq[seq.length - 1];
  const before = seq[seq.length - 2];
  if (last && before && !last.commit && which(seq.length - 2)) {
    const cs = await treeChangeSet(ctx, { kind: "snapshot", id: "now" }, before.tree, last.tree, [], [], last.env);
    out.push({ index: seq.length - 2, entries: cs.entries.map(({ path, pre, post }) => ({ path, pre, post })) });
  }
  return out;
}

/** Snapshots (in time order) as steps; snapshots of one work tree name the same few exclude files, each read (inflated, hashed) once. */
export function stepsOf(ctx: Context, snaps: readonly Snapshot[]): Step[] {
  const cas = Cas.in(ctx.store);
  const excludesRead = new Map<string, ReturnType<typeof loadExcludes>>();
  const excludesOf = (e: Snapshot["excludes"]) => {
    const k = e ? `${e.info}\0${e.global}` : "";
    if (!excludesRead.has(k)) excludesRead.set(k, loadExcludes(cas, e));
    return excludesRead.get(k)!;
  };
  return snaps.map((s) => ({ at: s.at, commit: s.commit, tree: s.tree, env: {}, excludes: excludesOf(s.excludes), toolarge: s.toolargeFiles, clean: legacyForm(ctx, s), nested: s.nested }));
}

/** Every path whose state differs between two consecutive steps, as the fold reads each pair (its forms and caps corrected). */
export async function pathsChanged(ctx: Context, seq: readonly Step[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const d of await consecutiveDiffs(ctx, seq, () => true, null)) for (const e of await correctDiff(ctx, d.entries, seq[d.index]!, seq[d.index + 1]!)) out.add(e.path);
  return out;
}
