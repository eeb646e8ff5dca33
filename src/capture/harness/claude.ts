/** Claude Code: its hook payloads and `.claude/settings.json`. */
import type { HarnessRules } from "./rules.js";

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
  settings: {
    file: ".claude/settings.json",
    group: (command) => ({ matcher: "*", hooks: [{ type: "command", command, timeout: 30 }] }),
  },
  // Claude Code reads project-scoped MCP servers from `.mcp.json` at the project root: `{"mcpServers": {name: {command, args, env}}}`.
  mcp: { file: ".mcp.json" },
};
