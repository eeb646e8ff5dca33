import { describe, expect, it } from "vitest";
import { pairedCall } from "../../../src/capture/capture.js";
import { parseHookEvent } from "../../../src/capture/harness/index.js";
import type { OpenCall } from "../../../src/store/open-calls.js";

const KEY = "h-0123456789abcdef";
const open = (call: string, extra: Partial<OpenCall> = {}): OpenCall => ({ call, tool: "run_shell_command", kind: "tree", key: KEY, ...extra });

describe("pairing calls without a tool-use id", () => {
  it("a pre gets a new id under its key, never one that is open", () => {
    const a = pairedCall([], "pre", KEY);
    expect(a.startsWith(`${KEY}-`)).toBe(true);
    const ids = new Set(Array.from({ length: 50 }, () => pairedCall([open(a)], "pre", KEY)));
    expect(ids.has(a)).toBe(false);
  });

  it("a post takes the oldest open call under the same key", () => {
    expect(pairedCall([open("other", { key: "h-ffff" }), open("first"), open("second")], "post", KEY)).toBe("first");
  });

  it("a post whose pre left nothing open gets an id of its own", () => {
    const id = pairedCall([open("x", { key: "h-ffff" })], "post", KEY);
    expect(id).not.toBe("x");
    expect(id.startsWith(`${KEY}-`)).toBe(true);
  });

  it("a background call whose post already came is not paired again", () => {
    expect(pairedCall([open("bg", { background: true }), open("fg")], "post", KEY)).toBe("fg");
  });

  it("only payloads without a tool-use id are paired by key", () => {
    const base = { session_id: "s", hook_event_name: "BeforeTool", tool_name: "run_shell_command", cwd: "/r", tool_input: { command: "ls" } };
    const keyed = parseHookEvent("gemini", JSON.stringify(base));
    const withId = parseHookEvent("gemini", JSON.stringify({ ...base, tool_use_id: "t1" }));
    expect(keyed.ok && keyed.event.pairing).toBe("key");
    expect(withId.ok && withId.event).toMatchObject({ call: "t1" });
    expect(withId.ok && withId.event.pairing).toBeUndefined();
  });
});
