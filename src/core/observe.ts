import { createHash } from "node:crypto";
import { lstatSync, readFileSync, readlinkSync, type Stats } from "node:fs";
import { join } from "node:path";
import type { Context } from "../store/context.js";
import { sha256 } from "../store/cas.js";
import type { GitOid, Observed, RepoPath, State } from "./types.js";

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

export function modeOf(st: Stats): string {
  return st.mode & 0o111 ? "100755" : "100644";
}

/** Git's own blob id of raw bytes (what `git hash-object --no-filters` prints). */
export function blobOid(data: Buffer | string, format: "sha1" | "sha256"): GitOid {
  const buf = typeof data === "string" ? Buffer.from(data) : data;
  return createHash(format).update(`blob ${buf.length}\0`).update(buf).digest("hex") as GitOid;
}

/** Git's binary heuristic: a NUL in the first 8000 bytes. */
export function looksText(data: Buffer): boolean {
  return !data.subarray(0, 8000).includes(0);
}

/**
 * Reads what is on disk at each path, relative to the root, without
 * following symlinks anywhere: a symlinked parent makes the path `blocked`.
 * Content is hashed here so the pure planner can compare against records.
 */
export async function observe(ctx: Context, paths: readonly RepoPath[], opts: { oids?: boolean } = {}): Promise<Map<RepoPath, Observed>> {
  const out = new Map<RepoPath, Observed>();
  const dirCache = new Map<string, Observed | null>();
  const needGitHash: RepoPath[] = [];

  const parentProblem = (rel: string): Observed | null => {
    const parts = rel.split("/");
    let acc = "";
    for (let i = 0; i < parts.length - 1; i++) {
      acc = acc ? `${acc}/${parts[i]}` : parts[i]!;
      const cached = dirCache.get(acc);
      if (cached !== undefined) {
        if (cached) return cached;
        continue;
      }
      const st = lstatOrNull(join(ctx.root, acc));
      const problem: Observed | null = st?.isSymbolicLink() ? { kind: "blocked", why: "symlink", at: acc } : null;
      dirCache.set(acc, problem);
      if (problem) return problem;
      // A missing or non-directory parent means the path itself is absent.
      if (!st || !st.isDirectory()) return null;
    }
    return null;
  };

  for (const rel of paths) {
    const blocked = parentProblem(rel);
    if (blocked) {
      out.set(rel, blocked);
      continue;
    }
    const abs = join(ctx.root, rel);
    const st = lstatOrNull(abs);
    if (!st) {
      out.set(rel, { kind: "absent" });
    } else if (st.isSymbolicLink()) {
      const target = readlinkSync(abs);
      out.set(rel, { kind: "symlink", target, sha256: sha256(target), oid: blobOid(target, ctx.objectFormat) });
    } else if (st.isFile()) {
      const data = readFileSync(abs);
      out.set(rel, {
        kind: "file",
        mode: modeOf(st),
        size: st.size,
        nlink: st.nlink,
        sha256: sha256(data),
        text: looksText(data),
      });
      if (opts.oids) {
        // hash-object --stdin-paths is line-based; a name with a newline gets the raw-bytes id.
        if (rel.includes("\n")) (out.get(rel) as { oid?: GitOid }).oid = blobOid(data, ctx.objectFormat);
        else needGitHash.push(rel);
      }
    } else if (st.isDirectory()) {
      out.set(rel, { kind: "dir" });
    } else {
      out.set(rel, { kind: "other" });
    }
  }

  if (needGitHash.length > 0) {
    // git applies the same clean filters (autocrlf, attributes) it applied when snapshotting,
    // so its oids compare with snapshot trees where raw-byte hashes would not.
    const r = await ctx.git(["hash-object", "--stdin-paths"], { input: needGitHash.join("\n") + "\n" });
    const oids = r.stdout.toString("utf8").trim().split("\n");
    needGitHash.forEach((p, i) => {
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
      return { kind: "symlink", mode: "120000", size: Buffer.byteLength(o.target), sha256: o.sha256, ...(o.oid ? { oid: o.oid } : {}) };
    default:
      return null;
  }
}

/** Whether the disk still holds exactly what the planner saw. */
export function sameObserved(a: Observed, b: Observed): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "file" && b.kind === "file") return a.sha256 === b.sha256 && a.mode === b.mode && a.nlink === b.nlink;
  if (a.kind === "symlink" && b.kind === "symlink") return a.target === b.target;
  if (a.kind === "blocked" && b.kind === "blocked") return a.at === b.at;
  return true;
}
