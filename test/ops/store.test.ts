import { createHash } from "node:crypto";
import { chmodSync, existsSync, readdirSync, readFileSync, realpathSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { deflateSync } from "node:zlib";
import { describe, expect, it, vi } from "vitest";
import { open } from "../../src/index.js";
import { git, makeRepo, read, tempDir, treeState, write } from "../helpers.js";

/*
 * verify, status, gc and stack through the library. The exit codes verify
 * gives the process, and stack pushes racing across processes, are in
 * test/e2e/store.test.ts.
 */

function casFiles(root: string): string[] {
  const dir = join(root, ".git", "unwind", "cas", "sha256");
  return readdirSync(dir).flatMap((d) => readdirSync(join(dir, d)).map((f) => join(dir, d, f)));
}

/** A repo with one restore applied, so the store holds blobs and a receipt. */
async function withReceipt() {
  const root = makeRepo({ "a.txt": "original\n" });
  const u = await open({ root });
  const id = (await u.snapshot()).id;
  write(root, "a.txt", "agent wrote this\n");
  const r = await u.restore(id);
  expect(r.partial).toBe(false);
  return { root, id, receipt: r.receipt!, u };
}

/** Runs `fn` with UNWIND_NOW set: the time gc measures ages against. */
async function at<T>(when: string, fn: () => Promise<T>): Promise<T> {
  vi.stubEnv("UNWIND_NOW", when);
  try {
    return await fn();
  } finally {
    vi.unstubAllEnvs();
  }
}

describe("verify", () => {
  it("passes on an intact store (negative control for the damage cases)", async () => {
    const { u } = await withReceipt();
    const v = await u.verify();
    expect(v).toMatchObject({ ok: true, problems: [], receipts: 1, snapshots: 1 });
  });

  it("a tampered blob exits 4, naming it; redo then refuses to write it (when git has no copy either)", async () => {
    const { root, receipt, u } = await withReceipt();
    const [blob] = casFiles(root);
    chmodSync(blob!, 0o644);
    writeFileSync(blob!, deflateSync(Buffer.from("evil\n")));
    const v = await u.verify();
    expect(v.ok).toBe(false); // the command exits 4
    expect(v.problems.map((p) => p.message).join("\n")).toMatch(/fails its SHA-256 check/);
    // git also holds these bytes (the restore snapshotted the tree first); remove that copy too.
    const agentOid = require("node:child_process").execFileSync("git", ["hash-object", "--stdin"], { input: "agent wrote this\n", encoding: "utf8" }).trim();
    unlinkSync(join(root, ".git", "objects", agentOid.slice(0, 2), agentOid.slice(2)));
    const r = await u.redo(receipt);
    expect(r.items[0]).toMatchObject({ path: "a.txt", action: "conflict", reason: "hash-mismatch" });
    expect(read(root, "a.txt")).toBe("original\n");
  });

  it("a receipt's bytes missing from the CAS are fine while git holds them, reported once neither does", async () => {
    const { root, receipt, u } = await withReceipt();
    for (const f of casFiles(root)) unlinkSync(f);
    expect(await u.verify()).toMatchObject({ ok: true, problems: [] }); // git holds them (the restore snapshotted the tree first)
    const agentOid = require("node:child_process").execFileSync("git", ["hash-object", "--stdin"], { input: "agent wrote this\n", encoding: "utf8" }).trim();
    const loose = join(root, ".git", "objects", agentOid.slice(0, 2), agentOid.slice(2));
    const copy = readFileSync(loose);
    unlinkSync(loose);
    const v = await u.verify();
    expect(v.ok).toBe(false); // the command exits 4
    expect(v.problems.map((p) => p.message).join("\n")).toMatch(/before the apply .* is missing/);
    writeFileSync(loose, copy);
    expect((await u.redo(receipt)).partial).toBe(false);
    expect(read(root, "a.txt")).toBe("agent wrote this\n");
  });

  it("content missing everywhere makes restore refuse with missing-blob", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    write(root, "only-in-snapshot.txt", "unique content 12345\n");
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    const oid = git(root, "hash-object", "only-in-snapshot.txt").trim();
    unlinkSync(join(root, ".git", "objects", oid.slice(0, 2), oid.slice(2)));
    unlinkSync(join(root, "only-in-snapshot.txt"));
    const r = await u.restore(id);
    expect(r.items).toMatchObject([{ path: "only-in-snapshot.txt", action: "conflict", reason: "missing-blob" }]);
    expect(r.partial).toBe(true);
  });

  it("an altered receipt breaks the chain: exit 4", async () => {
    const { root, receipt, u } = await withReceipt();
    const file = join(root, ".git", "unwind", "receipts", `${receipt}.json`);
    writeFileSync(file, readFileSync(file, "utf8").replace('"restore"', '"delete"'));
    const v = await u.verify();
    expect(v.ok).toBe(false); // the command exits 4
    expect(v.problems[0]!.message).toContain(`receipt ${receipt} was altered`);
  });

  it("a deleted receipt in the middle of the chain is reported", async () => {
    const { root, id, receipt, u } = await withReceipt();
    write(root, "a.txt", "again\n");
    expect((await u.restore(id)).partial).toBe(false);
    unlinkSync(join(root, ".git", "unwind", "receipts", `${receipt}.json`));
    const v = await u.verify();
    expect(v.ok).toBe(false); // the command exits 4
    expect(v.problems[0]!.message).toContain(`receipt ${receipt} is missing`);
  });
});

describe("status", () => {
  it("reports the store, snapshots and receipts", async () => {
    const { root, u } = await withReceipt();
    const s = await u.status();
    expect(s).toMatchObject({ exists: true, snapshots: 1, receipts: 1, mode: "git" });
    expect(s.bytes).toBeGreaterThan(0);
    expect(s.store).toBe(join(root, ".git", "unwind"));
  });
});

describe("gc", () => {
  it("drops old snapshots, receipts and blobs; a dry run drops nothing", async () => {
    const { root, u } = await withReceipt();
    const old = (await u.snapshot({ label: "old" })).id;
    expect(await u.gc({ ttl: "1d" })).toMatchObject({ snapshots: 0, receipts: 0, blobs: 0 });

    // Two days from now, all of it is past a one-day TTL.
    const store = join(root, ".git", "unwind");
    const later = new Date(Date.now() + 2 * 86400e3).toISOString();
    const before = treeState(store);
    const dry = await at(later, () => u.gc({ ttl: "1d", dryRun: true }));
    expect(dry).toMatchObject({ dryRun: true, receipts: 1 });
    expect(dry.blobs).toBeGreaterThan(0);
    expect(treeState(store)).toEqual(before);

    const real = await at(later, () => u.gc({ ttl: "1d" }));
    expect(real).toMatchObject({ dryRun: false, receipts: 1, snapshots: 2 });
    expect(casFiles(root)).toEqual([]);
    // The chain still verifies: BASE records where it now starts.
    expect((await u.verify()).ok).toBe(true);
    expect((await u.snapshots()).snapshots.map((s) => s.id)).not.toContain(old);
  });

  it("keeps blobs a live receipt needs, whatever their age", async () => {
    const { root, receipt, u } = await withReceipt();
    const past = new Date("2000-01-01T00:00:00Z");
    for (const f of casFiles(root)) utimesSync(f, past, past);
    const r = await u.gc({ ttl: "1d" });
    expect(r.blobs).toBe(0);
    expect(r.receipts).toBe(0);
    // Negative control: once the receipt itself is past the TTL, its blobs go too.
    const later = await at("2100-01-01T00:00:00Z", () => u.gc({ ttl: "1d", dryRun: true }));
    expect(later.blobs).toBeGreaterThan(0);
    expect((await u.redo(receipt)).partial).toBe(false);
    expect(read(root, "a.txt")).toBe("agent wrote this\n");
  });
});

/*
 * An apply keeps what each path held so its receipt can bring it back. What
 * the repository's object store already holds (here: the tree a restore
 * writes of the work tree first) stays there for a batch of paths, under a
 * ref of the receipt's own that gc drops with the receipt.
 */
describe("what an apply keeps, and where", () => {
  const files = (n: number, text: string) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`d/f${i}.txt`, `${text} ${i}\n`]));
  async function restored(n: number, setUp: (root: string) => void = () => {}) {
    const root = makeRepo(files(n, "original"));
    setUp(root);
    const u = await open({ root });
    const snap = await u.snapshot();
    for (const [p, text] of Object.entries(files(n, "agent"))) write(root, p, text);
    await new Promise((r) => setTimeout(r, 50)); // the receipt is measurably younger than every snapshot
    const r = await u.restore(snap.id);
    expect(r.counts.restore).toBe(n);
    // The agent's bytes in the CAS (a snapshot may put other blobs there: its ignore rules).
    const cas = Array.from({ length: n }, (_, i) => createHash("sha256").update(`agent ${i}\n`).digest("hex")).filter((sha) =>
      existsSync(join(root, ".git", "unwind", "cas", "sha256", sha.slice(0, 2), sha.slice(2))),
    ).length;
    return { root, u, receipt: r.receipt!, cas };
  }
  const keptRefs = (root: string) => git(root, "for-each-ref", "--format=%(refname)", "refs/unwind/kept/").trim();
  const agentOid = (i: number) =>
    require("node:child_process")
      .execFileSync("git", ["hash-object", "--stdin"], { input: `agent ${i}\n`, encoding: "utf8" })
      .trim();

  it("a batch of paths whose bytes git holds: none copied into the CAS; redo brings them back from git", async () => {
    const { root, u, receipt, cas } = await restored(40);
    expect(cas).toBe(0);
    expect(keptRefs(root)).toBe(`refs/unwind/kept/${receipt}`);
    expect((await u.verify()).ok).toBe(true);
    expect((await u.redo(receipt)).counts.restore).toBe(40);
    expect(read(root, "d/f7.txt")).toBe("agent 7\n");
  });

  it("controls: a few paths, or objects borrowed through alternates, go into the CAS", async () => {
    const few = await restored(5);
    expect(few.cas).toBe(5);
    expect(keptRefs(few.root)).toBe("");
    const borrowed = await restored(40, (root) => {
      const other = tempDir();
      git(other, "init", "-q", "--bare");
      write(root, ".git/objects/info/alternates", `${join(other, "objects")}\n`);
    });
    expect(borrowed.cas).toBe(40);
  });

  it("the receipt's ref keeps them through git's pruning; gc drops it with the receipt, and then git may prune them", async () => {
    const { root, u, receipt } = await restored(40);
    git(root, "gc", "-q", "--prune=now");
    expect(git(root, "cat-file", "-t", agentOid(7)).trim()).toBe("blob");
    expect((await u.gc({ ttl: "1d" })).receipts).toBe(0);
    expect(keptRefs(root)).toBe(`refs/unwind/kept/${receipt}`);
    const redo = await u.redo(receipt);
    expect(redo.counts.restore).toBe(40);
    expect(read(root, "d/f7.txt")).toBe("agent 7\n");
    // Past the TTL, both receipts go, and their refs with them: git may then prune what only they kept.
    expect(keptRefs(root)).toContain(receipt);
    expect((await at("2100-01-01T00:00:00Z", () => u.gc({ ttl: "1d" }))).receipts).toBe(2);
    expect(keptRefs(root)).toBe("");
  });

  it("control: without the receipt's ref, git prunes those bytes and the redo cannot bring them back", async () => {
    const { root, u, receipt } = await restored(40);
    git(root, "update-ref", "-d", `refs/unwind/kept/${receipt}`);
    git(root, "gc", "-q", "--prune=now");
    expect(() => git(root, "cat-file", "-t", agentOid(7))).toThrow();
    const redo = await u.redo(receipt);
    expect(redo.items.find((i) => i.path === "d/f7.txt")).toMatchObject({ action: "conflict", reason: "missing-blob" });
  });
});

describe("gc and private indexes", () => {
  it("drops the private index (and its index ref) of a removed worktree, and only that one", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const wt = join(tempDir(), "wt");
    git(root, "worktree", "add", "-q", wt, "-b", "side");
    write(wt, "side.txt", "only in the worktree\n");
    const u = await open({ root });
    await u.snapshot();
    await (await open({ root: wt })).snapshot();
    const indexDir = join(root, ".git", "unwind", "index");
    const indexes = () =>
      readdirSync(indexDir)
        .filter((f) => f.endsWith(".index"))
        .sort();
    const refs = () => git(root, "for-each-ref", "--format=%(refname)", "refs/unwind/index/").trim().split("\n").filter(Boolean).sort();
    expect(indexes()).toHaveLength(2);
    expect(refs()).toHaveLength(2);

    // Negative control: while both worktrees exist, gc keeps both.
    expect(await u.gc()).toMatchObject({ indexes: 0, indexBytes: 0 });
    expect(indexes()).toHaveLength(2);

    const mainIndex = readFileSync(join(indexDir, indexes().find((f) => !snapshotIndexOf(wt, indexDir, f))!));
    git(root, "worktree", "remove", "--force", wt);
    const dry = await u.gc({ dryRun: true });
    expect(dry.indexes).toBe(1);
    expect(indexes()).toHaveLength(2);
    const real = await u.gc();
    expect(real.indexes).toBe(1);
    expect(real.indexBytes).toBeGreaterThan(0);
    expect(indexes()).toHaveLength(1);
    expect(readdirSync(indexDir).every((f) => f.startsWith(indexes()[0]!))).toBe(true); // its .base and .last went too
    expect(refs()).toHaveLength(1);
    expect(readFileSync(join(indexDir, indexes()[0]!)).equals(mainIndex)).toBe(true);
    expect((await u.snapshot()).id).toMatch(/^s-/);
  });
});

/** Whether index file `f` is the private index of work tree `wt` (its key is that of the worktree's git dir). */
function snapshotIndexOf(wt: string, indexDir: string, f: string): boolean {
  const gitDir = realpathSync(
    resolve(
      wt,
      readFileSync(join(wt, ".git"), "utf8")
        .replace(/^gitdir: /, "")
        .trim(),
    ),
  );
  return f === `${createHash("sha256").update(gitDir).digest("hex").slice(0, 16)}.index` && existsSync(join(indexDir, f));
}

describe("stack", () => {
  it("push, list in order, clear; a missing branch is exit 3", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    git(root, "branch", "run-1");
    git(root, "branch", "run-2");
    const u = await open({ root });
    expect(await u.stackPush("T-1", { branch: "run-1" })).toMatchObject({ task: "T-1", n: 0, branch: "run-1" });
    expect(await u.stackPush("T-1", { branch: "run-2" })).toMatchObject({ task: "T-1", n: 1, branch: "run-2" });
    const list = await u.stackList("T-1");
    expect(list.entries.map((e) => [e.n, e.branch, e.parentBranch])).toEqual([
      [0, "run-1", null],
      [1, "run-2", "run-1"],
    ]);
    expect(git(root, "for-each-ref", "--format=%(refname)", "refs/unwind/stacks/").trim().split("\n")).toEqual(["refs/unwind/stacks/T-1/0", "refs/unwind/stacks/T-1/1"]);
    await expect(u.stackPush("T-1", { branch: "nope" })).rejects.toMatchObject({ code: "E_SCOPE_UNKNOWN", exit: 3, message: expect.stringContaining("branch nope does not exist") });
    expect((await u.stackClear("T-1")).cleared).toBe(2);
    expect((await u.stackList("T-1")).entries).toEqual([]);
  });
});
