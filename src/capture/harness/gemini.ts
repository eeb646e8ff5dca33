/** Gemini CLI: its hook payloads and `.gemini/settings.json`. */
import { type HarnessRules, matcherExcept, unwindMcpTool } from "./rules.js";

/** The read-only tools whose hook never starts (the matcher leaves them out). */
const QUIET = [
  "read_file",
  "read_many_files",
  "list_directory",
  "glob",
  "search_file_content",
  "grep",
  "grep_search",
  "google_web_search",
  "web_fetch",
  "write_todos",
  "codebase_investigator",
  "get_internal_docs",
  // Seen offered by Gemini CLI 0.61.0 (docs/clients.md).
  "update_topic",
  "enter_plan_mode",
  "activate_skill",
];

/** Gemini CLI names an MCP tool `mcp_<server>_<tool>` in its hooks. */
const PREFIX = "mcp_unwind_";
const ownTool = unwindMcpTool(PREFIX);

export const gemini: HarnessRules = {
  events: { BeforeTool: "pre", AfterTool: "post" },
  fileTools: { write_file: "file_path", replace: "file_path" },
  // save_memory writes the user's memory file, outside the project; the other two look at background shells.
  readOnly: new Set([...QUIET, "save_memory", "list_background_processes", "read_background_output"]),
  quiet: QUIET,
  background: ["is_background"],
  classify: (tool) => (ownTool(tool) ? { kind: "ignore" } : undefined),
  settings: {
    file: ".gemini/settings.json",
    // A JavaScript regular expression, as Claude Code's (seen: read_file then starts no hook).
    group: (command) => ({ matcher: matcherExcept(QUIET), hooks: [{ name: "unwind", type: "command", command, timeout: 30000 }] }),
    comments: true,
  },
  // Gemini CLI reads `mcpServers` from the same project `.gemini/settings.json` its hooks live in.
  mcp: { file: ".gemini/settings.json", prefix: PREFIX },
};
