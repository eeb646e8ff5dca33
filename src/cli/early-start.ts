import { existsSync } from "node:fs";
import { pendingIntents } from "../apply/intent.js";
import { startSnapshot, type SnapshotStart } from "../capture/snapshot.js";
import { usualContext } from "../repo/context.js";

/**
 * `unwind snapshot` is the command orchestrators run most, and two thirds of
 * its time at 100k files is one `git status`, which depends on none of its
 * options. So `bin/unwind` begins the snapshot's first phase from this small
 * bundle (dist/early.cjs) before the CLI bundle is even loaded: ~25 ms sooner
 * than after option parsing (docs/design.md). Only in the plain case: no
 * `--root`, no help, a store and private index that exist, a store that is
 * free and has no interrupted apply to finish. Anything else goes the normal
 * way, which waits, creates, recovers and reports. The CLI bundle finishes
 * it (`finishSnapshot`, through the snapshot operation) or settles it.
 */
export function startEarly(argv: readonly string[]): SnapshotStart | null {
  const at = argv.findIndex((a) => !a.startsWith("-"));
  if (argv[at] !== "snapshot" || argv.slice(0, at).some((a) => a !== "--json")) return null; // `unwind [--json] snapshot …`
  if (argv.some((a) => a === "--root" || a.startsWith("--root=") || a === "-h" || a === "--help")) return null;
  try {
    const ctx = usualContext(process.cwd());
    if (!ctx || !existsSync(ctx.store) || pendingIntents(ctx.store).length > 0) return null;
    return startSnapshot(ctx);
  } catch {
    return null; // nothing was started: the normal path runs it and reports what failed
  }
}
