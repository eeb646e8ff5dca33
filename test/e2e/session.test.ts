import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { read, unwind, write } from "../helpers.js";
import { A, repo, sessionA } from "../session-fixture.js";
import { claudePayload, hook, hookAsync } from "../journal-helpers.js";

/*
 * Sessions at the process boundary: the hook's exit code and stdout (it
 * must never block or break the agent), and what only the command line
 * shows. The behaviour of session undo is in test/ops/session.test.ts.
 */

describe("session undo on the command line", () => {
  it("undo --session exits 0 and says nothing on stderr; the --json report is the session's", () => {
    const root = repo();
    sessionA(root);
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.json.scope).toEqual({ kind: "session", id: `claude:${A}` });
    expect(read(root, "src/a.ts")).toBe("export const a = 1;\n");
  });

  it("record: a --phase other than pre or post is exit 2", () => {
    const root = repo();
    expect(unwind(root, ["record", "--session", "x", "--phase", "middle"]).code).toBe(2);
    // Negative control: the same command with a real phase records.
    expect(unwind(root, ["record", "--session", "x", "--phase", "pre"]).code).toBe(0);
  });

  it("record without --call: the same capture twice is two calls, each pre paired with its post", () => {
    const root = repo();
    const ids: string[] = [];
    for (const text of ["one\n", "two\n"]) {
      const pre = unwind(root, ["record", "--session", "orch:1", "--phase", "pre", "--json", "notes.txt"]);
      write(root, "notes.txt", text);
      const post = unwind(root, ["record", "--session", "orch:1", "--phase", "post", "--json", "notes.txt"]);
      expect(post.json.call).toBe(pre.json.call);
      ids.push(pre.json.call);
    }
    expect(ids[0]).not.toBe(ids[1]);
    const calls = unwind(root, ["log", "--json"]).json.calls;
    expect(calls.map((c: any) => c.call).sort()).toEqual([...ids].sort());
    expect(unwind(root, ["undo", "--session", "orch:1", "--call", ids[1]!, "--json"]).code).toBe(0);
    expect(read(root, "notes.txt")).toBe("one\n");
  });
});

describe("hooks never block or break the agent", () => {
  const bad: [string, string, string][] = [
    ["malformed JSON", "claude", "{not json"],
    ["empty input", "claude", ""],
    ["truncated payload", "claude", '{"session_id":"s1","cwd":"/tmp","hook_event_name":"PreToolUse","tool_na'],
    ["unknown event", "claude", JSON.stringify({ session_id: "s1", cwd: "/tmp", hook_event_name: "Nope", tool_name: "Write", tool_input: {} })],
    ["missing session", "claude", JSON.stringify({ cwd: "/tmp", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: "a" } })],
    ["file tool without a path", "claude", JSON.stringify({ session_id: "s1", cwd: "/tmp", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: {} })],
    ["unknown harness", "cursor", JSON.stringify({ session_id: "s1", cwd: "/tmp", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: {} })],
  ];
  it.each(bad)("%s: exit 0, nothing on stdout, nothing captured, one error-log entry", (_name, harness, input) => {
    const root = repo();
    const r = hook(root, harness, input);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    const lines = readFileSync(join(root, ".git", "unwind", "errors.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).kind).toBe("bad-input");
    expect(existsSync(join(root, ".git", "unwind", "journal"))).toBe(false);
  });

  it("huge input: exit 0, nothing captured, one error", () => {
    const root = repo();
    const payload = claudePayload(root, A, "PreToolUse", "Write", { file_path: "a.txt", content: "x".repeat(65 * 1024 * 1024) }, "t1");
    const r = hook(root, "claude", payload);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    const errors = readFileSync(join(root, ".git", "unwind", "errors.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/over \d+ bytes/);
  });

  it("negative control: a good payload is captured and logs no error", () => {
    const root = repo();
    const r = hook(root, "claude", claudePayload(root, A, "PreToolUse", "Write", { file_path: "a.txt", content: "x" }, "t1"));
    expect(r.code).toBe(0);
    expect(existsSync(join(root, ".git", "unwind", "errors.jsonl"))).toBe(false);
    expect(unwind(root, ["status", "--json"]).json.records).toBe(1);
  });

  it("read-only tools capture nothing", () => {
    const root = repo();
    hook(root, "claude", claudePayload(root, A, "PreToolUse", "Read", { file_path: "src/a.ts" }, "t1"));
    hook(root, "claude", claudePayload(root, A, "PreToolUse", "Grep", { pattern: "x" }, "t2"));
    expect(existsSync(join(root, ".git", "unwind", "journal"))).toBe(false);
  });

  it("a tree snapshot over its time budget records capture-timeout and still exits 0", () => {
    const root = repo();
    const r = hook(root, "claude", claudePayload(root, A, "PreToolUse", "Bash", { command: "ls" }, "t1"), { UNWIND_HOOK_BUDGET_MS: "1" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    const errors = readFileSync(join(root, ".git", "unwind", "errors.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(errors.map((e) => e.kind)).toEqual(["capture-timeout"]);
    expect(unwind(root, ["status"]).stdout).toMatch(/errors\s+1 not yet acknowledged/);
  });

  it("eight hook processes at once, one session and several, lose nothing", async () => {
    const root = repo();
    const payloads: string[] = [];
    for (let i = 0; i < 8; i++) {
      write(root, `f${i}.txt`, `before ${i}\n`);
      const session = i < 4 ? A : `sess-par-${i}`;
      payloads.push(claudePayload(root, session, "PreToolUse", "Write", { file_path: `f${i}.txt`, content: "after" }, `t${i}`));
    }
    const rs = await Promise.all(payloads.map((p) => hookAsync(root, "claude", p)));
    for (const r of rs) expect(r.code).toBe(0);
    for (let i = 0; i < 8; i++) write(root, `f${i}.txt`, `after ${i}\n`);
    const posts = payloads.map((p) => p.replace('"PreToolUse"', '"PostToolUse"'));
    await Promise.all(posts.map((p) => hookAsync(root, "claude", p)));
    const st = unwind(root, ["status", "--json"]).json;
    // 16 of the calls' own, and for session A's calls that were still open when another of its events came, a closing one each.
    const own = readdirSync(join(root, ".git", "unwind", "journal"))
      .filter((f) => f.endsWith(".jsonl"))
      .flatMap((f) =>
        readFileSync(join(root, ".git", "unwind", "journal", f), "utf8")
          .trim()
          .split("\n"),
      )
      .filter((l) => !l.includes('"closedBy"'));
    expect(own.length).toBe(16);
    expect(st.records).toBeGreaterThanOrEqual(16);
    expect(st.damagedRecords).toBe(0);
    expect(st.sessions).toBe(5);
    expect(existsSync(join(root, ".git", "unwind", "errors.jsonl"))).toBe(false);
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.json.items.map((i: any) => i.path)).toEqual(["f0.txt", "f1.txt", "f2.txt", "f3.txt"]);
    for (let i = 0; i < 8; i++) expect(read(root, `f${i}.txt`)).toBe(i < 4 ? `before ${i}\n` : `after ${i}\n`);
  });
});
