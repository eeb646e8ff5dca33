import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { append, appendedSince, journalMarks, sessionFile } from "../../src/store/journal.js";
import { fileRecord } from "../journal-helpers.js";

/*
 * What a kept change set carried forward reads of the journal
 * (src/scope/carry.ts): only what was appended since its marks, and nothing
 * at all where the journal did more than grow.
 */
const rec = fileRecord;
const MB = 1024 * 1024;

function marked(): { store: string; marks: ReturnType<typeof journalMarks> } {
  const store = realpathSync(mkdtempSync(join(tmpdir(), "unwind-jappend-")));
  append(store, [rec("claude:s1", "c1", "2026-12-01T00:00:01.000Z"), rec("claude:s1", "c1", "2026-12-01T00:00:02.000Z", "post")]);
  append(store, [rec("claude:s2", "d1", "2026-12-01T00:00:03.000Z")]);
  return { store, marks: journalMarks(store) };
}

describe("the journal appended since a kept change set's marks", () => {
  it("is the records past each mark and those of files made since, in time order", () => {
    const { store, marks } = marked();
    expect(appendedSince(store, marks, MB)).toEqual({ records: [], marks });
    append(store, [rec("claude:s2", "d2", "2026-12-01T00:00:05.000Z")]);
    append(store, [rec("claude:s3", "e1", "2026-12-01T00:00:04.000Z")]);
    const got = appendedSince(store, marks, MB);
    expect(got?.records.map((r) => r.call)).toEqual(["e1", "d2"]);
    // Its marks are the journal's now: asked again from them, nothing more.
    expect(got?.marks).toEqual(journalMarks(store));
    expect(appendedSince(store, got!.marks, MB)?.records).toEqual([]);
  });

  it("is nothing where the journal did more than grow, or grew past the limit", () => {
    const cases: [string, (store: string) => void][] = [
      [
        "a file rewritten (another inode), its bytes the same and one more record",
        (store) => {
          const f = sessionFile(store, "claude:s1");
          copyFileSync(f, `${f}.new`);
          appendFileSync(`${f}.new`, readFileSync(sessionFile(store, "claude:s2")));
          renameSync(`${f}.new`, f);
        },
      ],
      ["a file written again in place, the same length", (store) => writeFileSync(sessionFile(store, "claude:s1"), readFileSync(sessionFile(store, "claude:s1")))],
      ["a file cut shorter", (store) => truncateSync(sessionFile(store, "claude:s1"), 10)],
      ["a file emptied", (store) => writeFileSync(sessionFile(store, "claude:s1"), "")],
      ["a file gone", (store) => rmSync(sessionFile(store, "claude:s1"))],
      ["a line appended without its end (a write under way)", (store) => appendFileSync(sessionFile(store, "claude:s2"), '{"v":1')],
      ["a damaged line appended", (store) => appendFileSync(sessionFile(store, "claude:s2"), '{"v":1,"sum":"0"}\n')],
    ];
    for (const [what, act] of cases) {
      const { store, marks } = marked();
      // The control: a plain append is read.
      append(store, [rec("claude:s2", "d2", "2026-12-01T00:00:05.000Z")]);
      expect(
        appendedSince(store, marks, MB)?.records.map((r) => r.call),
        what,
      ).toEqual(["d2"]);
      act(store);
      expect(appendedSince(store, marks, MB), what).toBeNull();
    }
    const { store, marks } = marked();
    append(store, [rec("claude:s2", "d2", "2026-12-01T00:00:05.000Z")]);
    const size = readFileSync(sessionFile(store, "claude:s2")).length - marks[sessionFile(store, "claude:s2").split("/").at(-1)!]!.size;
    expect(appendedSince(store, marks, size)?.records).toHaveLength(1);
    expect(appendedSince(store, marks, size - 1)).toBeNull();
  });
});
