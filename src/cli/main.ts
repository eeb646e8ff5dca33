/**
 * Entry point of the CLI bundle (dist/unwind.cjs). `bin/unwind` routes
 * `unwind hook` to the hook bundle before this file is even loaded; this
 * routes it there too, so `node dist/unwind.cjs hook ...` behaves the same.
 */
import { settleSnapshot, type SnapshotStart } from "../capture/snapshot.js";
import { buildProgram, runCli } from "./program.js";
import { manPage } from "./describe.js";
import { tightenHeap } from "../sys/heap.js";

/** Commands that may plan, write or read back many thousands of paths (src/sys/heap.ts). */
const HEAVY = new Set(["undo", "restore", "redo", "snapshot", "changes", "verify", "gc"]);

/** `start`: the first phase of `unwind snapshot`, which bin/unwind begins before this bundle loads (src/cli/early-start.ts). */
export function main(argv: string[], start: SnapshotStart | null = null): void {
  if (argv[0] === "hook") {
    const { runHook } = require("./hook.cjs") as typeof import("../hook/entry.js");
    void runHook(argv.slice(1)).then((code) => {
      process.exitCode = code;
    });
    return;
  }
  // Loading node:v8 costs ~4 ms: only commands that may hold thousands of paths pay it.
  if (argv.some((a) => HEAVY.has(a))) tightenHeap();
  void runCli(argv, { start })
    // A start the command did not finish (a usage error, say) is settled: its git status may still write the index.
    .then(async (code) => {
      if (start) await settleSnapshot(start);
      return code;
    })
    .then((code) => {
      process.exitCode = code;
    });
}

/** The man page unwind(1), from the command table: build.mjs writes it to dist/unwind.1 from the bundle it has just built. */
export function manPageText(): string {
  return manPage(buildProgram(() => {}));
}
