/**
 * The one-line text each tool result carries beside its `--json` document
 * (the structured content). For people reading a client's log, and for
 * clients that show the model only text.
 */
import type { Counts } from "../domain/types.js";
import type { ChangeSetReport } from "../ops/changes.js";
import type { SessionSummary, CallSummary } from "../ops/sessions.js";
import type { SnapshotInfo } from "../ops/snapshot.js";
import type { StatusReport } from "../ops/status.js";
import type { UndoReport } from "../ops/take-back.js";

const of = (n: number, total: number, what: string) => `${n} ${what}${total > n ? ` of ${total}` : ""}`;

function counts(c: Counts): string {
  return `${c.restore} restore, ${c.delete} delete, ${c.merge} merge, ${c.skip} skip, ${c.conflict} conflict`;
}

export function sessionsLine(r: { sessions: SessionSummary[]; total: number }, yours: string | null): string {
  const list = r.sessions
    .slice(0, 5)
    .map((s) => `${s.session} (${s.calls} calls, ${s.paths} paths)`)
    .join(", ");
  return `${of(r.sessions.length, r.total, "session(s)")}, most recently active first${list ? `: ${list}${r.sessions.length > 5 ? ", …" : ""}` : ""}${yours ? `; yours: ${yours}` : ""}`;
}

export function logLine(r: { calls: CallSummary[]; total: number }): string {
  return `${of(r.calls.length, r.total, "call(s)")}, newest first`;
}

export function changesLine(r: ChangeSetReport): string {
  const by = new Map<string, number>();
  for (const e of r.entries) by.set(e.change, (by.get(e.change) ?? 0) + 1);
  const kinds = [...by].map(([k, n]) => `${n} ${k}`).join(", ");
  return `${r.scope.kind} ${r.scope.id}: ${r.entries.length} path(s) changed${kinds ? ` (${kinds})` : ""}`;
}

/** A preview: what it would do, and how to apply exactly it. */
export function previewLine(r: UndoReport, applyWith: "undo" | "restore"): string {
  const conflicts = [...new Set(r.items.filter((i) => i.action === "conflict").map((i) => i.reason))].join(", ");
  return `preview of ${applyWith} (${r.scope.kind} ${r.scope.id}): ${counts(r.counts)}${conflicts ? ` (${conflicts})` : ""}; nothing was changed; plan ${r.plan}: pass it as "plan" to ${applyWith} to apply exactly this`;
}

export function appliedLine(r: UndoReport, did: string): string {
  return `${did} (${r.scope.kind} ${r.scope.id}): ${counts(r.counts)}; receipt ${r.receipt}${r.partial ? "; conflicts or skips remain (see items)" : ""}; redo takes it back`;
}

export function snapshotLine(s: SnapshotInfo): string {
  return `snapshot ${s.id} taken (tree ${s.tree.slice(0, 8)})${s.toolarge.length ? `; ${s.toolarge.length} file(s) over the size cap left out` : ""}`;
}

export function snapshotsLine(r: { snapshots: SnapshotInfo[]; total: number }): string {
  return `${of(r.snapshots.length, r.total, "snapshot(s)")}, newest first${r.snapshots[0] ? `; newest ${r.snapshots[0].id}` : ""}`;
}

export function statusLine(d: StatusReport): string {
  return `store ${d.store}${d.exists ? "" : " (not created yet)"}: ${d.sessions} session(s), ${d.snapshots} snapshot(s), ${d.receipts} receipt(s), ${d.errorCount} capture error(s) not yet acknowledged`;
}
