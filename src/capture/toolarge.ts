import { closeSync, fstatSync, readFileSync, readSync, type Stats } from "node:fs";
import { createHash } from "node:crypto";
import { BoundDir, BoundDirs, READ_FLAGS, splitRel } from "../sys/bound-dir.js";
import type { Sha256, State } from "../domain/types.js";
import { writeFileAtomic } from "../sys/atomic.js";
import type { Context } from "../repo/context.js";
import { statKey } from "./unfolded.js";

/**
 * Files over the size cap are left out of a snapshot's tree (their bytes
 * are never kept), but not out of its record: each is kept as `toolarge`
 * with its size and SHA-256 (SPEC section 2: over the size cap is not
 * absent). Hashing a large file is slow, so the hashes are cached beside
 * the private index by stat data, as git's index caches blob ids.
 *
 * A file past `HASH_LIMIT` is not hashed at all: reading 8 GiB took a hook
 * 23 s, past its budget. It is known by its stat data instead (`stat`:
 * inode, modification and change times), which any write changes, and
 * which the hash cache trusts for every over-cap file anyway. Two such
 * records are the same file when size and stat agree; a copy with the same
 * bytes under a new inode counts as a change (undo refuses every toolarge
 * change all the same).
 */
export interface TooLarge {
  size: number;
  /** The bytes' SHA-256, up to `HASH_LIMIT`. */
  sha256?: Sha256;
  /** Past `HASH_LIMIT`, instead of a hash: `ino:mtimeMs:ctimeMs`. */
  stat?: string;
}

/** Over-cap files larger than this are known by stat data, not hashed: about half a second of reading at most. */
export const HASH_LIMIT = 256 * 1024 * 1024;

type Cache = Record<string, TooLarge & { key: string }>;

const cachePath = (ctx: Context) => `${ctx.indexFile}.toolarge`;

/** What an open over-cap file is recorded by: its hash up to `HASH_LIMIT`, its stat data past it. */
export function tooLargeOf(fd: number, st: Stats): TooLarge {
  if (st.size > HASH_LIMIT) return { size: st.size, stat: `${st.ino}:${st.mtimeMs}:${st.ctimeMs}` };
  const h = createHash("sha256");
  const buf = Buffer.allocUnsafe(1 << 20);
  for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) h.update(buf.subarray(0, n));
  return { size: st.size, sha256: h.digest("hex") as Sha256 };
}

function hashOpen(dirs: BoundDirs, rel: string): { st: Stats; big: TooLarge } | null {
  const [dir, name] = splitRel(rel);
  const d = dirs.dir(dir);
  if (!(d instanceof BoundDir)) return null;
  let fd: number;
  try {
    // Never follow a link or block on a fifo swapped in since status.
    fd = d.openFile(name, READ_FLAGS);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    return { st, big: tooLargeOf(fd, st) };
  } finally {
    closeSync(fd);
  }
}

/** Two records of one over-cap path: whether they show the same file. */
export function sameTooLarge(a: TooLarge, b: TooLarge): boolean {
  if (a.size !== b.size) return false;
  if (a.sha256 !== undefined || b.sha256 !== undefined) return a.sha256 === b.sha256;
  return a.stat !== undefined && a.stat === b.stat;
}

/** Size and hash of each over-cap file (gone ones left out); the cache is rewritten unless `scratch`. */
export function tooLargeStates(ctx: Context, paths: readonly { path: string; st: Stats }[], scratch: boolean): Record<string, TooLarge> {
  if (paths.length === 0) return {}; // the usual case: no file touched, not even the cache
  let cache: Cache = {};
  try {
    cache = JSON.parse(readFileSync(cachePath(ctx), "utf8")) as Cache;
  } catch {
    /* none yet, or torn: it is only a cache */
  }
  const next: Cache = {};
  const out: Record<string, TooLarge> = {};
  const dirs = new BoundDirs(ctx.root);
  try {
    for (const { path, st } of paths) {
      const key = statKey(st).join(":");
      let hit = cache[path];
      if (!hit || hit.key !== key) {
        const h = hashOpen(dirs, path);
        dirs.trim();
        if (!h) continue;
        hit = { key: statKey(h.st).join(":"), ...h.big };
      }
      next[path] = hit;
      const { key: _, ...big } = hit;
      out[path] = big;
    }
  } finally {
    dirs.close();
  }
  const changed = JSON.stringify(next) !== JSON.stringify(cache);
  if (!scratch && changed) writeFileAtomic(cachePath(ctx), JSON.stringify(next), { sync: false }); // a cache: a power cut only costs a re-hash
  return out;
}

export const tooLargeState = (t: TooLarge): State => ({ kind: "toolarge", size: t.size, ...(t.sha256 ? { sha256: t.sha256 } : {}), ...(t.stat ? { stat: t.stat } : {}) });
