/**
 * Codex: its hook payloads and `.codex/hooks.json`. Codex edits files with
 * apply_patch, whose targets are read from the patch text itself.
 */
import { isObject, unwindMcpTool, type HarnessRules, type Json } from "./rules.js";

/** Codex names an MCP tool `mcp__<server>__<tool>`, as Claude Code does. */
const PREFIX = "mcp__unwind__";
const ownTool = unwindMcpTool(PREFIX);

const PATCH_BEGIN = "*** Begin Patch";
const PATCH_HEADERS = ["*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"];

export const codex: HarnessRules = {
  events: { PreToolUse: "pre", PostToolUse: "post" },
  fileTools: {},
  // Codex 0.169 reads through exec_command (hooks see it as Bash); its own other tools, seen offered
  // (docs/clients.md): view_image, request_user_input and the goal tools only read or keep notes.
  // write_stdin feeds a running command, which may write: it stays unknown, on the safe side.
  readOnly: new Set(["read_file", "list_dir", "grep_files", "view_image", "web_search", "update_plan", "request_user_input", "get_goal", "create_goal", "update_goal"]),
  background: [],
  // Codex's matcher is a Rust regular expression matched against the whole name: no lookahead, so no
  // "every tool but these". A matcher it cannot parse disables its group for every tool, Bash
  // included (seen with the real client), so unwind installs none.
  quiet: [],
  classify(tool, input) {
    if (ownTool(tool)) return { kind: "ignore" };
    if (tool !== "apply_patch") return undefined;
    const patch = isObject(input) ? patchText(input.command) : undefined;
    if (patch === undefined) return { error: "apply_patch payload has no command" };
    const paths = patchPaths(patch);
    // A patch we cannot read the files of still changes something: snapshot the tree.
    return paths.length > 0 ? { kind: "files", paths } : { kind: "tree" };
  },
  settings: {
    file: ".codex/hooks.json",
    group: (command) => ({ hooks: [{ type: "command", command, timeout: 30 }] }),
  },
  // Codex reads project-scoped config from `.codex/config.toml` (in a trusted project only): `[mcp_servers.<name>]` with `command`, `args`.
  mcp: { file: ".codex/config.toml", prefix: PREFIX },
};

/**
 * The patch text of a Codex apply_patch `command`: the string itself, or for
 * an argv array the last element carrying the patch envelope (else all of it).
 */
function patchText(command: Json | undefined): string | undefined {
  if (typeof command === "string") return command === "" ? undefined : command;
  if (!Array.isArray(command) || command.length === 0) return undefined;
  const parts: string[] = [];
  for (const part of command) {
    if (typeof part !== "string") return undefined;
    parts.push(part);
  }
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i];
    if (part?.includes(PATCH_BEGIN)) return part;
  }
  const joined = parts.join("\n");
  return joined === "" ? undefined : joined;
}

/**
 * Every path a patch names, in order of first appearance: added, updated and
 * deleted files, and the destination of each move (its source is the Update
 * File header before it).
 */
export function patchPaths(patch: string): string[] {
  const seen = new Set<string>();
  for (const line of patch.split("\n")) {
    // Headers are matched with surrounding whitespace allowed: a stray header
    // match only adds a file capture that finds no change, a missed one loses
    // a file from undo.
    const trimmed = line.trim();
    if (!trimmed.startsWith("*** ")) continue;
    for (const header of PATCH_HEADERS) {
      if (!trimmed.startsWith(header)) continue;
      const path = trimmed.slice(header.length).trim();
      if (path !== "") seen.add(path);
      break;
    }
  }
  return [...seen];
}
