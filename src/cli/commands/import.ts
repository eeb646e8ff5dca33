import { Exit } from "../../domain/errors.js";
import type { ImportedCall, ImportOptions } from "../../ops/import.js";
import type { Globals } from "../globals.js";
import { paint, table, when, type Output } from "../render.js";
import { openFor } from "./common.js";

/** `unwind import --claude [SESSION]`: what each transcript's calls became, one line a call. */
export async function importCmd(globals: Globals, session: string | undefined, opts: Omit<ImportOptions, "session">): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.importSessions({ ...opts, session });
  const lines: string[] = [];
  const verb = r.dryRun ? "would import" : "imported";
  for (const s of r.sessions) {
    const c = s.counts;
    lines.push(
      `${s.session}: ${verb} ${c.imported} call(s)${c.unknown ? ` (${c.unknown} with shell effects unknown)` : ""}, ${c.recorded} already recorded, ${c.skipped} skipped` +
        (s.missedByHooks ? `; ${s.missedByHooks} the hooks missed` : ""),
    );
    const rows = s.calls.map((k) => [status(k, r.dryRun), when(k.at), k.tool, what(k)]);
    if (rows.length > 0) lines.push(table(rows).replace(/^/gm, "  "));
  }
  if (!r.dryRun && r.sessions.some((s) => s.counts.imported > 0))
    lines.push(paint("imported calls are the transcript's word, not captures: shell calls' effects are unknown, and undo says so", "dim"));
  return { json: r, human: lines.join("\n"), exit: Exit.ok };
}

function status(c: ImportedCall, dryRun: boolean): string {
  if (c.status === "imported") return dryRun ? "import" : paint("imported", "green");
  if (c.status === "recorded") return "recorded";
  return paint("skipped", "yellow");
}

function what(c: ImportedCall): string {
  if (c.capture === "unknown" && c.status !== "skipped") return `effects unknown${c.command !== undefined ? `: ${oneLine(c.command)}` : ""}`;
  return [c.paths.join(" "), c.why ?? ""].filter(Boolean).join("  ");
}

function oneLine(s: string): string {
  const l = s.replace(/\s+/g, " ").trim();
  return l.length > 60 ? `${l.slice(0, 57)}...` : l;
}
