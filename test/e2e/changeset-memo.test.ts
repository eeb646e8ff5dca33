import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { open } from "../../src/index.js";
import { journalChangeSet } from "../../src/scope/calls.js";
import { git, makeRepo, write } from "../helpers.js";
import { claudeCall, claudePayload, hook } from "../journal-helpers.js";

/*
 * A process keeps the last change sets it folded, each with the record's
 * stamp (src/scope/calls.ts, journalChangeSet): the UI asks for one session
 * again for every page of hunks and for the undo preview. What it keeps must
 * never be served once the record, or the work tree an open call is closed
 * by, has moved on.
 */

const write1 = (root: string, session: string, rel: string, text: string) => claudeCall(root, session, "Write", { file_path: join(root, rel), content: text }, () => write(root, rel, text));

describe("a change set asked for again by the same process", () => {
  it("sees a new call, an undo and a redo at once", async () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    write1(root, "s1", "a.txt", "A\n");
    const u = await open({ root, keepChangeSets: true });
    const paths = async () => (await u.changes({ session: "s1" })).entries.map((e) => `${e.change} ${e.path}`);
    expect(await paths()).toEqual(["modified a.txt"]);
    expect(await paths()).toEqual(["modified a.txt"]);
    write1(root, "s1", "b.txt", "B\n");
    expect(await paths()).toEqual(["modified a.txt", "modified b.txt"]);
    const undone = await u.undo({ session: "s1" });
    expect(await paths()).toEqual([]);
    await u.redo(undone.receipt!);
    expect(await paths()).toEqual(["modified a.txt", "modified b.txt"]);
    // Another session's call on the same path: the first session's change set stays, the second has its own.
    write1(root, "s2", "a.txt", "AA\n");
    expect(await paths()).toEqual(["modified a.txt", "modified b.txt"]);
    expect((await u.changes({ session: "s2" })).entries.map((e) => e.path)).toEqual(["a.txt"]);
  });

  it("is folded again while a call is open: the call is closed by the work tree as it is now", async () => {
    const root = makeRepo({ "x.txt": "0\n" });
    const input = { command: "echo 1 > x.txt", description: "x" };
    expect(hook(root, "claude", claudePayload(root, "shell", "PreToolUse", "Bash", input, "toolu_open1")).code).toBe(0);
    write(root, "x.txt", "1\n");
    const u = await open({ root, keepChangeSets: true });
    // A dry run closes the open call in memory only, by the tree now: nothing is written, the stamp stays.
    const post = async () => (await u.plan({ session: "shell" })).items.map((i) => `${i.path} ${i.post?.oid}`);
    expect(await post()).toEqual([`x.txt ${git(root, "hash-object", "x.txt").trim()}`]);
    write(root, "x.txt", "2\n");
    // Kept from before, the call would still have left "1".
    expect(await post()).toEqual([`x.txt ${git(root, "hash-object", "x.txt").trim()}`]);
    // The control: once the call is closed by its own post, a second ask gives what the first did.
    expect(hook(root, "claude", claudePayload(root, "shell", "PostToolUse", "Bash", input, "toolu_open1")).code).toBe(0);
    const closed = await post();
    write(root, "x.txt", "3\n");
    expect(await post()).toEqual(closed);
  });

  it("hands each caller its own copy", async () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    write1(root, "s1", "a.txt", "A\n");
    write1(root, "s1", "b.txt", "B\n");
    const u = await open({ root, keepChangeSets: true });
    const ask = () => journalChangeSet(u.context, { kind: "session", id: "s1" }, {});
    const first = await ask();
    first.cs.entries.length = 0;
    first.touched.clear();
    const second = await ask();
    expect(second.cs.entries.map((e) => e.path)).toEqual(["a.txt", "b.txt"]);
    expect([...second.touched].sort()).toEqual(["a.txt", "b.txt"]);
    second.cs.entries[0]!.path = "z.txt" as never;
    expect((await ask()).cs.entries.map((e) => e.path)).toEqual(["a.txt", "b.txt"]);
  });
});
