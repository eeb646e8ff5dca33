import { closeSync, constants, fstatSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { umask } from "../sys/atomic.js";
import { BoundDir, type BoundDirs, splitRel } from "../sys/bound-dir.js";
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
 * The directory of `rel`, opened (src/sys/bound-dir.ts), its missing parents
 * made. A parent that exists as anything but a directory (a symlink
 * included) is not ours to replace.
 */
function parentOf(dirs: BoundDirs, rel: string): BoundDir {
  const parts = rel.split("/").slice(0, -1);
  let d = dirs.dir("");
  for (let i = 0; i < parts.length; i++) {
    const at = parts.slice(0, i + 1).join("/");
    let next = dirs.dir(at);
    if (!(next instanceof BoundDir) && next.kind === "absent" && d instanceof BoundDir) {
      d.mkdir(parts[i]!);
      next = dirs.dir(at);
    }
    if (!(next instanceof BoundDir)) throw new PerformError("not-regular", `${next.kind === "blocked" ? next.at : at} is not a directory`);
    d = next;
  }
  return d as BoundDir;
}

/** The directory of `rel` as the recheck just looked at it, or why it is not there. */
function checkedDir(dirs: BoundDirs, rel: string): BoundDir {
  const d = dirs.dir(splitRel(rel)[0]);
  if (!(d instanceof BoundDir)) throw new PerformError("not-regular", `${d.kind === "blocked" ? d.at : rel} is not a directory`);
  return d;
}

function unlinkIfExists(d: BoundDir, name: string): void {
  try {
    d.unlink(name);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
}

/**
 * Deletes `rel` when `recheck` (right before the unlink, through the same
 * `dirs`) says it still holds what was planned. False, and the path left
 * alone, when it does not. The unlink is made in the directory the recheck
 * looked in, whatever has been renamed or linked in its place since.
 */
export function performDelete(dirs: BoundDirs, rel: RepoPath, recheck: () => Observed | null): boolean {
  if (!recheck()) return false;
  unlinkIfExists(checkedDir(dirs, rel), splitRel(rel)[1]);
  return true;
}

/** A path's new content, written to its temp file and waiting for `commitWrite`. */
export interface Staged {
  /** The temp file's name, in the directory of the path. */
  tmp: string;
  /** The permissions the temp file was created with. */
  created: number;
  exec: boolean;
  link: boolean;
}

/**
 * Writes `after` (bytes given) to a temp file in the directory of `rel`,
 * making missing parents: the first half of a write, which touches nothing
 * anyone else has.
 */
export function stageWrite(dirs: BoundDirs, rel: RepoPath, after: State, data: Buffer, tmpTag: string): Staged {
  const d = parentOf(dirs, rel);
  const tmp = tmpName(tmpTag);
  if (after.kind === "symlink") {
    unlinkIfExists(d, tmp);
    d.symlink(data, tmp); // the target's bytes as stored
    return { tmp, created: 0, exec: false, link: true };
  }
  const fd = openTemp(d, tmp);
  let created: number;
  try {
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
    const mask = umask();
    created = mask === null ? fstatSync(fd).mode & 0o777 : 0o666 & ~mask;
  } catch (e) {
    closeSync(fd);
    unlinkIfExists(d, tmp);
    throw e;
  }
  closeSync(fd);
  return { tmp, created, exec: after.mode === "100755", link: false };
}

/**
 * The second half: `recheck` runs right before the rename, through the same
 * `dirs`, and says what the path holds (null: leave it), so the window in
 * which someone else's edit could be replaced unseen is as short as a
 * rename, and the rename is made in the directory the recheck looked in. A
 * killed process leaves the old file or the new one, never a torn one (the
 * rename is atomic); no fsync here: what the path held is already durable
 * in the store, and the intent says what to finish (docs/design.md, "Which
 * fsyncs"). The temp file gets the permissions of the file it replaces as
 * the recheck saw it (a 0600 `.env` stays 0600), or what the umask gives a
 * new file; the exec bit as recorded, granted where read is, as git does; a
 * chmod only where the umask narrowed them. False (temp removed, path left
 * alone) when the recheck fails.
 */
export function commitWrite(dirs: BoundDirs, rel: RepoPath, staged: Staged, recheck: () => Observed | null): boolean {
  const drop = () => {
    const d = dirs.dir(splitRel(rel)[0]);
    if (d instanceof BoundDir) unlinkIfExists(d, staged.tmp);
  };
  try {
    const now = recheck();
    if (!now) {
      drop();
      return false;
    }
    const d = checkedDir(dirs, rel);
    if (!staged.link) {
      const base = (now.kind === "file" && now.stamp ? now.stamp.mode : staged.created) & 0o666;
      const want = staged.exec ? base | ((base & 0o444) >> 2) : base;
      if (want !== staged.created) d.chmod(staged.tmp, want);
    }
    d.rename(staged.tmp, splitRel(rel)[1]);
    return true;
  } catch (e) {
    try {
      drop();
    } catch {
      /* the failure that counts is the first */
    }
    throw e;
  }
}

/** Creates the temp file (O_EXCL: never through a link in its place); one a killed apply left behind is removed first. */
function openTemp(d: BoundDir, tmp: string): number {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  try {
    return d.openFile(tmp, flags, 0o666);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    unlinkIfExists(d, tmp);
    return d.openFile(tmp, flags, 0o666);
  }
}

/** Temp names are short and fixed per plan item, in the directory of the path, so recovery can find and remove them. */
export function tmpName(tag: string): string {
  return `.unwind-${tag}.tmp`;
}

/** Removes the temp file a killed apply may have left for `rel`. */
export function removeTemp(dirs: BoundDirs, rel: string, tag: string): void {
  const d = dirs.dir(splitRel(rel)[0]);
  if (d instanceof BoundDir) unlinkIfExists(d, tmpName(tag));
}

/**
 * Removes directories that the deletes emptied, deepest first, never the
 * root and never one that holds a path the plan restores or keeps.
 */
export function removeEmptiedDirs(dirs: BoundDirs, deleted: readonly string[], keep: ReadonlySet<string>): void {
  const depth = (d: string) => d.split("/").length;
  const deepestFirst = [...ancestorsOf(deleted)].sort((a, b) => depth(b) - depth(a) || (a < b ? -1 : 1));
  for (const d of deepestFirst) {
    if (keep.has(d)) continue;
    const [parent, name] = splitRel(d);
    const p = dirs.dir(parent);
    try {
      // rmdir removes only an empty directory, and never follows a link in its place.
      if (p instanceof BoundDir) p.rmdir(name);
    } catch {
      /* not there or not empty: leave it */
    }
    dirs.trim();
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
