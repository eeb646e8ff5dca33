import { createHash } from "node:crypto";
import { chmodSync, existsSync, readdirSync, readFileSync, realpathSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { git, makeRepo, read, snapshotId, tempDir, treeState, unwind, write } from "../helpers.js";

function casFiles(root: string): string[] {
  const dir = join(root, ".git", "unwind", "cas", "sha256");
  return readdirSync(dir).flatMap((d) => readdirSync(join(dir, d)).map((f) => join(dir, d, f)));
}

/** A repo with one restore applied, so the store holds blobs and a receipt. */
function withReceipt() {
  const root = makeRepo({ "a.txt": "original\n" });
  const id = snapshotId(root);
  write(root, "a.txt", "agent wrote this\n");
  const r = unwind(root, ["restore", id, "--json"]);
  expect(r.code).toBe(0);
  return { root, id, receipt: r.json.receipt as string };
}

describe("verify", () => {
  it("passes on an intact store (negative control for the damage cases)", () => {
    const { root } = withReceipt();
    const v = unwind(root, ["verify", "--json"]);
    expect(v.code).toBe(0);
    expect(v.json).toMatchObject({ ok: true, problems: [], receipts: 1, snapshots: 1 });
  });

  it("a tampered blob exits 4, naming it; redo then refuses to write it (when git has no copy either)", () => {
    const { root, receipt } = withReceipt();
    const [blob] = casFiles(root);
    chmodSync(blob!, 0o644);
    writeFileSync(blob!, deflateSync(Buffer.from("evil\n")));
    const v = unwind(root, ["verify", "--json"]);
    expect(v.code).toBe(4);
    expect(v.json.problems.map((p: any) => p.message).join("\n")).toMatch(/fails its SHA-256 check/);
    // git also holds these bytes (the restore snapshotted the tree first); remove that copy too.
    const agentOid = require("node:child_process").execFileSync("git", ["hash-object", "--stdin"], { input: "agent wrote this\n", encoding: "utf8" }).trim();
    unlinkSync(join(root, ".git", "objects", agentOid.slice(0, 2), agentOid.slice(2)));
    const r = unwind(root, ["redo", receipt, "--json"]);
    expect(r.json.items[0]).toMatchObject({ path: "a.txt", action: "conflict", reason: "hash-mismatch" });
    expect(read(root, "a.txt")).toBe("original\n");
  });

  it("a blob missing from the CAS is reported; redo still works from git's verified copy", () => {
    const { root, receipt } = withReceipt();
    for (const f of casFiles(root)) unlinkSync(f);
    const v = unwind(root, ["verify", "--json"]);
    expect(v.code).toBe(4);
    expect(v.json.problems.map((p: any) => p.message).join("\n")).toMatch(/before the apply .* is missing/);
    expect(unwind(root, ["redo", receipt]).code).toBe(0);
    expect(read(root, "a.txt")).toBe("agent wrote this\n");
  });

  it("content missing everywhere makes restore refuse with missing-blob", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    write(root, "only-in-snapshot.txt", "unique content 12345\n");
    const id = snapshotId(root);
    const oid = git(root, "hash-object", "only-in-snapshot.txt").trim();
    unlinkSync(join(root, ".git", "objects", oid.slice(0, 2), oid.slice(2)));
    unlinkSync(join(root, "only-in-snapshot.txt"));
    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.json.items).toMatchObject([{ path: "only-in-snapshot.txt", action: "conflict", reason: "missing-blob" }]);
    expect(r.code).toBe(1);
  });

  it("an altered receipt breaks the chain: exit 4", () => {
    const { root, receipt } = withReceipt();
    const file = join(root, ".git", "unwind", "receipts", `${receipt}.json`);
    writeFileSync(file, readFileSync(file, "utf8").replace('"restore"', '"delete"'));
    const v = unwind(root, ["verify", "--json"]);
    expect(v.code).toBe(4);
    expect(v.json.problems[0].message).toContain(`receipt ${receipt} was altered`);
  });

  it("a deleted receipt in the middle of the chain is reported", () => {
    const { root, id, receipt } = withReceipt();
    write(root, "a.txt", "again\n");
    expect(unwind(root, ["restore", id]).code).toBe(0);
    unlinkSync(join(root, ".git", "unwind", "receipts", `${receipt}.json`));
    const v = unwind(root, ["verify", "--json"]);
    expect(v.code).toBe(4);
    expect(v.json.problems[0].message).toContain(`receipt ${receipt} is missing`);
  });
});

describe("status", () => {
  it("reports the store, snapshots and receipts", () => {
    const { root } = withReceipt();
    const s = unwind(root, ["status", "--json"]);
    expect(s.code).toBe(0);
    expect(s.json).toMatchObject({ exists: true, snapshots: 1, receipts: 1, mode: "git" });
    expect(s.json.bytes).toBeGreaterThan(0);
    expect(s.json.store).toBe(join(root, ".git", "unwind"));
  });
});

describe("gc", () => {
  it("drops old snapshots, receipts and blobs; a dry run drops nothing", () => {
    const { root } = withReceipt();
    const old = snapshotId(root, ["--label", "old"]);
    expect(unwind(root, ["gc", "--ttl", "1d", "--json"]).json).toMatchObject({ snapshots: 0, receipts: 0, blobs: 0 });

    // Two days from now, all of it is past a one-day TTL.
    const store = join(root, ".git", "unwind");
    const env = { UNWIND_NOW: new Date(Date.now() + 2 * 86400e3).toISOString() };
    const before = treeState(store);
    const dry = unwind(root, ["gc", "--ttl", "1d", "--dry-run", "--json"], { env });
    expect(dry.json).toMatchObject({ dryRun: true, receipts: 1 });
    expect(dry.json.blobs).toBeGreaterThan(0);
    expect(treeState(store)).toEqual(before);

    const real = unwind(root, ["gc", "--ttl", "1d", "--json"], { env });
    expect(real.json).toMatchObject({ dryRun: false, receipts: 1, snapshots: 2 });
    expect(casFiles(root)).toEqual([]);
    // The chain still verifies: BASE records where it now starts.
    expect(unwind(root, ["verify"]).code).toBe(0);
    expect(unwind(root, ["snapshots", "--json"]).json.snapshots.map((s: any) => s.id)).not.toContain(old);
  });

  it("keeps blobs a live receipt needs, whatever their age", () => {
    const { root, receipt } = withReceipt();
    const past = new Date("2000-01-01T00:00:00Z");
    for (const f of casFiles(root)) utimesSync(f, past, past);
    const r = unwind(root, ["gc", "--ttl", "1d", "--json"]);
    expect(r.json.blobs).toBe(0);
    expect(r.json.receipts).toBe(0);
    // Negative control: once the receipt itself is past the TTL, its blobs go too.
    const later = unwind(root, ["gc", "--ttl", "1d", "--dry-run", "--json"], { env: { UNWIND_NOW: "2100-01-01T00:00:00Z" } });
    expect(later.json.blobs).toBeGreaterThan(0);
    expect(unwind(root, ["redo", receipt]).code).toBe(0);
    expect(read(root, "a.txt")).toBe("agent wrote this\n");
  });
});

describe("gc and private indexes", () => {
  it("drops the private index (and its index ref) of a removed worktree, and only that one", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const wt = join(tempDir(), "wt");
    git(root, "worktree", "add", "-q", wt, "-b", "side");
    write(wt, "side.txt", "only in the worktree\n");
    snapshotId(root);
    snapshotId(wt);
    const indexDir = join(root, ".git", "unwind", "index");
    const indexes = () =>
      readdirSync(indexDir)
        .filter((f) => f.endsWith(".index"))
        .sort();
    const refs = () => git(root, "for-each-ref", "--format=%(refname)", "refs/unwind/index/").trim().split("\n").filter(Boolean).sort();
    expect(indexes()).toHaveLength(2);
    expect(refs()).toHaveLength(2);

    // Negative control: while both worktrees exist, gc keeps both.
    expect(unwind(root, ["gc", "--json"]).json).toMatchObject({ indexes: 0, indexBytes: 0 });
    expect(indexes()).toHaveLength(2);

    const mainIndex = readFileSync(join(indexDir, indexes().find((f) => !snapshotIndexOf(wt, indexDir, f))!));
    git(root, "worktree", "remove", "--force", wt);
    const dry = unwind(root, ["gc", "--dry-run", "--json"]);
    expect(dry.json.indexes).toBe(1);
    expect(indexes()).toHaveLength(2);
    const real = unwind(root, ["gc", "--json"]);
    expect(real.json.indexes).toBe(1);
    expect(real.json.indexBytes).toBeGreaterThan(0);
    expect(indexes()).toHaveLength(1);
    expect(readdirSync(indexDir).every((f) => f.startsWith(indexes()[0]!))).toBe(true); // its .base and .last went too
    expect(refs()).toHaveLength(1);
    expect(readFileSync(join(indexDir, indexes()[0]!)).equals(mainIndex)).toBe(true);
    expect(unwind(root, ["snapshot"]).code).toBe(0);
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
  it("push, list in order, clear; a missing branch is exit 3", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    git(root, "branch", "run-1");
    git(root, "branch", "run-2");
    expect(unwind(root, ["stack", "push", "--task", "T-1", "--branch", "run-1"]).code).toBe(0);
    expect(unwind(root, ["stack", "push", "--task", "T-1", "--branch", "run-2"]).code).toBe(0);
    const list = unwind(root, ["stack", "list", "--task", "T-1", "--json"]);
    expect(list.json.entries.map((e: any) => [e.n, e.branch, e.parentBranch])).toEqual([
      [0, "run-1", null],
      [1, "run-2", "run-1"],
    ]);
    expect(git(root, "for-each-ref", "--format=%(refname)", "refs/unwind/stacks/").trim().split("\n")).toEqual(["refs/unwind/stacks/T-1/0", "refs/unwind/stacks/T-1/1"]);
    const missing = unwind(root, ["stack", "push", "--task", "T-1", "--branch", "nope"]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("branch nope does not exist");
    expect(unwind(root, ["stack", "clear", "--task", "T-1", "--json"]).json.cleared).toBe(2);
    expect(unwind(root, ["stack", "list", "--task", "T-1", "--json"]).json.entries).toEqual([]);
  });

  it("concurrent pushes each take their own slot", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    for (let i = 0; i < 4; i++) git(root, "branch", `b${i}`);
    const { unwindAsync } = await import("../helpers.js");
    const rs = await Promise.all([0, 1, 2, 3].map((i) => unwindAsync(root, ["stack", "push", "--task", "T", "--branch", `b${i}`, "--json"])));
    for (const r of rs) expect(r.code, r.stderr).toBe(0);
    const list = unwind(root, ["stack", "list", "--task", "T", "--json"]).json.entries;
    expect(list.map((e: any) => e.n)).toEqual([0, 1, 2, 3]);
    expect(new Set(list.map((e: any) => e.branch)).size).toBe(4);
  });
});
