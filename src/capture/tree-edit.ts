import { closeSync, constants as fsConstants, fstatSync, lstatSync, openSync, readFileSync, readlinkSync, type Stats } from "node:fs";
import { decodePath, encodePath, fsPath } from "../domain/path-bytes.js";
import { join } from "node:path";
import { lineSafe, readLooseObject, writeLooseObject } from "../git/objects.js";
import { PackWriter } from "../git/pack.js";
import { modeOf } from "./observe.js";
import type { Context } from "../repo/context.js";
import { GitError, parseBatch } from "../git/git.js";
import { INDEX_CONFIG } from "./index-config.js";

/** One tree entry: `mode` as git writes it in trees ("40000" for a tree). */
export interface TreeEntry {
  mode: string;
  oid: string;
}

/**
 * A tree object's entries, located in its raw bytes ("<mode> <name>\0<oid>"...)
 * without decoding them: a snapshot edits a few names in trees that may hold
 * thousands, and copies the rest through untouched.
 */
export class RawTree {
  private readonly starts: number[] = [];
  private readonly names: number[] = [];
  private readonly nuls: number[] = [];
  private readonly dirs: boolean[] = [];

  constructor(
    readonly raw: Buffer,
    private readonly oidBytes: number,
  ) {
    // A plain loop: a call into Buffer.indexOf per field costs more than the
    // scan itself in a tree of thousands of entries.
    const n = raw.length;
    let pos = 0;
    while (pos < n) {
      let sp = pos;
      while (sp < n && raw[sp] !== 0x20) sp++;
      let nul = sp + 1;
      while (nul < n && raw[nul] !== 0) nul++;
      if (nul >= n || nul + 1 + oidBytes > n) throw new Error("malformed tree object");
      this.starts.push(pos);
      this.names.push(sp + 1);
      this.nuls.push(nul);
      this.dirs.push(sp - pos === 5 && raw[pos] === 0x34); // "40000"
      pos = nul + 1 + oidBytes;
    }
  }

  get size(): number {
    return this.starts.length;
  }

  /** Where entry `i` starts in `raw` (`raw.length` past the last). */
  start(i: number): number {
    return i < this.starts.length ? this.starts[i]! : this.raw.length;
  }

  entry(i: number): TreeEntry {
    const nul = this.nuls[i]!;
    return { mode: this.raw.toString("latin1", this.starts[i]!, this.names[i]! - 1), oid: this.raw.toString("hex", nul + 1, nul + 1 + this.oidBytes) };
  }

  /** The index of the entry called `name`, or -1. */
  find(name: Buffer): number {
    for (const dir of [false, true]) {
      const i = this.insertionPoint(name, dir);
      if (i < this.size && this.dirs[i] === dir && this.compareAt(i, name, dir) === 0) return i;
    }
    return -1;
  }

  /** The first index whose entry sorts at or after `name` (a tree if `dir`). */
  insertionPoint(name: Buffer, dir: boolean): number {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compareAt(mid, name, dir) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Every entry by name: for tests and for reading a whole tree. */
  entries(): Map<string, TreeEntry> {
    const out = new Map<string, TreeEntry>();
    for (let i = 0; i < this.size; i++) out.set(decodePath(this.raw.subarray(this.names[i]!, this.nuls[i]!)), this.entry(i));
    return out;
  }

  private compareAt(i: number, name: Buffer, dir: boolean): number {
    return gitOrder(this.raw, this.names[i]!, this.nuls[i]!, this.dirs[i]!, name, 0, name.length, dir);
  }
}

/** git's tree order (base_name_compare): bytewise, a tree's name compared as if it ended in "/". */
function gitOrder(a: Buffer, as: number, ae: number, aDir: boolean, b: Buffer, bs: number, be: number, bDir: boolean): number {
  const n = Math.min(ae - as, be - bs);
  const c = a.compare(b, bs, bs + n, as, as + n);
  if (c !== 0) return c;
  const ca = ae - as > n ? a[as + n]! : aDir ? 0x2f : 0;
  const cb = be - bs > n ? b[bs + n]! : bDir ? 0x2f : 0;
  return ca - cb;
}

const dirOf = (p: string) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");
const baseOf = (p: string) => p.slice(p.lastIndexOf("/") + 1);

/** One directory being edited: its tree before (null: a new directory) and the names whose entry changes (null: removed). */
class DirEdit {
  readonly changed = new Map<string, TreeEntry | null>();
  constructor(readonly base: RawTree | null) {}

  /** The entry a name has now: changed, else as in the base tree. */
  get(name: string): TreeEntry | null {
    if (this.changed.has(name)) return this.changed.get(name)!;
    const i = this.base ? this.base.find(encodePath(name)) : -1;
    return i < 0 ? null : this.base!.entry(i);
  }

  get size(): number {
    let n = this.base?.size ?? 0;
    for (const [name, e] of this.changed) {
      if (this.base && this.base.find(encodePath(name)) >= 0) n--;
      if (e) n++;
    }
    return n;
  }

  /** The new tree object: the base's bytes, copied in runs around the changed names. */
  serialize(): Buffer {
    const base = this.base;
    const skip = new Set<number>();
    const adds: { at: number; name: Buffer; dir: boolean; bytes: Buffer }[] = [];
    for (const [n, e] of this.changed) {
      const name = encodePath(n);
      const i = base ? base.find(name) : -1;
      if (i >= 0) skip.add(i);
      if (!e) continue;
      const dir = e.mode === "40000";
      const bytes = Buffer.concat([Buffer.from(`${e.mode} `, "latin1"), name, Buffer.from([0]), Buffer.from(e.oid, "hex")]);
      adds.push({ at: base ? base.insertionPoint(name, dir) : 0, name, dir, bytes });
    }
    adds.sort((x, y) => x.at - y.at || gitOrder(x.name, 0, x.name.length, x.dir, y.name, 0, y.name.length, y.dir));
    const parts: Buffer[] = [];
    const n = base?.size ?? 0;
    let run = -1; // byte offset where the current run of untouched entries began
    const flush = (to: number) => {
      if (run >= 0 && to > run) parts.push(base!.raw.subarray(run, to));
      run = -1;
    };
    let k = 0;
    for (let i = 0; i <= n; i++) {
      while (k < adds.length && adds[k]!.at === i) {
        flush(base ? base.start(i) : 0);
        parts.push(adds[k++]!.bytes);
      }
      if (i === n) break;
      if (skip.has(i)) flush(base!.start(i));
      else if (run < 0) run = base!.start(i);
    }
    flush(base ? base.raw.length : 0);
    return Buffer.concat(parts);
  }
}

/**
 * From this many blobs on, a snapshot writes them as one pack rather than
 * loose: below it the loose objects cost less than a pack's fixed work (its
 * index, the pack read back for its checksum, two renames), and a restore
 * reads loose blobs in-process.
 */
export const PACK_AT = 256;

/**
 * The new root tree from the previous one and the changed paths (null:
 * removed). Reads only the trees on the changed paths' way down, and writes
 * only the trees that change: a snapshot of a large repository does not
 * re-read its whole index to write a tree, as `git write-tree` must.
 * `read` returns an existing tree directory (null if there is none).
 */
export function editTree(changes: ReadonlyMap<string, TreeEntry | null>, read: (dir: string) => RawTree | null, write: (body: Buffer) => string): string {
  const dirs = new Set<string>([""]);
  for (const p of changes.keys()) for (let d = dirOf(p); d !== ""; d = dirOf(d)) dirs.add(d);
  const edits = new Map<string, DirEdit>();
  for (const d of dirs) edits.set(d, new DirEdit(read(d)));
  for (const [p, e] of changes) {
    const at = edits.get(dirOf(p))!;
    if (e) at.changed.set(baseOf(p), e);
    else if (at.get(baseOf(p))?.mode !== "40000") at.changed.set(baseOf(p), null);
  }
  const deepestFirst = [...dirs].filter((d) => d !== "").sort((a, b) => b.split("/").length - a.split("/").length);
  for (const d of deepestFirst) {
    const own = edits.get(d)!;
    const parent = edits.get(dirOf(d))!;
    if (own.size === 0) {
      // A directory that lost its last entry is gone; a file of the same name may have taken its place.
      if (parent.get(baseOf(d))?.mode === "40000") parent.changed.set(baseOf(d), null);
    } else {
      parent.changed.set(baseOf(d), { mode: "40000", oid: write(own.serialize()) });
    }
  }
  return write(edits.get("")!.serialize());
}

/**
 * The edge around `editTree`: applies `known` entries (null: absent) and the
 * paths in `hash`, hashed now, in-process, from the bytes on disk
 * (symlinks from their target), to tree `base`. Reads the affected
 * trees of `base` (loose objects in-process, else one `cat-file --batch`),
 * and writes the new trees as loose objects. The index is left alone:
 * returns every entry applied, so the caller can fold them in when it
 * chooses, and the stat data each hashed path was read with. With
 * `scratch`, new objects go to a scratch object directory (git reads the
 * store's through `env`'s alternates), so nothing in the store changes.
 */
export async function incrementalTree(
  ctx: Context,
  base: string,
  known: ReadonlyMap<string, TreeEntry | null>,
  hash: readonly string[],
  timeoutMs: () => number | undefined,
  scratch?: { objects: string; env: Record<string, string> },
): Promise<{ tree: string; changes: Map<string, TreeEntry | null>; stats: Map<string, Stats> }> {
  const objects = scratch?.objects ?? join(ctx.commonDir, "objects");
  const env = scratch?.env ?? {};
  const changes = new Map<string, TreeEntry | null>(known);
  const stats = new Map<string, Stats>();
  const files: string[] = [];
  let seen = 0;
  for (const p of hash) {
    if (++seen % 1024 === 0) overBudget(timeoutMs);
    // Taken before the content is read: a change in between shows in the next snapshot's stat.
    const st = lstatSync(fsPath(join(ctx.root, p)), { throwIfNoEntry: false });
    if (!st) {
      changes.set(p, null); // gone since status: the snapshot shows it gone
      continue;
    }
    stats.set(p, st);
    if (st.isSymbolicLink()) {
      const target = readOrGone(p, () => readlinkSync(fsPath(join(ctx.root, p)), "buffer"));
      changes.set(p, target && { mode: "120000", oid: writeLooseObject(objects, "blob", target, ctx.objectFormat) });
    } else {
      files.push(p);
      changes.set(p, { mode: modeOf(st), oid: "" });
    }
  }
  const dirs = new Set<string>([""]);
  for (const p of changes.keys()) for (let d = dirOf(p); d !== ""; d = dirOf(d)) dirs.add(d);
  // Hashed here, as the bytes are: snapshots hold the file as it is on disk (src/capture/disk-form.ts).
  // Many go into one pack: a loose file each is a create and a rename each (src/git/pack.ts).
  const pack = files.length >= PACK_AT ? new PackWriter(objects, ctx.objectFormat) : null;
  try {
    let k = 0;
    for (const p of files) {
      // A hook's budget holds here too: 100,000 files read and hashed outlast it by far on a loaded machine.
      if (++k % 256 === 0) overBudget(timeoutMs);
      const data = readOrGone(p, () => readRegular(fsPath(join(ctx.root, p))));
      if (data) changes.get(p)!.oid = pack ? pack.add("blob", data) : writeLooseObject(objects, "blob", data, ctx.objectFormat);
      else changes.set(p, null);
    }
    pack?.finish();
  } catch (e) {
    pack?.abort();
    throw e;
  }
  const trees = await readTrees(ctx, base, [...dirs], env, timeoutMs);
  const tree = editTree(
    changes,
    (d) => trees.get(d) ?? null,
    (body) => {
      const oid = writeLooseObject(objects, "tree", body, ctx.objectFormat);
      remember(oid, body);
      return oid;
    },
  );
  return { tree, changes, stats };
}

/**
 * Throws once a hook's budget is spent (`timeoutMs` gives what is left, at
 * least 1 ms): the loops over every changed path look at the clock too, not
 * only the git calls. At 100,000 changed files they ran 30 s past a 10 s
 * budget.
 */
export function overBudget(timeoutMs: () => number | undefined): void {
  if (timeoutMs() === 1) throw new Error("snapshot: reading the changed files timed out");
}

/**
 * The bytes of a path lstat just saw as a regular file, read only if it
 * still is one: opened without following a symlink and without blocking
 * (a fifo put in its place would block a plain read forever, lock held).
 */
function readRegular(abs: string | Buffer): Buffer {
  const fd = openSync(abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw Object.assign(new Error("not a regular file any more"), { code: "ENOTREG" });
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A read of a path lstat just saw: null if it is gone since (the snapshot shows it gone); any other failure sends the snapshot the long way. */
function readOrGone(p: string, read: () => Buffer): Buffer | null {
  try {
    return read();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw new CannotEditTree(`${p}: ${code ?? String(e)}`);
  }
}

/** Brings the private index up to date with entries `incrementalTree` returned, without re-hashing anything. */
export async function foldIntoIndex(ctx: Context, env: Record<string, string>, changes: ReadonlyMap<string, TreeEntry | null>, timeoutMs: () => number | undefined): Promise<void> {
  const zero = "0".repeat(ctx.objectFormat === "sha256" ? 64 : 40);
  const info = [...changes].map(([p, e]) => (e ? `${e.mode} ${e.oid}\t${p}` : `0 ${zero}\t${p}`));
  await ctx.git([...INDEX_CONFIG, "update-index", "--add", "--replace", "-z", "--index-info"], {
    env,
    input: info.join("\0") + "\0",
    optionalLocks: true,
    timeoutMs: timeoutMs(),
  });
}

/**
 * What tree `root` holds at each of `paths` (null: nothing, or a directory
 * on the way is missing), reading only the trees on their way down.
 */
export async function treeEntries(ctx: Context, root: string, paths: readonly string[], timeoutMs: () => number | undefined, env: Record<string, string> = {}): Promise<Map<string, TreeEntry | null>> {
  const dirs = new Set<string>([""]);
  for (const p of paths) for (let d = dirOf(p); d !== ""; d = dirOf(d)) dirs.add(d);
  const trees = await readTrees(ctx, root, [...dirs], env, timeoutMs);
  const out = new Map<string, TreeEntry | null>();
  for (const p of paths) {
    const t = trees.get(dirOf(p));
    const i = t ? t.find(encodePath(baseOf(p))) : -1;
    out.set(p, i < 0 ? null : t!.entry(i));
  }
  return out;
}

/**
 * Each directory `dirs` names in tree `root` (null for a directory it does
 * not have). The trees a snapshot edits are mostly ones an earlier snapshot
 * wrote, loose: they are read in-process, and only when one is not (packed,
 * or in an alternate) does a `cat-file --batch` run.
 */
async function readTrees(ctx: Context, root: string, dirs: readonly string[], env: Record<string, string>, timeoutMs: () => number | undefined): Promise<Map<string, RawTree | null>> {
  const oidBytes = ctx.objectFormat === "sha256" ? 32 : 20;
  const objects = join(ctx.commonDir, "objects");
  const out = new Map<string, RawTree | null>();
  const byDepth = [...dirs].sort((a, b) => depth(a) - depth(b));
  for (const d of byDepth) {
    let oid: string | null = root;
    if (d !== "") {
      const parent = out.get(dirOf(d));
      const i = parent ? parent.find(encodePath(baseOf(d))) : -1;
      const e = i < 0 ? null : parent!.entry(i);
      oid = e?.mode === "40000" ? e.oid : null;
    }
    if (oid === null) {
      out.set(d, null); // a directory the base tree does not have
      continue;
    }
    const known = knownTree(oid, oidBytes);
    if (known) {
      out.set(d, known);
      continue;
    }
    const body = readLooseObject(objects, oid, "tree"); // null: packed, or not a tree loose: git reads them all
    if (!body) return catFileTrees(ctx, root, dirs, oidBytes, env, timeoutMs);
    out.set(d, remember(oid, baseTree(body, oidBytes, oid)));
  }
  return out;
}

/**
 * Trees this process read or wrote, by oid: an object's content never
 * changes, and a snapshot told by the watcher reads the same trees up to
 * four times (what the index holds, the edit, and what still differs
 * after). Written trees are kept as bytes and parsed only if read.
 */
const seenTrees = new Map<string, RawTree | Buffer>();

function remember<T extends RawTree | Buffer>(oid: string, t: T): T {
  if (seenTrees.size >= 4096) seenTrees.clear(); // a long-lived process (the MCP server) must not grow without bound
  seenTrees.set(oid, t);
  return t;
}

function knownTree(oid: string, oidBytes: number): RawTree | null {
  const t = seenTrees.get(oid);
  if (!t || t instanceof RawTree) return t ?? null;
  return remember(oid, baseTree(t, oidBytes, oid));
}

const depth = (d: string) => (d === "" ? 0 : d.split("/").length);

async function catFileTrees(
  ctx: Context,
  root: string,
  dirs: readonly string[],
  oidBytes: number,
  env: Record<string, string>,
  timeoutMs: () => number | undefined,
): Promise<Map<string, RawTree | null>> {
  // A name git's line input would split or unquote would shift every answer after it onto the wrong directory.
  const odd = dirs.find((d) => !lineSafe(d));
  if (odd !== undefined) throw new CannotEditTree(`${JSON.stringify(odd)}: a directory name git's batch input cannot carry`);
  let out: Buffer;
  try {
    out = (await ctx.git(["cat-file", "--batch", "--buffer"], { env, input: dirs.map((d) => (d === "" ? root : `${root}:${d}`)).join("\n") + "\n", timeoutMs: timeoutMs() })).stdout;
  } catch (e) {
    if (e instanceof GitError && e.gitCode !== "timeout") throw new CannotEditTree(`git cat-file failed: ${e.message}`);
    throw e;
  }
  const trees = new Map<string, RawTree | null>();
  // "missing": a directory the base tree does not have, or an object that is gone (below).
  parseBatch(out, dirs.length).forEach((o, k) => {
    trees.set(dirs[k]!, o?.type === "tree" ? remember(o.oid, baseTree(o.body, oidBytes, o.oid)) : null);
  });
  // "missing" also answers for a tree object that is gone (pruned once no
  // snapshot named it, or lost): taken for an empty directory, it would
  // silently drop everything below it from the snapshot.
  if (!trees.get("")) throw new CannotEditTree(`base tree ${root} is missing`);
  for (const d of dirs) {
    if (d === "" || trees.get(d)) continue;
    const parent = trees.get(dirOf(d));
    const i = parent ? parent.find(encodePath(baseOf(d))) : -1;
    if (i >= 0 && parent!.entry(i).mode === "40000") throw new CannotEditTree(`tree ${parent!.entry(i).oid} (${d}/) is missing`);
  }
  return trees;
}

/**
 * The tree cannot be edited in-process: a base tree is missing or damaged,
 * or a changed file vanished before git could hash it (a build's temp file).
 * The snapshot is written from the index instead, which needs neither.
 */
export class CannotEditTree extends Error {}

function baseTree(body: Buffer, oidBytes: number, oid: string): RawTree {
  try {
    return new RawTree(body, oidBytes);
  } catch {
    throw new CannotEditTree(`tree ${oid} is damaged`);
  }
}
