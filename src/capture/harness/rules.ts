/**
 * What unwind knows about one harness, as one typed object per harness
 * (claude.ts, codex.ts, gemini.ts, qwen.ts, copilot.ts): how its hook payloads read (the parsing
 * in index.ts) and how its hook settings file is written (settings.ts).
 *
 * Types only, plus the JSON shapes the payload rules read: the hook bundle
 * loads this on every tool call.
 */
import type { Phase, Target } from "../event.js";

export type Harness = "claude" | "codex" | "gemini" | "qwen" | "copilot" | "opencode" | "cline";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface HarnessRules {
  /**
   * The hook events unwind handles and the phase each one captures. `unwind
   * init` installs its hook on each of them, in this order.
   */
  events: Readonly<Record<string, Phase>>;
  /** File-editing tools and the `tool_input` field that names their one target file. */
  fileTools: Readonly<Record<string, string>>;
  /** Tools that only read: nothing to capture. Everything not listed anywhere gets a tree snapshot. */
  readOnly: ReadonlySet<string>;
  /**
   * Read-only tools the installed hook's matcher keeps from starting unwind
   * at all (each would be a Node process for nothing). Not the tools that
   * look at background shells: their hook closes a background command's
   * window, so they still fire. Empty where the harness's matcher cannot
   * leave tools out and keep unknown ones in.
   */
  quiet: readonly string[];
  /**
   * The `tool_input` flag that starts a shell command in the background: it goes on writing after its post event.
   * `field=value` names a field that does it by that string value (Copilot CLI's `mode=async`).
   */
  background: readonly string[];
  // Shell tools (claude Bash, codex Bash/shell/local_shell/exec_command/unified_exec,
  // gemini run_shell_command) need no table: a tree snapshot is also what every
  // unknown tool gets.
  /**
   * A tool whose targets this harness's payload gives in a way of its own
   * (codex apply_patch): its target, or an error for the capture error log;
   * undefined for every other tool. Asked after readOnly and fileTools.
   */
  classify?(tool: string, input: Json | undefined): Target | { error: string } | undefined;
  /**
   * A payload whose fields are not Claude Code's (Copilot CLI's camelCase, no event name; OpenCode's,
   * as unwind's own plugin sends it; Cline's): the same payload in Claude Code's field names
   * (session_id, hook_event_name, tool_name, tool_input, tool_use_id, cwd, agent_id), or (a string) an
   * error for the capture error log. `event` is what the hook command names after the harness
   * (`unwind hook copilot preToolUse`), when it names one.
   */
  payload?(payload: JsonObject, event: string | undefined): JsonObject | string;
  /** The project settings file `unwind init` merges its hooks into. */
  settings: SettingsRules;
  /**
   * The project file where the harness, as an MCP client, reads its MCP
   * servers (`unwind init --mcp`): JSON with `mcpServers.<name>`, or for a
   * `.toml` file a `[mcp_servers.<name>]` table (src/capture/harness/mcp-config.ts);
   * `prefix`: how its hook events name the tools of the server registered as `unwind`.
   * Undefined where unwind does not register itself with the client (`init --mcp` says so).
   */
  mcp?: { file: string; prefix: string };
}

export interface SettingsRules {
  /** Repo-relative, e.g. ".claude/settings.json". */
  file: string;
  /**
   * The matcher group added under each event for `command` (the full hook
   * command). Claude Code and Codex take the timeout in seconds, Gemini CLI
   * in milliseconds.
   */
  group(command: string): Record<string, unknown>;
  /** The harness reads the file as JSON with comments (and trailing commas): so does unwind, and it keeps them. */
  comments?: true;
  /** The settings file for this machine only, not shared through the repository (`unwind init --local`). */
  local?: string;
  /**
   * No JSON settings to merge into: unwind writes files of its own instead
   * (src/capture/harness/own-files.ts): an OpenCode plugin that runs
   * `unwind hook opencode`, or one Cline hook executable per event.
   */
  own?: "opencode-plugin" | "cline-hooks";
  /**
   * The hook entries sit right under each event, each its own (Copilot CLI), not in matcher groups
   * under `hooks`; `command` is the field that holds the command (Copilot CLI's `bash`).
   */
  flat?: { command: string };
  /** The hook command names its event after the harness: the payload does not say it (Copilot CLI). */
  eventArg?: true;
  /** Top-level fields a file `unwind init` creates starts with (Copilot CLI's `version`, Qwen Code's `$version`). */
  fresh?: Readonly<Record<string, unknown>>;
}

/**
 * A hook matcher that fires for every tool but `tools`: a JavaScript regular
 * expression (Claude Code and Gemini CLI test tool names against it), so a
 * tool unwind has never heard of still fires and gets its snapshot.
 */
export function matcherExcept(tools: readonly string[]): string {
  const names = tools.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return `^(?!(?:${names.join("|")})$).*`;
}

export function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The tools of `unwind mcp` (src/mcp/server.ts registers exactly these). */
export const UNWIND_MCP_TOOLS = ["sessions", "log", "changes", "undo_preview", "undo", "redo", "snapshot", "snapshots", "restore_preview", "restore", "status"] as const;

/**
 * Whether a harness's tool name is one of unwind's own MCP tools, as the
 * harness names it (`<prefix><tool>`, exactly: another server's tool, or a
 * tool unwind does not have, is not). What those tools write is on the record
 * as receipts; a tree snapshot around them would be a second, competing
 * record (and an undo would close its own call's window), so hooks leave them alone.
 */
export function unwindMcpTool(prefix: string): (tool: string) => boolean {
  const names = new Set(UNWIND_MCP_TOOLS.map((t) => `${prefix}${t}`));
  return (tool) => names.has(tool);
}

/** The tools of `unwind mcp` that take work back: their hook events name the calling session for the server (src/store/mcp-calls.ts). */
export const TAKING_BACK_TOOLS: readonly string[] = ["undo", "restore", "redo"];
