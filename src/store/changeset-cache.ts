import { existsSync, readdirSync, rmSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { deserialize, serialize } from "node:v8";
import { sha256 } from "../domain/hash.js";
import { storePath } from "../domain/store-layout.js";
import { readCacheFile, writeCacheFile } from "./cache-file.js";

/**
 * Change sets kept on disk between commands (docs/design.md, "The record
 * at scale"): `unwind changes` of a session folds the whole record since
 * the session began, a second at 10,000 calls, and a person asks for the
 * same scope again (the list, then its patch, then the undo's preview).
 *
 * A cache, never a record, kept as the record index is
 * (src/store/record-index.ts): under the record's key taken before the
 * fold (`recordKey`: every journal file's stat, the receipt chain, the
 * snapshot refs; none while a call is open), written only when the key is
 * the same after the fold and the fold met no open call, and read only
 * under that same key and the same build of unwind. A damaged file is
 * ignored, never read. Nothing that writes the work tree reads it: an undo
 * folds the record itself, under the lock (`journalChangeSet`).
 */

/** Set at build time to a hash of the sources (build.mjs): a kept change set is read only by the code that folded it. */
declare const __UNWIND_CODE__: string | undefined;
const CODE = typeof __UNWIND_CODE__ === "string" ? __UNWIND_CODE__ : "source";

/** Kept files at most, and their bytes in all (a 10,000-path session's is 4 MB); the oldest go first, the newest stays. */
const KEEP = 16;
const KEEP_BYTES = 64 * 1024 * 1024;
const PREFIX = "changes-";

function fileOf(store: string, root: string, scopeKey: string): string {
  return storePath(store, "cache", `${PREFIX}${sha256(`${root}\0${scopeKey}`).slice(0, 16)}.bin`);
}

interface Kept {
  v: 2;
  code: string;
  key: string;
  scopeKey: string;
  /** The change set, serialized as `structuredClone` copies (Maps, Sets and Buffers come back as they were). */
  body: Uint8Array;
  /** What tells whether it holds for the record as it grew since (src/scope/carry.ts); absent where it cannot be carried. */
  carry?: unknown;
}

/** The change set kept for `scopeKey` under the record's `key`; null when none is (absent, stale, another build's, or damaged). */
export function readKeptChangeSet<T>(store: string, root: string, scopeKey: string, key: string): T | null {
  const kept = readKept<T>(store, root, scopeKey);
  return kept && kept.key === key ? kept.value() : null;
}

/**
 * The change set kept for `scopeKey` under whatever key it was kept, and
 * what it was kept with to carry it forward: for a caller that proves it
 * still holds (src/scope/carry.ts) before it reads it. Null as above.
 */
export function readKept<T>(store: string, root: string, scopeKey: string): { key: string; carry: unknown; value: () => T | null; rekeep: (key: string, carry: unknown) => void } | null {
  const body = readCacheFile(fileOf(store, root, scopeKey));
  if (body === null) return null;
  try {
    const doc = deserialize(body) as Kept;
    if (doc.v !== 2 || doc.code !== CODE || doc.scopeKey !== scopeKey) return null;
    const value = () => {
      try {
        return deserialize(doc.body) as T;
      } catch {
        return null;
      }
    };
    // Kept again under the record's new key as it was, its change set not parsed and written again.
    const rekeep = (key: string, carry: unknown) => keepDoc(store, root, scopeKey, { ...doc, key, carry });
    return { key: doc.key, carry: doc.carry, value, rekeep };
  } catch {
    return null;
  }
}

/** Keeps a change set (src/store/cache-file.ts), then lets the oldest go past the bounds; a failure to write is no failure of the command. */
export function keepChangeSetOnDisk(store: string, root: string, scopeKey: string, key: string, value: unknown, carry?: unknown): void {
  try {
    keepDoc(store, root, scopeKey, { v: 2, code: CODE, key, scopeKey, body: serialize(value), ...(carry !== undefined ? { carry } : {}) });
  } catch {
    /* what V8 cannot serialize: the next command folds again */
  }
}

function keepDoc(store: string, root: string, scopeKey: string, doc: Kept): void {
  try {
    writeCacheFile(fileOf(store, root, scopeKey), serialize(doc));
    prune(storePath(store, "cache"));
  } catch {
    /* what V8 cannot serialize, a folder gone: the next command folds again */
  }
}

function prune(dir: string): void {
  const kept = keptFiles(dir).flatMap((f) => {
    try {
      const st = statSync(join(dir, f));
      return [{ f, at: st.mtimeMs, size: st.size }];
    } catch {
      return [];
    }
  });
  kept.sort((a, b) => b.at - a.at);
  let bytes = 0;
  kept.forEach(({ f, size }, k) => {
    bytes += size;
    if (k === 0 || (k < KEEP && bytes <= KEEP_BYTES)) return;
    try {
      unlinkSync(join(dir, f));
    } catch {
      /* another command pruned it */
    }
  });
}

const keptFiles = (dir: string): string[] => readdirSync(dir).filter((f) => f.startsWith(PREFIX) && f.endsWith(".bin"));

/** Drops every kept change set (gc: they name the record as it was; the next `changes` folds again). */
export function dropKeptChangeSets(store: string): void {
  const dir = storePath(store, "cache");
  if (existsSync(dir)) for (const f of keptFiles(dir)) rmSync(join(dir, f), { force: true });
}
