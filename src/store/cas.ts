import { storePath } from "../domain/store-layout.js";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { walkFiles, mkdirPrivate } from "../sys/files.js";
import { deflateSync, inflateSync } from "node:zlib";
import { sha256 } from "../domain/hash.js";
import type { Sha256 } from "../domain/types.js";
import { fsyncDir, fsyncFile, syncFileSystem, writeFileAtomic } from "../sys/atomic.js";

/** From this many blobs on, `syncWritten` flushes the file system once instead of fsyncing each. */
export const SYNC_FS_FROM = 32;

export class BlobError extends Error {
  constructor(
    readonly kind: "missing" | "mismatch",
    readonly sha: string,
  ) {
    super(kind === "missing" ? `blob ${sha} is missing from the store` : `blob ${sha} fails its SHA-256 check`);
  }
}

/**
 * Content-addressed store: `cas/sha256/<2 hex>/<62 hex>`, zlib-compressed.
 * A blob is written once (temp + rename, so concurrent writers of the same
 * content are harmless) and verified on every read.
 */
export class Cas {
  /** Blobs written with `sync: false`, not yet made durable (`syncWritten`). */
  private unsynced: string[] = [];
  /** Shard directories known to exist: one mkdir each per process, not one per blob. */
  private readonly shards = new Set<string>();

  constructor(readonly dir: string) {}

  /** The content store of an unwind store. */
  static in(store: string): Cas {
    return new Cas(storePath(store, "cas"));
  }

  pathOf(sha: string): string {
    return join(this.dir, "sha256", sha.slice(0, 2), sha.slice(2));
  }

  has(sha: string): boolean {
    return existsSync(this.pathOf(sha));
  }

  /**
   * Stores `data` once. With `verify`, a blob already there is read back and
   * rewritten if damaged: content we are about to overwrite on disk must be
   * kept for real, not assumed kept.
   */
  put(data: Buffer, opts: { verify?: boolean; sync?: boolean } = {}): Sha256 {
    const sha = sha256(data);
    const p = this.pathOf(sha);
    if (existsSync(p)) {
      if (!opts.verify || this.status(sha) === "ok") return sha;
      rmSync(p, { force: true });
    }
    const shard = join(this.dir, "sha256", sha.slice(0, 2));
    const write = () => writeFileAtomic(p, deflateSync(data, { level: levelFor(data.length) }), { mode: 0o444, sync: opts.sync !== false });
    try {
      if (!this.shards.has(shard)) mkdirPrivate(shard);
      this.shards.add(shard);
      try {
        write();
      } catch (e) {
        // A shard directory this store made earlier in the process, removed since (gc in another process): once more.
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
        mkdirPrivate(shard);
        write();
      }
      if (opts.sync === false) this.unsynced.push(p);
    } catch (e) {
      // Another process stored the same content first: identical bytes, nothing lost.
      if (!existsSync(p)) throw e;
    }
    return sha;
  }

  /**
   * Makes every blob written with `sync: false` durable: each file, then
   * each directory that gained one (once). An apply writes what it is about
   * to overwrite this way and syncs it all before its intent record: one
   * pass instead of two fsyncs per path.
   */
  syncWritten(): void {
    // A batch: one flush of the file system, directories included, instead of an fsync per blob.
    if (this.unsynced.length >= SYNC_FS_FROM && syncFileSystem(this.dir)) {
      this.unsynced = [];
      return;
    }
    const dirs = new Set<string>();
    for (const p of this.unsynced) {
      fsyncFile(p);
      dirs.add(dirname(p));
    }
    if (dirs.size > 0) dirs.add(join(this.dir, "sha256")); // a new shard directory is an entry there
    for (const d of dirs) fsyncDir(d);
    this.unsynced = [];
  }

  get(sha: string): Buffer {
    let raw: Buffer;
    try {
      raw = readFileSync(this.pathOf(sha));
    } catch {
      throw new BlobError("missing", sha);
    }
    let data: Buffer;
    try {
      data = inflateSync(raw);
    } catch {
      throw new BlobError("mismatch", sha);
    }
    // inflateSync hands back a view of its 16 KiB output chunk: a small blob kept for later would
    // hold the whole chunk (10,000 kept blobs of 200 bytes: 160 MiB), so it gets its own bytes.
    if (data.buffer.byteLength > data.length * 2) data = Buffer.from(data);
    if (sha256(data) !== sha) throw new BlobError("mismatch", sha);
    return data;
  }

  status(sha: string): "ok" | "missing" | "mismatch" {
    try {
      this.get(sha);
      return "ok";
    } catch (e) {
      return e instanceof BlobError ? e.kind : "missing";
    }
  }

  /** Every blob file, by its SHA-256 (temp files of a write in progress left out). */
  *blobs(): Generator<{ sha: string; path: string }> {
    for (const p of walkFiles(join(this.dir, "sha256"))) {
      const sha = this.shaOf(p);
      if (sha !== null) yield { sha, path: p };
    }
  }

  /**
   * Whether `dir` is one of the shard directories blobs live in. A shard's
   * files are only ever added or removed, never rewritten in place (a
   * damaged blob is replaced by a new file): what `dirBytes` may keep a sum
   * of (src/sys/files.ts).
   */
  isShard(dir: string): boolean {
    return dirname(dir) === join(this.dir, "sha256");
  }

  /** The SHA-256 a file of this CAS holds, by its path; null for anything else (a temp file of a write in progress, a file outside it). */
  shaOf(path: string): string | null {
    const root = join(this.dir, "sha256");
    if (!path.startsWith(root + sep)) return null;
    const rel = path.slice(root.length + 1).split(sep);
    return rel.length === 2 && !rel[1]!.endsWith(".tmp") ? rel[0]! + rel[1]! : null;
  }

  sizeOnDisk(sha: string): number {
    try {
      return statSync(this.pathOf(sha)).size;
    } catch {
      return 0;
    }
  }
}

/**
 * zlib's level for a blob of `size` bytes: 6 for source-sized blobs (a
 * quarter smaller than level 1 on source text), 1 above 1 MiB, where level 6
 * is five to ten times slower (about 50 ms against 5-10 ms a 5 MiB text
 * here) and an undo of large files would spend most of its time in it. git
 * itself writes loose objects at level 1. Reading does not care.
 */
export function levelFor(size: number): number {
  return size > 1024 * 1024 ? 1 : 6;
}
