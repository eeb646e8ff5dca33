import { fsPath } from "../domain/path-bytes.js";
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync, chmodSync } from "node:fs";
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

export function tempNameFor(path: string, tag = randomBytes(4).toString("hex")): string {
  return join(dirname(path), `.${basename(path)}.unwind-${tag}.tmp`);
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
export function writeFileAtomic(path: string, data: Buffer | string, opts: { mode?: number; createMode?: number; tmp?: string; sync?: boolean } = {}): void {
  const sync = opts.sync ?? true;
  const tmp = opts.tmp ?? tempNameFor(path);
  const fd = openSync(tmp, "wx", opts.mode ?? opts.createMode ?? 0o644);
  try {
    const buf = typeof data === "string" ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
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
  closeSync(fd);
  // The umask may have narrowed the mode given to open(); the record's mode wins.
  if (opts.mode !== undefined) chmodSync(tmp, opts.mode);
  renameSync(tmp, path);
  if (sync) fsyncDir(dirname(path));
}
