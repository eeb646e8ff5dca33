import { storePath } from "../domain/store-layout.js";
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { closeStaleCalls } from "../capture/capture.js";
import { excludeTexts } from "../capture/excludes.js";
import { keepsExecBits, listSnapshots, snapshotsFrom, writeWorkTree, type Snapshot } from "../capture/snapshot.js";
import { tooLargeState } from "../capture/toolarge.js";
import { UnwindError } from "../domain/errors.js";
import { idMatches } from "../domain/ids.js";
import type { Context } from "../repo/context.js";
import { readJournal, sessionFile, type JournalRecord, type WindowRead } from "../store/journal.js";
import { Receipts } from "../store/receipts.js";
import { recordStamp } from "../store/stamp.js";
import { keepChangeSetOnDisk, readKept } from "../store/changeset-cache.js";
import { recordKey } from "../store/record-index.js";
import { acts } from "../domain/actions.js";
import { pathMatcher } from "../domain/glob.js";
import { stateNow } from "../capture/observe.js";
import type { ChangeSet, Interleaved, LaterWrite, RepoPath, Scope, State, UncapturedCall } from "../domain/types.js";
import { correctDiff } from "./snapshot-diff.js";
import { consecutiveDiffs, stepsOf, type Diff, type Step } from "./steps.js";
import { callWindows, filePoints, openCalls, runWindows, type RunWindow } from "./fold/windows.js";
import { attribute, changeEventsLazily, OPEN, snapshotPoints, takeBacks, UNWIND_SESSION, type CallWindow, type ChangeEvent, type MorePoints, type Point } from "./fold/timeline.js";
import { pairDiffsFor, treeStates } from "./tree.js";
import { ignoredUnder, insideNestedRepository, someUnseen } from "./visibility.js";
import { type Carry, carryForward, recordMarkNow, type TimelineFacts } from "./carry.js";
import { bloomOfStrings } from "../domain/bloom.js";

export interface JournalScope {
  kind: "session" | "call" | "from-call" | "task" | "run";
  id: string;
  /** With a call: the session it belongs to (narrows a call id two sessions share). */
  session?: string;
}

/** A name as the user typed it: the full `<harness>:<id>`, the bare id, or what `idMatches` accepts (a unique tail, or start of either, of 6+). */
export function resolveSession(records: readonly JournalRecord[], wanted: string): string {
  return resolveSessionName(
    records.map((r) => r.session),
    wanted,
  );
}

/** `resolveSession` among session names (repeats allowed). */
export function resolveSessionName(sessions: Iterable<string>, wanted: string): string {
  const names = [...new Set(sessions)].sort();
  const bare = (n: string) => n.slice(n.indexOf(":") + 1);
  const exact = names.filter((n) => n === wanted || bare(n) === wanted);
  if (exact.length === 1) return exact[0]!;
  const hits = exact.length > 1 ? exact : names.filter((n) => idMatches(n, wanted));
  if (hits.length === 1) return hits[0]!;
  if (hits.length > 1) {
    throw new UnwindError("E_SCOPE_AMBIGUOUS", `${hits.length} sessions match '${wanted}': ${hits.slice(0, 8).join(", ")}`, {
      hint: "give the full <harness>:<id> name or more characters",
    });
  }
  throw new UnwindError("E_SCOPE_UNKNOWN", `no session '${wanted}'${wanted.length < 6 && names.length ? " (a part of it needs 6+ characters)" : ""}`, {
    hint: "list them with: unwind sessions",
  });
}

/**
 * A call id as typed: exact, or a unique part `idMatches` accepts (a tail
 * or a start of 6+ characters, as `shortIds` shows it). Call ids
 * are the harness's own and need not be unique across sessions (Gemini and
 * `record` derive them; an orchestrator may number them): one that two
 * sessions share is ambiguous, and `--session` narrows it.
 */
export function resolveCall(records: readonly JournalRecord[], wanted: string): { session: string; call: string } {
  const calls = [...new Set(records.map((r) => `${r.session}\0${r.call}`))].sort().map((k) => {
    const [session, call] = k.split("\0") as [string, string];
    return { session, call };
  });
  let hits = calls.filter((c) => c.call === wanted);
  if (hits.length === 0) hits = calls.filter((c) => idMatches(c.call, wanted));
  if (hits.length === 1) return hits[0]!;
  if (hits.length > 1) {
    throw new UnwindError(
      "E_SCOPE_AMBIGUOUS",
      `${hits.length} calls match '${wanted}': ${hits
        .slice(0, 8)
        .map((c) => `${c.call} (${c.session})`)
        .join(", ")}`,
      {
        hint: "narrow it with --session, or use more characters",
      },
    );
  }
  throw new UnwindError("E_SCOPE_UNKNOWN", `no call '${wanted}'`, { hint: "list them with: unwind log" });
}

export interface Timeline {
  calls: CallWindow[];
  /** Each path's events, made as they are asked for: iterate once. */
  events: Iterable<[RepoPath, ChangeEvent[]]>;
  /**
   * Read from a window of the record (`bounded`), and a path it captured may
   * have points outside it that bear: the fold must read the whole record.
   */
  inexact: boolean;
  /** Asked for (`withFacts`): what a kept change set needs to be carried forward (src/scope/carry.ts). */
  facts?: TimelineFacts;
}

/**
 * Everything the record proves about who changed what, from the first
 * `wanted` call's start on:
 * every call's window, and every change the snapshots of this work tree and
 * the file captures saw. Snapshots of other work trees say nothing about
 * this one. A tree call still open is closed by the work tree as it is now
 * (a scratch snapshot, nothing written), a file call by its paths as they are.
 */
export async function journalTimeline(
  ctx: Context,
  allRecords: readonly JournalRecord[],
  wanted: (c: CallWindow) => boolean,
  allSnaps?: readonly Snapshot[],
  bounded = false,
  withFacts = false,
): Promise<Timeline> {
  // Records of other work trees say nothing about this one (older records carry no root: they count).
  const records = allRecords.filter((r) => r.root === undefined || r.root === ctx.root);
  const snaps = (allSnaps ?? (await listSnapshots(ctx))).filter((s) => s.root === ctx.root).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const windows = callWindows(
    records,
    snaps.map((s) => s.at),
  );
  // Runs are windows under the same rules as calls (SPEC section 9): what another call pinned is not theirs, and what changed while both were open is shared.
  const calls: CallWindow[] = [...windows, ...runWindows(snaps)];
  // Only what happened from the first wanted call's start on can bear on it.
  const from = calls.filter(wanted).reduce((m, c) => (c.start < m ? c.start : m), OPEN);
  const written = receiptCalls(ctx, from);
  calls.push(...written.calls);
  let first = 0;
  for (let i = 0; i < snaps.length; i++) if (snaps[i]!.at <= from) first = i;
  const seq: Step[] = stepsOf(ctx, snaps.slice(first));
  // Receipts are never open: the records' windows are the ones that can be.
  const open = windows.filter((c) => c.end === OPEN && c.start >= (seq[0]?.at ?? ""));
  const now = new Date().toISOString();
  const scratch = open.some((c) => c.kind === "tree") ? await writeWorkTree(ctx, { scratch: true }) : null;
  try {
    if (scratch) seq.push({ at: now, tree: scratch.tree, env: scratch.env, excludes: excludeTexts(ctx), toolarge: scratch.toolargeFiles, nested: scratch.nested });
    const recorded = filePoints(records);
    // The file calls still open are known now; their points come after the receipts', as the calls' own do before.
    const nowPts = new Map<RepoPath, Point[]>();
    for (const c of open) {
      if (c.kind !== "file") continue;
      for (const p of c.paths ?? []) {
        const pt = { at: now, path: p as RepoPath, state: stateNow(ctx.root, p, ctx.objectFormat) };
        const list = nowPts.get(pt.path);
        if (list) list.push(pt);
        else nowPts.set(pt.path, [pt]);
      }
    }
    // When each path was captured: the records' times, the receipts' (read from their lists, not copied), the open calls'.
    const recordedAt = new Map<RepoPath, string[]>();
    for (const pt of recorded) {
      const list = recordedAt.get(pt.path);
      if (list) list.push(pt.at);
      else recordedAt.set(pt.path, [pt.at]);
    }
    // Only the paths a wanted call can be a candidate for can bear on it: the rest of the record is left unfolded.
    const everCaptured = new Set([...recordedAt.keys(), ...written.points.paths(), ...nowPts.keys()]);
    const bearing = bearingOf(calls, wanted, recorded, everCaptured, recordedAt, written.points, nowPts);
    const timesOf = function* (path: RepoPath) {
      yield* recordedAt.get(path) ?? [];
      yield* written.points.times(path);
      for (const pt of nowPts.get(path) ?? []) yield pt.at;
    };
    // Asked before any diff is read: where the window cannot vouch, the whole record is folded instead.
    if (bounded && (await outsideBears(ctx, calls, wanted, from, seq[0], everCaptured, timesOf, recorded))) return { calls, events: [], inexact: true };
    // The pairs inside a wanted tree window first, whole: any path they show bears. Then the others, read only for what bears.
    const meets = (i: number) => bearing.meets(seq[i]!.at, seq[i + 1]?.at ?? OPEN);
    // One read of the kept pair diffs for both asks, where the fold's pairs are many: the few of its own windows come from it too.
    const cache = pairDiffsFor(ctx, seq.length - 1);
    const inside = await consecutiveDiffs(ctx, seq, meets, null, cache);
    for (const d of inside) {
      d.entries = await correctDiff(ctx, d.entries, seq[d.index]!, seq[d.index + 1]!);
      for (const e of d.entries) bearing.keep.add(e.path);
    }
    const bears = (p: string) => bearing.keep.has(p);
    const outside = await consecutiveDiffs(ctx, seq, (i) => !meets(i), { has: bears, ...(bearing.keep.size <= FEW_PATHS ? { few: [...bearing.keep] } : {}) }, cache);
    for (const d of outside) d.entries = await correctDiff(ctx, d.entries, seq[d.index]!, seq[d.index + 1]!);
    const diffs = [...inside, ...outside].sort((a, b) => a.index - b.index);
    for (const d of diffs) d.entries = d.entries.filter((e) => bears(e.path));
    const capturedPaths = [...everCaptured].filter(bears);
    const captured = { keys: () => capturedPaths, get: timesOf };
    const constant = await unchangedStates(ctx, seq[0], diffs, capturedPaths);
    const points: Point[] = snapshotPoints(
      seq.map((s) => s.at),
      diffs,
      captured,
      constant,
    );
    for (const pt of recorded) if (bears(pt.path)) points.push(pt);
    const more: MorePoints = {
      paths: () => new Set([...written.points.paths(), ...nowPts.keys()].filter(bears)),
      of: (path) => {
        const out = written.points.of(path);
        for (const pt of nowPts.get(path) ?? []) out.push(pt);
        return out;
      },
    };
    const facts = withFacts ? timelineFacts(calls, wanted, bearing.keep, everCaptured, timesOf, seq, snaps[first]) : undefined;
    return { calls, events: changeEventsLazily(points, calls, !keepsExecBits(ctx), more), inexact: false, ...(facts ? { facts } : {}) };
  } finally {
    scratch?.dispose();
  }
}

/**
 * What the fold knew that a later look needs to tell whether what was
 * appended since can bear on the scope (src/scope/carry.ts): the paths
 * that bore; the wanted tree windows' last end, and the captured paths
 * first seen by then (a later capture of one would reach back across a
 * window: `bearingOf`'s span); whether a bearing path has a point past the
 * last snapshot (a new snapshot would then place a change of it); and the
 * first snapshot, where a windowed read vouches for paths it did not read.
 */
function timelineFacts(
  calls: readonly CallWindow[],
  wanted: (c: CallWindow) => boolean,
  bears: ReadonlySet<string>,
  everCaptured: ReadonlySet<RepoPath>,
  timesOf: (path: RepoPath) => Iterable<string>,
  seq: readonly Step[],
  firstSnapshot: Snapshot | undefined,
): TimelineFacts {
  let wantedEnd = "";
  for (const c of calls) if (wanted(c) && c.kind !== "file" && c.end > wantedEnd) wantedEnd = c.end;
  const early: string[] = [];
  if (wantedEnd !== "") {
    for (const p of everCaptured) {
      if (bears.has(p)) continue;
      for (const t of timesOf(p)) {
        if (t > wantedEnd) continue;
        early.push(p);
        break;
      }
    }
  }
  const last = seq[seq.length - 1];
  let dirty = last === undefined;
  if (last) {
    for (const p of bears) {
      // At the same millisecond as that snapshot, the order of the two is not known: counted as past it.
      for (const t of timesOf(p as RepoPath)) if (t >= last.at) dirty = true;
      if (dirty) break;
    }
  }
  return { bears, early, wantedEnd, dirty, first: firstSnapshot ?? null };
}

/**
 * Which paths a wanted call can be a candidate for, and so the only ones
 * whose events can bear on it (src/scope/fold/timeline.ts, candidatesOf):
 * a file call writes only its own paths; a tree call (or a run) any path
 * with a change inside its window. Those are the paths a diff between
 * snapshots inside the window shows (`meets`: the caller adds them as it
 * reads those diffs), and the captured paths with a point inside the window
 * or on both sides of it (a path no snapshot sees, an ignored one, has only
 * captures to place its change). Everything else the record holds is left
 * unfolded: `changes` of one call of a long record no longer folds every
 * path the record ever captured, nor reads the other pairs' diffs whole.
 */
function bearingOf(
  calls: readonly CallWindow[],
  wanted: (c: CallWindow) => boolean,
  recorded: readonly Point[],
  everCaptured: ReadonlySet<RepoPath>,
  recordedAt: ReadonlyMap<RepoPath, string[]>,
  written: ReceiptPoints,
  nowPts: ReadonlyMap<RepoPath, Point[]>,
): { keep: Set<string>; meets: (from: string, to: string) => boolean } {
  const keep = new Set<string>();
  const key = (c: { session: string; call: string }) => `${c.session}\0${c.call}`;
  const mine = calls.filter(wanted);
  const wantedKeys = new Set(mine.map(key));
  for (const pt of recorded) if (pt.call && wantedKeys.has(key(pt.call))) keep.add(pt.path);
  for (const c of mine) if (c.kind === "file") for (const p of nowPts.keys()) if (c.paths?.has(p)) keep.add(p);
  const trees = mine.filter((c) => c.kind !== "file").map((c) => ({ start: c.start, end: c.end }));
  const meets = (from: string, to: string) => trees.some((w) => w.start <= to && w.end >= from);
  if (trees.length > 0) {
    // A captured path whose first and last known times reach from before a window to after it, or into it.
    const span = (path: RepoPath) => {
      let lo = OPEN;
      let hi = "";
      const see = (t: string) => {
        if (t < lo) lo = t;
        if (t > hi) hi = t;
      };
      for (const t of recordedAt.get(path) ?? []) see(t);
      for (const t of written.times(path)) see(t);
      for (const pt of nowPts.get(path) ?? []) see(pt.at);
      return meets(lo, hi);
    };
    for (const p of everCaptured) if (!keep.has(p) && span(p)) keep.add(p);
  }
  return { keep, meets };
}

/**
 * Whether the records a window left unread (src/store/journal.ts,
 * `JournalWindow`) could bear on a wanted call. What they hold ended before
 * the first snapshot of the sequence; a path that snapshot sees has a point
 * there, so nothing before it can place a change after it. A path it cannot
 * see (ignored and not tracked, or inside a nested repository) has only
 * captures: one first captured after the scope began may have had an
 * earlier capture that would place a change inside a wanted tree window. A
 * file call is a candidate only for its own paths, and its pre capture of
 * a path is that path's point at its start; a path it has no pre capture of
 * (it was captured at the post alone) is asked about as a tree call's.
 */
async function outsideBears(
  ctx: Context,
  calls: readonly CallWindow[],
  wanted: (c: CallWindow) => boolean,
  from: string,
  first: Step | undefined,
  everCaptured: ReadonlySet<RepoPath>,
  times: (path: RepoPath) => Iterable<string>,
  recorded: readonly Point[],
): Promise<boolean> {
  if (!first) return false;
  const mine = calls.filter(wanted);
  let asked: Iterable<RepoPath> = everCaptured;
  if (!mine.some((c) => c.kind !== "file")) {
    const key = (c: { session: string; call: string }) => `${c.session}\0${c.call}`;
    const keys = new Set(mine.map(key));
    const named = new Set<RepoPath>();
    const pre = new Set<RepoPath>();
    for (const pt of recorded) {
      if (!pt.call || !keys.has(key(pt.call))) continue;
      named.add(pt.path);
      if (pt.call.phase === "pre") pre.add(pt.path);
    }
    asked = [...named].filter((p) => !pre.has(p));
  }
  const late: RepoPath[] = [];
  for (const p of asked) {
    let earliest = OPEN;
    for (const t of times(p)) if (t < earliest) earliest = t;
    if (earliest > from) late.push(p);
  }
  if (late.length === 0) return false;
  return someUnseen(ctx, first, late);
}

/** Up to this many bearing paths, a kept pair diff whose text names none of them is not parsed (src/store/pair-diffs.ts). */
const FEW_PATHS = 32;

/**
 * The state, in every snapshot of the sequence, of captured paths no diff
 * shows (so the same in all): from the first snapshot's tree where it holds
 * them, over the cap where it lists them, absent where it lacks them and
 * they were not ignored then. An ignored path gets none: the snapshots
 * cannot see it, and "absent" would be a lie.
 */
async function unchangedStates(ctx: Context, first: Step | undefined, diffs: readonly Diff[], paths: readonly RepoPath[]): Promise<Map<RepoPath, State | null>> {
  const out = new Map<RepoPath, State | null>();
  if (!first) return out;
  const inDiffs = new Set<string>();
  for (const d of diffs) for (const e of d.entries) inDiffs.add(e.path);
  const quiet = paths.filter((p) => !inDiffs.has(p));
  const absent: RepoPath[] = [];
  const held = await treeStates(ctx, first.tree, quiet);
  for (const p of quiet) {
    const big = first.toolarge?.[p];
    if (big) out.set(p, tooLargeState(big));
    else if (held.has(p)) {
      const st = held.get(p)!;
      out.set(p, first.clean && st.kind === "file" ? { ...st, clean: true } : st);
    } else absent.push(p);
  }
  // Inside a nested repository (a submodule, or one git left untracked) a snapshot sees nothing: absence of evidence, not absence.
  const nested = insideNestedRepository(ctx.root);
  const visible = absent.filter((p) => !nested(p));
  const ignored = new Set(await ignoredUnder(ctx, first, visible));
  for (const p of visible) if (!ignored.has(p)) out.set(p, null);
  return out;
}

/**
 * unwind's receipts as points, kept compact: for each path, one flat list
 * of (receipt, state before, state after), each receipt's two points made
 * only when that path's events are (`MorePoints`), in the order the
 * receipts were applied.
 */
class ReceiptPoints implements MorePoints {
  readonly receipts: { at: string; end: string; pre: Point["call"]; post: Point["call"] }[] = [];
  readonly byPath = new Map<RepoPath, (number | State | null)[]>();

  paths(): Iterable<RepoPath> {
    return this.byPath.keys();
  }

  of(path: RepoPath): Point[] {
    const flat = this.byPath.get(path);
    const out: Point[] = [];
    if (!flat) return out;
    // Oldest first: the chain is read newest first, and receipts stamped with the same millisecond keep the chain's order
    // through the stable sort by time (an undo and its redo in one millisecond must not read as the redo first).
    for (let i = flat.length - 3; i >= 0; i -= 3) {
      const r = this.receipts[flat[i] as number]!;
      out.push({ at: r.at, path, state: flat[i + 1] as State | null, call: r.pre });
      out.push({ at: r.end, path, state: flat[i + 2] as State | null, call: r.post });
    }
    return out;
  }

  /** Whether receipt `k` wrote `path`: its window's paths, without a set of them per receipt. */
  holds(k: number, path: string): boolean {
    const flat = this.byPath.get(path as RepoPath);
    if (!flat) return false;
    // Receipts are added in order, so each list's receipt numbers rise: a binary search over its triples.
    let lo = 0;
    let hi = flat.length / 3;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const at = flat[mid * 3] as number;
      if (at === k) return true;
      if (at < k) lo = mid + 1;
      else hi = mid;
    }
    return false;
  }

  /** Every time a receipt knows the path at (none for a path no receipt wrote). */
  *times(path: RepoPath): Generator<string> {
    const flat = this.byPath.get(path) ?? [];
    for (let i = 0; i < flat.length; i += 3) {
      const r = this.receipts[flat[i] as number]!;
      yield r.at;
      yield r.end;
    }
  }
}

/**
 * unwind's own writes from `from` on: each applied receipt as a call of
 * UNWIND_SESSION whose captures are what each path held just before and
 * what the apply left, so a tree call open meanwhile is not charged with
 * them, and they are no one's later write.
 */
function receiptCalls(ctx: Context, from: string): { calls: CallWindow[]; points: ReceiptPoints } {
  const calls: CallWindow[] = [];
  const points = new ReceiptPoints();
  if (!existsSync(storePath(ctx.store, "receipts"))) return { calls, points };
  // Undo and redo write the same few states over and over: one object for each, whatever the receipt.
  // Found by content hash, then compared field by field: no key string built per state read.
  const states = new Map<string, State[]>();
  const one = (s: State | null) => {
    if (!s) return null;
    const k = s.sha256 ?? s.oid ?? s.kind;
    const known = states.get(k);
    if (!known) {
      states.set(k, [s]);
      return s;
    }
    for (const x of known) if (x.kind === s.kind && x.mode === s.mode && x.size === s.size && x.sha256 === s.sha256 && x.oid === s.oid) return x;
    known.push(s);
    return s;
  };
  const names = new Map<string, RepoPath>();
  for (const { head: r, items } of new Receipts(ctx.store).walkLazily()) {
    const end = r.doneAt ?? r.at;
    // Applies hold the store lock, so the chain runs in the order they ended: every older one ended earlier still.
    if (end < from) break;
    if (r.root !== undefined && r.root !== ctx.root) continue;
    let wrote = 0;
    const k = points.receipts.length;
    points.receipts.push({ at: r.at, end, pre: { session: UNWIND_SESSION, call: r.id, phase: "pre" }, post: { session: UNWIND_SESSION, call: r.id, phase: "post" } });
    for (const i of items()) {
      if (!acts(i.action)) continue;
      let path = names.get(i.path);
      if (path === undefined) names.set(i.path, (path = i.path));
      wrote++;
      const flat = points.byPath.get(path);
      if (flat) flat.push(k, one(i.before), one(i.after));
      else points.byPath.set(path, [k, one(i.before), one(i.after)]);
    }
    const paths = { has: (p: string) => points.holds(k, p) };
    if (wrote > 0) calls.push({ session: UNWIND_SESSION, call: r.id, seq: 0, kind: "file", start: r.at, end, unclosed: false, paths, took: { kind: r.kind, scope: r.scope } });
  }
  return { calls, points };
}

/**
 * The open calls of this work tree (another's can only be closed by a
 * capture of that one; records from before roots were kept count as ours),
 * closed for good (SPEC section 2).
 */
/** Whether a call of this work tree is still open: its window reaches to now, so what it changed is not settled. */
export function hasOpenCalls(ctx: Context, records: readonly JournalRecord[]): boolean {
  return openHere(ctx, records).length > 0;
}

function openHere(ctx: Context, records: readonly JournalRecord[]) {
  return openCalls(records.filter((r) => r.root === undefined || r.root === ctx.root));
}

/** A window's read sees every file with a call open: asked again under the lock, it reads only what may have changed. */
function closeStale(ctx: Context, records: readonly JournalRecord[], locked: boolean, window: FoldWindow | null = null): Promise<JournalRecord[]> {
  const again = () => readJournal(ctx.store, window ? { since: window.since, sessions: new Set([window.session]) } : undefined).records;
  return closeStaleCalls(ctx, openHere(ctx, records), locked, () => openHere(ctx, again()));
}

/** Whether a call's first record (in time order) is a post at or before `t`: its window starts at a snapshot before it. */
function prelessBefore(records: readonly JournalRecord[], t: string): boolean {
  const met = new Set<string>();
  for (const r of records) {
    const k = `${r.session}\0${r.call}`;
    if (met.has(k)) continue;
    met.add(k);
    if (r.phase === "post" && r.at <= t) return true;
  }
  return false;
}

export interface JournalChangeSet {
  cs: ChangeSet;
  /** Every path the scope changed, its change since taken back or not (`Attribution.touched`). */
  touched: Set<RepoPath>;
  laterWrites: Map<RepoPath, LaterWrite>;
  interleaved: Map<RepoPath, Interleaved>;
}

/**
 * Session, call and journal-task scopes: the calls that belong to the
 * scope, attributed against everything else the record saw (SPEC section
 * 2). A damaged record in the scope's journal refuses the whole scope
 * (exit 4): a change set built around a record we cannot read could undo
 * too little or the wrong thing.
 */
export async function journalChangeSet(ctx: Context, scope: JournalScope, opts: JournalFoldOptions): Promise<JournalChangeSet> {
  const key = `${keepsExecBits(ctx)}\0${JSON.stringify([scope.kind, scope.id, scope.session ?? null, opts.since ?? null, opts.paths ?? []])}`;
  const memo = memos.get(memoKey(ctx));
  const before = memo ? recordStamp(ctx) : null;
  const kept = memo?.get(key);
  if (kept && kept.stamp === before) return structuredClone(kept.result);
  // Kept on disk for the next command (src/store/changeset-cache.ts); an undo folds the record itself, under the lock.
  const diskKey = opts.close === "locked" ? null : recordKey(ctx.store, ctx.commonDir, ctx.root, "");
  const onDisk = diskKey === null ? null : await keptOnDisk(ctx, key, diskKey, opts.close === "lock");
  if (onDisk) return onDisk;
  if (!memo && diskKey === null) return foldChangeSet(ctx, scope, opts);
  // Written by `changes` alone (it may write the record, closing calls): a dry run changes nothing at all (SPEC section 3).
  const keeps = opts.close === "lock" && diskKey !== null;
  const seen: FoldSeen = { open: true, wantFacts: keeps };
  const result = await foldChangeSet(ctx, scope, opts, seen);
  // Kept only if nothing was written meanwhile and no call here was open (an open call is closed by the tree as it is now).
  if (seen.open) return result;
  if (keeps) {
    // Read before the record's key is taken again: a key that still holds vouches for them too.
    const carry = seen.facts ? carryOf(ctx, seen.facts, result) : undefined;
    if (recordKey(ctx.store, ctx.commonDir, ctx.root, "") === diskKey) keepChangeSetOnDisk(ctx.store, ctx.root, key, diskKey, result, carry);
  }
  if (memo && recordStamp(ctx) === before) {
    for (const [k, m] of memo) if (m.stamp !== before || k === key) memo.delete(k);
    memo.set(key, { stamp: before!, result: structuredClone(result) });
    // The oldest go first, past a few scopes or a few hundred thousand paths; the newest is always kept.
    let paths = 0;
    for (const m of memo.values()) paths += m.result.cs.entries.length + m.result.touched.size;
    for (const [k, m] of memo) {
      if (memo.size <= 1 || (memo.size <= MEMO_SCOPES && paths <= MEMO_PATHS)) break;
      paths -= m.result.cs.entries.length + m.result.touched.size;
      memo.delete(k);
    }
  }
  return result;
}

/**
 * The change set kept on disk for this scope (src/store/changeset-cache.ts):
 * kept under the record's key as it is, or kept under an earlier one and
 * carried forward (src/scope/carry.ts), then kept again under this key if
 * `rekeep`; null where none holds.
 */
async function keptOnDisk(ctx: Context, key: string, diskKey: string, rekeep: boolean): Promise<JournalChangeSet | null> {
  const kept = readKept<JournalChangeSet>(ctx.store, ctx.root, key);
  if (!kept) return null;
  if (kept.key === diskKey) return kept.value();
  if (typeof kept.carry !== "object" || kept.carry === null) return null;
  // A carry that cannot be worked out (a tree it names gone, a git that fails) is no answer: the fold says what is wrong, if anything.
  const next = await carryForward(ctx, kept.carry as Carry).catch(() => null);
  // Nothing written while it was asked: what was appended is all there is.
  if (!next || recordKey(ctx.store, ctx.commonDir, ctx.root, "") !== diskKey) return null;
  const value = kept.value();
  if (value && rekeep) kept.rekeep(diskKey, next);
  return value;
}

/** What a kept change set is kept with to carry it forward (src/scope/carry.ts). */
function carryOf(ctx: Context, f: FoldFacts, result: JournalChangeSet): Carry | undefined {
  const mark = recordMarkNow(ctx, f.maxAt);
  if (!mark) return undefined;
  const { bears, early, wantedEnd, dirty, first } = f.timeline;
  const paths = [...bears, ...early, ...result.cs.entries.map((e) => e.path), ...result.touched, ...result.laterWrites.keys(), ...result.interleaved.keys()];
  return {
    ...mark,
    session: f.session,
    wantedEnd,
    paths: bloomOfStrings(paths, paths.length),
    dirty,
    first: f.partial && wantedEnd !== "" ? first : null,
  };
}

/** What a fold saw: whether a call was open; asked for (`wantFacts`), what a carry needs of it. */
interface FoldSeen {
  open: boolean;
  wantFacts?: boolean;
  facts?: FoldFacts;
}

interface FoldFacts {
  session: string;
  /** The latest record read. */
  maxAt: string;
  /** Read from a window of the record. */
  partial: boolean;
  timeline: TimelineFacts;
}

interface JournalFoldOptions {
  since?: string;
  paths?: string[];
  close?: "lock" | "locked";
}

/**
 * The last few change sets a long-lived process folded (the UI's server,
 * the MCP server, a library user who asks for it: `open({ keepChangeSets:
 * true })`), by scope, each with the record's stamp (src/store/stamp.ts) it
 * was folded from. The fold is a function of the record alone once no call
 * is open: the same stamp gives the same change set. Such a process asks for
 * one scope again and again (a page of hunks, the undo preview, the undo),
 * each a fold of the whole record since the scope began. A one-shot command
 * keeps none: a copy would cost it memory and time for nothing.
 */
const MEMO_SCOPES = 8;
const MEMO_PATHS = 200_000;
const memos = new Map<string, Map<string, { stamp: string; result: JournalChangeSet }>>();
const memoKey = (ctx: Context) => `${ctx.store}\0${ctx.root}`;

/** From now on this process keeps the change sets it folds for this work tree (see above). */
export function keepChangeSets(ctx: Context): void {
  if (!memos.has(memoKey(ctx))) memos.set(memoKey(ctx), new Map());
}

/**
 * `seen.open`: whether the record, as read, had a call of this work tree
 * open. A session's scope, or a call's named with its session, is folded
 * from the part of the record that can bear on it (`scopeWindow`); the
 * whole record where that part cannot vouch for the result.
 */
async function foldChangeSet(ctx: Context, scope: JournalScope, opts: JournalFoldOptions, seen?: FoldSeen): Promise<JournalChangeSet> {
  const window = await scopeWindow(ctx, scope);
  if (window) {
    const folded = await foldFrom(ctx, scope, opts, seen, window);
    if (folded) return folded;
  }
  return (await foldFrom(ctx, scope, opts, seen, null))!;
}

/**
 * The part of the record a fold of a session's scope needs (SPEC section 2
 * rules it by time: only what happened from the scope's first call on can
 * bear on it, measured from the snapshot before that): the session's own
 * journal, every journal file with a record since that snapshot or a call
 * still open, and the snapshots from that one on. Null where the scope names
 * no session, or its first call cannot be placed from its own records.
 */
interface FoldWindow {
  /** The scope's session, resolved among every session the journal holds. */
  session: string;
  /** When the scope's first call began. */
  from: string;
  /** When the last snapshot of this work tree at or before `from` was taken. */
  since: string;
  snaps: Snapshot[];
}

async function scopeWindow(ctx: Context, scope: JournalScope): Promise<FoldWindow | null> {
  const named = scope.kind === "session" ? scope.id : scope.kind === "call" || scope.kind === "from-call" ? scope.session : undefined;
  if (named === undefined) return null;
  let session: string;
  let own: JournalRecord[];
  try {
    session = resolveSessionName(readJournal(ctx.store, { since: OPEN, sessions: new Set() }).sessions, named);
    own = readJournal(ctx.store, { since: OPEN, sessions: new Set([session]) }).records.filter((r) => r.session === session);
    if (scope.kind !== "session") {
      const call = resolveCall(own, scope.id).call;
      own = own.filter((r) => r.call === call);
    }
  } catch {
    // The whole record's fold says what is wrong with the name.
    return null;
  }
  // A call whose pre is missing starts at the snapshot before its post (callWindows): not placed by its records.
  const firsts = new Map<string, JournalRecord>();
  for (const r of own) if (!firsts.has(r.call)) firsts.set(r.call, r);
  if (own.length === 0 || [...firsts.values()].some((r) => r.phase !== "pre")) return null;
  const from = own[0]!.at;
  const found = await snapshotsFrom(ctx, from);
  return found && { session, from, since: found.since, snaps: found.snaps };
}

/**
 * The window's snapshots, as the records now read need them: a record may
 * name one taken since the window was found (a hook's, or the one that
 * closed open calls), and a run recorded before runs named their start is
 * placed by its before snapshot, which must be among them. Null where the
 * window no longer holds (gc moved its start) or a run cannot be placed.
 */
async function windowSnapshots(ctx: Context, window: FoldWindow, records: readonly JournalRecord[]): Promise<Snapshot[] | null> {
  let snaps = window.snaps;
  const have = new Set(snaps.map((s) => s.id));
  if (records.some((r) => r.kind === "tree" && r.at >= window.since && (r.root === undefined || r.root === ctx.root) && !have.has(r.snapshot))) {
    const again = await snapshotsFrom(ctx, window.from);
    if (!again || again.since !== window.since) return null;
    snaps = again.snaps;
  }
  const labels = new Set(snaps.map((s) => s.label));
  for (const s of snaps) {
    const after = s.run === undefined ? /^run (\S+): after$/.exec(s.label ?? "") : null;
    if (after && !labels.has(`run ${after[1]}: before`)) return null;
  }
  return snaps;
}

/**
 * Whether every member of each undo the timeline holds was read: which
 * receipts took back the scope's own work turns on all of an undo's members
 * (`takeBacks`). A session's calls are all in its own file, read or not; a
 * call id may recur in a file left unread (its Bloom filter says whether it
 * may); a task's or a run's members reach runs whose snapshots the window
 * does not list.
 */
function membersRead(calls: readonly CallWindow[], unread: WindowRead["unread"]): boolean {
  for (const c of calls) {
    const scope = c.took?.kind === "undo" ? c.took.scope : undefined;
    if (!scope) continue;
    if (scope.kind === "task" || scope.kind === "run") return false;
    if ((scope.kind === "call" || scope.kind === "from-call") && unread.mayHoldCall(scope.id)) return false;
  }
  return true;
}

/** The fold of `scope` from `window`'s part of the record, or from all of it; null where the window cannot vouch for it. */
async function foldFrom(ctx: Context, scope: JournalScope, opts: JournalFoldOptions, seen: FoldSeen | undefined, window: FoldWindow | null): Promise<JournalChangeSet | null> {
  const read = window ? readJournal(ctx.store, { since: window.since, sessions: new Set([window.session]), keepFacts: true }) : readJournal(ctx.store);
  // Every file read: the window holds the whole journal, and what follows is the whole record's fold.
  const partial = window !== null && read.skipped > 0;
  // A call of another session whose pre is missing, placed by a snapshot the window does not hold.
  if (partial && prelessBefore(read.records, window.since)) return null;
  if (seen) seen.open = hasOpenCalls(ctx, read.records);
  const damaged = read.damaged;
  // Calls still open are closed now, for good (a dry run closes them in memory only: it writes nothing).
  const records = opts.close ? [...read.records, ...(await closeStale(ctx, read.records, opts.close === "locked", window))] : read.records;
  const snaps = window ? await windowSnapshots(ctx, window, records) : await listSnapshots(ctx);
  if (!snaps) return null;
  const runs = runWindows(snaps);
  let keep: (r: { session: string; call: string }) => boolean;
  let sessions: string[];
  let id = scope.id;
  if (scope.kind === "session") {
    id = window ? window.session : resolveSession(records, scope.id);
    keep = (r) => r.session === id;
    sessions = [id];
  } else if (scope.kind === "call" || scope.kind === "from-call") {
    const session = window ? window.session : scope.session !== undefined ? resolveSession(records, scope.session) : undefined;
    const c = resolveCall(session ? records.filter((r) => r.session === session) : records, scope.id);
    id = c.call;
    keep = scope.kind === "call" ? (r) => r.call === c.call && r.session === c.session : fromCall(records, c);
    sessions = [c.session];
  } else {
    const members = scopeMembers(records, runs, { kind: scope.kind, id: scope.id });
    if (scope.kind === "run" && !members.runs.some((w) => w.call === scope.id)) {
      // The capsule says the run ended, but its snapshots do not: its window cannot be placed, and an empty change set would be a lie.
      throw new UnwindError("E_STORE_DAMAGED", `run ${scope.id}: its after snapshot (or its before) is missing, so its window cannot be placed`, { hint: "run unwind verify" });
    }
    if (members.sessions.size === 0 && members.runs.length === 0) {
      throw new UnwindError("E_SCOPE_UNKNOWN", `no evidence for task '${scope.id}': no session or run was recorded with it`, {
        hint: "label captures with UNWIND_TASK (or unwind run --task), or bind the task with: unwind task start",
      });
    }
    sessions = [...members.sessions];
    keep = members.has;
  }
  const files = new Set(sessions.map((s) => basename(sessionFile(ctx.store, s))));
  const bad = damaged.filter((d) => files.has(d.file));
  if (bad.length > 0) {
    throw new UnwindError("E_STORE_DAMAGED", `journal record ${bad[0]!.file}:${bad[0]!.line} is damaged (${bad[0]!.why}); refusing to guess what the scope changed`, {
      hint: "run unwind verify",
    });
  }
  const mine = records.filter((r) => keep(r));
  // A tree capture whose snapshot is gone: the call's changes cannot be placed, and "no changes" would be a lie (gc keeps what live records name).
  const have = new Set(snaps.map((x) => x.id));
  const lost = mine.find((r) => r.kind === "tree" && !have.has(r.snapshot) && (r.root === undefined || r.root === ctx.root));
  if (lost?.kind === "tree") {
    throw new UnwindError(
      "E_STORE_DAMAGED",
      `snapshot ${lost.snapshot}, taken at the ${lost.phase} of ${lost.session} ${lost.call}, is missing (its ref was removed): refusing to guess what the scope changed`,
      {
        hint: "run unwind verify; a snapshot ref restored from a backup (refs/unwind/snapshots/) brings it back",
      },
    );
  }
  const mineRuns = runs.filter((w) => keep(w));
  if (scope.kind === "task") {
    // SPEC section 6: a task several worktrees claim is refused, naming the sessions and runs; undone here, it would take back one part only.
    const byRoot = new Map<string, Set<string>>();
    for (const r of [...mine, ...mineRuns]) {
      if (r.root === undefined) continue;
      let sessions = byRoot.get(r.root);
      if (!sessions) byRoot.set(r.root, (sessions = new Set()));
      sessions.add(r.session);
    }
    if (byRoot.size > 1) {
      const claims = [...byRoot].map(([root, ss]) => `${root} (${[...ss].sort().join(", ")})`).join("; ");
      throw new UnwindError("E_SCOPE_AMBIGUOUS", `task ${id} is claimed by several worktrees: ${claims}`, {
        hint: "take its sessions and runs back one by one, each from its own worktree: unwind undo --session S, unwind undo --run R",
      });
    }
  }
  const all = [...mine, ...mineRuns];
  if (all.length > 0 && all.every((r) => r.root !== undefined && r.root !== ctx.root)) {
    const roots = [...new Set(all.map((r) => r.root))].join(", ");
    throw new UnwindError("E_SCOPE_OTHER_WORKTREE", `${scope.kind} ${id} ran in another work tree (${roots}), not in ${ctx.root}`, {
      hint: "run unwind from that work tree, where its changes are",
    });
  }
  const carried = seen?.wantFacts === true && scope.kind !== "task" && scope.kind !== "run";
  const { calls, events, inexact, facts } = await journalTimeline(ctx, records, keep, snaps, partial, carried);
  if (inexact || (window && !membersRead(calls, read.unread))) return null;
  if (carried && facts) {
    let maxAt = "";
    for (const r of records) if (r.at > maxAt) maxAt = r.at;
    seen!.facts = { session: sessions[0]!, maxAt, partial, timeline: facts };
  }
  const since = opts.since;
  const inScope = (c: CallWindow) => keep(c) && (!since || c.start >= since);
  const takesBack = takeBacks(calls, inScope, (s) => callsOfScope(records, runs, s));
  const { entries, later, interleaved, touched } = attribute(events, inScope, { path: pathMatcher(opts.paths ?? []), takesBack });
  const s: Scope = { kind: scope.kind, id };
  if (scope.kind === "from-call") s.calls = new Set(mine.map((r) => r.call)).size;
  const uncaptured = uncapturedCalls(mine, since);
  return { cs: { scope: s, entries, ...(uncaptured.length > 0 ? { uncaptured } : {}) }, touched, laterWrites: later, interleaved };
}

/**
 * The scope's calls no capture saw (imported shell calls: `kind: "unknown"`),
 * once each, oldest first: they claim no path, so the change set cannot
 * show them, and undo must say they were not taken back (docs/import.md).
 */
function uncapturedCalls(mine: readonly JournalRecord[], since: string | undefined): UncapturedCall[] {
  const out = new Map<string, UncapturedCall>();
  for (const r of mine) {
    if (r.kind !== "unknown" || r.phase !== "pre" || (since !== undefined && r.at < since)) continue;
    const k = `${r.session}\0${r.call}`;
    if (!out.has(k)) out.set(k, { session: r.session, call: r.call, tool: r.tool, at: r.at, ...(r.command !== undefined ? { command: r.command } : {}) });
  }
  return [...out.values()].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

/**
 * `--from-call C` (SPEC section 4): call C and every later call of its
 * session, "the agent went wrong at this step". Later by when each call
 * began (its first record), so a call that began before C and ended after
 * it is not one of them.
 */
function fromCall(records: readonly JournalRecord[], c: { session: string; call: string }): (r: { session: string; call: string }) => boolean {
  const began = new Map<string, string>();
  for (const r of records) if (r.session === c.session && !began.has(r.call)) began.set(r.call, r.at);
  const from = began.get(c.call) ?? "";
  const later = new Set([...began].filter(([, at]) => at >= from).map(([call]) => call));
  return (r) => r.session === c.session && later.has(r.call);
}

/**
 * Who belongs to a task or a run: for a task, the sessions labelled with it
 * and the runs recorded with it (`unwind run --task`); for a run, its own
 * window and the calls captured inside it (hooks label them with
 * `UNWIND_RUN`). One rule for resolving a scope and for reading which of
 * unwind's receipts took it back.
 */
function scopeMembers(records: readonly JournalRecord[], runs: readonly RunWindow[], scope: { kind: "task" | "run"; id: string }) {
  const sessions = new Set<string>();
  const inner = new Set<string>();
  const mineRuns = runs.filter((w) => (scope.kind === "task" ? w.task === scope.id : w.call === scope.id));
  const runIds = new Set(mineRuns.map((w) => w.call));
  for (const r of records) {
    if (scope.kind === "task" && r.task === scope.id) sessions.add(r.session);
    else if (r.run !== undefined && runIds.has(r.run)) inner.add(`${r.session}\0${r.call}`);
  }
  const runNames = new Set(mineRuns.map((w) => w.session));
  const has = (c: { session: string; call: string }) => sessions.has(c.session) || runNames.has(c.session) || inner.has(`${c.session}\0${c.call}`);
  return { sessions, runs: mineRuns, has };
}

/**
 * The calls a receipt's scope names, as the scope was resolved when it was
 * applied (the full session name, the call id, the task): the same rules
 * as `journalChangeSet`'s. A call id is matched in every session that has
 * it, since a receipt does not say which. Null for scopes that are no set of
 * calls (a snapshot, a baseline).
 */
function callsOfScope(records: readonly JournalRecord[], runs: readonly RunWindow[], scope: Scope): ((c: { session: string; call: string }) => boolean) | null {
  if (scope.kind === "session") return (c) => c.session === scope.id;
  if (scope.kind === "call") return (c) => c.call === scope.id;
  if (scope.kind === "from-call") {
    const starts = [...new Set(records.filter((r) => r.call === scope.id).map((r) => r.session))].map((session) => fromCall(records, { session, call: scope.id }));
    return (c) => starts.some((f) => f(c));
  }
  if (scope.kind !== "task" && scope.kind !== "run") return null;
  return scopeMembers(records, runs, { kind: scope.kind, id: scope.id }).has;
}

/** The paths each tree-captured call may have changed (shared ones included), for `unwind log`. */
export async function treeCallPaths(ctx: Context, read: readonly JournalRecord[], wanted: ReadonlySet<string>): Promise<Map<string, string[]>> {
  const records = [...read, ...(await closeStale(ctx, read, false))];
  if (wanted.size === 0) return new Map();
  const { events } = await journalTimeline(ctx, records, (c) => wanted.has(`${c.session}\0${c.call}`));
  return candidatePaths(events, wanted);
}

/**
 * `treeCallPaths` of calls that all began at or after `from`, none open,
 * read as a session's fold reads the record (`foldFrom`): the files of their
 * `sessions` and those with a record since the snapshot before `from`, and
 * the snapshots from that one on; the whole record where that part cannot
 * vouch for the answer.
 */
export async function laterTreeCallPaths(ctx: Context, from: string, sessions: ReadonlySet<string>, wanted: ReadonlySet<string>): Promise<Map<string, string[]>> {
  if (wanted.size === 0) return new Map();
  const found = await snapshotsFrom(ctx, from);
  if (found) {
    const read = readJournal(ctx.store, { since: found.since, sessions });
    const partial = read.skipped > 0;
    if (!read.damaged.length && !(partial && prelessBefore(read.records, found.since)) && !hasOpenCalls(ctx, read.records)) {
      const { events, inexact } = await journalTimeline(ctx, read.records, (c) => wanted.has(`${c.session}\0${c.call}`), found.snaps, partial);
      if (!inexact) return candidatePaths(events, wanted);
    }
  }
  return treeCallPaths(ctx, readJournal(ctx.store).records, wanted);
}

/** The paths of the events each wanted tree call is a candidate for. */
function candidatePaths(events: Timeline["events"], wanted: ReadonlySet<string>): Map<string, string[]> {
  const found = new Map<string, Set<string>>();
  for (const [path, list] of events) {
    for (const e of list) {
      for (const c of e.candidates) {
        if (c.kind !== "tree") continue;
        const k = `${c.session}\0${c.call}`;
        if (!wanted.has(k)) continue;
        const paths = found.get(k);
        if (paths) paths.add(path);
        else found.set(k, new Set([path]));
      }
    }
  }
  return new Map([...found].map(([k, paths]) => [k, [...paths]]));
}
