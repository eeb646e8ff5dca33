import { sortByPath } from "../../domain/paths.js";
import { changeKind, sameState } from "../../domain/states.js";
import type { ChangeEntry, RepoPath, State } from "../../domain/types.js";

/** Whether `path` lies under one of `prefixes` ("" is the whole tree; a prefix takes itself and everything below it). */
export function underPrefix(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => p === "" || path === p || path.startsWith(p + "/"));
}

/** The prefixes asked for that no prefix of the baseline covers: paths there were never captured, so they have no baseline. */
export function uncovered(asked: readonly string[], captured: readonly string[]): string[] {
  return asked.filter((a) => !captured.some((c) => c === "" || a === c || a.startsWith(c + "/")));
}

/**
 * Baseline -> now, per governed path (SPEC section 10): `pre` is the state
 * first seen (null: absent from the baseline, so undo deletes it), `post`
 * what the path holds now. Paths equal to their baseline are not edits.
 * Pure: the caller reads the work tree.
 */
export function baselineEntries(baseline: Readonly<Record<string, State>>, now: ReadonlyMap<string, State>, prefixes: readonly string[], key: string): ChangeEntry[] {
  const out: ChangeEntry[] = [];
  const paths = new Set([...Object.keys(baseline), ...now.keys()]);
  for (const path of paths) {
    if (!underPrefix(path, prefixes)) continue;
    const pre = baseline[path] ?? null;
    const post = now.get(path) ?? null;
    if (sameState(pre, post) === true) continue;
    out.push({ path: path as RepoPath, change: changeKind(pre, post), pre, post, by: [`baseline:${key}`] });
  }
  return sortByPath(out);
}
