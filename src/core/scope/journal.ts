import type { JournalRecord } from "../../store/journal.js";
import { sortByPath } from "../paths.js";
import type { ChangeEntry, ChangeKind, LaterWrite, RepoPath, State } from "../types.js";

/** One fact about one path: its state before or after one call of one session. */
export interface Observation {
  at: string;
  session: string;
  call: string;
  phase: "pre" | "post";
  path: RepoPath;
  state: State | null;
}

/** A tree-captured call's changes: filled in at the edge by diffing its pre and post trees. */
export interface TreeDiff {
  session: string;
  call: string;
  preAt: string;
  postAt: string;
  entries: { path: RepoPath; pre: State | null; post: State | null }[];
}

export interface Selection {
  since?: string;
  /** Keeps a path (from --path globs). */
  path?: (p: string) => boolean;
}

/** Pairs the tree records of each call: the diffs the edge must compute. */
export function treeCalls(records: readonly JournalRecord[]): { session: string; call: string; pre: JournalRecord & { kind: "tree" }; post: JournalRecord & { kind: "tree" } }[] {
  const pre = new Map<string, JournalRecord & { kind: "tree" }>();
  const out = [];
  for (const r of records) {
    if (r.kind !== "tree") continue;
    const key = `${r.session}\0${r.call}`;
    if (r.phase === "pre") pre.set(key, r);
    else if (pre.has(key)) {
      out.push({ session: r.session, call: r.call, pre: pre.get(key)!, post: r });
      pre.delete(key);
    }
  }
  return out;
}

/** Turns file records and tree diffs into per-path observations, in time order. */
export function observations(records: readonly JournalRecord[], diffs: readonly TreeDiff[]): Observation[] {
  const out: Observation[] = [];
  for (const r of records) {
    if (r.kind === "file") out.push({ at: r.at, session: r.session, call: r.call, phase: r.phase, path: r.path, state: r.state });
  }
  for (const d of diffs) {
    for (const e of d.entries) {
      out.push({ at: d.preAt, session: d.session, call: d.call, phase: "pre", path: e.path, state: e.pre });
      out.push({ at: d.postAt, session: d.session, call: d.call, phase: "post", path: e.path, state: e.post });
    }
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.phase === b.phase ? 0 : a.phase === "pre" ? -1 : 1));
}

export function sameState(a: State | null, b: State | null): boolean | "unknown" {
  if (a === null || b === null) return a === b;
  if (a.kind !== b.kind || (a.mode !== undefined && b.mode !== undefined && a.mode !== b.mode)) return false;
  if (a.sha256 && b.sha256) return a.sha256 === b.sha256;
  if (a.oid && b.oid) return a.oid === b.oid;
  return "unknown";
}

function kindOf(pre: State | null, post: State | null): ChangeKind {
  if (pre === null) return "added";
  if (post === null) return "deleted";
  if (pre.kind !== post.kind) return "typechange";
  if (sameState({ ...pre, mode: undefined }, { ...post, mode: undefined }) === true) return "mode";
  return "modified";
}

/** Recorded when a path was written but its state before was never captured (a pre hook failed). */
export const UNKNOWN_PRE: State = { kind: "file" };

/**
 * A scope's change set from the journal: for each path, the first `pre`
 * and the last `post` inside the window; paths the scope left as it found
 * them are dropped. Pure.
 */
export function journalEntries(obs: readonly Observation[], sel: Selection, inScope: (o: Observation) => boolean): ChangeEntry[] {
  const first = new Map<RepoPath, Observation>();
  const last = new Map<RepoPath, Observation>();
  const by = new Map<RepoPath, Set<string>>();
  for (const o of obs) {
    if (!inScope(o)) continue;
    if (sel.since && o.at < sel.since) continue;
    if (sel.path && !sel.path(o.path)) continue;
    if (o.phase === "pre" && !first.has(o.path) && !last.has(o.path)) first.set(o.path, o);
    if (o.phase === "post") last.set(o.path, o);
    if (!by.has(o.path)) by.set(o.path, new Set());
    by.get(o.path)!.add(o.session);
  }
  const entries: ChangeEntry[] = [];
  for (const [path, post] of last) {
    const pre = first.get(path);
    const preState = pre ? pre.state : UNKNOWN_PRE;
    if (pre && sameState(preState, post.state) === true) continue;
    entries.push({ path, change: kindOf(preState, post.state), pre: preState, post: post.state, by: [...by.get(path)!].sort() });
  }
  return sortByPath(entries);
}

/**
 * For each path of the change set, the latest write by another session
 * after this scope's own last write: undoing over it would destroy that work.
 */
export function laterWrites(obs: readonly Observation[], entries: readonly ChangeEntry[], inScope: (o: Observation) => boolean): Map<RepoPath, LaterWrite> {
  const ourLast = new Map<RepoPath, string>();
  for (const o of obs) if (inScope(o) && o.phase === "post") ourLast.set(o.path, o.at);
  const wanted = new Set(entries.map((e) => e.path));
  const out = new Map<RepoPath, LaterWrite>();
  for (const o of obs) {
    if (inScope(o) || o.phase !== "post" || !wanted.has(o.path)) continue;
    const mine = ourLast.get(o.path);
    if (mine !== undefined && o.at > mine) out.set(o.path, { by: o.session, at: o.at.replace(/\.\d+Z$/, "Z") });
  }
  return out;
}
