import type { Snapshot } from "../capture/snapshot.js";

// Apart from the operations so the early finish of `unwind snapshot` (src/cli/early-start.ts) prints the same document without loading them.

/** A snapshot as the library and `--json` give it: every optional label null when absent, no internal fields. */
export interface SnapshotInfo {
  id: string;
  at: string;
  root: string;
  parent: string | null;
  task: string | null;
  session: string | null;
  call: string | null;
  label: string | null;
  commit: string;
  tree: string;
  /** Files left out of the tree for being over the size cap. */
  toolarge: string[];
}

export function snapshotInfo(s: Snapshot): SnapshotInfo {
  return {
    id: s.id,
    at: s.at,
    root: s.root,
    parent: s.parent,
    task: s.task ?? null,
    session: s.session ?? null,
    call: s.call ?? null,
    label: s.label ?? null,
    commit: s.commit,
    tree: s.tree,
    toolarge: s.toolarge,
  };
}
