import { storePath } from "../domain/store-layout.js";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, type Stats } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../sys/atomic.js";
import type { Context } from "../repo/context.js";
import type { TreeEntry } from "./tree-edit.js";

// What the last snapshot found pending: the paths that differed from the
// index tree, what it stored for each and the stat data it read them with,
// and the tree it wrote. Changes stay out of the private index until they
// are folded in (FOLD_PATHS), so `git status` lists them again on every
// snapshot; with this record, a snapshot re-hashes only the paths whose stat
// changed since, and edits the last tree rather than the index tree, so its
// cost follows what changed since the last snapshot, not since the last fold.
// It is a cache: a record that is unreadable, of another index tree, or
// whose tree is gone only sends the snapshot the long way.

/** The stat data that tells a file unchanged, as git's index keeps it (inode, times, size, mode). */
export type StatKey = readonly [ino: number, mode: number, size: number, mtimeMs: number, ctimeMs: number];

export const statKey = (st: Stats): StatKey => [st.ino, st.mode, st.size, st.mtimeMs, st.ctimeMs];

export interface PendingEntry {
  /** What the snapshot stored for the path; null: it is absent there. */
  entry: TreeEntry | null;
  /** The stat data it was read with; null for an absence. */
  stat: StatKey | null;
}

export interface Pending {
  /** The index tree these changes are relative to. */
  base: string;
  /** The index tree with every entry applied: the last snapshot's tree. */
  tree: string;
  entries: Map<string, PendingEntry>;
  /** The record file's mtime: a file whose mtime is not older may have changed unseen (racy-git). */
  writtenMs: number;
}

const pendingPath = (ctx: Context) => `${ctx.indexFile}.pending`;

/**
 * The record if it belongs to `base` and was hashed under the same
 * conversion settings (`inputs`: src/capture/conversion.ts); null otherwise
 * (absent, unreadable, another base, other settings).
 */
export function readPending(ctx: Context, base: string, inputs: string): Pending | null {
  try {
    const file = pendingPath(ctx);
    const writtenMs = statSync(file).mtimeMs;
    const raw = JSON.parse(readFileSync(file, "utf8")) as { v: number; base: string; inputs: string; tree: string; entries: [string, TreeEntry | null, StatKey | null][] };
    if (raw.v !== 1 || raw.base !== base || raw.inputs !== inputs || typeof raw.tree !== "string" || !Array.isArray(raw.entries)) return null;
    const entries = new Map<string, PendingEntry>();
    for (const [path, entry, stat] of raw.entries) entries.set(path, { entry, stat });
    return { base, tree: raw.tree, entries, writtenMs };
  } catch {
    return null;
  }
}

/**
 * Written after the snapshot's files were read, so its mtime is the racy-git
 * reference for their stat data, and only once a snapshot ref names `tree`:
 * the next snapshot builds on that tree without reading all of it, so it
 * must be one git's gc keeps.
 */
export function writePending(ctx: Context, base: string, inputs: string, tree: string, entries: ReadonlyMap<string, PendingEntry>): void {
  const body = { v: 1, base, inputs, tree, entries: [...entries].map(([p, e]) => [p, e.entry, e.stat]) };
  // A cache: atomic against a kill, not fsynced.
  writeFileAtomic(pendingPath(ctx), JSON.stringify(body), { sync: false });
}

export function clearPending(ctx: Context): void {
  rmSync(pendingPath(ctx), { force: true });
}

/**
 * Forgets every work tree's record: done before gc drops snapshots, since a
 * record's tree is the last snapshot's, which git may then prune, and the
 * blobs of the entries it keeps with it. The caller holds the store lock.
 */
export function clearAllPending(ctx: Context): void {
  clearPending(ctx); // a folder without git keeps its one index in its private git dir
  const dir = storePath(ctx.store, "index");
  for (const f of existsSync(dir) ? readdirSync(dir) : []) if (f.endsWith(".index.pending")) rmSync(join(dir, f), { force: true });
}

/**
 * How a snapshot builds on the pending record (pure). `now` is everything
 * that differs from the index tree now: a path's stat data, or null where it
 * is absent. Returns the entries the record still holds good, the paths to
 * hash again, and the paths that became absent since; null when the record
 * cannot serve: a path it holds differs from the index tree no more, so its
 * index-tree entry would be needed, which the record does not keep; or a
 * .gitattributes changed.
 */
export function overPending(pending: Pending, now: ReadonlyMap<string, StatKey | null>): { kept: Map<string, PendingEntry>; rehash: string[]; gone: string[] } | null {
  for (const p of pending.entries.keys()) if (!now.has(p)) return null;
  const kept = new Map<string, PendingEntry>();
  const rehash: string[] = [];
  const gone: string[] = [];
  for (const [p, stat] of now) {
    const was = pending.entries.get(p);
    if (stat === null) {
      if (was && was.entry === null) kept.set(p, was);
      else gone.push(p);
    } else if (was?.stat && was.entry && sameStat(was.stat, stat) && stat[3] < pending.writtenMs) {
      kept.set(p, was);
    } else {
      rehash.push(p);
    }
  }
  // A .gitattributes that changed may change how the kept files hash: all are read again.
  if ([...rehash, ...gone].some(isAttributes)) return null;
  return { kept, rehash, gone };
}

const sameStat = (a: StatKey, b: StatKey) => a.every((x, i) => x === b[i]);
const isAttributes = (p: string) => p === ".gitattributes" || p.endsWith("/.gitattributes");
