import { describe, expect, it } from "vitest";
import { makeRepo, unwind, write, read, snapshotId } from "../helpers.js";

describe("smoke", () => {
  it("snapshot, change, restore brings the file back", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "two\n");
    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.code).toBe(0);
    expect(read(root, "a.txt")).toBe("one\n");
  });
});
