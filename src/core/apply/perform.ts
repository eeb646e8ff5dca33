import { lstatSync, mkdirSync, renameSync, rmdirSync, symlinkSync, unlinkSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fsyncDir, writeFileAtomic } from "../../store/atomic.js";
import type { RepoPath, State } from "../types.js";

export class PerformError extends Error {
  constructor(readonly reason: "not-regular", message: string) {
    super(message);
  }
}

/**
 * Creates the missing parents of `rel`. A parent that exists as anything but
 * a directory is not ours to replace.
 */
function ensureParents(root: string, rel: string): void {
  const parts = rel.split("/").slice(0, -1);
  let acc = root;
  for (const part of parts) {
    acc = join(acc, part);
    let st;
    try {
      st = lstatSync(acc);
    } catch {
      mkdirSync(acc);
      continue;
    }
    if (!st.isDirectory()) throw new PerformError("not-regular", `${acc.slice(root.length + 1)} is not a directory`);
  }
}

function unlinkIfExists(p: string): void {
  try {
    unlinkSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
}

/** Writes `after` (bytes given) at `rel`, atomically; or deletes it when `after` is null. */
export function performOne(root: string, rel: RepoPath, after: State | null, data: Buffer | null, tmpTag: string): void {
  const abs = join(root, rel);
  if (after === null) {
    unlinkIfExists(abs);
    fsyncDir(dirname(abs));
    return;
  }
  ensureParents(root, rel);
  const tmp = tmpPath(root, rel, tmpTag);
  unlinkIfExists(tmp);
  if (after.kind === "symlink") {
    symlinkSync(data!.toString("utf8"), tmp);
    renameSync(tmp, abs);
    fsyncDir(dirname(abs));
    return;
  }
  writeFileAtomic(abs, data!, { mode: after.mode === "100755" ? 0o755 : 0o644, tmp });
}

export function tmpPath(root: string, rel: string, tag: string): string {
  const abs = join(root, rel);
  return join(dirname(abs), `.${abs.slice(dirname(abs).length + 1)}.unwind-${tag}.tmp`);
}

/**
 * Removes directories that the deletes emptied, deepest first, never the
 * root and never one that holds a path the plan restores or keeps.
 */
export function removeEmptiedDirs(root: string, deleted: readonly string[], keep: ReadonlySet<string>): string[] {
  const candidates = new Set<string>();
  for (const p of deleted) {
    let d = dirname(p);
    while (d !== "." && d !== "") {
      candidates.add(d);
      d = dirname(d);
    }
  }
  const removed: string[] = [];
  const ordered = [...candidates].sort((a, b) => b.split("/").length - a.split("/").length || (a < b ? -1 : 1));
  for (const d of ordered) {
    if (keep.has(d)) continue;
    const abs = join(root, d);
    try {
      if (!lstatSync(abs).isDirectory() || readdirSync(abs).length > 0) continue;
      rmdirSync(abs);
      removed.push(d);
    } catch {
      /* not there or not empty: leave it */
    }
  }
  return removed;
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
