import { startedOn, type StartedTree } from "../capture/snapshot.js";
import { GitError } from "../git/git.js";
import { usualContext, type Context } from "../repo/context.js";
import type { EarlyStart } from "./early-start.js";

/** A snapshot whose `git status` `bin/unwind` started (src/cli/early-start.ts), for the snapshot command to finish. */
export interface EarlySnapshot {
  ctx: Context;
  started: StartedTree;
  /** Releases the store lock taken for it. */
  release(): void;
}

let handed: EarlyStart | null = null;

/** Keeps what bin/unwind started, for `takeEarlySnapshot`. */
export function adoptEarly(early: EarlyStart | null): void {
  handed = early;
}

/**
 * The snapshot started early, under this bundle's own context, for the
 * snapshot command to finish (and release); null if none, or if it was
 * started for another store or index than this bundle resolves.
 */
export async function takeEarlySnapshot(): Promise<EarlySnapshot | null> {
  const early = handed;
  handed = null;
  if (!early) return null;
  const ctx = usualContext(process.cwd());
  if (!ctx || ctx.store !== early.store || ctx.indexFile !== early.indexFile) {
    await settle(early);
    return null;
  }
  // The early bundle's GitError is another class: its failures become ours, so they are reported the same way.
  const status = early.status.catch((e: unknown) => {
    const g = e as Partial<Pick<GitError, "args" | "gitCode" | "stderr">> | null;
    throw g?.args && g.gitCode !== undefined ? new GitError(g.args, g.gitCode, g.stderr ?? "") : e;
  });
  status.catch(() => undefined); // awaited by the snapshot; a command that fails first must not leave an unhandled rejection
  return { ctx, started: startedOn(ctx, { indexTree: early.indexTree, status }), release: early.release };
}

/**
 * Ends an early start nobody took (the command line had an error, say):
 * `git status` may write the private index, so the lock is held until it is done.
 */
export async function abandonEarlySnapshot(): Promise<void> {
  const early = handed;
  handed = null;
  if (early) await settle(early);
}

async function settle(early: EarlyStart): Promise<void> {
  await early.status.catch(() => undefined);
  early.release();
}
