import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, chmodSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { open, type UndoReport } from "../../src/index.js";
import { dirFingerprint, git, gitStatus, makeRepo, read, rejection, tempDir, treeState, write } from "../helpers.js";
import { claudeCallEnv } from "../journal-helpers.js";

/*
 * Tasks (SPEC section 6): a task's change set from a branch (unwind's own
 * binding or the orchestrator's .sdd layout) or from the journal, and undo of
 * it on the integration branch after it was merged. Real git, real linked
 * worktrees; journal tasks recorded through the real hook process, every
 * operation called through the library. The command line's side (the
 * --json error document, stderr) is in test/e2e/task.test.ts.
 */

type Entry = { path: string; change: string; pre: any; post: any; by: string[] };

function repo(extra: Record<string, string> = {}): string {
  return makeRepo({ ".gitignore": ".sdd/\n", "a.txt": "a0\n", "b.txt": "b0\n", "c.txt": "c0\n", "keep.txt": "keep\n", ...extra });
}

function commitAll(dir: string, msg: string): string {
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", msg);
  return git(dir, "rev-parse", "HEAD").trim();
}

function rev(dir: string, ref: string): string {
  return git(dir, "rev-parse", ref).trim();
}

/** `task start`, checked. A worktree path that does not exist yet is added by unwind. */
async function start(root: string, task: string, branch: string, worktree?: string): Promise<any> {
  const b = await (await open({ root })).taskStart(task, { branch, worktree, onto: "main" });
  expect(b).toMatchObject({ task, branch, onto: "main" });
  return b;
}

/** The orchestrator layout: `.sdd/runtime/pids/<sid>.json` claims the task, the work is on `agent/<sid>` in a worktree under `.sdd/runtime/worktrees/`. */
function sddAgent(root: string, sid: string, task: string, opts: { record?: boolean } = {}): string {
  const wt = join(root, ".sdd", "runtime", "worktrees", sid);
  mkdirSync(join(root, ".sdd", "runtime", "worktrees"), { recursive: true });
  git(root, "worktree", "add", "-q", "-b", `agent/${sid}`, wt, "main");
  if (opts.record !== false) pidRecord(root, sid, task);
  return wt;
}

function pidRecord(root: string, sid: string, task: string): void {
  mkdirSync(join(root, ".sdd", "runtime", "pids"), { recursive: true });
  writeFileSync(join(root, ".sdd", "runtime", "pids", `${sid}.json`), JSON.stringify({ task_id: task, pid: 4242 }) + "\n");
}

async function changes(root: string, task: string): Promise<Entry[]> {
  const cs = await (await open({ root })).changes({ task });
  expect(cs.scope).toEqual({ kind: "task", id: task });
  return cs.entries as Entry[];
}

/** The undo of a task (opened on `root`): `--dry-run` is `{ dryRun: true }`. */
async function undoTask(root: string, task: string, o: { dryRun?: boolean } = {}): Promise<UndoReport> {
  return (await open({ root })).undo({ task }, o);
}

/** `changes`, `undo` and `undo --dry-run` of a task, as the command line's three invocations. */
const taskOps = (root: string, task: string) => ({
  changes: async () => (await open({ root })).changes({ task }),
  undo: () => undoTask(root, task),
  "undo --dry-run": () => undoTask(root, task, { dryRun: true }),
});

const paths = (es: Entry[]) => es.map((e) => e.path);
const byPath = (es: Entry[]) => Object.fromEntries(es.map((e) => [e.path, e]));
const items = (r: UndoReport) => r.items.map((i) => [i.path, i.action, i.reason]);
const gitOrder = (ps: string[]) => [...ps].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
const lines = (s: string) => s.split("\n").filter(Boolean);
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** The blob oid of `path` in `rev`, as git itself says. */
function blob(dir: string, revision: string, path: string): string {
  return rev(dir, `${revision}:${path}`);
}

/** Everything of a git repository that undo must never move: HEAD, the index bytes, the status. */
function gitState(root: string) {
  return {
    head: rev(root, "HEAD"),
    symref: git(root, "symbolic-ref", "HEAD").trim(),
    index: readFileSync(join(root, ".git", "index")).toString("base64"),
    status: gitStatus(root),
  };
}

describe("branch change sets: the three-dot diff from the fork point", () => {
  it.each(["unwind", "sdd"] as const)("a path added or changed on main after the fork is not the task's (%s binding), though a two-dot diff would list it", async (kind) => {
    const root = repo();
    let branch: string;
    let wt: string;
    if (kind === "unwind") {
      branch = "task/one";
      wt = join(tempDir(), "t1");
      const b = await start(root, "T1", branch, wt);
      expect(b.fork).toBe(rev(root, "main"));
      expect(b.branch).toBe(branch);
      expect(b.onto).toBe("main");
    } else {
      branch = "agent/sess-3dot";
      wt = sddAgent(root, "sess-3dot", "T1");
    }
    write(wt, "a.txt", "a1\n");
    write(wt, "t1.txt", "task one\n");
    commitAll(wt, "task work");
    // main moves on after the fork: a new path and a change to a path the task never touched.
    write(root, "main-only.txt", "added on main later\n");
    write(root, "b.txt", "b changed on main\n");
    commitAll(root, "main moves on");

    const es = await changes(root, "T1");
    expect(paths(es)).toEqual(["a.txt", "t1.txt"]);
    expect(paths(es)).not.toContain("main-only.txt");
    expect(paths(es)).not.toContain("b.txt");
    expect(byPath(es)["a.txt"]).toMatchObject({ change: "modified", pre: { kind: "file", oid: blob(root, "main~1", "a.txt") }, post: { kind: "file", oid: blob(root, branch, "a.txt") } });
    expect(byPath(es)["t1.txt"]).toMatchObject({ change: "added", pre: null, post: { kind: "file", mode: "100644", oid: blob(root, branch, "t1.txt") } });

    // The negative control: the two-dot diff against where main stands now WOULD list main's paths.
    const twoDot = lines(git(root, "diff", "--name-only", "main", branch));
    expect(twoDot).toContain("main-only.txt");
    expect(twoDot).toContain("b.txt");
    expect(lines(git(root, "diff", "--name-only", `main...${branch}`))).toEqual(paths(es));

    // Undoing the (unmerged) task on main touches nothing: main never had its changes, and main's own work stays.
    const before = treeState(root, [".git", ".sdd"]);
    const u = await undoTask(root, "T1");
    expect(u.partial).toBe(false);
    expect(items(u)).toEqual([
      ["a.txt", "skip", "unchanged"],
      ["t1.txt", "skip", "unchanged"],
    ]);
    expect(treeState(root, [".git", ".sdd"])).toEqual(before);
    expect(read(root, "main-only.txt")).toBe("added on main later\n");
  });
});

describe("a merged task is not an empty task", () => {
  it("merged by a merge commit (orchestrator layout, no task start): the same change set, same oids", async () => {
    const root = repo();
    const sid = "sess-merge-0001";
    const wt = sddAgent(root, sid, "T-merge");
    write(wt, "a.txt", "a1\n");
    write(wt, "dir/new.txt", "new\n");
    commitAll(wt, "agent 1");
    rmSync(join(wt, "c.txt"));
    write(wt, "a.txt", "a2\n");
    commitAll(wt, "agent 2");
    write(root, "other.txt", "main\n");
    commitAll(root, "main moves on");

    const pre = await changes(root, "T-merge");
    expect(paths(pre)).toEqual(["a.txt", "c.txt", "dir/new.txt"]);
    expect(pre.map((e) => e.change)).toEqual(["modified", "deleted", "added"]);

    git(root, "merge", "-q", "--no-ff", "-m", "merge agent", `agent/${sid}`);
    expect(lines(git(root, "rev-list", "--parents", "-n", "1", "HEAD"))[0]!.split(" ")).toHaveLength(3); // a real merge commit
    // The negative control: a naive diff from the merge base now says nothing changed.
    expect(git(root, "diff", "--name-only", `main...agent/${sid}`)).toBe("");

    expect(await changes(root, "T-merge")).toEqual(pre);
    // Later history on main (another commit, another merged branch) does not change it.
    write(root, "later.txt", "later\n");
    commitAll(root, "later on main");
    git(root, "branch", "side", "main~1");
    git(root, "checkout", "-q", "side");
    write(root, "side.txt", "side\n");
    commitAll(root, "side");
    git(root, "checkout", "-q", "main");
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side");
    expect(await changes(root, "T-merge")).toEqual(pre);
    // The orchestrator cleans the worktree up; the branch remains: still the same answer.
    git(root, "worktree", "remove", wt);
    expect(await changes(root, "T-merge")).toEqual(pre);
  });

  it("fast-forwarded (bound with task start, which records the fork): the same change set, same oids", async () => {
    const root = repo();
    const wt = join(tempDir(), "ff");
    const b = await start(root, "T-ff", "task/ff", wt);
    write(wt, "a.txt", "a1\n");
    write(wt, "ff.txt", "ff\n");
    commitAll(wt, "ff 1");
    chmodSync(join(wt, "b.txt"), 0o755);
    commitAll(wt, "ff 2");
    const pre = await changes(root, "T-ff");
    expect(paths(pre)).toEqual(["a.txt", "b.txt", "ff.txt"]);

    git(root, "merge", "-q", "--ff-only", "task/ff");
    expect(rev(root, "main")).toBe(rev(root, "task/ff"));
    // The negative control: the merge base is now the tip itself; a merge-base diff is empty.
    expect(rev(root, "main")).toBe(git(root, "merge-base", "main", "task/ff").trim());
    expect(git(root, "diff", "--name-only", "main...task/ff")).toBe("");
    expect(b.fork).not.toBe(rev(root, "main"));

    expect(await changes(root, "T-ff")).toEqual(pre);
    write(root, "later.txt", "later\n");
    commitAll(root, "later on main");
    expect(await changes(root, "T-ff")).toEqual(pre);
  });

  it("squash-merged (orchestrator layout): the same change set, same oids", async () => {
    const root = repo();
    const sid = "sess-squash-01";
    const wt = sddAgent(root, sid, "T-squash");
    write(wt, "a.txt", "a1\n");
    commitAll(wt, "s1");
    write(wt, "sq.txt", "sq\n");
    rmSync(join(wt, "keep.txt"));
    commitAll(wt, "s2");
    write(root, "other.txt", "main\n");
    commitAll(root, "main moves on");
    const pre = await changes(root, "T-squash");
    expect(paths(pre)).toEqual(["a.txt", "keep.txt", "sq.txt"]);

    git(root, "merge", "-q", "--squash", `agent/${sid}`);
    git(root, "commit", "-q", "-m", "squash agent");
    expect(lines(git(root, "rev-list", "--parents", "-n", "1", "HEAD"))[0]!.split(" ")).toHaveLength(2); // no merge commit
    // The negative control: the two-dot diff no longer shows any of the task's paths.
    const twoDot = lines(git(root, "diff", "--name-only", "main", `agent/${sid}`));
    for (const p of paths(pre)) expect(twoDot).not.toContain(p);

    expect(await changes(root, "T-squash")).toEqual(pre);
    write(root, "later.txt", "later\n");
    commitAll(root, "later on main");
    expect(await changes(root, "T-squash")).toEqual(pre);
  });

  it("fast-forwarded orchestrator branch: the fork comes from the branch's creation; with no record of it, refuse (exit 3)", async () => {
    const root = repo();
    write(root, "early.txt", "early\n");
    commitAll(root, "early");
    const sid = "sess-ff-0001";
    const wt = sddAgent(root, sid, "T-sddff");
    write(wt, "a.txt", "a1\n");
    commitAll(wt, "agent");
    const pre = await changes(root, "T-sddff");
    expect(paths(pre)).toEqual(["a.txt"]);
    git(root, "merge", "-q", "--ff-only", `agent/${sid}`);
    expect(await changes(root, "T-sddff")).toEqual(pre);

    // Nothing left that says where it forked: refuse rather than guess (or answer "empty").
    git(root, "reflog", "expire", "--expire=now", "--all");
    const e = await rejection(taskOps(root, "T-sddff").changes());
    expect(e.exit).toBe(3);
    expect(e.message).toContain("T-sddff");
  });
});

describe("a task branch that took in main's later work", () => {
  it.each([
    ["unwind", "merge"],
    ["unwind", "rebase"],
    ["sdd", "merge"],
    ["sdd", "rebase"],
  ] as const)("another task merged into main and then taken into the task branch is not the task's (%s binding, %s sync): before and after the merge; undo leaves it", async (kind, sync) => {
    const root = repo();
    let wt1: string;
    let branch: string;
    if (kind === "unwind") {
      wt1 = join(tempDir(), "t1");
      branch = "task/one";
      await start(root, "T1", branch, wt1); // records the fork
    } else {
      branch = "agent/sess-sync-01";
      wt1 = sddAgent(root, "sess-sync-01", "T1");
    }
    write(wt1, "a.txt", "a1\n");
    commitAll(wt1, "T1 part 1");
    // Another task lands on main meanwhile.
    const wt2 = join(tempDir(), "t2");
    await start(root, "T2", "task/two", wt2);
    write(wt2, "b.txt", "b2 from T2\n");
    write(wt2, "t2.txt", "t2\n");
    commitAll(wt2, "T2");
    git(root, "merge", "-q", "--no-ff", "-m", "merge T2", "task/two");
    // T1 catches up with main (a routine step before integration), then goes on.
    if (sync === "merge") git(wt1, "merge", "-q", "--no-ff", "-m", "sync main into T1", "main");
    else git(wt1, "rebase", "-q", "main");
    write(wt1, "t1.txt", "t1\n");
    commitAll(wt1, "T1 part 2");

    // The three-dot diff: what T1 itself changed.
    expect(lines(git(root, "diff", "--name-only", `main...${branch}`))).toEqual(["a.txt", "t1.txt"]);
    const pre = await changes(root, "T1");
    expect(paths(pre)).toEqual(["a.txt", "t1.txt"]);

    git(root, "merge", "-q", "--no-ff", "-m", "merge T1", branch);
    expect(await changes(root, "T1")).toEqual(pre);
    expect(paths(await changes(root, "T2"))).toEqual(["b.txt", "t2.txt"]);

    const r = await undoTask(root, "T1");
    expect(r.partial).toBe(false);
    expect(items(r)).toEqual([
      ["a.txt", "restore", null],
      ["t1.txt", "delete", null],
    ]);
    expect(read(root, "b.txt")).toBe("b2 from T2\n"); // T2 is not reverted
    expect(read(root, "t2.txt")).toBe("t2\n");
    expect(read(root, "a.txt")).toBe("a0\n");
  });
});

/** T1 forks from main, changes a/b/c and adds n1, main moves on, T1 is merged with a merge commit. */
async function mergedT1(opts: { later: boolean }): Promise<string> {
  const root = repo();
  const wt1 = join(tempDir(), "t1");
  await start(root, "T1", "task/one", wt1);
  write(wt1, "a.txt", "a1\n");
  write(wt1, "b.txt", "b1\n");
  write(wt1, "n1.txt", "n1\n");
  rmSync(join(wt1, "c.txt"));
  commitAll(wt1, "T1");
  write(root, "other.txt", "main\n");
  commitAll(root, "main moves on");
  git(root, "merge", "-q", "--no-ff", "-m", "merge T1", "task/one");
  if (opts.later) {
    git(root, "worktree", "remove", wt1);
    // A later task changes one of T1's paths and is merged too; a person then edits another.
    const wt2 = join(tempDir(), "t2");
    await start(root, "T2", "task/two", wt2);
    write(wt2, "b.txt", "b2 from T2\n");
    commitAll(wt2, "T2");
    git(root, "merge", "-q", "--no-ff", "-m", "merge T2", "task/two");
    write(root, "n1.txt", "n1 edited by a person\n");
  }
  return root;
}

describe("undo --task after the merge, on the integration branch", () => {
  it("takes the task back (restores and deletes), HEAD and index untouched; redo brings it back", async () => {
    const root = await mergedT1({ later: false });
    const git0 = gitState(root);
    expect(git0.status).toBe("");
    const u = await open({ root });
    const r = await u.undo({ task: "T1" });
    expect(r.partial).toBe(false);
    expect(r.scope).toEqual({ kind: "task", id: "T1" });
    expect(r.dryRun).toBe(false);
    expect(r.receipt).toMatch(/^r-/);
    expect(items(r)).toEqual([
      ["a.txt", "restore", null],
      ["b.txt", "restore", null],
      ["c.txt", "restore", null],
      ["n1.txt", "delete", null],
    ]);
    expect(read(root, "a.txt")).toBe("a0\n");
    expect(read(root, "b.txt")).toBe("b0\n");
    expect(read(root, "c.txt")).toBe("c0\n");
    expect(existsSync(join(root, "n1.txt"))).toBe(false);
    expect(read(root, "other.txt")).toBe("main\n"); // main's own work stays
    expect(read(root, "keep.txt")).toBe("keep\n");
    const after = gitState(root);
    expect(after.head).toBe(git0.head);
    expect(after.symref).toBe("refs/heads/main");
    expect(after.index).toBe(git0.index);
    expect(after.status).not.toBe(git0.status); // the work tree did change (the probe can see it)

    // Undo is idempotent.
    const again = await u.undo({ task: "T1" });
    expect(again.partial).toBe(false);
    expect(again.items.every((i) => i.action === "skip" && i.reason === "unchanged")).toBe(true);

    const redo = await u.redo(r.receipt!);
    expect(redo.partial).toBe(false);
    expect(gitStatus(root)).toBe(""); // exactly the merged state again
    expect(read(root, "n1.txt")).toBe("n1\n");
    expect(gitState(root)).toEqual(git0);
  });

  it("a path a later task (or a person) changed is a conflict, left byte-identical; the rest is taken back (exit 1); redo", async () => {
    const root = await mergedT1({ later: true });
    // T1's answer survives the later merge; T2's is just its own path.
    expect(paths(await changes(root, "T1"))).toEqual(["a.txt", "b.txt", "c.txt", "n1.txt"]);
    const t2 = await changes(root, "T2");
    expect(paths(t2)).toEqual(["b.txt"]);
    expect(t2[0]!.pre.oid).toBe(blob(root, "task/one", "b.txt"));

    const git0 = gitState(root);
    const b = readFileSync(join(root, "b.txt"));
    const n1 = readFileSync(join(root, "n1.txt"));
    const u = await open({ root });
    const r = await u.undo({ task: "T1" });
    expect(r.partial).toBe(true);
    expect(items(r)).toEqual([
      ["a.txt", "restore", null],
      ["b.txt", "conflict", "changed-since"],
      ["c.txt", "restore", null],
      ["n1.txt", "conflict", "changed-since"],
    ]);
    expect(r.counts).toEqual({ restore: 2, delete: 0, merge: 0, skip: 0, conflict: 2 });
    expect(readFileSync(join(root, "b.txt")).equals(b)).toBe(true);
    expect(readFileSync(join(root, "n1.txt")).equals(n1)).toBe(true);
    expect(read(root, "b.txt")).toBe("b2 from T2\n");
    expect(read(root, "a.txt")).toBe("a0\n");
    expect(read(root, "c.txt")).toBe("c0\n");
    expect(rev(root, "HEAD")).toBe(git0.head);
    expect(gitState(root).index).toBe(git0.index);

    const redo = await u.redo(r.receipt!);
    expect(redo.partial).toBe(false);
    expect(items(redo)).toEqual([
      ["a.txt", "restore", null],
      ["c.txt", "delete", null],
    ]);
    expect(read(root, "a.txt")).toBe("a1\n");
    expect(existsSync(join(root, "c.txt"))).toBe(false);
    expect(read(root, "b.txt")).toBe("b2 from T2\n");
    expect(read(root, "n1.txt")).toBe("n1 edited by a person\n");
    expect(gitState(root)).toEqual(git0);
  });
});

describe("the task worktree's uncommitted state", () => {
  it.each(["unwind", "sdd"] as const)("is part of the change set while the worktree exists, and not once it is removed (%s binding)", async (kind) => {
    const root = repo();
    let wt: string;
    let branch: string;
    if (kind === "unwind") {
      wt = join(tempDir(), "wip");
      branch = "task/wip";
      await start(root, "T-wip", branch, wt);
    } else {
      branch = "agent/sess-wip-01";
      wt = sddAgent(root, "sess-wip-01", "T-wip");
    }
    write(wt, "a.txt", "a1 committed\n");
    commitAll(wt, "committed");
    // Uncommitted: a modified tracked file, a staged new file, an untracked file, a deletion.
    write(wt, "b.txt", "b1 not committed\n");
    write(wt, "staged.txt", "staged\n");
    git(wt, "add", "staged.txt");
    write(wt, "untracked.txt", "untracked\n");
    unlinkSync(join(wt, "c.txt"));
    const wtIndex = readFileSync(join(rev(wt, "--absolute-git-dir"), "index"));
    const wtStatus = gitStatus(wt);

    const es = await changes(root, "T-wip");
    expect(paths(es)).toEqual(["a.txt", "b.txt", "c.txt", "staged.txt", "untracked.txt"]);
    const e = byPath(es);
    expect(e["a.txt"]!.post.oid).toBe(blob(root, branch, "a.txt"));
    expect(e["b.txt"]).toMatchObject({ change: "modified", pre: { oid: blob(root, "main", "b.txt") }, post: { kind: "file", oid: git(wt, "hash-object", "b.txt").trim() } });
    expect(e["c.txt"]).toMatchObject({ change: "deleted", post: null });
    expect(e["staged.txt"]).toMatchObject({ change: "added", pre: null, post: { oid: git(wt, "hash-object", "staged.txt").trim() } });
    expect(e["untracked.txt"]).toMatchObject({ change: "added", pre: null, post: { oid: git(wt, "hash-object", "untracked.txt").trim() } });
    // Reading the worktree changed nothing there.
    expect(readFileSync(join(rev(wt, "--absolute-git-dir"), "index")).equals(wtIndex)).toBe(true);
    expect(gitStatus(wt)).toBe(wtStatus);

    // The negative control: without the worktree only the committed work is the task's.
    git(root, "worktree", "remove", "--force", wt);
    expect(existsSync(wt)).toBe(false);
    const committed = await changes(root, "T-wip");
    expect(paths(committed)).toEqual(["a.txt"]);
    expect(committed[0]).toEqual(e["a.txt"]);
  });
});

describe("refusals (exit 3, naming the task) and the empty answer (exit 0)", () => {
  it("an unknown task: exit 3 naming it, for changes, undo and dry run; nothing is done", async () => {
    const root = repo();
    const wt = join(tempDir(), "known");
    await start(root, "T-known", "task/known", wt);
    write(wt, "a.txt", "a1\n");
    commitAll(wt, "known");
    const before = { tree: treeState(root), git: gitState(root) };
    for (const [name, op] of Object.entries(taskOps(root, "T-nobody"))) {
      const e = await rejection(op());
      expect({ name, code: e.code, exit: e.exit }).toEqual({ name, code: "E_SCOPE_UNKNOWN", exit: 3 });
      expect(e.message).toContain("T-nobody");
    }
    expect({ tree: treeState(root), git: gitState(root) }).toEqual(before);
    // The negative control: a task with evidence resolves in the same repository.
    expect(paths(await changes(root, "T-known"))).toEqual(["a.txt"]);
  });

  it("two orchestrator records claiming one task: exit 3 naming both sessions", async () => {
    const root = repo();
    const w1 = sddAgent(root, "sess-dup-aaaa", "T-dup");
    const w2 = sddAgent(root, "sess-dup-bbbb", "T-dup");
    write(w1, "a.txt", "from a\n");
    commitAll(w1, "a");
    write(w2, "b.txt", "from b\n");
    commitAll(w2, "b");
    const before = treeState(root, [".git", ".sdd"]);
    const ops = taskOps(root, "T-dup");
    for (const [name, op] of Object.entries({ changes: ops.changes, undo: ops.undo })) {
      const e = await rejection(op());
      expect({ name, code: e.code, exit: e.exit }).toEqual({ name, code: "E_SCOPE_AMBIGUOUS", exit: 3 });
      expect(e.message).toContain("T-dup");
      expect(e.message).toContain("sess-dup-aaaa");
      expect(e.message).toContain("sess-dup-bbbb");
    }
    expect(treeState(root, [".git", ".sdd"])).toEqual(before);
    // The negative control: with one claim left, the task resolves to that session's branch.
    rmSync(join(root, ".sdd", "runtime", "pids", "sess-dup-bbbb.json"));
    expect(paths(await changes(root, "T-dup"))).toEqual(["a.txt"]);
  });

  it("a worktree on agent/<sid> without the pid record is not evidence (exit 3); with the record it is", async () => {
    const root = repo();
    const sid = "sess-orphan-01";
    const wt = sddAgent(root, sid, "T-orphan", { record: false });
    write(wt, "a.txt", "orphan\n");
    commitAll(wt, "orphan");
    for (const task of ["T-orphan", sid, `agent/${sid}`]) {
      const e = await rejection(taskOps(root, task).changes());
      expect(e.exit).toBe(3);
      expect(e.message).toContain(task);
    }
    // A record for another task does not make it evidence for this one either.
    pidRecord(root, sid, "T-else");
    expect((await rejection(taskOps(root, "T-orphan").changes())).exit).toBe(3);
    // The negative control.
    pidRecord(root, sid, "T-orphan");
    expect(paths(await changes(root, "T-orphan"))).toEqual(["a.txt"]);
  });

  it.each(["unwind", "sdd"] as const)("the task's branch deleted: exit 3 'is gone' (%s binding)", async (kind) => {
    const root = repo();
    let wt: string;
    let branch: string;
    if (kind === "unwind") {
      wt = join(tempDir(), "gone");
      branch = "task/gone";
      await start(root, "T-gone", branch, wt);
    } else {
      branch = "agent/sess-gone-01";
      wt = sddAgent(root, "sess-gone-01", "T-gone");
    }
    write(wt, "a.txt", "a1\n");
    commitAll(wt, "work");
    git(root, "worktree", "remove", wt);
    // The negative control: while the branch exists the task resolves.
    expect(paths(await changes(root, "T-gone"))).toEqual(["a.txt"]);
    git(root, "branch", "-D", branch);
    for (const [name, op] of Object.entries(taskOps(root, "T-gone"))) {
      const e = await rejection(op());
      expect({ name, exit: e.exit }).toEqual({ name, exit: 3 });
      expect(e.message).toContain("T-gone");
      expect(e.message).toContain("is gone");
    }
  });

  it("git failing on the task's objects: exit 3 naming the task, never an empty answer", async () => {
    const root = repo();
    const wt = join(tempDir(), "broken");
    await start(root, "T-broken", "task/broken", wt);
    write(wt, "a.txt", "a1\n");
    const tip = commitAll(wt, "work");
    git(root, "worktree", "remove", wt);
    expect(paths(await changes(root, "T-broken"))).toEqual(["a.txt"]); // negative control
    const tree = rev(root, `${tip}^{tree}`);
    rmSync(join(root, ".git", "objects", tree.slice(0, 2), tree.slice(2)));
    const e = await rejection(taskOps(root, "T-broken").changes());
    expect(e.exit).toBe(3);
    expect(e.message).toContain("T-broken");
  });

  it.each(["unwind", "sdd"] as const)("a branch with no changes: exit 0 with entries [] (%s binding)", async (kind) => {
    const root = repo();
    let wt: string;
    if (kind === "unwind") {
      wt = join(tempDir(), "empty");
      const b = await start(root, "T-empty", "task/empty", wt);
      expect(b.fork).toBe(rev(root, "main"));
    } else {
      wt = sddAgent(root, "sess-empty-01", "T-empty");
    }
    // main moves on: still nothing is the task's.
    write(root, "other.txt", "main\n");
    commitAll(root, "main moves on");
    const cs = await taskOps(root, "T-empty").changes();
    expect(cs).toEqual({ scope: { kind: "task", id: "T-empty" }, entries: [] });
    const before = treeState(root, [".git", ".sdd"]);
    const u = await undoTask(root, "T-empty");
    expect(u.partial).toBe(false);
    expect(u.items).toEqual([]);
    expect(u.counts).toEqual({ restore: 0, delete: 0, merge: 0, skip: 0, conflict: 0 });
    expect(treeState(root, [".git", ".sdd"])).toEqual(before);
    // The negative control: the first change shows up.
    write(wt, "late.txt", "late\n");
    expect(paths(await changes(root, "T-empty"))).toEqual(["late.txt"]);
  });
});

describe("entry kinds and order", () => {
  it("renames are deleted + added; mode-only is 'mode'; symlinks and gitlinks keep their kind; git path order", async () => {
    const root = repo({ "conf.txt": "conf\n", "run.sh": "#!/bin/sh\n" });
    const wt = join(tempDir(), "kinds");
    await start(root, "T-kinds", "task/kinds", wt);
    mkdirSync(join(wt, "moved"));
    git(wt, "mv", "a.txt", "moved/a.txt");
    chmodSync(join(wt, "run.sh"), 0o755);
    symlinkSync("keep.txt", join(wt, "link"));
    rmSync(join(wt, "conf.txt"));
    symlinkSync("keep.txt", join(wt, "conf.txt"));
    for (const p of ["a-b.txt", "a/b.txt", "B.txt", "a.txt.d/x"]) write(wt, p, `${p}\n`);
    commitAll(wt, "kinds");
    const sub = rev(root, "main");
    git(wt, "update-index", "--add", "--cacheinfo", `160000,${sub},sub`);
    git(wt, "commit", "-q", "-m", "gitlink");
    // An unpopulated submodule, as a checkout leaves one: its directory, empty. (One whose directory is gone is
    // deleted, as git status says, and a snapshot records it so.)
    mkdirSync(join(wt, "sub"));
    expect(git(wt, "ls-tree", "HEAD", "sub")).toContain("160000 commit");

    const check = (es: Entry[]) => {
      const e = byPath(es);
      expect(paths(es)).toEqual(gitOrder(paths(es)));
      expect(paths(es)).toEqual(["B.txt", "a-b.txt", "a.txt", "a.txt.d/x", "a/b.txt", "conf.txt", "link", "moved/a.txt", "run.sh", "sub"]);
      expect(e["a.txt"]).toMatchObject({ change: "deleted", pre: { kind: "file", oid: blob(root, "main", "a.txt") }, post: null });
      expect(e["moved/a.txt"]).toMatchObject({ change: "added", pre: null, post: { kind: "file", oid: blob(root, "main", "a.txt") } });
      expect(e["run.sh"]).toMatchObject({ change: "mode", pre: { kind: "file", mode: "100644" }, post: { kind: "file", mode: "100755" } });
      expect(e["run.sh"]!.pre.oid).toBe(e["run.sh"]!.post.oid);
      expect(e.link).toMatchObject({ change: "added", post: { kind: "symlink", mode: "120000", oid: blob(root, "task/kinds", "link") } });
      expect(e["conf.txt"]).toMatchObject({ change: "typechange", pre: { kind: "file" }, post: { kind: "symlink" } });
      expect(e.sub).toMatchObject({ change: "added", pre: null, post: { kind: "gitlink", mode: "160000", oid: sub } });
    };
    const withWorktree = await changes(root, "T-kinds");
    check(withWorktree);
    git(root, "worktree", "remove", "--force", wt); // the gitlink's directory is absent there
    const fromBranch = await changes(root, "T-kinds");
    check(fromBranch);
    expect(fromBranch).toEqual(withWorktree);
  });
});

describe("undo --task --dry-run", () => {
  it("changes nothing: status, index bytes, HEAD, work tree, store; the real undo changes the work tree only", async () => {
    const root = await mergedT1({ later: true });
    const store = join(root, ".git", "unwind");
    const before = { git: gitState(root), tree: treeState(root), store: dirFingerprint(store), head: readFileSync(join(root, ".git", "HEAD"), "utf8") };
    const u = await open({ root });
    const d = await u.undo({ task: "T1" }, { dryRun: true });
    expect(d.partial).toBe(true);
    expect(d.dryRun).toBe(true);
    expect(d.receipt).toBeNull();
    const planned = items(d);
    expect(planned).toEqual([
      ["a.txt", "restore", null],
      ["b.txt", "conflict", "changed-since"],
      ["c.txt", "restore", null],
      ["n1.txt", "conflict", "changed-since"],
    ]);
    expect({ git: gitState(root), tree: treeState(root), store: dirFingerprint(store), head: readFileSync(join(root, ".git", "HEAD"), "utf8") }).toEqual(before);

    // The real undo does what the dry run said; the same probes see the work tree change, but never HEAD or the index.
    const r = await u.undo({ task: "T1" });
    expect(r.partial).toBe(true);
    expect(items(r)).toEqual(planned);
    const after = gitState(root);
    expect(treeState(root)).not.toEqual(before.tree);
    expect(after.status).not.toBe(before.git.status);
    expect(after.head).toBe(before.git.head);
    expect(after.symref).toBe(before.git.symref);
    expect(after.index).toBe(before.git.index);
    expect(readFileSync(join(root, ".git", "HEAD"), "utf8")).toBe(before.head);
  });
});

describe("journal tasks: the union of the task's sessions, in time order", () => {
  const S1 = "sess-task-one-1111";
  const S2 = "sess-task-two-2222";
  const S3 = "sess-other-3333";

  function journalRepo() {
    const root = makeRepo({ "x.txt": "x0\n", "y.txt": "y0\n", "z.txt": "z0\n" });
    const T = { UNWIND_TASK: "T-journal" };
    const U = { UNWIND_TASK: "T-other" };
    claudeCallEnv(root, S1, "Edit", { file_path: join(root, "x.txt"), old_string: "x0", new_string: "x1" }, () => write(root, "x.txt", "x1\n"), T);
    claudeCallEnv(root, S1, "Write", { file_path: join(root, "t1.txt"), content: "t1\n" }, () => write(root, "t1.txt", "t1\n"), T);
    claudeCallEnv(root, S3, "Edit", { file_path: join(root, "y.txt"), old_string: "y0", new_string: "y1" }, () => write(root, "y.txt", "y1\n"), U);
    claudeCallEnv(root, S2, "Edit", { file_path: join(root, "x.txt"), old_string: "x1", new_string: "x2" }, () => write(root, "x.txt", "x2\n"), T);
    claudeCallEnv(root, S2, "Bash", { command: "rm z.txt" }, () => rmSync(join(root, "z.txt")), T);
    return root;
  }

  it("is undone as one: both sessions' work, first pre to last post; the other task's session is left alone", async () => {
    const root = journalRepo();
    const es = await changes(root, "T-journal");
    expect(paths(es)).toEqual(["t1.txt", "x.txt", "z.txt"]);
    const x = byPath(es)["x.txt"]!;
    expect(x.by).toEqual(expect.arrayContaining([`claude:${S1}`, `claude:${S2}`]));
    if (x.pre.sha256) expect(x.pre.sha256).toBe(sha("x0\n"));
    if (x.post.sha256) expect(x.post.sha256).toBe(sha("x2\n"));
    // Negative controls: the other task's session is recorded (and would be undone as its own task),
    // and one session alone is less than the task.
    expect(paths(await changes(root, "T-other"))).toEqual(["y.txt"]);
    const u = await open({ root });
    expect(paths((await u.changes({ session: S1 })).entries as Entry[])).toEqual(["t1.txt", "x.txt"]);

    const git0 = gitState(root);
    const r = await u.undo({ task: "T-journal" });
    expect(r.partial).toBe(false);
    expect(r.scope).toEqual({ kind: "task", id: "T-journal" });
    expect(items(r)).toEqual([
      ["t1.txt", "delete", null],
      ["x.txt", "restore", null],
      ["z.txt", "restore", null],
    ]);
    expect(read(root, "x.txt")).toBe("x0\n");
    expect(read(root, "z.txt")).toBe("z0\n");
    expect(existsSync(join(root, "t1.txt"))).toBe(false);
    expect(read(root, "y.txt")).toBe("y1\n"); // the other task's work stays
    expect(rev(root, "HEAD")).toBe(git0.head);
    expect(gitState(root).index).toBe(git0.index);

    expect((await u.redo(r.receipt!)).partial).toBe(false);
    expect(read(root, "x.txt")).toBe("x2\n");
    expect(read(root, "t1.txt")).toBe("t1\n");
    expect(existsSync(join(root, "z.txt"))).toBe(false);
    expect(read(root, "y.txt")).toBe("y1\n");
  });

  it("a later write by another task's session is a later-write conflict naming it", async () => {
    const root = journalRepo();
    const S4 = "sess-later-4444";
    claudeCallEnv(root, S4, "Edit", { file_path: join(root, "x.txt"), old_string: "x2", new_string: "x3" }, () => write(root, "x.txt", "x3\n"), { UNWIND_TASK: "T-other" });
    const r = await undoTask(root, "T-journal");
    expect(r.partial).toBe(true);
    expect(items(r)).toEqual([
      ["t1.txt", "delete", null],
      ["x.txt", "conflict", "later-write"],
      ["z.txt", "restore", null],
    ]);
    expect(r.items[1]!.detail).toContain(`claude:${S4}`);
    expect(read(root, "x.txt")).toBe("x3\n");
    expect(read(root, "y.txt")).toBe("y1\n");
  });
});

describe("the task's own commits, and only those (issue 9, case 11)", () => {
  it("a branch made at the integration branch's tip and never committed to is an empty task (orchestrator layout and task start alike); undo touches nothing", async () => {
    const root = repo();
    write(root, "integration.txt", "main's last commit\n");
    commitAll(root, "main's last commit");
    sddAgent(root, "sess-empty-01", "T-empty-sdd");
    await start(root, "T-empty-own", "task/empty", join(tempDir(), "wt-empty"));
    for (const t of ["T-empty-sdd", "T-empty-own"]) {
      expect(await changes(root, t)).toEqual([]);
      const r = await undoTask(root, t);
      expect(r.partial).toBe(false);
      expect(r.items).toEqual([]);
    }
    expect(read(root, "integration.txt")).toBe("main's last commit\n");
  });

  it("negative control: one commit on that branch is the task's change, and only it", async () => {
    const root = repo();
    write(root, "integration.txt", "main's last commit\n");
    commitAll(root, "main's last commit");
    const wt = sddAgent(root, "sess-one-01", "T-one");
    write(wt, "a.txt", "a by the task\n");
    commitAll(wt, "task");
    expect(paths(await changes(root, "T-one"))).toEqual(["a.txt"]);
  });

  it("a commit cherry-picked from the integration branch into the task is not the task's; undo leaves it", async () => {
    const root = repo();
    const wt = join(tempDir(), "t-pick");
    await start(root, "T-pick", "task/pick", wt);
    write(root, "hotfix.txt", "hotfix on main\n");
    const fix = commitAll(root, "hotfix");
    git(wt, "cherry-pick", "-x", fix); // -x: a commit of its own (a plain pick within the same second can be the very same commit)
    write(wt, "a.txt", "a by the task\n");
    commitAll(wt, "task work");
    expect(paths(await changes(root, "T-pick"))).toEqual(["a.txt"]);
    git(root, "merge", "-q", "--no-ff", "-m", "merge T-pick", "task/pick");
    expect(paths(await changes(root, "T-pick"))).toEqual(["a.txt"]);
    expect((await undoTask(root, "T-pick")).partial).toBe(false);
    expect(read(root, "hotfix.txt")).toBe("hotfix on main\n");
    expect(read(root, "a.txt")).toBe("a0\n");
  });

  it("telling cherry-picks by patch id runs none of the person's diff programs (textconv), which git show -p would", async () => {
    const root = repo();
    const marker = join(tempDir(), "textconv-ran");
    git(root, "config", "diff.shout.textconv", `sh -c 'echo ran >> "${marker}"; tr a-z A-Z < "$0"'`);
    writeFileSync(join(root, ".git", "info", "attributes"), "*.txt diff=shout\n");
    const wt = join(tempDir(), "t-conv");
    await start(root, "T-conv", "task/conv", wt);
    write(root, "hotfix.txt", "hotfix on main\n");
    const fix = commitAll(root, "hotfix");
    git(wt, "cherry-pick", "-x", fix);
    write(wt, "a.txt", "a by the task\n");
    commitAll(wt, "task work");
    expect(paths(await changes(root, "T-conv"))).toEqual(["a.txt"]);
    expect(existsSync(marker)).toBe(false);
    // Control: the same repository's own `git show -p` runs it.
    git(root, "show", "-p", fix);
    expect(existsSync(marker)).toBe(true);
  });

  it("a task merged back twice (and synced between) still covers all its work since its fork", async () => {
    const root = repo();
    const wt = join(tempDir(), "t-twice");
    await start(root, "T-twice", "task/twice", wt);
    write(wt, "a.txt", "a1 first part\n");
    commitAll(wt, "part 1");
    git(root, "merge", "-q", "--no-ff", "-m", "merge part 1", "task/twice");
    write(root, "other.txt", "main's own work\n");
    commitAll(root, "main work");
    git(wt, "merge", "-q", "--no-ff", "-m", "sync main", "main");
    write(wt, "b.txt", "b1 second part\n");
    commitAll(wt, "part 2");
    git(root, "merge", "-q", "--no-ff", "-m", "merge part 2", "task/twice");
    const cs = await changes(root, "T-twice");
    expect(paths(cs)).toEqual(["a.txt", "b.txt"]);
    expect((await undoTask(root, "T-twice")).partial).toBe(false);
    expect(read(root, "a.txt")).toBe("a0\n");
    expect(read(root, "b.txt")).toBe("b0\n");
    expect(read(root, "other.txt")).toBe("main's own work\n");
  });

  it("a path the integration branch changed (through a sync) after the task did is a conflict, not taken back with it", async () => {
    const root = repo();
    const wt = join(tempDir(), "t-inter");
    await start(root, "T-inter", "task/inter", wt);
    write(wt, "a.txt", "a1 by the task\n");
    commitAll(wt, "task");
    write(root, "a.txt", "a1 by the task\nplus main's line\n");
    commitAll(root, "main edits the same file");
    git(wt, "merge", "-q", "-X", "theirs", "--no-ff", "-m", "sync", "main");
    git(root, "merge", "-q", "--no-ff", "-m", "merge", "task/inter");
    const r = await undoTask(root, "T-inter");
    expect(r.partial).toBe(true);
    expect(items(r)).toEqual([["a.txt", "conflict", "later-write"]]);
    expect(read(root, "a.txt")).toBe("a1 by the task\nplus main's line\n");
  });
});

describe("a branch task's worktree file over the size cap (review finding 9)", () => {
  it("is listed as toolarge, and undo refuses it (never a delete); a small file beside it is taken back", async () => {
    const root = repo();
    const wt = join(tempDir(), "t-big");
    await start(root, "T-big", "task/big", wt);
    write(wt, "big.bin", "x".repeat(2000));
    write(wt, "small.txt", "s\n");
    vi.stubEnv("UNWIND_SIZE_CAP", "1000");
    try {
      const cs = await (await open({ root })).changes({ task: "T-big" });
      expect(cs.entries.map((e) => [e.path, e.post?.kind])).toEqual([
        ["big.bin", "toolarge"],
        ["small.txt", "file"],
      ]);
      const r = await undoTask(wt, "T-big"); // opened in the task's worktree
      expect(items(r)).toEqual([
        ["big.bin", "conflict", "toolarge"],
        ["small.txt", "delete", null],
      ]);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(read(wt, "big.bin")).toHaveLength(2000);
  });
});

describe("a branch task and sessions of it in another worktree (SPEC section 6: several worktrees claim it)", () => {
  it("is refused (exit 3) naming the sessions, nothing written; control: a session of it in the task's own worktree is part of the branch's work", async () => {
    const root = repo();
    const wt = join(tempDir(), "t-wt");
    await start(root, "T-split", "task/split", wt);
    write(wt, "b.txt", "on the branch\n");
    commitAll(wt, "branch work");
    // Control first: the task's own worktree holds its session; the branch answers for it.
    claudeCallEnv(wt, "sess-in-wt", "Bash", { command: "edit c" }, () => write(wt, "c.txt", "in the worktree\n"), { UNWIND_TASK: "T-split" });
    expect((await changes(root, "T-split")).map((e) => e.path)).toEqual(["b.txt", "c.txt"]);
    // A session of the task in the main worktree: its change is in no branch.
    claudeCallEnv(root, "sess-in-main", "Bash", { command: "edit a" }, () => write(root, "a.txt", "agent in main\n"), { UNWIND_TASK: "T-split" });
    const u = await open({ root });
    for (const p of [u.changes({ task: "T-split" }), u.undo({ task: "T-split" })]) {
      const e = await rejection(p);
      expect([e.code, e.exit]).toEqual(["E_SCOPE_AMBIGUOUS", 3]);
      expect(e.message).toContain("claude:sess-in-main");
    }
    expect(read(root, "a.txt")).toBe("agent in main\n");
  });
});
