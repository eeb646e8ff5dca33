import { existsSync, readFileSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { writeFileAtomic } from "../sys/atomic.js";
import { sessionFile } from "./journal.js";
import { mkdirPrivate } from "../sys/files.js";

/**
 * The calls of one session whose window is still open: a pre captured and
 * no post yet, or a background command whose post came while it still runs
 * (SPEC section 2: every call is closed). The session's next event closes
 * them with a capture of its own. Kept beside the session's journal file,
 * read and written under the store lock. It is a cache of what the journal
 * says: lost, the calls stay open until a reading command closes them.
 */
export interface OpenCall {
  call: string;
  tool: string;
  kind: "tree" | "files";
  /** Repo-relative paths of a file call. */
  paths?: string[];
  /** Its post came, but it runs on in the background. */
  background?: true;
  /** The content key its post will carry, for a harness that sends no tool-use id (CaptureEvent.pairing). */
  key?: string;
  /** The subagent that made it (CaptureEvent.agent): a record closing it is labelled with that, not with the closing event's. */
  agent?: string;
  agentType?: string;
  /**
   * A command that read the record closed it (SPEC section 2), its post not
   * come. It stays here, closed, until the session's next event: if that is
   * its own post, the post pairs with it (a harness that sends no tool-use
   * id finds it by `key`) and its window runs to the post, as if nobody had
   * read; any other event forgets it.
   */
  readClosed?: true;
}

const openFile = (store: string, session: string) => sessionFile(store, session).replace(/\.jsonl$/, ".open");

/** Whether the session may have calls open: one stat, for the hooks of read-only tools. */
export function hasOpenCalls(store: string, session: string): boolean {
  return existsSync(openFile(store, session));
}

export function readOpenCalls(store: string, session: string): OpenCall[] {
  try {
    const parsed = JSON.parse(readFileSync(openFile(store, session), "utf8")) as unknown;
    // Damaged entries are dropped, not trusted: one must not fail every later capture of the session.
    return Array.isArray(parsed) ? parsed.filter(wellFormed) : [];
  } catch {
    return [];
  }
}

export function writeOpenCalls(store: string, session: string, calls: readonly OpenCall[]): void {
  const f = openFile(store, session);
  if (calls.length === 0) rmSync(f, { force: true });
  else {
    mkdirPrivate(dirname(f));
    writeFileAtomic(f, JSON.stringify(calls), { sync: false });
  }
}

function wellFormed(o: unknown): o is OpenCall {
  if (typeof o !== "object" || o === null) return false;
  const c = o as Record<string, unknown>;
  if (typeof c.call !== "string" || typeof c.tool !== "string") return false;
  if (c.key !== undefined && typeof c.key !== "string") return false;
  if (c.readClosed !== undefined && c.readClosed !== true) return false;
  if ((c.agent !== undefined && typeof c.agent !== "string") || (c.agentType !== undefined && typeof c.agentType !== "string")) return false;
  if (c.kind === "tree") return true;
  return c.kind === "files" && Array.isArray(c.paths) && c.paths.every((p) => typeof p === "string");
}
