/** Claude Code: its hook payloads and `.claude/settings.json`. */
import { unwindMcpTool } from "./rules.js";
import type { HarnessRules } from "./rules.js";

/** Claude Code names an MCP tool `mcp__<server>__<tool>`. */
const ownTool = unwindMcpTool("mcp__unwind__");

export const claude: HarnessRules = {
  // A failed tool may still have changed files (a shell command that died half-way, a failing build or
  // test run): its post comes as PostToolUseFailure, and its post state is captured too.
  events: { PreToolUse: "pre", PostToolUse: "post", PostToolUseFailure: "post" },
  fileTools: { Write: "file_path", Edit: "file_path", MultiEdit: "file_path", NotebookEdit: "notebook_path" },
  readOnly: new Set([
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
  background: ["run_in_background"],
  // unwind's own MCP tools (`unwind init --mcp` registers the server as "unwind"): what undo, restore
  // and redo write is on the record as their receipts, and the rest only read. A tree snapshot around
  // them would be a second, competing record, and their call's open window would be closed for good
  // by the very undo it wraps.
  classify: (tool) => (ownTool(tool) ? { kind: "ignore" } : undefined),
  settings: {
    file: ".claude/settings.json",
    group: (command) => ({ matcher: "*", hooks: [{ type: "command", command, timeout: 30 }] }),
  },
  // Claude Code reads project-scoped MCP servers from `.mcp.json` at the project root: `{"mcpServers": {name: {command, args, env}}}`.
  mcp: { file: ".mcp.json" },
};
