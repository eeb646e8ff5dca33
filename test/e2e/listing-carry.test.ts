import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, unwind, write } from "../helpers.js";
import { claudeCall, claudePayload, hook } from "../journal-helpers.js";

/*
 * The record index (what `sessions` and `log` list) carried forward past
 * what other calls appended since (src/ops/sessions.ts, `carriedListing`):
 * the calls added and their sessions' summaries are worked out, the rest
 * is read as kept. Each test doctors a kept session's summary that the new
 * calls do not touch: a listing that still shows it was carried; one that
 * does not was worked out again from the whole record. Every listing is
 * also checked against a full read of the record, the doctored field aside.
 */

const cacheDir = (root: string) => join(root, ".git", "unwind", "cache");
const writeCall = (root: string, session: string, rel: string, text: string) => claudeCall(root, session, "Write", { file_path: join(root, rel), content: text }, () => write(root, rel, text));
const shell = (root: string, session: string, command: string, effect: () => void = () => undefined) => claudeCall(root, session, "Bash", { command, description: "x" }, effect);

interface Listings {
  sessions: { sessions: { session: string; agents: string[]; calls: number; paths: number }[] };
  log: { calls: { session: string; call: string; tool: string; paths: string[] }[] };
  every: Listings["log"];
}

/** The sessions, the log's newest calls (the index's `recent` part), and more calls than that part keeps (every session's own part). */
function listings(root: string): Listings {
  const s = unwind(root, ["sessions", "--json"]);
  const l = unwind(root, ["log", "-n", "1000", "--json"]);
  const e = unwind(root, ["log", "-n", "1001", "--json"]);
  expect([s.code, l.code, e.code], s.stderr + l.stderr + e.stderr).toEqual([0, 0, 0]);
  const every = JSON.parse(e.stdout);
  expect(every).toEqual(JSON.parse(l.stdout));
  return { sessions: JSON.parse(s.stdout), log: JSON.parse(l.stdout), every };
}

/** The same listings from the record alone: the index removed first. */
function fromRecord(root: string): Listings {
  for (const f of readdirSync(cacheDir(root)).filter((n) => n.startsWith("record-"))) rmSync(join(cacheDir(root), f));
  return listings(root);
}

const indexFile = (root: string, part: string) => join(cacheDir(root), readdirSync(cacheDir(root)).find((n) => n.startsWith("record-") && n.endsWith(`.${part}.json`))!);

/** Rewrites a part of the index through `edit`, its key and a valid sum kept. */
function doctor(root: string, part: string, edit: (doc: { key: string; data: any }) => void): void {
  const f = indexFile(root, part);
  const text = readFileSync(f, "utf8");
  const doc = JSON.parse(text.slice(text.indexOf("\n") + 1));
  edit(doc);
  const body = JSON.stringify(doc);
  writeFileSync(f, `${createHash("sha256").update(body).digest("hex").slice(0, 16)}\n${body}`);
}

/** Lists (keeping the index), then marks `session`'s kept summary with a forged agent. */
function keepMarked(root: string, session: string): void {
  listings(root);
  doctor(root, "sessions", (doc) => {
    const s = doc.data.find((x: { session: string }) => x.session === `claude:${session}`);
    s.agents = ["forged"];
  });
  expect(listings(root).sessions.sessions.find((s) => s.session === `claude:${session}`)!.agents).toEqual(["forged"]);
}

const marked = (l: Listings, session: string) => l.sessions.sessions.find((s) => s.session === `claude:${session}`)!.agents.includes("forged");
/** A listing that must have been worked out again (the mark gone), and lists what a full read lists; returns it. */
function workedOutAgain(root: string, session: string): Listings {
  const after = listings(root);
  expect(marked(after, session)).toBe(false);
  expect(after).toEqual(fromRecord(root));
  return after;
}

const unmarked = (l: Listings): Listings => ({
  ...l,
  sessions: { ...l.sessions, sessions: l.sessions.sessions.map((s) => ({ ...s, agents: s.agents.filter((a) => a !== "forged") })) },
});

describe("the record index carried forward", () => {
  it("is carried past other calls, file and shell, and lists what a full read lists", () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    writeCall(root, "s1", "a.txt", "A\n");
    shell(root, "s1", "echo B > b.txt", () => write(root, "b.txt", "B\n"));
    // s2 has a shell call kept: its summary, worked out again below, counts that call's paths as kept.
    shell(root, "s2", "echo e > e.txt", () => write(root, "e.txt", "e\n"));
    keepMarked(root, "s1");
    writeCall(root, "s2", "c.txt", "c\n");
    shell(root, "s2", "echo d > d.txt && echo B2 > b.txt", () => {
      write(root, "d.txt", "d\n");
      write(root, "b.txt", "B2\n");
    });
    writeCall(root, "s1b", "a.txt", "A2\n");
    const after = listings(root);
    expect(marked(after, "s1")).toBe(true);
    // The shell call added lists what its snapshots show it changed.
    expect(after.log.calls.filter((c) => c.session === "claude:s2").map((c) => `${c.tool} ${c.paths.join(" ")}`)).toEqual(["Bash b.txt d.txt", "Write c.txt", "Bash e.txt"]);
    expect(after.sessions.sessions.find((s) => s.session === "claude:s2")).toMatchObject({ calls: 3, paths: 4 });
    expect(unmarked(after)).toEqual(fromRecord(root));
  });

  it("is worked out again when a path captured before is captured again and the last snapshot cannot see it", () => {
    const root = makeRepo({ ".gitignore": "*.log\n", "b.txt": "b\n" });
    writeCall(root, "s0", "x.log", "1\n");
    shell(root, "s1", "echo B > b.txt", () => write(root, "b.txt", "B\n"));
    // A person changes the ignored file: between s0's capture and the next, across s1's window.
    write(root, "x.log", "h\n");
    keepMarked(root, "s0");
    // The control: a path captured before that the last snapshot holds is carried past.
    writeCall(root, "s2", "b.txt", "B3\n");
    expect(marked(listings(root), "s0")).toBe(true);
    writeCall(root, "s2", "x.log", "2\n");
    const after = workedOutAgain(root, "s0");
    // s1's shell call may have changed x.log, which a carried listing would not say.
    expect(after.log.calls.find((c) => c.session === "claude:s1")!.paths).toEqual(["b.txt", "x.log"]);
  });

  it("is worked out again when a call added reuses an id its session holds", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const input = { file_path: join(root, "a.txt"), content: "A\n" };
    for (const event of ["PreToolUse", "PostToolUse"] as const) expect(hook(root, "claude", claudePayload(root, "s1", event, "Write", input, "toolu_same")).code).toBe(0);
    shell(root, "s0", "true");
    keepMarked(root, "s0");
    const again = { file_path: join(root, "a.txt"), content: "AA\n" };
    expect(hook(root, "claude", claudePayload(root, "s1", "PreToolUse", "Write", again, "toolu_same")).code).toBe(0);
    write(root, "a.txt", "AA\n");
    expect(hook(root, "claude", claudePayload(root, "s1", "PostToolUse", "Write", again, "toolu_same")).code).toBe(0);
    const after = workedOutAgain(root, "s0");
    // One call listed once, as a full read lists it.
    expect(after.log.calls.filter((c) => c.call === "toolu_same")).toHaveLength(1);
  });

  it("is worked out again when a shell call it holds may reach past the last snapshot it read", () => {
    const root = makeRepo({ "b.txt": "b\n" });
    shell(root, "s1", "echo B > b.txt", () => write(root, "b.txt", "B\n"));
    keepMarked(root, "s1");
    // The control: a new snapshot right after the call's own last one is carried past.
    shell(root, "s2", "true");
    expect(marked(listings(root), "s1")).toBe(true);
    doctor(root, "carry", (doc) => {
      doc.data.treeEnd = "9999-12-31T00:00:00.000Z";
    });
    // A capture since is placed after that snapshot too.
    writeCall(root, "s2", "c.txt", "c\n");
    expect(marked(listings(root), "s1")).toBe(false);
    expect(existsSync(indexFile(root, "carry"))).toBe(true);
  });

  it("is worked out again when a session it adds to holds a call captured both ways", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    shell(root, "s0", "true");
    // One call id, a Write's pre and a Bash's post (a client that names the tool differently at each end): a file capture, then a tree one.
    expect(hook(root, "claude", claudePayload(root, "s1", "PreToolUse", "Write", { file_path: join(root, "a.txt"), content: "A\n" }, "toolu_mix")).code).toBe(0);
    write(root, "a.txt", "A\n");
    write(root, "z.txt", "z\n");
    expect(hook(root, "claude", claudePayload(root, "s1", "PostToolUse", "Bash", { command: "echo A > a.txt; echo z > z.txt" }, "toolu_mix")).code).toBe(0);
    keepMarked(root, "s0");
    // The control: another session's call is carried past.
    writeCall(root, "s2", "b.txt", "b\n");
    expect(marked(listings(root), "s0")).toBe(true);
    writeCall(root, "s1", "c.txt", "c\n");
    const after = workedOutAgain(root, "s0");
    // The call's tree capture names z.txt: the session's paths count it, as the listing of its calls does not.
    expect(after.sessions.sessions.find((x) => x.session === "claude:s1")).toMatchObject({ calls: 2, paths: 3 });
  });

  it("is worked out again, not failed, when the carry cannot be worked out (a snapshot tree it names is gone)", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    writeCall(root, "s1", "a.txt", "A\n");
    shell(root, "s0", "true");
    keepMarked(root, "s0");
    doctor(root, "carry", (doc) => {
      doc.data.last.tree = "e".repeat(40);
    });
    // a.txt captured again: the carry asks that tree whether it holds a.txt, and git cannot say.
    writeCall(root, "s2", "a.txt", "AA\n");
    workedOutAgain(root, "s0");
  });

  it("rewrites only the calls of the sessions it adds to; a session's kept calls are read where they are, and a missing part sends it back to the record", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    writeCall(root, "s1", "a.txt", "A\n");
    shell(root, "s2", "echo b > b.txt", () => write(root, "b.txt", "b\n"));
    keepMarked(root, "s2");
    const part = (session: string) => indexFile(root, `calls-${createHash("sha256").update(`claude:${session}`).digest("hex").slice(0, 16)}`);
    const inode = (session: string) => statSync(part(session)).ino;
    const before = { s1: inode("s1"), s2: inode("s2") };
    writeCall(root, "s1", "c.txt", "c\n");
    const after = listings(root);
    expect(marked(after, "s2")).toBe(true);
    // s1's part written again (a new file renamed over it), s2's left as it was.
    expect(inode("s1")).not.toBe(before.s1);
    expect(inode("s2")).toBe(before.s2);
    expect(unmarked(after)).toEqual(fromRecord(root));
    // Every call past the newest ones is read from each session's part: one that lies under its key shows.
    listings(root);
    doctor(root, `calls-${createHash("sha256").update("claude:s2").digest("hex").slice(0, 16)}`, (doc) => {
      doc.data[0].c.paths = ["forged.txt"];
    });
    const e = unwind(root, ["log", "-n", "1001", "--json"]);
    expect(JSON.parse(e.stdout).calls.find((c: { session: string }) => c.session === "claude:s2").paths).toEqual(["forged.txt"]);
    // One session's log reads its part alone.
    expect(JSON.parse(unwind(root, ["log", "--session", "s2", "--json"]).stdout).calls.map((c: { paths: string[] }) => c.paths)).toEqual([["forged.txt"]]);
    // Of another key (a carry and a listing that raced, each writing its own): worked out again from the record.
    doctor(root, `calls-${createHash("sha256").update("claude:s2").digest("hex").slice(0, 16)}`, (doc) => {
      doc.key = "0".repeat(64);
    });
    const other = JSON.parse(unwind(root, ["log", "-n", "1001", "--json"]).stdout);
    expect(other.calls.find((c: { session: string }) => c.session === "claude:s2").paths).toEqual(["b.txt"]);
    // Gone: the listing is worked out again from the record, and the part is back.
    rmSync(part("s2"));
    const again = JSON.parse(unwind(root, ["log", "-n", "1001", "--json"]).stdout);
    expect(again.calls.find((c: { session: string }) => c.session === "claude:s2").paths).toEqual(["b.txt"]);
    expect(existsSync(part("s2"))).toBe(true);
  });

  it("drops the part of a session the record no longer holds when it is worked out whole, and no other work tree's", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    writeCall(root, "s1", "a.txt", "A\n");
    listings(root);
    const mine = indexFile(root, "sessions").replace(/\.sessions\.json$/, ".calls-0123456789abcdef.json");
    const other = join(cacheDir(root), "record-0123456789abcdef.calls-0123456789abcdef.json");
    writeFileSync(mine, "stale\n");
    writeFileSync(other, "stale\n");
    // A carried listing adds to s1 alone: it leaves the other parts be.
    writeCall(root, "s1", "b.txt", "b\n");
    listings(root);
    expect([existsSync(mine), existsSync(other)]).toEqual([true, true]);
    // Worked out whole (no carry to start from): every session's part is written, and a part no session has is dropped.
    rmSync(indexFile(root, "carry"));
    writeCall(root, "s1", "c.txt", "c\n");
    listings(root);
    expect([existsSync(mine), existsSync(other)]).toEqual([false, true]);
  });
});
