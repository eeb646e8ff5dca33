/**
 * Who is calling: the calling agent's own session, where its client says.
 *
 * What each client tells a stdio MCP server (docs/design.md, "MCP server"):
 * - Claude Code sets `CLAUDE_CODE_SESSION_ID` in the server's environment
 *   (since 2.1.154; the same id its hooks get as `session_id` since
 *   2.1.163, `--resume` included). The server keeps the id it was started
 *   with: after `/clear` the conversation has a new id and the server still
 *   names the old one, which is why a default is only a default (every
 *   report names the session it used, and undo applies only a previewed plan).
 * - Codex passes no session in the server's environment; Gemini CLI passes
 *   only `GEMINI_CLI=1`. Their agents name their session explicitly.
 *
 * For undo, restore and redo, who is calling decides what may be taken
 * back (src/mcp/allow.ts), so each such call also looks at the client's own
 * pre-call hook event for it, which unwind's hook marks in the store just
 * before the call arrives (src/store/mcp-calls.ts): `callerOfCall`.
 */
import type { McpCallMark } from "../store/mcp-calls.js";

export interface Caller {
  /** The session as unwind names it (`claude:<id>`), or null when the client does not say. */
  session: string | null;
  /** Where it came from, for messages. */
  source: string | null;
}

/**
 * Claude Code's variables are inherited by whatever its Bash tool starts: a
 * Gemini CLI run from there passes them on to its own MCP servers. So they
 * count only when no other client says it started the server (`GEMINI_CLI`).
 */
const otherClient = (env: NodeJS.ProcessEnv) => Boolean(env.GEMINI_CLI);

export function callerOf(env: NodeJS.ProcessEnv): Caller {
  if (otherClient(env)) return { session: null, source: null };
  const id = env.CLAUDE_CODE_SESSION_ID?.trim();
  if (id) return { session: `claude:${id}`, source: "CLAUDE_CODE_SESSION_ID" };
  return { session: null, source: null };
}

/** How long a mark counts without a tool-use id to tie it to the call: the client's permission prompt comes between. */
export const MARK_FRESH_MS = 10 * 60_000;

/**
 * Who makes this call of `tool`, by the rule of docs/design.md ("Which
 * session is calling"):
 * 1. The client sends the call's tool-use id (Claude Code's
 *    `_meta["claudecode/toolUseId"]`): the mark of this work tree with that
 *    id names the session. None (no hooks installed): the environment's.
 * 2. Otherwise the environment's session, where the client sets one.
 * 3. Otherwise the open marks of `tool` in this work tree from the last ten
 *    minutes: when they all name one session, that one; none or several
 *    (two agents calling at once), unknown.
 */
export function callerOfCall(env: Caller, marks: readonly McpCallMark[], call: { tool: string; root: string; toolUseId?: string | undefined; now: number }): Caller {
  const here = marks.filter((m) => m.tool === call.tool && m.root === call.root);
  if (call.toolUseId !== undefined) {
    const mine = here.find((m) => m.call === call.toolUseId);
    return mine ? { session: mine.session, source: "the client's hook event for this call" } : env;
  }
  if (env.session) return env;
  const sessions = new Set(here.filter((m) => call.now - Date.parse(m.at) <= MARK_FRESH_MS).map((m) => m.session));
  if (sessions.size === 1) return { session: [...sessions][0]!, source: "the client's hook event for this call" };
  return { session: null, source: null };
}

/**
 * The work tree the server guards: `--root`, else the project directory the
 * client names (as a hook does: SPEC section 2), else the directory the
 * client started it in.
 */
export function serverRoot(root: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (root !== undefined) return root;
  return (otherClient(env) ? env.GEMINI_PROJECT_DIR : env.CLAUDE_PROJECT_DIR || env.GEMINI_PROJECT_DIR) || undefined;
}
