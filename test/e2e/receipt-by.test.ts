/**
 * Every receipt records who started it (SPEC section 13): `cli`, `ui`, `mcp`
 * (test/e2e/mcp.test.ts, test/e2e/ui-server.test.ts) or `library`; a receipt
 * written before that was recorded still lists, verifies and redoes.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { open } from "../../src/ops/open.js";
import { Receipts, type Receipt } from "../../src/store/receipts.js";
import { read, unwind } from "../helpers.js";
import { A_TS, A_TS2, twoSessions } from "../session-fixture.js";

const A = "by-aaaa-1111";
const B = "by-bbbb-2222";

describe("who started each receipt", () => {
  it("the command line's receipts say cli, the library's library; `receipts` shows them (--json and a BY column)", async () => {
    const root = twoSessions(A, B);
    const u = unwind(root, ["undo", "--session", A, "--json"]);
    expect(u.code).toBe(0);
    const lib = await (await open({ root })).undo({ session: B });
    const list = unwind(root, ["receipts", "--json"]).json.receipts;
    expect(list.map((r: any) => [r.id, r.by])).toEqual([
      [lib.receipt, { client: "library" }],
      [u.json.receipt, { client: "cli" }],
    ]);
    const human = unwind(root, ["receipts"]).stdout.split("\n");
    expect(human[0]).toMatch(/^RECEIPT\s+WHEN\s+KIND\s+SCOPE\s+BY\s+COUNTS/);
    expect(human[1]).toMatch(/ library /);
    expect(human[2]).toMatch(/ cli /);
  });

  it("a receipt in the shape earlier versions wrote (no `by`) lists as null, verifies, and redoes; the chain goes on after it", () => {
    const root = twoSessions(A, B);
    const u = unwind(root, ["undo", "--session", A, "--json"]);
    expect(u.code).toBe(0);
    const store = unwind(root, ["status", "--json"]).json.store as string;
    // The same receipt as the earlier code sealed it: every field but `by`, laid out and chained as before.
    const receipts = new Receipts(store);
    const { by, prev: _prev, ...old } = receipts.read(u.json.receipt) as Receipt;
    expect(by).toEqual({ client: "cli" });
    rmSync(receipts.fileOf(u.json.receipt));
    rmSync(join(store, "receipts", "HEAD"));
    receipts.append(old);
    expect(readFileSync(receipts.fileOf(u.json.receipt), "utf8")).not.toContain('"by"');

    expect(unwind(root, ["receipts", "--json"]).json.receipts.map((r: any) => [r.id, r.by])).toEqual([[u.json.receipt, null]]);
    expect(unwind(root, ["receipts"]).stdout.split("\n")[1]).toMatch(/ - /);
    const v = unwind(root, ["verify", "--json"]);
    expect([v.code, v.json.ok]).toEqual([0, true]);

    expect(read(root, "src/a.ts")).toBe(A_TS);
    const r = unwind(root, ["redo", "--last", "--json"]);
    expect(r.code).toBe(0);
    expect(read(root, "src/a.ts")).toBe(A_TS2);
    expect(unwind(root, ["receipts", "--json"]).json.receipts.map((x: any) => x.by)).toEqual([{ client: "cli" }, null]);
    expect(unwind(root, ["verify"]).code).toBe(0);

    // The control: verify does read that old receipt; changed, even by adding the field, it is damage.
    const file = receipts.fileOf(u.json.receipt);
    writeFileSync(file, readFileSync(file, "utf8").replace('"kind":"undo"', '"kind":"undo","by":{"client":"cli"}'));
    expect(unwind(root, ["verify"]).code).toBe(4);
  });
});
