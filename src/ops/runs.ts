import { commandLine, endProcesses } from "../capture/run/owned.js";
import type { IdRef } from "../domain/ids.js";
import { jsonPath } from "../domain/paths.js";
import type { Decision } from "../domain/policy.js";
import { usage } from "../domain/errors.js";
import type { Context } from "../repo/context.js";
import { resolveRun } from "../scope/capsule.js";
import { taskName } from "../scope/resolve.js";
import { Capsules, type Capsule, type CapsuleEntry, type EndOutcome, type ProcessRecord, type RunResult } from "../store/capsules.js";
import { parseDuration } from "../store/config.js";
import { readJournal } from "../store/journal.js";
import { listed, type ListOptions } from "./list.js";
import { fetchedRuns } from "../store/shared.js";

export interface RunSummary {
  id: string;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  /** What `unwind run` exited with (the command's code, or 128 + signal). */
  exit: number;
  signal: string | null;
  timedOut: boolean;
  command: string[];
  cwd: string;
  task: string | null;
  /** Changed paths per policy decision. */
  changes: Record<Decision, number>;
  processes: number;
  /** Whether the capsule's seal holds (`unwind verify` says why not). */
  sealed: boolean;
  /** Only on a fetched run (SPEC section 14): the origin it was pushed from. */
  origin?: string;
}

/** Run capsules, newest first (SPEC section 9). */
export async function runs(ctx: Context, opts: ListOptions & { task?: string | undefined } = {}): Promise<{ runs: RunSummary[]; total: number }> {
  taskName(opts.task);
  const capsules = new Capsules(ctx);
  const broken = new Set((await capsules.verify()).map((p) => p.id));
  const all: RunSummary[] = [];
  for (const id of capsules.ids()) {
    const c = capsules.tryRead(id);
    if (!c) continue;
    if (opts.task !== undefined && c.task !== opts.task) continue;
    all.push(summary(c, !broken.has(id)));
  }
  // Fetched runs (SPEC section 14), their seal and content checked by `fetchedRuns`/`verify`; a damaged one is not listed.
  for (const f of await fetchedRuns(ctx)) {
    if (!f.doc || (opts.task !== undefined && f.doc.run.task !== opts.task)) continue;
    all.push({ ...summary(f.doc.run, true), origin: f.origin });
  }
  all.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
  const { items, total } = listed(all, opts, (r) => r.startedAt);
  return { runs: items, total };
}

function summary(c: Capsule, sealed: boolean): RunSummary {
  const changes: Record<Decision, number> = { allow: 0, review: 0, deny: 0 };
  for (const e of c.entries) changes[e.decision]++;
  return {
    id: c.id,
    startedAt: c.startedAt,
    endedAt: c.endedAt,
    durationMs: c.durationMs,
    exit: c.exit.status,
    signal: c.exit.signal,
    timedOut: c.exit.timedOut,
    command: c.argv,
    cwd: c.cwd,
    task: c.task,
    changes,
    processes: c.processes.length,
    sealed,
  };
}

export interface RunShow {
  id: string;
  seal: string;
  record: Omit<Capsule, "entries" | "processes" | "prev" | "v">;
  entries: (Omit<CapsuleEntry, "path"> & { path: string; pathBytes?: string })[];
  processes: ProcessRecord[];
  /** What was added after sealing: undo receipts, cleanups. */
  results: RunResult[];
  /** Sessions captured inside the run (hooks and `unwind record` label them with `UNWIND_RUN`). */
  sessions: string[];
  /** What a run capsule cannot take back (SPEC section 9), this run's own cases first. */
  cannotTakeBack: string[];
}

/** One capsule, its seal checked first (a tampered capsule is refused: exit 4). */
export async function runShow(ctx: Context, id: IdRef): Promise<RunShow> {
  const { capsule, seal, capsules } = await resolveRun(ctx, id);
  const { entries, processes, prev: _prev, v: _v, ...record } = capsule;
  return {
    id: capsule.id,
    seal,
    record,
    entries: entries.map((e) => ({ ...e, ...jsonPath(e.path) })),
    processes,
    results: capsules.results(capsule.id).results,
    sessions: [...new Set(readJournal(ctx.store).records.flatMap((r) => (r.run === capsule.id ? [r.session] : [])))],
    cannotTakeBack: cannotTakeBack(capsule),
  };
}

function cannotTakeBack(c: Capsule): string[] {
  const out: string[] = [];
  if (!c.rollback) out.push("any of its changes: it was recorded without rollback (hashes only, no earlier bytes)");
  const stuck = c.entries.filter((e) => !e.reversible && c.rollback);
  for (const e of stuck.slice(0, 20)) out.push(`${jsonPath(e.path).path}: ${e.why}`);
  if (stuck.length > 20) out.push(`… and ${stuck.length - 20} more path(s) that cannot be taken back`);
  const running = c.processes.filter((p) => p.end === "still-running" || p.end === "access-denied");
  if (c.keepProcesses) out.push("what the processes it left running (--keep-processes) did after the run ended: see `unwind cleanup`");
  else if (running.length > 0) out.push(`what the ${running.length} process(es) it could not end did after the run ended`);
  if (c.processTracking === "group") out.push("processes that left its process group: without /proc only the child and its group are known");
  out.push(
    `effects outside the root ${c.root} (home directory, /tmp, other repositories)`,
    "ignored files (.gitignore, info/exclude): they are not in snapshots",
    "git's own state: commits, branches, tags, the index, the stash (undo writes work-tree files only)",
    "network traffic, APIs, databases, package registries, remote git (a push), messages sent",
    "files over the size cap (recorded by size and hash only)",
  );
  return out;
}

export interface CleanupReport {
  run: string;
  dryRun: boolean;
  graceMs: number;
  /**
   * `cmd`: what each runs now, read from the process itself before any
   * signal; for one gone since, what it ran when the run ended; null when
   * neither is known (`comm` is then its name as first seen).
   */
  processes: { pid: number; start: string | null; comm: string; cmd: string[] | null; outcome: EndOutcome }[];
  /** Processes that may still be running: exit 1 when any. */
  remaining: number;
}

/**
 * Ends a run's leftover processes by identity (SPEC section 9): only the
 * processes its capsule records, each only while its pid and start time
 * both still match. The capsule's seal is checked first: a forged capsule
 * could name any process.
 */
export async function cleanup(ctx: Context, id: IdRef, opts: { grace?: string | undefined; dryRun?: boolean | undefined } = {}): Promise<CleanupReport> {
  let graceMs = 5000;
  if (opts.grace !== undefined) {
    try {
      graceMs = parseDuration(opts.grace);
    } catch {
      throw usage(`--grace ${opts.grace}: expected a duration such as 5s or 1m`);
    }
  }
  const { capsule, capsules } = await resolveRun(ctx, id);
  const dryRun = Boolean(opts.dryRun);
  const now = capsule.processes.map((p) => (p.start === null ? null : commandLine(p.pid, p.start)));
  const ended = await endProcesses(capsule.processes, { graceMs, dryRun });
  const processes = ended.map((e, k) => ({ pid: e.pid, start: e.start, comm: capsule.processes[k]!.comm, cmd: now[k] ?? capsule.processes[k]!.cmd ?? null, outcome: e.outcome }));
  if (!dryRun) {
    const results = processes.map(({ comm: _c, cmd, ...p }, k) => ({ ...p, ...(now[k] ? { cmd: now[k] } : {}) }));
    capsules.appendResult(capsule.id, { kind: "cleanup", at: new Date().toISOString(), dryRun, processes: results });
  }
  const remaining = processes.filter((p) => p.outcome === "still-running" || p.outcome === "access-denied" || p.outcome === "unverifiable").length;
  return { run: capsule.id, dryRun, graceMs, processes, remaining };
}
