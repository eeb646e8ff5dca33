import { lstatSync, readFileSync, readlinkSync, type Stats } from "node:fs";
import { fsPath } from "../domain/path-bytes.js";
import { join } from "node:path";
import { blobOid, lineSafe } from "../git/objects.js";
import type { Context } from "../repo/context.js";
import { sha256 } from "../domain/hash.js";
import type { GitOid, Observed, RepoPath, State } from "../domain/types.js";

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(fsPath(p));
  } catch {
    return null;
  }
}

/** git's mode for a regular file: executable when the owner may execute it (git ignores group and other bits). */
export function modeOf(st: Stats): string {
  return st.mode & 0o100 ? "100755" : "100644";
}

/** Git's binary heuristic: a NUL in the first 8000 bytes. */
export function looksText(data: Buffer): boolean {
  return !data.subarray(0, 8000).includes(0);
}

/**
 * What is on disk at one path, without following symlinks anywhere: a
 * symlinked parent makes the path `blocked`; a missing or non-directory
 * parent makes it absent. Content is hashed so the pure planner can compare
 * against records. `dirCache` spares re-reading shared parents.
 */
export function observeOne(root: string, rel: string, format: "sha1" | "sha256", dirCache = new Map<string, Observed | null>()): Observed {
  const parts = rel.split("/");
  let acc = "";
  for (let i = 0; i < parts.length - 1; i++) {
    acc = acc ? `${acc}/${parts[i]}` : parts[i]!;
    let problem = dirCache.get(acc);
    if (problem === undefined) {
      const st = lstatOrNull(join(root, acc));
      problem = st?.isSymbolicLink() ? { kind: "blocked", at: acc } : st?.isDirectory() ? null : { kind: "absent" };
      dirCache.set(acc, problem);
    }
    if (problem) return problem;
  }
  const abs = join(root, rel);
  const st = lstatOrNull(abs);
  if (!st) return { kind: "absent" };
  if (st.isSymbolicLink()) {
    const target = readlinkSync(fsPath(abs), "buffer"); // bytes: a target need not be UTF-8
    return { kind: "symlink", target, sha256: sha256(target), oid: blobOid(target, format) };
  }
  if (st.isFile()) {
    const data = readFileSync(fsPath(abs));
    return { kind: "file", mode: modeOf(st), size: st.size, nlink: st.nlink, sha256: sha256(data), text: looksText(data) };
  }
  return st.isDirectory() ? { kind: "dir" } : { kind: "other" };
}

/**
 * `observeOne` for many paths, plus git's own oid of each file where asked:
 * git applies the clean filters (autocrlf, attributes) it applied when
 * snapshotting, so its oids compare with snapshot trees where raw-byte
 * hashes would not.
 */
export async function observe(ctx: Context, paths: readonly RepoPath[], opts: { oids?: boolean } = {}): Promise<Map<RepoPath, Observed>> {
  const out = new Map<RepoPath, Observed>();
  const dirCache = new Map<string, Observed | null>();
  const viaGit: RepoPath[] = [];
  for (const rel of paths) {
    const o = observeOne(ctx.root, rel, ctx.objectFormat, dirCache);
    out.set(rel, o);
    if (opts.oids && o.kind === "file") {
      if (lineSafe(rel))
        viaGit.push(rel); // others get the raw-bytes id: hash-object reads lines
      else o.oid = blobOid(readFileSync(fsPath(join(ctx.root, rel))), ctx.objectFormat);
    }
  }
  if (viaGit.length > 0) {
    const r = await ctx.git(["hash-object", "--stdin-paths"], { input: viaGit.join("\n") + "\n" });
    const oids = r.stdout.toString("utf8").trim().split("\n");
    viaGit.forEach((p, i) => {
      const o = out.get(p);
      if (o && o.kind === "file" && oids[i]) o.oid = oids[i] as GitOid;
    });
  }
  return out;
}

/** The recorded form of what was observed (for receipts and restore change sets). */
export function stateOf(o: Observed): State | null {
  switch (o.kind) {
    case "absent":
      return null;
    case "file":
      return { kind: "file", mode: o.mode, size: o.size, sha256: o.sha256, ...(o.oid ? { oid: o.oid } : {}) };
    case "symlink":
      return { kind: "symlink", mode: "120000", size: o.target.length, sha256: o.sha256, ...(o.oid ? { oid: o.oid } : {}) };
    default:
      return null;
  }
}

/** Whether the disk still holds exactly what the planner saw. */
export function sameObserved(a: Observed, b: Observed): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "file" && b.kind === "file") return a.sha256 === b.sha256 && a.mode === b.mode && a.nlink === b.nlink;
  if (a.kind === "symlink" && b.kind === "symlink") return a.target.equals(b.target);
  if (a.kind === "blocked" && b.kind === "blocked") return a.at === b.at;
  return true;
}

/** The recorded form of what a path holds now, with its raw-bytes git oid, nothing stored. */
export function stateNow(root: string, rel: string, format: "sha1" | "sha256"): State | null {
  const o = observeOne(root, rel, format);
  const s = stateOf(o);
  if (s && o.kind === "file") s.oid = blobOid(readFileSync(fsPath(join(root, rel))), format);
  return s;
}
