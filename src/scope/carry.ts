import { readFileSync } from "node:fs";
import { type Snapshot, snapshotsFrom, snapshotTimes } from "../capture/snapshot.js";
import { type Bloom, bloomMayHold } from "../domain/bloom.js";
import { sha256 } from "../domain/hash.js";
import { storePath } from "../domain/store-layout.js";
import type { Context } from "../repo/context.js";
import { anyOpen, appendedSince, type FileMark, journalMarks, type JournalRecord } from "../store/journal.js";
import { pathsChanged, stepsOf } from "./steps.js";
import { someUnseen } from "./visibility.js";
import type { RepoPath } from "../domain/types.js";

/**
 * A kept change set carried forward (docs/design.md, "A kept change set
 * carried forward"). A change set kept on disk (src/store/changeset-cache.ts)
 * names the record as it was; any capture since, by any agent, moves the
 * record's key, and the next look folded the whole record since the scope
 * began again: a second and more on a long record, while another agent
 * works on. Yet what was appended since can bear on a session's change set
 * only through the paths it names. This tells, from what was appended
 * alone, whether the kept one still holds; where it cannot tell, the scope
 * is folded again. It holds when:
 *
 * - the record only grew: every journal file kept its bytes (same inode,
 *   same last bytes before its old end), no receipt was written (an undo or
 *   redo moves which calls are taken back), no snapshot was dropped;
 * - everything appended is later than everything the fold read (the
 *   horizon), belongs to another session, and makes whole calls (a post
 *   whose pre came before would move an old window), none still open, and
 *   no snapshot of a run (a run's window reaches back to its before);
 * - no path appended (captured, or changed between this work tree's new
 *   snapshots) is one that bore on the fold, or one first captured by the
 *   end of the scope's last tree window (a later capture of it would reach
 *   back across that window);
 * - new snapshots of this work tree come after the scope's last tree window
 *   ended, and no path that bore has a point past the last snapshot the
 *   fold read (the new one would place a change of it);
 * - a fold that read a window of the record (src/store/journal.ts) vouched
 *   for paths it left unread by the first snapshot: a path captured since
 *   must be one that snapshot holds, as that fold would have asked.
 */
/** The record as a fold read it: what tells whether it has only grown since, and by what. */
export interface RecordMark {
  /** The latest time of any record the fold read and of any snapshot. */
  horizon: string;
  marks: Record<string, FileMark>;
  /** The snapshot ids, sorted, hashed. */
  snapshots: string;
  /** The receipt chain's head and base, as read. */
  receipts: string;
}

export interface Carry extends RecordMark {
  /** The scope's session: a record of it appended means the scope itself moved. */
  session: string;
  /** When the scope's last tree window (a shell call, a run) ended; "" where it has none. */
  wantedEnd: string;
  /** Every path that bore on the fold, and the captured ones first seen by `wantedEnd`. */
  paths: Bloom;
  /** A path that bore has a point past the last snapshot the fold read. */
  dirty: boolean;
  /** Set where the fold read a window of the record and the scope has a tree window: its first snapshot. */
  first: Snapshot | null;
}

/**
 * Past this much journal appended since (a few thousand records), the
 * scope is folded again without reading it: a fold reads it anyway.
 */
const APPENDED_MAX = 2 * 1024 * 1024;

/** What a timeline knew (src/scope/calls.ts, `journalTimeline`) that a carry needs. */
export interface TimelineFacts {
  bears: ReadonlySet<string>;
  early: string[];
  wantedEnd: string;
  dirty: boolean;
  first: Snapshot | null;
}

/** The receipt chain as it stands: its head and its base. */
export function receiptsNow(store: string): string {
  const read = (name: string) => {
    try {
      return readFileSync(storePath(store, "receipts", name), "utf8");
    } catch {
      return "-";
    }
  };
  return `${read("HEAD")}\0${read("BASE")}`;
}

/** The snapshot ids as a carry names them; null where the refs cannot be listed so (a reftable). */
export function snapshotsNow(ctx: Context): { digest: string; latest: string; times: Map<string, string> } | null {
  const times = snapshotTimes(ctx);
  if (!times) return null;
  let latest = "";
  for (const at of times.values()) if (at > latest) latest = at;
  return { digest: sha256([...times.keys()].sort().join("\n")), latest, times };
}

/** The record's mark now, for a fold that read records up to `maxAt`; null where snapshots cannot be listed from their refs. */
export function recordMarkNow(ctx: Context, maxAt: string): RecordMark | null {
  const snaps = snapshotsNow(ctx);
  if (!snaps) return null;
  return { horizon: snaps.latest > maxAt ? snaps.latest : maxAt, marks: journalMarks(ctx.store), snapshots: snaps.digest, receipts: receiptsNow(ctx.store) };
}

/** What the record gained since a mark: the records appended, in time order, and this work tree's snapshots from the last one read on. */
export interface Growth {
  records: JournalRecord[];
  /** This work tree's last snapshot at or before the mark's horizon, then its new ones; empty where it has no new one. */
  here: Snapshot[];
  /** The record as it is now. */
  mark: RecordMark;
}

/**
 * What the record gained since `was`, where it did nothing but grow by
 * whole calls later than all it held: null where a receipt was written, a
 * snapshot dropped or one added at or before the horizon, a journal file did
 * more than grow (`appendedSince`) or more than APPENDED_MAX, a record
 * appended is not later than the horizon, a call appended has no pre among
 * them or is still open, or a new snapshot is a run's (a run's window
 * reaches back to its before snapshot).
 */
export async function grownSince(ctx: Context, was: RecordMark): Promise<Growth | null> {
  if (receiptsNow(ctx.store) !== was.receipts) return null;
  const snaps = snapshotsNow(ctx);
  if (!snaps) return null;
  const old = [...snaps.times].filter(([, at]) => at <= was.horizon).map(([id]) => id);
  if (sha256(old.sort().join("\n")) !== was.snapshots) return null;
  const appended = appendedSince(ctx.store, was.marks, APPENDED_MAX);
  if (!appended || !wholeCallsAfter(appended.records, was.horizon)) return null;
  let horizon = snaps.latest > was.horizon ? snaps.latest : was.horizon;
  for (const r of appended.records) if (r.at > horizon) horizon = r.at;
  let here: Snapshot[] = [];
  if (snaps.times.size > old.length) {
    const found = await snapshotsFrom(ctx, was.horizon);
    if (!found) return null;
    const added = found.snaps.filter((s) => s.at > was.horizon);
    if (added.some((s) => s.run !== undefined || s.runSince !== undefined || /^run /.test(s.label ?? ""))) return null;
    here = found.snaps.filter((s) => s.root === ctx.root).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    if (here.length === 1) here = [];
  }
  return { records: appended.records, here, mark: { horizon, marks: appended.marks, snapshots: snaps.digest, receipts: was.receipts } };
}

/** The paths file captures name among `records`. */
export const capturedPaths = (records: readonly JournalRecord[]): string[] => records.flatMap((r) => (r.kind === "file" ? [r.path] : []));

/**
 * The carry for the record as it is now, where the change set kept under
 * `carry` still holds for it; null where the scope must be folded again.
 */
export async function carryForward(ctx: Context, carry: Carry): Promise<Carry | null> {
  const grown = await grownSince(ctx, carry);
  if (!grown || grown.records.some((r) => r.session === carry.session)) return null;
  const captured = capturedPaths(grown.records);
  const paths = new Set(captured);
  if (grown.here.length > 0) {
    // The pair from the last snapshot the fold read to the first new one would place a change of a path with a point between.
    if (carry.dirty || (carry.wantedEnd !== "" && carry.wantedEnd > grown.here[0]!.at)) return null;
    for (const p of await pathsChanged(ctx, stepsOf(ctx, grown.here))) paths.add(p);
  }
  for (const p of paths) if (bloomMayHold(carry.paths, p)) return null;
  if (carry.first && captured.length > 0 && (await unreadMayBear(ctx, carry.first, captured))) return null;
  return { ...carry, ...grown.mark };
}

/** Whether every record is later than `horizon`, and of a call whose pre is among them, none still open. */
function wholeCallsAfter(records: readonly JournalRecord[], horizon: string): boolean {
  const begun = new Set<string>();
  for (const r of records) {
    if (r.at <= horizon) return false;
    const k = `${r.session}\0${r.call}`;
    if (r.phase === "pre") begun.add(k);
    else if (!begun.has(k)) return false;
  }
  return !anyOpen(records);
}

/**
 * Whether a path captured since may have a capture in the part of the
 * record a windowed fold left unread that bears on the scope: as that fold
 * asks it (src/scope/calls.ts, `outsideBears`), a path the first snapshot
 * can see (held there, over the cap there, or absent and not ignored) has a
 * point there that no earlier capture can reach across.
 */
const unreadMayBear = (ctx: Context, first: Snapshot, captured: readonly string[]): Promise<boolean> => someUnseen(ctx, stepsOf(ctx, [first])[0]!, captured as RepoPath[]);
