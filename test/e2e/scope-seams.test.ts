import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git, makeRepo, read, tempDir, unwind, unwindAsync, write, type CliResult } from "../helpers.js";
import { claudeCall, claudeCallEnv, ev } from "../journal-helpers.js";

/**
 * A run is a window under the same attribution rules as a call (SPEC
 * sections 2 and 9; issue: a run's change set was a bare before -> after
 * diff). Each test's negative control is the run's raw snapshot diff, which
 * the old rule took as its change set: it holds the path the rule keeps out.
 */

const sh = (script: string) => ["sh", "-c", script];

/** Waits until `f` holds, polling: the run's command is a real process. */
async function until(f: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts `unwind run --id R` whose command writes `first`, waits for a go
 * file outside the work tree, then writes `second`. Returns a function that
 * lets it finish and resolves to its result.
 */
async function pausedRun(root: string, id: string, extra: string[] = []): Promise<() => Promise<CliResult>> {
  const go = join(tempDir("unwind-go-"), "go");
  const done = unwindAsync(root, ["run", "--id", id, ...extra, "--", ...sh(`echo one > first.txt; while [ ! -f '${go}' ]; do sleep 0.05; done; echo two > second.txt`)]);
  await until(() => existsSync(join(root, "first.txt")), "the run's first write");
  return () => {
    writeFileSync(go, "");
    return done;
  };
}

/** The paths the run's own before and after snapshots differ in: what the old rule called its change set. */
function rawDiff(root: string, id: string): string {
  const cap = unwind(root, ["run", "show", id, "--json"]).json;
  const d = unwind(root, ["diff", cap.record?.before?.snapshot ?? cap.before.snapshot, cap.record?.after?.snapshot ?? cap.after.snapshot]);
  expect(d.code).toBe(0);
  return d.stdout;
}

const paths = (r: CliResult) => r.json.entries.map((e: { path: string }) => e.path);

describe("a run is a window among calls and receipts", () => {
  it("another agent's Write made while the run is in flight is that agent's: undo --run leaves its file", async () => {
    const root = makeRepo({ "README.md": "# r\n" });
    const finish = await pausedRun(root, "r1");
    claudeCall(root, "sess-bbbb-2222", "Write", { file_path: join(root, "b.txt"), content: "agent b\n" }, () => write(root, "b.txt", "agent b\n"));
    expect((await finish()).code).toBe(0);

    expect(rawDiff(root, "r1")).toMatch(/b\.txt/); // negative control: the bare diff holds b.txt
    expect(paths(unwind(root, ["changes", "--run", "r1", "--json"]))).toEqual(["first.txt", "second.txt"]);
    const u = unwind(root, ["undo", "--run", "r1", "--json"]);
    expect([u.code, u.json.counts.delete]).toEqual([0, 2]);
    expect(read(root, "b.txt")).toBe("agent b\n");
    expect(existsSync(join(root, "first.txt")) || existsSync(join(root, "second.txt"))).toBe(false);
    // The run's capsule, sealed when it ended, says the same.
    expect(unwind(root, ["run", "show", "r1", "--json"]).json.entries.map((e: { path: string }) => e.path)).toEqual(["first.txt", "second.txt"]);
  });

  it("an undo of another session made during the run is unwind's, not the run's: undo --run does not write that session's change back", async () => {
    const root = makeRepo({ "README.md": "# r\n" });
    claudeCall(root, "sess-xxxx-1111", "Write", { file_path: join(root, "x.txt"), content: "bad\n" }, () => write(root, "x.txt", "bad\n"));
    const finish = await pausedRun(root, "r2");
    expect(unwind(root, ["undo", "--session", "sess-xxxx-1111"]).code).toBe(0);
    expect(existsSync(join(root, "x.txt"))).toBe(false);
    expect((await finish()).code).toBe(0);

    expect(rawDiff(root, "r2")).toMatch(/x\.txt/); // negative control: the bare diff has x.txt deleted
    expect(paths(unwind(root, ["changes", "--run", "r2", "--json"]))).toEqual(["first.txt", "second.txt"]);
    expect(unwind(root, ["undo", "--run", "r2"]).code).toBe(0);
    expect(existsSync(join(root, "x.txt"))).toBe(false);
  });

  it("a run made inside an agent's open shell call is shared with it, both ways; the call's own work outside the run is its alone", () => {
    const root = makeRepo({ "README.md": "# r\n" });
    const S = "sess-aaaa-3333";
    const input = { command: "unwind run -- gen && echo own > own.txt", description: "generate" };
    ev(root, S, "PreToolUse", "Bash", input, "toolu_bash_1");
    expect(unwind(root, ["run", "--id", "r3", "--", ...sh("echo gen > gen.txt")]).code).toBe(0);
    write(root, "own.txt", "own\n");
    ev(root, S, "PostToolUse", "Bash", input, "toolu_bash_1");

    const cs = unwind(root, ["changes", "--session", S, "--json"]);
    expect(cs.json.entries.map((e: { path: string; shared?: unknown }) => [e.path, e.shared ?? null])).toEqual([
      ["gen.txt", [{ session: "run:r3", call: "r3" }]],
      ["own.txt", null],
    ]);
    const dry = unwind(root, ["undo", "--session", S, "--dry-run", "--json"]);
    expect(dry.json.items.map((i: { path: string; action: string; reason: string | null }) => [i.path, i.action, i.reason])).toEqual([
      ["gen.txt", "conflict", "concurrent-call"],
      ["own.txt", "delete", null], // the control: the same call's work the run did not overlap is taken back
    ]);
    expect(dry.json.items[0].detail).toMatch(/run r3/);
    const run = unwind(root, ["undo", "--run", "r3", "--dry-run", "--json"]);
    expect(run.json.items.map((i: { path: string; action: string; reason: string | null }) => [i.path, i.action, i.reason])).toEqual([["gen.txt", "conflict", "concurrent-call"]]);
    expect(run.json.items[0].detail).toMatch(/sess-aaaa-3333 toolu_bash_1/);
  });
});

describe("tasks and baselines count runs", () => {
  it("undo --task takes back a run labelled with the task beside its sessions, and a task whose only evidence is a run", () => {
    const root = makeRepo({ "README.md": "# r\n" });
    expect(unwind(root, ["run", "--id", "rt", "--task", "T1", "--", ...sh("echo t > t.txt")]).code).toBe(0);
    claudeCallEnv(root, "sess-tttt-1111", "Write", { file_path: join(root, "s.txt"), content: "s\n" }, () => write(root, "s.txt", "s\n"), { UNWIND_TASK: "T1" });
    expect(unwind(root, ["run", "--id", "ro", "--task", "T2", "--", ...sh("echo o > o.txt")]).code).toBe(0);
    write(root, "person.txt", "mine\n");

    expect(paths(unwind(root, ["changes", "--task", "T1", "--json"]))).toEqual(["s.txt", "t.txt"]);
    expect(unwind(root, ["undo", "--task", "T1"]).code).toBe(0);
    expect([existsSync(join(root, "s.txt")), existsSync(join(root, "t.txt"))]).toEqual([false, false]);
    expect(read(root, "o.txt")).toBe("o\n"); // another task's run is left alone
    const only = unwind(root, ["undo", "--task", "T2"]);
    expect(only.code).toBe(0);
    expect(existsSync(join(root, "o.txt"))).toBe(false);
    expect(read(root, "person.txt")).toBe("mine\n");
    // A task nothing names is still no evidence (exit 3), not an empty success.
    expect(unwind(root, ["undo", "--task", "T9"]).code).toBe(3);
  });

  it("a baseline never adopts a file a run labelled with its key wrote; a person's new file is adopted", () => {
    const root = makeRepo({ "tests/a.test.js": "a\n" });
    expect(unwind(root, ["baseline", "capture", "--key", "K", "--prefix", "tests", "--json"]).json.added).toBe(1);
    expect(unwind(root, ["run", "--id", "rk", "--task", "K", "--", ...sh("echo run > tests/run.test.js")]).code).toBe(0);
    write(root, "tests/person.test.js", "p\n"); // the control: a file nobody labelled with K wrote
    const again = unwind(root, ["baseline", "capture", "--key", "K", "--prefix", "tests", "--json"]);
    expect(again.json).toMatchObject({ added: 1, excluded: [{ path: "tests/run.test.js" }] });
    expect(paths(unwind(root, ["changes", "--baseline", "K", "--json"]))).toEqual(["tests/run.test.js"]);
  });
});

describe("a narrowed undo is idempotent", () => {
  it("undo --session S --path a.txt a second time is nothing to do (exit 0), not 'matches nothing'", () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    const S = "sess-pppp-1111";
    claudeCall(root, S, "Write", { file_path: join(root, "a.txt"), content: "A\n" }, () => write(root, "a.txt", "A\n"));
    claudeCall(root, S, "Write", { file_path: join(root, "b.txt"), content: "B\n" }, () => write(root, "b.txt", "B\n"));
    expect(unwind(root, ["undo", "--session", S, "--path", "a.txt"]).code).toBe(0);
    expect([read(root, "a.txt"), read(root, "b.txt")]).toEqual(["a\n", "B\n"]);
    const again = unwind(root, ["undo", "--session", S, "--path", "a.txt", "--json"]);
    expect([again.code, again.json.items, again.json.receipt]).toEqual([0, [], null]);
    expect(read(root, "b.txt")).toBe("B\n");
    // The control: a path the session never changed is still a usage error naming it.
    const typo = unwind(root, ["undo", "--session", S, "--path", "c.txt"]);
    expect([typo.code, typo.stderr]).toEqual([2, expect.stringMatching(/--path c\.txt matches nothing/)]);
  });
});

describe("a damaged record is damage, never 'no changes'", () => {
  it("a snapshot ref a journal record names is removed: changes and undo exit 4 naming it, verify reports it, nothing is touched", () => {
    const root = makeRepo({ "README.md": "# r\n" });
    const S = "sess-dddd-1111";
    claudeCall(root, S, "Bash", { command: "echo gen > gen.txt" }, () => write(root, "gen.txt", "gen\n"));
    // The control: intact, the record names the change.
    expect(paths(unwind(root, ["changes", "--session", S, "--json"]))).toEqual(["gen.txt"]);
    expect(unwind(root, ["verify"]).code).toBe(0);
    const post = unwind(root, ["snapshots", "--json"]).json.snapshots[0].id;
    git(root, "update-ref", "-d", `refs/unwind/snapshots/${post}`);

    const ch = unwind(root, ["changes", "--session", S]);
    expect([ch.code, ch.stderr]).toEqual([4, expect.stringContaining(`snapshot ${post}`)]);
    const u = unwind(root, ["undo", "--session", S]);
    expect(u.code).toBe(4);
    expect(read(root, "gen.txt")).toBe("gen\n");
    const v = unwind(root, ["verify"]);
    expect([v.code, v.stdout + v.stderr]).toEqual([4, expect.stringContaining(`snapshot ${post}`)]);
  });
});

describe("nested repositories: absence of evidence is not a change", () => {
  it("an Edit inside an untracked nested repository, then a shell call elsewhere: undo restores the edit, no false changed-since", () => {
    const root = makeRepo({ "README.md": "# r\n" });
    mkdirSync(join(root, "vendor/lib"), { recursive: true });
    git(join(root, "vendor/lib"), "init", "-q");
    write(root, "vendor/lib/f.txt", "one\n");
    const S = "sess-nnnn-1111";
    const f = join(root, "vendor/lib/f.txt");
    claudeCall(root, S, "Edit", { file_path: f, old_string: "one", new_string: "two" }, () => write(root, "vendor/lib/f.txt", "two\n"));
    claudeCall(root, S, "Bash", { command: "echo x > other.txt" }, () => write(root, "other.txt", "x\n"));
    const dry = unwind(root, ["undo", "--session", S, "--dry-run", "--json"]);
    expect(dry.json.items.map((i: { path: string; action: string }) => [i.path, i.action])).toEqual([
      ["other.txt", "delete"],
      ["vendor/lib/f.txt", "restore"],
    ]);
    expect(unwind(root, ["undo", "--session", S]).code).toBe(0);
    expect(read(root, "vendor/lib/f.txt")).toBe("one\n");
    // The control: a person's later edit inside it is still told apart (the file capture knows the Edit's post).
    claudeCall(root, S, "Edit", { file_path: f, old_string: "one", new_string: "three" }, () => write(root, "vendor/lib/f.txt", "three\n"));
    write(root, "vendor/lib/f.txt", "a person's\n");
    const later = unwind(root, ["undo", "--session", S, "--dry-run", "--json"]);
    expect(later.json.items.find((i: { path: string }) => i.path === "vendor/lib/f.txt")).toMatchObject({ action: "conflict", reason: "changed-since" });
  });
});

describe("an untracked nested repository an agent removed is said, never silent", () => {
  function withNested() {
    const root = makeRepo({ "README.md": "# r\n" });
    const lib = join(root, "vendor/lib");
    mkdirSync(lib, { recursive: true });
    git(lib, "init", "-q");
    write(root, "vendor/lib/a.txt", "committed\n");
    git(lib, "add", "-A");
    git(lib, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c");
    write(root, "vendor/lib/wip.txt", "uncommitted work\n");
    return root;
  }
  const S = "sess-rmrf-1111";

  it("rm -rf of it in a shell call: the call's change set has a not-captured entry for it, and undo says it cannot bring it back", () => {
    const root = withNested();
    claudeCall(root, S, "Bash", { command: "rm -rf vendor/lib" }, () => rmSync(join(root, "vendor/lib"), { recursive: true, force: true }));
    const c = unwind(root, ["changes", "--session", S, "--json"]);
    expect(c.json.entries).toMatchObject([{ path: "vendor/lib", change: "deleted", pre: { kind: "unknown" }, post: null }]);
    const u = unwind(root, ["undo", "--session", S, "--json"]);
    expect([u.code, u.json.items]).toEqual([1, [expect.objectContaining({ path: "vendor/lib", action: "conflict", reason: "not-captured" })]]);
  });

  it("control: a shell call that leaves it alone has no entry for it", () => {
    const root = withNested();
    claudeCall(root, S, "Bash", { command: "echo x > other.txt" }, () => write(root, "other.txt", "x\n"));
    expect(unwind(root, ["changes", "--session", S, "--json"]).json.entries.map((e: { path: string }) => e.path)).toEqual(["other.txt"]);
  });
});

describe("--from-call: this call and every later call of its session", () => {
  it("takes back call 2 and 3 of a session, not call 1 and not another session's call made in between", () => {
    const root = makeRepo({ "README.md": "# r\n" });
    const S = "sess-ffff-1111";
    const w = (session: string, f: string) => claudeCall(root, session, "Write", { file_path: join(root, f), content: `${f}\n` }, () => write(root, f, `${f}\n`));
    w(S, "one.txt");
    const second = w(S, "two.txt");
    w("sess-other-2222", "other.txt");
    w(S, "three.txt");
    const dry = unwind(root, ["undo", "--from-call", second, "--dry-run", "--json"]);
    expect(dry.json.scope).toEqual({ kind: "from-call", id: second, calls: 2 });
    expect(dry.json.items.map((i: { path: string }) => i.path)).toEqual(["three.txt", "two.txt"]);
    expect(unwind(root, ["undo", "--from-call", second, "--dry-run"]).stdout).toMatch(/call \S+ and the 1 after it: /);
    expect(unwind(root, ["undo", "--from-call", second]).code).toBe(0);
    expect(["one.txt", "two.txt", "other.txt", "three.txt"].map((f) => existsSync(join(root, f)))).toEqual([true, false, true, false]);
    // With another scope beside it, it is one scope at a time.
    expect(unwind(root, ["undo", "--from-call", second, "--task", "T"]).code).toBe(2);
  });
});
