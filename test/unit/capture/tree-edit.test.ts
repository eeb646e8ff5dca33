import { describe, expect, it } from "vitest";
import { editTree, RawTree, type TreeEntry } from "../../../src/capture/tree-edit.js";

/* editTree and RawTree over in-memory trees: no git, no disk. Trees checked against git's own are in test/e2e/tree-edit.test.ts. */

describe("pure: tree edits", () => {
  /** Runs editTree over in-memory trees; returns the written bodies, the last being the root. */
  function edit(trees: Record<string, Record<string, TreeEntry>>, changes: [string, TreeEntry | null][]) {
    const written: Buffer[] = [];
    const build = (entries: Record<string, TreeEntry>): Buffer => {
      const bodies: Buffer[] = [];
      editTree(
        new Map(Object.entries(entries)),
        () => null,
        (b) => {
          bodies.push(b);
          return "0".repeat(40);
        },
      );
      return bodies[bodies.length - 1]!;
    };
    editTree(
      new Map(changes),
      (dir) => (trees[dir] ? new RawTree(build(trees[dir]!), 20) : null),
      (b) => {
        written.push(b);
        return String(written.length).padStart(40, "0");
      },
    );
    return written.map((b) => new RawTree(b, 20).entries());
  }
  const e = (mode: string, c: string): TreeEntry => ({ mode, oid: c.repeat(40) });

  it("pure: entries sort like git (a tree sorts as name + '/'), and edits keep that order", () => {
    const [top] = edit({}, [
      ["a.b", e("100644", "1")],
      ["a", e("40000", "2")],
      ["a-b", e("100644", "3")],
    ]);
    expect([...top!.keys()]).toEqual(["a-b", "a.b", "a"]);
    // Negative control: as a file, "a" sorts first.
    const [flat] = edit({}, [
      ["a.b", e("100644", "1")],
      ["a", e("100644", "2")],
      ["a-b", e("100644", "3")],
    ]);
    expect([...flat!.keys()]).toEqual(["a", "a-b", "a.b"]);
    // Editing a sorted tree: a new name lands in order, a changed one in place, a removed one goes.
    const base = { "": { b: e("100644", "b"), d: e("100644", "d"), f: e("100644", "f"), a0: e("100644", "0") } };
    const [after] = edit(base, [
      ["c", e("100644", "c")],
      ["d", e("100755", "e")],
      ["f", null],
      ["\u00fc", e("100644", "9")],
    ]);
    expect([...after!.entries()]).toEqual([
      ["a0", e("100644", "0")],
      ["b", e("100644", "b")],
      ["c", e("100644", "c")],
      ["d", e("100755", "e")],
      ["\u00fc", e("100644", "9")],
    ]);
  });

  it("pure: a directory that loses its last entry disappears, and a file may take its name", () => {
    const written = edit({ "": { d: e("40000", "d") }, d: { "only.txt": e("100644", "1") } }, [
      ["d/only.txt", null],
      ["d", e("100644", "f")],
    ]);
    expect(written).toHaveLength(1); // no tree for the emptied directory
    expect([...written[0]!.entries()]).toEqual([["d", e("100644", "f")]]);
  });

  it("pure: a malformed tree object is refused, not looped over", () => {
    expect(() => new RawTree(Buffer.from("100644 name-without-nul"), 20)).toThrow(/malformed/);
  });
});
