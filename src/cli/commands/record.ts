import { Exit, usage } from "../../domain/errors.js";
import { checkRecord, type RecordOptions } from "../../ops/record.js";
import type { Globals } from "../globals.js";
import { fold, showPath, type Output } from "../render.js";
import { openFor } from "./common.js";

/**
 * `unwind record`: the generic capture for orchestrators without a hook
 * format of their own. Unlike a hook, it reports failures with an exit code:
 * the caller asked for this capture explicitly.
 */
export async function record(globals: Globals, paths: string[], opts: RecordOptions): Promise<Output> {
  const options = { ...opts, task: opts.task ?? process.env.UNWIND_TASK, run: process.env.UNWIND_RUN, cwd: process.cwd() };
  checkRecord(options); // usage errors before the store is touched
  const u = await openFor(globals);
  const r = await u.record(paths, options);
  const human =
    r.snapshot !== null
      ? `${r.session} ${r.phase} ${r.call}: snapshot ${r.snapshot}`
      : `${r.session} ${r.phase} ${r.call}: ${r.files.map(showPath).join(" ") || "nothing"}${r.skipped > 0 ? ` (${r.skipped} path(s) skipped: see unwind status)` : ""}`;
  return { json: r, human, exit: r.skipped > 0 ? Exit.partial : Exit.ok };
}

export async function init(
  globals: Globals,
  opts: { claude?: boolean; codex?: boolean; gemini?: boolean; qwen?: boolean; copilot?: boolean; opencode?: boolean; cline?: boolean; mcp?: boolean; local?: boolean; mcpAllow?: string },
): Promise<Output> {
  const harnesses = (["claude", "codex", "gemini", "qwen", "copilot", "opencode", "cline"] as const).filter((h) => opts[h]);
  if (opts.mcp && harnesses.length === 0) throw usage("--mcp: name the clients to register the server with", "add --claude, --codex, --gemini and/or --qwen");
  if (opts.local && !opts.claude) throw usage("--local is for Claude Code's .claude/settings.local.json", "add --claude");
  const u = await openFor(globals);
  const r = await u.init(harnesses, { mcp: opts.mcp, local: opts.local, mcpAllow: opts.mcpAllow });
  const lines = [`store ${r.store}`];
  for (const h of r.hooks) {
    const what = [...h.added.map((e) => `+${e}`), ...h.updated.map((e) => `~${e}`)].join(", ");
    lines.push(...fold(`${h.changed ? "updated  " : "unchanged"}  ${h.file}${what ? `  (${what})` : ""}`, 11));
    lines.push(`           runs: ${h.command}`); // a command is never folded: it is copied whole
    for (const step of h.next) lines.push(...fold(`           next: ${step}`, 17));
  }
  for (const m of r.mcp) {
    const what = m.action === "added" ? "+mcp server unwind" : m.action === "updated" ? "~mcp server unwind" : "mcp server unwind";
    lines.push(`${m.changed ? "updated  " : "unchanged"}  ${m.file}  (${what})`);
  }
  if (opts.mcp || opts.mcpAllow !== undefined)
    lines.push(`mcp allow ${r.mcpAllow}: ${r.mcpAllow === "any" ? "an agent may take back any work over MCP" : "an agent takes back only its own session's work over MCP"}`);
  if (harnesses.length === 0) lines.push("no harness named: pass --claude, --codex, --gemini, --qwen, --copilot,\n--opencode or --cline to install hooks");
  else lines.push("then: unwind status says, per harness, when its hooks last ran");
  return { json: r, human: lines.join("\n"), exit: Exit.ok };
}
