import { describe, expect, it } from "vitest";
import { callerOf, serverRoot } from "../../../src/mcp/caller.js";

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
