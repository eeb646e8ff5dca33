import { splitZ } from "../git/git.js";
import { lineSafe } from "../git/objects.js";
import { treeEntries } from "../capture/tree-edit.js";
import { splitRel } from "../sys/bound-dir.js";
import { fieldsFor, PairDiffsRead, type PathsWanted } from "../store/pair-diffs.js";
import type { Context } from "../repo/context.js";
import { sortByPath } from "../domain/paths.js";
import { changeKind } from "../domain/states.js";
import type { ChangeEntry, ChangeSet, GitOid, RepoPath, Scope, State } from "../domain/types.js";

const ZERO = /^0+$/;
const HEX = /^[0-9a-f]+$/;

/** Git's modes, one string each: a change set of 100,000 paths holds two each, not copies of them. */
const MODES = new Map(["100644", "100755", "120000", "160000"].map((m) => [m, m]));

/**
 * A tree entry's state. The oid is copied out of git's line: as a slice
 * (what `split` gives) it would keep the whole line alive as long as the
 * state, a hundred bytes a path in a large change set.
 */
export function stateFromTree(mode: string, oid: string): State | null {
  if (mode === "000000" || ZERO.test(oid)) return null;
  const m = MODES.get(mode) ?? mode;
  // JSON.parse makes a string of its own, and is the fastest way measured (0.04 µs an oid; a Buffer's round trip 0.3).
  const own = (HEX.test(oid) ? JSON.parse(`"${oid}"`) : oid) as GitOid;
  if (m === "120000") return { kind: "symlink", mode: m, oid: own };
  if (m === "160000") return { kind: "gitlink", mode: m, oid: own };
  return { kind: "file", mode: m, oid: own };
}

/**
 * The change set between two trees: `pre` from `from`, `post` from `to`.
 * Renames are a deletion plus an addition. Optional paths limit it (a
 * directory takes everything below it); they are matched literally.
 */
export async function treeChangeSet(ctx: Context, scope: Scope, from: string, to: string, paths: readonly RepoPath[] = [], by: string[] = [], env: Record<string, string> = {}): Promise<ChangeSet> {
  const args = ["--literal-pathspecs", "diff-tree", "-r", "-z", "--raw", "--no-renames", "--full-index", from, to];
  if (paths.length > 0) args.push("--", ...paths);
  const r = await ctx.git(args, { env });
  const fields = splitZ(r.stdout);
  const entries: ChangeEntry[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [m1, m2, o1, o2] = fields[i]!.slice(1).split(" ");
    const path = fields[i + 1]! as RepoPath;
    const pre = stateFromTree(m1!, o1!);
    const post = stateFromTree(m2!, o2!);
    entries.push({ path, change: changeKind(pre, post), pre, post, by });
  }
  return { scope, entries: sortByPath(entries) };
}

/**
 * The states of the given paths in a tree (absent paths are left out),
 * read from the trees on their way down (`treeEntries`,
 * src/capture/tree-edit.ts: in-process where they are loose, else all in one
 * `cat-file --batch`), each name found by its bytes. Not `ls-tree` with the
 * paths as pathspecs: git matches every entry against every pathspec (90 ms
 * for 1,000 paths in a 20,000-file tree, against 30 ms for their 100
 * directories whole), and an argument cannot carry a name that is not
 * UTF-8. A path whose directory git's line-based input would split or
 * unquote still goes through `ls-tree`.
 */
export async function treeStates(ctx: Context, tree: string, paths: readonly string[], env: Record<string, string> = {}): Promise<Map<string, State>> {
  const out = new Map<string, State>();
  const plain: string[] = [];
  const odd: string[] = [];
  for (const p of paths) (lineSafe(splitRel(p)[0]) ? plain : odd).push(p);
  if (plain.length > 0) {
    for (const [p, e] of await treeEntries(ctx, tree, plain, () => undefined, env)) {
      // Absent, or a directory there (git writes "40000"; some old tools wrote it zero-padded): no state of a file.
      const s = e && e.mode !== "40000" && e.mode !== "040000" ? stateFromTree(e.mode, e.oid) : null;
      if (s) out.set(p, s);
    }
  }
  for (let i = 0; i < odd.length; i += 1000) {
    const chunk = odd.slice(i, i + 1000);
    const asked = new Set(chunk);
    const r = await ctx.git(["--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", tree, "--", ...chunk], { env });
    for (const rec of splitZ(r.stdout)) {
      const tab = rec.indexOf("\t");
      const [mode, , oid] = rec.slice(0, tab).split(" ");
      const s = stateFromTree(mode!, oid!);
      if (s && asked.has(rec.slice(tab + 1))) out.set(rec.slice(tab + 1), s);
    }
  }
  return out;
}

/**
 * The raw diff of each pair of commits, in one `git diff-tree --stdin` (a
 * line "A B" diffs B to A; `--always` prints the header of an empty diff, so
 * the answers stay aligned with the pairs).
 */
export async function diffPairs(
  ctx: Context,
  pairs: readonly { from: string; to: string }[],
  only: PathsWanted | null = null,
  cache: PairDiffsRead | null = pairDiffsFor(ctx, pairs.length),
): Promise<{ path: RepoPath; pre: State | null; post: State | null }[][]> {
  if (pairs.length === 0) return [];
  const key = (p: { from: string; to: string }) => `${p.to} ${p.from}`;
  const want = new Map(pairs.map((p) => [key(p), only]));
  const kept = cache ? cache.read(want) : new Map<string, string[]>();
  const missing = pairs.filter((p) => !kept.has(key(p)));
  const fresh = new Map<string, string[]>();
  if (missing.length > 0) {
    const input = missing.map((p) => `${key(p)}\n`).join("");
    const r = await ctx.git(["diff-tree", "--stdin", "--always", "-r", "-z", "--raw", "--no-renames", "--full-index"], { input });
    let k = 0;
    let cur: string[] = [];
    for (const f of splitZ(r.stdout)) {
      // Where a record may begin (an even count of fields), a field that is no ":" record is the next pair's header.
      if (!f.startsWith(":") && cur.length % 2 === 0) fresh.set(key(missing[k++]!), (cur = []));
      else cur.push(f);
    }
    if (k !== missing.length) throw new Error(`git diff-tree answered ${k} of ${missing.length} pairs`);
    // Kept whole, whatever this fold wants of them: the next may want other paths.
    cache?.keep(fresh);
  }
  return pairs.map((p) => {
    const fields = kept.get(key(p)) ?? fieldsFor(fresh.get(key(p))!, only);
    const out: { path: RepoPath; pre: State | null; post: State | null }[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const [m1, m2, o1, o2] = fields[i]!.slice(1).split(" ");
      out.push({ path: fields[i + 1]! as RepoPath, pre: stateFromTree(m1!, o1!), post: stateFromTree(m2!, o2!) });
    }
    return out;
  });
}

/** From this many pairs on, diffs are kept in and read from the store's cache (src/store/pair-diffs.ts). */
const CACHE_FROM = 32;

/**
 * The store's kept pair diffs for a fold of `pairs` pairs in all: a few (a
 * call's own window) cost git less than reading the cache, a long fold reads
 * it, once for all it asks (pass the same one to each `diffPairs`).
 */
export function pairDiffsFor(ctx: Context, pairs: number): PairDiffsRead | null {
  return pairs >= CACHE_FROM ? new PairDiffsRead(ctx.store) : null;
}
