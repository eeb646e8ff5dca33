import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, makeRepo, read, snapshotId, tempDir, treeState, unwind, write } from "../helpers.js";

const HAS_STRACE = spawnSync("strace", ["-V"], { stdio: "ignore" }).status === 0;

/** A repo with a snapshot and three kinds of change after it: modify, add (in a new dir), delete. */
function setup() {
  const root = makeRepo({ "a.txt": "a1\n", "b.txt": "b1\n", "c.txt": "c1\n" });
  const original = treeState(root);
  const id = snapshotId(root);
  write(root, "a.txt", "a2\n");
  write(root, "new/n.txt", "n\n");
  require("node:fs").unlinkSync(join(root, "c.txt"));
  return { root, id, original, changed: treeState(root) };
}

describe("a crash at any step of apply is recovered by the next command, nothing lost", () => {
  it.each(["intent", "write:1", "write:2", "write:3", "receipt"])("SIGKILL at %s", (point) => {
    const { root, id, original, changed } = setup();
    const crashed = unwind(root, ["restore", id, "--json"], { env: { UNWIND_TEST_CRASH: point } });
    expect(crashed.code).not.toBe(0); // killed
    expect(crashed.stdout).toBe("");

    const next = unwind(root, ["receipts", "--json"]);
    expect(next.code).toBe(0);
    expect(treeState(root)).toEqual(original);
    const receipts = next.json.receipts;
    expect(receipts).toHaveLength(1);
    expect(receipts[0].counts).toMatchObject({ restore: 2, delete: 1, conflict: 0 });
    expect(Boolean(receipts[0].recovered)).toBe(point !== "receipt");
    expect(receipts[0].by).toEqual({ client: "cli" }); // the intent carries who started it to the receipt recovery seals
    expect(readdirSync(join(root, ".git", "unwind", "pending"))).toEqual([]);
    expect(unwind(root, ["verify"]).code).toBe(0);

    // Nothing lost: redo brings back exactly what the crashed apply replaced.
    expect(unwind(root, ["redo", receipts[0].id]).code).toBe(0);
    expect(treeState(root)).toEqual(changed);
  });

  it("a crash after a file gave way to a directory: recovery counts the file's delete as done, and redo brings the file back", () => {
    const root = makeRepo({ "d/a.txt": "a\n", "d/b.txt": "b\n" });
    const original = treeState(root);
    const id = snapshotId(root);
    require("node:fs").rmSync(join(root, "d"), { recursive: true });
    write(root, "d", "a file where a directory was\n");
    const changed = treeState(root);
    // write:2 is after the delete of the file d and the write of d/a.txt: d is a directory of the restore's own making.
    const crashed = unwind(root, ["restore", id], { env: { UNWIND_TEST_CRASH: "write:2" } });
    expect(crashed.code).not.toBe(0);
    expect(read(root, "d/a.txt")).toBe("a\n");

    const next = unwind(root, ["receipts", "--json"]);
    expect(treeState(root)).toEqual(original);
    expect(next.json.receipts[0].counts).toMatchObject({ restore: 2, delete: 1, conflict: 0 });
    expect(unwind(root, ["redo", next.json.receipts[0].id]).code).toBe(0);
    expect(treeState(root)).toEqual(changed);
  });

  it("recovery leaves alone a path someone changed after the crash, and removes stale temp files", () => {
    const { root, id } = setup();
    const crashed = unwind(root, ["restore", id], { env: { UNWIND_TEST_CRASH: "intent" } });
    expect(crashed.code).not.toBe(0);
    const pending = readdirSync(join(root, ".git", "unwind", "pending"));
    expect(pending).toHaveLength(1);
    const intent = JSON.parse(readFileSync(join(root, ".git", "unwind", "pending", pending[0]!), "utf8"));
    const tag = intent.receipt.slice(-8);
    const index = intent.items.findIndex((i: any) => i.path === "c.txt");
    const tmp = join(root, `.unwind-${tag}-${index}.tmp`);
    writeFileSync(tmp, "half written");
    write(root, "a.txt", "human after crash\n");

    const next = unwind(root, ["receipts", "--json"]);
    expect(next.code).toBe(0);
    expect(read(root, "a.txt")).toBe("human after crash\n");
    expect(existsSync(tmp)).toBe(false);
    expect(read(root, "c.txt")).toBe("c1\n");
    expect(existsSync(join(root, "new"))).toBe(false);
    expect(next.json.receipts[0].counts).toMatchObject({ restore: 1, delete: 1, conflict: 1 });
  });

  // A real kill (strace) at the rename that puts the intent in place: the crash CI once met, when a loaded machine
  // took long to fsync the intent. Its temp file is all that is left, and the work tree was never touched.
  it.skipIf(!HAS_STRACE)("a kill while the intent itself is written: the tree is untouched, and the next command removes the torn intent", () => {
    const { root, id, changed } = setup();
    const pendingDir = join(root, ".git", "unwind", "pending");
    // Which of the main thread's renames puts the intent in place, from a clean traced dry run of the same restore.
    const probe = setup();
    const trace = join(tempDir("unwind-trace-"), "trace");
    const traced = spawnSync("strace", ["-qq", "-o", trace, "-e", "trace=rename", process.execPath, BIN, "restore", probe.id, "--json"], { cwd: probe.root });
    expect(traced.status).toBe(0);
    const renames = readFileSync(trace, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("rename("));
    const k = renames.findIndex((l) => /\/pending\/[^"]*\.json"\)/.test(l.split(", ").pop()!)) + 1;
    expect(k).toBeGreaterThan(0);

    const killed = spawnSync("strace", ["-qq", "-o", "/dev/null", "-e", "trace=rename", "-e", `inject=rename:signal=SIGKILL:when=${k}`, process.execPath, BIN, "restore", id], { cwd: root });
    expect(killed.status).not.toBe(0);
    // The control: the kill did land inside the intent's writing, leaving its temp file and no intent.
    const left = readdirSync(pendingDir);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^\..*\.json\.unwind-.*\.tmp$/);
    expect(treeState(root)).toEqual(changed);

    const next = unwind(root, ["receipts", "--json"]);
    expect(next.code).toBe(0);
    expect(next.json.receipts).toEqual([]);
    expect(readdirSync(pendingDir)).toEqual([]);
    expect(treeState(root)).toEqual(changed);
    expect(unwind(root, ["verify"]).code).toBe(0);
  });

  it("negative control: without a crash no intent is left and the receipt is not marked recovered", () => {
    const { root, id, original } = setup();
    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.code).toBe(0);
    expect(treeState(root)).toEqual(original);
    expect(readdirSync(join(root, ".git", "unwind", "pending"))).toEqual([]);
    expect(unwind(root, ["receipts", "--json"]).json.receipts[0].recovered).toBe(false);
  });
});
