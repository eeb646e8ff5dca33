import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { usage } from "../../domain/errors.js";
import { rootGlob } from "../../domain/glob.js";
import { checkedRepoPath, insideRoot } from "../../domain/paths.js";
import type { RepoPath } from "../../domain/types.js";
import type { SnapshotStart } from "../../capture/snapshot.js";
import { open, type Unwind } from "../../ops/open.js";
import type { Globals } from "../globals.js";

/** Opens the record for a command, and says which interrupted applies were finished first. */
export async function openFor(globals: Globals, holding: SnapshotStart | null = null): Promise<Unwind> {
  const u = await open({ root: globals.root, holding });
  for (const r of u.recovered) process.stderr.write(`unwind: finished interrupted ${r.kind} ${r.id}\n`);
  return u;
}

/** The current directory with symlinks resolved, as the root is. */
export function realCwd(): string {
  try {
    return realpathSync(process.cwd());
  } catch {
    return process.cwd(); // gone: as typed
  }
}

/**
 * PATHs from argv, relative to the current directory as git's pathspecs
 * are, validated once here. A path naming the root itself means the whole
 * tree: the result is then empty (no limit).
 */
export function cwdPaths(root: string, raw: readonly string[]): RepoPath[] {
  const out: RepoPath[] = [];
  for (const p of raw) {
    if (p.includes("\0")) throw usage(`path '${p}' holds a NUL byte`);
    const rel = insideRoot(root, resolve(realCwd(), p));
    if (rel === null) throw usage(`path '${p}' is outside the work tree ${root}`, "give paths inside the work tree, relative to the current directory");
    if (rel === "") return [];
    out.push(checkedRepoPath(rel, p));
  }
  return out;
}

/** `--path` globs, relative to the current directory, in root-relative form, with how they were typed (for messages). */
export function cwdGlobs(root: string, globs: readonly string[] | undefined, flag = "--path"): { paths: string[]; pathNames: string[] } {
  const base = insideRoot(root, realCwd()) ?? "";
  const typed = globs ?? [];
  const paths = typed.map((g) => {
    const r = rootGlob(g, base);
    if (r === null) throw usage(`${flag} ${g} leaves the work tree`, "give globs relative to the current directory, inside the work tree");
    return r;
  });
  return { paths, pathNames: [...typed] };
}

/**
 * Directories as typed (relative to the current directory, as git's
 * pathspecs are) in root-relative form; the root itself is "" (the whole
 * tree). The operation checks what they name.
 */
export function cwdDirs(root: string, raw: readonly string[] | undefined, flag: string): string[] {
  return (raw ?? []).map((p) => {
    const rel = insideRoot(root, resolve(realCwd(), p));
    if (rel === null) throw usage(`${flag} ${p} is outside the work tree ${root}`, "give it inside the work tree, relative to the current directory");
    return rel;
  });
}
