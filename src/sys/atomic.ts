import { fsPath } from "../domain/path-bytes.js";
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";

/** fsync a directory so a rename or unlink in it survives a power cut. */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(fsPath(dir), "r");
    fsyncSync(fd);
  } catch {
    /* some file systems refuse fsync on directories; the rename is still atomic */
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** fsync one file, so what was written to it survives a power cut. */
export function fsyncFile(path: string): void {
  const fd = openSync(fsPath(path), "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** This process's part of every temp name it makes: random once, then a counter (a random draw per file costs more than the write). */
let tempPrefix: string | undefined;
let tempCount = 0;

export function tempNameFor(path: string, tag?: string): string {
  tempPrefix ??= `${process.pid.toString(36)}${randomBytes(4).toString("hex")}`;
  return join(dirname(path), `.${basename(path)}.unwind-${tag ?? `${tempPrefix}-${(tempCount++).toString(36)}`}.tmp`);
}

/** Whether a file name is one `tempNameFor` makes. */
export function isTempName(name: string): boolean {
  return name.startsWith(".") && /\.unwind-[^/]*\.tmp$/.test(name);
}

/** The process's umask, read once (null where it cannot be read, as in a worker thread). */
let umaskCache: number | null | undefined;
export function umask(): number | null {
  if (umaskCache === undefined) {
    try {
      umaskCache = process.umask();
    } catch {
      umaskCache = null;
    }
  }
  return umaskCache;
}

/** Whether a file created with `mode` needs a chmod to have it: the umask took bits away (or is unknown). */
export function umaskNarrows(mode: number): boolean {
  const mask = umask();
  return mask === null || (mode & ~mask) !== mode;
}

/**
 * Makes everything written to the file system that holds `path` durable, in
 * one call: syncfs(2), through `sync -f`. One flush of the file system costs
 * less than an fsync per file from about a few dozen files on (measured:
 * 80 ms against 2.0 s for 10,000 small files, docs/design.md "Which fsyncs,
 * and why"). It also flushes what other programs wrote there, which is why
 * it is kept for batches. False when it could not be done (not Linux, no
 * `sync -f`, an error, over a minute): the caller then fsyncs file by file.
 */
export function syncFileSystem(path: string): boolean {
  const where = fsPath(path);
  if (process.platform !== "linux" || typeof where !== "string") return false;
  const { spawnSync } = process.getBuiltinModule("node:child_process");
  const r = spawnSync("sync", ["-f", where], { stdio: "ignore", timeout: 60_000 });
  return r.status === 0;
}

/**
 * The one atomic-write helper: temp file in the same directory, fsync,
 * chmod, rename over the target, fsync the directory. A reader sees the old
 * bytes or the new ones, never a torn file. `sync: false` keeps the
 * atomicity against a killed process but not against a power cut: for git
 * objects, which git itself writes that way (its default `core.fsync`
 * leaves loose objects out). `mode` is set exactly; `createMode` only asks
 * for it at creation, leaving the umask to narrow it.
 */
export function writeFileAtomic(path: string, data: Buffer | string | Iterable<string>, opts: { mode?: number; createMode?: number; tmp?: string; sync?: boolean } = {}): void {
  const sync = opts.sync ?? true;
  const tmp = opts.tmp ?? tempNameFor(path);
  const fd = openSync(tmp, "wx", opts.mode ?? opts.createMode ?? 0o644);
  try {
    if (typeof data === "string" || Buffer.isBuffer(data)) writeAll(fd, typeof data === "string" ? Buffer.from(data) : data);
    else writeChunks(fd, data);
    if (sync) fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw e;
  }
  // The umask may have narrowed the mode given to open(); the record's mode wins.
  try {
    if (opts.mode !== undefined && umaskNarrows(opts.mode)) fchmodSync(fd, opts.mode);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  if (sync) fsyncDir(dirname(path));
}

function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

/** Text handed over piece by piece (a receipt's or an intent's lines) goes out ~64 KiB at a time: the whole is never one string. */
function writeChunks(fd: number, chunks: Iterable<string>): void {
  let pending: string[] = [];
  let size = 0;
  for (const c of chunks) {
    pending.push(c);
    size += c.length;
    if (size >= 1 << 16) {
      writeAll(fd, Buffer.from(pending.join("")));
      pending = [];
      size = 0;
    }
  }
  if (pending.length > 0) writeAll(fd, Buffer.from(pending.join("")));
}
