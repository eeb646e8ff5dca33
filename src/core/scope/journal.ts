import type { JournalRecord } from "../../store/journal.js";
import { sortByPath } from "../paths.js";
import { changeKind, sameState } from "../plan/equal.js";
import type { ChangeEntry, LaterWrite, RepoPath, State } from "../types.js";

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

type TreeRec = JournalRecord & { kind: "tree" };

/**
 * Pairs the tree records of each call: the diffs the edge must compute. A
 * post whose pre is missing (the pre capture failed or timed out) comes back
 * with `pre: null`; the edge diffs it from the previous snapshot of the work
 * tree instead, crediting the call with too much rather than too little.
 */
export function treeCalls(records: readonly JournalRecord[]): { session: string; call: string; pre: TreeRec | null; post: TreeRec }[] {
  const pre = new Map<string, TreeRec>();
  const out = [];
  for (const r of records) {
    if (r.kind !== "tree") continue;
    const key = `${r.session}\0${r.call}`;
    if (r.phase === "pre") pre.set(key, r);
    else {
      out.push({ session: r.session, call: r.call, pre: pre.get(key) ?? null, post: r });
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
    entries.push({ path, change: changeKind(preState, post.state), pre: preState, post: post.state, by: [...by.get(path)!].sort() });
  }
  return sortByPath(entries);
}

export interface Overlaps {
  /** Another session wrote the path after this scope's last write. */
  later: Map<RepoPath, LaterWrite>;
  /** Someone wrote the path between two of this scope's own writes. */
  interleaved: Map<RepoPath, { by: string | null; at: string }>;
}

const second = (at: string) => at.replace(/\.\d+Z$/, "Z");

/**
 * Other writers of the scope's paths. After the scope's last write: a
 * `later-write` when what is on disk differs. Between the scope's first and
 * last write: always a conflict, because the scope's last state holds their
 * work too. A writer between two of our calls shows as another session's
 * record, or as a gap (our next "before" differs from our last "after").
 */
export function overlaps(obs: readonly Observation[], entries: readonly ChangeEntry[], inScope: (o: Observation) => boolean, since?: string): Overlaps {
  const wanted = new Set(entries.map((e) => e.path));
  const ours = new Map<RepoPath, Observation[]>();
  for (const o of obs) {
    if (!wanted.has(o.path) || !inScope(o) || (since && o.at < since)) continue;
    if (!ours.has(o.path)) ours.set(o.path, []);
    ours.get(o.path)!.push(o);
  }
  const later = new Map<RepoPath, LaterWrite>();
  const interleaved = new Map<RepoPath, { by: string | null; at: string }>();
  for (const [path, mine] of ours) {
    const firstAt = mine[0]!.at;
    const lastPost = [...mine].reverse().find((o) => o.phase === "post");
    if (!lastPost) continue;
    for (const o of obs) {
      if (o.path !== path || inScope(o) || o.phase !== "post") continue;
      if (o.at > lastPost.at) later.set(path, { by: o.session, at: second(o.at) });
      else if (o.at > firstAt && !interleaved.has(path)) interleaved.set(path, { by: o.session, at: second(o.at) });
    }
    for (let i = 1; i < mine.length && !interleaved.has(path); i++) {
      const prev = mine[i - 1]!;
      const cur = mine[i]!;
      if (prev.phase === "post" && cur.phase === "pre" && sameState(prev.state, cur.state) === false) {
        interleaved.set(path, { by: null, at: second(cur.at) });
      }
    }
  }
  return { later, interleaved };
}
