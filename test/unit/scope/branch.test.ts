/** A branch task's own work as a pure fold over its history (SPEC section 6). */
import { describe, expect, it } from "vitest";
import { branchEntries } from "../../../src/scope/fold/branch.js";
import type { GitOid, RepoPath, State } from "../../../src/domain/types.js";

const P = "a.txt" as RepoPath;
const st = (v: string): State => ({ kind: "file", mode: "100644", oid: `oid-${v}` as GitOid });
const step = (id: string, own: boolean, pre: State | null, post: State | null) => ({ id, own, entries: [{ path: P, pre, post }] });

describe("a branch task's own work", () => {
  it("from before its first own change to the end; the integration branch's changes before that are not its", () => {
    const r = branchEntries([step("sync1", false, st("0"), st("1")), step("c1", true, st("1"), st("2"))], ["T"]);
    expect(r.entries).toEqual([{ path: P, change: "modified", pre: st("1"), post: st("2"), by: ["T"] }]);
    expect(r.interleaved.size).toBe(0);
  });
  it("an integration change after the task's own makes the path interleaved", () => {
    const r = branchEntries([step("c1", true, st("0"), st("1")), step("sync1", false, st("1"), st("2"))], ["T"]);
    expect(r.entries[0]).toMatchObject({ pre: st("0"), post: st("2") });
    expect(r.interleaved.get(P)).toEqual({ by: "the integration branch", at: "sync1" });
  });
  it("negative control: only the integration branch's changes: nothing is the task's", () => {
    expect(branchEntries([step("sync1", false, st("0"), st("1"))], ["T"]).entries).toEqual([]);
  });
});
