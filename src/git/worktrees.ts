import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { GitOptions, GitResult } from "./git.js";
import { commitBody, writeLooseObject } from "./objects.js";

/** The repository as these functions need it: its shared git dir, and git run from the user's work tree. */
interface Repo {
  readonly commonDir: string;
  readonly objectFormat: "sha1" | "sha256";
  git(args: readonly string[], opts?: Omit<GitOptions, "cwd">): Promise<GitResult>;
}

/**
 * Throwaway linked worktrees (the revert check's, SPEC section 10). git
 * keeps a worktree's own HEAD and index in `<common dir>/worktrees/<name>/`,
 * so adding one never touches the user's index or HEAD; removing it takes
 * that directory away again.
 */

/** A parentless commit of `tree`, written as a loose object: what a detached worktree checks out. */
export function treeCommit(repo: Repo, tree: string, message: string): string {
  const body = commitBody(tree, "unwind <unwind@localhost>", Math.floor(Date.now() / 1000), `${message}\n`);
  return writeLooseObject(join(repo.commonDir, "objects"), "commit", body, repo.objectFormat);
}

/**
 * Adds a detached worktree at `dir` holding `commit`. Like every git call
 * of ours it runs with hooks off (src/git/git.ts): a post-checkout hook is
 * the user's code, and it must not run (or write anything) for a check that
 * is thrown away.
 */
export async function addWorktree(repo: Repo, dir: string, commit: string): Promise<void> {
  await repo.git(["worktree", "add", "--detach", "--quiet", dir, commit], { timeoutMs: 600_000 });
}

/**
 * Removes the worktree at `dir` and git's record of it. `remove --force`
 * deletes both; if it cannot (the directory went first), the files are
 * removed and `git worktree prune` drops the record it left, which only
 * touches worktrees whose directory is gone.
 */
export async function removeWorktree(repo: Repo, dir: string): Promise<void> {
  const r = await repo.git(["worktree", "remove", "--force", "--force", dir], { okCodes: [128, 1] });
  if (r.code !== 0 || existsSync(dir)) {
    rmSync(dir, { recursive: true, force: true });
    await repo.git(["worktree", "prune"]);
  }
}
