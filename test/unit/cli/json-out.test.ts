import { describe, expect, it } from "vitest";
import { jsonParts, writeJson } from "../../../src/cli/json-out.js";

/** Values whose text JSON.stringify decides in every way it can: left-out keys, nulls in arrays, toJSON, nesting, escapes. */
const VALUES: unknown[] = [
  { receipt: null, scope: { kind: "session", id: "s-1" }, items: [{ path: "a\nb", pre: { kind: "file", mode: "100644" }, now: { kind: "absent" } }], counts: { restore: 1 } },
  { a: [], b: {}, c: [[]], d: [{}], e: [[1, [2, [3, { f: [4] }]]]] },
  { gone: undefined, fn: () => 1, sym: Symbol("s"), kept: 0, arr: [undefined, () => 1, Symbol("t"), null, new Array(1)[0], 5], holes: new Array(3) },
  { at: new Date(0), nested: { at: new Date(1), deeper: { at: new Date(2) } }, withToJSON: { toJSON: () => ({ x: [1, 2] }) }, none: { toJSON: () => undefined } },
  { 'key "quoted"\n': "é 😀 \u0000 \u2028", "": "", n: -0, big: 1e21, nan: Number.NaN, inf: -Infinity },
  Object.assign(Object.create(null) as object, { proto: "none", inner: Object.assign(Object.create(null) as object, { x: 1 }) }),
  [],
  {},
  [[], {}, "s", 1, true, null],
  "just a string",
  42,
  null,
  { items: Array.from({ length: 3000 }, (_, i) => ({ path: `p/${i}`, n: i, states: [{ a: i }, null] })) },
];

describe("--json written in parts", () => {
  for (const indent of [2, 0]) {
    it(`is JSON.stringify's text exactly, indent ${indent}`, () => {
      for (const v of VALUES) expect([...jsonParts(v, indent)].join("")).toBe(JSON.stringify(v, null, indent));
    });
  }

  it("writes it some 64 KiB at a time, with the newline the command line ends it with", () => {
    const big = { items: Array.from({ length: 40_000 }, (_, i) => ({ path: `dir/${i}/file.ts`, action: "restore", pre: { kind: "file", sha256: "a".repeat(64) } })) };
    const writes: string[] = [];
    writeJson({ write: (s: string) => writes.push(s) }, big, 2);
    expect(writes.join("")).toBe(`${JSON.stringify(big, null, 2)}\n`);
    expect(writes.length).toBeGreaterThan(5); // the control on "in parts": one write would be the whole text
    expect(Math.max(...writes.map((w) => w.length))).toBeLessThan(128 * 1024);
  });
});
