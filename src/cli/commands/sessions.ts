import { Exit } from "../../domain/errors.js";
import type { StartedBy } from "../../domain/types.js";
import type { ListOptions } from "../../ops/list.js";
import { shortNames } from "../../ops/sessions.js";
import type { Globals } from "../globals.js";
import { shortIds } from "../../domain/ids.js";
import { more, showPath, table, when, type Output } from "../render.js";
import { openFor } from "./common.js";

export async function sessions(globals: Globals, opts: ListOptions & { task?: string }): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.sessions(opts);
  // Fetched sessions (SPEC section 14) add an ORIGIN column; local ones show "-" there.
  const origins = r.sessions.some((s) => s.origin !== undefined);
  // Each session by its shortest unique tail: a Claude session's full name is 44 characters, and every command takes the tail back.
  const rows = r.sessions.map((s) => [
    s.short,
    s.harness,
    s.agents.join(",") || "-",
    s.tasks.join(",") || "-",
    when(s.first),
    when(s.last),
    String(s.calls),
    String(s.paths),
    ...(origins ? [s.origin ?? "-"] : []),
  ]);
  const human = rows.length
    ? [
        table([["SESSION", "HARNESS", "AGENT", "TASK", "FIRST", "LAST", "CALLS", "PATHS", ...(origins ? ["ORIGIN"] : [])], ...rows], [], { fit: [2, 3] }),
        ...more(rows.length, r.total, "sessions"),
      ].join("\n")
    : "no sessions recorded";
  return { json: r, human, exit: Exit.ok };
}

export async function log(globals: Globals, opts: ListOptions & { session?: string; task?: string }): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.log(opts);
  // A subagent's call names it after the tool (`Write agent:general-purpose`): its session is the parent's.
  const rows = r.calls.map((c) => [
    when(c.at),
    c.sessionShort,
    toolText(c),
    c.short,
    [c.paths.map(showPath).join(" ") || (c.capture === "unknown" ? "(effects unknown)" : "-"), ...(c.imported ? ["(imported)"] : [])].join(" "),
  ]);
  const human = rows.length ? [table([["WHEN", "SESSION", "TOOL", "CALL", "PATHS"], ...rows]), ...more(rows.length, r.total, "calls")].join("\n") : "no calls recorded";
  return { json: r, human, exit: Exit.ok };
}

/** The tool, and the subagent that called it by its type (else its id), where there was one. */
function toolText(c: { tool: string; agent?: string | undefined; agentType?: string | undefined }): string {
  const agent = c.agentType ?? c.agent;
  return agent === undefined ? c.tool : `${c.tool} agent:${agent}`;
}

export async function receipts(globals: Globals, opts: ListOptions): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.receipts(opts);
  const ids = shortIds(r.receipts.map((x) => x.id));
  const name = await shortNames(u.context);
  const rows = r.receipts.map((x) => {
    const c = x.counts;
    const parts = [
      [c.restore, "restored"],
      [c.delete, "deleted"],
      [c.merge, "merged"],
      [c.skip, "skipped"],
      [c.conflict, "conflicts"],
    ] as const;
    const counts =
      (parts
        .filter(([n]) => n > 0)
        .map(([n, w]) => `${n} ${w}`)
        .join(", ") || "nothing to do") + (x.recovered ? " (recovered)" : "");
    return [ids.get(x.id)!, when(x.at), x.kind, `${x.scope.kind} ${name(x.scope.id)}`, byText(x.by, name), counts];
  });
  const human = rows.length ? [table([["RECEIPT", "WHEN", "KIND", "SCOPE", "BY", "COUNTS"], ...rows], [], { fit: [5] }), ...more(rows.length, r.total, "receipts")].join("\n") : "no receipts";
  return { json: r, human, exit: Exit.ok };
}

/** Who started an apply: `cli`, `ui`, `mcp claude:<id>`; `-` for a receipt older than the record of it. */
function byText(o: StartedBy | null, name: (s: string) => string): string {
  if (!o) return "-";
  return o.session ? `${o.client} ${name(o.session)}` : o.client;
}
