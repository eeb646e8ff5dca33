/**
 * OpenCode: its plugin runs in OpenCode's own process, so `unwind init
 * --opencode` writes one (`.opencode/plugin/unwind.js`, own-files.ts) that
 * hands each call to `unwind hook opencode` on stdin as
 * `{event, directory, input, output}`: OpenCode's own `tool.execute.before`
 * and `tool.execute.after` arguments, and the project directory the plugin
 * was given. A tool that throws (an edit whose text is not found) gets no
 * `tool.execute.after` (seen with 1.18.33): the plugin then sends
 * `session.idle` when the session stops, which closes what is still open.
 */
import { patchPaths } from "./codex.js";
import { isObject, type HarnessRules, type Json, type JsonObject } from "./rules.js";

/** Tools that only read, look up or keep notes (1.18.33 offers read, glob, grep, webfetch, todowrite, skill, task). */
export const OPENCODE_QUIET = ["read", "glob", "grep", "list", "webfetch", "websearch", "codesearch", "todowrite", "todoread", "skill", "lsp", "question"];

/** The event the plugin sends when a session stops: it closes the calls a throwing tool left open. */
const IDLE = "session.idle";

export const opencode: HarnessRules = {
  events: { "tool.execute.before": "pre", "tool.execute.after": "post", [IDLE]: "post" },
  fileTools: { write: "filePath", edit: "filePath", multiedit: "filePath" },
  // A subagent's (task's) own calls reach the plugin under its own session: the task call itself changes nothing.
  readOnly: new Set([...OPENCODE_QUIET, "task", IDLE]),
  quiet: OPENCODE_QUIET,
  background: [],
  classify(tool, input) {
    // OpenCode offers apply_patch instead of edit to some models: Codex's patch format, in `patchText`.
    if (tool !== "apply_patch") return undefined;
    const text = isObject(input) ? input.patchText : undefined;
    const paths = typeof text === "string" ? patchPaths(text) : [];
    return paths.length > 0 ? { kind: "files", paths } : { kind: "tree" };
  },
  payload(p) {
    const event = p.event;
    if (typeof event !== "string") return "payload has no event (the plugin's hook name)";
    const out: JsonObject = { hook_event_name: event, cwd: p.directory ?? null };
    if (event === IDLE) return { ...out, session_id: p.sessionID ?? null, tool_name: IDLE };
    const input = isObject(p.input) ? p.input : {};
    const output = isObject(p.output) ? p.output : {};
    // Before: the arguments are the output (a plugin may change them); after: they come with the input.
    const args: Json = input.args ?? output.args ?? null;
    return { ...out, session_id: input.sessionID ?? null, tool_name: input.tool ?? null, tool_input: args, tool_use_id: input.callID ?? null };
  },
  settings: {
    file: ".opencode/plugin/unwind.js",
    group: () => ({}),
    own: "opencode-plugin",
  },
};
