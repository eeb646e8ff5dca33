import { describe, expect, it } from "vitest";
import type { State } from "../../../src/domain/types.js";
import { baselineEntries, uncovered, underPrefix } from "../../../src/scope/fold/baseline-diff.js";

const file = (oid: string, sha?: string, mode = "100644") => ({ kind: "file", mode, oid, ...(sha ? { sha256: sha } : {}) }) as State;

describe("baseline -> now, per governed path", () => {
  it("modified, deleted, added (absent from the baseline), mode; equal paths and paths outside the prefixes are not edits", () => {
    const baseline = { "tests/a.js": file("a1", "s1"), "tests/b.js": file("b1", "s2"), "tests/m.sh": file("m1", "s3"), "tests/same.js": file("c1", "s4"), "src/x.js": file("x1", "s5") };
    const now = new Map<string, State>([
      ["tests/a.js", file("a2")],
      ["tests/m.sh", file("m1", undefined, "100755")],
      ["tests/same.js", file("c1")],
      ["tests/new.js", file("n1")],
      ["src/x.js", file("x2")],
      ["testsuite/y.js", file("y1")],
    ]);
    const out = baselineEntries(baseline, now, ["tests"], "K");
    expect(out.map((e) => [e.path, e.change, e.pre?.oid ?? null, e.post?.oid ?? null])).toEqual([
      ["tests/a.js", "modified", "a1", "a2"],
      ["tests/b.js", "deleted", "b1", null],
      ["tests/m.sh", "mode", "m1", "m1"],
      ["tests/new.js", "added", null, "n1"],
    ]);
    expect(out.every((e) => e.by[0] === "baseline:K")).toBe(true);
    // Control: the whole tree as the prefix takes src/ and testsuite/ too.
    expect(baselineEntries(baseline, now, [""], "K").map((e) => e.path)).toEqual(["src/x.js", "tests/a.js", "tests/b.js", "tests/m.sh", "tests/new.js", "testsuite/y.js"]);
  });

  it("a prefix takes itself and what is below it, not a sibling that shares its letters", () => {
    expect(underPrefix("tests/a.js", ["tests"])).toBe(true);
    expect(underPrefix("tests", ["tests"])).toBe(true);
    expect(underPrefix("testsuite/a.js", ["tests"])).toBe(false);
    expect(underPrefix("anything", [""])).toBe(true);
    expect(uncovered(["tests/unit", "tests", "src"], ["tests"])).toEqual(["src"]);
    expect(uncovered(["tests"], ["tests/unit"])).toEqual(["tests"]);
    expect(uncovered(["src"], [""])).toEqual([]);
  });
});
