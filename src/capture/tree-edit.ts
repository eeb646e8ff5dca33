import { lstatSync, readFileSync, readlinkSync } from "node:fs";
import { inflateSync } from "node:zlib";
import { join } from "node:path";
import { writeLooseObject } from "../git/objects.js";
import type { Context } from "../store/context.js";
import { INDEX_CONFIG } from "./index-config.js";

/** One tree entry: `mode` as git writes it in trees ("40000" for a tree). */
export interface TreeEntry {
  mode: string;
  oid: string;
}

/** Parses a raw tree object ("<mode> <name>\0<binary oid>"...). */
export function parseTree(raw: Buffer, oidBytes: number): Map<string, TreeEntry> {
  const out = new Map<string, TreeEntry>();
  let pos = 0;
  while (pos < raw.length) {
    const sp = raw.indexOf(0x20, pos);
    const nul = raw.indexOf(0, sp);
    out.set(raw.toString("utf8", sp + 1, nul), { mode: raw.toString("latin1", pos, sp), oid: raw.toString("hex", nul + 1, nul + 1 + oidBytes) });
    pos = nul + 1 + oidBytes;
  }
  return out;
}

export function serializeTree(entries: ReadonlyMap<string, TreeEntry>): Buffer {
  // git's tree order: bytewise, with a tree's name compared as if it ended in "/".
  const rows = [...entries].map(([name, e]) => ({ key: Buffer.from(e.mode === "40000" ? `${name}/` : name, "utf8"), head: `${e.mode} ${name}\0`, oid: e.oid }));
  rows.sort((a, b) => Buffer.compare(a.key, b.key));
  let size = 0;
  for (const r of rows) size += Buffer.byteLength(r.head, "utf8") + r.oid.length / 2;
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const r of rows) {
    pos += out.write(r.head, pos, "utf8");
    pos += out.write(r.oid, pos, "hex");
  }
  return out;
}

const dirOf = (p: string) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");
const baseOf = (p: string) => p.slice(p.lastIndexOf("/") + 1);

/**
 * The new root tree from the previous one and the changed paths (null:
 * removed). Reads only the trees on the changed paths' way down, and writes
 * only the trees that change: a snapshot of a large repository does not
 * re-read its whole index to write a tree, as `git write-tree` must.
 * `read` returns the entries of an existing tree directory (empty if new).
 */
export function editTree(
  changes: ReadonlyMap<string, TreeEntry | null>,
  read: (dir: string) => Map<string, TreeEntry>,
  write: (body: Buffer) => string,
): string {
  const dirs = new Set<string>([""]);
  for (const p of changes.keys()) for (let d = dirOf(p); d !== ""; d = dirOf(d)) dirs.add(d);
  const entries = new Map<string, Map<string, TreeEntry>>();
  for (const d of dirs) entries.set(d, read(d));
  for (const [p, e] of changes) {
    const at = entries.get(dirOf(p))!;
    if (e) at.set(baseOf(p), e);
    else if (at.get(baseOf(p))?.mode !== "40000") at.delete(baseOf(p));
  }
  const deepestFirst = [...dirs].filter((d) => d !== "").sort((a, b) => b.split("/").length - a.split("/").length);
  for (const d of deepestFirst) {
    const own = entries.get(d)!;
    const parent = entries.get(dirOf(d))!;
    if (own.size === 0) {
      // A directory that lost its last entry is gone; a file of the same name may have taken its place.
      if (parent.get(baseOf(d))?.mode === "40000") parent.delete(baseOf(d));
    } else {
      parent.set(baseOf(d), { mode: "40000", oid: write(serializeTree(own)) });
    }
  }
  return write(serializeTree(entries.get("")!));
}

/**
 * The edge around `editTree`: hashes the added paths (git applies its clean
 * filters; symlinks are hashed from their target), reads the affected trees
 * of `base` (loose objects in-process, else one `cat-file --batch`), and
 * writes the new trees as loose objects. The index is left alone: returns
 * the entries so the caller can fold them in when it chooses.
 */
export async function incrementalTree(
  ctx: Context,
  base: string,
  add: readonly string[],
  remove: readonly string[],
  timeoutMs: () => number | undefined,
): Promise<{ tree: string; changes: Map<string, TreeEntry | null> }> {
  const objects = join(ctx.commonDir, "objects");
  const changes = new Map<string, TreeEntry | null>();
  for (const p of remove) changes.set(p, null);
  const files: string[] = [];
  for (const p of add) {
    const st = lstatSync(join(ctx.root, p));
    if (st.isSymbolicLink()) {
      changes.set(p, { mode: "120000", oid: writeLooseObject(objects, "blob", Buffer.from(readlinkSync(join(ctx.root, p))), ctx.objectFormat) });
    } else {
      files.push(p);
      changes.set(p, { mode: st.mode & 0o111 ? "100755" : "100644", oid: "" });
    }
  }
  const dirs = new Set<string>([""]);
  for (const p of changes.keys()) for (let d = dirOf(p); d !== ""; d = dirOf(d)) dirs.add(d);
  // The two reads are independent: hashing and fetching trees overlap.
  const [, trees] = await Promise.all([
    (async () => {
      if (files.length === 0) return;
      const r = await ctx.git(["hash-object", "-w", "--stdin-paths"], { input: files.join("\n") + "\n", timeoutMs: timeoutMs() });
      const oids = r.stdout.toString("utf8").trim().split("\n");
      if (oids.length !== files.length) throw new Error("git hash-object gave fewer ids than paths");
      files.forEach((p, i) => (changes.get(p)!.oid = oids[i]!));
    })(),
    readTrees(ctx, base, [...dirs], timeoutMs),
  ]);
  const tree = editTree(changes, (d) => trees.get(d) ?? new Map(), (body) => writeLooseObject(objects, "tree", body, ctx.objectFormat));
  return { tree, changes };
}

/** Brings the private index up to date with entries `incrementalTree` returned, without re-hashing anything. */
export async function foldIntoIndex(
  ctx: Context,
  env: Record<string, string>,
  changes: ReadonlyMap<string, TreeEntry | null>,
  timeoutMs: () => number | undefined,
): Promise<void> {
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
 * The entries of each directory `dirs` names in tree `root` (empty for a
 * directory it does not have). The trees a snapshot edits are mostly ones
 * an earlier snapshot wrote, loose: they are read in-process, and only when
 * one is not (packed, or in an alternate) does a `cat-file --batch` run.
 */
async function readTrees(ctx: Context, root: string, dirs: readonly string[], timeoutMs: () => number | undefined): Promise<Map<string, Map<string, TreeEntry>>> {
  const oidBytes = ctx.objectFormat === "sha256" ? 32 : 20;
  const objects = join(ctx.commonDir, "objects");
  const out = new Map<string, Map<string, TreeEntry>>();
  const byDepth = [...dirs].sort((a, b) => depth(a) - depth(b));
  for (const d of byDepth) {
    let oid: string | null = root;
    if (d !== "") {
      const e = out.get(dirOf(d))?.get(baseOf(d));
      oid = e?.mode === "40000" ? e.oid : null;
    }
    if (oid === null) {
      out.set(d, new Map()); // a directory the base tree does not have
      continue;
    }
    const body = readLooseTree(objects, oid);
    if (!body) return catFileTrees(ctx, root, dirs, oidBytes, timeoutMs);
    out.set(d, parseTree(body, oidBytes));
  }
  return out;
}

const depth = (d: string) => (d === "" ? 0 : d.split("/").length);

/** A loose tree object's body, or null if it is not loose here (or not a tree). */
function readLooseTree(objects: string, oid: string): Buffer | null {
  let raw: Buffer;
  try {
    raw = inflateSync(readFileSync(join(objects, oid.slice(0, 2), oid.slice(2))));
  } catch {
    return null; // not loose (packed, or in an alternate), or unreadable: git will say
  }
  const nul = raw.indexOf(0);
  const m = /^tree (\d+)$/.exec(raw.subarray(0, Math.max(nul, 0)).toString("latin1"));
  if (!m || Number(m[1]) !== raw.length - nul - 1) return null;
  return raw.subarray(nul + 1);
}

async function catFileTrees(
  ctx: Context,
  root: string,
  dirs: readonly string[],
  oidBytes: number,
  timeoutMs: () => number | undefined,
): Promise<Map<string, Map<string, TreeEntry>>> {
  const r = await ctx.git(["cat-file", "--batch"], { input: dirs.map((d) => (d === "" ? root : `${root}:${d}`)).join("\n") + "\n", timeoutMs: timeoutMs() });
  const trees = new Map<string, Map<string, TreeEntry>>();
  let pos = 0;
  const buf = r.stdout;
  for (const d of dirs) {
    const nl = buf.indexOf(10, pos);
    const header = buf.subarray(pos, nl).toString("utf8");
    pos = nl + 1;
    const m = /^\S+ (\S+) (\d+)$/.exec(header);
    if (!m) {
      trees.set(d, new Map()); // "missing": a directory the previous tree did not have
      continue;
    }
    const size = Number(m[2]);
    trees.set(d, m[1] === "tree" ? parseTree(buf.subarray(pos, pos + size), oidBytes) : new Map());
    pos += size + 1;
  }
  return trees;
}
