import { storePath } from "../domain/store-layout.js";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../sys/atomic.js";

/**
 * A call of one of unwind's own taking-back MCP tools (undo, restore, redo)
 * as the client's own pre-call hook event announced it, just before the
 * call reaches `unwind mcp`: which session is about to call which tool. The
 * server reads these to learn who is calling (src/mcp/caller.ts); the
 * post-call event removes the mark. One small file a call, written without
 * the store lock (a hook must not wait for an undo that holds it).
 */
export interface McpCallMark {
  /** `<harness>:<session id>`, as the hook event names it. */
  session: string;
  /** The tool as the server names it: `undo`, `restore`, `redo`. */
  tool: string;
  /** The client's tool-use id (Claude Code, Codex), or the hook's content key (Gemini CLI). */
  call: string;
  /** The work tree the hook event was for. */
  root: string;
  at: string;
}

/** Marks older than this are dropped when the next one is written: a call whose post never came. */
const STALE_MS = 3600_000;

const dirOf = (store: string) => storePath(store, "mcp-calls");
const fileOf = (store: string, session: string, call: string) => join(dirOf(store), `${createHash("sha256").update(`${session}\0${call}`).digest("hex").slice(0, 16)}.json`);

export function markMcpCall(store: string, mark: McpCallMark): void {
  mkdirSync(dirOf(store), { recursive: true, mode: 0o700 });
  const now = Date.parse(mark.at);
  for (const f of readdirSync(dirOf(store))) {
    try {
      if (now - statSync(join(dirOf(store), f)).mtimeMs > STALE_MS) rmSync(join(dirOf(store), f), { force: true });
    } catch {
      /* another hook removed it */
    }
  }
  writeFileAtomic(fileOf(store, mark.session, mark.call), JSON.stringify(mark), { sync: false });
}

export function clearMcpCall(store: string, session: string, call: string): void {
  rmSync(fileOf(store, session, call), { force: true });
}

/** Every mark still there; a damaged one is left out, never trusted. */
export function mcpCallMarks(store: string): McpCallMark[] {
  let files: string[];
  try {
    files = readdirSync(dirOf(store));
  } catch {
    return [];
  }
  const out: McpCallMark[] = [];
  for (const f of files.filter((x) => x.endsWith(".json"))) {
    try {
      const m = JSON.parse(readFileSync(join(dirOf(store), f), "utf8")) as Record<string, unknown>;
      if (["session", "tool", "call", "root", "at"].every((k) => typeof m[k] === "string")) out.push(m as unknown as McpCallMark);
    } catch {
      /* removed meanwhile, or torn: not evidence */
    }
  }
  return out;
}
