import { existsSync } from "node:fs";
import { pendingIntents } from "../apply/intent.js";
import { startStatus } from "../capture/private-index.js";
import type { GitResult } from "../git/git.js";
import { storeReady, usualContext } from "../repo/context.js";
import { tryLock } from "../store/lock.js";

/**
 * `unwind snapshot` is the command orchestrators run most, and two thirds of
 * its time at 100k files is one `git status`, which depends on none of its
 * options. So `bin/unwind` starts it from this small bundle (dist/early.cjs)
 * before the CLI bundle is even loaded: ~25 ms sooner than after option
 * parsing (docs/design.md). Only in the plain case: no `--root`, no help, a
 * store and private index that exist, a store that is free and has no
 * interrupted apply to finish. Anything else goes the normal way, which
 * waits, creates, recovers and reports.
 *
 * What it hands over is plain data and functions: the CLI bundle has its
 * own copies of every module (src/cli/early.ts adopts it).
 */
export interface EarlyStart {
  /** The store and private index it was started for, checked against the CLI's own context. */
  store: string;
  indexFile: string;
  indexTree: string | null;
  status: Promise<GitResult>;
  /** Releases the store lock taken for it. */
  release(): void;
}

/** Synchronous up to spawning `git status`; null where the normal path is to take the snapshot. */
export function startEarly(argv: readonly string[]): EarlyStart | null {
  const at = argv.findIndex((a) => !a.startsWith("-"));
  if (argv[at] !== "snapshot" || argv.slice(0, at).some((a) => a !== "--json")) return null; // `unwind [--json] snapshot …`
  if (argv.some((a) => a === "--root" || a.startsWith("--root=") || a === "-h" || a === "--help")) return null;
  let release: (() => void) | null = null;
  try {
    const ctx = usualContext(process.cwd());
    if (!ctx || !storeReady(ctx) || !existsSync(ctx.indexFile) || pendingIntents(ctx.store).length > 0) return null;
    const lock = tryLock(ctx.store, "snapshot");
    if (!("release" in lock)) return null; // busy: the normal path waits for it
    release = lock.release;
    const { indexTree, status } = startStatus(ctx);
    return { store: ctx.store, indexFile: ctx.indexFile, indexTree, status, release };
  } catch {
    release?.(); // nothing was started: the normal path runs it and reports what failed
    return null;
  }
}
