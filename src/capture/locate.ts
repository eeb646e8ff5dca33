import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

export interface Located {
  root: string;
  store: string;
  mode: "git" | "private";
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
        return { root: dir, store: env ?? join(common, "unwind"), mode: "git" };
      }
    }
    if (existsSync(join(dir, ".unwind", "git"))) return { root: dir, store: env ?? join(dir, ".unwind"), mode: "private" };
    if (dirname(dir) === dir) break;
  }
  return { root: start, store: env ?? join(start, ".unwind"), mode: "private" };
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
