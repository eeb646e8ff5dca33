import {
  closeSync,
  fchmodSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  type Stats,
} from "node:fs";
import { join } from "node:path";
import { encodePath, fsPath, hasRawBytes } from "../domain/path-bytes.js";

/**
 * Directories of the work tree opened without following a link at any
 * component, and every act on a name in one of them made relative to the
 * open directory (SPEC section 2: every write, delete and read is bound to
 * the directory it checked).
 *
 * A check by path (lstat each parent, then unlink the path) leaves a window:
 * a process in the work tree that swaps a parent for a symlink between the
 * check and the act sends the act wherever the link points, outside the
 * root. On Linux `/proc/self/fd/N/name` resolves `name` inside the directory
 * that descriptor N holds, wherever that directory is now: a later swap of
 * the named parent cannot redirect it. Each component is opened with
 * O_NOFOLLOW|O_DIRECTORY from its own parent's descriptor, so no link is
 * followed on the way either. The last component is the caller's: acts on
 * it never follow it (unlink, rename, rmdir, lstat and readlink do not; a
 * file is opened with O_NOFOLLOW).
 *
 * Where there is no /proc (macOS), the acts go by path and each is preceded
 * and followed by a check that every component is still the directory that
 * was opened (device and inode): a swap is seen, but one that comes and goes
 * back between the check and the act is not.
 *
 * UNWIND_TEST_BOUND ("verify" or "off") is for the tests only: "verify"
 * takes the path without /proc, "off" acts by path unchecked, as unwind
 * did before, the negative control of the race tests.
 */

/** Why a directory could not be had: a component is missing, or is a link or no directory. */
export type DirProblem = { kind: "absent" } | { kind: "blocked"; at: string; file?: true };

type Mode = "fd" | "verify" | "off";

let procFd: boolean | undefined;

function bindMode(): Mode {
  const forced = process.env.UNWIND_TEST_BOUND;
  if (forced === "verify" || forced === "off") return forced;
  procFd ??= process.platform === "linux" && existsSync("/proc/self/fd");
  return procFd ? "fd" : "verify";
}

/** Directories kept open between paths, at most: a batch's are used again while its paths go in order; past this they are closed and opened anew. */
const KEEP_OPEN = 128;

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Opens a regular file for reading, never following a link in its place, never blocking on a fifo swapped in. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export class BoundDirs {
  private readonly open = new Map<string, BoundDir>();
  private readonly mode = bindMode();

  constructor(readonly root: string) {}

  /**
   * The directory `rel` ("" for the root), each component opened without
   * following a link; or which component is missing or in the way. Opened
   * once and kept until `trim` or `close`: what it names later is what was
   * opened, wherever that directory has moved.
   */
  dir(rel: string): BoundDir | DirProblem {
    const have = this.open.get(rel);
    if (have) return have;
    if (rel === "") {
      const root = new BoundDir(this.mode, this.root, "", this.mode === "off" ? -1 : openSync(this.root, constants.O_RDONLY | constants.O_DIRECTORY), null);
      this.open.set("", root);
      return root;
    }
    const cut = rel.lastIndexOf("/");
    const parent = this.dir(cut < 0 ? "" : rel.slice(0, cut));
    if (!(parent instanceof BoundDir)) return parent;
    const name = rel.slice(cut + 1);
    let fd = -1;
    try {
      if (this.mode === "off") {
        const st = lstatSync(parent.path(name));
        if (!st.isDirectory()) return problemOf(st, rel);
      } else fd = openSync(parent.path(name), DIR_FLAGS);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { kind: "absent" };
      if (code !== "ELOOP" && code !== "ENOTDIR") throw e;
      // Refused for being a link or no directory: which one, as a parent's lstat would say.
      try {
        return problemOf(parent.lstat(name), rel);
      } catch {
        return { kind: "absent" };
      }
    }
    const d = new BoundDir(this.mode, this.root, rel, fd, parent);
    this.open.set(rel, d);
    return d;
  }

  /** Closes what is open once there is much of it: called between paths, never while one is being acted on. */
  trim(): void {
    if (this.open.size > KEEP_OPEN) this.close();
  }

  close(): void {
    for (const d of this.open.values()) if (d.fd >= 0) closeSync(d.fd);
    this.open.clear();
  }
}

function problemOf(st: Stats, rel: string): DirProblem {
  // Raced: a link when opened, a directory again now. Still in the way: it was not the directory checked.
  return st.isSymbolicLink() || st.isDirectory() ? { kind: "blocked", at: rel } : { kind: "blocked", at: rel, file: true };
}

/** One open directory of the work tree; its methods act on a name in it. */
export class BoundDir {
  private readonly id: { dev: number; ino: number } | null;

  constructor(
    private readonly mode: Mode,
    private readonly root: string,
    readonly rel: string,
    readonly fd: number,
    private readonly parent: BoundDir | null,
  ) {
    if (mode === "verify") {
      const st = fstatSync(fd);
      this.id = { dev: st.dev, ino: st.ino };
    } else this.id = null;
  }

  /** A path naming `name` in this directory, for one call of the file system. */
  path(name: string): string | Buffer {
    if (this.mode !== "fd") return fsPath(join(this.root, this.rel, name));
    const prefix = `/proc/self/fd/${this.fd}/`;
    return hasRawBytes(name) ? Buffer.concat([Buffer.from(prefix), encodePath(name)]) : prefix + name;
  }

  /** Without /proc: whether every component is still the directory that was opened. */
  private check(): void {
    if (this.mode !== "verify") return;
    for (let d: BoundDir | null = this; d?.parent; d = d.parent) {
      const st = lstatSync(fsPath(join(this.root, d.rel)));
      if (st.dev !== d.id!.dev || st.ino !== d.id!.ino) throw Object.assign(new Error(`${d.rel} was replaced while unwind worked in it`), { code: "ESTALE" });
    }
  }

  /** `fn` on the path of `name`, checked before and after where the path is not bound by /proc. */
  private act<T>(name: string, fn: (p: string | Buffer) => T): T {
    this.check();
    const out = fn(this.path(name));
    this.check();
    return out;
  }

  lstat(name: string): Stats {
    return this.act(name, (p) => lstatSync(p));
  }
  readlink(name: string): Buffer {
    return this.act(name, (p) => readlinkSync(p, "buffer"));
  }
  /** Opens `name` (never following it: O_NOFOLLOW is the caller's to give with `flags`). */
  openFile(name: string, flags: number, mode?: number): number {
    return this.act(name, (p) => openSync(p, flags, mode));
  }
  unlink(name: string): void {
    this.act(name, (p) => unlinkSync(p));
  }
  /** Renames `from` over `to`, both in this directory. */
  rename(from: string, to: string): void {
    this.act(from, (p) => renameSync(p, this.path(to)));
  }
  mkdir(name: string): void {
    this.act(name, (p) => mkdirSync(p));
  }
  rmdir(name: string): void {
    this.act(name, (p) => rmdirSync(p));
  }
  /** chmod of a regular file, through a descriptor: a link swapped in for it is refused, not followed (chmod(2) would follow it). */
  chmod(name: string, mode: number): void {
    const fd = this.openFile(name, READ_FLAGS);
    try {
      if (!fstatSync(fd).isFile()) throw Object.assign(new Error(`${join(this.rel, name)} is not a regular file`), { code: "EISDIR" });
      fchmodSync(fd, mode);
    } finally {
      closeSync(fd);
    }
  }
  /** The bytes of the regular file `name`; a link or anything else in its place is refused. */
  readFile(name: string): Buffer {
    const fd = this.openFile(name, READ_FLAGS);
    try {
      if (!fstatSync(fd).isFile()) throw Object.assign(new Error(`${join(this.rel, name)} is not a regular file`), { code: "EISDIR" });
      return readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  symlink(target: Buffer, name: string): void {
    this.act(name, (p) => symlinkSync(target, p));
  }
}

/** `fn` on the directory of `rel` under `root`, opened for this one act: throws where that directory cannot be had. */
export function inDirOf<T>(root: string, rel: string, fn: (d: BoundDir, name: string) => T): T {
  const dirs = new BoundDirs(root);
  try {
    const [dir, name] = splitRel(rel);
    const d = dirs.dir(dir);
    if (!(d instanceof BoundDir)) throw Object.assign(new Error(`${rel}: ${d.kind === "blocked" ? `${d.at} is not a directory` : "no such directory"}`), { code: "ENOTDIR" });
    return fn(d, name);
  } finally {
    dirs.close();
  }
}

/** A repo-relative path's directory and last component ("" for a top-level name's directory). */
export function splitRel(rel: string): [dir: string, name: string] {
  const cut = rel.lastIndexOf("/");
  return cut < 0 ? ["", rel] : [rel.slice(0, cut), rel.slice(cut + 1)];
}
