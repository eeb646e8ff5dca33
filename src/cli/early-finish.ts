import { finishSnapshot, type SnapshotStart } from "../capture/snapshot.js";
import { snapshotInfo } from "../ops/snapshot-info.js";
import { usualContext } from "../repo/context.js";
import { paint, showPath } from "./render.js";
import { reportError } from "./report-error.js";

/**
 * dist/early-finish.cjs: a plain `unwind [--json] snapshot` begun by the
 * early start while a watcher runs, finished without the command line
 * (`finishesEarly` in src/cli/early-start.ts says when). Prints what the
 * snapshot command prints, and fails as it fails.
 */
export async function finishEarly(argv: readonly string[], start: SnapshotStart): Promise<number> {
  const json = argv.includes("--json");
  try {
    const ctx = usualContext(process.cwd());
    const task = process.env.UNWIND_TASK;
    const snap = ctx && (await finishSnapshot(ctx, start, task === undefined ? {} : { task }));
    if (!snap) throw new Error("the early snapshot was begun for another store");
    const info = snapshotInfo(snap);
    if (json) process.stdout.write(JSON.stringify(info, null, 2) + "\n");
    else {
      const lines = [`${paint(info.id, "bold")}  tree ${info.tree.slice(0, 8)}`];
      for (const p of info.toolarge) lines.push(`${paint("toolarge", "yellow")}  ${showPath(p)} (over the size cap: not captured)`);
      process.stdout.write(lines.join("\n") + "\n");
    }
    return 0;
  } catch (e) {
    return reportError(e, json);
  }
}
