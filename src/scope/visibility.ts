import { lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { fsPath } from "../domain/path-bytes.js";
import { isGitignore } from "../domain/paths.js";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { isRepository } from "../capture/private-index.js";
import type { ExcludeTexts } from "../capture/excludes.js";
import { sameExcludes } from "../capture/excludes.js";
import { git, parseBatch, splitZ } from "../git/git.js";
import { treeStates } from "./tree.js";
import type { Context } from "../repo/context.js";
import type { RepoPath, State } from "../domain/types.js";
import { NOT_CAPTURED } from "./fold/timeline.js";

/**
 * Ignore rules are not edits (SPEC section 2). A tree snapshot holds only
 * what is not ignored, so when the rules change between two snapshots a
 * file that was there all along shows up as added (or vanishes as
 * deleted). Such a path is not the window's change:
 * - its ctime is older than the window: nothing touched it, so it is
 *   dropped from the diff;
 * - else it was touched while invisible: what it held before was never
 *   recorded, so that side of the change becomes NOT_CAPTURED.
 * A path that was not ignored under the earlier rules (the later rules,
 * for a vanished one) is a real addition (deletion) and stays.
 */

/** The rules in force at one snapshot: its tree's .gitignore files and the excludes outside it. */
export interface Rules {
  tree: string;
  /** Where the tree's objects can be read (a scratch tree's live in a temp dir). */
  env: Record<string, string>;
  /** null: not known (a snapshot older than this record). */
  excludes: ExcludeTexts | null;
}

export interface DiffEntry {
  path: RepoPath;
  pre: State | null;
  post: State | null;
}

/** Pure: whether the rules may have changed between the two sides of a diff. */
export function rulesChanged(entries: readonly DiffEntry[], from: ExcludeTexts | null, to: ExcludeTexts | null): boolean {
  if (entries.some((e) => isGitignore(e.path))) return true;
  // Snapshots from before excludes were kept say nothing either way: only a known difference counts.
  return from !== null && to !== null && !sameExcludes(from, to);
}

/** Pure: the diff with each path's decision applied (see above). */
export function applyVisibility(entries: readonly DiffEntry[], decide: ReadonlyMap<string, "drop" | "unknown">): DiffEntry[] {
  const out: DiffEntry[] = [];
  for (const e of entries) {
    const d = decide.get(e.path);
    if (d === "drop") continue;
    if (d === "unknown") out.push(e.pre === null ? { ...e, pre: NOT_CAPTURED } : { ...e, post: NOT_CAPTURED });
    else out.push(e);
  }
  return out;
}

/** A diff from `from` (taken at `fromAt`) to `to`, with what only changed visibility taken out. */
export async function correctVisibility(ctx: Context, entries: DiffEntry[], from: Rules & { at: string }, to: Rules): Promise<DiffEntry[]> {
  if (!rulesChanged(entries, from.excludes, to.excludes)) return entries;
  const appeared = entries.filter((e) => e.pre === null && e.post !== null).map((e) => e.path);
  const vanished = entries.filter((e) => e.pre !== null && e.post === null).map((e) => e.path);
  const hidden = [...(await ignoredUnder(ctx, from, appeared)), ...(await ignoredUnder(ctx, to, vanished))];
  if (hidden.length === 0) return entries;
  const since = Date.parse(from.at);
  const decide = new Map<string, "drop" | "unknown">();
  for (const p of hidden) {
    let ctime: number | null = null;
    try {
      ctime = lstatSync(fsPath(join(ctx.root, p))).ctimeMs;
    } catch {
      /* gone now: nothing says when */
    }
    decide.set(p, ctime !== null && ctime < since ? "drop" : "unknown");
  }
  return applyVisibility(entries, decide);
}

/**
 * Which of `paths` the rules ignore: git's own check-ignore, in a scratch
 * repository holding just the .gitignore files on the paths' way (from the
 * rules' tree) and the excludes the rules had. Unknown excludes: every
 * path counts as ignored, so it goes to the ctime test rather than being
 * taken for a real change.
 */
export async function ignoredUnder(ctx: Context, rules: Rules, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  if (!rules.excludes) return [...paths];
  const wanted = new Set<string>();
  for (const p of paths) {
    for (let d = dirname(p); ; d = dirname(d)) {
      wanted.add(d === "." ? ".gitignore" : `${d}/.gitignore`);
      if (d === ".") break;
    }
  }
  // Read from the tree objects, not named in argv: a directory whose name is not UTF-8 keeps its bytes (src/scope/tree.ts).
  const found = [...(await treeStates(ctx, rules.tree, [...wanted], rules.env))].map(([path, s]) => ({ path, oid: s.oid! }));
  const dir = mkdtempSync(join(tmpdir(), "unwind-ignore-"));
  try {
    const work = join(dir, "w");
    await git(["init", "-q", work], { cwd: dir });
    if (found.length > 0) {
      const batch = await ctx.git(["cat-file", "--batch", "--buffer"], { input: found.map((f) => f.oid).join("\n") + "\n", env: rules.env });
      parseBatch(batch.stdout, found.length).forEach((o, i) => {
        if (!o) return;
        const abs = join(work, found[i]!.path);
        mkdirSync(fsPath(dirname(abs)), { recursive: true });
        writeFileSync(fsPath(abs), o.body);
      });
    }
    writeFileSync(join(work, ".git", "info", "exclude"), rules.excludes.info ?? "");
    const global = join(dir, "global-excludes");
    writeFileSync(global, rules.excludes.global ?? "");
    const r = await git(["-c", `core.excludesFile=${global}`, "check-ignore", "--no-index", "-z", "--stdin"], {
      cwd: work,
      input: paths.join("\0") + "\0",
      okCodes: [1],
    });
    return r.code === 0 ? splitZ(r.stdout) : [];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Whether a path lies below a directory that is a repository of its own
 * (its `.git` leads to one), each directory asked once. Snapshots record a
 * submodule by its commit and leave an untracked nested repository out, so
 * a file capture inside one gets no snapshot points: "absent" there would
 * turn an agent's Edit into a change by nobody at the next snapshot.
 */
export function insideNestedRepository(root: string): (path: string) => boolean {
  const known = new Map<string, boolean>();
  const isRepo = (dir: string): boolean => {
    let v = known.get(dir);
    if (v === undefined) known.set(dir, (v = isRepository(join(root, dir))));
    return v;
  };
  return (path) => {
    for (let d = dirname(path); d !== "." && d !== "/" && d !== ""; d = dirname(d)) if (isRepo(d)) return true;
    return false;
  };
}

/**
 * Whether a snapshot cannot see some of `paths`: not held in its tree nor
 * over its size cap, and inside a nested repository or ignored by its rules.
 * Held paths are asked first (no git process where its trees are loose), so
 * the ignore check (an ls-tree, a scratch repository and a check-ignore)
 * runs only for the few it lacks.
 */
export async function someUnseen(ctx: Context, snap: Rules & { toolarge?: Readonly<Record<string, unknown>> | undefined }, paths: readonly RepoPath[]): Promise<boolean> {
  const held = await treeStates(ctx, snap.tree, paths);
  const unheld = paths.filter((p) => !held.has(p) && !snap.toolarge?.[p]);
  if (unheld.length === 0) return false;
  if (unheld.some(insideNestedRepository(ctx.root))) return true;
  return (await ignoredUnder(ctx, snap, unheld)).length > 0;
}
