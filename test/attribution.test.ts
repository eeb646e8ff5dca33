/**
 * Exactly this agent's work (SPEC section 2, "Attribution"): each case of
 * issue 9 through the real hook entry point in a real repository, each with
 * a negative control.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, read, unwind, write } from "./helpers.js";
import { claudeCall, claudePayload, hook } from "./journal-helpers.js";

const A = "sess-aaaa-1111";
const B = "sess-bbbb-2222";

/** One hook event through the real `unwind hook claude` process. */
function ev(root: string, session: string, event: "PreToolUse" | "PostToolUse", tool: string, input: Record<string, unknown>, id: string, env: Record<string, string> = {}) {
  const r = hook(root, "claude", claudePayload(root, session, event, tool, input, id), env);
  expect([r.code, r.stdout]).toEqual([0, ""]);
}

describe("overlapping shell calls of two sessions (issue 9, case 4)", () => {
  it("what either wrote while both were running is shared: undo of one is a concurrent-call conflict and deletes nothing", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    ev(root, A, "PreToolUse", "Bash", { command: "make a" }, "toolu_a1");
    ev(root, B, "PreToolUse", "Bash", { command: "make b" }, "toolu_b1");
    write(root, "a.out", "from A\n");
    write(root, "b.out", "from B\n");
    ev(root, A, "PostToolUse", "Bash", { command: "make a" }, "toolu_a1");
    ev(root, B, "PostToolUse", "Bash", { command: "make b" }, "toolu_b1");

    const cs = unwind(root, ["changes", "--session", A, "--json"]);
    expect(cs.json.entries.map((e: any) => [e.path, e.shared])).toEqual([
      ["a.out", [{ session: `claude:${B}`, call: "toolu_b1" }]],
      ["b.out", [{ session: `claude:${B}`, call: "toolu_b1" }]],
    ]);
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.code).toBe(1);
    expect(r.json.items.map((i: any) => [i.path, i.action, i.reason])).toEqual([
      ["a.out", "conflict", "concurrent-call"],
      ["b.out", "conflict", "concurrent-call"],
    ]);
    expect(r.json.items[0].detail).toContain(`claude:${B} toolu_b1`);
    expect(read(root, "b.out")).toBe("from B\n");
    expect(read(root, "a.out")).toBe("from A\n");
    // The human line says what to do next.
    const human = unwind(root, ["undo", "--session", A, "--dry-run"]);
    expect(human.stdout).toMatch(/--force/);

    // --force takes back everything the window may have held; the receipt keeps it for redo.
    const forced = unwind(root, ["undo", "--session", A, "--force", "--json"]);
    expect(forced.code).toBe(0);
    expect(existsSync(join(root, "b.out"))).toBe(false);
    expect(unwind(root, ["redo", forced.json.receipt]).code).toBe(0);
    expect(read(root, "b.out")).toBe("from B\n");
  });

  it("negative control: the same calls one after the other are each their own", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    claudeCall(root, A, "Bash", { command: "make a" }, () => write(root, "a.out", "from A\n"));
    claudeCall(root, B, "Bash", { command: "make b" }, () => write(root, "b.out", "from B\n"));
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.code).toBe(0);
    expect(r.json.items.map((i: any) => [i.path, i.action])).toEqual([["a.out", "delete"]]);
    expect(read(root, "b.out")).toBe("from B\n");
  });

  it("parallel calls of one session share with each other: the session scope holds both, a call scope does not", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    ev(root, A, "PreToolUse", "Bash", { command: "one" }, "toolu_p1");
    ev(root, A, "PreToolUse", "Bash", { command: "two" }, "toolu_p2");
    write(root, "x.out", "x\n");
    ev(root, A, "PostToolUse", "Bash", { command: "one" }, "toolu_p1");
    ev(root, A, "PostToolUse", "Bash", { command: "two" }, "toolu_p2");
    expect(unwind(root, ["undo", "--call", "toolu_p1", "--dry-run", "--json"]).json.items).toMatchObject([{ path: "x.out", action: "conflict", reason: "concurrent-call" }]);
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.json.items).toEqual([{ path: "x.out", action: "delete", reason: null }]);
  });

  it("an Edit by another session inside a shell call's window is pinned to the Edit, not charged to the shell call", () => {
    const root = makeRepo({ "a.txt": "a\n", "doc.md": "v1\n" });
    ev(root, A, "PreToolUse", "Bash", { command: "make" }, "toolu_a2");
    claudeCall(root, B, "Edit", { file_path: join(root, "doc.md"), old_string: "v1", new_string: "v2" }, () => write(root, "doc.md", "v2\n"));
    write(root, "a.out", "from A\n");
    ev(root, A, "PostToolUse", "Bash", { command: "make" }, "toolu_a2");
    const a = unwind(root, ["changes", "--session", A, "--json"]);
    expect(a.json.entries.map((e: any) => e.path)).toEqual(["a.out"]);
    expect(unwind(root, ["undo", "--session", B, "--json"]).json.items).toEqual([{ path: "doc.md", action: "restore", reason: null }]);
    expect(read(root, "doc.md")).toBe("v1\n");
  });
});

describe("call ids (issue 9, case 12)", () => {
  it("a --call id two sessions share is ambiguous (exit 3, naming both); --session narrows it", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    claudeCall(root, A, "Write", { file_path: "x.txt" }, () => write(root, "x.txt", "A\n"));
    // Two sessions whose harness numbers calls from 1, through the generic capture.
    for (const s of ["orch:one", "orch:two"]) {
      expect(unwind(root, ["record", "--session", s, "--phase", "pre", "--call", "1", `${s.slice(5)}.txt`]).code).toBe(0);
      write(root, `${s.slice(5)}.txt`, `${s}\n`);
      expect(unwind(root, ["record", "--session", s, "--phase", "post", "--call", "1", `${s.slice(5)}.txt`]).code).toBe(0);
    }
    const amb = unwind(root, ["undo", "--call", "1", "--json"]);
    expect(amb.code).toBe(3);
    expect(amb.stderr).toMatch(/2 calls match '1'.*orch:one.*orch:two/);
    expect(existsSync(join(root, "one.txt")) && existsSync(join(root, "two.txt"))).toBe(true);
    const one = unwind(root, ["undo", "--call", "1", "--session", "orch:one", "--json"]);
    expect(one.code).toBe(0);
    expect(one.json.items).toEqual([{ path: "one.txt", action: "delete", reason: null }]);
    expect(read(root, "two.txt")).toBe("orch:two\n");
  });
});
