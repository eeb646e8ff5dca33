import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { constants as zlibConstants, deflateSync, inflateSync, type ZlibOptions } from "node:zlib";
import type { GitOid } from "../domain/types.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { readFileBriefly } from "../sys/files.js";

export type ObjectType = "commit" | "tree" | "blob";

const framed = (type: ObjectType, body: Buffer) => Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);

/** git's id of an object: the hash of "<type> <size>\0<body>" (for a blob, what `hash-object --no-filters` prints). */
/** Git's own blob id of raw bytes (what `git hash-object --no-filters` prints). */
export function blobOid(data: Buffer | string, format: "sha1" | "sha256"): GitOid {
  return objectId("blob", data, format) as GitOid;
}

export function objectId(type: ObjectType, body: Buffer | string, format: "sha1" | "sha256"): string {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  // The header and the body hashed one after the other: no framed copy of every blob a restore verifies.
  return createHash(format).update(`${type} ${bytes.length}\0`).update(bytes).digest("hex");
}

/**
 * Names git's line-based plumbing (`--stdin-paths`, `cat-file --batch`)
 * carries intact: it splits on newlines and C-unquotes a leading `"`.
 */
export const lineSafe = (p: string): boolean => !p.includes("\n") && !p.includes("\r") && !p.startsWith('"');

/**
 * Writes one loose git object (zlib of "<type> <size>\0<body>", named by its
 * hash) — the format git itself writes. Used for snapshot trees and commits,
 * where a git process would cost more than the objects it makes.
 * Content-addressed and written by rename: an object that exists is never
 * rewritten. Not fsynced, like the blobs `git hash-object -w` writes beside
 * them (git's default `core.fsync` leaves loose objects out): a snapshot
 * costs one fsync pair per tree otherwise, ~100 ms for ten changed files.
 */
export function writeLooseObject(objectsDir: string, type: ObjectType, body: Buffer, format: "sha1" | "sha256"): string {
  const data = framed(type, body);
  const oid = createHash(format).update(data).digest("hex");
  const dir = join(objectsDir, oid.slice(0, 2));
  const file = join(dir, oid.slice(2));
  const there = statSync(file, { throwIfNoEntry: false });
  if (there && there.size > 0) {
    // As git does: a fresh mtime keeps a concurrent prune from taking an object just reused.
    try {
      const now = new Date();
      utimesSync(file, now, now);
    } catch {
      /* a read-only objects directory: the object exists, which is what matters */
    }
    return oid;
  }
  // Absent, or emptied by a power cut (objects are not fsynced): written (again).
  const bytes = deflateSync(data, deflateOptions(data.length));
  // Mode 0444 less the umask, as git's own objects: no chmod.
  try {
    writeFileAtomic(file, bytes, { createMode: 0o444, sync: false });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    // The fan-out directory's first object. As open as the objects directory, as git makes it under
    // core.sharedRepository: a store's private git dir (0700) keeps it private; a repository's is as before.
    mkdirSync(dir, { recursive: true, mode: statSync(objectsDir).mode & 0o777 });
    writeFileAtomic(file, bytes, { createMode: 0o444, sync: false });
  }
  return oid;
}

/**
 * The body of loose object `oid` of `type` in `objectsDir`, read in-process;
 * null where it is not there loose (packed, in an alternate) or cannot be
 * read as one, for git to find or to report. Only the header is checked
 * here: the caller checks the body against the oid. A view of zlib's
 * output: copy what is kept.
 *
 * Why not git: `cat-file --batch` opens, maps and unmaps each loose object
 * three times; for 10,000 loose blobs (a shell call's snapshot, before any
 * `git gc` packs it) that was 1.4 s into a pipe here, against ~0.35 s read
 * in-process (docs/design.md "Loose objects, read in-process").
 */
export function readLooseObject(objectsDir: string, oid: string, type: ObjectType): Buffer | null {
  let raw: Buffer;
  try {
    // A small object read into the reused buffer (no fstat, no buffer of its own); inflated from it at once.
    raw = inflateSync(readFileBriefly(join(objectsDir, oid.slice(0, 2), oid.slice(2)), 0));
  } catch {
    return null;
  }
  const nul = raw.indexOf(0);
  const m = /^(\w+) (\d+)$/.exec(raw.subarray(0, Math.max(nul, 0)).toString("latin1"));
  if (!m || m[1] !== type || Number(m[2]) !== raw.length - nul - 1) return null;
  return raw.subarray(nul + 1);
}

/**
 * The type and size of loose object `oid`, from its first bytes alone (what
 * `cat-file --batch-check` tells, without a git process opening each loose
 * object three times); null where it is not loose here or its header cannot
 * be read, for git to answer.
 */
export function looseHeader(objectsDir: string, oid: string): { type: string; size: number } | null {
  const head = Buffer.allocUnsafe(64);
  let n: number;
  try {
    const fd = openSync(join(objectsDir, oid.slice(0, 2), oid.slice(2)), "r");
    try {
      n = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
    // A sync flush: what 64 bytes of the stream give, without zlib asking for the rest.
    const out = inflateSync(head.subarray(0, n), { finishFlush: zlibConstants.Z_SYNC_FLUSH });
    const m = /^(\w+) (\d+)\0/.exec(out.toString("latin1", 0, Math.min(out.length, 40)));
    return m ? { type: m[1]!, size: Number(m[2]) } : null;
  } catch {
    return null;
  }
}

/**
 * zlib as git writes loose objects (`core.looseCompression` defaults to 1,
 * the fastest level: a pack recompresses them later), sized to the object:
 * setting up the default 32 KiB window and hash tables costs ~0.5 ms a
 * call, more than compressing a small tree. Any window size is a valid
 * stream for git to read.
 */
export function deflateOptions(size: number): ZlibOptions {
  const windowBits = Math.min(15, Math.max(9, Math.ceil(Math.log2(size + 262))));
  return { level: 1, windowBits, memLevel: Math.max(1, windowBits - 7) };
}

/** The body of a commit (parentless unless `parents` are given), as `git commit-tree` would write it for the same inputs. */
export function commitBody(tree: string, who: string, epochSeconds: number, message: string, parents: readonly string[] = []): Buffer {
  const sig = `${who} ${epochSeconds} +0000`;
  return Buffer.from(`tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join("")}author ${sig}\ncommitter ${sig}\n\n${message}`);
}
