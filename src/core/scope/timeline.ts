import { sortByPath } from "../paths.js";
import { changeKind, sameState } from "../plan/equal.js";
import type { CallRef, ChangeEntry, LaterWrite, RepoPath, State } from "../types.js";

/**
 * Attribution (SPEC section 2), as a pure fold over what the record proves.
 *
 * Every capture is a point in time at which the state of some paths is
 * known: a tree snapshot knows every visible path, a file capture knows its
 * own path. For one path, a change between two consecutive known points
 * happened somewhere in that interval, and only a call whose window was
 * open during it can have made it:
 * - the interval runs exactly from a file call's own pre to its own post
 *   capture of the path: that call (it is pinned);
 * - else every tree call whose window meets the interval, and every file
 *   call of that path whose window meets it: one of them is the writer,
 *   several share it (none of them can be proven alone);
 * - no call at all: an unknown writer (a person, a process nobody
 *   recorded), never charged to anyone.
 * No fs, no git, no clock: the edge gathers the points.
 */

/** One tool call's window: from its pre capture to its last post capture. */
export interface CallWindow {
  session: string;
  call: string;
  kind: "tree" | "file";
  /** File calls: the paths they captured (a file tool writes only its targets). */
  paths?: ReadonlySet<string>;
  start: string;
  /** The last post capture; OPEN while none has come. */
  end: string;
  /** Closed by something other than its own post (the session's next event, or a reading command). */
  unclosed: boolean;
}

/** Later than any ISO time: the end of a window that has not closed. */
export const OPEN = "~";

/** The state of one path known at one time. `call` is set for a file capture's own points. */
export interface Point {
  at: string;
  path: RepoPath;
  state: State | null;
  call?: { session: string; call: string; phase: "pre" | "post" };
}

/** A change of one path between two consecutive known points, and who may have made it. */
export interface ChangeEvent {
  path: RepoPath;
  from: Point;
  to: Point;
  candidates: CallWindow[];
}

/** What the record cannot tell: never recorded, so never equal to anything. */
export const NOT_CAPTURED: State = { kind: "unknown" };

function differ(a: State | null, b: State | null): boolean {
  if (a?.kind === "unknown" && b?.kind === "unknown") return false;
  return sameState(a, b) !== true;
}

const key = (c: { session: string; call: string }) => `${c.session}\0${c.call}`;

/**
 * Known points of paths from a sequence of tree snapshots (times in order)
 * and the diffs between consecutive ones: a path a diff shows is known at
 * every snapshot of the sequence (unchanged where no diff shows it). Paths
 * no diff shows tell nothing (invisible to snapshots, or never changed).
 */
export function snapshotPoints(times: readonly string[], diffs: readonly { index: number; entries: readonly { path: RepoPath; pre: State | null; post: State | null }[] }[]): Point[] {
  const byPath = new Map<RepoPath, { index: number; pre: State | null; post: State | null }[]>();
  for (const d of diffs) {
    for (const e of d.entries) {
      let list = byPath.get(e.path);
      if (!list) byPath.set(e.path, (list = []));
      list.push({ index: d.index, pre: e.pre, post: e.post });
    }
  }
  const out: Point[] = [];
  for (const [path, changes] of byPath) {
    changes.sort((a, b) => a.index - b.index);
    let c = 0;
    let state = changes[0]!.pre;
    for (let i = 0; i < times.length; i++) {
      // Diff `index` runs from snapshot index to index + 1.
      while (c < changes.length && changes[c]!.index < i) state = changes[c++]!.post;
      out.push({ at: times[i]!, path, state });
    }
  }
  return out;
}

/** Every change of every path between its consecutive known points, with the calls that may have made it. */
export function changeEvents(points: readonly Point[], calls: readonly CallWindow[]): Map<RepoPath, ChangeEvent[]> {
  const byPath = new Map<RepoPath, Point[]>();
  for (const p of points) {
    let list = byPath.get(p.path);
    if (!list) byPath.set(p.path, (list = []));
    list.push(p);
  }
  const out = new Map<RepoPath, ChangeEvent[]>();
  for (const [path, list] of byPath) {
    // Stable: a snapshot and a capture taken in the same millisecond keep their order.
    list.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    const events: ChangeEvent[] = [];
    for (let i = 1; i < list.length; i++) {
      const from = list[i - 1]!;
      const to = list[i]!;
      if (!differ(from.state, to.state)) continue;
      let candidates: CallWindow[];
      if (from.call && to.call && key(from.call) === key(to.call) && from.call.phase === "pre" && to.call.phase === "post") {
        candidates = calls.filter((c) => key(c) === key(from.call!));
      } else {
        candidates = calls.filter((c) => (c.kind === "tree" || c.paths?.has(path)) && c.start < to.at && c.end > from.at);
      }
      events.push({ path, from, to, candidates });
    }
    if (events.length > 0) out.set(path, events);
  }
  return out;
}

export interface Attribution {
  entries: ChangeEntry[];
  /** Another call wrote the path after this scope's last change to it. */
  later: Map<RepoPath, LaterWrite>;
  /** Someone (named, or an unknown writer: by null) changed the path between two of this scope's own changes. */
  interleaved: Map<RepoPath, { by: string | null; at: string }>;
}

const second = (at: string) => at.replace(/\.\d+Z$/, "Z");

/**
 * A scope's change set: for each path, from the state before the scope's
 * first change to the state after its last. Paths the scope left as it
 * found them are dropped. `inScope` says which calls are the scope's.
 */
export function attribute(events: ReadonlyMap<RepoPath, readonly ChangeEvent[]>, inScope: (c: CallWindow) => boolean, path?: (p: string) => boolean): Attribution {
  const entries: ChangeEntry[] = [];
  const later = new Map<RepoPath, LaterWrite>();
  const interleaved = new Map<RepoPath, { by: string | null; at: string }>();
  for (const [p, list] of events) {
    if (path && !path(p)) continue;
    const ours = list.map((e) => e.candidates.some(inScope));
    const first = ours.indexOf(true);
    if (first < 0) continue;
    const last = ours.lastIndexOf(true);
    const pre = list[first]!.from.state;
    const post = list[last]!.to.state;
    if (sameState(pre, post) === true) continue;
    const by = new Set<string>();
    const shared = new Map<string, CallRef>();
    let unclosed = false;
    for (let i = first; i <= last; i++) {
      const e = list[i]!;
      if (!ours[i]) {
        if (!interleaved.has(p)) interleaved.set(p, { by: e.candidates[0]?.session ?? null, at: second(e.to.at) });
        continue;
      }
      for (const c of e.candidates) {
        if (inScope(c)) {
          by.add(c.session);
          unclosed ||= c.unclosed;
        } else shared.set(key(c), { session: c.session, call: c.call });
      }
    }
    const after = list.slice(last + 1).find((e) => e.candidates.length > 0);
    if (after) later.set(p, { by: after.candidates[0]!.session, at: second(after.to.at) });
    const entry: ChangeEntry = { path: p, change: changeKind(pre, post), pre, post, by: [...by].sort() };
    if (shared.size > 0) entry.shared = [...shared.values()].sort((a, b) => (key(a) < key(b) ? -1 : 1));
    if (unclosed) entry.unclosed = true;
    entries.push(entry);
  }
  return { entries: sortByPath(entries), later, interleaved };
}
