import { expect } from "vitest";
import { spawn } from "node:child_process";
import { BIN, unwind, type CliResult } from "./helpers.js";
import type { FileRecord } from "../src/store/journal.js";

let seq = 0;

/** A Claude Code PreToolUse/PostToolUse payload, in the harness's real shape (SPEC section 8). */
export function claudePayload(
  root: string,
  session: string,
  event: "PreToolUse" | "PostToolUse",
  tool: string,
  input: Record<string, unknown>,
  toolUseId: string,
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: `/home/dev/.claude/projects/x/${session}.jsonl`,
    cwd: root,
    permission_mode: "default",
    hook_event_name: event,
    tool_name: tool,
    tool_input: input,
    tool_use_id: toolUseId,
    ...(event === "PostToolUse" ? { tool_response: { success: true } } : {}),
    ...extra,
  });
}

/** Runs the real hook entry point with a payload on stdin. */
export function hook(cwd: string, harness: string, payload: string, env: Record<string, string> = {}): CliResult {
  return unwind(cwd, ["hook", harness], { input: payload, env });
}

/** One Claude hook event through the real `unwind hook claude` process, which must exit 0 and print nothing. */
export function ev(root: string, session: string, event: "PreToolUse" | "PostToolUse", tool: string, input: Record<string, unknown>, id: string, env: Record<string, string> = {}) {
  const r = hook(root, "claude", claudePayload(root, session, event, tool, input, id), env);
  expect([r.code, r.stdout]).toEqual([0, ""]);
}

export function hookAsync(cwd: string, harness: string, payload: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [BIN, "hook", harness], { cwd });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => res({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(payload);
  });
}

/**
 * A whole Claude tool call: PreToolUse hook, the tool's effect, PostToolUse
 * hook, each through the real `unwind hook claude` process.
 */
export function claudeCall(root: string, session: string, tool: string, input: Record<string, unknown>, effect: () => void, extra: Record<string, unknown> = {}): string {
  const id = `toolu_${(++seq).toString().padStart(4, "0")}_${Math.random().toString(36).slice(2, 8)}`;
  const pre = hook(root, "claude", claudePayload(root, session, "PreToolUse", tool, input, id, extra));
  if (pre.code !== 0 || pre.stdout !== "") throw new Error(`pre hook: ${pre.code} ${pre.stdout} ${pre.stderr}`);
  effect();
  const post = hook(root, "claude", claudePayload(root, session, "PostToolUse", tool, input, id, extra));
  if (post.code !== 0 || post.stdout !== "") throw new Error(`post hook: ${post.code} ${post.stdout} ${post.stderr}`);
  return id;
}

/**
 * `claudeCall` with extra environment for both hook processes, e.g.
 * `{ UNWIND_TASK: "T-1" }` to label the captures with a task as an
 * orchestrator's agent environment would.
 */
export function claudeCallEnv(
  root: string,
  session: string,
  tool: string,
  input: Record<string, unknown>,
  effect: () => void,
  env: Record<string, string>,
  extra: Record<string, unknown> = {},
): string {
  const id = `toolu_${(++seq).toString().padStart(4, "0")}_${Math.random().toString(36).slice(2, 8)}`;
  const pre = hook(root, "claude", claudePayload(root, session, "PreToolUse", tool, input, id, extra), env);
  if (pre.code !== 0 || pre.stdout !== "") throw new Error(`pre hook: ${pre.code} ${pre.stdout} ${pre.stderr}`);
  effect();
  const post = hook(root, "claude", claudePayload(root, session, "PostToolUse", tool, input, id, extra), env);
  if (post.code !== 0 || post.stdout !== "") throw new Error(`post hook: ${post.code} ${post.stdout} ${post.stderr}`);
  return id;
}

/** A Write's file capture of a.txt as the journal holds it (no state): for tests of the journal's own reading. */
export const fileRecord = (session: string, call: string, at: string, phase: "pre" | "post" = "pre"): FileRecord => ({
  v: 1,
  at,
  session,
  harness: "claude",
  tool: "Write",
  call,
  phase,
  kind: "file",
  path: "a.txt" as FileRecord["path"],
  state: null,
});
