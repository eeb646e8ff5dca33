import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, tempDir, unwind, write } from "../helpers.js";

/* The command line's --root, for an orchestrator running `unwind record` from elsewhere. The rest of the safety tests are in test/ops/safety.test.ts. */

describe("record --root", () => {
  it("snapshots the named root, not the current directory", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const elsewhere = tempDir();
    expect(unwind(elsewhere, ["record", "--root", root, "--session", "orch:1", "--phase", "pre", "--call", "c1"]).code).toBe(0);
    write(root, "made.txt", "m\n");
    expect(unwind(elsewhere, ["record", "--root", root, "--session", "orch:1", "--phase", "post", "--call", "c1"]).code).toBe(0);
    expect(existsSync(join(elsewhere, ".unwind"))).toBe(false);
    expect(unwind(root, ["undo", "--session", "orch:1", "--json"]).json.items).toMatchObject([{ path: "made.txt", action: "delete", reason: null }]);
  });
});
