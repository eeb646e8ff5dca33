import { lstatSync, readlinkSync } from "node:fs";
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
    const mode = raw.subarray(pos, sp).toString("latin1");
    const name = raw.subarray(sp + 1, nul).toString("utf8");
    out.set(name, { mode, oid: raw.subarray(nul + 1, nul + 1 + oidBytes).toString("hex") });
    pos = nul + 1 + oidBytes;
  }
  return out;
}

/** git's tree order: bytewise, with a tree's name compared as if it ended in "/". */
function treeKey(name: string, mode: string): Buffer {
  return Buffer.from(mode === "40000" ? `${name}/` : name, "utf8");
}

export function serializeTree(entries: ReadonlyMap<string, TreeEntry>): Buffer {
  const sorted = [...entries.entries()].sort(([a, ea], [b, eb]) => Buffer.compare(treeKey(a, ea.mode), treeKey(b, eb.mode)));
  return Buffer.concat(sorted.map(([name, e]) => Buffer.concat([Buffer.from(`${e.mode} ${name}\0`, "utf8"), Buffer.from(e.oid, "hex")])));
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
 * filters; symlinks are hashed from their target), brings the private index
 * up to date without re-hashing (`update-index --index-info`), reads the
 * affected trees of `prevTree` in one `cat-file --batch`, and writes the new
 * trees as loose objects.
 */
export async function incrementalTree(
  ctx: Context,
  env: Record<string, string>,
  prevTree: string,
  add: readonly string[],
  remove: readonly string[],
  timeoutMs: () => number | undefined,
): Promise<string> {
  const changes = new Map<string, TreeEntry | null>();
  for (const p of remove) changes.set(p, null);
  const files: string[] = [];
  for (const p of add) {
    const st = lstatSync(join(ctx.root, p));
    if (st.isSymbolicLink()) {
      changes.set(p, { mode: "120000", oid: writeLooseObject(join(ctx.commonDir, "objects"), "blob", Buffer.from(readlinkSync(join(ctx.root, p))), ctx.objectFormat) });
    } else {
      files.push(p);
      changes.set(p, { mode: st.mode & 0o111 ? "100755" : "100644", oid: "" });
    }
  }
  if (files.length > 0) {
    const r = await ctx.git(["hash-object", "-w", "--stdin-paths"], { input: files.join("\n") + "\n", timeoutMs: timeoutMs() });
    const oids = r.stdout.toString("utf8").trim().split("\n");
    if (oids.length !== files.length) throw new Error("git hash-object gave fewer ids than paths");
    files.forEach((p, i) => (changes.get(p)!.oid = oids[i]!));
  }
  const zero = "0".repeat(ctx.objectFormat === "sha256" ? 64 : 40);
  const info = [...remove.map((p) => `0 ${zero}\t${p}`), ...add.map((p) => `${changes.get(p)!.mode} ${changes.get(p)!.oid}\t${p}`)];
  await ctx.git([...INDEX_CONFIG, "update-index", "--add", "--replace", "-z", "--index-info"], {
    env,
    input: info.join("\0") + "\0",
    optionalLocks: true,
    timeoutMs: timeoutMs(),
  });

  // Every tree on the way to a changed path, read in one process.
  const dirs = new Set<string>([""]);
  for (const p of changes.keys()) for (let d = dirOf(p); d !== ""; d = dirOf(d)) dirs.add(d);
  const wanted = [...dirs];
  const r = await ctx.git(["cat-file", "--batch"], { input: wanted.map((d) => (d === "" ? prevTree : `${prevTree}:${d}`)).join("\n") + "\n", timeoutMs: timeoutMs() });
  const trees = new Map<string, Map<string, TreeEntry>>();
  const oidBytes = ctx.objectFormat === "sha256" ? 32 : 20;
  let pos = 0;
  const buf = r.stdout;
  for (const d of wanted) {
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
  const objects = join(ctx.commonDir, "objects");
  return editTree(changes, (d) => trees.get(d) ?? new Map(), (body) => writeLooseObject(objects, "tree", body, ctx.objectFormat));
}
