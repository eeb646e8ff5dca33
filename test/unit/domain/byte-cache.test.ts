import { describe, expect, it } from "vitest";
import { ByteCache } from "../../../src/domain/byte-cache.js";

const bytes = (n: number, fill = 1) => Buffer.alloc(n, fill);

describe("ByteCache: reuse within a budget", () => {
  it("keeps what fits, and gives it back", () => {
    const c = new ByteCache(100);
    c.set("a", bytes(20, 1));
    c.set("b", bytes(20, 2));
    expect(c.get("a")?.[0]).toBe(1);
    expect(c.get("b")?.[0]).toBe(2);
    expect(c.size).toBe(40);
  });
  it("never holds more than its budget: the oldest go first", () => {
    const c = new ByteCache(100);
    for (let i = 0; i < 10; i++) {
      c.set(`k${i}`, bytes(25, i));
      expect(c.size).toBeLessThanOrEqual(100);
    }
    expect(c.has("k0")).toBe(false);
    expect(c.has("k9")).toBe(true);
    expect(c.size).toBe(100);
  });
  it("does not keep one buffer over a quarter of the budget (negative control: a quarter exactly is kept)", () => {
    const c = new ByteCache(100);
    c.set("big", bytes(26));
    expect(c.has("big")).toBe(false);
    c.set("fits", bytes(25));
    expect(c.has("fits")).toBe(true);
  });
  it("keeps nothing over its own item limit when one is given", () => {
    const c = new ByteCache(100, 10);
    c.set("big", bytes(11));
    c.set("small", bytes(10));
    expect([c.has("big"), c.has("small")]).toEqual([false, true]);
  });
  it("setting a key again replaces it and counts it once", () => {
    const c = new ByteCache(100);
    c.set("a", bytes(20));
    c.set("a", bytes(10));
    expect(c.size).toBe(10);
    c.delete("a");
    expect(c.size).toBe(0);
    expect(c.get("a")).toBeUndefined();
  });
  it("counts what each entry costs besides its bytes against the budget (negative control: without it, every small entry fits)", () => {
    const fill = (perEntry: number) => {
      const c = new ByteCache(1000, 250, perEntry);
      for (let i = 0; i < 20; i++) c.set(`k${i}`, bytes(10, i));
      return [...Array(20).keys()].filter((i) => c.has(`k${i}`));
    };
    // 20 entries of 10 bytes: 200 bytes, under the budget; at 90 a head, only 10 fit, the newest.
    expect(fill(0)).toHaveLength(20);
    expect(fill(90)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
  });
  it("a key set again is the newest: the oldest other goes first (negative control: left alone, it goes first)", () => {
    const evicted = (again: boolean) => {
      const c = new ByteCache(100);
      for (const k of ["a", "b", "c", "d"]) c.set(k, bytes(25));
      if (again) c.set("a", bytes(25));
      c.set("e", bytes(25));
      return ["a", "b", "c", "d", "e"].filter((k) => !c.has(k));
    };
    expect(evicted(false)).toEqual(["a"]);
    expect(evicted(true)).toEqual(["b"]);
  });
  it("through many thousands of sets, deletes and sets again, keeps the newest that fit and counts them right", () => {
    const c = new ByteCache(1000, 250, 0);
    for (let i = 0; i < 20_000; i++) {
      c.set(`k${i}`, bytes(10, i & 0xff));
      if (i % 3 === 0) c.delete(`k${i - 1}`);
      if (i % 7 === 0) c.set(`k${i - 2}`, bytes(10, 7));
    }
    const held = [...Array(20_000).keys()].filter((i) => c.has(`k${i}`));
    expect(c.size).toBe(held.length * 10);
    expect(held.length).toBe(100);
    // The newest held is the last set; nothing older than the newest evicted one but what was set again.
    expect(held.at(-1)).toBe(19_999);
    expect(held.every((i) => i >= 19_800)).toBe(true);
  });
});
