// Claude Code's transcript read as calls (src/capture/harness/claude-transcript.ts): pure, on plain text.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readTranscript, TranscriptError } from "../../../src/capture/harness/claude-transcript.js";

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "transcripts", "claude-2.1.332.jsonl");

/** One call as a transcript holds it: the request, then the result beside the client's structured result. */
function call(id: string, name: string, input: object, result: unknown, opts: { error?: boolean } = {}): string {
  return [
    JSON.stringify({ type: "assistant", timestamp: `2026-12-01T10:00:0${id.slice(-1)}.000Z`, cwd: "/r", message: { content: [{ type: "tool_use", id, name, input }] } }),
    JSON.stringify({
      type: "user",
      timestamp: `2026-12-01T10:00:0${id.slice(-1)}.500Z`,
      message: { content: [{ type: "tool_result", tool_use_id: id, ...(opts.error ? { is_error: true } : {}) }] },
      toolUseResult: result,
    }),
  ].join("\n");
}

describe("readTranscript", () => {
  it("reads the real client's transcript: file tools with before and after, the shell call as unknown, the failed call skipped", () => {
    const t = readTranscript(readFileSync(FIXTURE, "utf8"));
    expect(t.sessionId).toBe("b143fe8e-0761-4f19-a0ba-88ad459a4676");
    expect(t.calls.map((c) => [c.tool, c.effect.kind === "file" ? [c.effect.path, c.effect.before, c.effect.after] : c.effect.kind])).toEqual([
      ["Write", ["/__ROOT__/new.txt", null, "new file\n"]],
      ["Edit", ["/__ROOT__/a.txt", "alpha\nbeta\n", "alpha, edited\nbeta\n"]],
      ["Bash", "unknown"],
      ["Write", ["/__ROOT__/keep.txt", "keep\n", "kept, rewritten\n"]],
      ["Edit", ["/__ROOT__/src/x.sh", "#!/bin/sh\necho x\n", "#!/bin/sh\necho y\n"]],
    ]);
    expect(t.skipped.map((s) => s.tool)).toEqual(["MultiEdit"]);
    expect(t.calls[0]!.start < t.calls[0]!.end).toBe(true);
  });

  it("rebuilds an edit from its structured patch where the literal text is not there (the client normalised quotes)", () => {
    const result = {
      filePath: "/r/q.txt",
      oldString: "say 'hi'",
      newString: "say 'bye'",
      originalFile: "one\nsay \u2018hi\u2019\nthree\n",
      structuredPatch: [{ oldStart: 1, oldLines: 3, newStart: 1, newLines: 3, lines: [" one", "-say \u2018hi\u2019", "+say \u2018bye\u2019", " three"] }],
    };
    const [c] = readTranscript(call("toolu_1", "Edit", {}, result)).calls;
    expect(c!.effect).toEqual({ kind: "file", path: "/r/q.txt", before: result.originalFile, after: "one\nsay \u2018bye\u2019\nthree\n" });
    // Control: a patch whose context is not in the file is no after-state; the call's effects are then unknown.
    const [d] = readTranscript(call("toolu_2", "Edit", {}, { ...result, structuredPatch: [{ oldStart: 1, lines: [" nope", "-x", "+y"] }] })).calls;
    expect(d!.effect.kind).toBe("unknown");
  });

  it("replace_all replaces every occurrence, a plain edit the first; MultiEdit applies each edit in turn", () => {
    const orig = "a a a\n";
    const all = readTranscript(call("toolu_1", "Edit", {}, { filePath: "/r/f", oldString: "a", newString: "b", replaceAll: true, originalFile: orig })).calls[0]!;
    const one = readTranscript(call("toolu_2", "Edit", {}, { filePath: "/r/f", oldString: "a", newString: "b", replaceAll: false, originalFile: orig })).calls[0]!;
    const multi = readTranscript(
      call(
        "toolu_3",
        "MultiEdit",
        {},
        {
          filePath: "/r/f",
          edits: [
            { old_string: "a a", new_string: "c" },
            { old_string: "c a", new_string: "d" },
          ],
          originalFile: orig,
        },
      ),
    ).calls[0]!;
    expect([all, one, multi].map((c) => (c.effect.kind === "file" ? c.effect.after : null))).toEqual(["b b b\n", "b a a\n", "d\n"]);
  });

  it("a Write update without its original has an unknown before; a create has none; read-only tools are left out", () => {
    const t = readTranscript(
      [
        call("toolu_1", "Write", {}, { type: "update", filePath: "/r/u", content: "x" }),
        call("toolu_2", "Write", {}, { type: "create", filePath: "/r/c", content: "y", originalFile: null }),
        call("toolu_3", "Read", { file_path: "/r/u" }, { type: "text" }),
      ].join("\n"),
    );
    expect(t.calls.map((c) => (c.effect.kind === "file" ? c.effect.before : "unknown"))).toEqual([undefined, null]);
  });

  it("a line that is no JSON is an error naming it; a torn last line says the session may still be running", () => {
    const good = call("toolu_1", "Bash", { command: "true" }, {});
    expect(() => readTranscript(`${good}\n{"type":`)).toThrow(TranscriptError);
    try {
      readTranscript(`${good}\n{"type":`);
    } catch (e) {
      expect((e as TranscriptError).line).toBe(3);
      expect((e as Error).message).toContain("still running");
    }
    expect(() => readTranscript(`${good}\n[1]\n`)).toThrow("not a JSON object");
    // Control: the same calls, whole, read.
    expect(readTranscript(`${good}\n`).calls).toHaveLength(1);
  });
});
