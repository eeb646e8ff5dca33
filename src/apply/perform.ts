import { closeSync, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, rmdirSync, symlinkSync, unlinkSync, writeSync } from "node:fs";
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
 * Writes `after` (bytes given) at `rel`, or deletes it when `after` is null.
 * The new content goes to a temp file in the same directory first; `recheck`
 * runs right before the rename and says what the path holds (null: leave
 * it), so the window in which someone else's edit could be replaced unseen
 * is as short as a rename. A killed process leaves the old file or the new
 * one, never a torn one (the rename is atomic); no fsync here: what the path
 * held is already durable in the store, and the intent says what to finish
 * (docs/design.md, "Which fsyncs"). Returns false (and leaves the path
 * alone) when the recheck fails. `dirs`: parents already found or made.
 */
export function performOne(root: string, rel: RepoPath, after: State | null, data: Buffer | null, tmpTag: string, recheck: () => Observed | null, dirs: Set<string> = new Set()): boolean {
  const abs = join(root, rel);
  if (after === null) {
    if (!recheck()) return false;
    unlinkIfExists(abs);
    return true;
  }
  ensureParents(root, rel, dirs);
  const tmp = tmpPath(root, rel, tmpTag);
  try {
    if (after.kind === "symlink") {
      unlinkIfExists(tmp);
      symlinkSync(data!, fsPath(tmp)); // the target's bytes as stored
      if (!recheck()) {
        unlinkIfExists(tmp);
        return false;
      }
    } else if (!writeTemp(tmp, data!, after.mode === "100755", recheck)) {
      unlinkIfExists(tmp);
      return false;
    }
    renameSync(fsPath(tmp), fsPath(abs));
  } catch (e) {
    unlinkIfExists(tmp);
    throw e;
  }
  return true;
}

/**
 * Writes the temp file, rechecks the path, and gives the temp file its
 * permissions: those of the file it replaces as the recheck saw it (a 0600
 * `.env` stays 0600), or what the umask gives a new file; the exec bit as
 * recorded, granted where read is, as git does. Only where the umask
 * narrowed them is a chmod needed. False (temp left for the caller) when
 * the recheck fails.
 */
function writeTemp(tmp: string, data: Buffer, exec: boolean, recheck: () => Observed | null): boolean {
  const fd = openTemp(tmp);
  try {
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
    const now = recheck();
    if (!now) return false;
    const mask = umask();
    const created = mask === null ? fstatSync(fd).mode & 0o777 : 0o666 & ~mask;
    const base = (now.kind === "file" && now.stamp ? now.stamp.mode : created) & 0o666;
    const want = exec ? base | ((base & 0o444) >> 2) : base;
    if (want !== created) fchmodSync(fd, want);
    return true;
  } finally {
    closeSync(fd);
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
