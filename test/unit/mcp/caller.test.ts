import { describe, expect, it } from "vitest";
import { callerOf, callerOfCall, MARK_FRESH_MS, serverRoot } from "../../../src/mcp/caller.js";

describe("which session and work tree the MCP server takes by default", () => {
  it("under Claude Code: its session and project directory", () => {
    const env = { CLAUDE_CODE_SESSION_ID: "abc", CLAUDE_PROJECT_DIR: "/p/claude" };
    expect(callerOf(env)).toEqual({ session: "claude:abc", source: "CLAUDE_CODE_SESSION_ID" });
    expect(serverRoot(undefined, env)).toBe("/p/claude");
    expect(serverRoot("/given", env)).toBe("/given"); // --root wins
  });

  it("a Gemini CLI started from Claude's Bash inherits Claude's variables: they are not taken for its own", () => {
    const env = { GEMINI_CLI: "1", CLAUDE_CODE_SESSION_ID: "parent", CLAUDE_PROJECT_DIR: "/p/claude", GEMINI_PROJECT_DIR: "/p/gemini" };
    expect(callerOf(env)).toEqual({ session: null, source: null });
    expect(serverRoot(undefined, env)).toBe("/p/gemini");
    expect(serverRoot(undefined, { GEMINI_CLI: "1", CLAUDE_PROJECT_DIR: "/p/claude" })).toBeUndefined(); // the directory it was started in
  });
});

describe("who makes a call that takes work back: the client's hook event for it, marked in the store", () => {
  const root = "/w";
  const at = (msAgo: number) => new Date(NOW - msAgo).toISOString();
  const NOW = Date.parse("2026-12-02T12:00:00Z");
  const mark = (session: string, call: string, o: { tool?: string; root?: string; ago?: number } = {}) => ({ session, call, tool: o.tool ?? "undo", root: o.root ?? root, at: at(o.ago ?? 1000) });
  const none = { session: null, source: null };
  const env = { session: "claude:env", source: "CLAUDE_CODE_SESSION_ID" };
  const byHook = (session: string) => ({ session, source: "the client's hook event for this call" });

  it("with the client's tool-use id: the mark of that very call, else the environment's session", () => {
    const marks = [mark("claude:a", "toolu_1"), mark("claude:b", "toolu_2")];
    expect(callerOfCall(env, marks, { tool: "undo", root, toolUseId: "toolu_2", now: NOW })).toEqual(byHook("claude:b")); // after /clear the mark is the current session
    expect(callerOfCall(env, marks, { tool: "undo", root, toolUseId: "toolu_9", now: NOW })).toEqual(env);
    expect(callerOfCall(none, marks, { tool: "undo", root, toolUseId: "toolu_9", now: NOW })).toEqual(none); // not some other call's mark
    expect(callerOfCall(none, marks, { tool: "redo", root, toolUseId: "toolu_2", now: NOW })).toEqual(none); // another tool's
  });

  it("without one: the environment's session, else the one session with a fresh open mark of this tool in this work tree", () => {
    expect(callerOfCall(env, [mark("gemini:g", "h-1")], { tool: "undo", root, now: NOW })).toEqual(env);
    expect(callerOfCall(none, [mark("gemini:g", "h-1"), mark("gemini:g", "h-2")], { tool: "undo", root, now: NOW })).toEqual(byHook("gemini:g"));
    // Two sessions calling at once: unknown, never a guess.
    expect(callerOfCall(none, [mark("gemini:g", "h-1"), mark("gemini:h", "h-2")], { tool: "undo", root, now: NOW })).toEqual(none);
    // Not this tool, not this work tree, or too old to be this call.
    expect(callerOfCall(none, [mark("gemini:g", "h-1", { tool: "restore" })], { tool: "undo", root, now: NOW })).toEqual(none);
    expect(callerOfCall(none, [mark("gemini:g", "h-1", { root: "/other" })], { tool: "undo", root, now: NOW })).toEqual(none);
    expect(callerOfCall(none, [mark("gemini:g", "h-1", { ago: MARK_FRESH_MS + 1 })], { tool: "undo", root, now: NOW })).toEqual(none);
    expect(callerOfCall(none, [mark("gemini:g", "h-1", { ago: MARK_FRESH_MS + 1 }), mark("gemini:h", "h-2")], { tool: "undo", root, now: NOW })).toEqual(byHook("gemini:h"));
    expect(callerOfCall(none, [], { tool: "undo", root, now: NOW })).toEqual(none);
  });
});
