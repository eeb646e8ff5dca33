import { sortByPath } from "../../domain/paths.js";
import { changeKind, sameState } from "../../domain/states.js";
import type { CallRef, ChangeEntry, Interleaved, LaterWrite, RepoPath, Scope, State } from "../../domain/types.js";

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

/**
 * The session name of unwind's own writes: each applied receipt is a call
 * of it, pinning what it wrote. A receipt that took back or redid a
 * scope's own work moves what that scope left (`takeBacks`); any other is
 * a later writer to it, named by this name.
 */
export const UNWIND_SESSION = "unwind";
const ours = (c: CallWindow) => c.session === UNWIND_SESSION;

/** One tool call's window: from its pre capture to its last post capture. */
export interface CallWindow {
  session: string;
  call: string;
  /** Which time this call id ran, from 0: ids repeat where the harness derives them (Gemini, `record`). */
  seq: number;
  kind: "tree" | "file";
  /** File calls: the paths they captured (a file tool writes only its targets); asked only whether it holds one. */
  paths?: { has(path: string): boolean };
  start: string;
  /** The last post capture; OPEN while none has come. */
  end: string;
  /** Closed by something other than its own post (the session's next event, or a reading command). */
  unclosed: boolean;
  /**
   * The part of the window the record vouches for: from its own pre to its
   * own post. Null where either is missing (the pre capture failed, no post
   * came): where the call began or ended is then a guess. The rest of a
   * window (a background command running on, a call closed by the next
   * event) may hold its work, but cannot prove it.
   */
  sure?: { start: string; end: string } | null;
  /**
   * A post finished after its hook ran out of time (src/capture/finish-later.ts): for these paths
   * the record vouches only up to `until`, when the post came; the snapshot was taken later.
   */
  doubt?: { until: string; has(path: string): boolean };
  /** unwind's own calls (its receipts): what the apply was, and of which scope. */
  took?: { kind: "undo" | "restore" | "redo"; scope: Scope };
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
  /** Part of the interval lies outside every candidate's window: someone unrecorded may have made it. */
  uncovered?: true;
}

/** What the record cannot tell: never recorded, so never equal to anything. */
export const NOT_CAPTURED: State = { kind: "unknown" };

function differ(a: State | null, b: State | null): boolean {
  if (a?.kind === "unknown" && b?.kind === "unknown") return false;
  return sameState(a, b) !== true;
}

/**
 * Whether two known points of a path differ. A snapshot's mode is the one
 * git recorded; where git ignores exec bits (`modeBlind`), a snapshot's and
 * a file capture's mode cannot be compared, and their content alone counts.
 * (Content compares by git's blob id: the edge gives file captures the id
 * git's clean filters would give their bytes.)
 */
function pointsDiffer(from: Point, to: Point, modeBlind: boolean): boolean {
  if (modeBlind && Boolean(from.call) !== Boolean(to.call) && from.state && to.state) {
    return differ({ ...from.state, mode: undefined }, { ...to.state, mode: undefined });
  }
  return differ(from.state, to.state);
}

const key = (c: { session: string; call: string }) => `${c.session}\0${c.call}`;

/**
 * Known points of paths from a sequence of tree snapshots (times in order)
 * and the diffs between consecutive ones (diff `index` runs from snapshot
 * index to index + 1). A path is unchanged where no diff shows it, so only
 * the snapshots around its changes are points of it, and, for a path file
 * captures know (`captured`: their times), the snapshots around each
 * capture. `constant` gives the state of a captured path no diff shows,
 * where the snapshots hold it; one they do not hold (ignored, or absent)
 * gets no snapshot points, which says nothing rather than "absent".
 */
export function snapshotPoints(
  times: readonly string[],
  diffs: readonly { index: number; entries: readonly { path: RepoPath; pre: State | null; post: State | null }[] }[],
  captured: { keys(): Iterable<RepoPath>; get(path: RepoPath): Iterable<string> | undefined } = new Map(),
  constant: ReadonlyMap<RepoPath, State | null> = new Map(),
): Point[] {
  const byPath = new Map<RepoPath, { index: number; pre: State | null; post: State | null }[]>();
  for (const d of diffs) {
    for (const e of d.entries) {
      let list = byPath.get(e.path);
      if (!list) byPath.set(e.path, (list = []));
      list.push({ index: d.index, pre: e.pre, post: e.post });
    }
  }
  const before = (t: string) => {
    let lo = 0;
    let hi = times.length; // the first snapshot at or after t
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (times[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const out: Point[] = [];
  for (const path of new Set([...byPath.keys(), ...captured.keys()])) {
    const changes = inOrder(byPath.get(path) ?? [], (a, b) => a.index - b.index);
    if (changes.length === 0 && !constant.has(path)) continue;
    const wanted = new Set<number>();
    for (const c of changes) wanted.add(c.index).add(c.index + 1);
    for (const t of captured.get(path) ?? []) {
      const i = before(t);
      if (i > 0) wanted.add(i - 1);
      if (i < times.length) wanted.add(i);
    }
    let c = 0;
    let state = changes.length > 0 ? changes[0]!.pre : (constant.get(path) ?? null);
    for (const i of inOrder([...wanted], (a, b) => a - b)) {
      if (i < 0 || i >= times.length) continue;
      while (c < changes.length && changes[c]!.index < i) state = changes[c++]!.post;
      out.push({ at: times[i]!, path, state });
    }
  }
  return out;
}

/**
 * `list` sorted in place by `cmp`, as `Array.prototype.sort` (stable) would,
 * without sorting a list already in order: V8 copies every array it sorts,
 * and a plan sorts two or three short lists per path, most already in order
 * (16 MB of a 10,000-path plan's 173 MB allocated).
 */
export function inOrder<T>(list: T[], cmp: (a: T, b: T) => number): T[] {
  for (let i = 1; i < list.length; i++) if (cmp(list[i - 1]!, list[i]!) > 0) return list.sort(cmp);
  return list;
}

/**
 * Points kept out of the list and made one path at a time, when that path's
 * events are: unwind's receipts give two per path each, and ten rounds of
 * undo and redo of 10,000 paths would otherwise hold 200,000 at once.
 * `of(path)` comes after the list's own points of that path.
 */
export interface MorePoints {
  paths(): Iterable<RepoPath>;
  of(path: RepoPath): Point[];
}

/** Every change of every path between its consecutive known points, with the calls that may have made it. */
export function changeEvents(points: readonly Point[], calls: readonly CallWindow[], modeBlind = false, more?: MorePoints): Map<RepoPath, ChangeEvent[]> {
  return new Map(changeEventsLazily(points, calls, modeBlind, more));
}

/**
 * `changeEvents`, one path at a time as they are asked for: a path's points
 * from `more` and its events are garbage once the caller's fold of that path
 * is done (paths without a change are not yielded).
 */
export function* changeEventsLazily(points: readonly Point[], calls: readonly CallWindow[], modeBlind = false, more?: MorePoints): Generator<[RepoPath, ChangeEvent[]]> {
  const byPath = new Map<RepoPath, Point[]>();
  for (const p of points) {
    let list = byPath.get(p.path);
    if (!list) byPath.set(p.path, (list = []));
    list.push(p);
  }
  // Which calls' windows meet an interval depends on the interval alone, but for file calls of the
  // path: one array per interval, shared by the paths no file call names (10,000 paths changed by
  // the same calls and receipts would otherwise each hold copies).
  const treeCalls = calls.filter((c) => c.kind === "tree");
  // A file call can only be a candidate for a path it names: each path's file calls, found once
  // (scanning every file call for every event is quadratic: 9,000 calls times 100,000 events).
  // A file call whose paths cannot be listed (a receipt's: `has` only) is asked for every path.
  const namedBy = new Map<string, CallWindow[]>();
  const unlisted: CallWindow[] = [];
  for (const c of calls) {
    if (c.kind !== "file") continue;
    const listed = c.paths as { has(p: string): boolean; [Symbol.iterator]?: () => Iterator<string> } | undefined;
    if (!listed) continue;
    if (typeof listed[Symbol.iterator] !== "function") {
      unlisted.push(c);
      continue;
    }
    for (const p of listed as Iterable<string>) {
      const l = namedBy.get(p);
      if (!l) namedBy.set(p, [c]);
      else if (l[l.length - 1] !== c) l.push(c);
    }
  }
  const place = new Map<CallWindow, number>();
  for (const [i, c] of calls.entries()) place.set(c, i);
  const byPlace = (a: CallWindow, b: CallWindow) => place.get(a)! - place.get(b)!;
  // Caches keyed by the interval's two times, one map inside the other: no key string built per event.
  const meeting = new Map<string, Map<string, CallWindow[]>>();
  const meets = (c: CallWindow, from: Point, to: Point) => c.start < to.at && c.end > from.at;
  const candidatesOf = (path: RepoPath, from: Point, to: Point): CallWindow[] => {
    const named = namedBy.get(path);
    let files = named ? named.filter((c) => meets(c, from, to)) : [];
    if (unlisted.length > 0) {
      const more = unlisted.filter((c) => meets(c, from, to) && c.paths!.has(path));
      if (more.length > 0) files = [...files, ...more];
    }
    let byEnd = meeting.get(from.at);
    if (!byEnd) meeting.set(from.at, (byEnd = new Map()));
    let trees = byEnd.get(to.at);
    if (!trees) byEnd.set(to.at, (trees = treeCalls.filter((c) => meets(c, from, to))));
    // In the order of `calls`, as a filter of it would give them.
    return files.length === 0 ? trees : inOrder([...trees, ...files], byPlace);
  };
  // Each call's windows by session and id: a capture's own call is looked up, not searched for.
  const byId = new Map<string, CallWindow[]>();
  for (const c of calls) {
    const k = `${c.session}\0${c.call}`;
    const l = byId.get(k);
    if (l) l.push(c);
    else byId.set(k, [c]);
  }
  // By the capture's call object (a receipt's is one for all its paths), then the interval.
  const pinned = new WeakMap<object, { from: string; to: string; pins: CallWindow[] }[]>();
  const eventsOf = (path: RepoPath, list: Point[]): ChangeEvent[] => {
    // Stable: a snapshot and a capture taken in the same millisecond keep their order.
    inOrder(list, (a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    const events: ChangeEvent[] = [];
    for (let i = 1; i < list.length; i++) {
      const from = list[i - 1]!;
      const to = list[i]!;
      if (!pointsDiffer(from, to, modeBlind)) continue;
      let candidates = candidatesOf(path, from, to);
      // A file tool's own captures (or an applied receipt's) pin the path: the change lies between two
      // captures of that one call and nothing narrower. Where snapshots place it inside another call's
      // window, the file call's captures prove nothing more: it is shared.
      const own = from.call && to.call && from.call.call === to.call.call && from.call.session === to.call.session ? from.call : null;
      if (own) {
        let known = pinned.get(own);
        if (!known) pinned.set(own, (known = []));
        let pins = known.find((k) => k.from === from.at && k.to === to.at)?.pins;
        if (!pins) {
          // From every call, not the candidates: a window that began and ended in one millisecond (an apply of a few
          // small files) meets no interval by the open test above, yet its own captures prove the change is its.
          pins = (byId.get(`${own.session}\0${own.call}`) ?? []).filter((c) => c.start <= from.at && c.end >= to.at && (c.kind === "tree" || c.paths?.has(path)));
          known.push({ from: from.at, to: to.at, pins });
        }
        if (pins.length > 0) candidates = pins;
      }
      const event: ChangeEvent = { path, from, to, candidates };
      // A pin proves the call only as far as the record vouches for its window: a capture that closed
      // it (its post never came) is the call's in name only, so the change may be someone else's.
      if (candidates.length > 0 && !covers(candidates, from.at, to.at, path)) event.uncovered = true;
      events.push(event);
    }
    return events;
  };
  const seen = new Set<RepoPath>();
  for (const [path, list] of byPath) {
    seen.add(path);
    byPath.delete(path); // what the caller keeps of it is its own
    if (more) list.push(...more.of(path));
    const events = eventsOf(path, list);
    if (events.length > 0) yield [path, events];
  }
  for (const path of more?.paths() ?? []) {
    if (seen.has(path)) continue;
    const events = eventsOf(path, more!.of(path));
    if (events.length > 0) yield [path, events];
  }
}

/** Whether the windows, as far as the record vouches for them at `path`, together span the whole interval from `a` to `b`. */
function covers(windows: readonly CallWindow[], a: string, b: string, path: string): boolean {
  const spans: { start: string; end: string }[] = [];
  for (const w of windows) {
    const span = w.sure === undefined ? w : w.sure;
    if (span && w.doubt?.has(path) && w.doubt.until < span.end) spans.push({ start: span.start, end: w.doubt.until });
    else if (span) spans.push(span);
  }
  let reached = a;
  for (const w of inOrder(spans, (x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0))) {
    if (w.start > reached) return false;
    if (w.end > reached) reached = w.end;
    if (reached >= b) return true;
  }
  return reached >= b;
}

/**
 * Which of unwind's receipts took back this scope's own work, or brought it
 * again: an undo whose scope's calls (`callsOf`) are all this scope's, and a
 * redo of such a receipt. Only these move what the scope left. Any other
 * receipt wrote someone else's state over it: an undo of another scope (undo
 * B, undo A, then undo B again must not bring A's change back), of a wider
 * one, a restore of a snapshot. `callsOf` is null for a scope that is no set
 * of calls.
 */
export function takeBacks(calls: readonly CallWindow[], inScope: (c: CallWindow) => boolean, callsOf: (scope: Scope) => ((c: CallWindow) => boolean) | null): (c: CallWindow) => boolean {
  const receipts = new Map<string, CallWindow>();
  const others: CallWindow[] = [];
  for (const c of calls) {
    if (ours(c)) receipts.set(c.call, c);
    else others.push(c);
  }
  const known = new Map<string, boolean>();
  const within = (id: string): boolean => {
    const was = known.get(id);
    if (was !== undefined) return was;
    known.set(id, false); // a redo that leads back to itself proves nothing
    const took = receipts.get(id)?.took;
    let yes = false;
    if (took?.kind === "redo") yes = took.scope.kind === "receipt" && within(took.scope.id);
    else if (took?.kind === "undo") {
      const of = callsOf(took.scope);
      const members = of ? others.filter(of) : [];
      yes = members.length > 0 && members.every(inScope);
    }
    known.set(id, yes);
    return yes;
  };
  return (c) => ours(c) && within(c.call);
}

/** Who made a change, as a later or interleaved write names it: another session, unwind's own apply, or nobody recorded. */
const writerOf = (e: ChangeEvent): string | null => e.candidates.find((c) => !ours(c))?.session ?? (e.candidates.length > 0 ? UNWIND_SESSION : null);

export interface Attribution {
  entries: ChangeEntry[];
  /** Another call wrote the path after this scope's last change to it. */
  later: Map<RepoPath, LaterWrite>;
  /**
   * Someone (named, or an unknown writer: by null) changed the path between
   * two of this scope's own changes, or may have made one of them (`note`).
   */
  interleaved: Map<RepoPath, Interleaved>;
  /**
   * Every path the scope changed, whether or not it is in `entries` now (one
   * whose change unwind has since taken back is not): what a `--path` glob
   * is matched against, so a narrowed undo run twice is not a usage error.
   */
  touched: Set<RepoPath>;
}

const second = (at: string) => at.replace(/\.\d+Z$/, "Z");

/**
 * A scope's change set: for each path, from the state before the scope's
 * first change to the state after its last. Paths the scope left as it
 * found them are dropped. `inScope` says which calls are the scope's;
 * `takesBack`, which of unwind's receipts took back or redid its own work
 * (`takeBacks`): none where not told.
 */
export function attribute(
  events: Iterable<readonly [RepoPath, readonly ChangeEvent[]]>,
  inScope: (c: CallWindow) => boolean,
  opts: { path?: ((p: string) => boolean) | undefined; takesBack?: (c: CallWindow) => boolean } = {},
): Attribution {
  const { path, takesBack = () => false } = opts;
  const entries: ChangeEntry[] = [];
  const later = new Map<RepoPath, LaterWrite>();
  const interleaved = new Map<RepoPath, Interleaved>();
  const touched = new Set<RepoPath>();
  const kind = (e: ChangeEvent) => (e.candidates.some(inScope) ? "scope" : e.candidates.length === 0 || !e.candidates.every(ours) ? "other" : e.candidates.every(takesBack) ? "takeback" : "receipt");
  for (const [p, list] of events) {
    if (path && !path(p)) continue;
    const first = list.findIndex((e) => kind(e) === "scope");
    if (first < 0) continue;
    touched.add(p);
    const pre = list[first]!.from.state;
    let post: State | null = pre;
    // Others' writes since the scope's last change, with the state before the first of them: a
    // receipt that brings the path back to that state took them back, and they no longer count.
    let pending: { e: ChangeEvent; before: State | null }[] = [];
    const by = new Set<string>();
    const shared = new Map<string, CallRef>();
    let unclosed = false;
    for (let i = first; i < list.length; i++) {
      const e = list[i]!;
      const k = kind(e);
      if (k === "scope") {
        if (pending.length > 0 && !interleaved.has(p)) {
          const w = pending[0]!.e;
          interleaved.set(p, { by: writerOf(w), at: second(w.to.at) });
        }
        pending = [];
        post = e.to.state;
        for (const c of e.candidates) {
          if (inScope(c)) {
            by.add(c.session);
            unclosed ||= c.unclosed;
          } else if (!ours(c)) shared.set(key(c), { session: c.session, call: c.call });
        }
        if (e.uncovered && !interleaved.has(p))
          interleaved.set(p, {
            by: null,
            at: second(e.to.at),
            note: "outside what the record vouches for (a call's window not closed by its own post, or not opened by its own pre): someone else may have made it",
          });
      } else if (k !== "other" && pending.length > 0) {
        // unwind's own write, after others': where it brings the path back to what was there before them, it took them back.
        if (sameState(e.to.state, pending[0]!.before) === true) pending = [];
      } else if (k === "takeback")
        post = e.to.state; // an undo of part of the scope's work, or a redo of one: it moves what the scope left
      else pending.push({ e, before: e.from.state }); // another's write, or unwind's on behalf of another scope
    }
    if (pending.length > 0) {
      // Anyone after the scope's last change, a recorded call or not: what is there now is theirs, even where it equals ours.
      later.set(p, { by: writerOf(pending[0]!.e), at: second(pending[0]!.e.to.at) });
    }
    if (sameState(pre, post) === true) {
      interleaved.delete(p);
      later.delete(p);
      continue;
    }
    const entry: ChangeEntry = { path: p, change: changeKind(pre, post), pre, post, by: [...by].sort() };
    if (shared.size > 0) entry.shared = [...shared.values()].sort((a, b) => (key(a) < key(b) ? -1 : 1));
    if (unclosed) entry.unclosed = true;
    entries.push(entry);
  }
  return { entries: sortByPath(entries), later, interleaved, touched };
}
