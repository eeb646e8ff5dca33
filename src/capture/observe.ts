import { closeSync, fstatSync, type Stats } from "node:fs";
import { BoundDir, BoundDirs, READ_FLAGS, splitRel } from "../sys/bound-dir.js";
import { blobOid, lineSafe } from "../git/objects.js";
import type { Context } from "../repo/context.js";
import { sha256 } from "../domain/hash.js";
import { readFileBriefly } from "../sys/files.js";
import type { ByteCache } from "../domain/byte-cache.js";
import { collectAsGrown } from "../sys/heap.js";
import type { GitOid, Observed, RepoPath, Sha256, Stamp, State } from "../domain/types.js";

/** git's mode for a regular file: executable when the owner may execute it (git ignores group and other bits). */
export function modeOf(st: Stats): string {
  return st.mode & 0o100 ? "100755" : "100644";
}

/** Git's binary heuristic: a NUL in the first 8000 bytes. */
export function looksText(data: Buffer): boolean {
  return !data.subarray(0, 8000).includes(0);
}

/**
 * A whole number as V8's small integer where it is one. Stats hands every
 * field over as a boxed double, and a field that ever held one keeps every
 * object of that shape's value boxed: 16 bytes more a field, seven fields a
 * stamp, at 100,000 paths 11 MB of a plan's live heap.
 */
const small = (n: number): number => ((n | 0) === n ? n | 0 : n);

function stampOf(st: Stats): Stamp {
  return { dev: small(st.dev), ino: small(st.ino), mode: small(st.mode), nlink: small(st.nlink), size: small(st.size), mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs };
}

/**
 * Whether `st` proves a file still holds what was read with `stamp`: the
 * same stat data, and times older than `fsNow`, the file system's clock
 * taken before that read (src/sys/files.ts `fsClock`). Any write after it
 * sets the change time to `fsNow` or later; one in the same clock tick as
 * the last could leave the times as they were, so a file that new proves
 * nothing and is read again.
 */
export function unchangedSince(stamp: Stamp, st: Stats, fsNow: number): boolean {
  return (
    stamp.mtimeMs < fsNow &&
    stamp.ctimeMs < fsNow &&
    st.ctimeMs === stamp.ctimeMs &&
    st.mtimeMs === stamp.mtimeMs &&
    st.size === stamp.size &&
    st.ino === stamp.ino &&
    st.dev === stamp.dev &&
    st.mode === stamp.mode &&
    st.nlink === stamp.nlink
  );
}

/** An earlier observation to give back unread where the file's stat data proves it unchanged (`unchangedSince`). */
export interface Reuse {
  as: Observed;
  fsNow: number;
}

/**
 * What is on disk at one path, without following symlinks anywhere: a
 * symlinked parent makes the path `blocked`, a parent that is a file makes
 * it `blocked` by a file (nothing there, nothing writable), a missing
 * parent makes it absent. Content is hashed so the pure planner can compare
 * against records. Read through `dirs` (src/sys/bound-dir.ts): the parent
 * as opened, and the file itself opened without following a link, its
 * stat data taken from the open file, so what is read is what is described
 * (and an apply's recheck looks where it then acts). `keep` keeps a file's
 * bytes (by path and hash) for the apply; `reuse` spares reading a file
 * again; `oid` hashes a file's bytes as a git blob too.
 */
export function observeOne(
  root: string,
  rel: string,
  format: "sha1" | "sha256",
  dirs?: BoundDirs,
  opts: { keep?: ByteCache | undefined; reuse?: Reuse | undefined; oid?: boolean; unreadOver?: number | undefined } = {},
): Observed {
  const own = dirs ? null : new BoundDirs(root);
  try {
    for (let tries = 1; ; tries++) {
      try {
        return observeIn(dirs ?? own!, rel, format, opts);
      } catch (e) {
        // Replaced between its lstat and its read (a link where a file was, gone): looked at again.
        if (tries === 3 || !RACED.has((e as NodeJS.ErrnoException).code ?? "")) throw e;
      }
    }
  } finally {
    own?.close();
  }
}

const RACED = new Set(["ENOENT", "EINVAL", "ELOOP"]);

function observeIn(
  dirs: BoundDirs,
  rel: string,
  format: "sha1" | "sha256",
  opts: { keep?: ByteCache | undefined; reuse?: Reuse | undefined; oid?: boolean; unreadOver?: number | undefined },
): Observed {
  const [dirRel, name] = splitRel(rel);
  const d = dirs.dir(dirRel);
  if (!(d instanceof BoundDir)) return d;
  let st: Stats;
  try {
    st = d.lstat(name);
  } catch {
    return { kind: "absent" };
  }
  if (st.isSymbolicLink()) {
    const target = d.readlink(name); // bytes: a target need not be UTF-8
    return { kind: "symlink", target, sha256: sha256(target), oid: blobOid(target, format) };
  }
  if (st.isFile()) {
    const was = opts.reuse?.as;
    if (was?.kind === "file" && was.stamp && unchangedSince(was.stamp, st, opts.reuse!.fsNow)) return was;
    const fd = d.openFile(name, READ_FLAGS); // a link swapped in since the lstat is refused (ELOOP)
    try {
      const fst = fstatSync(fd);
      if (!fst.isFile()) return fst.isDirectory() ? { kind: "dir" } : { kind: "other" };
      // Over the cap, undo refuses the path by its size alone: its bytes (GiBs, maybe) are not read, and its
      // hash, left empty, matches no record.
      if (opts.unreadOver !== undefined && fst.size > opts.unreadOver)
        return { kind: "file", mode: modeOf(fst), size: small(fst.size), nlink: small(fst.nlink), sha256: "" as Sha256, text: false, stamp: stampOf(fst) };
      const data = readFileBriefly(fd, fst.size); // used before the next read, or copied to be kept
      const sha = sha256(data);
      opts.keep?.set(keptKey(rel, sha), Buffer.from(data));
      const oid = opts.oid ? { oid: blobOid(data, format) } : {};
      return { kind: "file", mode: modeOf(fst), size: small(fst.size), nlink: small(fst.nlink), sha256: sha, ...oid, text: looksText(data), stamp: stampOf(fst) };
    } finally {
      closeSync(fd);
    }
  }
  return st.isDirectory() ? { kind: "dir" } : { kind: "other" };
}

/**
 * `observeOne` for many paths, plus the git id of each file's bytes where
 * asked (`oids`: hashed here from the bytes already read; snapshots hold
 * bytes as on disk, so the ids compare). `clean`: paths recorded in git's
 * clean form by an older snapshot (`State.clean`), which also get the id
 * git would store for them now, from `git hash-object` (it converts).
 */
export async function observe(
  ctx: Context,
  paths: readonly RepoPath[],
  opts: { oids?: boolean; clean?: ReadonlySet<RepoPath>; keep?: ByteCache | undefined; unreadOver?: number | undefined } = {},
): Promise<Map<RepoPath, Observed>> {
  const out = new Map<RepoPath, Observed>();
  const dirs = new BoundDirs(ctx.root);
  const viaGit: RepoPath[] = [];
  try {
    for (const rel of paths) {
      const o = observeOne(ctx.root, rel, ctx.objectFormat, dirs, { keep: opts.keep, oid: opts.oids === true, unreadOver: opts.unreadOver });
      out.set(rel, o);
      // Not line-safe: hash-object reads lines; such a path gets no clean id and so compares with no clean state.
      if (opts.clean?.has(rel) && o.kind === "file" && lineSafe(rel)) viaGit.push(rel);
      dirs.trim();
      collectAsGrown();
    }
  } finally {
    dirs.close();
  }
  if (viaGit.length > 0) {
    const r = await ctx.git(["hash-object", "--stdin-paths"], { input: viaGit.join("\n") + "\n" });
    const oids = r.stdout.toString("utf8").trim().split("\n");
    viaGit.forEach((p, i) => {
      const o = out.get(p);
      if (o && o.kind === "file" && oids[i]) o.cleanOid = oids[i] as GitOid;
    });
  }
  return out;
}

/** Where `observe` keeps a file's bytes it read: by path and content, so bytes read for one state never stand in for another. */
export const keptKey = (rel: string, sha: string) => `file\0${rel}\0${sha}`;

/** The recorded form of what was observed (for receipts and restore change sets). */
export function stateOf(o: Observed): State | null {
  switch (o.kind) {
    case "absent":
      return null;
    case "file":
      return { kind: "file", mode: o.mode, size: o.size, sha256: o.sha256, ...(o.oid ? { oid: o.oid } : {}) };
    case "symlink":
      return { kind: "symlink", mode: "120000", size: o.target.length, sha256: o.sha256, ...(o.oid ? { oid: o.oid } : {}) };
    default:
      return null;
  }
}

/** Whether the disk still holds exactly what the planner saw. */
export function sameObserved(a: Observed, b: Observed): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "file" && b.kind === "file") return a.sha256 === b.sha256 && a.mode === b.mode && a.nlink === b.nlink;
  if (a.kind === "symlink" && b.kind === "symlink") return a.target.equals(b.target);
  if (a.kind === "blocked" && b.kind === "blocked") return a.at === b.at && a.file === b.file;
  return true;
}

/** The recorded form of what a path holds now, with its raw-bytes git oid, nothing stored. */
export function stateNow(root: string, rel: string, format: "sha1" | "sha256"): State | null {
  return stateOf(observeOne(root, rel, format, undefined, { oid: true }));
}
