import { Exit } from "../../domain/errors.js";
import type { ListOptions } from "../../ops/list.js";
import type { RunReport } from "../../ops/run.js";
import type { CleanupReport, RunShow } from "../../ops/runs.js";
import type { Globals } from "../globals.js";
import { more, paint, shortIds, showJsonPath, short, table, when, type Output } from "../render.js";
import { openFor } from "./common.js";

const seconds = (ms: number) => (ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`);

const counted = (c: { allow: number; review: number; deny: number }) => `${c.allow} allow, ${c.review} review, ${c.deny} deny`;

/**
 * `unwind run`: stdout and stdin are the command's, untouched; what unwind
 * has to say goes to stderr (with --json, one JSON line there), and the
 * exit code is the command's own.
 */
export async function run(globals: Globals, argv: string[], opts: { id?: string; task?: string; policy?: string; timeout?: string; rollback?: boolean; keepProcesses?: boolean }): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.run(argv, { id: opts.id, task: opts.task, policy: opts.policy, timeout: opts.timeout, rollback: opts.rollback, keepProcesses: opts.keepProcesses });
  return { json: r, human: renderRun(r), exit: r.status, stream: "stderr" };
}

function renderRun(r: RunReport): string {
  const how = r.exit.timedOut ? `timed out, ${r.exit.signal ?? `exit ${r.exit.code}`}` : r.exit.signal ? `ended by ${r.exit.signal}` : `exit ${r.exit.code}`;
  const lines: string[] = [];
  if (!r.sealed) {
    lines.push(`unwind: run ${r.id}: ${how} after ${seconds(r.durationMs)}; its capsule could NOT be sealed: ${r.error} (unwind status keeps this)`);
    return lines.join("\n");
  }
  const n = r.changes.allow + r.changes.review + r.changes.deny;
  const procs =
    r.processes.owned > 1 || r.processes.left > 0 || r.processes.ended > 0
      ? `; ${r.processes.owned} process(es) owned, ${r.processes.ended} ended when it exited${r.processes.left ? `, ${r.processes.left} still running (unwind cleanup ${r.id})` : ""}`
      : "";
  lines.push(`unwind: run ${r.id}: ${how} after ${seconds(r.durationMs)}; ${n} path(s) changed (${counted(r.changes)})${procs}`);
  for (const t of r.tamper) lines.push(paint(`unwind: warning: ${t}`, "yellow", false));
  if (n > 0) lines.push(`unwind: review it: unwind run show ${r.id}; take back review and deny paths: unwind undo --run ${r.id} --safe-only`);
  return lines.join("\n");
}

export async function runs(globals: Globals, opts: ListOptions & { task?: string }): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.runs(opts);
  const ids = shortIds(r.runs.map((x) => x.id));
  const rows = r.runs.map((x) => [
    ids.get(x.id)!,
    when(x.startedAt),
    seconds(x.durationMs),
    x.timedOut ? `${x.exit} (timeout)` : String(x.exit),
    counted(x.changes),
    (x.sealed ? "" : "[SEAL BROKEN] ") + (x.origin !== undefined ? `[from ${x.origin}] ` : "") + x.command.join(" "),
  ]);
  const human = rows.length ? [table([["RUN", "WHEN", "TOOK", "EXIT", "CHANGES", "COMMAND"], ...rows], [], { fit: [5] }), ...more(rows.length, r.total, "runs")].join("\n") : "no runs recorded";
  return { json: r, human, exit: Exit.ok };
}

export async function runShow(globals: Globals, id: string): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.runShow(id);
  return { json: r, human: renderShow(r), exit: Exit.ok };
}

function renderShow(r: RunShow): string {
  const c = r.record;
  const exit = c.exit.signal ? `${c.exit.status} (${c.exit.signal})` : String(c.exit.status);
  const head = table([
    ["run", r.id],
    ["command", c.argv.join(" ")],
    ["cwd", c.cwd],
    ["task", c.task ?? "-"],
    ["sessions", r.sessions.join(", ") || "none captured inside it"],
    ["started", `${c.startedAt} (${when(c.startedAt)}), took ${seconds(c.durationMs)}`],
    ["exit", exit + (c.exit.timedOut ? `, timed out after ${seconds(c.timeoutMs ?? 0)}` : "")],
    ["policy", c.policy.source ? `${c.policy.source} (${short(c.policy.sha256)})` : "none: every path is review"],
    ["rollback", c.rollback ? "yes" : "no: hashes only, undo refused"],
    ["snapshots", `${c.before?.snapshot ?? "-"} -> ${c.after.snapshot}`],
    ["seal", `${r.seal} (holds)`],
  ]);
  const entries = r.entries.length
    ? table(
        r.entries.map((e) => [
          e.decision,
          e.change,
          showJsonPath(e),
          `${short(e.pre?.oid ?? e.pre?.sha256)} -> ${short(e.post?.oid ?? e.post?.sha256)}`,
          e.reversible ? "" : `cannot be taken back: ${e.why}`,
        ]),
      )
    : "no changes";
  const procs = r.processes.length
    ? table(
        [
          ["PID", "START", "HOW", "COMMAND", "WHEN THE RUN ENDED"],
          ...r.processes.map((p) => [
            String(p.pid),
            p.start ?? "?",
            p.how,
            processName(p.how === "child" && !p.cmd ? { ...p, cmd: c.argv } : p),
            p.end ?? (p.how === "child" ? "exited" : c.keepProcesses ? "kept (--keep-processes)" : "-"),
          ]),
        ],
        [],
        { fit: [3] },
      )
    : "none recorded";
  const results = r.results.length
    ? r.results
        .map((x) =>
          x.kind === "undo"
            ? `${x.at}  undo${x.safeOnly ? " --safe-only" : ""}: receipt ${x.receipt}`
            : `${x.at}  cleanup: ${x.processes.map((p) => `${p.pid} ${p.outcome}`).join(", ") || "nothing recorded"}`,
        )
        .join("\n")
    : "none yet";
  const tamper = c.tamper.length ? ["", "Tampering seen while it ran:", ...c.tamper.map((t) => `  ${t}`)] : [];
  return [
    head,
    ...tamper,
    "",
    "Changes:",
    entries,
    "",
    "Processes:",
    procs,
    "",
    "Results since it was sealed:",
    results,
    "",
    "What it cannot take back:",
    ...r.cannotTakeBack.map((x) => `  - ${x}`),
  ].join("\n");
}

export async function cleanup(globals: Globals, id: string, opts: { grace?: string; dryRun?: boolean }): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.cleanup(id, opts);
  return { json: r, human: renderCleanup(r), exit: r.remaining > 0 ? Exit.partial : Exit.ok };
}

function renderCleanup(r: CleanupReport): string {
  const rows = r.processes.map((p) => [String(p.pid), p.start ?? "?", processName(p), r.dryRun && p.outcome === "still-running" ? "still-running (would be signalled)" : p.outcome]);
  const body = rows.length ? table([["PID", "START", "COMMAND", "OUTCOME"], ...rows], [], { fit: [2] }) : "no processes recorded";
  const summary =
    r.remaining > 0
      ? `${r.remaining} process(es) may still be running${r.dryRun ? "; dry run: nothing was signalled" : ""}`
      : `none of run ${r.run}'s processes remain${r.dryRun ? "; dry run: nothing was signalled" : ""}`;
  return `${body}\n${summary}`;
}

/** A process as a person knows it: what it runs (its argv, read from itself), else its name as first seen. */
function processName(p: { comm: string; cmd?: string[] | null | undefined }): string {
  return p.cmd?.length ? p.cmd.join(" ") : p.comm || "-";
}
