/**
 * Hook adapters: one harness's hook payload (stdin JSON text) in, one
 * harness-neutral CaptureEvent out (SPEC sections 2 and 8).
 *
 * Pure on purpose: no fs, no git, no clock, no environment. The hook runs on
 * every tool call, so this module pulls in nothing but node:crypto. It never
 * throws; anything wrong with the payload comes back as a one-line error for
 * the capture error log.
 */
import { createHash } from "node:crypto";

import type { CaptureEvent, Harness, ParseResult, Phase, Target } from "./event.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const HARNESSES: readonly Harness[] = ["claude", "codex", "gemini"];

const EVENTS: Record<Harness, Readonly<Record<string, Phase>>> = {
  // A failed tool may still have changed files (a shell command that died half-way): capture its post state too.
  claude: { PreToolUse: "pre", PostToolUse: "post", PostToolUseFailure: "post" },
  codex: { PreToolUse: "pre", PostToolUse: "post" },
  gemini: { BeforeTool: "pre", AfterTool: "post" },
};

/** File-editing tools and the `tool_input` field that names their one target file. */
const FILE_TOOLS: Record<Harness, Readonly<Record<string, string>>> = {
  claude: { Write: "file_path", Edit: "file_path", MultiEdit: "file_path", NotebookEdit: "notebook_path" },
  codex: {},
  gemini: { write_file: "file_path", replace: "file_path" },
};

/** Tools that only read: nothing to capture. Everything not listed anywhere gets a tree snapshot. */
const READ_ONLY: Record<Harness, ReadonlySet<string>> = {
  claude: new Set([
    "Read",
    "Glob",
    "Grep",
    "LS",
    "NotebookRead",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "Task",
    "Agent",
    "ExitPlanMode",
    "BashOutput",
    "KillShell",
    "KillBash",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "SlashCommand",
    "Skill",
    // Tasks, tool search, code intelligence, questions and schedules: bookkeeping, no file effects.
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "TaskOutput",
    "TaskStop",
    "ToolSearch",
    "LSP",
    "AskUserQuestion",
    "CronCreate",
    "CronDelete",
    "CronList",
    "EnterPlanMode",
  ]),
  codex: new Set(["read_file", "list_dir", "grep_files", "view_image", "web_search", "update_plan"]),
  gemini: new Set([
    "read_file",
    "read_many_files",
    "list_directory",
    "glob",
    "search_file_content",
    "grep",
    "google_web_search",
    "web_fetch",
    "save_memory",
    "write_todos",
    "grep_search",
    "codebase_investigator",
    "get_internal_docs",
  ]),
};

/** The `tool_input` flag that starts a shell command in the background: it goes on writing after its post event. */
const BACKGROUND: Record<Harness, readonly string[]> = {
  claude: ["run_in_background"],
  codex: [],
  gemini: ["is_background"],
};

// Shell tools (claude Bash, codex Bash/shell/local_shell/exec_command/unified_exec,
// gemini run_shell_command) need no table: a tree snapshot is also what every
// unknown tool gets.

const PATCH_BEGIN = "*** Begin Patch";
const PATCH_HEADERS = ["*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"];

export function parseHookEvent(harness: string, raw: string): ParseResult {
  try {
    return parse(harness, raw);
  } catch (err) {
    // Nothing above should throw; this is the "never throw" backstop (e.g. a
    // pathologically deep tool_input overflowing the stack while hashing).
    return fail(`cannot read payload: ${oneLine(err instanceof Error ? err.message : String(err))}`);
  }
}

function parse(harness: string, raw: string): ParseResult {
  if (!isHarness(harness)) return fail(`unknown harness ${oneLine(String(harness))}`);
  if (typeof raw !== "string") return fail("input is not text");
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text.trim() === "") return fail("empty input");

  let payload: Json;
  try {
    payload = JSON.parse(text) as Json;
  } catch (err) {
    return fail(`malformed JSON: ${oneLine(err instanceof Error ? err.message : String(err))}`);
  }
  if (!isObject(payload)) return fail(`payload is not a JSON object (got ${describe(payload)})`);

  const sessionId = nonEmptyString(payload.session_id);
  if (sessionId === undefined) return fail("payload has no session_id (a non-empty string)");
  const eventName = nonEmptyString(payload.hook_event_name);
  if (eventName === undefined) return fail("payload has no hook_event_name");
  const phase = Object.hasOwn(EVENTS[harness], eventName) ? EVENTS[harness][eventName] : undefined;
  if (phase === undefined) return fail(`unsupported event ${oneLine(eventName)}`);
  const tool = nonEmptyString(payload.tool_name);
  if (tool === undefined) return fail("payload has no tool_name");
  const cwd = nonEmptyString(payload.cwd);
  if (cwd === undefined) return fail("payload has no cwd (a non-empty string)");

  const toolInput = payload.tool_input;
  const target = classify(harness, tool, toolInput);
  if ("error" in target) return fail(target.error);

  const session = `${harness}:${sessionId}`;
  const call = nonEmptyString(payload.tool_use_id) ?? syntheticCallId(session, tool, toolInput);

  const event: CaptureEvent = { harness, session, phase, tool, call, cwd, target };
  const agent = nonEmptyString(payload.agent_id);
  if (agent !== undefined) event.agent = agent;
  const agentType = nonEmptyString(payload.agent_type);
  if (agentType !== undefined) event.agentType = agentType;
  if (target.kind === "tree" && isObject(toolInput) && BACKGROUND[harness].some((f) => toolInput[f] === true)) event.background = true;
  return { ok: true, event };
}

function classify(harness: Harness, tool: string, input: Json | undefined): Target | { error: string } {
  if (READ_ONLY[harness].has(tool)) return { kind: "ignore" };

  const field = Object.hasOwn(FILE_TOOLS[harness], tool) ? FILE_TOOLS[harness][tool] : undefined;
  if (field !== undefined) {
    const path = isObject(input) ? nonEmptyString(input[field]) : undefined;
    if (path === undefined) return { error: `${tool} payload has no ${field}` };
    return { kind: "files", paths: [path] };
  }

  if (harness === "codex" && tool === "apply_patch") {
    const patch = isObject(input) ? patchText(input.command) : undefined;
    if (patch === undefined) return { error: "apply_patch payload has no command" };
    const paths = patchPaths(patch);
    // A patch we cannot read the files of still changes something: snapshot the tree.
    return paths.length > 0 ? { kind: "files", paths } : { kind: "tree" };
  }

  return { kind: "tree" };
}

/**
 * The patch text of a Codex apply_patch `command`: the string itself, or for
 * an argv array the last element carrying the patch envelope (else all of it).
 */
function patchText(command: Json | undefined): string | undefined {
  if (typeof command === "string") return command === "" ? undefined : command;
  if (!Array.isArray(command) || command.length === 0) return undefined;
  const parts: string[] = [];
  for (const part of command) {
    if (typeof part !== "string") return undefined;
    parts.push(part);
  }
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i];
    if (part !== undefined && part.includes(PATCH_BEGIN)) return part;
  }
  const joined = parts.join("\n");
  return joined === "" ? undefined : joined;
}

/**
 * Every path a patch names, in order of first appearance: added, updated and
 * deleted files, and the destination of each move (its source is the Update
 * File header before it).
 */
export function patchPaths(patch: string): string[] {
  const seen = new Set<string>();
  for (const line of patch.split("\n")) {
    // Headers are matched with surrounding whitespace allowed: a stray header
    // match only adds a file capture that finds no change, a missed one loses
    // a file from undo.
    const trimmed = line.trim();
    if (!trimmed.startsWith("*** ")) continue;
    for (const header of PATCH_HEADERS) {
      if (!trimmed.startsWith(header)) continue;
      const path = trimmed.slice(header.length).trim();
      if (path !== "") seen.add(path);
      break;
    }
  }
  return [...seen];
}

/**
 * The pairing id for harnesses that give no tool-use id (Gemini): the same
 * for the pre and post payloads of one call, whatever their key order.
 */
function syntheticCallId(session: string, tool: string, input: Json | undefined): string {
  const digest = createHash("sha256")
    .update(`${session}\0${tool}\0${stableStringify(input)}`)
    .digest("hex");
  return `h-${digest.slice(0, 16)}`;
}

/** JSON text with object keys sorted at every depth; an absent value reads as null. */
export function stableStringify(value: Json | undefined): string {
  if (value === undefined || value === null) return "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i > 0 ? "," : "") + stableStringify(value[i]);
    return `${out}]`;
  }
  if (typeof value === "object") {
    const keys = Object.keys(value).sort();
    let out = "{";
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      out += `${i > 0 ? "," : ""}${JSON.stringify(key)}:${stableStringify(value[key])}`;
    }
    return `${out}}`;
  }
  return JSON.stringify(value);
}

function isHarness(value: string): value is Harness {
  return (HARNESSES as readonly string[]).includes(value);
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: Json | undefined): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function describe(value: Json): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

function fail(error: string): ParseResult {
  return { ok: false, error };
}
