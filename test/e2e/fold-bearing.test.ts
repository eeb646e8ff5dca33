import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, unwind, write } from "../helpers.js";
import { claudePayload, hook } from "../journal-helpers.js";

/*
 * The fold reads only the paths a scope's calls can be a candidate for
 * (src/scope/calls.ts, `bearing`). A path no snapshot sees (ignored) has
 * only file captures to place its change: one a shell call made between two
 * captures of another session is the shell call's, though no diff shows it.
 */

function call(root: string, session: string, id: string, tool: string, input: Record<string, unknown>, effect: () => void): void {
  expect(hook(root, "claude", claudePayload(root, session, "PreToolUse", tool, input, id)).code).toBe(0);
  effect();
  expect(hook(root, "claude", claudePayload(root, session, "PostToolUse", tool, input, id)).code).toBe(0);
}

const changed = (root: string, args: string[]) => unwind(root, ["changes", ...args, "--json"]).json.entries.map((e: { path: string; change: string }) => `${e.change} ${e.path}`);

describe("the fold reads only what bears on the scope", () => {
  for (const ignored of [true, false]) {
    it(`a shell call's change to ${ignored ? "an ignored" : "a tracked"} file between two captures of another session is the shell call's`, () => {
      const root = makeRepo({ ".gitignore": ignored ? "*.log\n" : "", "app.log": "0\n", "other.txt": "o\n" });
      call(root, "writer", "toolu_w1", "Write", { file_path: join(root, "app.log"), content: "1\n" }, () => write(root, "app.log", "1\n"));
      call(root, "shell", "toolu_s1", "Bash", { command: "echo 2 > app.log", description: "x" }, () => write(root, "app.log", "2\n"));
      call(root, "writer", "toolu_w2", "Write", { file_path: join(root, "app.log"), content: "3\n" }, () => write(root, "app.log", "3\n"));
      // A later call of a third session, on another path, and nothing of it in the scope's change set.
      call(root, "late", "toolu_l1", "Write", { file_path: join(root, "other.txt"), content: "p\n" }, () => write(root, "other.txt", "p\n"));
      expect(changed(root, ["--session", "shell"])).toEqual(["modified app.log"]);
      expect(changed(root, ["--session", "shell", "--call", "toolu_s1"])).toEqual(["modified app.log"]);
      expect(changed(root, ["--session", "writer"])).toEqual(["modified app.log"]);
      expect(changed(root, ["--session", "late"])).toEqual(["modified other.txt"]);
    });
  }

  it("a path a shell call changed, changed again by a later shell call: its later change is read too, and undo leaves it", () => {
    const root = makeRepo({ "x.txt": "0\n", "y.txt": "y\n" });
    call(root, "first", "toolu_a1", "Bash", { command: "echo 1 > x.txt", description: "x" }, () => write(root, "x.txt", "1\n"));
    // Outside the first call's window: the diff of this call's own snapshots is read only for the paths that bear.
    call(root, "second", "toolu_b1", "Bash", { command: "echo 2 > x.txt; echo z > y.txt", description: "x" }, () => {
      write(root, "x.txt", "2\n");
      write(root, "y.txt", "z\n");
    });
    const plan = unwind(root, ["undo", "--session", "first", "--dry-run", "--json"]).json;
    expect(plan.items.map((i: { path: string; action: string; reason?: string }) => `${i.action} ${i.path} ${i.reason ?? ""}`.trim())).toEqual(["conflict x.txt later-write"]);
    // The control: with no later change, the same undo restores it.
    const calm = makeRepo({ "x.txt": "0\n", "y.txt": "y\n" });
    call(calm, "first", "toolu_a1", "Bash", { command: "echo 1 > x.txt", description: "x" }, () => write(calm, "x.txt", "1\n"));
    call(calm, "second", "toolu_b1", "Bash", { command: "echo z > y.txt", description: "x" }, () => write(calm, "y.txt", "z\n"));
    expect(unwind(calm, ["undo", "--session", "first", "--dry-run", "--json"]).json.items.map((i: { path: string; action: string }) => `${i.action} ${i.path}`)).toEqual(["restore x.txt"]);
  });
});
