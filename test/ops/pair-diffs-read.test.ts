import { describe, expect, it } from "vitest";
import { appendFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { appendPairDiffs, PairDiffsRead, pairDiffsFile, type PathsWanted } from "../../src/store/pair-diffs.js";

/** One read of the kept pair diffs, as a fold makes it. */
const readPairDiffs = (store: string, want: ReadonlyMap<string, PathsWanted | null>) => new PairDiffsRead(store).read(want);

/*
 * A fold reads from the kept pair diffs only the pairs it asks for, and of
 * a pair outside its scope's windows only the paths that bear on it
 * (src/scope/calls.ts). What it skips must never read as "no change".
 */
const A = `${"a".repeat(40)} ${"b".repeat(40)}`;
const B = `${"c".repeat(40)} ${"d".repeat(40)}`;
const C = `${"e".repeat(40)} ${"f".repeat(40)}`;
const meta = ":100644 100644 1111111111111111111111111111111111111111 2222222222222222222222222222222222222222 M";
const few = (...paths: string[]) => ({ has: (p: string) => paths.includes(p), few: paths });

describe("reading kept pair diffs", () => {
  it("only the pairs asked for, each narrowed to the paths wanted; a .gitignore always; a damaged line never", () => {
    const store = realpathSync(mkdtempSync(join(tmpdir(), "unwind-pairs-")));
    appendPairDiffs(
      store,
      new Map([
        [A, [meta, "src/x.ts", meta, "src/y.ts"]],
        [B, [meta, "docs/z.md", meta, "sub/.gitignore", meta, "docs/naïve ünï.md"]],
      ]),
    );
    // A line for pair C whose sum does not match its text: asked of git again, even though it names no wanted path.
    const body = JSON.stringify([C, [meta, "other.txt"]]);
    appendFileSync(pairDiffsFile(store), `${"0".repeat(16)} ${body}\n`);

    // Every pair whole (the control: all three lines are there to be read, C's is refused for its sum).
    const all = readPairDiffs(
      store,
      new Map([
        [A, null],
        [B, null],
        [C, null],
      ]),
    );
    expect([...all.keys()]).toEqual([A, B]);
    expect(all.get(B)).toEqual([meta, "docs/z.md", meta, "sub/.gitignore", meta, "docs/naïve ünï.md"]);
    // A path beyond ASCII is found in the line's bytes as in its text.
    expect(readPairDiffs(store, new Map([[B, few("docs/naïve ünï.md")]])).get(B)).toEqual([meta, "sub/.gitignore", meta, "docs/naïve ünï.md"]);

    const some = readPairDiffs(
      store,
      new Map([
        [A, few("src/y.ts")],
        [B, few("src/y.ts")],
        [C, few("src/y.ts")],
      ]),
    );
    // A: only the wanted path. B: none of its paths wanted, but its .gitignore decides how others are read.
    expect(some.get(A)).toEqual([meta, "src/y.ts"]);
    expect(some.get(B)).toEqual([meta, "sub/.gitignore"]);
    expect(some.has(C)).toBe(false);

    // A pair not asked for is not read; one naming none of the few paths is empty without being parsed.
    const one = readPairDiffs(store, new Map([[A, few("nothing/here.ts")]]));
    expect([...one]).toEqual([[A, []]]);
    // The same with the path set large enough not to be searched for in the text: parsed and narrowed, the same answer.
    const many = { has: (p: string) => p === "nothing/here.ts" };
    expect([...readPairDiffs(store, new Map([[A, many]]))]).toEqual([[A, []]]);
  });

  it("one fold's read: the file read once for all it asks, a pair's later line read where its first is damaged", () => {
    const store = realpathSync(mkdtempSync(join(tmpdir(), "unwind-pairs-")));
    // Pair A's first line fails its sum; a later fold asked git again and appended the good one.
    mkdirSync(dirname(pairDiffsFile(store)), { recursive: true });
    appendFileSync(pairDiffsFile(store), `${"0".repeat(16)} ${JSON.stringify([A, [meta, "wrong.txt"]])}\n`);
    appendPairDiffs(
      store,
      new Map([
        [A, [meta, "src/x.ts"]],
        [B, [meta, "docs/z.md"]],
      ]),
    );
    const read = new PairDiffsRead(store);
    expect([...read.read(new Map([[A, null]]))]).toEqual([[A, [meta, "src/x.ts"]]]);
    // Gone from disk since: the second ask is answered from the first read.
    rmSync(pairDiffsFile(store));
    expect([...read.read(new Map([[B, null]]))]).toEqual([[B, [meta, "docs/z.md"]]]);
    // The control: a read of its own finds no file.
    expect(new PairDiffsRead(store).read(new Map([[B, null]])).size).toBe(0);
  });
});
