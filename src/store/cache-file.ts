import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { sha256 } from "../domain/hash.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { mkdirPrivate } from "../sys/files.js";

/**
 * A cache file of the store (`<store>/cache/`: the journal's facts, the
 * record index, kept change sets; docs/format.md): the first 16 hex of the
 * SHA-256 of the rest, a newline, then the body. The sum guards against a
 * torn or edited file: a damaged one is worked out again, never read.
 */
export function readCacheFile(path: string): Buffer | null {
  let raw: Buffer;
  try {
    raw = readFileSync(path);
  } catch {
    return null;
  }
  return raw.indexOf(10) === 16 && raw.toString("latin1", 0, 16) === sha256(raw.subarray(17)).slice(0, 16) ? raw.subarray(17) : null;
}

/**
 * Writes a cache file (temp file and rename, not fsynced: a crash loses at
 * most the cache). A failure to write (a read-only store, a full disk) is
 * no failure of the command: the next one works it out again.
 */
export function writeCacheFile(path: string, body: string | Buffer): void {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  try {
    mkdirPrivate(dirname(path));
    writeFileAtomic(path, Buffer.concat([Buffer.from(`${sha256(bytes).slice(0, 16)}\n`, "latin1"), bytes]), { sync: false, mode: 0o600 });
  } catch {
    /* worked out again next time */
  }
}
