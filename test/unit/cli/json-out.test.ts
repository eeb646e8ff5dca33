import { Writable } from "node:stream";
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

  /** A stream whose reader takes a chunk a turn of the event loop, as a pipe's slower reader does; `queued` is the most it ever held. */
  function slowReader(): { out: Writable; chunks: string[]; queued: () => number } {
    const chunks: string[] = [];
    let most = 0;
    const out = new Writable({
      highWaterMark: 64 * 1024,
      decodeStrings: false,
      write(chunk: string, _enc, done) {
        chunks.push(chunk);
        setImmediate(done);
      },
    });
    const write = out.write.bind(out);
    out.write = ((chunk: string) => {
      const ok = write(chunk);
      most = Math.max(most, out.writableLength);
      return ok;
    }) as typeof out.write;
    return { out, chunks, queued: () => most };
  }

  const big = { items: Array.from({ length: 40_000 }, (_, i) => ({ path: `dir/${i}/file.ts`, action: "restore", pre: { kind: "file", sha256: "a".repeat(64) } })) };

  it("writes it some 64 KiB at a time, waiting for a slow reader, with the newline the command line ends it with", async () => {
    const { out, chunks, queued } = slowReader();
    await writeJson(out, big, 2);
    expect(chunks.join("")).toBe(`${JSON.stringify(big, null, 2)}\n`);
    expect(chunks.length).toBeGreaterThan(5); // one write would be the whole text
    expect(queued()).toBeLessThan(256 * 1024);
  });

  it("the control: the same parts written without waiting pile up in the stream", async () => {
    const { out, chunks, queued } = slowReader();
    for (const p of jsonParts(big, 2)) out.write(p);
    await new Promise<void>((resolve) => out.end(resolve));
    expect(chunks.join("")).toBe(JSON.stringify(big, null, 2));
    expect(queued()).toBeGreaterThan(4 * 1024 * 1024);
  });
});
