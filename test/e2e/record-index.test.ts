import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unwind, write } from "../helpers.js";
import { claudeCall, ev } from "../journal-helpers.js";
import { twoSessions } from "../session-fixture.js";

// The record index (src/store/record-index.ts): what `sessions` and `log`
// list, kept between commands. A cache: rebuilt whenever the record
// differs from what it was made of, and never read where the work tree is
// written. Each listing here is checked against the same listing made with
// no index at all (a full read of the record).

const SA = "5e1f0a2b-index-one";
const SB = "9c3d4e5f-index-two";

const store = (root: string) => join(root, ".git", "unwind");
const cacheDir = (root: string) => join(store(root), "cache");
const listings = (root: string) => ({
  sessions: JSON.parse(unwind(root, ["sessions", "--json"]).stdout),
  log: JSON.parse(unwind(root, ["log", "--json"]).stdout),
});
/** The same listings read from the record alone: the index removed first. */
const fromRecord = (root: string) => {
  rmSync(cacheDir(root), { recursive: true, force: true });
  return listings(root);
};
// The record index's own files: the cache holds others (the journal's facts, kept pair diffs) on their own terms.
const indexFiles = (root: string) =>
  existsSync(cacheDir(root))
    ? readdirSync(cacheDir(root))
        .filter((n) => n.startsWith("record-"))
        .sort()
    : [];

/** Rewrites the sessions part of the index with `edit` applied, keeping its key and a valid sum: an index that lies. */
function doctor(root: string, edit: (data: any) => void): void {
  const f = join(cacheDir(root), indexFiles(root).find((n) => n.endsWith(".sessions.json"))!);
  const text = readFileSync(f, "utf8");
  const doc = JSON.parse(text.slice(text.indexOf("\n") + 1));
  edit(doc.data);
  const body = JSON.stringify(doc);
  writeFileSync(f, `${createHash("sha256").update(body).digest("hex").slice(0, 16)}\n${body}`);
}

describe("the record index", () => {
  it("is written by a listing, read by the next, and lists what a full read of the record lists", () => {
    const root = twoSessions(SA, SB);
    expect(indexFiles(root)).toEqual([]);
    const first = listings(root);
    expect(indexFiles(root)).toEqual([
      // Each session's calls in a part of its own (a carry rewrites only those it adds to), and where they are.
      expect.stringMatching(/^record-[0-9a-f]{16}\.calls-[0-9a-f]{16}\.json$/),
      expect.stringMatching(/^record-[0-9a-f]{16}\.calls-[0-9a-f]{16}\.json$/),
      expect.stringMatching(/^record-[0-9a-f]{16}\.calls\.json$/),
      // What carries it forward once the record grows (src/scope/carry.ts).
      expect.stringMatching(/\.carry\.json$/),
      expect.stringMatching(/\.recent\.json$/),
      expect.stringMatching(/\.sessions\.json$/),
    ]);
    expect(listings(root)).toEqual(first);
    // A page of one session's calls: from the index's every-call part.
    const logB = JSON.parse(unwind(root, ["log", "--session", SB, "--json"]).stdout);
    expect(logB.calls.map((c: any) => c.session)).toEqual([`claude:${SB}`]);
    expect(fromRecord(root)).toEqual(first);
    expect(first.sessions.sessions.map((s: any) => [s.session, s.calls, s.paths])).toEqual([
      [`claude:${SB}`, 1, 1],
      [`claude:${SA}`, 2, 2],
    ]);
    // The shell call's paths come from its snapshots: kept in the index too.
    expect(first.log.calls.find((c: any) => c.tool === "Bash").paths).toEqual(["gen/out.txt"]);
  });

  it("is used while the record is unchanged (a doctored one shows), and rebuilt once a hook appends, a journal is edited or the index is damaged", () => {
    const root = twoSessions(SA, SB);
    listings(root);
    // Negative control: the index is what the listing reads. Doctored under the same key, it shows.
    doctor(root, (d) => {
      d[0].calls = 99;
    });
    expect(listings(root).sessions.sessions[0].calls).toBe(99);

    // A hook appends a call: the key changes, the listing is worked out again, and it is the full read's.
    claudeCall(root, SB, "Write", { file_path: join(root, "src/c.ts"), content: "c\n" }, () => write(root, "src/c.ts", "c\n"));
    const after = listings(root);
    expect(after.sessions.sessions[0]).toMatchObject({ session: `claude:${SB}`, calls: 2, paths: 2 });
    expect(fromRecord(root)).toEqual(after);

    // A journal edited in place, same size: its stat changes, and so does the key.
    listings(root);
    doctor(root, (d) => {
      d[0].calls = 99;
    });
    const dir = join(store(root), "journal");
    const j = join(dir, readdirSync(dir).find((f) => f.endsWith(".jsonl"))!);
    writeFileSync(j, readFileSync(j));
    expect(listings(root)).toEqual(after);

    // A damaged index (its sum fails) is never read.
    listings(root);
    const f = join(cacheDir(root), indexFiles(root).find((n) => n.endsWith(".sessions.json"))!);
    writeFileSync(f, readFileSync(f, "utf8").replace('"calls":2', '"calls":7'));
    expect(listings(root)).toEqual(after);
    // Nor one torn short.
    writeFileSync(f, readFileSync(f, "utf8").slice(0, 40));
    expect(listings(root)).toEqual(after);
  });

  it("lists a call left open as a full read does: the listing closes it (SPEC section 2), and only a settled record is kept", () => {
    const root = twoSessions(SA, SB);
    listings(root);
    ev(root, SA, "PreToolUse", "Bash", { command: "touch late.txt" }, "toolu_open_1");
    write(root, "late.txt", "late\n");
    // The pre left the call open (journal/<session>.open): no key vouches for a window reaching to now.
    expect(readdirSync(join(store(root), "journal")).some((f) => f.endsWith(".open"))).toBe(true);
    const first = listings(root);
    expect(first.log.calls[0]).toMatchObject({ tool: "Bash", paths: ["late.txt"] });
    // The read closed it: a closing record in the journal; the session's open calls keep it only marked closed, for its own post.
    const journal = readdirSync(join(store(root), "journal"));
    expect(journal.filter((f) => f.endsWith(".jsonl")).some((f) => readFileSync(join(store(root), "journal", f), "utf8").includes('"closedBy":"read"'))).toBe(true);
    for (const f of journal.filter((f) => f.endsWith(".open")))
      expect(JSON.parse(readFileSync(join(store(root), "journal", f), "utf8")).every((o: { readClosed?: boolean }) => o.readClosed)).toBe(true);
    // Closed for good by that read (its closing record is newer than what the first listing summed up): settled now.
    const settled = listings(root);
    expect(settled.log.calls[0]).toMatchObject({ tool: "Bash", paths: ["late.txt"] });
    expect(indexFiles(root)).toHaveLength(6);
    expect(fromRecord(root)).toEqual(settled);
  });

  it("is rebuilt after a receipt: an undo changes what the listing is made of", () => {
    const root = twoSessions(SA, SB);
    listings(root);
    doctor(root, (d) => {
      d[0].calls = 99;
    });
    expect(unwind(root, ["undo", "--session", SB]).code).toBe(0);
    const after = listings(root);
    expect(after.sessions.sessions[0].calls).toBe(1);
    expect(fromRecord(root)).toEqual(after);
    appendFileSync(join(root, "README.md"), "more\n"); // the work tree alone changes nothing listed
    expect(listings(root)).toEqual(after);
  });

  it("names a change's writers by the short ids it keeps, or carries forward to the record's key: what the journal read whole gives", () => {
    const root = twoSessions(SA, SB);
    const changes = () => {
      const r = unwind(root, ["changes", "--session", SA]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    // From the journal read whole: no index, and none worked out for the names.
    const read = changes();
    expect(read).toContain("ex-one");
    expect(indexFiles(root)).toEqual([]);
    listings(root);
    expect(changes()).toBe(read);
    // Another session's call since: the index carried forward by `changes` itself, under the record's new key.
    const key = () => JSON.parse(readFileSync(join(cacheDir(root), indexFiles(root).find((n) => n.endsWith(".sessions.json"))!), "utf8").split("\n")[1]!).key;
    const before = key();
    claudeCall(root, SB, "Write", { file_path: join(root, "src/c.ts"), content: "c\n" }, () => write(root, "src/c.ts", "c\n"));
    expect(changes()).toBe(read);
    expect(key()).not.toBe(before);
    // Negative control: the names are the index's. A session added to it under its key, sharing SA's last ten characters, lengthens SA's.
    doctor(root, (d) => {
      d.push({ ...d[0], session: "claude:zzzzzzzz-index-one" });
    });
    const doctored = changes();
    expect(doctored).toContain("b-index-one");
    expect(doctored).not.toBe(read);
  });
});
