import { describe, expect, it } from "vitest";
import { hunksOf as engineHunks } from "../../../src/domain/hunks.js";
import { hunksOf, layout } from "../../../src/ui/web/diff-view.js";

const lines = (before: string, after: string) => layout(before.split("\n").length - 1, hunksOf(before, after));

describe("ui diff layout", () => {
  it("numbers each side: context on both, deletions on the left, additions on the right", () => {
    const l = lines("a\nb\nc\n", "a\nB\nc\nd\n");
    expect(l.hunks.flatMap((x) => x.lines).map((x) => [x.op, x.text, x.old, x.new])).toEqual([
      [" ", "a", 1, 1],
      ["-", "b", 2, null],
      ["+", "B", null, 2],
      [" ", "c", 3, 3],
      ["+", "d", null, 4],
    ]);
  });

  it("an added file is all additions; a file without a final newline keeps its last line", () => {
    const l = layout(0, hunksOf("", "x\ny"));
    expect(l.hunks.flatMap((x) => x.lines).map((x) => [x.op, x.text, x.new])).toEqual([
      ["+", "x", 1],
      ["+", "y", 2],
    ]);
    expect([l.hunks[0]!.gap.count, l.tail.count]).toEqual([0, 0]);
  });

  it("the hunks are the engine's (the numbers undo --hunk takes), with the unchanged runs between them", () => {
    const before = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    const after = before.replace("line 5\n", "line five\n").replace("line 25\n", "line 25\nline 25b\n");
    expect(hunksOf(before, after)).toEqual(engineHunks(before, after));
    const l = lines(before, after);
    expect(l.hunks.map((x) => [x.hunk.n, x.gap.old, x.gap.new, x.gap.count])).toEqual([
      [1, 1, 1, 1],
      [2, 9, 9, 14],
    ]);
    // After the last hunk: old line 29 on, which is new line 30 (one line was added above).
    expect(l.tail).toEqual({ old: 29, new: 30, count: 2 });
  });

  it("marks the words a changed line changed, and not a line rewritten whole", () => {
    const l = lines("const total = sum(a, b);\nx\n", "const total = sum(a, c);\nsomething else entirely here\n");
    const [del1, del2, add1, add2] = l.hunks[0]!.lines;
    expect([del1!.text, del1!.marks]).toEqual(["const total = sum(a, b);", [[21, 22]]]);
    expect([add1!.text, add1!.marks]).toEqual(["const total = sum(a, c);", [[21, 22]]]);
    // "x" against a new sentence: nothing in common worth marking, so no marks (the whole line is the change).
    expect([del2!.marks, add2!.marks]).toEqual([undefined, undefined]);
  });
});
