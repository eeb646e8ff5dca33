import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, unwind } from "../helpers.js";
import { twoSessions } from "../session-fixture.js";

/*
 * `unwind status` counts the journal from each file's facts
 * (src/store/journal.ts, `journalCensus`) where the file's stat is the one
 * they were worked out under, and reads the others. Facts are kept only for
 * a file that had not changed for two seconds: the test waits that long once.
 */

const A = "census-aaaa-1111";
const B = "census-bbbb-2222";

/** `unwind status --json`, and the journal files it opened (strace sees every openat). */
function statusOpening(root: string): { json: Record<string, unknown>; opened: string[] } {
  const log = join(mkdtempSync(join(tmpdir(), "unwind-strace-")), "trace");
  const r = spawnSync("strace", ["-f", "-e", "trace=openat", "-o", log, process.execPath, BIN, "status", "--json"], { cwd: root, encoding: "utf8", timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  const opened = readFileSync(log, "utf8")
    .split("\n")
    .flatMap((l) => /journal\/([^"/]+\.jsonl)"/.exec(l)?.[1] ?? []);
  return { json: JSON.parse(r.stdout), opened: [...new Set(opened)].sort() };
}

const counts = (j: Record<string, unknown>) => ({ sessions: j.sessions, records: j.records, damagedRecords: j.damagedRecords, imported: j.imported });

describe("unwind status counts the journal from what it knows of each file", () => {
  it("a settled file is counted from its facts, unread, with the same figures, a damaged line included; a file whose stat moved is read again", async () => {
    const root = twoSessions(A, B);
    const dir = join(root, ".git", "unwind", "journal");
    const fileA = readdirSync(dir).find((f) => readFileSync(join(dir, f), "utf8").includes(A))!;
    appendFileSync(join(dir, fileA), '{"broken":\n');
    const read = unwind(root, ["status", "--json"]).json;
    expect(counts(read)).toEqual({ sessions: 2, records: 6, damagedRecords: 1, imported: { calls: 0, sessions: 0, missedByHooks: 0 } });
    await new Promise((r) => setTimeout(r, 2300));
    // The first status after the files settled works their facts out; the next counts from them.
    expect(counts(statusOpening(root).json)).toEqual(counts(read));
    const kept = statusOpening(root);
    expect([kept.opened, counts(kept.json)]).toEqual([[], counts(read)]);
    // Control: a file whose times moved is read again, and counted the same.
    const t = Date.now() / 1000;
    utimesSync(join(dir, fileA), t, t);
    const again = statusOpening(root);
    expect([again.opened, counts(again.json)]).toEqual([[fileA], counts(read)]);
  });
});
