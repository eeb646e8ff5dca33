/** Claude Code: its hook payloads and `.claude/settings.json`. */
import { matcherExcept, unwindMcpTool } from "./rules.js";
import type { HarnessRules } from "./rules.js";

/** The read-only tools whose hook never starts (the matcher leaves them out). */
const QUIET = [
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
  "EnterPlanMode",
  "ListMcpResourcesTool",
  "ReadMcpResourceTool",
  "SlashCommand",
  "Skill",
  // Tasks, tool search, code intelligence, questions and schedules: bookkeeping, no file effects.
  "TaskCreate",
  "TaskGet",
  "TaskList",
  "TaskUpdate",
  "ToolSearch",
  "LSP",
  "AskUserQuestion",
  "CronCreate",
  "CronDelete",
  "CronList",
  // Seen offered by Claude Code 2.1.332 (docs/clients.md): listing agents, reporting, scheduling.
  "ListAgents",
  "ReportFindings",
  "ScheduleWakeup",
];

/** Read-only tools that look at or stop background shells: their hook still runs, to close a background command's window. */
const SHELL_WATCHERS = ["BashOutput", "KillShell", "KillBash", "TaskOutput", "TaskStop"];

/** Claude Code names an MCP tool `mcp__<server>__<tool>`. */
const PREFIX = "mcp__unwind__";
const ownTool = unwindMcpTool(PREFIX);

export const claude: HarnessRules = {
  // A failed tool may still have changed files (a shell command that died half-way, a failing build or
  // test run): its post comes as PostToolUseFailure, and its post state is captured too.
  events: { PreToolUse: "pre", PostToolUse: "post", PostToolUseFailure: "post" },
  fileTools: { Write: "file_path", Edit: "file_path", MultiEdit: "file_path", NotebookEdit: "notebook_path" },
  // The read-only tools whose hook starts no process, and those that look at background shells.
  readOnly: new Set([...QUIET, ...SHELL_WATCHERS]),
  quiet: QUIET,
  background: ["run_in_background"],
  // unwind's own MCP tools (`unwind init --mcp` registers the server as "unwind"): what undo, restore
  // and redo write is on the record as their receipts, and the rest only read. A tree snapshot around
  // them would be a second, competing record, and their call's open window would be closed for good
  // by the very undo it wraps.
  classify: (tool) => (ownTool(tool) ? { kind: "ignore" } : undefined),
  settings: {
    file: ".claude/settings.json",
    // A JavaScript regular expression (seen: a Read call then starts no hook; Write, Bash and unknown tools do).
    group: (command) => ({ matcher: matcherExcept(QUIET), hooks: [{ type: "command", command, timeout: 30 }] }),
    local: ".claude/settings.local.json",
  },
  // Claude Code reads project-scoped MCP servers from `.mcp.json` at the project root: `{"mcpServers": {name: {command, args, env}}}`.
  mcp: { file: ".mcp.json", prefix: PREFIX },
};
