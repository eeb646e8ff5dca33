import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../domain/hash.js";
import { storePath } from "../domain/store-layout.js";
import { readCacheFile, writeCacheFile } from "./cache-file.js";
import { journalDir } from "./journal.js";

/**
 * The record index: what `unwind sessions`, `unwind log` and the UI's
 * timeline list, kept from the last time it was worked out, so a listing
 * of 10,000 calls does not fold the whole record again (docs/design.md,
 * "The record at scale").
 *
 * A cache, never a record: it is rebuilt from the journal, the snapshots
 * and the receipts whenever the key it was written under differs from the
 * key of the store as it is now, and nothing that writes the work tree
 * reads it (changes, undo and verify always read the record itself). The
 * key is taken *before* the record is read, so an index written while a
 * hook appended holds data at least as new as its key: a reader with a
 * newer key rebuilds, never trusts older data. Writing it is atomic (temp
 * file and rename) and not fsynced: a crash loses at most the cache.
 */
export interface RecordIndexFile<T> {
  v: 1;
  /** The key of the store when the data was worked out (`recordKey`). */
  key: string;
  data: T;
}

/** Bump when what the index holds changes shape: an index of another version is rebuilt. */
const INDEX_VERSION = "2";

/**
 * `<store>/cache/record-<root key>.<part>.json`: one set per work tree, as
 * listings are per work tree; each part a file of its own, so a listing
 * reads only what it shows (the sessions, not 10,000 calls).
 */
export function recordIndexFile(store: string, root: string, part: string): string {
  return storePath(store, "cache", `${partsPrefix(root)}${part}.json`);
}

/** What the names of a work tree's index parts begin with. */
const partsPrefix = (root: string) => `record-${sha256(root).slice(0, 16)}.`;

/**
 * What the listings are made of, as cheap facts: each journal file's name,
 * size, inode and modification time in nanoseconds (appends grow it, gc
 * renames over it), the receipt chain's head, the snapshot refs (loose
 * ones by name, packed ones by the packed-refs file's stat), the work
 * tree, and `extra` (settings the fold depends on). Null when the store
 * has what a key cannot vouch for: a call still open (its window reaches
 * to now, so its paths change by themselves) or refs in a reftable.
 */
export function recordKey(store: string, commonDir: string, root: string, extra: string): string | null {
  if (existsSync(join(commonDir, "reftable"))) return null;
  const parts: string[] = [INDEX_VERSION, root, extra];
  const dir = journalDir(store);
  if (existsSync(dir)) {
    for (const f of readdirSync(dir).sort()) {
      if (f.endsWith(".open")) return null;
      if (!f.endsWith(".jsonl")) continue;
      const st = statSync(join(dir, f), { bigint: true });
      parts.push(`j ${f} ${st.size} ${st.ino} ${st.mtimeNs} ${st.ctimeNs}`);
    }
  }
  parts.push(`r ${readOr(storePath(store, "receipts", "HEAD"))}`);
  parts.push(`b ${readOr(storePath(store, "receipts", "BASE"))}`);
  const refs = join(commonDir, "refs", "unwind", "snapshots");
  parts.push(`s ${existsSync(refs) ? readdirSync(refs).sort().join(",") : ""}`);
  const packed = join(commonDir, "packed-refs");
  if (existsSync(packed)) {
    const st = statSync(packed, { bigint: true });
    parts.push(`p ${st.size} ${st.ino} ${st.mtimeNs}`);
  }
  return sha256(parts.join("\n"));
}

function readOr(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "-";
  }
}

/** The index's data if it was written under `key`; null when absent, of another key, or unreadable (it is then rebuilt). */
export function readRecordIndex<T>(store: string, root: string, part: string, key: string): T | null {
  const doc = readRecordIndexAny<T>(store, root, part);
  return doc?.key === key ? doc.data : null;
}

/** The index's data and the key it was written under, whatever that key; null when absent or unreadable. */
export function readRecordIndexAny<T>(store: string, root: string, part: string): { key: string; data: T } | null {
  const body = readCacheFile(recordIndexFile(store, root, part));
  if (body === null) return null;
  try {
    const doc = JSON.parse(body.toString("utf8")) as RecordIndexFile<T>;
    return doc.v === 1 && typeof doc.key === "string" ? { key: doc.key, data: doc.data } : null;
  } catch {
    return null;
  }
}

/** Writes the index (temp file and rename, no fsync); a failure to write is no failure of the listing. */
export function writeRecordIndex<T>(store: string, root: string, part: string, key: string, data: T): void {
  writeCacheFile(recordIndexFile(store, root, part), JSON.stringify({ v: 1, key, data } satisfies RecordIndexFile<T>));
}

/** Removes this work tree's index parts that `keep` turns down (a session the record no longer holds); a failure leaves a part no key will name. */
export function pruneRecordIndex(store: string, root: string, keep: (part: string) => boolean): void {
  const prefix = partsPrefix(root);
  try {
    for (const f of readdirSync(storePath(store, "cache"))) {
      if (!f.startsWith(prefix) || !f.endsWith(".json")) continue;
      if (!keep(f.slice(prefix.length, -".json".length))) rmSync(storePath(store, "cache", f), { force: true });
    }
  } catch {
    /* a cache: what is left is never read under another key */
  }
}
