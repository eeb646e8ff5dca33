import { pendingIntents } from "../../core/apply/intent.js";
import { recoverPending } from "../../core/apply/recover.js";
import { checkRepoPath } from "../../core/paths.js";
import type { RepoPath } from "../../core/types.js";
import { usage } from "../../errors.js";
import { resolveContext, type Context } from "../../store/context.js";
import { withLock } from "../../store/lock.js";
import type { Globals } from "../program.js";

/**
 * Resolves root and store, and finishes any apply a crash interrupted before
 * the command does anything else (SPEC section 3: the next command recovers).
 */
export async function open(globals: Globals): Promise<Context> {
  const ctx = await resolveContext(globals.root);
  // Only an actual intent takes the lock: a dry run must not create even a lock file.
  if (pendingIntents(ctx.store).length > 0) {
    await withLock(ctx.store, "recover", async () => {
      const done = await recoverPending(ctx);
      for (const r of done) process.stderr.write(`unwind: finished interrupted ${r.kind} ${r.id}\n`);
    });
  }
  return ctx;
}

/** Paths from argv: repository-relative, validated once here. */
export function repoPaths(raw: readonly string[]): RepoPath[] {
  return raw.map((p) => {
    const clean = p.replace(/\/+$/, "");
    const problem = checkRepoPath(clean);
    if (problem) {
      const why = { absolute: "is absolute", dotdot: "leaves the root (..)", empty: "is empty", "git-dir": "is inside .git", nul: "holds a NUL byte" }[problem];
      throw usage(`path '${p}' ${why}`, "give paths relative to the repository root");
    }
    return clean as RepoPath;
  });
}
