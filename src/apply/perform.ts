import { chmodSync, closeSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, rmdirSync, symlinkSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fsPath } from "../domain/path-bytes.js";
import { umask } from "../sys/atomic.js";
import type { Observed, RepoPath, State } from "../domain/types.js";

export class PerformError extends Error {
  constructor(
    readonly reason: "not-regular",
    message: string,
  ) {
    super(message);
  }
}

/**
 * Creates the missing parents of `rel`. A parent that exists as anything but
 * a directory is not ours to replace. `known`: directories this apply has
 * already found or made (the recheck before each write still walks every
 * parent, so one that became a symlink since is caught there).
 */
function ensureParents(root: string, rel: string, known: Set<string>): void {
  const parts = rel.split("/").slice(0, -1);
  let acc = root;
  for (const part of parts) {
    acc = join(acc, part);
    if (known.has(acc)) continue;
    known.add(acc);
    let st;
    try {
      st = lstatSync(fsPath(acc));
    } catch {
      mkdirSync(fsPath(acc));
      continue;
    }
    if (!st.isDirectory()) throw new PerformError("not-regular", `${acc.slice(root.length + 1)} is not a directory`);
  }
}

function unlinkIfExists(p: string): void {
  try {
    unlinkSync(fsPath(p));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
}

/**
 * Deletes `rel` when `recheck` (right before the unlink) says it still holds
 * what was planned. False, and the path left alone, when it does not.
 */
export function performDelete(root: string, rel: RepoPath, recheck: () => Observed | null): boolean {
  if (!recheck()) return false;
  unlinkIfExists(join(root, rel));
  return true;
}

/** A path's new content, written to its temp file and waiting for `commitWrite`. */
export interface Staged {
  tmp: string;
  /** The permissions the temp file was created with. */
  created: number;
  exec: boolean;
  link: boolean;
}

/**
 * Writes `after` (bytes given) to a temp file in the directory of `rel`,
 * making missing parents: the first half of a write, which touches nothing
 * anyone else has. `dirs`: parents already found or made.
 */
export function stageWrite(root: string, rel: RepoPath, after: State, data: Buffer, tmpTag: string, dirs: Set<string>): Staged {
  ensureParents(root, rel, dirs);
  const tmp = tmpPath(root, rel, tmpTag);
  if (after.kind === "symlink") {
    unlinkIfExists(tmp);
    symlinkSync(data, fsPath(tmp)); // the target's bytes as stored
    return { tmp, created: 0, exec: false, link: true };
  }
  const fd = openTemp(tmp);
  let created: number;
  try {
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
    const mask = umask();
    created = mask === null ? fstatSync(fd).mode & 0o777 : 0o666 & ~mask;
  } catch (e) {
    closeSync(fd);
    unlinkIfExists(tmp);
    throw e;
  }
  closeSync(fd);
  return { tmp, created, exec: after.mode === "100755", link: false };
}

/**
 * The second half: `recheck` runs right before the rename and says what the
 * path holds (null: leave it), so the window in which someone else's edit
 * could be replaced unseen is as short as a rename. A killed process leaves
 * the old file or the new one, never a torn one (the rename is atomic); no
 * fsync here: what the path held is already durable in the store, and the
 * intent says what to finish (docs/design.md, "Which fsyncs"). The temp
 * file gets the permissions of the file it replaces as the recheck saw it
 * (a 0600 `.env` stays 0600), or what the umask gives a new file; the exec
 * bit as recorded, granted where read is, as git does; a chmod only where
 * the umask narrowed them. False (temp removed, path left alone) when the
 * recheck fails.
 */
export function commitWrite(root: string, rel: RepoPath, staged: Staged, recheck: () => Observed | null): boolean {
  try {
    const now = recheck();
    if (!now) {
      unlinkIfExists(staged.tmp);
      return false;
    }
    if (!staged.link) {
      const base = (now.kind === "file" && now.stamp ? now.stamp.mode : staged.created) & 0o666;
      const want = staged.exec ? base | ((base & 0o444) >> 2) : base;
      if (want !== staged.created) chmodSync(fsPath(staged.tmp), want);
    }
    renameSync(fsPath(staged.tmp), fsPath(join(root, rel)));
    return true;
  } catch (e) {
    unlinkIfExists(staged.tmp);
    throw e;
  }
}

/** Creates the temp file; one a killed apply left behind is removed first. */
function openTemp(tmp: string): number {
  try {
    return openSync(fsPath(tmp), "wx", 0o666);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    unlinkIfExists(tmp);
    return openSync(fsPath(tmp), "wx", 0o666);
  }
}

/** Temp names are short and fixed per plan item, so recovery can find and remove them. */
export function tmpPath(root: string, rel: string, tag: string): string {
  return join(dirname(join(root, rel)), `.unwind-${tag}.tmp`);
}

/**
 * Removes directories that the deletes emptied, deepest first, never the
 * root and never one that holds a path the plan restores or keeps.
 */
export function removeEmptiedDirs(root: string, deleted: readonly string[], keep: ReadonlySet<string>): void {
  const depth = (d: string) => d.split("/").length;
  const deepestFirst = [...ancestorsOf(deleted)].sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : 1));
  for (const d of deepestFirst) {
    if (keep.has(d)) continue;
    const abs = join(root, d);
    try {
      if (lstatSync(fsPath(abs)).isDirectory() && readdirSync(fsPath(abs)).length === 0) rmdirSync(fsPath(abs));
    } catch {
      /* not there or not empty: leave it */
    }
  }
}

/** Every ancestor directory of the given paths. */
export function ancestorsOf(paths: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const p of paths) {
    let d = dirname(p);
    while (d !== "." && d !== "") {
      out.add(d);
      d = dirname(d);
    }
  }
  return out;
}
