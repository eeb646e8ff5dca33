/**
 * Claude Code's own session transcript (`<config>/projects/<slug>/<session>.jsonl`)
 * read as tool calls, for `unwind import` (docs/import.md). Pure: text in,
 * calls out; no fs, no clock.
 *
 * The shapes, as Claude Code 2.1.332 writes them (test/fixtures/transcripts/):
 * an `assistant` entry's `message.content` holds `tool_use` blocks `{id, name,
 * input}`; the `user` entry that answers one holds a `tool_result` block
 * `{tool_use_id, is_error?}` and, beside the message, `toolUseResult`: for
 * Write `{type: "create"|"update", filePath, content, originalFile}`, for Edit
 * `{filePath, oldString, newString, replaceAll, originalFile, structuredPatch}`,
 * for MultiEdit (older clients) `{filePath, edits, originalFile, structuredPatch}`.
 * Every entry has an ISO `timestamp`.
 */
import { claude } from "./claude.js";

/** What one call did, as far as the transcript tells. */
export type TranscriptEffect =
  /** A file tool: the file before (null: absent; undefined: the transcript does not say) and after. */
  | { kind: "file"; path: string; before: string | null | undefined; after: string }
  /** A shell or unknown tool, or a file tool whose result cannot be rebuilt: nobody saw what it did. */
  | { kind: "unknown"; command?: string; why: string };

export interface TranscriptCall {
  call: string;
  tool: string;
  /** When the tool was asked for (the assistant entry) and when its result came (the user entry); `end` is `start` when no result came. */
  start: string;
  end: string;
  /** The directory relative paths are read from: the entry's `cwd`. */
  cwd: string | undefined;
  agent?: string;
  effect: TranscriptEffect;
}

export interface Transcript {
  /** The session id the entries carry (the first one), if any. */
  sessionId: string | undefined;
  /** The first `cwd` an entry gives: where the session ran. */
  cwd: string | undefined;
  calls: TranscriptCall[];
  /** Calls left out, and why (a file tool that failed: it wrote nothing). */
  skipped: { call: string; tool: string; at: string; why: string }[];
}

/** A line that is not a JSON object: where, and why. */
export class TranscriptError extends Error {
  constructor(
    readonly line: number,
    why: string,
  ) {
    super(why);
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

const FILE_TOOLS = new Set(["Write", "Edit", "MultiEdit"]);

/** Reads a transcript's text; throws TranscriptError naming the first line that is not a JSON object. */
export function readTranscript(text: string): Transcript {
  const uses = new Map<string, { tool: string; input: Obj; at: string; cwd: string | undefined; agent: string | undefined }>();
  const results = new Map<string, { at: string; error: boolean; result: unknown }>();
  let sessionId: string | undefined;
  let cwd: string | undefined;
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    let e: unknown;
    try {
      e = JSON.parse(line);
    } catch {
      throw new TranscriptError(i + 1, i === lines.length - 1 ? "not valid JSON (a torn last line: is the session still running?)" : "not valid JSON");
    }
    if (!isObj(e)) throw new TranscriptError(i + 1, "not a JSON object");
    sessionId ??= str(e.sessionId);
    cwd ??= str(e.cwd);
    const at = str(e.timestamp);
    const msg = e.message;
    if (at === undefined || !isObj(msg) || !Array.isArray(msg.content)) return;
    const blocks = msg.content.filter(isObj);
    if (e.type === "assistant") {
      for (const b of blocks) {
        const id = str(b.id);
        const name = str(b.name);
        if (b.type !== "tool_use" || id === undefined || name === undefined || uses.has(id)) continue;
        uses.set(id, { tool: name, input: isObj(b.input) ? b.input : {}, at, cwd: str(e.cwd), agent: str(e.agentId) });
      }
    } else if (e.type === "user") {
      const answers = blocks.filter((b) => b.type === "tool_result" && str(b.tool_use_id) !== undefined);
      // `toolUseResult` belongs to the entry: it can be told to a result only when the entry answers one call.
      for (const b of answers) {
        results.set(str(b.tool_use_id)!, { at, error: b.is_error === true, result: answers.length === 1 ? e.toolUseResult : undefined });
      }
    }
  });
  const calls: TranscriptCall[] = [];
  const skipped: Transcript["skipped"] = [];
  for (const [id, u] of uses) {
    const own = claude.classify?.(u.tool, undefined);
    if (claude.readOnly.has(u.tool) || (own !== undefined && "kind" in own && own.kind === "ignore")) continue;
    const r = results.get(id);
    const base = { call: id, tool: u.tool, start: u.at, end: r && r.at > u.at ? r.at : u.at, cwd: u.cwd, ...(u.agent ? { agent: u.agent } : {}) };
    if (FILE_TOOLS.has(u.tool)) {
      if (r?.error) {
        skipped.push({ call: id, tool: u.tool, at: u.at, why: "the tool failed: it wrote nothing" });
        continue;
      }
      calls.push({ ...base, effect: r ? fileEffect(u.tool, u.input, r.result) : { kind: "unknown", why: "no result in the transcript: interrupted?" } });
      continue;
    }
    const command = str(u.input.command) ?? str(u.input.notebook_path);
    calls.push({ ...base, effect: { kind: "unknown", ...(command !== undefined ? { command } : {}), why: "shell effects are unknown: no capture saw them" } });
  }
  return { sessionId, cwd, calls, skipped };
}

/** A file tool's before and after, from its result; unknown where the result does not hold them. */
function fileEffect(tool: string, input: Obj, result: unknown): TranscriptEffect {
  if (!isObj(result)) return { kind: "unknown", why: "the transcript holds no structured result for it" };
  const path = str(result.filePath) ?? str(input.file_path);
  if (path === undefined) return { kind: "unknown", why: "the transcript names no file" };
  const original = result.originalFile;
  const before = typeof original === "string" ? original : original === null ? null : undefined;
  if (tool === "Write") {
    const after = str(result.content) ?? str(input.content);
    if (after === undefined) return { kind: "unknown", why: "the transcript holds no content for the write" };
    // A create had nothing before; an update without its original cannot be taken back (its before is unknown).
    return { kind: "file", path, before: result.type === "create" ? null : before === null ? undefined : before, after };
  }
  if (typeof before !== "string") return { kind: "unknown", why: "the transcript holds no original file for the edit" };
  const edits: { old: string; new: string; all: boolean }[] = [];
  if (tool === "Edit") {
    const old = str(result.oldString) ?? str(input.old_string);
    const neu = str(result.newString) ?? str(input.new_string);
    if (old !== undefined && neu !== undefined) edits.push({ old, new: neu, all: result.replaceAll === true || input.replace_all === true });
  } else {
    const list = Array.isArray(result.edits) ? result.edits : Array.isArray(input.edits) ? input.edits : [];
    for (const x of list.filter(isObj)) {
      const old = str(x.old_string) ?? str(x.oldString);
      const neu = str(x.new_string) ?? str(x.newString);
      if (old !== undefined && neu !== undefined) edits.push({ old, new: neu, all: x.replace_all === true || x.replaceAll === true });
    }
  }
  const after = replaced(before, edits) ?? patched(before, result.structuredPatch);
  if (after === undefined) return { kind: "unknown", why: "the edit cannot be rebuilt from the transcript" };
  return { kind: "file", path, before, after };
}

/** The edits applied as the tool applies them, each to the text the last left; undefined when one's text is not there. */
function replaced(text: string, edits: readonly { old: string; new: string; all: boolean }[]): string | undefined {
  if (edits.length === 0) return undefined;
  let out = text;
  for (const e of edits) {
    if (e.old === "") {
      // An empty old string writes a new file's content (only where there is none).
      if (out !== "") return undefined;
      out = e.new;
      continue;
    }
    const at = out.indexOf(e.old);
    if (at < 0) return undefined;
    out = e.all ? out.split(e.old).join(e.new) : out.slice(0, at) + e.new + out.slice(at + e.old.length);
  }
  return out;
}

/**
 * The structured patch (hunks of `oldStart`, `lines` with ' ', '-', '+')
 * applied to the text, where the tool's literal edit does not match it (the
 * client normalises quotes, for one): undefined when a hunk's context is
 * not where it says.
 */
function patched(text: string, patch: unknown): string | undefined {
  if (!Array.isArray(patch) || patch.length === 0) return undefined;
  const lines = text.split("\n");
  const out: string[] = [];
  let at = 0;
  for (const h of patch) {
    if (!isObj(h) || typeof h.oldStart !== "number" || !Array.isArray(h.lines)) return undefined;
    const start = Math.max(0, h.oldStart - 1);
    if (start < at) return undefined;
    out.push(...lines.slice(at, start));
    at = start;
    for (const l of h.lines) {
      if (typeof l !== "string") return undefined;
      const body = l.slice(1);
      if (l.startsWith("\\")) continue;
      if (l.startsWith("+")) out.push(body);
      else if (l.startsWith("-") || l.startsWith(" ")) {
        if (lines[at] !== body) return undefined;
        if (l.startsWith(" ")) out.push(body);
        at++;
      } else return undefined;
    }
  }
  out.push(...lines.slice(at));
  return out.join("\n");
}
