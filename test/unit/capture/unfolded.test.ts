import { describe, expect, it } from "vitest";
import { overPending, type Pending, type PendingEntry, type StatKey } from "../../../src/capture/unfolded.js";

describe("pure: what a snapshot takes from the last one's pending record", () => {
  const stat = (mtimeMs: number, size = 10): StatKey => [7, 0o100644, size, mtimeMs, mtimeMs];
  const file = (oid: string, s: StatKey | null): PendingEntry => ({ entry: { mode: "100644", oid }, stat: s });
  const record = (entries: [string, PendingEntry][], writtenMs = 1000): Pending => ({ base: "b", tree: "t", entries: new Map(entries), writtenMs });

  it("a path whose stat data is the same, and older than the record, is kept without reading it", () => {
    const r = overPending(record([["a", file("1", stat(500))]]), new Map([["a", stat(500)]]));
    expect(r).toEqual({ kept: new Map([["a", file("1", stat(500))]]), rehash: [], gone: [] });
  });

  it("a path whose stat data changed in any field is read again", () => {
    const was = stat(500);
    for (let i = 0; i < was.length; i++) {
      const now = [...was] as unknown as StatKey;
      (now as unknown as number[])[i] = was[i]! + 1;
      expect(overPending(record([["a", file("1", was)]]), new Map([["a", now]]))?.rehash, `field ${i}`).toEqual(["a"]);
    }
  });

  it("racy-git: the same stat data with an mtime not older than the record is read again", () => {
    expect(overPending(record([["a", file("1", stat(1000))]], 1000), new Map([["a", stat(1000)]]))?.rehash).toEqual(["a"]);
    expect(overPending(record([["a", file("1", stat(999))]], 1000), new Map([["a", stat(999)]]))?.rehash).toEqual([]); // negative control
  });

  it("absences: kept while absent, gone once the file is deleted, read when it comes back", () => {
    const gone: PendingEntry = { entry: null, stat: null };
    expect(overPending(record([["a", gone]]), new Map([["a", null]]))?.kept.get("a")).toEqual(gone);
    expect(overPending(record([["a", file("1", stat(5))]]), new Map([["a", null]]))?.gone).toEqual(["a"]);
    expect(overPending(record([["a", gone]]), new Map([["a", stat(5)]]))?.rehash).toEqual(["a"]);
  });

  it("a .gitattributes read again or gone makes it unusable: the kept files may hash differently now", () => {
    expect(
      overPending(
        record([["a", file("1", stat(5))]]),
        new Map([
          ["a", stat(5)],
          ["d/.gitattributes", stat(6)],
        ]),
      ),
    ).toBeNull();
    expect(
      overPending(
        record([
          ["a", file("1", stat(5))],
          [".gitattributes", file("2", stat(5))],
        ]),
        new Map([
          ["a", stat(5)],
          [".gitattributes", null],
        ]),
      ),
    ).toBeNull();
    // Negative control: an unchanged one is kept like any file.
    expect(
      overPending(
        record([
          ["a", file("1", stat(5))],
          [".gitattributes", file("2", stat(5))],
        ]),
        new Map([
          ["a", stat(5)],
          [".gitattributes", stat(5)],
        ]),
      )?.kept.size,
    ).toBe(2);
  });

  it("new paths are read; a path the record holds that no longer differs from the index tree makes it unusable", () => {
    expect(
      overPending(
        record([["a", file("1", stat(5))]]),
        new Map([
          ["a", stat(5)],
          ["b", stat(6)],
        ]),
      )?.rehash,
    ).toEqual(["b"]);
    expect(overPending(record([["a", file("1", stat(5))]]), new Map([["b", stat(6)]]))).toBeNull();
  });
});
