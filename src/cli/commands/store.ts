import { Exit } from "../../domain/errors.js";
import type { Globals } from "../globals.js";
import { bytes, paint, table, when, type Output } from "../render.js";
import { openFor } from "./common.js";

export async function verify(globals: Globals): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.verify();
  const human = r.ok
    ? `ok: ${r.blobs} blobs, ${r.records} journal records, ${r.receipts} receipts, ${r.snapshots} snapshots, ${r.runs} run capsules${r.shared ? `, ${r.shared} fetched records` : ""} verified`
    : [paint(`damaged: ${r.problems.length} problem(s)`, "red"), ...r.problems.map((p) => `  ${p.message}`)].join("\n");
  return { json: r, human, exit: r.ok ? Exit.ok : Exit.damaged };
}

export async function status(globals: Globals, opts: { ack?: boolean }): Promise<Output> {
  const u = await openFor(globals);
  const d = await u.status(opts);
  const rows = [
    ["root", d.root],
    ["store", `${d.store}${d.exists ? "" : " (not created yet)"}`],
    ["size", bytes(d.bytes)],
    ["blobs", String(d.blobs)],
    ["snapshots", `${d.snapshots} (all worktrees: ${d.snapshotsAllWorktrees})`],
    ["receipts", String(d.receipts)],
    ["runs", String(d.runs)],
    ["sessions", `${d.sessions} (${d.records} records${d.damagedRecords ? `, ${d.damagedRecords} damaged: run unwind verify` : ""})`],
    ...(d.imported.calls > 0
      ? [
          [
            "imported",
            `${d.imported.calls} call(s) in ${d.imported.sessions} session(s) from transcripts (unwind import)` +
              (d.imported.missedByHooks > 0 ? paint(`; ${d.imported.missedByHooks} call(s) imported that hooks missed: are the hooks firing? (unwind log lists them)`, "yellow") : ""),
          ],
        ]
      : []),
    ...(d.fetched > 0 ? [["fetched", `${d.fetched} record(s) from other machines (unwind sessions and unwind runs list them)`]] : []),
    ["errors", d.errorCount ? `${d.errorCount} not yet acknowledged (unwind status --ack once read)` : d.acknowledged ? `none (${d.acknowledged} acknowledged now)` : "none"],
  ];
  // Names as wide as the longest listed (copilot, 7), at least as wide as the first three's (6).
  const width = Math.max(6, ...d.hooks.map((h) => h.harness.length));
  for (const h of d.hooks) {
    const problems = [
      ...(h.missing.length > 0 ? [`no hook on ${h.missing.join(", ")}: run unwind init --${h.harness} again`] : []),
      ...(h.commandFound ? [] : [`${h.program} is not there: run unwind init --${h.harness} again`]),
    ];
    const fired = h.lastFired === null ? paint("never ran", "yellow") : `last ran ${when(h.lastFired)}`;
    rows.push([rows.some((r) => r[0] === "hooks") ? "" : "hooks", `${h.harness.padEnd(width)}  ${h.file}  ${[fired, ...problems].join("; ")}`]);
    for (const step of h.next) rows.push(["", `  next: ${step}`]);
  }
  const lines = [table(rows)];
  for (const e of d.errors) lines.push(`  ${paint(when(e.at), "dim")} ${e.message}`);
  return { json: d, human: lines.join("\n"), exit: Exit.ok };
}

export async function gc(globals: Globals, opts: { ttl?: string; dryRun?: boolean }): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.gc(opts);
  const verb = r.dryRun ? "would drop" : "dropped";
  const human =
    `${verb} ${r.snapshots} snapshot(s), ${r.receipts} receipt(s), ${r.records} journal record(s), ${r.blobs} blob(s) (${bytes(r.bytes)}) older than ${r.ttl}` +
    (r.indexes ? `\n${verb} ${r.indexes} private index(es) of removed worktrees (${bytes(r.indexBytes)})` : "") +
    (r.baselines || r.revertChecks ? `\n${verb} ${r.baselines} stage baseline(s) last captured and ${r.revertChecks} revert-check result(s) taken before then` : "") +
    (r.runs ? `\n${verb} ${r.runs} run capsule(s) older than ${r.ttl}` : "") +
    (r.snapshots ? "\nsnapshot objects are left to git's own gc" : "");
  return { json: r, human, exit: Exit.ok };
}
