/**
 * `unwind baseline` and `unwind revert-check` as a process (SPEC section
 * 10): exit codes, the one JSON document, `--out`, what is left on disk,
 * the store lock while the suite runs, and bad input.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tryLock } from "../../src/store/lock.js";
import { BIN, dirFingerprint, disk, git, gitStatus, read, tempDir, treeState, unwind, write } from "../helpers.js";
import { agent, CALC_V2, FLOAT_TEST, FLOAT_TEST_REPAIRED, stageRepo, SUM_TEST } from "../stage-fixture.js";

/** The suite's interpreter: this Node, whatever PATH holds. */
const NODE = process.execPath;
const K = "story-19-implementer";

/** Everything of the user's a check must not touch: the work tree, index, HEAD, branches, receipt chain, and git's worktree list. */
function userState(root: string) {
  const store = join(root, ".git", "unwind");
  return {
    tree: treeState(root),
    status: gitStatus(root),
    index: dirFingerprint(join(root, ".git")).index,
    head: readFileSync(join(root, ".git", "HEAD"), "utf8"),
    refs: git(root, "for-each-ref", "refs/heads", "refs/tags"),
    receipts: dirFingerprint(join(store, "receipts")),
    worktrees: git(root, "worktree", "list", "--porcelain"),
    gitWorktreesDir: existsSync(join(root, ".git", "worktrees")),
  };
}

describe("unwind revert-check: one decision, one exit code, one JSON document", () => {
  it("permitted (0), not-permitted (1), no-edits (0), could not run (3); the result is kept in the store and written to --out", async () => {
    const root = stageRepo();
    expect(unwind(root, ["baseline", "capture", "--key", K, "--prefix", "tests"]).code).toBe(0);
    const out = join(tempDir(), "revert-check-result.json");
    const run = (key = K) => unwind(root, ["revert-check", "--json", "--key", key, "--prefix", "tests", "--out", out, "--", NODE, "test.js"]);

    const none = run();
    expect([none.code, none.json.decision, none.json.ran, none.json.edits]).toEqual([0, "no-edits", true, []]);

    agent(root, K).write("tests/sum.test.js", `${SUM_TEST}// more\n`);
    const not = run();
    expect([not.code, not.json.decision, not.json.testExitCode]).toEqual([1, "not-permitted", 0]);
    expect(JSON.parse(readFileSync(out, "utf8"))).toEqual(not.json);
    const kept = JSON.parse(readFileSync(join(root, ".git", "unwind", "revert-checks", `${not.json.id}.json`), "utf8"));
    expect(kept).toEqual(not.json);

    write(root, "src/calc.js", CALC_V2);
    write(root, "tests/float.test.js", FLOAT_TEST_REPAIRED);
    const yes = run();
    expect([yes.code, yes.json.decision, yes.json.testExitCode, yes.json.ran, yes.json.reason]).toEqual([0, "permitted", 1, true, null]);
    expect(yes.json.edits).toEqual([
      { path: "tests/float.test.js", change: "modified", action: "restore" },
      { path: "tests/sum.test.js", change: "modified", action: "restore" },
    ]);
    expect(Object.keys(yes.json)).toEqual([
      "id",
      "at",
      "key",
      "prefixes",
      "grants",
      "command",
      "ran",
      "reason",
      "message",
      "decision",
      "testExitCode",
      "edits",
      "granted",
      "durationMs",
      "suiteMs",
      "output",
      "worktree",
    ]);

    const missing = run("no-such-key");
    expect([missing.code, missing.json.ran, missing.json.reason, missing.json.decision]).toEqual([3, false, "no-baseline", null]);
    expect(JSON.parse(readFileSync(out, "utf8")).reason).toBe("no-baseline"); // a stale result never stays behind in --out

    const human = unwind(root, ["revert-check", "--key", K, "--prefix", "tests", "--", NODE, "test.js"]);
    expect(human.code).toBe(0);
    expect(human.stdout.split("\n")[0]).toBe("permitted: edits under tests were needed: the suite fails (exit 1) with tests/float.test.js, tests/sum.test.js reverted");
  });

  it("leaves the user's work tree, index, HEAD, branches and receipt chain as they were, and no worktree behind (unless --keep)", async () => {
    const root = stageRepo();
    unwind(root, ["baseline", "capture", "--key", K, "--prefix", "tests"]);
    agent(root, K).write("tests/float.test.js", FLOAT_TEST_REPAIRED);
    write(root, "src/calc.js", CALC_V2);
    write(root, "notes.txt", "untracked, not governed\n");
    git(root, "add", "src/calc.js"); // staged: the index holds something of the user's own
    const tmp = tempDir();
    const before = userState(root);
    const r = unwind(root, ["revert-check", "--json", "--key", K, "--prefix", "tests", "--", NODE, "test.js"], { env: { TMPDIR: tmp } });
    expect([r.code, r.json.decision]).toEqual([0, "permitted"]);
    expect(userState(root)).toEqual(before);
    expect(readdirSync(tmp)).toEqual([]);
    expect(read(root, "tests/float.test.js")).toBe(FLOAT_TEST_REPAIRED);

    // Negative controls: the same fingerprint sees a kept worktree, and an undo's receipt.
    const keep = unwind(root, ["revert-check", "--json", "--keep", "--key", K, "--prefix", "tests", "--", NODE, "test.js"], { env: { TMPDIR: tmp } });
    expect(keep.json.worktree.startsWith(tmp)).toBe(true);
    expect(read(keep.json.worktree, "tests/float.test.js")).toBe(FLOAT_TEST);
    expect(read(keep.json.worktree, "src/calc.js")).toBe(CALC_V2); // the staged and uncommitted change is there
    expect(read(keep.json.worktree, "notes.txt")).toBe("untracked, not governed\n");
    expect(userState(root).worktrees).not.toBe(before.worktrees);
    git(root, "worktree", "remove", "--force", keep.json.worktree);
    expect(userState(root)).toEqual(before);
    expect(unwind(root, ["undo", "--baseline", K]).code).toBe(0);
    expect(userState(root).receipts).not.toEqual(before.receipts);
  });

  it("does not hold the store lock while the suite runs", async () => {
    const root = stageRepo();
    unwind(root, ["baseline", "capture", "--key", K, "--prefix", "tests"]);
    write(root, "tests/sum.test.js", `${SUM_TEST}// more\n`);
    const probeOut = join(tempDir(), "probe.txt");
    // The suite takes a snapshot of the real work tree, which needs the store lock, and gives up after 300 ms.
    const probe = join(tempDir(), "probe.js");
    writeFileSync(
      probe,
      `const r = require("node:child_process").spawnSync(process.execPath, [${JSON.stringify(BIN)}, "snapshot", "--root", ${JSON.stringify(root)}], { env: { ...process.env, UNWIND_LOCK_TIMEOUT_MS: "300" }, encoding: "utf8" });
require("node:fs").writeFileSync(${JSON.stringify(probeOut)}, String(r.status));
process.exit(1);`,
    );
    const r = unwind(root, ["revert-check", "--json", "--key", K, "--prefix", "tests", "--", NODE, probe]);
    expect([r.code, r.json.decision]).toEqual([0, "permitted"]);
    expect(readFileSync(probeOut, "utf8")).toBe("0");
    // Negative control: the probe does notice a held lock.
    const held = tryLock(join(root, ".git", "unwind"), "test");
    if (!("release" in held)) throw new Error("could not take the lock");
    try {
      unwind(root, ["--version"]); // a process of ours, so the lock's owner is alive
      const direct = unwind(root, ["snapshot"], { env: { UNWIND_LOCK_TIMEOUT_MS: "300" } });
      expect(direct.code).toBe(1);
    } finally {
      held.release();
    }
  });

  it("--link puts an ignored directory into the worktree; without it the suite cannot find its dependency", async () => {
    const root = stageRepo({
      ".gitignore": "node_modules/\n",
      "tests/dep.test.js": 'require("leftpad"); console.log("dep ok");\n',
    });
    write(root, "node_modules/leftpad/index.js", "module.exports = (s) => s;\n");
    unwind(root, ["baseline", "capture", "--key", K, "--prefix", "tests"]);
    write(root, "tests/sum.test.js", `${SUM_TEST}// unneeded\n`);
    const linked = unwind(root, ["revert-check", "--json", "--key", K, "--prefix", "tests", "--link", "node_modules", "--", NODE, "test.js"]);
    expect([linked.code, linked.json.decision]).toEqual([1, "not-permitted"]);
    expect(existsSync(join(root, "node_modules", "leftpad", "index.js"))).toBe(true);
    // Negative control: without the link the suite fails for want of its dependency, which would read as "permitted".
    const bare = unwind(root, ["revert-check", "--json", "--key", K, "--prefix", "tests", "--", NODE, "test.js"]);
    expect([bare.code, bare.json.decision]).toEqual([0, "permitted"]);
    expect(bare.json.output).toContain("Cannot find module 'leftpad'");
  });

  it("prefixes and the suite's directory are relative to where it is run, as git's pathspecs are", async () => {
    const root = stageRepo();
    const tests = join(root, "tests");
    expect(unwind(tests, ["baseline", "capture", "--json", "--key", K, "--prefix", "."]).json).toMatchObject({ prefixes: ["tests"], paths: 2 });
    write(root, "tests/sum.test.js", `${SUM_TEST}// more\n`);
    const r = unwind(tests, ["revert-check", "--json", "--key", K, "--prefix", ".", "--", NODE, "sum.test.js"]);
    expect([r.code, r.json.decision, r.json.prefixes]).toEqual([1, "not-permitted", ["tests"]]);
    const ch = unwind(tests, ["changes", "--json", "--baseline", K, "--prefix", "."]);
    expect(ch.json.entries.map((e: { path: string }) => e.path)).toEqual(["tests/sum.test.js"]);
    const list = unwind(root, ["baseline", "list", "--json"]);
    expect(list.json).toMatchObject({ total: 1, baselines: [{ key: K, prefixes: ["tests"], paths: 2, captures: 1 }] });
  });

  it("outside git: baselines work, the check says it could not run (exit 3)", () => {
    const root = tempDir();
    write(root, "tests/a.test.js", "process.exit(0)\n");
    expect(unwind(root, ["baseline", "capture", "--key", K, "--prefix", "tests"]).code).toBe(0);
    write(root, "tests/a.test.js", "process.exit(0) // edited\n");
    const r = unwind(root, ["revert-check", "--json", "--key", K, "--prefix", "tests", "--", NODE, "tests/a.test.js"]);
    expect([r.code, r.json.ran, r.json.reason, r.json.decision]).toEqual([3, false, "not-a-git-repository", null]);
  });
});

describe("a check that cannot be made says why (exit 3) and cleans up", () => {
  const edited = () => {
    const root = stageRepo();
    unwind(root, ["baseline", "capture", "--key", K, "--prefix", "tests"]);
    write(root, "tests/float.test.js", FLOAT_TEST_REPAIRED);
    write(root, "src/calc.js", CALC_V2);
    return root;
  };
  const check = (root: string, tmp: string) => unwind(root, ["revert-check", "--json", "--key", K, "--prefix", "tests", "--", NODE, "test.js"], { env: { TMPDIR: tmp } });

  it("git cannot add the worktree: worktree-failed, never permitted", () => {
    const root = edited();
    writeFileSync(join(root, ".git", "worktrees"), "a file where git keeps its worktrees\n"); // a real failure of `git worktree add`
    const tmp = tempDir();
    const r = check(root, tmp);
    expect([r.code, r.json.ran, r.json.reason, r.json.decision]).toEqual([3, false, "worktree-failed", null]);
    expect(r.json.message).toMatch(/could not build the throwaway worktree/);
    expect(readdirSync(tmp)).toEqual([]);
    // Negative control: with git's directory free, the same check decides (and the edit was needed).
    git(root, "worktree", "prune");
    rmSync(join(root, ".git", "worktrees"));
    expect(check(root, tmp).json.decision).toBe("permitted");
  });

  it("a temporary directory inside the work tree, or none at all: worktree-failed, nothing made in the tree", () => {
    const root = edited();
    const before = treeState(root);
    const inside = check(root, join(root, "src"));
    expect([inside.code, inside.json.reason]).toEqual([3, "worktree-failed"]);
    expect(inside.json.message).toMatch(/inside the work tree/);
    expect(treeState(root)).toEqual(before);
    const gone = check(root, join(tempDir(), "no-such-dir"));
    expect([gone.code, gone.json.reason]).toEqual([3, "worktree-failed"]);
    expect(check(root, tempDir()).json.decision).toBe("permitted"); // control
  });

  it("told to stop while the suite runs: the suite's processes are ended, the worktree removed, ran false (interrupted)", async () => {
    const root = edited();
    const tmp = tempDir();
    const pidFile = join(tempDir(), "suite.pid");
    const suite = `require("node:fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setTimeout(() => {}, 60000);`;
    const child = spawn(process.execPath, [BIN, "revert-check", "--json", "--key", K, "--prefix", "tests", "--", NODE, "-e", suite], { cwd: root, env: { ...process.env, TMPDIR: tmp } });
    let stdout = "";
    child.stdout.on("data", (d) => (stdout += d));
    const closed = new Promise<number | null>((res) => child.on("close", (code) => res(code)));
    const deadline = Date.now() + 30_000;
    while (!existsSync(pidFile) || readFileSync(pidFile, "utf8") === "") {
      if (Date.now() > deadline) throw new Error("the suite never started");
      await new Promise((r) => setTimeout(r, 50));
    }
    const suitePid = Number(readFileSync(pidFile, "utf8"));
    expect(alive(suitePid)).toBe(true); // control: the probe sees it running
    child.kill("SIGTERM");
    expect(await closed).toBe(3);
    const r = JSON.parse(stdout);
    expect([r.ran, r.reason, r.decision]).toEqual([false, "interrupted", null]);
    expect(alive(suitePid)).toBe(false);
    expect(readdirSync(tmp)).toEqual([]);
    expect(git(root, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("bad input: one line naming what was wrong and what to do, exit 2, nothing changed", () => {
  it.each([
    ["no --key", ["revert-check", "--prefix", "tests", "--", NODE, "test.js"], /--key/],
    ["no --prefix", ["revert-check", "--key", K, "--", NODE, "test.js"], /needs at least one --prefix/],
    ["no command", ["revert-check", "--key", K, "--prefix", "tests"], /no test command given.*after --/],
    ["a key git would refuse", ["revert-check", "--key", "bad key", "--prefix", "tests", "--", NODE, "test.js"], /baseline key 'bad key' holds a space/],
    ["a bad timeout", ["revert-check", "--key", K, "--prefix", "tests", "--timeout", "soon", "--", NODE, "test.js"], /--timeout soon: expected a duration/],
    ["a missing --link", ["revert-check", "--key", K, "--prefix", "tests", "--link", "node_modules", "--", NODE, "test.js"], /--link node_modules: no such directory/],
    ["--out in a missing directory", ["revert-check", "--key", K, "--prefix", "tests", "--out", "nope/r.json", "--", NODE, "test.js"], /--out nope\/r.json: directory .* does not exist/],
    ["a prefix outside the work tree", ["revert-check", "--key", K, "--prefix", "../x", "--", NODE, "test.js"], /--prefix \.\.\/x is outside the work tree/],
    ["a grant outside the work tree", ["revert-check", "--key", K, "--prefix", "tests", "--grant", "../x", "--", NODE, "test.js"], /--grant \.\.\/x leaves the work tree/],
    ["capture without --prefix", ["baseline", "capture", "--key", K], /needs at least one --prefix/],
    ["capture of .git", ["baseline", "capture", "--key", K, "--prefix", ".git"], /inside \.git/],
    ["capture with a bad key", ["baseline", "capture", "--key", "a..b", "--prefix", "tests"], /baseline key 'a\.\.b' holds \.\./],
    ["--prefix without --baseline", ["changes", "--session", "abcdef", "--prefix", "tests"], /--prefix goes with --baseline/],
  ])("%s", (_what, args, message) => {
    const root = stageRepo();
    unwind(root, ["baseline", "capture", "--key", K, "--prefix", "tests"]);
    write(root, "tests/sum.test.js", `${SUM_TEST}// more\n`);
    const before = disk(root);
    const r = unwind(root, args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(disk(root)).toEqual(before);
  });
});
