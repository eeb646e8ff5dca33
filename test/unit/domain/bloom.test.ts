import { describe, expect, it } from "vitest";
import { bloomMayHold, bloomOfStrings } from "../../../src/domain/bloom.js";

/* The paths a kept change set remembers (src/scope/carry.ts): a "no" must never be wrong, a "maybe" costs a fold. */

const paths = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `pkg${i % 97}/src/${tag}${i}.ts`);

describe("a Bloom filter of paths", () => {
  it("never says no to a path it holds, at any size", () => {
    for (const n of [0, 1, 50, 5_000, 100_000]) {
      const held = paths(n, "mod");
      const b = bloomOfStrings(held, held.length);
      expect(held.filter((p) => !bloomMayHold(b, p))).toEqual([]);
    }
  });

  it("holds odd names: not UTF-8 as read (U+FFFD), astral, empty, long", () => {
    const held = ["", "caf\u00e9", "\ud83d\ude00/x", "a\uFFFDb", "x".repeat(5000), "new\nline"];
    const b = bloomOfStrings(held, held.length);
    for (const p of held) expect(bloomMayHold(b, p)).toBe(true);
  });

  it("says no to nearly every path it does not hold (about one in a hundred may read maybe)", () => {
    const b = bloomOfStrings(paths(10_000, "mod"), 10_000);
    const others = paths(10_000, "other");
    const maybe = others.filter((p) => bloomMayHold(b, p)).length;
    expect(maybe).toBeLessThan(250);
    // The control: the same paths held read maybe, every one.
    expect(paths(10_000, "mod").filter((p) => bloomMayHold(b, p))).toHaveLength(10_000);
  });

  it("reads a table it did not make as maybe, never as no", () => {
    expect(bloomMayHold({ bits: new Uint8Array(3) }, "a.txt")).toBe(true);
    expect(bloomMayHold({ bits: new Uint8Array(0) }, "a.txt")).toBe(true);
    // The control: a table of its own size says no to a path not in it.
    expect(bloomMayHold(bloomOfStrings([], 0), "a.txt")).toBe(false);
  });
});
