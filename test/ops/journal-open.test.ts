import { describe, expect, it } from "vitest";
import { anyOpen, bloomHas, bloomOf, type FileRecord } from "../../src/store/journal.js";
import { callWindows } from "../../src/scope/fold/windows.js";
import { OPEN } from "../../src/scope/fold/timeline.js";

/*
 * A windowed fold leaves a journal file unread only if no call in it is
 * open (src/store/journal.ts, `anyOpen`): the rule must be `callWindows`'
 * own, run by run where a call id repeats.
 */
const rec = (call: string, at: string, phase: "pre" | "post", more: Partial<FileRecord> = {}): FileRecord => ({
  v: 1,
  at,
  session: "claude:s",
  harness: "claude",
  tool: "Bash",
  call,
  phase,
  kind: "file",
  path: "a.txt" as FileRecord["path"],
  state: null,
  ...more,
});

// In time order, as readJournal hands records to the fold.
const openByWindows = (records: FileRecord[]) =>
  callWindows(
    [...records].sort((a, b) => (a.at < b.at ? -1 : 1)),
    [],
  ).some((w) => w.end === OPEN);

describe("anyOpen", () => {
  const cases: [string, FileRecord[]][] = [
    ["a pre with no post", [rec("c1", "2026-01-01T00:00:01Z", "pre")]],
    ["a pre and its post", [rec("c1", "2026-01-01T00:00:01Z", "pre"), rec("c1", "2026-01-01T00:00:02Z", "post")]],
    ["a background command's own post", [rec("c1", "2026-01-01T00:00:01Z", "pre"), rec("c1", "2026-01-01T00:00:02Z", "post", { background: true })]],
    [
      "a background command closed at the session's next call",
      [rec("c1", "2026-01-01T00:00:01Z", "pre"), rec("c1", "2026-01-01T00:00:02Z", "post", { background: true }), rec("c1", "2026-01-01T00:00:03Z", "post", { closedBy: "background" })],
    ],
    // The id repeats: the first run runs on in the background, the second ended. callWindows keeps the first open.
    [
      "an earlier run of a repeated id still running in the background",
      [rec("c1", "2026-01-01T00:00:01Z", "pre"), rec("c1", "2026-01-01T00:00:02Z", "post", { background: true }), rec("c1", "2026-01-01T00:00:03Z", "pre"), rec("c1", "2026-01-01T00:00:04Z", "post")],
    ],
    [
      "a repeated id, both runs ended",
      [rec("c1", "2026-01-01T00:00:01Z", "pre"), rec("c1", "2026-01-01T00:00:02Z", "post"), rec("c1", "2026-01-01T00:00:03Z", "pre"), rec("c1", "2026-01-01T00:00:04Z", "post")],
    ],
    ["records appended out of time order", [rec("c1", "2026-01-01T00:00:02Z", "post"), rec("c1", "2026-01-01T00:00:01Z", "pre")]],
  ];
  for (const [name, records] of cases) {
    it(`says what callWindows says: ${name}`, () => {
      expect(anyOpen(records)).toBe(openByWindows(records));
    });
  }

  it("the cases hold both answers (the comparison can fail)", () => {
    expect(cases.map(([, r]) => anyOpen(r))).toEqual([true, false, true, false, true, false, false]);
  });
});

describe("the call ids a file holds (its facts' Bloom filter)", () => {
  for (const n of [0, 40, 500, 5000]) {
    it(`holds every one of ${n} ids, and few others`, () => {
      const ids = new Set(Array.from({ length: n }, (_, i) => `toolu_${i}_${i * 7}`));
      const bloom = bloomOf(ids);
      for (const id of ids) expect(bloomHas(bloom, id)).toBe(true);
      // A false "may" costs a whole-record fold: a session of 500 calls must not say "may" of most ids.
      let may = 0;
      for (let i = 0; i < 10_000; i++) if (bloomHas(bloom, `call_${i}`)) may++;
      expect(may).toBeLessThan(20);
    });
  }
});
