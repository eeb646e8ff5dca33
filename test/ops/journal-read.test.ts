import { describe, expect, it } from "vitest";
import { mkdtempSync, openSync, readFileSync, realpathSync, statSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { append, readJournal, sessionFile, settled } from "../../src/store/journal.js";
import { fileRecord } from "../journal-helpers.js";
import { writeFileAtomic } from "../../src/sys/atomic.js";

/*
 * A long-lived reader (the MCP and UI servers, a library user) keeps each
 * journal file it read under the file's stat and reads again only the files
 * written since. It must still see every append, every rewrite and every
 * damaged line exactly as a first read would.
 */
const rec = fileRecord;

describe("readJournal across reads", () => {
  it("reads again exactly the files that changed: appends, a gc rewrite and an edited line all show", async () => {
    const store = realpathSync(mkdtempSync(join(tmpdir(), "unwind-jread-")));
    append(store, [rec("claude:s1", "c1", "2026-12-01T00:00:01.000Z"), rec("claude:s1", "c1", "2026-12-01T00:00:02.000Z", "post")]);
    append(store, [rec("claude:s2", "d1", "2026-12-01T00:00:03.000Z")]);
    // Files changed in the last two seconds are read again every time (the racy rule below): wait them out.
    await sleep(2100);
    const first = readJournal(store);
    expect(first.records.map((r) => r.call)).toEqual(["c1", "c1", "d1"]);
    const second = readJournal(store);
    // Kept: the same objects, not a second parse (the control for every "read again" below).
    expect(second.records[2]).toBe(first.records[2]);
    // Shared, so no caller may change one.
    expect(() => {
      (second.records[0] as { at: string }).at = "x";
    }).toThrow(TypeError);

    append(store, [rec("claude:s1", "c2", "2026-12-01T00:00:04.000Z")]);
    const third = readJournal(store);
    expect(third.records.map((r) => r.call)).toEqual(["c1", "c1", "d1", "c2"]);
    // s2's file did not change: still the objects read before.
    expect(third.records[2]).toBe(first.records[2]);

    // gc rewrites a file by renaming a new one over it.
    const s1 = sessionFile(store, "claude:s1");
    const lines = readFileSync(s1, "utf8").split("\n");
    writeFileAtomic(s1, `${lines.slice(2).join("\n")}`);
    expect(readJournal(store).records.map((r) => r.call)).toEqual(["d1", "c2"]);

    // An edit in place that keeps the size: the checksum finds it, so the file was read again.
    await sleep(2100);
    expect(readJournal(store).damaged).toEqual([]);
    const s2 = sessionFile(store, "claude:s2");
    const text = readFileSync(s2, "utf8");
    const at = text.indexOf("00:00:03");
    const fd = openSync(s2, "r+");
    writeSync(fd, "9", at + 7);
    closeSync(fd);
    expect(statSync(s2).size).toBe(Buffer.byteLength(text));
    const edited = readJournal(store);
    expect(edited.damaged).toEqual([{ file: s2.slice(s2.lastIndexOf("/") + 1), line: 1, why: "checksum mismatch (altered)" }]);
    expect(edited.records.map((r) => r.call)).toEqual(["c2"]);
  }, 20_000);

  it("a file just appended to is parsed only past its earlier lines, and only while those are the bytes they were", () => {
    const store = realpathSync(mkdtempSync(join(tmpdir(), "unwind-jread-")));
    append(store, [rec("claude:s1", "c1", "2026-12-01T00:00:01.000Z"), rec("claude:s1", "c1", "2026-12-01T00:00:02.000Z", "post")]);
    const first = readJournal(store);
    append(store, [rec("claude:s1", "c2", "2026-12-01T00:00:03.000Z")]);
    const second = readJournal(store);
    expect(second.records.map((r) => r.call)).toEqual(["c1", "c1", "c2"]);
    // Its two earlier lines were not parsed again: the same objects.
    expect(second.records[0]).toBe(first.records[0]);
    // A line torn by a crash is read as damaged each time, and the records after it still count.
    const s1 = sessionFile(store, "claude:s1");
    const fd = openSync(s1, "a");
    writeSync(fd, '{"v":1,"at":"2026-12-01T00:00:0');
    closeSync(fd);
    expect(readJournal(store).damaged).toEqual([{ file: s1.slice(s1.lastIndexOf("/") + 1), line: 4, why: "not valid JSON (torn or truncated)" }]);
    append(store, [rec("claude:s1", "c3", "2026-12-01T00:00:05.000Z")]);
    const torn = readJournal(store);
    expect(torn.records.map((r) => r.call)).toEqual(["c1", "c1", "c2", "c3"]);
    expect(torn.damaged.map((d) => d.line)).toEqual([4]);
    // An earlier line edited (the size kept, within the same second): its hash differs, so it is parsed again and found.
    const text = readFileSync(s1, "utf8");
    const w = openSync(s1, "r+");
    writeSync(w, "9", text.indexOf("00:00:01") + 7);
    closeSync(w);
    const edited = readJournal(store);
    expect(edited.damaged.map((d) => [d.line, d.why])).toEqual([
      [1, "checksum mismatch (altered)"],
      [4, "not valid JSON (torn or truncated)"],
    ]);
    expect(edited.records.map((r) => r.call)).toEqual(["c1", "c2", "c3"]);
  });

  it("keeps a file only once its times are two seconds old: an edit within the file system's clock tick cannot hide", () => {
    const now = Date.parse("2026-12-03T12:00:10.000Z");
    const at = (iso: string) => BigInt(Date.parse(iso)) * 1_000_000n;
    expect(settled({ ctimeNs: at("2026-12-03T12:00:07.000Z"), mtimeNs: at("2026-12-03T12:00:07.000Z") }, now)).toBe(true);
    // Changed 1.5 s ago: read again next time, whatever its stat says.
    expect(settled({ ctimeNs: at("2026-12-03T12:00:08.500Z"), mtimeNs: at("2026-12-03T12:00:07.000Z") }, now)).toBe(false);
    expect(settled({ ctimeNs: at("2026-12-03T12:00:07.000Z"), mtimeNs: at("2026-12-03T12:00:08.500Z") }, now)).toBe(false);
  });
});
