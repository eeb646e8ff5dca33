import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { guardStore } from "./store-guard.js";

export interface Discovered {
  /** The work tree's top level (real path). */
  root: string;
  /** This work tree's git dir (real path). */
  gitDir: string;
  /** The git dir shared by all worktrees (real path). */
  commonDir: string;
  objectFormat: "sha1" | "sha256";
}

/**
 * Finds the repository of `start` by reading `.git` the way git does,
 * without spawning it: every command and every hook pays for this. Returns
 * null when no `.git` is found up to the file-system root, and "unusual"
 * for layouts only git should judge (inside a git dir, core.worktree, a bare
 * repository, a dangling gitdir pointer).
 */
export function discoverRepo(start: string): Discovered | null | "unusual" {
  const real = realpathSync(start);
  if (real.split(sep).includes(".git")) return "unusual";
  for (let dir = real; ; dir = dirname(dir)) {
    const dotgit = join(dir, ".git");
    let st;
    try {
      st = statSync(dotgit);
    } catch {
      st = null;
    }
    if (st) {
      let gitDir = dotgit;
      if (!st.isDirectory()) {
        const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotgit, "utf8"));
        if (!m) return "unusual";
        gitDir = resolve(dir, m[1]!);
      }
      if (!existsSync(join(gitDir, "HEAD"))) return "unusual";
      const commondirFile = join(gitDir, "commondir");
      const commonDir = existsSync(commondirFile) ? resolve(gitDir, readFileSync(commondirFile, "utf8").trim()) : gitDir;
      let config: string;
      try {
        config = readFileSync(join(commonDir, "config"), "utf8");
      } catch {
        return "unusual";
      }
      if (/^\s*(worktree\s*=|bare\s*=\s*true)/im.test(config)) return "unusual";
      return {
        root: dir,
        gitDir: realpathSync(gitDir),
        commonDir: realpathSync(commonDir),
        objectFormat: /^\s*objectformat\s*=\s*sha256\s*$/im.test(config) ? "sha256" : "sha1",
      };
    }
    if (dirname(dir) === dir) return null;
  }
}

/**
 * A folder without git: the nearest ancestor that already holds a private
 * store, else the folder itself. Any store counts, also one that only file
 * captures have written so far (no git dir yet): one session must never be
 * split across two stores, nor one store captured by another.
 */
export function privateRootOf(start: string, storeName: string): string {
  const real = realpathSync(start);
  for (let dir = real; ; dir = dirname(dir)) {
    try {
      if (statSync(join(dir, storeName)).isDirectory()) return dir;
    } catch {
      /* none here */
    }
    if (dirname(dir) === dir) return real;
  }
}

/**
 * The real path of `p` even when its tail does not exist yet (a store not
 * created yet): the nearest existing ancestor is resolved, the rest kept.
 * Without this, a store named through a symlink into the work tree would not
 * be recognised as inside it, and could be captured or restored.
 */
export function realpathLoose(p: string): string {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(realpathLoose(parent), abs.slice(parent.length + 1));
  }
}

export const STORE_DIR_NAME = "unwind";
export const PRIVATE_STORE_NAME = ".unwind";

/** `UNWIND_STORE`, resolved against `cwd` by real path; null when unset. */
export function envStore(cwd: string): string | null {
  return process.env.UNWIND_STORE ? realpathLoose(resolve(cwd, process.env.UNWIND_STORE)) : null;
}

/** Where unwind works, as far as the file system alone can tell. */
export type Place =
  | { mode: "git"; root: string; store: string; gitDir: string; commonDir: string; objectFormat: "sha1" | "sha256" }
  | { mode: "private"; root: string; store: string; objectFormat: "sha1" };

/**
 * Root and store for `start` (SPEC section 1), the one rule shared by the
 * CLI and the hook: a git work tree's store is `<git-common-dir>/unwind`; a
 * folder without git keeps `<root>/.unwind`; UNWIND_STORE overrides.
 * "unusual" when only `git rev-parse` can judge the layout. The store found
 * is checked before anyone uses it (`guardStore`).
 */
export function findPlace(start: string, cwd: string): Place | "unusual" {
  const found = discoverRepo(start);
  if (found === "unusual") return found;
  const env = envStore(cwd);
  let place: Place;
  if (found === null) {
    const root = privateRootOf(start, PRIVATE_STORE_NAME);
    place = { mode: "private", root, store: env ?? join(root, PRIVATE_STORE_NAME), objectFormat: "sha1" };
  } else place = { mode: "git", ...found, store: env ?? join(found.commonDir, STORE_DIR_NAME) };
  guardStore(place.store);
  return place;
}
