import { sortByPath } from "../domain/paths.js";
import type { Context } from "../repo/context.js";
import { resolveSession, treeCallPaths } from "../scope/calls.js";
import { readJournal, type JournalRecord } from "../store/journal.js";
import { listed, type ListOptions } from "./list.js";

export interface SessionSummary {
  session: string;
  harness: string;
  agents: string[];
  tasks: string[];
  first: string;
  last: string;
  calls: number;
  /** Paths its calls changed: file captures, and what its shell calls' snapshots show. */
  paths: number;
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
export async function sessions(ctx: Context, opts: ListOptions & { task?: string | undefined } = {}): Promise<{ sessions: SessionSummary[]; total: number }> {
  const { records } = readJournal(ctx.store);
  const treeCalls = new Set(records.filter((r) => r.kind === "tree").map((r) => `${r.session}\0${r.call}`));
  const treePaths = treeCalls.size > 0 ? await treeCallPaths(ctx, records, treeCalls) : new Map<string, string[]>();
  let all = summarizeSessions(records, treePaths);
  if (opts.task !== undefined) all = all.filter((s) => s.tasks.includes(opts.task!));
  const { items, total } = listed(all, opts, (s) => s.last);
  return { sessions: items, total };
}

export interface CallSummary {
  call: string;
  session: string;
  tool: string;
  at: string;
  capture: "file" | "tree";
  paths: string[];
}

/** Calls, newest first, with the paths each changed (50 unless `limit` says otherwise). */
export async function log(ctx: Context, opts: ListOptions & { session?: string | undefined; task?: string | undefined } = {}): Promise<{ calls: CallSummary[]; total: number }> {
  const { records } = readJournal(ctx.store);
  const session = opts.session !== undefined ? resolveSession(records, opts.session) : null;
  const mine = records.filter((r) => (!session || r.session === session) && (opts.task === undefined || r.task === opts.task));
  const calls = new Map<string, CallSummary>();
  for (const r of mine) {
    const key = `${r.session}\0${r.call}`;
    let c = calls.get(key);
    if (!c) calls.set(key, (c = { call: r.call, session: r.session, tool: r.tool, at: r.at, capture: r.kind, paths: [] }));
    if (r.kind === "file" && r.phase === "post" && !c.paths.includes(r.path)) c.paths.push(r.path);
  }
  const newest = [...calls.values()].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  const { items, total } = listed(newest, { since: opts.since, limit: opts.limit ?? 50 }, (c) => c.at);
  // A tree-captured call's paths come from diffing its snapshots: only for the calls shown.
  const treeShown = new Set(items.filter((c) => c.capture === "tree").map((c) => `${c.session}\0${c.call}`));
  for (const [k, paths] of await treeCallPaths(ctx, records, treeShown)) {
    const c = calls.get(k);
    if (c) c.paths = sortByPath(paths.map((path) => ({ path }))).map((p) => p.path);
  }
  return { calls: items, total };
}
