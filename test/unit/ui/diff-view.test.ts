import { describe, expect, it } from "vitest";
import { diffRows } from "../../../src/ui/web/diff-view.js";

describe("ui diff rows", () => {
  it("numbers each side: context on both, deletions on the left, additions on the right", () => {
    expect(diffRows("a\nb\nc\n", "a\nB\nc\nd\n").map((l) => [l.op, l.text, l.old, l.new])).toEqual([
      [" ", "a", 1, 1],
      ["-", "b", 2, null],
      ["+", "B", null, 2],
      [" ", "c", 3, 3],
      ["+", "d", null, 4],
    ]);
  });

  it("an added file is all additions; a file without a final newline keeps its last line", () => {
    expect(diffRows("", "x\ny").map((l) => [l.op, l.text])).toEqual([
      ["+", "x"],
      ["+", "y"],
    ]);
  });
});
