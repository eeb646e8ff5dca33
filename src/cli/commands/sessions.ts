import { resolveSession, treeCallPaths } from "../../scope/calls.js";
import { sortByPath } from "../../domain/paths.js";
import { Exit } from "../../domain/errors.js";
import { readJournal, type JournalRecord } from "../../store/journal.js";
import type { Globals } from "../globals.js";
import { showPath, table, type Output } from "../render.js";
import { open } from "./common.js";

export interface SessionSummary {
  session: string;
  harness: string;
  agents: string[];
  tasks: string[];
  first: string;
  last: string;
  calls: number;
  paths: number;
}

/** Pure: one summary per session, most recently active first. */
export function summarizeSessions(records: readonly JournalRecord[]): SessionSummary[] {
  const by = new Map<string, { r: JournalRecord[]; calls: Set<string>; paths: Set<string>; agents: Set<string>; tasks: Set<string> }>();
  for (const r of records) {
    let s = by.get(r.session);
    if (!s) by.set(r.session, (s = { r: [], calls: new Set(), paths: new Set(), agents: new Set(), tasks: new Set() }));
    s.r.push(r);
    s.calls.add(r.call);
    if (r.kind === "file") s.paths.add(r.path);
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

const when = (iso: string) => iso.replace("T", " ").replace(/\.\d+Z$/, "Z");

export async function sessions(globals: Globals, opts: { task?: string }): Promise<Output> {
  const ctx = await open(globals);
  let list = summarizeSessions(readJournal(ctx.store).records);
  if (opts.task) list = list.filter((s) => s.tasks.includes(opts.task!));
  const rows = list.map((s) => [s.session, s.harness, s.agents.join(",") || "-", s.tasks.join(",") || "-", when(s.first), when(s.last), String(s.calls), String(s.paths)]);
  const human = list.length ? table([["SESSION", "HARNESS", "AGENT", "TASK", "FIRST", "LAST", "CALLS", "PATHS"], ...rows]) : "no sessions recorded";
  return { json: { sessions: list }, human, exit: Exit.ok };
}

export interface CallSummary {
  call: string;
  session: string;
  tool: string;
  at: string;
  capture: "file" | "tree";
  paths: string[];
}

export async function log(globals: Globals, opts: { session?: string; task?: string; limit?: number }): Promise<Output> {
  const ctx = await open(globals);
  const { records } = readJournal(ctx.store);
  const session = opts.session ? resolveSession(records, opts.session) : null;
  const mine = records.filter((r) => (!session || r.session === session) && (!opts.task || r.task === opts.task));
  const calls = new Map<string, CallSummary>();
  for (const r of mine) {
    const key = `${r.session}\0${r.call}`;
    let c = calls.get(key);
    if (!c) calls.set(key, (c = { call: r.call, session: r.session, tool: r.tool, at: r.at, capture: r.kind, paths: [] }));
    if (r.kind === "file" && r.phase === "post" && !c.paths.includes(r.path)) c.paths.push(r.path);
  }
  const newest = [...calls.values()].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, opts.limit ?? 50);
  // A tree-captured call's paths come from diffing its snapshots: only for the calls shown.
  const shown = new Set(newest.map((c) => `${c.session}\0${c.call}`));
  const treeShown = new Set([...shown].filter((k) => calls.get(k)?.capture === "tree"));
  for (const [k, paths] of await treeCallPaths(ctx, records, treeShown)) {
    const c = calls.get(k);
    if (c) c.paths = sortByPath(paths.map((path) => ({ path }))).map((p) => p.path);
  }
  const rows = newest.map((c) => [when(c.at), c.session, c.tool, c.call, c.paths.map(showPath).join(" ") || "-"]);
  const human = newest.length ? table([["TIME", "SESSION", "TOOL", "CALL", "PATHS"], ...rows]) : "no calls recorded";
  return { json: { calls: newest }, human, exit: Exit.ok };
}
