/**
 * Cline (CLI 3.x): one hook executable per event, named after it, in
 * `.clinerules/hooks/` (own-files.ts writes them). The payload names its
 * hook `tool_call` (PreToolUse) or `tool_result` (PostToolUse) and carries
 * the call in `tool_call` / `tool_result` {id, name, input}; the task is
 * `taskId`, the workspace `workspaceInfo.rootPath`. A failing command is an
 * ordinary PostToolUse whose top-level `success` is true (seen with 3.0.65):
 * its post is captured like any other, so nothing hangs on it.
 */
import { isObject, type HarnessRules, type JsonObject } from "./rules.js";

/** The task's end: a call a cancel cut short is closed by it. */
const CLOSING = ["TaskComplete", "TaskCancel"];

export const cline: HarnessRules = {
  events: { PreToolUse: "pre", PostToolUse: "post", TaskComplete: "post", TaskCancel: "post" },
  fileTools: { editor: "path" },
  readOnly: new Set(["read_files", "search_codebase", "fetch_web_content", "ask_question", ...CLOSING]),
  // Cline runs every hook file for every tool: there is no matcher to leave tools out.
  quiet: [],
  background: [],
  payload(p) {
    const roots = Array.isArray(p.workspaceRoots) ? p.workspaceRoots : [];
    const info = isObject(p.workspaceInfo) ? p.workspaceInfo : {};
    const out: JsonObject = { session_id: p.taskId ?? null, cwd: info.rootPath ?? roots[0] ?? null };
    // A spawned agent's calls carry its own id and its parent's.
    if (typeof p.agent_id === "string" && typeof p.parent_agent_id === "string") out.agent_id = p.agent_id;
    const call = isObject(p.tool_call) ? p.tool_call : isObject(p.tool_result) ? p.tool_result : undefined;
    if (call === undefined) {
      const event = "taskComplete" in p ? "TaskComplete" : "TaskCancel";
      return { ...out, hook_event_name: event, tool_name: event };
    }
    // `tool_call.input` and not `preToolUse.parameters`, where nested arrays arrive as JSON text.
    return { ...out, hook_event_name: isObject(p.tool_call) ? "PreToolUse" : "PostToolUse", tool_name: call.name ?? null, tool_input: call.input ?? null, tool_use_id: call.id ?? null };
  },
  settings: {
    file: ".clinerules/hooks",
    group: () => ({}),
    own: "cline-hooks",
  },
};
