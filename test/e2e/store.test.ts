import { chmodSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { git, makeRepo, snapshotId, unwind, unwindAsync, write } from "../helpers.js";

/* The store's commands at the process boundary. Their behaviour is in test/ops/store.test.ts. */

describe("verify's exit code", () => {
  it("0 on an intact store, 4 once a blob is tampered with", () => {
    const root = makeRepo({ "a.txt": "original\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "agent wrote this\n");
    expect(unwind(root, ["restore", id]).code).toBe(0);
    const ok = unwind(root, ["verify", "--json"]);
    expect(ok.code).toBe(0);
    expect(ok.json.ok).toBe(true);
    const dir = join(root, ".git", "unwind", "cas", "sha256");
    const [blob] = readdirSync(dir).flatMap((d) => readdirSync(join(dir, d)).map((f) => join(dir, d, f)));
    chmodSync(blob!, 0o644);
    writeFileSync(blob!, deflateSync(Buffer.from("evil\n")));
    const v = unwind(root, ["verify", "--json"]);
    expect(v.code).toBe(4);
    expect(v.json.ok).toBe(false);
    expect(unwind(root, ["verify"]).stdout).toMatch(/^damaged: 1 problem\(s\)/);
  });
});

describe("stack", () => {
  it("concurrent pushes each take their own slot", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    for (let i = 0; i < 4; i++) git(root, "branch", `b${i}`);
    const rs = await Promise.all([0, 1, 2, 3].map((i) => unwindAsync(root, ["stack", "push", "--task", "T", "--branch", `b${i}`, "--json"])));
    for (const r of rs) expect(r.code, r.stderr).toBe(0);
    const list = unwind(root, ["stack", "list", "--task", "T", "--json"]).json.entries;
    expect(list.map((e: any) => e.n)).toEqual([0, 1, 2, 3]);
    expect(new Set(list.map((e: any) => e.branch)).size).toBe(4);
  });
});
