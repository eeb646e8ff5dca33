import { startWorkTree, type StartedTree } from "../capture/snapshot.js";
import { pendingIntents } from "../core/apply/intent.js";
import { usualContext, type Context } from "../store/context.js";
import { tryLock } from "../store/lock.js";

/**
 * `unwind snapshot` is the command orchestrators run most, and two thirds of
 * its time at 100k files is one `git status`, which depends on none of its
 * options. So it starts here, before commander and the command modules
 * load: ~25 ms sooner (docs/design.md). Only in the plain case: no `--root`,
 * no help, a store that is free and has no interrupted apply to finish.
 * Anything else goes the normal way, which waits, recovers and reports.
 */
export interface EarlySnapshot {
  ctx: Context;
  started: StartedTree;
  /** Releases the store lock taken for it. */
  release(): void;
}

let pending: Promise<EarlySnapshot | null> | null = null;

/**
 * Synchronous up to spawning `git status` (in the usual case: a known
 * layout, a store that exists, an index already seeded), so that it runs
 * before the command line is parsed rather than after.
 */
export function startEarlySnapshot(argv: readonly string[]): void {
  const at = argv.findIndex((a) => !a.startsWith("-"));
  if (argv[at] !== "snapshot" || argv.slice(0, at).some((a) => a !== "--json")) return; // `unwind [--json] snapshot …`
  if (argv.some((a) => a === "--root" || a.startsWith("--root=") || a === "-h" || a === "--help")) return;
  try {
    const ctx = usualContext(process.cwd());
    if (!ctx || pendingIntents(ctx.store).length > 0) return;
    const lock = tryLock(ctx.store, "snapshot");
    if (!("release" in lock)) return; // busy: the normal path waits for it
    pending = startWorkTree(ctx, { scratch: false }).then(
      (started) => ({ ctx, started, release: lock.release }),
      () => {
        lock.release();
        return null; // the normal path runs it again and reports what failed
      },
    );
  } catch {
    pending = null;
  }
}

/** The snapshot started early, for the snapshot command to finish (and release); null if none. */
export async function takeEarlySnapshot(): Promise<EarlySnapshot | null> {
  const p = pending;
  pending = null;
  return p ? await p : null;
}

/**
 * Ends an early start nobody took (the command line had an error, say):
 * `git status` may write the private index, so the lock is held until it is done.
 */
export async function abandonEarlySnapshot(): Promise<void> {
  const early = await takeEarlySnapshot();
  if (!early) return;
  await early.started.status.catch(() => undefined);
  early.started.dispose();
  early.release();
}
