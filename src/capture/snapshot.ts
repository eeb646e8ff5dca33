import { storePath } from "../domain/store-layout.js";
import { randomBytes } from "node:crypto";
import { fsPath } from "../domain/path-bytes.js";
import { existsSync, mkdirSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, type Stats } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pickId, type IdRef } from "../domain/ids.js";
import { GitError, parseBatch, splitZ, type GitResult } from "../git/git.js";
import { tryLock } from "../store/lock.js";
import { createRef } from "../git/refs.js";
import { commitBody, lineSafe, readLooseObject, writeLooseObject } from "../git/objects.js";
import { INDEX_CONFIG, STATUS_ARGS } from "./index-config.js";
import { CannotEditTree, foldIntoIndex, incrementalTree, overBudget, type TreeEntry } from "./tree-edit.js";
import { conversionInputs } from "./conversion.js";
import { diskFormReady, diskHead, indexEnv } from "./disk-form.js";
import { clearPending, overPending, readPending, statKey, writePending, type PendingEntry, type StatKey } from "./unfolded.js";
import { clearIndexTree, copyKeepingMtime, FOLD_BYTES, FOLD_PATHS, isRepository, keepNested, readIndexTree, recordIndexTree, seedIndex, startStatus } from "./private-index.js";
import { keepWatchState, type WatchScan } from "./watched.js";
import { ensureStore, storeReady, type Context } from "../repo/context.js";
import { inStore } from "../domain/paths.js";
import { loadConfig } from "../store/config.js";
import { Cas } from "../store/cas.js";
import { excludeTexts, keepExcludes, type Excludes } from "./excludes.js";
import { tooLargeStates, type TooLarge } from "./toolarge.js";

export const SNAPSHOT_REFS = "refs/unwind/snapshots/";

export interface SnapshotMeta {
  v: 1;
  id: string;
  at: string;
  root: string;
  parent: string | null;
  task?: string;
  session?: string;
  call?: string;
  label?: string;
  /** Taken by `unwind run` around its command: the run's id. */
  run?: string;
  /** On a run's after snapshot: when its before was taken, so the run's window is known from this one alone. */
  runSince?: string;
  /** Files left out of the tree for being over the size cap. */
  toolarge: string[];
  /** Their size and SHA-256 (absent in older snapshots). */
  toolargeFiles?: Record<string, TooLarge>;
  /** The ignore rules outside the tree when it was taken (src/capture/excludes.ts); absent in older snapshots. */
  excludes?: Excludes;
  /** The untracked nested repositories the full status listed (`dir/`): none of their files is in the tree. Absent where a watcher's scan stood in for it, and in older snapshots. */
  nested?: string[];
  /** "disk": the tree holds files' bytes as they are on disk (src/capture/disk-form.ts); absent in older snapshots, which hold git's clean form. */
  bytes?: "disk";
}

export interface Snapshot extends SnapshotMeta {
  commit: string;
  tree: string;
}

export interface TreeResult {
  tree: string;
  toolarge: string[];
  /** Size and SHA-256 of each file left out for being over the size cap. */
  toolargeFiles: Record<string, TooLarge>;
  /** Environment under which the tree's objects can be read (a scratch tree's live in a temp dir). */
  env: Record<string, string>;
  /** Removes a scratch tree's temp dir; a no-op otherwise. Call it when done with the tree. */
  dispose(): void;
  /** How the watcher had the scan done, when one runs for this root; absent otherwise. */
  watch?: WatchScan;
  /** Every path status listed (the watcher's next scan looks at them again: src/capture/watched.ts). */
  listed: string[];
  /** The untracked nested repositories a full status listed (`dir/`); absent after a watcher's scan. */
  nested?: string[];
  /** What the new tree holds at each of `listed`, where the tree was edited without a fold; null otherwise. */
  listedEntries: Map<string, TreeEntry | null> | null;
  /**
   * Writes the pending record for the next snapshot to build on: only once a
   * snapshot ref names the tree (src/capture/pending.ts). A no-op where there is none.
   */
  keepRecord(): void;
}

function newSnapshotId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:.]/g, "");
  return `s-${stamp}-${randomBytes(4).toString("hex")}`;
}

export interface SnapshotLabels {
  task?: string;
  session?: string;
  call?: string;
  label?: string;
  run?: string;
  runSince?: string;
}

/** A work tree snapshot under way: its index and base chosen, `git status` running. */
export interface StartedTree {
  readonly env: Record<string, string>;
  readonly scratchDir: string | null;
  /** Where a scratch run's new objects go, the store's read through alternates; empty otherwise. */
  readonly objectEnv: Record<string, string>;
  /** The tree of the private index as last written: the base the new tree is edited from. */
  readonly indexTree: string | null;
  readonly status: Promise<GitResult>;
  /** Set when a watcher runs for this root: how it had the scan done (src/capture/watched.ts). */
  readonly watch?: Promise<WatchScan> | undefined;
  /** The nested repositories the last full status listed, as the start read them (a scratch run keeps none). */
  readonly nested: readonly string[];
  /** Removes a scratch run's temp dir; a no-op otherwise. */
  dispose(): void;
}

/** Time left of a hook's budget for the next git call (every git call gets what is left). */
const leftOf = (deadline: number | undefined) => () => (deadline === undefined ? undefined : Math.max(1, deadline - Date.now()));

/**
 * The first half of `writeWorkTree`, up to and including starting `git
 * status`, which depends on nothing the caller's options say. Without
 * `scratch`, the caller holds the store lock.
 */
export async function startWorkTree(ctx: Context, opts: { scratch: boolean; deadline?: number }): Promise<StartedTree> {
  const left = leftOf(opts.deadline);
  if (!opts.scratch) {
    if (!storeReady(ctx)) await ensureStore(ctx);
    // An index from before snapshots held the bytes on disk holds git's clean form: seeded again.
    if (!diskFormReady(ctx)) rmSync(ctx.indexFile, { force: true });
    if (!existsSync(ctx.indexFile)) {
      rmSync(`${ctx.indexFile}.lock`, { force: true }); // from a git we killed: seeding writes the index
      clearIndexTree(ctx);
      await seedIndex(ctx, ctx.indexFile);
    }
    return startedOn(ctx, startStatus(ctx, left()));
  }
  const scratchDir = mkdtempSync(join(tmpdir(), "unwind-scratch-"));
  mkdirSync(join(scratchDir, "objects"));
  const idx = join(scratchDir, "index");
  let indexTree: string | null = null;
  if (existsSync(ctx.indexFile) && diskFormReady(ctx)) {
    // A scratch run holds no lock: the index tree counts only if no snapshot
    // rewrote the index (and its tree) while it was being copied.
    const before = readIndexTree(ctx);
    copyKeepingMtime(ctx.indexFile, idx);
    indexTree = readIndexTree(ctx) === before ? before : null;
  } else {
    await seedIndex(ctx, idx);
  }
  // New objects go to the scratch dir; the store's are read through alternates.
  const objectEnv = { GIT_OBJECT_DIRECTORY: join(scratchDir, "objects"), GIT_ALTERNATE_OBJECT_DIRECTORIES: join(ctx.commonDir, "objects") };
  // Its own disk git dir too: a scratch run writes nothing in the store.
  const env = { ...indexEnv(ctx, idx, { head: diskHead(ctx) }), ...objectEnv };
  const status = ctx.git(STATUS_ARGS, { env, optionalLocks: true, timeoutMs: left() });
  status.catch(() => undefined); // awaited by writeWorkTree; a start that is given up must not leave an unhandled rejection
  return { env, scratchDir, objectEnv, indexTree, status, nested: [], dispose: () => rmSync(scratchDir, { recursive: true, force: true }) };
}

/** A snapshot under way on the private index itself, from `startStatus`. */
export function startedOn(ctx: Context, s: { indexTree: string | null; status: Promise<GitResult>; watch?: Promise<WatchScan> | undefined; nested: readonly string[] }): StartedTree {
  return { env: indexEnv(ctx), scratchDir: null, objectEnv: {}, indexTree: s.indexTree, status: s.status, watch: s.watch, nested: s.nested, dispose: () => undefined };
}

/**
 * Writes the whole non-ignored work tree as a git tree: tracked and
 * untracked files, deletions, exec bits and symlinks, through an index that
 * is never the user's. With `scratch`, the index copy and any new objects go
 * to a temporary directory, so nothing in the repository or store changes.
 * `started` is a `startWorkTree` of the same options already under way.
 */
export async function writeWorkTree(ctx: Context, opts: { scratch: boolean; deadline?: number }, started?: StartedTree): Promise<TreeResult> {
  const { env, scratchDir, objectEnv, indexTree, status, dispose, watch, nested: listedBefore } = started ?? (await startWorkTree(ctx, opts));
  const left = leftOf(opts.deadline);
  try {
    const st = await status;
    const scan = watch ? await watch : undefined;
    // After status: a bad config must not release the lock while git may still write the index.
    const sizeCap = loadConfig(ctx.store).sizeCap;
    // What differs from the index tree now: stat data, or null for an absence.
    const now = new Map<string, StatKey | null>();
    const big: { path: string; st: Stats }[] = [];
    // Every path status listed: the watched scan looks at them all again next time (a big untracked file stays listed).
    const listed: string[] = [];
    // Submodules checked out at another commit than the one the index holds: the snapshot records the
    // commit, as git does (SPEC section 1).
    const links = new Map<string, string>();
    const nested: string[] = [];
    let addBytes = 0;
    let seen = 0;
    for (const rec of splitZ(st.stdout)) {
      if (++seen % 1024 === 0) overBudget(left);
      const y = rec[1];
      const path = rec.slice(3);
      const untracked = rec.startsWith("??");
      if (!untracked && (y === " " || y === undefined)) continue;
      if (path.split("/")[0] === ".git" || inStore(ctx.root, ctx.store, path) || path.split("/").includes(".unwind")) continue; // stores, ours or nested
      // An untracked nested repository is left out: put into the private index as a gitlink, it would hide
      // what is there once it stops being a repository (its .git removed, a plain directory made in its place).
      if (path.endsWith("/")) {
        nested.push(path);
        continue;
      }
      listed.push(path);
      if (y === "D") {
        now.set(path, null);
        continue;
      }
      let ls;
      try {
        ls = lstatSync(fsPath(join(ctx.root, path)));
      } catch {
        ls = null; // vanished since status
      }
      if (ls?.isDirectory() && !untracked) {
        // A gitlink the index holds, listed as changed, still a repository: a submodule checked out at another commit.
        const head = await nestedHead(ctx, path, left());
        if (head) {
          links.set(path, head);
          continue;
        }
      }
      if (!ls || !(ls.isFile() || ls.isSymbolicLink())) {
        // Gone, or a fifo, socket or device: nothing git can hold, so the snapshot shows no file here.
        if (!untracked) now.set(path, null);
        continue;
      }
      if (ls.isFile() && ls.size > sizeCap) {
        big.push({ path, st: ls });
        if (!untracked) now.set(path, null); // drop the stale smaller version
        continue;
      }
      now.set(path, statKey(ls));
      if (ls.isFile()) addBytes += ls.size;
    }
    const remove = [...now.keys()].filter((p) => now.get(p) === null);
    const add = [...now.keys()].filter((p) => now.get(p) !== null);
    // Status lists what differs from the index tree; changes are folded into
    // the index only once they add up (see FOLD_PATHS), so most snapshots
    // write no index.
    let tree: string | null = null;
    let keepRecord: () => void = () => undefined;
    let listedEntries: Map<string, TreeEntry | null> | null = null;
    if (now.size === 0 && links.size === 0 && indexTree) {
      tree = indexTree;
      listedEntries = new Map(listed.map((p) => [p, null])); // untracked, not in the tree
      if (!scratchDir) clearPending(ctx);
    } else if (indexTree && links.size === 0 && canEditTree(ctx, add, remove)) {
      const scratch = scratchDir ? { objects: join(scratchDir, "objects"), env: objectEnv } : undefined;
      const inputs = conversionInputs(ctx);
      const edit = await editedTree(ctx, indexTree, inputs, now, { add, remove }, left, scratch);
      tree = edit?.tree ?? null;
      if (edit && !scratchDir) {
        if (now.size > FOLD_PATHS || addBytes > FOLD_BYTES) {
          clearPending(ctx);
          clearIndexTree(ctx); // it stops describing the index the moment the index changes
          await foldIntoIndex(ctx, env, new Map([...edit.entries].map(([p, e]) => [p, e.entry])), left);
          await recordIndexTree(ctx, edit.tree, left());
        } else {
          // An untracked path status listed that is not in `now` (over the size cap, gone) is in neither tree.
          listedEntries = new Map(listed.map((p) => [p, edit.entries.get(p)?.entry ?? null]));
          if (!edit.fromRecord) keepRecord = () => writePending(ctx, indexTree, inputs, edit.tree, edit.entries);
        }
      }
    }
    if (tree === null) {
      if (!opts.scratch) {
        clearIndexTree(ctx);
        clearPending(ctx);
      }
      if (remove.length > 0) {
        // Force: the path may now lie beyond a symlink or be a fifo, where a plain --remove refuses.
        await ctx.git([...INDEX_CONFIG, "update-index", "--force-remove", "-z", "--stdin"], {
          env,
          input: remove.join("\0") + "\0",
          optionalLocks: true,
          timeoutMs: left(),
        });
      }
      if (add.length > 0) {
        await ctx.git([...INDEX_CONFIG, "update-index", "--add", "--remove", "--replace", "-z", "--stdin"], {
          env,
          input: add.join("\0") + "\0",
          optionalLocks: true,
          timeoutMs: left(),
        });
      }
      if (links.size > 0) {
        // The commit each was found at, not what git would find now: one record, read once.
        const info = [...links].map(([p, oid]) => `160000 ${oid}\t${p}`);
        await ctx.git([...INDEX_CONFIG, "update-index", "--add", "-z", "--index-info"], { env, input: info.join("\0") + "\0", optionalLocks: true, timeoutMs: left() });
      }
      tree = (await ctx.git([...INDEX_CONFIG, "write-tree"], { env, optionalLocks: true, timeoutMs: left() })).stdout.toString("utf8").trim();
      if (!opts.scratch) await recordIndexTree(ctx, tree, left());
    }
    // A full status's list of nested repositories: the next snapshot checks each is still one (private-index.ts).
    if (!scan && !opts.scratch) keepNested(ctx, nested, listedBefore);
    const toolargeFiles = tooLargeStates(ctx, big, Boolean(scratchDir));
    return { tree, toolarge: Object.keys(toolargeFiles).sort(), toolargeFiles, env: objectEnv, dispose, keepRecord, listed, listedEntries, ...(scan ? { watch: scan } : { nested }) };
  } catch (e) {
    dispose();
    throw e;
  }
}

/**
 * The commit a nested repository at `path` has checked out, or null where it
 * has none (no commit yet, or not a repository after all). Run inside it,
 * as git's own submodule code does; rare (a submodule that moved), so one
 * git process each.
 */
async function nestedHead(ctx: Context, path: string, timeoutMs: number | undefined): Promise<string | null> {
  if (!isRepository(join(ctx.root, path))) return null;
  const r = await ctx.git(["-C", path, "rev-parse", "--verify", "-q", "HEAD"], { okCodes: [1, 128], timeoutMs }).catch(() => null);
  const oid = r?.code === 0 ? r.stdout.toString("utf8").trim() : "";
  return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oid) ? oid : null;
}

/**
 * The tree of the work tree, given `now` (what differs from the index tree;
 * `paths`: its present and absent paths), edited in-process, and every
 * entry it differs from the index tree by.
 * Built on the last snapshot's tree where the pending record still holds
 * (only paths whose stat changed since are hashed), else on the index tree.
 * Null where neither can be edited: the caller writes it from the index.
 */
async function editedTree(
  ctx: Context,
  indexTree: string,
  inputs: string,
  now: ReadonlyMap<string, StatKey | null>,
  paths: { add: string[]; remove: string[] },
  left: () => number | undefined,
  scratch: { objects: string; env: Record<string, string> } | undefined,
): Promise<{ tree: string; entries: Map<string, PendingEntry>; fromRecord?: true } | null> {
  const edit = async (base: string, kept: ReadonlyMap<string, PendingEntry>, gone: string[], hash: string[]) => {
    const known = new Map<string, TreeEntry | null>(gone.map((p) => [p, null]));
    const r = await incrementalTree(ctx, base, known, hash, left, scratch).catch((e: unknown) => {
      if (e instanceof CannotEditTree) return null;
      throw e;
    });
    if (!r) return null;
    const entries = new Map(kept);
    for (const [p, entry] of r.changes) {
      const st = r.stats.get(p);
      entries.set(p, { entry, stat: st ? statKey(st) : null });
    }
    return { tree: r.tree, entries };
  };
  const pending = readPending(ctx, indexTree, inputs);
  const over = pending && overPending(pending, now);
  if (over) {
    // Nothing changed since the last snapshot: its tree, and the record stands as it is.
    if (over.rehash.length === 0 && over.gone.length === 0) return { tree: pending.tree, entries: over.kept, fromRecord: true };
    const r = await edit(pending.tree, over.kept, over.gone, over.rehash); // null: the last tree is gone (pruned)
    if (r) return r;
  }
  return edit(indexTree, new Map(), paths.remove, paths.add);
}

/**
 * Whether the tree can be edited in-process rather than written from the
 * whole index: names git's line-based plumbing reads correctly, and a
 * repository that keeps exec bits (`git init` writes core.fileMode into the
 * repository's config; a worktree's own config may override it). Anything
 * unreadable takes the index path, which is always right.
 */
function canEditTree(ctx: Context, add: readonly string[], remove: readonly string[]): boolean {
  return [...add, ...remove].every(lineSafe) && keepsExecBits(ctx);
}

/**
 * Whether the repository keeps exec bits as the file system has them (`git
 * init` writes core.fileMode into the repository's config; a worktree's own
 * config may override it). Anything unreadable counts as no.
 */
export function keepsExecBits(ctx: Context): boolean {
  const off = /^\s*filemode\s*=\s*(false|no|off|0)\s*$/im;
  try {
    if (off.test(readFileSync(join(ctx.commonDir, "config"), "utf8"))) return false;
  } catch {
    return false;
  }
  try {
    return !off.test(readFileSync(join(ctx.gitDir, "config.worktree"), "utf8"));
  } catch {
    return true; // no worktree config
  }
}

function lastPath(ctx: Context): string {
  return storePath(ctx.store, "index", `${basename(ctx.indexFile)}.last`);
}

/** Takes a snapshot and names it under refs/unwind/snapshots/. The caller holds the store lock. */
export async function takeSnapshot(ctx: Context, labels: SnapshotLabels = {}, opts: { deadline?: number } = {}, started?: StartedTree): Promise<Snapshot> {
  const { tree, toolarge, toolargeFiles, keepRecord, watch, listed, listedEntries, nested } = await writeWorkTree(ctx, { scratch: false, ...opts }, started);

  const now = new Date();
  const id = newSnapshotId(now);
  let parent: string | null = null;
  try {
    parent = readFileSync(lastPath(ctx), "utf8").trim() || null;
  } catch {
    /* first snapshot of this work tree */
  }
  const excludes = keepExcludes(Cas.in(ctx.store), excludeTexts(ctx));
  const meta: SnapshotMeta = { v: 1, id, at: now.toISOString(), root: ctx.root, parent, ...defined(labels), toolarge, toolargeFiles, excludes, ...(nested ? { nested } : {}), bytes: "disk" };
  const body = commitBody(tree, "unwind <unwind@localhost>", Math.floor(now.getTime() / 1000), JSON.stringify(meta) + "\n");
  const oid = writeLooseObject(join(ctx.commonDir, "objects"), "commit", body, ctx.objectFormat);
  await createRef(ctx, SNAPSHOT_REFS + id, oid);
  keepRecord();
  if (watch) await keepWatchState(ctx, watch, { listed, entries: listedEntries, tree }, readIndexTree(ctx));
  writeFileSync(lastPath(ctx), id + "\n");
  return { ...meta, commit: oid, tree };
}

/**
 * Phase one of a snapshot taken in two steps: the store lock held and
 * `git status` of the private index running. Plain data and functions, so
 * one bundle can start it (bin/unwind starts `unwind snapshot`'s before the
 * command line loads: src/cli/early-start.ts) and another finish it.
 */
export interface SnapshotStart {
  /** The store and private index it was started for: `finishSnapshot` checks them against its own context. */
  readonly store: string;
  readonly indexFile: string;
  readonly indexTree: string | null;
  readonly status: Promise<GitResult>;
  readonly watch?: Promise<WatchScan> | undefined;
  readonly nested: readonly string[];
  /** Releases the store lock taken for it (once; later calls do nothing). */
  release(): void;
  /** Set by `settleSnapshot`: given up, its lock released; `finishSnapshot` then takes the snapshot anew. */
  settled?: boolean;
}

/**
 * Phase one, synchronously up to spawning `git status`; null where only the
 * normal path can take the snapshot: a store or private index not created
 * yet, or a store that is busy (the normal path waits for it).
 */
export function startSnapshot(ctx: Context): SnapshotStart | null {
  if (!storeReady(ctx) || !existsSync(ctx.indexFile) || !diskFormReady(ctx)) return null;
  const lock = tryLock(ctx.store, "snapshot");
  if (!("release" in lock)) return null;
  let released = false;
  const release = () => {
    if (!released) lock.release();
    released = true;
  };
  try {
    const { indexTree, status, watch, nested } = startStatus(ctx);
    return { store: ctx.store, indexFile: ctx.indexFile, indexTree, status, watch, nested, release };
  } catch (e) {
    release();
    throw e;
  }
}

/**
 * Phase two: the snapshot `start` began, taken under `ctx`, and the lock
 * released; null (and the start settled) if it was begun for another store
 * or index than `ctx` names.
 */
export async function finishSnapshot(ctx: Context, start: SnapshotStart, labels: SnapshotLabels = {}): Promise<Snapshot | null> {
  if (start.settled) return null;
  if (ctx.store !== start.store || ctx.indexFile !== start.indexFile) {
    await settleSnapshot(start);
    return null;
  }
  // Another bundle's GitError is another class: its failures become ours, so they are reported the same way.
  const status = start.status.catch((e: unknown) => {
    const g = e as Partial<Pick<GitError, "args" | "gitCode" | "stderr">> | null;
    throw g?.args && g.gitCode !== undefined ? new GitError(g.args, g.gitCode, g.stderr ?? "") : e;
  });
  try {
    return await takeSnapshot(ctx, labels, {}, startedOn(ctx, { indexTree: start.indexTree, status, watch: start.watch, nested: start.nested }));
  } finally {
    start.release();
  }
}

/** Ends a start nobody finished: `git status` may write the private index, so the lock is held until it is done. */
export async function settleSnapshot(start: SnapshotStart): Promise<void> {
  start.settled = true;
  await start.status.catch(() => undefined);
  start.release();
}

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== "")) as Partial<T>;
}

/**
 * The snapshots a fold from `from` on needs, without reading the others:
 * the last one of this work tree taken at or before `from`, every one taken
 * since, and `since`, that last one's time. A snapshot's id carries the
 * time it was taken (`newSnapshotId`), so the ref names alone say which
 * commits to read. Null where they cannot say (refs kept in a reftable, a
 * name not of that form, a snapshot whose time is not its name's) or where
 * no snapshot of this work tree precedes `from`: the caller reads them all.
 */
export async function snapshotsFrom(ctx: Context, from: string): Promise<{ snaps: Snapshot[]; since: string } | null> {
  const refs = snapshotRefs(ctx);
  if (!refs) return null;
  const timed: { id: string; at: string; oid: () => string | null }[] = [];
  for (const [id, oid] of refs) {
    const at = timeOfId(id);
    if (at === null) return null;
    timed.push({ id, at, oid });
  }
  timed.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  let lo = timed.length;
  while (lo > 0 && timed[lo - 1]!.at > from) lo--;
  if (lo === 0) return null;
  lo--;
  // Snapshots of one millisecond are ordered by id, newest first, as the fold sorts them: all of them, or none.
  while (lo > 0 && timed[lo - 1]!.at === timed[lo]!.at) lo--;
  // Most of them wanted: one git process reads them faster than each commit inflated here.
  const whole = async () => {
    const all = await listSnapshots(ctx);
    const base = all.filter((s) => s.root === ctx.root && s.at <= from).reduce<Snapshot | undefined>((m, s) => (m === undefined || s.at > m.at ? s : m), undefined);
    return base ? { snaps: all.filter((s) => s.at >= base.at), since: base.at } : null;
  };
  const many = (k: number) => timed.length - k > timed.length / 4;
  if (many(lo)) return whole();
  const snaps: Snapshot[] = [];
  let hi = timed.length;
  let step = 64;
  // Back from `from`, more at a time, until a snapshot of this work tree is among them: others' are interleaved.
  for (;;) {
    const read = await snapshotsOf(ctx, timed.slice(lo, hi));
    if (read === null) return null;
    snaps.push(...read);
    const mine = snaps.filter((s) => s.root === ctx.root && s.at <= from);
    const base = mine.reduce<Snapshot | undefined>((m, s) => (m === undefined || s.at > m.at ? s : m), undefined);
    if (base) return { snaps: snaps.filter((s) => s.at >= base.at).sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)), since: base.at };
    if (lo === 0) return null;
    hi = lo;
    lo = Math.max(0, lo - step);
    step *= 2;
    if (many(lo)) return whole();
  }
}

/** Every snapshot's id and the time it names, from the refs alone (no object read); null where refs are kept in a reftable or an id names no time. */
export function snapshotTimes(ctx: Context): Map<string, string> | null {
  const refs = snapshotRefs(ctx);
  if (!refs) return null;
  const out = new Map<string, string>();
  for (const id of refs.keys()) {
    const at = timeOfId(id);
    if (at === null) return null;
    out.set(id, at);
  }
  return out;
}

/** `s-20261203T221503823Z-1ec5910c` -> `2026-12-03T22:15:03.823Z`; null for a name not of that form. */
function timeOfId(id: string): string | null {
  const m = /^s-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-[0-9a-f]{8}$/.exec(id);
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z` : null;
}

/**
 * Each snapshot ref's id, and how to learn its commit: from packed-refs, or
 * (a loose ref wins) its own file, read only for the snapshots asked for.
 * Null where refs are kept in a reftable.
 */
function snapshotRefs(ctx: Context): Map<string, () => string | null> | null {
  if (existsSync(join(ctx.commonDir, "reftable"))) return null;
  const out = new Map<string, () => string | null>();
  let packed = "";
  try {
    packed = readFileSync(join(ctx.commonDir, "packed-refs"), "utf8");
  } catch {
    /* none packed */
  }
  for (const line of packed.split("\n")) {
    const sp = line.indexOf(" ");
    if (sp < 0 || !line.startsWith(SNAPSHOT_REFS, sp + 1)) continue;
    const oid = line.slice(0, sp);
    out.set(line.slice(sp + 1 + SNAPSHOT_REFS.length), () => oid);
  }
  const dir = join(ctx.commonDir, SNAPSHOT_REFS);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    /* none loose */
  }
  for (const n of names) {
    out.set(n, () => {
      try {
        const text = readFileSync(join(dir, n), "utf8").trim();
        return /^[0-9a-f]{40,64}$/.test(text) ? text : null;
      } catch {
        return null;
      }
    });
  }
  return out;
}

/** The snapshots of these refs, each commit read loose where it is, else from git in one batch; null if one is not what its name says. */
async function snapshotsOf(ctx: Context, named: readonly { id: string; at: string; oid: () => string | null }[]): Promise<Snapshot[] | null> {
  const refs: { id: string; at: string; oid: string }[] = [];
  for (const n of named) {
    const oid = n.oid();
    // A ref that is no longer there, or not a plain one (a symbolic ref, a directory): git is asked instead.
    if (oid === null) return null;
    refs.push({ id: n.id, at: n.at, oid });
  }
  const read = await snapshotCommits(
    ctx,
    refs.map((r) => r.oid),
  );
  const out: Snapshot[] = [];
  for (const r of refs) {
    const snap = read.get(r.oid);
    // Gone since its name was read (gc), or not one of ours: listSnapshots would not list it either.
    if (!snap) continue;
    if (snap.id !== r.id || snap.at !== r.at) return null;
    out.push(snap);
  }
  return out;
}

/**
 * The snapshot each of these commits holds, read loose where it is, else
 * from git in one batch: null for one that is gone, not a commit, or whose
 * message is not a snapshot's metadata (listSnapshots skips those too).
 */
async function snapshotCommits(ctx: Context, oids: readonly string[]): Promise<Map<string, Snapshot | null>> {
  const objects = join(ctx.commonDir, "objects");
  const bodies = new Map<string, Buffer>();
  const packed: string[] = [];
  for (const oid of oids) {
    const body = readLooseObject(objects, oid, "commit");
    if (body) bodies.set(oid, body);
    else packed.push(oid);
  }
  if (packed.length > 0) {
    const batch = await ctx.git(["cat-file", "--batch", "--buffer"], { input: packed.join("\n") + "\n" });
    parseBatch(batch.stdout, packed.length).forEach((o, i) => {
      if (o?.type === "commit") bodies.set(packed[i]!, o.body);
    });
  }
  const out = new Map<string, Snapshot | null>();
  for (const oid of oids) {
    const text = bodies.get(oid)?.toString("utf8") ?? "";
    const split = text.indexOf("\n\n");
    const tree = /^tree ([0-9a-f]+)\n/.exec(text)?.[1];
    out.set(oid, split >= 0 && tree ? snapshotOf(oid, tree, text.slice(split + 2)) : null);
  }
  return out;
}

/** A snapshot commit's metadata (its message) with its ids; null where the message is not one. */
function snapshotOf(commit: string, tree: string, message: string): Snapshot | null {
  try {
    return { ...(JSON.parse(message.trim()) as SnapshotMeta), commit, tree };
  } catch {
    return null;
  }
}

/**
 * In a process that lives on (the UI's server, the MCP server): each
 * snapshot commit read, by its id. A commit's content never changes, so
 * what a ref names now is read again only where it is new.
 */
const commitsRead = new Map<string, Map<string, Snapshot | null>>();

/** All snapshots, newest first. */
export async function listSnapshots(ctx: Context): Promise<Snapshot[]> {
  if (ctx.mode === "private" && !existsSync(join(ctx.gitDir, "HEAD"))) return [];
  const known = commitsRead.get(ctx.commonDir);
  const fresh = known ? await knownSnapshots(ctx, known) : null;
  if (fresh) return fresh;
  const r = await ctx.git(["for-each-ref", "--format=%(objectname)%00%(tree)%00%(contents)%00", SNAPSHOT_REFS]);
  const read = new Map<string, Snapshot | null>();
  const out: Snapshot[] = [];
  for (const line of r.stdout.toString("utf8").split("\0\n")) {
    if (!line) continue;
    const [commit, tree, body] = line.split("\0");
    // Not one of ours where null: verify reports it.
    const snap = snapshotOf(commit!, tree!, body ?? "");
    read.set(commit!, snap);
    if (snap) out.push(snap);
  }
  commitsRead.set(ctx.commonDir, read);
  return out.sort(newestId);
}

const newestId = (a: Snapshot, b: Snapshot) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/**
 * Every snapshot from the refs as they are now, where this process read
 * most of their commits before (`known`): only the new ones are read. Null
 * where the refs cannot be read here (a reftable, a ref not a plain one) or
 * most commits are new: one git process reads many faster.
 */
async function knownSnapshots(ctx: Context, known: Map<string, Snapshot | null>): Promise<Snapshot[] | null> {
  const refs = snapshotRefs(ctx);
  if (!refs) return null;
  const oids: string[] = [];
  for (const oid of refs.values()) {
    const o = oid();
    if (o === null) return null;
    oids.push(o);
  }
  const missing = oids.filter((o) => !known.has(o));
  if (missing.length > Math.max(64, oids.length / 4)) return null;
  const read = await snapshotCommits(ctx, missing);
  // Only what the refs name now is kept: gc's dropped snapshots leave the memo too.
  const now = new Map<string, Snapshot | null>();
  for (const o of oids) now.set(o, known.get(o) ?? read.get(o) ?? null);
  commitsRead.set(ctx.commonDir, now);
  // Each ref as git lists them, two that name one commit both.
  return oids
    .map((o) => now.get(o)!)
    .filter((s): s is Snapshot => s !== null)
    .sort(newestId);
}

/** A snapshot by id, unique prefix or suffix (6+ characters), or `{ last: true }` (src/domain/ids.ts). */
export async function resolveSnapshot(ctx: Context, wanted: IdRef): Promise<Snapshot> {
  const all = await listSnapshots(ctx);
  // --last means this work tree's newest: another worktree's would be refused by restore anyway.
  const ids = (typeof wanted === "string" ? all : all.filter((s) => s.root === ctx.root)).map((s) => s.id);
  const id = pickId(ids, wanted, "snapshot", "unwind snapshots");
  return all.find((s) => s.id === id)!;
}
