import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, read, snapshotId, treeState, unwind, write } from "../helpers.js";

/*
 * Restore at the command line: operands relative to the current directory,
 * validated before anything is read, and a quiet stderr. The behaviour of
 * restore is in test/ops/restore.test.ts.
 */

describe("restore on the command line", () => {
  it("exits 0 with nothing on stderr; --json prints the report", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const before = treeState(root);
    const id = snapshotId(root);
    write(root, "a.txt", "two\n");
    write(root, "new.txt", "n\n");
    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.json.items.map((i: any) => [i.path, i.action])).toEqual([
      ["a.txt", "restore"],
      ["new.txt", "delete"],
    ]);
    expect(treeState(root)).toEqual(before);
  });

  it("names paths after --, and refuses paths outside the root (exit 2, one line naming it)", () => {
    const root = makeRepo({ "a.txt": "a\n", "dir/b.txt": "b\n", "dir/c.txt": "c\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "A\n");
    write(root, "dir/b.txt", "B\n");
    write(root, "dir/c.txt", "C\n");
    const r = unwind(root, ["restore", id, "--json", "--", "dir/b.txt"]);
    expect(r.code).toBe(0);
    expect([read(root, "a.txt"), read(root, "dir/b.txt"), read(root, "dir/c.txt")]).toEqual(["A\n", "b\n", "C\n"]);
    const d = unwind(root, ["restore", id, "--", "dir"]);
    expect(d.code).toBe(0);
    expect(read(root, "dir/c.txt")).toBe("c\n");
    expect(read(root, "a.txt")).toBe("A\n");

    const tree = treeState(root);
    for (const bad of ["../x", "/etc/passwd", "a/../../x", ".git/config"]) {
      const b = unwind(root, ["restore", id, "--", bad]);
      expect(b.code, bad).toBe(2);
      expect(b.stderr.trim().split("\n")).toHaveLength(1);
      expect(b.stderr).toContain(bad);
    }
    expect(treeState(root)).toEqual(tree);
  });

  it("works from a subdirectory of the work tree", () => {
    const root = makeRepo({ "a.txt": "main\n", "sub/dir/f.txt": "f\n" });
    const sub = join(root, "sub", "dir");
    const id = snapshotId(sub);
    write(root, "a.txt", "changed\n");
    expect(unwind(sub, ["restore", id]).code).toBe(0);
    expect(read(root, "a.txt")).toBe("main\n");
    expect(existsSync(join(sub, ".unwind"))).toBe(false);
  });

  it("exit 1 when a conflict is left (here: a file over the size cap)", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const id = snapshotId(root, []);
    write(root, "big.bin", Buffer.alloc(2048, 1));
    const r = unwind(root, ["restore", id, "--json"], { env: { UNWIND_SIZE_CAP: "1024" } });
    expect(r.json.items[0]).toMatchObject({ path: "big.bin", action: "conflict", reason: "toolarge" });
    expect(r.code).toBe(1);
    // Negative control: without the cap the restore applies, exit 0.
    expect(unwind(root, ["restore", id]).code).toBe(0);
  });
});
