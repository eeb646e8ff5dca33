/** Gemini CLI: its hook payloads and `.gemini/settings.json`. */
import { type HarnessRules, unwindMcpTool } from "./rules.js";

/** Gemini CLI names an MCP tool `mcp_<server>_<tool>` in its hooks. */
const ownTool = unwindMcpTool("mcp_unwind_");

export const gemini: HarnessRules = {
  events: { BeforeTool: "pre", AfterTool: "post" },
  fileTools: { write_file: "file_path", replace: "file_path" },
  readOnly: new Set([
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
  background: ["is_background"],
  classify: (tool) => (ownTool(tool) ? { kind: "ignore" } : undefined),
  settings: {
    file: ".gemini/settings.json",
    group: (command) => ({ hooks: [{ name: "unwind", type: "command", command, timeout: 30000 }] }),
    comments: true,
  },
  // Gemini CLI reads `mcpServers` from the same project `.gemini/settings.json` its hooks live in.
  mcp: { file: ".gemini/settings.json" },
};
