import { storePath } from "../domain/store-layout.js";
import { copyFileSync, existsSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { basename, isAbsolute, join } from "node:path";
import { fsPath } from "../domain/path-bytes.js";
import { insideRoot } from "../domain/paths.js";
import { splitZ, type GitResult } from "../git/git.js";
import { commitBody, writeLooseObject } from "../git/objects.js";
import { indexKey, type Context } from "../repo/context.js";
import { INDEX_CONFIG, STATUS_ARGS } from "./index-config.js";
import { indexEnv, setDiskHead } from "./disk-form.js";
import { storedAsIs } from "./conversion.js";
import { watchedStatus, type WatchScan } from "./watched.js";

// The private index of a work tree and what unwind keeps beside it: the
// index tree (the tree of the index as last written, the base every
// snapshot's tree is edited from), the ref that keeps that tree alive, and
// gc of the indexes of work trees that are gone. docs/format.md has the files.

/**
 * Seeds the private index from the real one: same stat data, so only files
 * that changed since git last looked are hashed. The copy keeps the real
 * index's mtime, which is what git's racy-clean check compares entries
 * against; a fresh mtime would make racily-clean entries look clean.
 */
export async function seedIndex(ctx: Context, target: string): Promise<void> {
  if (!ctx.realIndex || !existsSync(ctx.realIndex)) return;
  copyKeepingMtime(ctx.realIndex, target);
  // Rewrite it once as a plain (not split: a split index points at a shared
  // index in the user's git dir) version-4 index, which is smaller to read and
  // write on every snapshot. git smudges racily-clean entries as it writes,
  // judging them by the mtime kept above.
  // In the repository's own git dir: a split index's shared half lives there.
  await ctx.git([...INDEX_CONFIG, "update-index", "--no-split-index", "--index-version", "4"], { env: { GIT_INDEX_FILE: target }, optionalLocks: true });
  const env = indexEnv(ctx, target, { head: await userHead(ctx) });
  // Entries the user marked assume-unchanged (lowercase tags) would never be
  // looked at again: an agent's edit to them would go unseen.
  const tagged = splitZ((await ctx.git(["ls-files", "-v", "-z"], { env })).stdout);
  const assumed = tagged.filter((t) => /^[a-z] /.test(t)).map((t) => t.slice(2));
  if (assumed.length > 0) {
    await ctx.git([...INDEX_CONFIG, "update-index", "--no-assume-unchanged", "-z", "--stdin"], { env, input: assumed.join("\0") + "\0", optionalLocks: true });
  }
  // The real index holds git's clean form of each file, and its stat data says "unchanged": where git
  // converts, that form would stand for the file's bytes for as long as the file is not touched. Every
  // file there is hashed again as it is (once, at seeding; nothing to do where git converts nothing).
  const staged = splitZ((await ctx.git(["ls-files", "-s", "-z"], { env })).stdout)
    .filter((l) => !l.startsWith("160000 "))
    .map((l) => l.slice(l.indexOf("\t") + 1));
  if (staged.length > 0 && !storedAsIs(ctx, staged)) {
    // Out, then in: an entry whose stat data still matches would be kept as it is, in git's form.
    const input = staged.join("\0") + "\0";
    await ctx.git([...INDEX_CONFIG, "update-index", "--force-remove", "-z", "--stdin"], { env, input, optionalLocks: true });
    await ctx.git([...INDEX_CONFIG, "update-index", "--add", "-z", "--stdin"], { env, input, optionalLocks: true });
  }
}

/** The repository's HEAD commit, or null (no commit yet): where a freshly seeded index's disk git dir starts. */
async function userHead(ctx: Context): Promise<string | null> {
  if (ctx.mode !== "git") return null;
  const r = await ctx.git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], { okCodes: [1, 128] }).catch(() => null);
  const oid = r?.code === 0 ? r.stdout.toString("utf8").trim() : "";
  return oid || null;
}

/**
 * An index copy must keep the original's mtime: git's racy-clean check
 * compares each entry's mtime with the index file's own.
 */
export function copyKeepingMtime(from: string, to: string): void {
  const st = statSync(from);
  copyFileSync(from, to);
  utimesSync(to, st.atime, st.mtime);
}

/**
 * Changes since the index tree stay out of the private index until more than
 * this many paths (or bytes of files) differ: each snapshot re-hashes them
 * (cheap while they are few), and the index, whose rewrite costs a full read
 * and write of every entry (~90 ms at 100k files), is rewritten rarely.
 */
export const FOLD_PATHS = 64;
export const FOLD_BYTES = 1 << 20;

/** The tree of the private index as last written: the base every snapshot's tree is edited from. */
function basePath(ctx: Context): string {
  return `${ctx.indexFile}.base`;
}

/** The index tree stops describing the index the moment the index changes: forgotten first, recorded again after. */
export function clearIndexTree(ctx: Context): void {
  rmSync(basePath(ctx), { force: true });
}

/** Each private index's index tree is kept reachable under here (see recordIndexTree), named by the index's key. */
const INDEX_REFS = "refs/unwind/index/";
const indexRef = (ctx: Context) => INDEX_REFS + basename(ctx.indexFile).replace(/\.index$/, "");

/**
 * Records the tree the private index now holds. Later snapshots name edited
 * trees, not this one: once gc drops the snapshot that named it, git could
 * prune the very tree every snapshot is edited from. A commit of it under
 * `indexRef` keeps it (and every blob only the private index names) alive.
 */
export async function recordIndexTree(ctx: Context, tree: string, timeoutMs: number | undefined): Promise<void> {
  const body = commitBody(tree, "unwind <unwind@localhost>", Math.floor(Date.now() / 1000), "unwind: the tree of a private index\n");
  const commit = writeLooseObject(join(ctx.commonDir, "objects"), "commit", body, ctx.objectFormat);
  await ctx.git(["update-ref", "--no-deref", indexRef(ctx), commit], { timeoutMs });
  setDiskHead(ctx, commit);
  writeFileSync(basePath(ctx), tree + "\n");
  rmSync(`${ctx.indexFile}.tree`, { force: true }); // what stores before 2026-11-30 kept instead (not protected by a ref)
}

/** A private index whose work tree is gone: its files in the store, and the ref that keeps its tree alive. */
export interface OrphanIndex {
  key: string;
  files: string[];
  bytes: number;
}

/**
 * Private indexes of work trees that no longer exist (a linked worktree
 * removed): only a cache, but megabytes each, and their index ref would
 * keep their last tree alive for ever. Only for a store inside the
 * repository's own git dir: a store shared by several repositories (through
 * UNWIND_STORE) holds indexes this repository cannot judge.
 */
export function orphanIndexes(ctx: Context): OrphanIndex[] {
  if (ctx.mode !== "git" || insideRoot(ctx.commonDir, ctx.store) === null) return [];
  const live = new Set([indexKey(ctx.commonDir)]);
  const worktrees = join(ctx.commonDir, "worktrees");
  for (const name of existsSync(worktrees) ? readdirSync(worktrees) : []) {
    try {
      live.add(indexKey(realpathSync(join(worktrees, name))));
    } catch {
      /* vanished meanwhile */
    }
  }
  const dir = storePath(ctx.store, "index");
  const byKey = new Map<string, OrphanIndex>();
  for (const f of existsSync(dir) ? readdirSync(dir) : []) {
    const key = /^([0-9a-f]{16})\.index(\..*)?$/.exec(f)?.[1];
    if (!key || live.has(key)) continue;
    const o = byKey.get(key) ?? { key, files: [], bytes: 0 };
    o.files.push(join(dir, f));
    o.bytes += statSync(join(dir, f)).size;
    byKey.set(key, o);
  }
  return [...byKey.values()];
}

/** Removes an orphan's files and its index ref. The caller holds the store lock. */
export async function dropIndex(ctx: Context, o: OrphanIndex): Promise<void> {
  for (const f of o.files) rmSync(f, { recursive: true, force: true });
  await ctx.git(["update-ref", "-d", INDEX_REFS + o.key]);
}

/**
 * `git status` started on the private index, synchronously (the early start
 * of `unwind snapshot` runs it before the CLI bundle loads:
 * src/cli/early-start.ts), with the index tree it is to be read against.
 * The caller holds the store lock.
 */
export function startStatus(ctx: Context, timeoutMs?: number): { indexTree: string | null; status: Promise<GitResult>; watch?: Promise<WatchScan>; nested: string[] } {
  // Only unwind uses this index, and only under the store lock: a leftover
  // index.lock is from a git we killed (timeout).
  rmSync(`${ctx.indexFile}.lock`, { force: true });
  const indexTree = readIndexTree(ctx);
  const nested = readNested(ctx);
  const stale = nested.some((dir) => !isRepository(join(ctx.root, dir)));
  // With a watcher running for this root, it says what to look at (src/capture/watched.ts).
  const watched = stale ? null : watchedStatus(ctx, indexTree, timeoutMs);
  if (watched) return { indexTree, ...watched, nested };
  const args = stale ? [...INDEX_CONFIG, "-c", "core.untrackedCache=false", ...STATUS_ARGS.slice(INDEX_CONFIG.length)] : STATUS_ARGS;
  const status = ctx.git(args, { env: indexEnv(ctx), optionalLocks: true, timeoutMs });
  status.catch(() => undefined); // awaited by whoever finishes the snapshot; one given up must not leave an unhandled rejection
  return { indexTree, status, nested };
}

/**
 * The untracked nested repositories the last full `git status` listed
 * (`?? dir/`), kept beside the private index. git's untracked cache lists
 * such a directory in its parent's entry and never looks inside it, so
 * when its `.git` goes away (a person or an agent turning it into a plain
 * directory) the parent's cache still holds "a repository here" until the
 * parent itself changes: a snapshot then misses every file in it, and an
 * undo of a later move of them deleted them (found by a review, reproduced
 * 2 runs in 8 under load). So a snapshot that finds one of them gone asks
 * status without the untracked cache.
 */
const nestedFile = (ctx: Context) => `${ctx.indexFile}.nested`;

/** The nested repositories kept by the last full status (none before the first). */
function readNested(ctx: Context): string[] {
  try {
    return splitZ(readFileSync(nestedFile(ctx), "utf8"));
  } catch {
    return []; // none listed yet: the first full status sees them as they are
  }
}

/**
 * Whether `dir` is still a repository as git tells one: a `.git` directory
 * with a HEAD, or a `.git` file whose `gitdir:` leads to one. A `.git` left
 * behind that leads nowhere (its git directory removed or moved) makes a
 * plain directory, whose files git then lists one by one.
 */
export function isRepository(dir: string): boolean {
  const dotGit = join(dir, ".git");
  try {
    if (statSync(fsPath(dotGit)).isDirectory()) return existsSync(fsPath(join(dotGit, "HEAD")));
    const m = /^gitdir: (.+)$/m.exec(readFileSync(fsPath(dotGit), "utf8"));
    if (!m) return false;
    const target = m[1]!.trim();
    return existsSync(join(isAbsolute(target) ? target : join(dir, target), "HEAD"));
  } catch {
    return false;
  }
}

/** Keeps the nested repositories a full status listed, for the next snapshot's check; `was`, the list its start read: written only when they differ. */
export function keepNested(ctx: Context, dirs: readonly string[], was: readonly string[]): void {
  if (dirs.length === was.length && dirs.every((d, i) => d === was[i])) return;
  writeFileSync(nestedFile(ctx), dirs.length === 0 ? "" : dirs.join("\0") + "\0");
}

export function readIndexTree(ctx: Context): string | null {
  try {
    const t = readFileSync(basePath(ctx), "utf8").trim();
    return /^[0-9a-f]{40,64}$/.test(t) ? t : null;
  } catch {
    return null;
  }
}
