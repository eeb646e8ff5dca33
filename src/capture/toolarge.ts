import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, type Stats } from "node:fs";
import { fsPath } from "../domain/path-bytes.js";
import { createHash } from "node:crypto";
import { join } from "node:path";
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
 */
export interface TooLarge {
  size: number;
  sha256: Sha256;
}

type Cache = Record<string, { key: string; size: number; sha256: Sha256 }>;

const cachePath = (ctx: Context) => `${ctx.indexFile}.toolarge`;

function hashOpen(abs: string): { st: Stats; sha256: Sha256 } | null {
  let fd: number;
  try {
    // Never follow a link or block on a fifo swapped in since status.
    fd = openSync(fsPath(abs), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    const h = createHash("sha256");
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) h.update(buf.subarray(0, n));
    return { st, sha256: h.digest("hex") as Sha256 };
  } finally {
    closeSync(fd);
  }
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
  for (const { path, st } of paths) {
    const key = statKey(st).join(":");
    let hit = cache[path];
    if (!hit || hit.key !== key) {
      const h = hashOpen(join(ctx.root, path));
      if (!h) continue;
      hit = { key: statKey(h.st).join(":"), size: h.st.size, sha256: h.sha256 };
    }
    next[path] = hit;
    out[path] = { size: hit.size, sha256: hit.sha256 };
  }
  const changed = JSON.stringify(next) !== JSON.stringify(cache);
  if (!scratch && changed) writeFileAtomic(cachePath(ctx), JSON.stringify(next), { sync: false }); // a cache: a power cut only costs a re-hash
  return out;
}

export const tooLargeState = (t: TooLarge): State => ({ kind: "toolarge", size: t.size, sha256: t.sha256 });
