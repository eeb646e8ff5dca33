import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git, makeRepo, tempDir, unwind, write, writeFiles } from "../helpers.js";
import { ev } from "../journal-helpers.js";

/*
 * Tasks at the command line: `task start`, `changes --task` and
 * `undo --task` as processes (exit codes, the --json documents, stderr).
 * The behaviour of task change sets is in test/ops/task.test.ts.
 */

function repo(): string {
  return makeRepo({ ".gitignore": ".sdd/\n", "a.txt": "a0\n", "b.txt": "b0\n" });
}

function commitAll(dir: string, msg: string): void {
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", msg);
}

describe("tasks on the command line", () => {
  it("task start, changes --task and undo --task exit 0 and say nothing on stderr; --json prints the binding and the reports", () => {
    const root = repo();
    const wt = join(tempDir(), "t1");
    const s = unwind(root, ["task", "start", "T1", "--branch", "task/one", "--worktree", wt, "--onto", "main", "--json"]);
    expect(s.stderr).toBe("");
    expect(s.code).toBe(0);
    expect(s.json).toMatchObject({ task: "T1", branch: "task/one", onto: "main", worktree: wt, fork: git(root, "rev-parse", "main").trim() });
    write(wt, "a.txt", "a1\n");
    write(wt, "t1.txt", "t1\n");
    commitAll(wt, "T1");
    git(root, "merge", "-q", "--no-ff", "-m", "merge T1", "task/one");

    const c = unwind(root, ["changes", "--task", "T1", "--json"]);
    expect(c.stderr).toBe("");
    expect(c.code).toBe(0);
    expect(c.json.scope).toEqual({ kind: "task", id: "T1" });
    expect(c.json.entries.map((e: any) => e.path)).toEqual(["a.txt", "t1.txt"]);

    const u = unwind(root, ["undo", "--task", "T1", "--json"]);
    expect(u.stderr).toBe("");
    expect(u.code).toBe(0);
    expect(u.json.items.map((i: any) => [i.path, i.action])).toEqual([
      ["a.txt", "restore"],
      ["t1.txt", "delete"],
    ]);
  });

  it("an unknown task: exit 3 for changes, undo and dry run, with the --json error document on stdout and the message on stderr", () => {
    const root = repo();
    const wt = join(tempDir(), "known");
    expect(unwind(root, ["task", "start", "T-known", "--branch", "task/known", "--worktree", wt, "--onto", "main"]).code).toBe(0);
    write(wt, "a.txt", "a1\n");
    commitAll(wt, "known");
    for (const args of [["changes"], ["undo"], ["undo", "--dry-run"]]) {
      const r = unwind(root, [...args, "--task", "T-nobody", "--json"]);
      expect(r.code).toBe(3);
      expect(r.json.error.code).toBe("E_SCOPE_UNKNOWN");
      expect(r.json.error.message).toContain("T-nobody");
      expect(r.stderr).toContain("T-nobody");
    }
    // The negative control: a task with evidence resolves in the same repository.
    expect(unwind(root, ["changes", "--task", "T-known", "--json"]).code).toBe(0);
  });
});

describe("unwind task list", () => {
  it("lists each task with its evidence: branch bindings, labelled sessions and runs; unlabelled work is no task's", () => {
    const root = repo();
    const empty = unwind(root, ["task", "list", "--json"]);
    expect([empty.code, empty.json]).toEqual([0, { tasks: [] }]);
    expect(unwind(root, ["task", "list"]).stdout).toContain("no tasks");

    expect(unwind(root, ["task", "start", "login", "--branch", "task/login"]).code).toBe(0);
    ev(root, "s-login", "PreToolUse", "Write", { file_path: "a.txt" }, "toolu_l1", { UNWIND_TASK: "login" });
    ev(root, "s-plain", "PreToolUse", "Write", { file_path: "b.txt" }, "toolu_p1");
    expect(unwind(root, ["run", "--task", "search", "--", "sh", "-c", "echo r > r.txt"]).code).toBe(0);
    // An orchestrator's record claims a third task; one whose task_id could not name a task claims none.
    writeFiles(root, { ".sdd/runtime/pids/agent-7.json": JSON.stringify({ task_id: "billing", pid: 1 }), ".sdd/runtime/pids/agent-8.json": JSON.stringify({ task_id: "../x", pid: 2 }) });

    const r = unwind(root, ["task", "list", "--json"]);
    expect(r.code).toBe(0);
    const byName = Object.fromEntries(r.json.tasks.map((t: any) => [t.task, t]));
    expect(Object.keys(byName).sort()).toEqual(["billing", "login", "search"]);
    expect(byName.login).toMatchObject({ sessions: ["claude:s-login"], runs: [], bindings: [{ branch: "task/login", source: "unwind" }] });
    expect(byName.search.runs).toHaveLength(1);
    expect(byName.search.sessions).toEqual([]);
    expect(byName.billing.bindings).toMatchObject([{ branch: "agent/agent-7", source: "sdd", session: "agent-7" }]);
    expect(r.json.tasks.flatMap((t: any) => t.sessions)).not.toContain("claude:s-plain");
    expect(unwind(root, ["task", "list"]).stdout).toMatch(/login +task\/login -> main +1 +0 /);
  });
});
