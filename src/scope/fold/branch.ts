import { sortByPath } from "../../domain/paths.js";
import { changeKind, sameState } from "../../domain/states.js";
import type { ChangeEntry, Interleaved, RepoPath, State } from "../../domain/types.js";

/**
 * A branch task's own work (SPEC section 6), as a pure fold over the
 * branch's history: the commits on its first-parent line since it forked,
 * each either the task's own (its commits, and merges of anything but the
 * integration branch) or the integration branch's (sync merges, and
 * cherry-picks of commits it already had), then the worktree's uncommitted
 * state, which is the task's. For each path the task changed: from the
 * state before its first own change to the state at the end. A change the
 * integration branch made to the path after that is between the task's own
 * writes (the end state holds it too): the path is interleaved.
 */
export interface BranchStep {
  /** The commit (or "worktree") whose diff this is. */
  id: string;
  own: boolean;
  entries: readonly { path: RepoPath; pre: State | null; post: State | null }[];
}

export function branchEntries(steps: readonly BranchStep[], by: string[]): { entries: ChangeEntry[]; interleaved: Map<RepoPath, Interleaved> } {
  const first = new Map<RepoPath, State | null>();
  const last = new Map<RepoPath, State | null>();
  const interleaved = new Map<RepoPath, Interleaved>();
  for (const step of steps) {
    for (const e of step.entries) {
      if (step.own && !first.has(e.path)) first.set(e.path, e.pre);
      if (!step.own && first.has(e.path) && !interleaved.has(e.path)) interleaved.set(e.path, { by: "the integration branch", at: step.id.slice(0, 12) });
      last.set(e.path, e.post);
    }
  }
  const entries: ChangeEntry[] = [];
  for (const [path, pre] of first) {
    const post = last.get(path) ?? null;
    if (sameState(pre, post) === true) {
      interleaved.delete(path);
      continue;
    }
    entries.push({ path, change: changeKind(pre, post), pre, post, by });
  }
  for (const p of [...interleaved.keys()]) if (!first.has(p)) interleaved.delete(p);
  return { entries: sortByPath(entries), interleaved };
}
