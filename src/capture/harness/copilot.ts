/**
 * GitHub Copilot CLI: `.github/hooks/*.json` (version 1), command hooks
 * whose `bash` field is the command, and a camelCase payload with neither an
 * event name nor a tool-call id. unwind keeps its hooks in a file of its own,
 * `.github/hooks/unwind.json`, each command naming its event; pre and post
 * pair by the call's content (tool and arguments), the oldest open call of
 * that content first (docs/attribution.md, pairing by key).
 */
import { type HarnessRules, isObject, type Json, type JsonObject, matcherExcept } from "./rules.js";

/** The read-only tools whose hook never starts (the matcher leaves them out). */
const QUIET = ["view", "grep", "glob", "fetch_copilot_cli_documentation", "skill", "list_agents", "read_agent", "report_intent", "web_fetch", "update_todo"];

/** Tools that look at or stop background shells: their hook still runs, to close a background command's window. */
const SHELL_WATCHERS = ["read_bash", "stop_bash", "list_bash"];

/** The events unwind installs, in the hook command's words (the payload does not name them). */
const EVENTS = { preToolUse: "pre", postToolUse: "post", postToolUseFailure: "post" } as const;

export const copilot: HarnessRules = {
  // postToolUseFailure comes for a tool that failed (seen with 1.0.102: an edit whose old_str was not
  // there); a shell command that exits non-zero is an ordinary postToolUse.
  events: EVENTS,
  fileTools: { create: "path", edit: "path" },
  readOnly: new Set([...QUIET, ...SHELL_WATCHERS]),
  quiet: QUIET,
  // `bash` with `mode: "async"` goes on in the background (seen with 1.0.102: its post comes at once).
  background: ["mode=async", "mode=detached"],
  payload(p, event) {
    if (event === undefined) return "no event named: the hook command must end in it (unwind hook copilot preToolUse); run unwind init --copilot again";
    if (!Object.hasOwn(EVENTS, event)) return `unsupported event ${event.slice(0, 60)}`;
    const out: JsonObject = { hook_event_name: event };
    if (p.sessionId !== undefined) out.session_id = p.sessionId;
    if (p.cwd !== undefined) out.cwd = p.cwd;
    if (p.toolName !== undefined) out.tool_name = p.toolName;
    const args = toolArgs(p.toolArgs);
    if (args !== undefined) out.tool_input = args;
    return out;
  },
  settings: {
    file: ".github/hooks/unwind.json",
    // Copilot CLI matches `matcher` against the whole tool name as a JavaScript regular expression
    // (seen with 1.0.102: view then starts no hook; create, edit and bash do).
    group: (command) => ({ type: "command", bash: command, matcher: matcherExcept(QUIET), timeoutSec: 30 }),
    flat: { command: "bash" },
    eventArg: true,
    fresh: { version: 1 },
  },
};

/** The tool's arguments: an object (1.0.102), or the same as JSON text. */
function toolArgs(v: Json | undefined): Json | undefined {
  if (typeof v !== "string") return v;
  try {
    const parsed = JSON.parse(v) as Json;
    return isObject(parsed) ? parsed : v;
  } catch {
    return v;
  }
}
