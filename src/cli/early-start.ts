import { existsSync } from "node:fs";
import { anythingPending } from "../apply/intent.js";
import { startSnapshot, type SnapshotStart } from "../capture/snapshot.js";
import { checkName } from "../domain/paths.js";
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
    if (!ctx || !existsSync(ctx.store) || anythingPending(ctx.store)) return null;
    return startSnapshot(ctx);
  } catch {
    return null; // nothing was started: the normal path runs it and reports what failed
  }
}

/**
 * With a watcher, a snapshot needs no `git status` to wait for, and loading
 * the command line would be most of what is left: a plain `unwind [--json]
 * snapshot` (no options, a valid or absent UNWIND_TASK, no terminal, so no
 * colour or progress line to decide) is finished by src/cli/early-finish.ts
 * (a bundle of its own: the snapshot code it needs would make this one,
 * loaded by every snapshot, three times larger), printing exactly what the
 * command line prints. Anything else goes the normal way.
 */
export function finishesEarly(argv: readonly string[], start: SnapshotStart | null): boolean {
  if (!start?.watch) return false;
  const plain = argv.length === 1 || (argv.length === 2 && argv.includes("--json"));
  const task = process.env.UNWIND_TASK;
  return plain && (task === undefined || checkName(task) === null) && !process.stdout.isTTY && !process.stderr.isTTY;
}
