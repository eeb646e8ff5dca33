import { sortByPath } from "../domain/paths.js";
import type { Context } from "../repo/context.js";
import { hasOpenCalls, laterTreeCallPaths, resolveSessionName, treeCallPaths } from "../scope/calls.js";
import { capturedPaths, grownSince, type RecordMark, recordMarkNow } from "../scope/carry.js";
import { treeStates } from "../scope/tree.js";
import { type Bloom, bloomMayHold, bloomOfStrings, bloomWith } from "../domain/bloom.js";
import { OPEN } from "../scope/fold/timeline.js";
import type { RepoPath } from "../domain/types.js";
import { keepsExecBits, type Snapshot, snapshotsFrom } from "../capture/snapshot.js";
import { pruneRecordIndex, readRecordIndex, readRecordIndexAny, recordKey, writeRecordIndex } from "../store/record-index.js";
import { sha256 } from "../domain/hash.js";
import { journalReadHere, readJournal, type JournalRecord } from "../store/journal.js";
import { listed, type ListOptions } from "./list.js";
import { UnwindError } from "../domain/errors.js";
import { holdsId, type IdTable, idTable, shortIds, shortOf, withIds } from "../domain/ids.js";
import type { SharedSessionDoc, SharedSummary } from "../domain/share.js";
import { fetchedChangeSet, findFetched } from "../scope/fetched.js";
import { fetchedSessions, type FetchedSession } from "../store/shared.js";

/** One session as `unwind sessions` lists it: the summary a shared record carries too, plus its name and harness. */
export interface SessionSummary extends SharedSummary {
  session: string;
  harness: string;
  /** Only on a fetched session (SPEC section 14): the origin it was pushed from. Local sessions have none. */
  origin?: string;
}

/** A session as listed: its summary and `short`, the shortest tail that names it among every session here (`shortIds`), which every command accepts for it. */
export interface ListedSession extends SessionSummary {
  short: string;
}

/** Pure: one summary per session, most recently active first; `treePaths` holds what each tree-captured call changed. */
export function summarizeSessions(records: readonly JournalRecord[], treePaths: ReadonlyMap<string, readonly string[]> = new Map()): SessionSummary[] {
  const by = new Map<string, { r: JournalRecord[]; calls: Set<string>; paths: Set<string>; agents: Set<string>; tasks: Set<string> }>();
  for (const r of records) {
    let s = by.get(r.session);
    if (!s) by.set(r.session, (s = { r: [], calls: new Set(), paths: new Set(), agents: new Set(), tasks: new Set() }));
    s.r.push(r);
    s.calls.add(r.call);
    if (r.kind === "file") s.paths.add(r.path);
    for (const p of treePaths.get(`${r.session}\0${r.call}`) ?? []) s.paths.add(p);
    if (r.agent) s.agents.add(r.agent);
    if (r.task) s.tasks.add(r.task);
  }
  return [...by.entries()]
    .map(([session, s]) => ({
      session,
      harness: s.r[0]!.harness,
      agents: [...s.agents].sort(),
      tasks: [...s.tasks].sort(),
      first: s.r[0]!.at,
      last: s.r[s.r.length - 1]!.at,
      calls: s.calls.size,
      paths: s.paths.size,
    }))
    .sort((a, b) => (a.last < b.last ? 1 : a.last > b.last ? -1 : 0));
}

/** Sessions with harness, agent, task, first/last time, calls and paths; most recently active first. */
export async function sessions(ctx: Context, opts: ListOptions & { task?: string | undefined } = {}): Promise<{ sessions: ListedSession[]; total: number }> {
  let all: SessionSummary[] = await listing(ctx, "sessions");
  // Fetched sessions (SPEC section 14) are listed beside local ones, with their origin.
  const fetched = await fetchedSummaries(ctx);
  if (fetched.length > 0) all = [...all, ...fetched].sort((a, b) => (a.last < b.last ? 1 : a.last > b.last ? -1 : 0));
  // Unique among every session, not only those listed: what is shown must resolve whatever the filter.
  const short = shortIds(all.map((s) => s.session));
  if (opts.task !== undefined) all = all.filter((s) => s.tasks.includes(opts.task!));
  const { items, total } = listed(all, opts, (s) => s.last);
  return { sessions: items.map((s) => ({ ...s, short: short.get(s.session)! })), total };
}

/**
 * What `sessions` and `log` list of the local record: every session's
 * summary and every call's, newest first, with the paths each changed.
 * Kept in the record index (src/store/record-index.ts) and worked out
 * again whenever the record differs from what it was made of.
 */
interface Listing {
  sessions: SessionSummary[];
  /** The newest RECENT calls with their short ids among the local ones, and how many there are: a page of the log without reading every call. */
  recent: { total: number; calls: ListedCall[] };
  /**
   * Each session's calls, newest first, as this process worked them out:
   * every session's from the record, or only those a carry added to (the
   * others are read from their own part of the index, `stamps`).
   */
  bySession: Map<string, SessionCalls>;
  /** The key each session's calls were kept under (its part `calls-<16 hex>`), for the sessions not in `bySession`. */
  stamps: Record<string, string>;
  /** Every local call's id, as short ids are found among them. */
  ids: IdTable;
}

/** A session's calls, newest first; `tasks`: the tasks its records carry, for `log --task` (not listed). */
type SessionCalls = { c: CallSummary; tasks: string[] }[];

/** What the index's `calls` part holds: where each session's calls are kept, and every call's id. */
interface CallsDirectory {
  stamps: Record<string, string>;
  ids: IdTable;
}

/** How many of the newest calls the record index keeps apart: more than the UI's timeline lists (300), and `log`'s default (50). */
const RECENT = 1000;

/** In this process: the listing of each store and work tree, with the key it was made under (the UI asks for sessions and log at once). */
const made = new Map<string, { key: string; listing: Promise<Listing> }>();

const keyNow = (ctx: Context) => recordKey(ctx.store, ctx.commonDir, ctx.root, keepsExecBits(ctx) ? "x" : "-");

const hereOf = (ctx: Context) => `${ctx.store}\0${ctx.root}`;

/** This process's listing of the work tree, where it was made under `key`. */
function madeUnder(ctx: Context, key: string | null): Promise<Listing> | null {
  const known = key === null ? undefined : made.get(hereOf(ctx));
  return known?.key === key ? known.listing : null;
}

/** The sessions' summaries, or the newest calls: from the record index where it is current, else worked out (every part) and kept. */
async function listing<K extends "sessions" | "recent">(ctx: Context, part: K): Promise<Listing[K]> {
  const key = keyNow(ctx);
  const known = madeUnder(ctx, key);
  if (known) return (await known)[part];
  const kept = key === null ? null : readRecordIndex<Listing[K]>(ctx.store, ctx.root, part, key);
  return kept ?? (await workedOut(ctx, key))[part];
}

/**
 * The listing carried forward to `key` and kept; null where it cannot be.
 * A carry that cannot be worked out (a tree it names gone, a git that
 * fails) is no answer either: a full read says what is wrong, if anything.
 */
async function carriedTo(ctx: Context, key: string): Promise<Listing | null> {
  const carried = await carriedListing(ctx).catch(() => null);
  if (!carried) return null;
  keepListing(ctx, key, carried.listing, carried.carry);
  return carried.listing;
}

/**
 * The listing carried forward or worked out from the record (`whole`: from
 * the record, every session's calls in hand), kept under `key` (taken before
 * the record was read), and remembered in this process.
 */
async function workedOut(ctx: Context, key: string | null, whole = false): Promise<Listing> {
  const here = hereOf(ctx);
  const work = (async () => {
    const carried = key === null || whole ? null : await carriedTo(ctx, key);
    if (carried) return carried;
    const { records } = readJournal(ctx.store);
    const l = await workOut(ctx, records);
    // An open call's paths change by themselves as the work tree does: such a listing is not kept.
    if (key === null) return l;
    if (hasOpenCalls(ctx, records)) made.delete(here);
    else keepListing(ctx, key, l, await listingCarry(ctx, records), true);
    return l;
  })();
  if (key !== null) made.set(here, { key, listing: work });
  try {
    return await work;
  } catch (e) {
    made.delete(here);
    throw e;
  }
}

/**
 * The local calls of `only` (null: of every session), newest first, with
 * every local call's id: each session's calls from this process's listing
 * or from its part of the index, all of them worked out again where a part
 * is missing.
 */
async function localCalls(ctx: Context, only: ReadonlySet<string> | null): Promise<{ calls: SessionCalls; ids: IdTable }> {
  const key = keyNow(ctx);
  const l = await madeUnder(ctx, key);
  const dir = l ? { stamps: l.stamps, ids: l.ids } : key !== null ? readRecordIndex<CallsDirectory>(ctx.store, ctx.root, "calls", key) : null;
  const wanted = (s: string) => only === null || only.has(s);
  const parts = dir && keptCalls(ctx, Object.keys(dir.stamps).filter(wanted), dir.stamps, l?.bySession);
  if (dir && parts) return { calls: [...parts.values()].flat().sort(newestFirst), ids: dir.ids };
  // A part missing or of another key: the record read whole, which has every session's calls in hand.
  const fresh = await workedOut(ctx, key, true);
  return { calls: [...fresh.bySession].flatMap(([s, calls]) => (wanted(s) ? calls : [])).sort(newestFirst), ids: fresh.ids };
}

/** `sessions`' calls: from `have` where it holds them, else from each one's part of the index under its stamp; null where one is missing. */
function keptCalls(ctx: Context, sessions: Iterable<string>, stamps: Readonly<Record<string, string>>, have?: ReadonlyMap<string, SessionCalls>): Map<string, SessionCalls> | null {
  const out = new Map<string, SessionCalls>();
  for (const s of sessions) {
    const calls = have?.get(s) ?? (stamps[s] === undefined ? null : readRecordIndex<SessionCalls>(ctx.store, ctx.root, callsPart(s), stamps[s]));
    if (!calls) return null;
    out.set(s, calls);
  }
  return out;
}

/** The index part that keeps one session's calls. */
const callsPart = (session: string) => `calls-${sha256(session).slice(0, 16)}`;

/** Calls newest first; among calls that began at the same time, by session then id (a carried listing and a full read agree). */
function newestFirst(a: { c: CallSummary }, b: { c: CallSummary }): number {
  if (a.c.at !== b.c.at) return a.c.at < b.c.at ? 1 : -1;
  if (a.c.session !== b.c.session) return a.c.session < b.c.session ? -1 : 1;
  return a.c.call < b.c.call ? -1 : a.c.call > b.c.call ? 1 : 0;
}

/**
 * Keeps a listing under `key`: the calls of each session this process
 * worked out in a part of their own (a carry rewrites only those it added
 * to), then where each session's are, the newest calls, the summaries, and
 * what carries it forward where the key still holds once the carry is
 * worked out (a mark taken after a hook appended would vouch for records
 * the listing never read). `whole`: every session's calls are here, and
 * parts of sessions the record no longer holds are removed.
 */
function keepListing(ctx: Context, key: string, l: Listing, carry: ListingCarry | null, whole = false): void {
  for (const [s, calls] of l.bySession) {
    writeRecordIndex(ctx.store, ctx.root, callsPart(s), key, calls);
    l.stamps[s] = key;
  }
  if (whole) {
    const parts = new Set([...l.bySession.keys()].map(callsPart));
    pruneRecordIndex(ctx.store, ctx.root, (part) => !part.startsWith("calls-") || parts.has(part));
  }
  writeRecordIndex(ctx.store, ctx.root, "calls", key, { stamps: l.stamps, ids: l.ids } satisfies CallsDirectory);
  writeRecordIndex(ctx.store, ctx.root, "recent", key, l.recent);
  writeRecordIndex(ctx.store, ctx.root, "sessions", key, l.sessions);
  if (carry && keyNow(ctx) === key) {
    writeRecordIndex(ctx.store, ctx.root, "carry", key, { ...carry, captured: Buffer.from(carry.captured.bits).toString("base64") });
  }
}

/**
 * A listing carried forward (src/scope/carry.ts): what the record gained
 * since it was worked out can change only the calls it adds and their
 * sessions' summaries, where the record only grew by whole later calls
 * (`grownSince`) and:
 * - no tree call it held ended after the last snapshot it read: a change
 *   placed after that snapshot (by a new one's pair, or a capture since)
 *   could lie inside that call's window;
 * - a path captured since, if it was captured before, is one the last
 *   snapshot read holds: else a change between its captures may lie inside
 *   an old shell call's window (an ignored file's, which no snapshot sees);
 * - no call added reuses an id its session already holds.
 */
interface ListingCarry {
  mark: RecordMark;
  /** The latest record of a tree-captured call. */
  treeEnd: string;
  /** This work tree's newest snapshot when the listing was worked out. */
  last: Snapshot | null;
  /** Every path a file capture named. */
  captured: Bloom;
}

async function listingCarry(ctx: Context, records: readonly JournalRecord[]): Promise<ListingCarry | null> {
  let maxAt = "";
  let treeEnd = "";
  const paths: string[] = [];
  for (const r of records) {
    if (r.at > maxAt) maxAt = r.at;
    if (r.kind === "tree" && r.at > treeEnd) treeEnd = r.at;
    if (r.kind === "file") paths.push(r.path);
  }
  const mark = recordMarkNow(ctx, maxAt);
  if (!mark) return null;
  const found = await snapshotsFrom(ctx, mark.horizon);
  const mine = (found?.snaps ?? []).filter((s) => s.root === ctx.root && s.at <= mark.horizon);
  const last = mine.reduce<Snapshot | null>((m, s) => (m === null || s.at >= m.at ? s : m), null);
  return { mark, treeEnd, last, captured: bloomOfStrings(paths, paths.length) };
}

async function carriedListing(ctx: Context): Promise<{ listing: Listing; carry: ListingCarry } | null> {
  const prior = readRecordIndexAny<Omit<ListingCarry, "captured"> & { captured: string }>(ctx.store, ctx.root, "carry");
  if (!prior) return null;
  const was: ListingCarry = { ...prior.data, captured: { bits: new Uint8Array(Buffer.from(prior.data.captured, "base64")) } };
  const grown = await grownSince(ctx, was.mark);
  if (!grown) return null;
  // A tree call that ended past the last snapshot: a change after that snapshot (a new one's pair, or a capture since) may lie in its window.
  if (was.treeEnd > (was.last?.at ?? "")) return null;
  const again = capturedPaths(grown.records).filter((p) => bloomMayHold(was.captured, p));
  if (again.length > 0) {
    if (!was.last) return null;
    const held = await treeStates(ctx, was.last.tree, again as RepoPath[]);
    if (again.some((p) => !held.has(p as RepoPath) && !was.last!.toolargeFiles?.[p])) return null;
  }
  const sessions = readRecordIndex<SessionSummary[]>(ctx.store, ctx.root, "sessions", prior.key);
  const dir = readRecordIndex<CallsDirectory>(ctx.store, ctx.root, "calls", prior.key);
  const recent = readRecordIndex<Listing["recent"]>(ctx.store, ctx.root, "recent", prior.key);
  // An index of an older version keeps its calls otherwise: worked out again.
  if (!sessions || !Array.isArray(dir?.ids?.byTail) || !recent) return null;
  // The calls added, and their sessions' calls and summaries worked out again from those sessions' records; the rest read as kept.
  const touched = new Set(grown.records.map((r) => r.session));
  const kept = keptCalls(
    ctx,
    [...touched].filter((t) => dir.stamps[t] !== undefined),
    dir.stamps,
  );
  if (!kept) return null;
  const oldKeys = new Set([...kept.values()].flat().map((x) => `${x.c.session}\0${x.c.call}`));
  if (grown.records.some((r) => oldKeys.has(`${r.session}\0${r.call}`))) return null;
  const treeCalls = new Set(grown.records.filter((r) => r.kind === "tree").map((r) => `${r.session}\0${r.call}`));
  const treePaths = await laterTreeCallPaths(ctx, grown.records[0]?.at ?? grown.mark.horizon, touched, treeCalls);
  const added = callsOf(grown.records, treePaths);
  const bySession = new Map([...touched].map((t) => [t, [...added.filter((x) => x.c.session === t), ...(kept.get(t) ?? [])]]));
  const theirs = readJournal(ctx.store, { since: OPEN, sessions: touched }).records.filter((r) => touched.has(r.session));
  const kinds = new Map<string, Set<string>>();
  for (const r of theirs) {
    const k = `${r.session}\0${r.call}`;
    kinds.set(k, (kinds.get(k) ?? new Set()).add(r.kind));
  }
  // A call whose records are of two kinds lists its paths by its first one: its tree paths are not in the listing to reuse.
  if ([...kinds.values()].some((k) => k.size > 1)) return null;
  const theirTrees = new Map<string, readonly string[]>();
  for (const x of [...bySession.values()].flat()) if (x.c.capture === "tree") theirTrees.set(`${x.c.session}\0${x.c.call}`, x.c.paths);
  const summaries = [...sessions.filter((s) => !touched.has(s.session)), ...summarizeSessions(theirs, theirTrees)].sort((a, b) =>
    a.last < b.last ? 1 : a.last > b.last ? -1 : a.first < b.first ? -1 : a.first > b.first ? 1 : 0,
  );
  // Every call added began after every call kept (`grownSince`): the newest calls are the added ones, then the kept newest.
  const newest = [...added.map((x) => x.c), ...recent.calls].slice(0, RECENT);
  const listing = listingOf(
    summaries,
    bySession,
    { ...dir.stamps },
    withIds(
      dir.ids,
      added.map((x) => x.c.call),
    ),
    newest,
    recent.total + added.length,
  );
  const treeEnd = grown.records.reduce((m, r) => (r.kind === "tree" && r.at > m ? r.at : m), was.treeEnd);
  const last = grown.here.at(-1) ?? was.last;
  const carry = { mark: grown.mark, treeEnd, last, captured: bloomWith(was.captured, capturedPaths(grown.records)) };
  return { listing, carry };
}

/** The listing from the record itself: the fold of every tree-captured call (what each changed), then the summaries. */
async function workOut(ctx: Context, records: readonly JournalRecord[]): Promise<Listing> {
  const treeCalls = new Set(records.filter((r) => r.kind === "tree").map((r) => `${r.session}\0${r.call}`));
  const treePaths = treeCalls.size > 0 ? await treeCallPaths(ctx, records, treeCalls) : new Map<string, string[]>();
  const calls = callsOf(records, treePaths);
  const bySession = new Map<string, SessionCalls>();
  for (const x of calls) {
    const mine = bySession.get(x.c.session);
    if (mine) mine.push(x);
    else bySession.set(x.c.session, [x]);
  }
  const newest = calls.slice(0, RECENT).map((x) => x.c);
  return listingOf(summarizeSessions(records, treePaths), bySession, {}, idTable(calls.map((x) => x.c.call)), newest, calls.length);
}

/** Each call's summary, newest first: its file captures' paths, or a tree-captured call's from `treePaths`. */
function callsOf(records: readonly JournalRecord[], treePaths: ReadonlyMap<string, readonly string[]>): SessionCalls {
  const calls = new Map<string, { c: CallSummary; tasks: string[] }>();
  for (const r of records) {
    const key = `${r.session}\0${r.call}`;
    let c = calls.get(key);
    if (!c)
      calls.set(
        key,
        (c = { c: { call: r.call, session: r.session, tool: r.tool, at: r.at, capture: r.kind, paths: [], ...agentOf(r), ...(r.imported ? { imported: true as const } : {}) }, tasks: [] }),
      );
    if (r.kind === "file" && r.phase === "post" && !c.c.paths.includes(r.path)) c.c.paths.push(r.path);
    if (r.task !== undefined && !c.tasks.includes(r.task)) c.tasks.push(r.task);
  }
  // A tree-captured call's paths come from diffing its snapshots.
  for (const [k, paths] of treePaths) {
    const c = calls.get(k);
    if (c && c.c.capture === "tree") c.c.paths = sortByPath(paths.map((path) => ({ path }))).map((p) => p.path);
  }
  return [...calls.values()].sort(newestFirst);
}

/** A listing of `sessions`, with `newest` (the newest calls of `total`) given the short ids unique among `ids` and the sessions. */
function listingOf(sessions: SessionSummary[], bySession: Map<string, SessionCalls>, stamps: Record<string, string>, ids: IdTable, newest: readonly CallSummary[], total: number): Listing {
  const shorts = callShorts(
    ids,
    sessions.map((s) => s.session),
    [],
  );
  return { sessions, bySession, stamps, ids, recent: { total, calls: newest.map((c) => shorts(stripShorts(c))) } };
}

/** A call as summarized, without the short ids a listing gave it (a kept newest call's are worked out again). */
function stripShorts(c: CallSummary | ListedCall): CallSummary {
  if (!("short" in c)) return c;
  const { short: _s, sessionShort: _ss, ...rest } = c;
  return rest;
}

export interface CallSummary {
  call: string;
  session: string;
  tool: string;
  at: string;
  /** "unknown": an imported call no capture saw (a shell command from a transcript): its effects are unknown. */
  capture: "file" | "tree" | "unknown";
  paths: string[];
  /**
   * The subagent that made the call, where the harness names one (Claude
   * Code's `agent_id`, `agent_type`: docs/clients.md): its calls belong to the
   * session that started it. Absent on the main agent's calls.
   */
  agent?: string;
  agentType?: string;
  /** Read from the client's transcript by `unwind import`, not captured by a hook. */
  imported?: true;
  /** Only on a fetched session's call: the origin it was pushed from. */
  origin?: string;
}

/** A call as listed: `short` and `sessionShort` are the shortest tails that name the call and its session among every one here (`shortIds`). */
export interface ListedCall extends CallSummary {
  short: string;
  sessionShort: string;
}

/** Calls, newest first, with the paths each changed (50 unless `limit` says otherwise). */
export async function log(ctx: Context, opts: LogOptions = {}): Promise<{ calls: ListedCall[]; total: number }> {
  const shared = await fetchedSessions(ctx);
  // The first page of every local call, no fetched ones to merge: the newest calls as kept, short ids and all.
  if (opts.session === undefined && opts.task === undefined && opts.since === undefined && opts.path === undefined && shared.length === 0 && (opts.limit ?? 50) <= RECENT) {
    const recent = await listing(ctx, "recent");
    return { calls: recent.calls.slice(0, opts.limit ?? 50), total: recent.total };
  }
  const sessions = await listing(ctx, "sessions");
  const names = sessions.map((s) => s.session);
  const fetched = await fetchedCalls(ctx, names, shared, opts);
  const session = opts.session !== undefined && !fetched.only ? resolveSessionName(names, opts.session) : null;
  // One session's log reads that session's calls alone.
  const local = await localCalls(ctx, session === null ? null : new Set([session]));
  const shorts = callShorts(local.ids, names, shared);
  if (fetched.only) {
    const { items, total } = listed(fetched.calls, { since: opts.since, limit: opts.limit ?? 50 }, (c) => c.at);
    return { calls: items.map(shorts), total };
  }
  const mine = local.calls.filter((x) => opts.task === undefined || x.tasks.includes(opts.task)).map((x) => x.c);
  let newest = fetched.calls.length === 0 ? mine : [...mine, ...fetched.calls].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  const match = opts.path ? pathFilter(opts.path) : null;
  if (match) newest = newest.filter((c) => c.paths.some(match));
  const { items, total } = listed(newest, { since: opts.since, limit: opts.limit ?? 50 }, (c) => c.at);
  return { calls: items.map(shorts), total };
}

export interface LogOptions extends ListOptions {
  session?: string | undefined;
  task?: string | undefined;
  /** Only calls that changed a path holding this text, or matching it as a glob when it has `*` or `?` (`**` crosses folders): the UI's path filter. */
  path?: string | undefined;
}

/** The UI's path filter: a plain substring, or a glob when it holds * or ?. */
function pathFilter(f: string): (p: string) => boolean {
  if (!/[*?]/.test(f)) return (p) => p.includes(f);
  const re = new RegExp(
    `^${f
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*\*/g, "\0")
      .replace(/\*/g, "[^/]*")
      .replace(/\?/g, "[^/]")
      .replace(/\0/g, ".*")}$`,
  );
  return (p) => re.test(p);
}

/** The subagent a call's first record names (its own pre: a record written to close it comes later). */
function agentOf(r: JournalRecord): { agent?: string; agentType?: string } {
  return { ...(r.agent ? { agent: r.agent } : {}), ...(r.agentType ? { agentType: r.agentType } : {}) };
}

/**
 * Every session's and call's short id (`shortIds`), for output that names
 * them beside other things (a change's writers, a receipt's scope): a name
 * that is neither is given back as it is. The names come from the record
 * index where it is current or can be carried forward (its sessions, and
 * its calls' ids kept sorted), else from the journal read whole.
 */
export async function shortNames(ctx: Context): Promise<(name: string) => string> {
  const docs = (await fetchedSessions(ctx)).flatMap((f) => (f.doc ? [f.doc] : []));
  let names = await indexedNames(ctx);
  if (!names) {
    const { records } = readJournal(ctx.store);
    names = { sessions: records.map((r) => r.session), calls: idTable(records.map((r) => r.call)) };
  }
  const sessions = shortIds([...names.sessions, ...docs.map((d) => d.session)]);
  const calls = withIds(
    names.calls,
    docs.flatMap((d) => d.calls.map((c) => c.call)),
  );
  return (name) => sessions.get(name) ?? (holdsId(calls, name) ? shortOf(calls, name) : name);
}

/**
 * Every local session's name and call's id from the record index: as this
 * process or the index keeps them under the record's key now, or carried
 * forward to it (and kept). Null where neither holds (a listing worked out
 * whole is not worth it for the names), or where carrying it would cost
 * more than the journal this process already read.
 */
async function indexedNames(ctx: Context): Promise<{ sessions: string[]; calls: IdTable } | null> {
  const key = keyNow(ctx);
  if (key === null) return null;
  let l: Pick<Listing, "sessions" | "ids"> | null = await madeUnder(ctx, key);
  if (!l) {
    const sessions = readRecordIndex<SessionSummary[]>(ctx.store, ctx.root, "sessions", key);
    const dir = readRecordIndex<CallsDirectory>(ctx.store, ctx.root, "calls", key);
    if (sessions && dir) l = { sessions, ids: dir.ids };
  }
  // A fold in this process read the journal: its parse is at hand, cheaper than a carry.
  if (!l && journalReadHere(ctx.store)) return null;
  if (!l) {
    const carried = await carriedTo(ctx, key);
    if (!carried) return null;
    made.set(hereOf(ctx), { key, listing: Promise.resolve(carried) });
    l = carried;
  }
  return { sessions: l.sessions.map((s) => s.session), calls: l.ids };
}

/** The short ids of calls and sessions, unique among every local and fetched one (a page of the log must not show a tail another call shares). */
function callShorts(callIds: IdTable, sessionIds: readonly string[], shared: readonly FetchedSession[]): (c: CallSummary) => ListedCall {
  const docs = shared.flatMap((f) => (f.doc ? [f.doc] : []));
  const calls = withIds(
    callIds,
    docs.flatMap((d) => d.calls.map((c) => c.call)),
  );
  const sessions = shortIds([...sessionIds, ...docs.map((d) => d.session)]);
  return (c) => ({ ...c, short: shortOf(calls, c.call), sessionShort: sessions.get(c.session)! });
}

/** Summaries of the fetched sessions whose seal holds (a damaged one is for `verify` to name, not to list). */
async function fetchedSummaries(ctx: Context): Promise<SessionSummary[]> {
  return (await fetchedSessions(ctx)).flatMap((f) => (f.doc ? [{ session: f.doc.session, harness: f.doc.harness, ...f.doc.summary, origin: f.origin }] : []));
}

/**
 * The calls of fetched sessions for `log`: with `--session` naming no local
 * session but a fetched one, only that one's (`only`); with no `--session`,
 * every fetched session's (narrowed by `--task`) beside the local ones.
 */
async function fetchedCalls(
  ctx: Context,
  names: readonly string[],
  all: readonly FetchedSession[],
  opts: { session?: string | undefined; task?: string | undefined },
): Promise<{ only: boolean; calls: CallSummary[] }> {
  const callsOf = (d: SharedSessionDoc, origin: string) => d.calls.map((c) => ({ ...c, session: d.session, origin }));
  if (opts.session !== undefined) {
    try {
      resolveSessionName(names, opts.session);
      return { only: false, calls: [] };
    } catch (e) {
      if (!(e instanceof UnwindError && e.code === "E_SCOPE_UNKNOWN")) throw e;
      const f = await findFetched(ctx, opts.session);
      if (!f) throw e;
      const doc = (await fetchedChangeSet(ctx, f)).doc; // a damaged record is refused (exit 4), never listed as if sound
      return { only: true, calls: callsOf(doc, f.origin).filter(() => opts.task === undefined || doc.summary.tasks.includes(opts.task)) };
    }
  }
  return { only: false, calls: all.flatMap((f) => (f.doc && (opts.task === undefined || f.doc.summary.tasks.includes(opts.task)) ? callsOf(f.doc, f.origin) : [])) };
}
