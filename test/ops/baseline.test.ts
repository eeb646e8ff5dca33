/**
 * Stage baselines and the revert check (SPEC section 10) through the
 * library, in the style of the orchestrator whose story-019 they come from:
 * a real repository with a real small suite (`node test.js`), a tester
 * and an implementer editing it through the real hook, and the check run
 * for real in a throwaway worktree. Each decision is shown beside the
 * change that would turn it the other way.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { open, type RevertCheckResult } from "../../src/index.js";
import { tryLock } from "../../src/store/lock.js";
import { git, read, rejection, tempDir, write } from "../helpers.js";
import { agent, CALC_V1, CALC_V2, FLOAT_TEST, FLOAT_TEST_REPAIRED, stageRepo, SUM_TEST, testFile } from "../stage-fixture.js";

/** The suite's interpreter: this Node, whatever PATH holds. */
const NODE = process.execPath;
const K = "story-19-implementer";
const SUITE = [NODE, "test.js"];

async function check(root: string, o: Partial<Parameters<Awaited<ReturnType<typeof open>>["revertCheck"]>[0]> = {}): Promise<RevertCheckResult> {
  const u = await open({ root });
  return u.revertCheck({ key: K, prefixes: ["tests"], command: SUITE, ...o });
}

const decided = (r: RevertCheckResult) => ({ ran: r.ran, decision: r.decision, reason: r.reason });
const edits = (r: RevertCheckResult) => r.edits.map((e) => [e.path, e.action]);

/** The stage starts: its baseline is what it finds under tests/. */
async function startStage(root: string, key = K): Promise<void> {
  await (await open({ root })).baselineCapture(key, { prefixes: ["tests"] });
}

describe("the revert check decides whether edits under the prefix were needed", () => {
  it("a forced repair is permitted: with the test reverted, the suite fails against the new code", async () => {
    const root = stageRepo();
    await startStage(root);
    const impl = agent(root, K);
    impl.write("src/calc.js", CALC_V2);
    impl.write("tests/float.test.js", FLOAT_TEST_REPAIRED);

    const r = await check(root);
    expect(decided(r)).toEqual({ ran: true, decision: "permitted", reason: null });
    expect(r.testExitCode).toBe(1);
    expect(edits(r)).toEqual([["tests/float.test.js", "restore"]]);
    expect(r.output).toContain("FAIL float.test.js");
    // Negative control: the same edit without the change that forced it is not needed.
    write(root, "src/calc.js", CALC_V1);
    write(root, "tests/float.test.js", FLOAT_TEST);
    write(root, "tests/float.test.js", FLOAT_TEST_REPAIRED.replace("=== 0.3", "!== 0.4"));
    expect(decided(await check(root))).toEqual({ ran: true, decision: "not-permitted", reason: null });
  });

  it("added coverage the suite does not need is not permitted", async () => {
    const root = stageRepo();
    await startStage(root);
    agent(root, K).write("tests/sum.test.js", SUM_TEST + 'check("empty", total([]) === 0);\n');

    const r = await check(root);
    expect(decided(r)).toEqual({ ran: true, decision: "not-permitted", reason: null });
    expect(r.testExitCode).toBe(0);
    expect(edits(r)).toEqual([["tests/sum.test.js", "restore"]]);
  });

  it("deleting a broken test is permitted; deleting a passing one is not", async () => {
    const broken = stageRepo();
    await startStage(broken);
    const a = agent(broken, K);
    a.write("src/calc.js", CALC_V2);
    a.remove("tests/float.test.js"); // broken by the rounding
    const r1 = await check(broken);
    expect(decided(r1)).toEqual({ ran: true, decision: "permitted", reason: null });
    expect(r1.edits.map((e) => [e.path, e.change, e.action])).toEqual([["tests/float.test.js", "deleted", "restore"]]);

    const passing = stageRepo();
    await startStage(passing);
    agent(passing, K).remove("tests/sum.test.js");
    const r2 = await check(passing);
    expect(decided(r2)).toEqual({ ran: true, decision: "not-permitted", reason: null });
    expect(edits(r2)).toEqual([["tests/sum.test.js", "restore"]]);
  });

  it("a test the tester created this run, edited by the implementer on retry, goes back to the tester's content, not to HEAD (the story's bug)", async () => {
    const root = stageRepo();
    // Before the tester: a baseline of the wrong moment, for the control below.
    await startStage(root, "too-early");
    // The tester's stage writes a test with a defect (1.005 is 1.00499… in binary floating point: it rounds to 1). Nothing is committed.
    const ROUND = testFile('check("rounds", total([0.1, 0.2]) === 0.3);\ncheck("cents", total([1.005]) === 1.01);');
    agent(root, "story-19-tester").write("tests/round.test.js", ROUND);
    await startStage(root);
    const impl = agent(root, K);
    impl.write("src/calc.js", CALC_V2);
    impl.write("tests/float.test.js", FLOAT_TEST_REPAIRED);
    // Retry: the clean-clone run failed on the tester's defect, and the implementer is sent to fix it.
    impl.write("tests/round.test.js", testFile('check("rounds", total([0.1, 0.2]) === 0.3);'));

    vi.stubEnv("TMPDIR", tempDir()); // the kept worktree goes where the test's own temporary directories are cleaned up
    const r = await check(root, { grants: ["tests/float.test.js"], keep: true });
    vi.unstubAllEnvs();
    expect(decided(r)).toEqual({ ran: true, decision: "permitted", reason: null });
    expect(edits(r)).toEqual([["tests/round.test.js", "restore"]]);
    expect(r.granted.map((g) => g.path)).toEqual(["tests/float.test.js"]);
    expect(readFileSync(join(r.worktree!, "tests/round.test.js"), "utf8")).toBe(ROUND);
    expect(r.output).toContain("not ok: cents");
    // HEAD has no version of it: the old `git checkout HEAD -- tests/round.test.js` could not run at all.
    expect(() => git(root, "cat-file", "-e", "HEAD:tests/round.test.js")).toThrow();
    // Negative control: against a baseline from before the tester, the file is not the stage's to keep: deleted, the suite passes.
    const early = await check(root, { key: "too-early", grants: ["tests/float.test.js"] });
    expect(decided(early)).toEqual({ ran: true, decision: "not-permitted", reason: null });
    expect(edits(early)).toEqual([["tests/round.test.js", "delete"]]);
    git(root, "worktree", "remove", "--force", r.worktree!);
  });

  it("a path absent from the baseline is deleted in the worktree; skipping it would turn the decision around", async () => {
    const FIXTURE_TEST = testFile('const f = require("./fixture.json");\ncheck("fixture", total(f.xs) === f.sum);');
    const root = stageRepo({ "tests/fixture.json": '{"xs":[1,2,3],"sum":6}\n', "tests/fixture.test.js": FIXTURE_TEST });
    await startStage(root);
    const impl = agent(root, K);
    impl.write("tests/fixture.json", '{"xs":[1,2],"sum":3}\n');
    impl.write("tests/extra.test.js", testFile('check("two", require("./fixture.json").xs.length === 2);'));

    const r = await check(root);
    expect(edits(r)).toEqual([
      ["tests/extra.test.js", "delete"],
      ["tests/fixture.json", "restore"],
    ]);
    expect(decided(r)).toEqual({ ran: true, decision: "not-permitted", reason: null });
    // Negative control: leave the added test in place (a grant skips it) and it fails against the reverted fixture.
    const skipped = await check(root, { grants: ["tests/extra.test.js"] });
    expect(edits(skipped)).toEqual([["tests/fixture.json", "restore"]]);
    expect(decided(skipped)).toEqual({ ran: true, decision: "permitted", reason: null });
  });
});

describe("baselines: first seen wins", () => {
  it("re-capture never overwrites a path, and does not admit the stage's own new files; others' new files are admitted", async () => {
    const root = stageRepo();
    const u = await open({ root });
    const first = await u.baselineCapture(K, { prefixes: ["tests"] });
    expect(first).toMatchObject({ key: K, prefixes: ["tests"], created: true, added: 2, kept: 0, excluded: [], paths: 2 });

    const impl = agent(root, K);
    impl.write("tests/sum.test.js", SUM_TEST + "// edited by the implementer\n");
    impl.write("tests/mine.test.js", testFile('check("mine", true);'));
    write(root, "tests/person.test.js", testFile('check("a person\'s", true);')); // no session: a person between attempts

    const again = await (await open({ root })).baselineCapture(K, { prefixes: ["tests"] });
    expect(again).toMatchObject({ created: false, added: 1, kept: 2, excluded: [{ path: "tests/mine.test.js" }], paths: 3 });
    const cs = await (await open({ root })).changes({ baseline: K });
    expect(cs.entries.map((e) => [e.path, e.change])).toEqual([
      ["tests/mine.test.js", "added"],
      ["tests/sum.test.js", "modified"],
    ]);
    const sum = cs.entries.find((e) => e.path === "tests/sum.test.js")!;
    expect(sum.pre?.sha256).toBe(sha256(SUM_TEST));
    // Negative control: a capture under a fresh key sees the edits as they are now, so one that re-captured would have taken them.
    const fresh = await (await open({ root })).baselineCapture("fresh", { prefixes: ["tests"] });
    expect(fresh).toMatchObject({ added: 4, excluded: [] });
    expect((await (await open({ root })).changes({ baseline: "fresh" })).entries).toEqual([]);
  });

  it("a file that existed before the stage touched it, first seen by a later capture, is captured as it was before the stage's first write", async () => {
    const root = stageRepo({ "docs/guide.md": "# Guide\n" });
    await startStage(root); // tests/ only
    const impl = agent(root, K);
    impl.write("docs/guide.md", "# Guide\nrewritten by the stage\n");
    impl.write("docs/new.md", "the stage's own\n");
    const r = await (await open({ root })).baselineCapture(K, { prefixes: ["docs"] });
    expect(r).toMatchObject({ prefixes: ["tests", "docs"], added: 1, excluded: [{ path: "docs/new.md" }] });
    const cs = await (await open({ root })).changes({ baseline: K }, { prefixes: ["docs"] });
    expect(cs.entries.map((e) => [e.path, e.change, e.pre?.sha256 ?? null])).toEqual([
      ["docs/guide.md", "modified", sha256("# Guide\n")],
      ["docs/new.md", "added", null],
    ]);
    // Negative control: what a person wrote (no session labelled with the task) is captured as it is now.
    write(root, "docs/person.md", "a person's\n");
    expect(await (await open({ root })).baselineCapture(K, { prefixes: ["docs"] })).toMatchObject({ added: 1, excluded: [{ path: "docs/new.md" }] });
    expect((await (await open({ root })).changes({ baseline: K })).entries.map((e) => e.path)).toEqual(["docs/guide.md", "docs/new.md"]);
  });

  it("a resumed stage decides against the stored baseline, not one captured over its own work", async () => {
    const root = stageRepo();
    await startStage(root);
    const attempt1 = agent(root, K, "attempt-1");
    attempt1.write("tests/sum.test.js", SUM_TEST + 'check("empty", total([]) === 0);\n');
    attempt1.write("tests/empty.test.js", testFile('check("empty", total([]) === 0);'));
    // Interrupted. The coordinator resumes the stage and, as at every stage start, captures the baseline: kept as it was.
    await startStage(root);
    agent(root, K, "attempt-2").write("tests/sum.test.js", SUM_TEST + 'check("empty", total([]) === 0);\ncheck("one", total([1]) === 1);\n');

    const r = await check(root);
    expect(edits(r)).toEqual([
      ["tests/empty.test.js", "delete"],
      ["tests/sum.test.js", "restore"],
    ]);
    expect(decided(r)).toEqual({ ran: true, decision: "not-permitted", reason: null });
    // Negative control: a baseline captured at the resume holds the attempt's own work, and the check finds nothing to judge.
    await startStage(root, "captured-at-resume");
    const wrong = await check(root, { key: "captured-at-resume" });
    expect(decided(wrong)).toEqual({ ran: true, decision: "no-edits", reason: null });
  });

  it("a baseline exists, and says so, when its prefix holds no files", async () => {
    const root = stageRepo();
    const u = await open({ root });
    expect(await u.baselineCapture("empty", { prefixes: ["spec"] })).toMatchObject({ created: true, paths: 0, prefixes: ["spec"] });
    expect((await u.baselines()).baselines.map((b) => [b.key, b.paths, b.prefixes])).toEqual([["empty", 0, ["spec"]]]);
    agent(root, "empty").write("spec/new.spec.js", "x\n");
    const r = await u.revertCheck({ key: "empty", prefixes: ["spec"], command: [NODE, "-e", "process.exit(require('fs').existsSync('spec/new.spec.js') ? 0 : 1)"] });
    // Absent from the (empty) baseline: deleted in the worktree, so the suite that needs it fails.
    expect(decided(r)).toEqual({ ran: true, decision: "permitted", reason: null });
    expect(edits(r)).toEqual([["spec/new.spec.js", "delete"]]);
  });
});

describe("the check never permits what it could not establish", () => {
  it("no baseline: ran false, the cause named; with one, it decides", async () => {
    const root = stageRepo();
    agent(root, K).write("tests/sum.test.js", SUM_TEST + "// x\n");
    const r = await check(root);
    expect(decided(r)).toEqual({ ran: false, decision: null, reason: "no-baseline" });
    expect(r.message).toContain(`no baseline '${K}'`);
    expect(r.testExitCode).toBeNull();
    await startStage(root);
    write(root, "tests/sum.test.js", `${SUM_TEST}// y\n`);
    expect(decided(await check(root))).toEqual({ ran: true, decision: "not-permitted", reason: null });
  });

  it("a prefix the baseline does not cover is no baseline for it", async () => {
    const root = stageRepo();
    await startStage(root);
    write(root, "src/calc.js", CALC_V2);
    const r = await check(root, { prefixes: ["src"] });
    expect(decided(r)).toEqual({ ran: false, decision: null, reason: "no-baseline" });
    expect(r.message).toContain("does not cover 'src'");
    expect(read(root, "src/calc.js")).toBe(CALC_V2);
  });

  it("a suite that cannot be found, that a shell cannot find, or that runs too long decides nothing", async () => {
    const root = stageRepo();
    await startStage(root);
    agent(root, K).write("tests/float.test.js", FLOAT_TEST_REPAIRED);
    const missing = await check(root, { command: ["no-such-test-runner-xyz"] });
    expect(decided(missing)).toEqual({ ran: false, decision: null, reason: "command-not-found" });
    const shell = await check(root, { command: ["sh", "-c", "no-such-test-runner-xyz"] });
    expect(decided(shell)).toEqual({ ran: false, decision: null, reason: "command-not-found" });
    expect(shell.testExitCode).toBe(127);
    const slow = await check(root, { command: [NODE, "-e", "setTimeout(() => process.exit(1), 20000)"], timeout: "1s" });
    expect(decided(slow)).toEqual({ ran: false, decision: null, reason: "timeout" });
    expect(slow.durationMs).toBeLessThan(15000);
    // Negative control: the same suite exiting 1 in time is a failure, so permitted.
    expect(decided(await check(root, { command: [NODE, "-e", "process.exit(1)"] }))).toEqual({ ran: true, decision: "permitted", reason: null });
  });

  it("an edit that cannot be reverted (its baseline over the size cap, bytes never kept) is never skipped: no decision", async () => {
    const root = stageRepo({ "tests/big.txt": "x".repeat(4000) });
    vi.stubEnv("UNWIND_SIZE_CAP", "1000");
    try {
      await startStage(root);
      write(root, "tests/big.txt", "y".repeat(4000));
      const r = await check(root);
      expect(decided(r)).toEqual({ ran: false, decision: null, reason: "revert-failed" });
      expect(r.message).toContain("tests/big.txt");
    } finally {
      vi.unstubAllEnvs();
    }
    // Negative control: under the cap its bytes are kept, and the check decides.
    const small = stageRepo({ "tests/big.txt": "x".repeat(4000) });
    await startStage(small);
    write(small, "tests/big.txt", "y".repeat(4000));
    expect(decided(await check(small))).toEqual({ ran: true, decision: "not-permitted", reason: null });
  });

  it("a folder without git has baselines but no worktree to check in: ran false", async () => {
    const root = tempDir();
    write(root, "tests/a.test.js", "process.exit(0)\n");
    const u = await open({ root });
    await u.baselineCapture(K, { prefixes: ["tests"] });
    write(root, "tests/a.test.js", "process.exit(0) // edited\n");
    expect((await u.changes({ baseline: K })).entries.map((e) => e.path)).toEqual(["tests/a.test.js"]);
    const r = await u.revertCheck({ key: K, prefixes: ["tests"], command: [NODE, "tests/a.test.js"] });
    expect(decided(r)).toEqual({ ran: false, decision: null, reason: "not-a-git-repository" });
  });
});

describe("baselines in the store", () => {
  it("capture waits for the store lock like every writer, and gives up without creating anything", async () => {
    const root = stageRepo();
    const u = await open({ root });
    await u.snapshot(); // the store exists
    const held = tryLock(u.store, "test");
    if (!("release" in held)) throw new Error("could not take the lock");
    vi.stubEnv("UNWIND_LOCK_TIMEOUT_MS", "300");
    try {
      expect(await rejection(u.baselineCapture(K, { prefixes: ["tests"] }))).toMatchObject({ code: "E_LOCKED", exit: 1 });
      expect((await u.baselines()).total).toBe(0);
    } finally {
      held.release();
      vi.unstubAllEnvs();
    }
    expect((await u.baselineCapture(K, { prefixes: ["tests"] })).paths).toBe(2); // control: free, it captures
  });

  it("gc keeps the bytes a live baseline names, however old the blobs; a baseline past the TTL goes with them", async () => {
    const root = stageRepo();
    await startStage(root);
    const u = await open({ root });
    const blob = join(u.store, "cas", "sha256", sha256(SUM_TEST).slice(0, 2), sha256(SUM_TEST).slice(2));
    const old = new Date(Date.now() - 40 * 86400e3);
    utimesSync(blob, old, old);
    const kept = await u.gc();
    expect(kept).toMatchObject({ baselines: 0, blobs: 0 });
    expect(existsSync(blob)).toBe(true);
    expect((await u.verify()).ok).toBe(true);
    write(root, "tests/sum.test.js", `${SUM_TEST}// more\n`);
    expect((await u.plan({ baseline: K })).items.map((i) => [i.path, i.action, i.reason])).toEqual([["tests/sum.test.js", "restore", null]]);
    // Negative control: forty days on, the baseline's last capture is past the TTL: it is dropped, and its bytes with it.
    vi.stubEnv("UNWIND_NOW", new Date(Date.now() + 40 * 86400e3).toISOString());
    try {
      expect(await u.gc()).toMatchObject({ baselines: 1 });
    } finally {
      vi.unstubAllEnvs();
    }
    expect(existsSync(blob)).toBe(false);
    expect((await u.baselines()).total).toBe(0);
  });

  it("verify names a baseline whose bytes are gone", async () => {
    const root = stageRepo();
    await startStage(root);
    const u = await open({ root });
    expect((await u.verify()).ok).toBe(true); // control
    rmSync(join(u.store, "cas", "sha256", sha256(SUM_TEST).slice(0, 2), sha256(SUM_TEST).slice(2)));
    const v = await u.verify();
    expect(v.ok).toBe(false);
    expect(v.problems).toContainEqual({ kind: "baseline", id: K, message: `baseline ${K}: content of tests/sum.test.js is missing` });
  });

  it("a baseline file that does not parse is damage (exit 4), never an empty baseline", async () => {
    const root = stageRepo();
    await startStage(root);
    const u = await open({ root });
    const [file] = readdirSync(join(u.store, "baselines"));
    writeFileSync(join(u.store, "baselines", file!), "{ torn");
    expect((await u.verify()).problems.map((p) => p.kind)).toEqual(["baseline"]);
    expect(await rejection(u.changes({ baseline: K }))).toMatchObject({ code: "E_STORE_DAMAGED", exit: 4 });
    expect(await rejection(u.revertCheck({ key: K, prefixes: ["tests"], command: SUITE }))).toMatchObject({ code: "E_STORE_DAMAGED", exit: 4 });
    expect(await rejection(u.baselineCapture(K, { prefixes: ["tests"] }))).toMatchObject({ code: "E_STORE_DAMAGED", exit: 4 });
  });
});

describe("undo --baseline: the one engine", () => {
  it("takes governed paths back to the baseline and deletes what it lacks, with a receipt, a redo, a dry run and a digest", async () => {
    const root = stageRepo();
    await startStage(root);
    const impl = agent(root, K);
    impl.write("src/calc.js", CALC_V2);
    impl.write("tests/float.test.js", FLOAT_TEST_REPAIRED);
    impl.write("tests/new.test.js", testFile('check("new", true);'));
    const u = await open({ root });
    const p = await u.plan({ baseline: K });
    expect(p.items.map((i) => [i.path, i.action])).toEqual([
      ["tests/float.test.js", "restore"],
      ["tests/new.test.js", "delete"],
    ]);
    expect(p.receipt).toBeNull();
    expect(read(root, "tests/float.test.js")).toBe(FLOAT_TEST_REPAIRED);
    write(root, "tests/sum.test.js", SUM_TEST + "// a person, after the preview\n");
    const stale = await rejection(u.undo({ baseline: K }, { expect: p.plan }));
    expect(stale.code).toBe("E_PLAN_CHANGED");
    expect(read(root, "tests/float.test.js")).toBe(FLOAT_TEST_REPAIRED);

    const r = await u.undo({ baseline: K }, { paths: ["tests/*.test.js"] });
    expect(r.receipt).toMatch(/^r-/);
    expect(read(root, "tests/float.test.js")).toBe(FLOAT_TEST);
    expect(read(root, "tests/sum.test.js")).toBe(SUM_TEST); // the person's line too: it is governed, and the receipt keeps it
    expect(existsSync(join(root, "tests/new.test.js"))).toBe(false);
    expect(read(root, "src/calc.js")).toBe(CALC_V2); // not governed
    await u.redo(r.receipt!);
    expect(read(root, "tests/float.test.js")).toBe(FLOAT_TEST_REPAIRED);
    expect(existsSync(join(root, "tests/new.test.js"))).toBe(true);
  });

  it("refuses what it cannot resolve: an unknown key (exit 3), a bad key, --prefix without --baseline, --since with it (usage)", async () => {
    const root = stageRepo();
    const u = await open({ root });
    expect(await rejection(u.changes({ baseline: "nope" }))).toMatchObject({ code: "E_SCOPE_UNKNOWN", exit: 3 });
    expect(await rejection(u.changes({ baseline: "bad key" }))).toMatchObject({ code: "E_USAGE", exit: 2 });
    expect(await rejection(u.changes({ session: "x" }, { prefixes: ["tests"] }))).toMatchObject({ code: "E_USAGE", exit: 2 });
    await startStage(root);
    expect(await rejection(u.undo({ baseline: K }, { since: "2h" }))).toMatchObject({ code: "E_USAGE", exit: 2 });
    expect(await rejection(u.changes({ baseline: K }, { prefixes: ["src"] }))).toMatchObject({ code: "E_SCOPE_UNKNOWN", exit: 3 });
    expect(await rejection(u.changes({ baseline: K }, { paths: ["tests/nothing*"] }))).toMatchObject({ code: "E_USAGE", exit: 2 });
  });
});

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

describe("a baseline belongs to the work tree it was captured in", () => {
  it("undo --baseline from another worktree is refused (exit 3), its files untouched; --any-worktree writes it there; the same undo where it was captured applies", async () => {
    const root = tempDir();
    git(root, "init", "-q", "-b", "main");
    write(root, "tests/t.sh", "v1\n");
    git(root, "add", "-A");
    git(root, "commit", "-q", "-m", "init");
    const wt = join(tempDir(), "wt");
    git(root, "worktree", "add", "-q", wt, "-b", "feat");
    write(wt, "tests/t.sh", "wt-version\n");
    await (await open({ root: wt })).baselineCapture("K", { prefixes: ["tests"] });
    write(root, "tests/t.sh", "main-human-edit\n");
    write(root, "tests/m.sh", "mainnew\n");
    const main = await open({ root });
    const e = await rejection(main.undo({ baseline: "K" }));
    expect([e.code, e.exit]).toEqual(["E_SCOPE_OTHER_WORKTREE", 3]);
    expect(read(root, "tests/t.sh")).toBe("main-human-edit\n");
    expect(read(root, "tests/m.sh")).toBe("mainnew\n");
    // Reading it here is harmless.
    expect((await main.changes({ baseline: "K" })).entries.length).toBeGreaterThan(0);
    // Where it was captured, the same undo applies.
    write(wt, "tests/t.sh", "agent\n");
    expect((await (await open({ root: wt })).undo({ baseline: "K" })).partial).toBe(false);
    expect(read(wt, "tests/t.sh")).toBe("wt-version\n");
    // Asked for, it writes here.
    await main.undo({ baseline: "K" }, { anyWorktree: true });
    expect(read(root, "tests/t.sh")).toBe("wt-version\n");
  });
});
