import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

import { describe, expect, it } from "vitest";

import { parseHookEvent } from "../../../src/capture/harness/index.js";
import type { CaptureEvent } from "../../../src/capture/event.js";

const FIXTURES = new URL("../../fixtures/hooks/", import.meta.url);

type Payload = Record<string, unknown>;

/** The raw stdin text of a fixture, exactly as a harness would send it. */
function raw(harness: string, name: string): string {
  return readFileSync(new URL(`${harness}/${name}.json`, FIXTURES), "utf8");
}

function payload(harness: string, name: string): Payload {
  return JSON.parse(raw(harness, name)) as Payload;
}

/** A fixture with fields replaced; `undefined` removes the field. */
function variant(harness: string, name: string, changes: Payload): string {
  const base = payload(harness, name);
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete base[key];
    else base[key] = value;
  }
  return JSON.stringify(base);
}

function parseOk(harness: string, text: string): CaptureEvent {
  const result = parseHookEvent(harness, text);
  if (!result.ok) throw new Error(`expected ${harness} payload to parse, got: ${result.error}`);
  return result.event;
}

function parseErr(harness: string, text: string): string {
  const result = parseHookEvent(harness, text);
  if (result.ok) throw new Error(`expected ${harness} payload to be rejected, got ${JSON.stringify(result.event)}`);
  expect(result.error).not.toMatch(/[\r\n]/);
  expect(result.error.length).toBeGreaterThan(0);
  return result.error;
}

function sha16(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

const CLAUDE_SESSION = "claude:3f6c1d2e-8a4b-4c7e-9b1f-5d2a7e9c0b14";
const CODEX_SESSION = "codex:0199e3a4-5b6c-7d8e-9f01-23456789abcd";
const GEMINI_SESSION = "gemini:8d2f4a61-3c9e-4b7a-a5d0-6e1f2b3c4d5e";
const CWD = "/home/dev/projects/webapp";

/** Each of `tools`, in the payload of `fixture` renamed to it, is parsed and ignored. */
function expectIgnored(harness: string, fixture: string, tools: readonly string[]): void {
  for (const tool of tools) {
    const event = parseOk(harness, variant(harness, fixture, { tool_name: tool }));
    expect({ tool: event.tool, target: event.target }).toEqual({ tool, target: { kind: "ignore" } });
  }
}

describe("claude", () => {
  it("Write captures the written file, pre and post paired by tool_use_id", () => {
    const pre = parseOk("claude", raw("claude", "write.pre"));
    const post = parseOk("claude", raw("claude", "write.post"));
    expect(pre).toEqual({
      harness: "claude",
      session: CLAUDE_SESSION,
      phase: "pre",
      tool: "Write",
      call: "toolu_01HpQ7sVbN3xKc2LrT9mWzEa",
      cwd: CWD,
      target: { kind: "files", paths: ["/home/dev/projects/webapp/src/lib/slugify.ts"] },
    });
    expect(post).toEqual({ ...pre, phase: "post" });
  });

  it("Edit and MultiEdit capture their file_path", () => {
    for (const name of ["edit", "multiedit"]) {
      const pre = parseOk("claude", raw("claude", `${name}.pre`));
      const post = parseOk("claude", raw("claude", `${name}.post`));
      const filePath = (payload("claude", `${name}.pre`).tool_input as Payload).file_path;
      expect(pre.target).toEqual({ kind: "files", paths: [filePath] });
      expect(post.target).toEqual(pre.target);
      expect([pre.phase, post.phase]).toEqual(["pre", "post"]);
      expect(post.call).toBe(pre.call);
    }
    expect(parseOk("claude", raw("claude", "edit.pre")).target).toEqual({
      kind: "files",
      paths: ["/home/dev/projects/webapp/src/server/routes.ts"],
    });
    expect(parseOk("claude", raw("claude", "multiedit.post")).tool).toBe("MultiEdit");
  });

  it("NotebookEdit captures notebook_path", () => {
    const pre = parseOk("claude", raw("claude", "notebookedit.pre"));
    expect(pre.tool).toBe("NotebookEdit");
    expect(pre.target).toEqual({ kind: "files", paths: ["/home/dev/projects/webapp/notebooks/latency.ipynb"] });
    expect(parseOk("claude", raw("claude", "notebookedit.post")).target).toEqual(pre.target);
  });

  it("Bash gets a tree snapshot", () => {
    const pre = parseOk("claude", raw("claude", "bash.pre"));
    const post = parseOk("claude", raw("claude", "bash.post"));
    expect(pre).toMatchObject({ tool: "Bash", phase: "pre", target: { kind: "tree" } });
    expect(post).toMatchObject({ tool: "Bash", phase: "post", target: { kind: "tree" } });
    expect(post.call).toBe("toolu_01Ts6GhY2wKeP9mVrL4nBdQx");
    expect(pre.call).toBe(post.call);
  });

  it("unwind's own MCP tools are ignored (their receipts are the record); every other MCP tool gets a tree snapshot", () => {
    for (const tool of ["mcp__unwind__undo", "mcp__unwind__restore", "mcp__unwind__redo", "mcp__unwind__undo_preview", "mcp__unwind__sessions"]) {
      expect(parseOk("claude", variant("claude", "bash.pre", { tool_name: tool })).target, tool).toEqual({ kind: "ignore" });
    }
    // The control: another server's tools, even one named like it, and a tool unwind's server does not have, have unknown effects.
    for (const tool of ["mcp__github__create_pr", "mcp__unwinder__undo", "unwind__undo", "mcp__unwind__write_file", "mcp__unwind__undo_x"]) {
      expect(parseOk("claude", variant("claude", "bash.pre", { tool_name: tool })).target, tool).toEqual({ kind: "tree" });
    }
  });

  it("Gemini CLI (mcp_<server>_<tool>) and Codex (mcp__<server>__<tool>) leave unwind's own MCP tools alone too", () => {
    for (const tool of ["mcp_unwind_undo", "mcp_unwind_restore", "mcp_unwind_restore_preview"]) {
      expect(parseOk("gemini", variant("gemini", "run-shell-command.pre", { tool_name: tool })).target, tool).toEqual({ kind: "ignore" });
    }
    for (const tool of ["mcp_github_create_pr", "mcp_unwind_write_file"]) {
      expect(parseOk("gemini", variant("gemini", "run-shell-command.pre", { tool_name: tool })).target, tool).toEqual({ kind: "tree" });
    }
    expect(parseOk("codex", variant("codex", "bash.pre", { tool_name: "mcp__unwind__undo" })).target).toEqual({ kind: "ignore" });
    expect(parseOk("codex", variant("codex", "bash.pre", { tool_name: "mcp__github__create_pr" })).target).toEqual({ kind: "tree" });
  });

  it("a call of unwind's undo, restore or redo is named for the server (its hook event says who is calling); no other tool is", () => {
    expect(parseOk("claude", variant("claude", "bash.pre", { tool_name: "mcp__unwind__undo" })).unwindTool).toBe("undo");
    expect(parseOk("codex", variant("codex", "bash.pre", { tool_name: "mcp__unwind__redo" })).unwindTool).toBe("redo");
    expect(parseOk("gemini", variant("gemini", "run-shell-command.pre", { tool_name: "mcp_unwind_restore" })).unwindTool).toBe("restore");
    for (const tool of ["mcp__unwind__undo_preview", "mcp__unwind__sessions", "mcp__github__undo", "mcp__unwinder__undo", "Bash"]) {
      expect(parseOk("claude", variant("claude", "bash.pre", { tool_name: tool })).unwindTool, tool).toBeUndefined();
    }
    expect(parseOk("gemini", variant("gemini", "run-shell-command.pre", { tool_name: "mcp__unwind__undo" })).unwindTool).toBeUndefined(); // Claude's spelling, under Gemini
  });

  it("Read is ignored", () => {
    expect(parseOk("claude", raw("claude", "read.pre")).target).toEqual({ kind: "ignore" });
    expect(parseOk("claude", raw("claude", "read.post")).target).toEqual({ kind: "ignore" });
  });

  it("every read-only tool is ignored", () => {
    const readOnly = [
      "Read",
      "Glob",
      "Grep",
      "LS",
      "NotebookRead",
      "WebFetch",
      "WebSearch",
      "TodoWrite",
      "Task",
      "Agent",
      "ExitPlanMode",
      "BashOutput",
      "KillShell",
      "KillBash",
      "ListMcpResourcesTool",
      "ReadMcpResourceTool",
      "SlashCommand",
      "Skill",
    ];
    expectIgnored("claude", "bash.pre", readOnly);
  });

  it("MCP tools and unknown tools get a tree snapshot", () => {
    const mcp = parseOk("claude", raw("claude", "mcp-github-create-issue.pre"));
    expect(mcp).toMatchObject({ tool: "mcp__github__create_issue", target: { kind: "tree" } });
    expect(parseOk("claude", raw("claude", "mcp-github-create-issue.post")).target).toEqual({ kind: "tree" });
    for (const tool of ["PowerShell", "SomeFutureTool", "mcp__filesystem__write_file", "write_file"]) {
      expect(parseOk("claude", variant("claude", "bash.pre", { tool_name: tool })).target).toEqual({ kind: "tree" });
    }
  });

  // Claude Code 2.1.332 as it really sent them (test/real/claude-subagents.test.ts): the parent's session_id, and agent_id/agent_type.
  it("a subagent's call carries agent and agentType", () => {
    const pre = parseOk("claude", raw("claude", "subagent-write.pre"));
    expect(pre).toEqual({
      harness: "claude",
      session: CLAUDE_SESSION,
      phase: "pre",
      tool: "Write",
      call: "toolu_01Ag2ZrU6yLfM8kPcT3xHwNs",
      cwd: CWD,
      agent: "a950bcfbb96dbf2ad",
      agentType: "general-purpose",
      target: { kind: "files", paths: ["/home/dev/projects/webapp/sub.txt"] },
    });
    expect(parseOk("claude", raw("claude", "subagent-write.post"))).toEqual({ ...pre, phase: "post" });
    const bash = parseOk("claude", raw("claude", "subagent-bash.pre"));
    expect([bash.session, bash.tool, bash.agent, bash.agentType, bash.target]).toEqual([CLAUDE_SESSION, "Bash", "a950bcfbb96dbf2ad", "general-purpose", { kind: "tree" }]);
    expect(parseOk("claude", raw("claude", "subagent-bash.post"))).toEqual({ ...bash, phase: "post" });
  });

  it("main-agent calls have no agent fields, and non-string agent fields are dropped", () => {
    const main = parseOk("claude", raw("claude", "write.pre"));
    expect("agent" in main).toBe(false);
    expect("agentType" in main).toBe(false);
    const odd = parseOk("claude", variant("claude", "subagent-write.pre", { agent_id: 7, agent_type: null }));
    expect(odd.agent).toBeUndefined();
    expect(odd.agentType).toBeUndefined();
    expect(odd.target.kind).toBe("files");
  });

  it("passes paths through as given, relative ones included", () => {
    const text = variant("claude", "edit.pre", {
      tool_input: { file_path: "src/../src/server/routes.ts", old_string: "a", new_string: "b" },
    });
    expect(parseOk("claude", text).target).toEqual({ kind: "files", paths: ["src/../src/server/routes.ts"] });
  });
});

describe("codex", () => {
  const PATCH_PATHS = ["src/lib/slugify.ts", "src/utils/format.ts", "src/lib/format.ts", "src/utils/legacy.ts"];

  function patchVariant(command: unknown): string {
    return variant("codex", "apply-patch.pre", { tool_input: { command } });
  }

  it("apply_patch captures added, updated, moved (source and destination) and deleted files in order", () => {
    const pre = parseOk("codex", raw("codex", "apply-patch.pre"));
    expect(pre).toEqual({
      harness: "codex",
      session: CODEX_SESSION,
      phase: "pre",
      tool: "apply_patch",
      call: "call_Fq8ZrW2mK7tLxN4vB9cYpHsE",
      cwd: CWD,
      target: { kind: "files", paths: PATCH_PATHS },
    });
    expect(parseOk("codex", raw("codex", "apply-patch.post"))).toEqual({ ...pre, phase: "post" });
  });

  it("Bash gets a tree snapshot, paired by tool_use_id", () => {
    const pre = parseOk("codex", raw("codex", "bash.pre"));
    const post = parseOk("codex", raw("codex", "bash.post"));
    expect(pre).toEqual({
      harness: "codex",
      session: CODEX_SESSION,
      phase: "pre",
      tool: "Bash",
      call: "call_Hn3VbT6qR1wYzK8mP5xLcJdA",
      cwd: CWD,
      target: { kind: "tree" },
    });
    expect(post).toEqual({ ...pre, phase: "post" });
  });

  it("every shell tool gets a tree snapshot, read-only tools are ignored, unknown tools get a tree", () => {
    for (const tool of ["Bash", "shell", "local_shell", "exec_command", "unified_exec"]) {
      expect(parseOk("codex", variant("codex", "bash.pre", { tool_name: tool })).target).toEqual({ kind: "tree" });
    }
    for (const tool of ["read_file", "list_dir", "grep_files", "view_image", "web_search", "update_plan"]) {
      expect(parseOk("codex", variant("codex", "bash.pre", { tool_name: tool })).target).toEqual({ kind: "ignore" });
    }
    for (const tool of ["mcp__github__create_issue", "write_stdin", "Write"]) {
      expect(parseOk("codex", variant("codex", "bash.pre", { tool_name: tool })).target).toEqual({ kind: "tree" });
    }
  });

  it("apply_patch as an argv array uses the last element carrying the patch", () => {
    const patch = (payload("codex", "apply-patch.pre").tool_input as Payload).command as string;
    expect(parseOk("codex", patchVariant(["apply_patch", patch])).target).toEqual({
      kind: "files",
      paths: PATCH_PATHS,
    });
    // A heredoc through the shell: the script is the last element with the envelope.
    const script = `apply_patch <<'EOF'\n${patch}EOF\n`;
    expect(parseOk("codex", patchVariant(["bash", "-lc", script])).target).toEqual({
      kind: "files",
      paths: PATCH_PATHS,
    });
    // Two envelopes: the later one wins.
    const other = "*** Begin Patch\n*** Add File: notes/only-this.md\n+hi\n*** End Patch\n";
    expect(parseOk("codex", patchVariant([patch, other])).target).toEqual({
      kind: "files",
      paths: ["notes/only-this.md"],
    });
  });

  it("apply_patch as an argv array without an envelope reads all elements joined", () => {
    const command = ["*** Update File: a.txt", "@@", "-x", "+y", "*** Delete File: b.txt"];
    expect(parseOk("codex", patchVariant(command)).target).toEqual({ kind: "files", paths: ["a.txt", "b.txt"] });
  });

  it("patch paths are deduplicated and trimmed of trailing spaces and CR", () => {
    const patch = [
      "*** Begin Patch",
      "*** Update File: src/a.ts  ",
      "@@",
      "-old",
      "+new",
      "*** Update File: src/a.ts",
      "@@",
      "-old2",
      "+new2",
      "*** Add File: src/b.ts\r",
      "+b",
      "*** Delete File: src/a.ts",
      "*** End Patch",
    ].join("\r\n");
    expect(parseOk("codex", patchVariant(patch)).target).toEqual({ kind: "files", paths: ["src/a.ts", "src/b.ts"] });
  });

  it("indented headers still count (an extra capture is harmless, a missed file is not)", () => {
    const script = "cd pkg && apply_patch <<'EOF'\n  *** Begin Patch\n  *** Update File: lib/a.py\n  @@\n  -x\n  +y\n  *** End Patch\nEOF";
    expect(parseOk("codex", patchVariant(["bash", "-lc", script])).target).toEqual({
      kind: "files",
      paths: ["lib/a.py"],
    });
  });

  it("a move captures the destination even when it is the only new path", () => {
    const patch = "*** Begin Patch\n*** Update File: old/name.ts\n*** Move to: new/name.ts\n@@\n-a\n+b\n*** End Patch";
    expect(parseOk("codex", patchVariant(patch)).target).toEqual({
      kind: "files",
      paths: ["old/name.ts", "new/name.ts"],
    });
  });

  it("hunk lines that merely mention a header are not headers", () => {
    const patch = ["*** Begin Patch", "*** Add File: docs/patch-format.md", "+*** Delete File: this/is/content.md", "+*** Move to: also/content.md", "*** End Patch"].join("\n");
    expect(parseOk("codex", patchVariant(patch)).target).toEqual({ kind: "files", paths: ["docs/patch-format.md"] });
  });

  it("a patch with no file headers gets a tree snapshot", () => {
    expect(parseOk("codex", patchVariant("*** Begin Patch\n*** End Patch\n")).target).toEqual({ kind: "tree" });
    expect(parseOk("codex", patchVariant("echo not a patch at all")).target).toEqual({ kind: "tree" });
    expect(parseOk("codex", patchVariant("*** Add File:   \n+x\n")).target).toEqual({ kind: "tree" });
  });

  it("apply_patch without a usable command is an error naming the field", () => {
    const cases: Array<[string, string]> = [
      ["missing", variant("codex", "apply-patch.pre", { tool_input: {} })],
      ["no tool_input", variant("codex", "apply-patch.pre", { tool_input: undefined })],
      ["number", patchVariant(42)],
      ["empty", patchVariant("")],
      ["empty array", patchVariant([])],
      ["non-string element", patchVariant(["apply_patch", 1])],
    ];
    for (const [, text] of cases) {
      expect(parseErr("codex", text)).toBe("apply_patch payload has no command");
    }
    // Negative control: the same payload with the command present parses.
    expect(parseOk("codex", patchVariant("*** Begin Patch\n*** Delete File: x\n*** End Patch")).target).toEqual({
      kind: "files",
      paths: ["x"],
    });
  });

  it("a codex subagent's agent_id/agent_type are kept as well", () => {
    const event = parseOk("codex", variant("codex", "bash.pre", { agent_id: "0199e3a5-0000-7000-8000-000000000001", agent_type: "worker" }));
    expect(event.agent).toBe("0199e3a5-0000-7000-8000-000000000001");
    expect(event.agentType).toBe("worker");
  });
});

describe("gemini", () => {
  it("write_file captures file_path; pre and post pair on a hash even with keys reordered", () => {
    const preText = raw("gemini", "write-file.pre");
    const postText = raw("gemini", "write-file.post");
    // The fixtures really do list tool_input keys in different orders.
    expect(Object.keys(payload("gemini", "write-file.pre").tool_input as Payload)).not.toEqual(Object.keys(payload("gemini", "write-file.post").tool_input as Payload));
    const pre = parseOk("gemini", preText);
    const post = parseOk("gemini", postText);
    expect(pre).toEqual({
      harness: "gemini",
      session: GEMINI_SESSION,
      phase: "pre",
      tool: "write_file",
      call: pre.call,
      cwd: CWD,
      target: { kind: "files", paths: ["/home/dev/projects/webapp/docs/health.md"] },
      pairing: "key",
    });
    expect(pre.call).toMatch(/^h-[0-9a-f]{16}$/);
    expect(post).toEqual({ ...pre, phase: "post" });
  });

  it("the call id is the documented sha256 of session, tool and key-sorted tool_input", () => {
    const input = payload("gemini", "write-file.pre").tool_input as Payload;
    const sorted = JSON.stringify({ content: input.content, file_path: input.file_path });
    const expected = `h-${sha16(`${GEMINI_SESSION}\0write_file\0${sorted}`)}`;
    expect(parseOk("gemini", raw("gemini", "write-file.pre")).call).toBe(expected);
  });

  it("replace captures file_path and pairs across reordered keys", () => {
    const pre = parseOk("gemini", raw("gemini", "replace.pre"));
    const post = parseOk("gemini", raw("gemini", "replace.post"));
    expect(pre.target).toEqual({ kind: "files", paths: ["/home/dev/projects/webapp/src/server/routes.ts"] });
    expect([pre.phase, post.phase]).toEqual(["pre", "post"]);
    expect(post.call).toBe(pre.call);
    expect(post.target).toEqual(pre.target);
  });

  it("run_shell_command gets a tree snapshot and pairs", () => {
    const pre = parseOk("gemini", raw("gemini", "run-shell-command.pre"));
    const post = parseOk("gemini", raw("gemini", "run-shell-command.post"));
    expect(pre).toMatchObject({ tool: "run_shell_command", phase: "pre", cwd: CWD, target: { kind: "tree" } });
    expect(post).toEqual({ ...pre, phase: "post" });
  });

  it("read_file is ignored, as is every read-only tool", () => {
    expect(parseOk("gemini", raw("gemini", "read-file.pre")).target).toEqual({ kind: "ignore" });
    expect(parseOk("gemini", raw("gemini", "read-file.post")).target).toEqual({ kind: "ignore" });
    const readOnly = ["read_file", "read_many_files", "list_directory", "glob", "search_file_content", "grep", "google_web_search", "web_fetch", "save_memory", "write_todos"];
    expectIgnored("gemini", "run-shell-command.pre", readOnly);
  });

  it("unknown and MCP tools get a tree snapshot", () => {
    for (const tool of ["mcp__github__create_issue", "some_future_tool", "Write", "Bash"]) {
      const event = parseOk("gemini", variant("gemini", "run-shell-command.pre", { tool_name: tool }));
      expect(event.target).toEqual({ kind: "tree" });
    }
  });

  it("nested key order does not change the call id", () => {
    const a = variant("gemini", "run-shell-command.pre", {
      tool_input: { command: "make", env: { B: "2", A: "1" }, opts: [{ y: 1, x: 2 }] },
    });
    const b = variant("gemini", "run-shell-command.post", {
      tool_input: { opts: [{ x: 2, y: 1 }], env: { A: "1", B: "2" }, command: "make" },
    });
    expect(parseOk("gemini", a).call).toBe(parseOk("gemini", b).call);
  });

  it("different inputs, tools or sessions give different call ids", () => {
    const base = parseOk("gemini", raw("gemini", "run-shell-command.pre")).call;
    const otherCommand = parseOk(
      "gemini",
      variant("gemini", "run-shell-command.pre", {
        tool_input: { command: "npm test -- --run --coverage", description: "x", dir_path: "packages/api" },
      }),
    ).call;
    const otherDir = parseOk(
      "gemini",
      variant("gemini", "run-shell-command.pre", {
        tool_input: { command: "npm test -- --run", description: "Run the API package's test suite once." },
      }),
    ).call;
    const otherTool = parseOk("gemini", variant("gemini", "run-shell-command.pre", { tool_name: "shell_v2" })).call;
    const otherSession = parseOk("gemini", variant("gemini", "run-shell-command.pre", { session_id: "another" })).call;
    const ids = [base, otherCommand, otherDir, otherTool, otherSession];
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^h-[0-9a-f]{16}$/);
  });

  it("array order does matter to the call id", () => {
    const a = variant("gemini", "run-shell-command.pre", { tool_input: { paths: ["a", "b"] } });
    const b = variant("gemini", "run-shell-command.pre", { tool_input: { paths: ["b", "a"] } });
    expect(parseOk("gemini", a).call).not.toBe(parseOk("gemini", b).call);
  });

  it("a call without tool_input still gets a stable id", () => {
    const a = parseOk("gemini", variant("gemini", "run-shell-command.pre", { tool_input: undefined }));
    const b = parseOk("gemini", variant("gemini", "run-shell-command.post", { tool_input: undefined }));
    expect(a.call).toBe(b.call);
    expect(a.call).toBe(`h-${sha16(`${GEMINI_SESSION}\0run_shell_command\0null`)}`);
  });
});

describe("call ids", () => {
  it("claude and codex fall back to the hash when tool_use_id is absent or empty", () => {
    for (const [harness, name] of [
      ["claude", "bash.pre"],
      ["codex", "bash.pre"],
    ] as const) {
      const absent = parseOk(harness, variant(harness, name, { tool_use_id: undefined })).call;
      const empty = parseOk(harness, variant(harness, name, { tool_use_id: "" })).call;
      const numeric = parseOk(harness, variant(harness, name, { tool_use_id: 12 })).call;
      expect(absent).toMatch(/^h-[0-9a-f]{16}$/);
      expect(empty).toBe(absent);
      expect(numeric).toBe(absent);
      // Negative control: with the id present it is used as is.
      expect(parseOk(harness, raw(harness, name)).call).toBe(payload(harness, name).tool_use_id);
    }
  });

  it("a tool_use_id given to gemini is used", () => {
    const event = parseOk("gemini", variant("gemini", "replace.pre", { tool_use_id: "gem-call-1" }));
    expect(event.call).toBe("gem-call-1");
  });
});

describe("harnesses and events", () => {
  it("rejects an unknown harness", () => {
    expect(parseErr("cursor", raw("claude", "bash.pre"))).toBe("unknown harness cursor");
    expect(parseErr("", raw("claude", "bash.pre"))).toBe("unknown harness ");
    expect(parseErr("Claude", raw("claude", "bash.pre"))).toBe("unknown harness Claude");
    expect(parseOk("claude", raw("claude", "bash.pre")).harness).toBe("claude");
  });

  it("rejects events other than the tool events, including another harness's names", () => {
    const cases: Array<[string, string, string]> = [
      ["claude", "bash.pre", "SessionStart"],
      ["claude", "bash.pre", "BeforeTool"],
      ["codex", "bash.pre", "UserPromptSubmit"],
      ["codex", "bash.pre", "AfterTool"],
      ["gemini", "run-shell-command.pre", "PreToolUse"],
      ["gemini", "run-shell-command.pre", "BeforeModel"],
      ["gemini", "run-shell-command.pre", "toString"],
    ];
    for (const [harness, name, event] of cases) {
      expect(parseErr(harness, variant(harness, name, { hook_event_name: event }))).toBe(`unsupported event ${event}`);
    }
  });

  it("Claude's PostToolUseFailure is a post capture: a failed command may have changed files", () => {
    const ev = parseOk("claude", variant("claude", "bash.pre", { hook_event_name: "PostToolUseFailure" }));
    expect(ev.phase).toBe("post");
    expect(ev.target).toEqual({ kind: "tree" });
    expect(parseErr("codex", variant("codex", "bash.pre", { hook_event_name: "PostToolUseFailure" }))).toBe("unsupported event PostToolUseFailure");
  });

  it("a lifecycle event without tool fields is reported as unsupported, not as missing fields", () => {
    const sessionStart = JSON.stringify({
      session_id: "3f6c1d2e-8a4b-4c7e-9b1f-5d2a7e9c0b14",
      transcript_path: "/home/dev/.claude/projects/x/3f6c1d2e.jsonl",
      cwd: CWD,
      hook_event_name: "SessionStart",
      source: "startup",
    });
    expect(parseErr("claude", sessionStart)).toBe("unsupported event SessionStart");
  });

  it("maps each harness's own event names to phases", () => {
    expect(parseOk("claude", variant("claude", "bash.pre", { hook_event_name: "PostToolUse" })).phase).toBe("post");
    expect(parseOk("codex", variant("codex", "bash.post", { hook_event_name: "PreToolUse" })).phase).toBe("pre");
    expect(parseOk("gemini", variant("gemini", "read-file.pre", { hook_event_name: "AfterTool" })).phase).toBe("post");
    expect(parseOk("gemini", variant("gemini", "read-file.post", { hook_event_name: "BeforeTool" })).phase).toBe("pre");
  });
});

describe("malformed input", () => {
  const good = () => raw("claude", "bash.pre");

  it("empty input", () => {
    expect(parseErr("claude", "")).toBe("empty input");
    expect(parseErr("claude", " \n\t ")).toBe("empty input");
    expect(parseOk("claude", good()).tool).toBe("Bash");
  });

  it("malformed JSON", () => {
    const text = good();
    expect(parseErr("claude", text.slice(0, text.length - 3))).toMatch(/^malformed JSON: /);
    expect(parseErr("claude", "{session_id: 1}")).toMatch(/^malformed JSON: /);
    expect(parseErr("gemini", `${raw("gemini", "replace.pre")}\n{}`)).toMatch(/^malformed JSON: /);
    expect(parseOk("claude", text).phase).toBe("pre");
  });

  it("a payload that is not an object", () => {
    for (const text of ["[]", "null", "42", '"PreToolUse"', "true", `[${good()}]`]) {
      expect(parseErr("claude", text)).toMatch(/^payload is not a JSON object/);
    }
    expect(parseOk("claude", `  ${good()}  \n`).tool).toBe("Bash");
  });

  it("missing, empty or non-string session_id", () => {
    for (const value of [undefined, "", 42, null, ["s"]]) {
      expect(parseErr("claude", variant("claude", "bash.pre", { session_id: value }))).toMatch(/session_id/);
      expect(parseErr("gemini", variant("gemini", "write-file.pre", { session_id: value }))).toMatch(/session_id/);
    }
    expect(parseOk("claude", variant("claude", "bash.pre", { session_id: "s-1" })).session).toBe("claude:s-1");
    expect(parseOk("gemini", variant("gemini", "write-file.pre", { session_id: "s-1" })).session).toBe("gemini:s-1");
  });

  it("missing hook_event_name", () => {
    for (const value of [undefined, "", 3]) {
      expect(parseErr("codex", variant("codex", "bash.pre", { hook_event_name: value }))).toMatch(/hook_event_name/);
    }
    expect(parseOk("codex", variant("codex", "bash.pre", { hook_event_name: "PreToolUse" })).phase).toBe("pre");
  });

  it("missing tool_name", () => {
    for (const value of [undefined, "", {}]) {
      expect(parseErr("gemini", variant("gemini", "replace.pre", { tool_name: value }))).toMatch(/tool_name/);
      expect(parseErr("claude", variant("claude", "edit.pre", { tool_name: value }))).toMatch(/tool_name/);
    }
    expect(parseOk("gemini", variant("gemini", "replace.pre", { tool_name: "replace" })).tool).toBe("replace");
    expect(parseOk("claude", variant("claude", "edit.pre", { tool_name: "Edit" })).tool).toBe("Edit");
  });

  it("missing, empty or non-string cwd", () => {
    for (const value of [undefined, "", 0, ["/home/dev"]]) {
      expect(parseErr("codex", variant("codex", "apply-patch.pre", { cwd: value }))).toMatch(/cwd/);
    }
    expect(parseOk("codex", variant("codex", "apply-patch.pre", { cwd: "/srv/app" })).cwd).toBe("/srv/app");
  });

  it("a file tool without its path field names the tool and the field", () => {
    const cases: Array<[string, string, string, string]> = [
      ["claude", "write.pre", "Write", "file_path"],
      ["claude", "edit.pre", "Edit", "file_path"],
      ["claude", "multiedit.pre", "MultiEdit", "file_path"],
      ["claude", "notebookedit.pre", "NotebookEdit", "notebook_path"],
      ["gemini", "write-file.pre", "write_file", "file_path"],
      ["gemini", "replace.pre", "replace", "file_path"],
    ];
    for (const [harness, name, tool, field] of cases) {
      const input = payload(harness, name).tool_input as Payload;
      const message = `${tool} payload has no ${field}`;
      for (const value of [undefined, "", 17, null, ["a.txt"]]) {
        const broken = { ...input };
        if (value === undefined) delete broken[field];
        else broken[field] = value;
        expect(parseErr(harness, variant(harness, name, { tool_input: broken }))).toBe(message);
      }
      expect(parseErr(harness, variant(harness, name, { tool_input: undefined }))).toBe(message);
      expect(parseErr(harness, variant(harness, name, { tool_input: "file.txt" }))).toBe(message);
      // Negative control: the same payload with the field present parses.
      expect(parseOk(harness, variant(harness, name, { tool_input: { ...input, [field]: "x.txt" } })).target).toEqual({
        kind: "files",
        paths: ["x.txt"],
      });
    }
  });

  it("claude's Write reads file_path, not gemini's or a notebook's field", () => {
    const text = variant("claude", "write.pre", { tool_input: { notebook_path: "/n.ipynb", absolute_path: "/a" } });
    expect(parseErr("claude", text)).toBe("Write payload has no file_path");
  });

  it("never throws, whatever it is given", () => {
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const inputs: Array<[string, unknown]> = [
      ["claude", "\u0000"],
      ["claude", "{"],
      ["claude", '{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/"'],
      ["gemini", `{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"x","cwd":"/","tool_input":${deep}}`],
      ["claude", undefined],
      ["codex", null],
      ["gemini", 12],
    ];
    for (const [harness, input] of inputs) {
      const result = parseHookEvent(harness, input as string);
      expect(typeof result.ok).toBe("boolean");
      if (!result.ok) expect(result.error).not.toMatch(/[\r\n]/);
    }
  });

  it("tolerates a UTF-8 byte order mark", () => {
    expect(parseOk("gemini", `\ufeff${raw("gemini", "replace.pre")}`).tool).toBe("replace");
  });
});

describe("unknown fields", () => {
  it("are ignored", () => {
    const plain = parseOk("claude", raw("claude", "edit.pre"));
    const extra = parseOk(
      "claude",
      variant("claude", "edit.pre", {
        prompt_id: "p-1",
        effort: "high",
        hookSpecificOutput: { anything: true },
        tool_response: { filePath: "/elsewhere.ts" },
      }),
    );
    expect(extra).toEqual(plain);
  });

  it("the post payload's tool_response does not affect gemini's call id", () => {
    const withResponse = parseOk("gemini", raw("gemini", "run-shell-command.post"));
    const without = parseOk("gemini", variant("gemini", "run-shell-command.post", { tool_response: undefined }));
    expect(withResponse.call).toBe(without.call);
  });
});
