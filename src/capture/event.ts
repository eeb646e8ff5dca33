/**
 * What one hook event asks unwind to capture, in harness-neutral terms.
 * The harness rules (src/capture/harness/) turn each harness's own payload
 * into this; everything after that is shared.
 */

export type Phase = "pre" | "post";

export type Target =
  /** File-editing tool: capture these paths (absolute, or relative to `cwd`). */
  | { kind: "files"; paths: string[] }
  /** Shell tool or a tool whose effects are unknown: a tree snapshot. */
  | { kind: "tree" }
  /** Read-only tool: nothing to capture. */
  | { kind: "ignore" };

export interface CaptureEvent {
  harness: string;
  /** `<harness>:<session id>`. */
  session: string;
  phase: Phase;
  tool: string;
  /**
   * Pairs pre with post: the harness's tool-use id; or, with `pairing: "key"`,
   * a key computed from the call's content (Gemini sends no id), which the
   * capture turns into an id of its own.
   */
  call: string;
  /**
   * `call` is a content key, not an id: two identical calls one after the
   * other share it. The capture gives each pre a new id and pairs a post with
   * the oldest open call of the session under the same key.
   */
  pairing?: "key";
  /** The directory paths are relative to; also where the root is found from. */
  cwd: string;
  agent?: string;
  agentType?: string;
  target: Target;
  /** A shell command started in the background: its window stays open until the session's next call. */
  background?: true;
  /** A call of unwind's own MCP server that takes work back (`undo`, `restore`, `redo`): the tool as the server names it. */
  unwindTool?: string;
}

export type ParseResult = { ok: true; event: CaptureEvent } | { ok: false; error: string };
