import type { SnapshotStart } from "../../capture/snapshot.js";
import { Exit, usage } from "../../domain/errors.js";
import type { SnapshotInfo } from "../../ops/snapshot.js";
import { taskName } from "../../scope/resolve.js";
import type { Globals } from "../globals.js";
import { shortIds } from "../../domain/ids.js";
import { more, paint, progress, showPath, table, when, type Output } from "../render.js";
import { openFor } from "./common.js";
import { idOrLast } from "../../domain/ids.js";

/** `start`: the first phase bin/unwind began before the command line loaded (src/cli/early-start.ts), or null. */
export async function snapshot(globals: Globals, opts: { task?: string; session?: string; label?: string }, start: SnapshotStart | null): Promise<Output> {
  const task = taskName(opts.task ?? process.env.UNWIND_TASK); // a usage error before the store is touched
  const u = await openFor(globals, start);
  const line = progress("snapshotting");
  let snap: SnapshotInfo;
  try {
    snap = await u.snapshot({ task, session: opts.session, label: opts.label }, { start });
  } finally {
    line.done();
  }
  const lines = [`${paint(snap.id, "bold")}  tree ${snap.tree.slice(0, 8)}`];
  for (const p of snap.toolarge) lines.push(`${paint("toolarge", "yellow")}  ${showPath(p)} (over the size cap: not captured)`);
  return { json: snap, human: lines.join("\n"), exit: Exit.ok };
}

export async function snapshots(globals: Globals, opts: { task?: string; session?: string; limit?: number; since?: string; all?: boolean }): Promise<Output> {
  const u = await openFor(globals);
  const { snapshots: list, total } = await u.snapshots(opts);
  const ids = shortIds(list.map((s) => s.id));
  const rows = list.map((s) => [ids.get(s.id)!, when(s.at), s.tree.slice(0, 8), describe(s)]);
  const human = list.length ? [table([["ID", "TAKEN", "TREE", "LABEL"], ...rows], [], { fit: [3] }), ...more(list.length, total, "snapshots")].join("\n") : "no snapshots";
  return { json: { snapshots: list, total }, human, exit: Exit.ok };
}

function describe(s: SnapshotInfo): string {
  return [s.label, s.task && `task=${s.task}`, s.session && `session=${s.session}`].filter(Boolean).join(" ");
}

export async function diff(globals: Globals, a: string | undefined, b: string | undefined, opts: { stat?: boolean; patch?: boolean; last?: boolean }): Promise<Output> {
  if (opts.stat && opts.patch) throw usage("--stat and --patch exclude each other");
  if (opts.last && a !== undefined) throw usage("with --last, give no snapshot ids", "--last diffs this worktree's newest snapshot against the work tree now");
  const from = opts.last ? { last: true as const } : idOrLast(a, false, "snapshot");
  const u = await openFor(globals);
  const d = await u.diff(from, b ?? null, { patch: opts.patch });
  let human: string;
  if (d.patch !== null) human = colorPatch(d.patch);
  else {
    human = d.files.length
      ? table(
          d.files.map((s) => [s.binary ? "bin" : `+${s.added}`, s.binary ? "" : `-${s.deleted}`, showPath(s.path)]),
          ["green", "red", null],
        ) + `\n${d.files.length} path(s) changed`
      : "no changes";
  }
  return { json: d, human, exit: Exit.ok };
}

function colorPatch(patch: string): string {
  return patch
    .split("\n")
    .map((l) => (/^(diff |index |--- |\+\+\+ )/.test(l) ? paint(l, "bold") : l.startsWith("@@") ? paint(l, "cyan") : l.startsWith("+") ? paint(l, "green") : l.startsWith("-") ? paint(l, "red") : l))
    .join("\n");
}
