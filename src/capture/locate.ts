import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

export interface Located {
  root: string;
  store: string;
  mode: "git" | "private";
  /** The repository's hash: states carry git oids so every report names content the same way. */
  objectFormat: "sha1" | "sha256";
}

/**
 * Finds root and store the way `resolveContext` does, without spawning git:
 * the hook for a file edit must cost little more than Node's own start-up.
 * Walks up from `cwd` to the first `.git` (a directory, or a file pointing at
 * a linked worktree's git dir) or `.unwind` store; else `cwd` is the root.
 */
export function locateFast(cwd: string): Located {
  const start = realpathSync(cwd);
  const env = process.env.UNWIND_STORE ? resolve(start, process.env.UNWIND_STORE) : null;
  for (let dir = start; ; dir = dirname(dir)) {
    const dotgit = join(dir, ".git");
    if (existsSync(dotgit)) {
      const gitDir = statSync(dotgit).isDirectory() ? dotgit : pointedGitDir(dotgit, dir);
      if (gitDir) {
        const common = commonDirOf(gitDir);
        return { root: dir, store: env ?? join(common, "unwind"), mode: "git", objectFormat: formatOf(common) };
      }
    }
    if (existsSync(join(dir, ".unwind", "git"))) return { root: dir, store: env ?? join(dir, ".unwind"), mode: "private", objectFormat: "sha1" };
    if (dirname(dir) === dir) break;
  }
  return { root: start, store: env ?? join(start, ".unwind"), mode: "private", objectFormat: "sha1" };
}

function pointedGitDir(dotgitFile: string, dir: string): string | null {
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotgitFile, "utf8"));
  return m ? resolve(dir, m[1]!) : null;
}

function commonDirOf(gitDir: string): string {
  const f = join(gitDir, "commondir");
  if (!existsSync(f)) return gitDir;
  return resolve(gitDir, readFileSync(f, "utf8").trim());
}

function formatOf(commonDir: string): "sha1" | "sha256" {
  try {
    return /^\s*objectformat\s*=\s*sha256\s*$/im.test(readFileSync(join(commonDir, "config"), "utf8")) ? "sha256" : "sha1";
  } catch {
    return "sha1";
  }
}
