import { describe, expect, it } from "vitest";
import { goneNested } from "../../../src/scope/snapshot-diff.js";
import type { GitOid, RepoPath } from "../../../src/domain/types.js";

describe("goneNested: an untracked nested repository gone between two sides", () => {
  const added = { path: "x.txt" as RepoPath, pre: null, post: { kind: "file" as const, oid: "1" as GitOid } };

  it("is an entry of its own, its earlier state unknown", () => {
    expect(goneNested([added], { nested: ["vendor/lib/"] }, { nested: [] })).toEqual([added, { path: "vendor/lib", pre: { kind: "unknown" }, post: null }]);
  });
  it("still there, or either side not knowing what it saw: no entry", () => {
    expect(goneNested([added], { nested: ["vendor/lib/"] }, { nested: ["vendor/lib/"] })).toEqual([added]);
    expect(goneNested([added], { nested: ["vendor/lib/"] }, {})).toEqual([added]);
    expect(goneNested([added], {}, { nested: [] })).toEqual([added]);
  });
  it("a path the tree diff already has (it became a submodule, or a file) keeps that entry only", () => {
    const link = { path: "vendor/lib" as RepoPath, pre: null, post: { kind: "gitlink" as const, oid: "2" as GitOid } };
    expect(goneNested([link], { nested: ["vendor/lib/"] }, { nested: [] })).toEqual([link]);
  });
});
