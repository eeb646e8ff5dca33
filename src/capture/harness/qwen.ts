/**
 * Qwen Code: a fork of Gemini CLI that took Claude Code's hook events and
 * payload fields, in `.qwen/settings.json`.
 */
import { type HarnessRules, matcherExcept, unwindMcpTool } from "./rules.js";

/** The read-only tools whose hook never starts (the matcher leaves them out). */
const QUIET = [
  "read_file",
  "glob",
  "grep_search",
  "list_directory",
  "web_fetch",
  "web_search",
  "todo_write",
  "exit_plan_mode",
  "enter_plan_mode",
  "ask_user_question",
  "lsp",
  "read_mcp_resource",
  "zoom_image",
  // Seen offered by Qwen Code 0.24.4 (docs/clients.md): goals, agent lists, tool search and skills only read or keep notes.
  "get_goal",
  "update_goal",
  "list_agents",
  "tool_search",
  "skill",
  "task_create",
  "task_list",
  "task_update",
  "cron_list",
];

/** Qwen Code names an MCP tool `mcp__<server>__<tool>`, as Claude Code does (seen in its 0.24.4 bundle). */
const PREFIX = "mcp__unwind__";
const ownTool = unwindMcpTool(PREFIX);

export const qwen: HarnessRules = {
  // A failing shell command sends PostToolUseFailure (seen with 0.24.4), which closes the call like PostToolUse.
  events: { PreToolUse: "pre", PostToolUse: "post", PostToolUseFailure: "post" },
  fileTools: { write_file: "file_path", edit: "file_path", notebook_edit: "notebook_path" },
  // save_memory writes the user's memory file, outside the project; task_stop stops a background shell:
  // its hook still runs, to close that command's window.
  readOnly: new Set([...QUIET, "save_memory", "task_stop"]),
  quiet: QUIET,
  background: ["is_background"],
  classify: (tool) => (ownTool(tool) ? { kind: "ignore" } : undefined),
  settings: {
    file: ".qwen/settings.json",
    // A JavaScript regular expression, as Claude Code's (seen with 0.24.4: read_file then starts no hook).
    group: (command) => ({ matcher: matcherExcept(QUIET), hooks: [{ type: "command", command, timeout: 30 }] }),
    comments: true,
    // Qwen Code rewrites a settings file without "$version" when it starts (a change outside any tool
    // call); a file unwind creates says the version 0.24.4 writes. A user's file is left to Qwen Code:
    // an older layout without the field is Qwen Code's to migrate, not unwind's to relabel.
    fresh: { $version: 4 },
  },
  // Qwen Code reads `mcpServers` from the same project settings file, as Gemini CLI does.
  mcp: { file: ".qwen/settings.json", prefix: PREFIX },
};
