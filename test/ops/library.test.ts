/**
 * The library (SPEC section 11), called directly: `open()` and its methods,
 * no CLI process for the operations under test. Sessions are recorded the
 * way an agent records them: through the real `unwind hook claude` entry
 * point with Claude's own payload shapes (test/journal-helpers.ts).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { open, type UndoReport } from "../../src/index.js";
import { disk, makeRepo, read, rejection, snapshotId, treeState, unwind, write } from "../helpers.js";
import { A_TS, A_TS2, B_TS, B_TS2, twoSessions as twoFixture } from "../session-fixture.js";
import { claudeCall } from "../journal-helpers.js";

const A = "lib-aaaa-1111";
const B = "lib-bbbb-2222";
const HEX64 = /^[0-9a-f]{64}$/;
const RECEIPT = /^r-\d{8}T\d{6}Z-[0-9a-f]{8}$/;

const twoSessions = () => twoFixture(A, B);

/** Plain JSON data: no `undefined`, no class instances, nothing JSON would lose. */
function expectPlainJson(x: unknown): void {
  expect(JSON.parse(JSON.stringify(x))).toStrictEqual(x);
}

/** Waits until the wall clock is into its next second. */
const nextSecond = () => new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));

const actions = (r: UndoReport) => r.items.map((i) => [i.path, i.action, i.reason]);

describe("library: open() and a session's undo", () => {
  it("lists both sessions, gives A's change set, plans without touching anything, undoes A only, and redoes it", async () => {
    const root = twoSessions();
    const u = await open({ root });
    expect(u.root).toBe(root);
    expect(u.store).toBe(join(root, ".git", "unwind")); // so disk() below covers the store too
    expect(u.recovered).toEqual([]);

    const { sessions, total } = await u.sessions();
    expect(total).toBe(2);
    const byName = Object.fromEntries(sessions.map((s) => [s.session, s]));
    expect(Object.keys(byName).sort()).toEqual([`claude:${A}`, `claude:${B}`]);
    expect(byName[`claude:${A}`]).toMatchObject({ harness: "claude", calls: 2, paths: 2 });
    expect(byName[`claude:${B}`]).toMatchObject({ harness: "claude", calls: 1, paths: 1 });
    expect(sessions[0]!.session).toBe(`claude:${B}`); // most recently active first

    const cs = await u.changes({ session: A });
    expect(cs.scope).toEqual({ kind: "session", id: `claude:${A}` });
    expect(cs.entries.map((e) => ({ path: e.path, change: e.change, by: e.by }))).toEqual([
      { path: "gen/out.txt", change: "added", by: [`claude:${A}`] },
      { path: "src/a.ts", change: "modified", by: [`claude:${A}`] },
    ]);
    const added = cs.entries[0]!;
    expect(added.pre).toBeNull();
    // A shell call's change is known from its tree snapshots: the git object id, mode and kind.
    expect(added.post).toMatchObject({ kind: "file", mode: "100644", oid: expect.stringMatching(/^[0-9a-f]{40}$/) });
    expect(cs.entries[1]!.pre).toMatchObject({ kind: "file", mode: "100644", size: A_TS.length, sha256: expect.stringMatching(HEX64) });

    // The plan: a dry run with its digest; nothing anywhere changes.
    const before = disk(root);
    const p = await u.plan({ session: A });
    expect(p.plan).toMatch(HEX64);
    expect(p.dryRun).toBe(true);
    expect(p.receipt).toBeNull();
    expect(p.partial).toBe(false);
    expect(p.scope).toEqual({ kind: "session", id: `claude:${A}` });
    expect(actions(p)).toEqual([
      ["gen/out.txt", "delete", null],
      ["src/a.ts", "restore", null],
    ]);
    expect(p.counts).toEqual({ restore: 1, delete: 1, merge: 0, skip: 0, conflict: 0 });
    expect(disk(root)).toEqual(before);
    expect(read(root, "src/a.ts")).toBe(A_TS2);

    // Applied with the previewed digest (the control: the same plan does change things when applied).
    const r = await u.undo({ session: A }, { expect: p.plan });
    expect(r.receipt).toMatch(RECEIPT);
    expect(r.dryRun).toBe(false);
    expect(r.partial).toBe(false);
    expect(r.plan).toBe(p.plan);
    expect(actions(r)).toEqual(actions(p));
    expect(r.counts).toEqual({ restore: 1, delete: 1, merge: 0, skip: 0, conflict: 0 });
    expect(read(root, "src/a.ts")).toBe(A_TS);
    expect(existsSync(join(root, "gen/out.txt"))).toBe(false);
    expect(existsSync(join(root, "gen"))).toBe(false);
    expect(read(root, "src/b.ts")).toBe(B_TS2); // B's work stays
    expect((await u.receipts()).receipts.map((x) => x.id)).toEqual([r.receipt]);

    // Redo brings A's work back.
    const back = await u.redo(r.receipt!);
    expect(back.receipt).toMatch(RECEIPT);
    expect(back.receipt).not.toBe(r.receipt);
    expect(back.scope).toEqual({ kind: "receipt", id: r.receipt });
    expect(back.partial).toBe(false);
    expect(back.counts).toMatchObject({ restore: 2, delete: 0, conflict: 0 });
    expect(read(root, "src/a.ts")).toBe(A_TS2);
    expect(read(root, "gen/out.txt")).toBe("generated\n");
    expect(read(root, "src/b.ts")).toBe(B_TS2);
  });
});

describe("library: the plan digest", () => {
  it("a stale digest is refused with E_PLAN_CHANGED and nothing is done; the fresh digest applies", async () => {
    const root = twoSessions();
    const u = await open({ root });
    const old = await u.plan({ session: A });
    write(root, "src/a.ts", "export const a = 3; // a person\n");
    const receiptsBefore = await u.receipts();
    const before = disk(root);

    const e = await rejection(u.undo({ session: A }, { expect: old.plan }));
    expect(e.code).toBe("E_PLAN_CHANGED");
    expect(e.exit).toBe(3);
    expect(e.message).toContain("nothing was done");
    expect(disk(root)).toEqual(before);
    expect(read(root, "src/a.ts")).toBe("export const a = 3; // a person\n");
    expect(existsSync(join(root, "gen/out.txt"))).toBe(true);
    expect(await u.receipts()).toEqual(receiptsBefore);
    expect(receiptsBefore.total).toBe(0);

    // Control: a new plan of the same state has another digest, and with it the undo goes ahead.
    const fresh = await u.plan({ session: A });
    expect(fresh.plan).toMatch(HEX64);
    expect(fresh.plan).not.toBe(old.plan);
    const r = await u.undo({ session: A }, { expect: fresh.plan });
    expect(r.receipt).toMatch(RECEIPT);
    expect(r.partial).toBe(true);
    expect(actions(r)).toEqual([
      ["gen/out.txt", "delete", null],
      ["src/a.ts", "conflict", "changed-since"],
    ]);
    expect(r.counts).toEqual({ restore: 0, delete: 1, merge: 0, skip: 0, conflict: 1 });
    expect(read(root, "src/a.ts")).toBe("export const a = 3; // a person\n"); // the person's edit is left alone
    expect(existsSync(join(root, "gen/out.txt"))).toBe(false);
    expect((await u.receipts()).total).toBe(1);
  });

  it("is stable for an unchanged state and changes when the work tree does", async () => {
    const root = twoSessions();
    const u = await open({ root });
    const one = await u.plan({ session: A });
    const two = await u.plan({ session: A });
    expect(two.plan).toBe(one.plan);
    // A second handle on the same record plans the same digest.
    expect((await (await open({ root })).plan({ session: A })).plan).toBe(one.plan);

    write(root, "gen/out.txt", "edited by a person\n");
    const three = await u.plan({ session: A });
    expect(three.plan).toMatch(HEX64);
    expect(three.plan).not.toBe(one.plan);
    expect(actions(three)).toContainEqual(["gen/out.txt", "conflict", "changed-since"]);

    // Back to the planned state: back to the planned digest.
    write(root, "gen/out.txt", "generated\n");
    expect((await u.plan({ session: A })).plan).toBe(one.plan);
  });
});

describe("library: errors are data", () => {
  it("usage, unknown scope and not-built scopes reject with UnwindError codes and exits, and change nothing", async () => {
    const root = twoSessions();
    const u = await open({ root });
    const before = disk(root);

    const cases: { name: string; call: () => Promise<unknown>; code: string; exit: number; hint?: boolean }[] = [
      { name: "no scope", call: () => u.undo({}), code: "E_USAGE", exit: 2, hint: true },
      { name: "no scope, dry run", call: () => u.plan({}), code: "E_USAGE", exit: 2 },
      { name: "two scopes", call: () => u.undo({ session: A, task: "x" }), code: "E_USAGE", exit: 2 },
      { name: "unknown session", call: () => u.undo({ session: "no-such-session" }), code: "E_SCOPE_UNKNOWN", exit: 3, hint: true },
      { name: "unknown session, dry run", call: () => u.plan({ session: "no-such-session" }), code: "E_SCOPE_UNKNOWN", exit: 3 },
      { name: "unknown receipt", call: () => u.redo("r-nope"), code: "E_SCOPE_UNKNOWN", exit: 3, hint: true },
      { name: "unknown baseline", call: () => u.plan({ baseline: "x" }), code: "E_SCOPE_UNKNOWN", exit: 3, hint: true },
      { name: "unknown baseline, undo", call: () => u.undo({ baseline: "x" }), code: "E_SCOPE_UNKNOWN", exit: 3 },
      { name: "unknown run", call: () => u.undo({ run: "no-such-run" }), code: "E_SCOPE_UNKNOWN", exit: 3, hint: true },
    ];
    for (const c of cases) {
      const e = await rejection(c.call());
      expect({ name: c.name, code: e.code, exit: e.exit }).toEqual({ name: c.name, code: c.code, exit: c.exit });
      expect(e.message.length).toBeGreaterThan(0);
      if (c.hint) expect(typeof e.hint === "string" && e.hint.length > 0, `${c.name}: hint`).toBe(true);
      expect(disk(root), c.name).toEqual(before);
    }
    expect((await u.receipts()).total).toBe(0);

    // Control: the same handle with a good scope does change things.
    const r = await u.undo({ session: A });
    expect(r.receipt).toMatch(RECEIPT);
    expect(disk(root).tree).not.toEqual(before.tree);
    expect(read(root, "src/a.ts")).toBe(A_TS);
  });
});

describe("library: ids", () => {
  it("redo by { last: true }, by a receipt id's suffix and by its prefix", async () => {
    const root = twoSessions();
    const u = await open({ root });
    const ra = (await u.undo({ session: A })).receipt!;
    // Receipt ids carry the time to the second: B's undo waits for the next second so that
    // the prefix below names one receipt (the test after this one covers receipts of one second).
    await nextSecond();
    const rb = (await u.undo({ session: B })).receipt!;
    expect(read(root, "src/a.ts")).toBe(A_TS);
    expect(read(root, "src/b.ts")).toBe(B_TS);
    expect((await u.receipts()).receipts.map((r) => r.id)).toEqual([rb, ra]);

    // --last is the newest receipt: B's undo, not A's.
    const last = await u.redo({ last: true });
    expect(last.scope).toEqual({ kind: "receipt", id: rb });
    expect(read(root, "src/b.ts")).toBe(B_TS2);
    expect(read(root, "src/a.ts")).toBe(A_TS);

    // A suffix shorter than 6 characters names nothing, and nothing is done.
    const before = disk(root);
    const short = await rejection(u.redo(ra.slice(-5)));
    expect(short.code).toBe("E_SCOPE_UNKNOWN");
    expect(short.message).toContain("6+");
    expect(disk(root)).toEqual(before);

    // The unique 8-character suffix names A's receipt.
    const bySuffix = await u.redo(ra.slice(-8));
    expect(bySuffix.scope).toEqual({ kind: "receipt", id: ra });
    expect(read(root, "src/a.ts")).toBe(A_TS2);
    expect(read(root, "gen/out.txt")).toBe("generated\n");

    // A unique prefix: undo A again, then redo it by all but the id's last two characters.
    const ra2 = (await u.undo({ session: A })).receipt!;
    expect(read(root, "src/a.ts")).toBe(A_TS);
    const byPrefix = await u.redo(ra2.slice(0, -2));
    expect(byPrefix.scope).toEqual({ kind: "receipt", id: ra2 });
    expect(read(root, "src/a.ts")).toBe(A_TS2);
  });

  // A receipt id is `r-<time to the second>-<8 random hex>`: receipts made within one second sort by
  // their random tails, so "newest" comes from the chain (`Receipts.ids()`), not from sorting ids.
  // Date is frozen so that every receipt shares one second: with ids sorted, ten in a row each being
  // the greatest so far has a chance of 1 in 10!, so this would fail for certain without the rule.
  it("redo { last: true } is the newest receipt even when several were made within one second", async () => {
    const root = twoSessions();
    const u = await open({ root });
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      let made = "";
      for (let i = 0; i < 10; i++) {
        made = (i % 2 === 0 ? await u.undo({ session: A }) : await u.redo(made)).receipt!;
        expect((await u.receipts({ limit: 1 })).receipts[0]!.id).toBe(made); // the chain knows which is newest
        const last = await u.redo({ last: true }, { dryRun: true });
        expect(last.scope, `receipt ${i + 1}`).toEqual({ kind: "receipt", id: made });
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it("snapshot, then restore { last: true } as a dry run changes nothing; the real restore does", async () => {
    const root = twoSessions();
    const u = await open({ root });
    const snap = await u.snapshot({ label: "before the person" });
    expect(snap.id).toMatch(/^s-/);
    write(root, "person.txt", "a person's new file\n");
    write(root, "README.md", "# changed\n");

    const before = disk(root);
    const dry = await u.restore({ last: true }, { dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.receipt).toBeNull();
    expect(dry.plan).toMatch(HEX64);
    expect(dry.scope).toEqual({ kind: "snapshot", id: snap.id });
    expect(actions(dry)).toEqual([
      ["README.md", "restore", null],
      ["person.txt", "delete", null],
    ]);
    expect(disk(root)).toEqual(before);

    // Control: the same restore, applied with the previewed digest, does it.
    const done = await u.restore({ last: true }, { expect: dry.plan });
    expect(done.receipt).toMatch(RECEIPT);
    expect(actions(done)).toEqual(actions(dry));
    expect(existsSync(join(root, "person.txt"))).toBe(false);
    expect(read(root, "README.md")).toBe("# r\n");
  });
});

describe("library: lists, status, verify and log", () => {
  it("snapshots, receipts with limit and total, status, verify and a session's log", async () => {
    const root = twoSessions();
    const u = await open({ root });
    // A's shell call was captured by a snapshot before and after it.
    const shell = await u.snapshots();
    expect(shell.total).toBe(2);
    expect((await u.snapshots({ session: `claude:${A}` })).total).toBe(2);
    expect((await u.snapshots({ session: `claude:${B}` })).total).toBe(0);
    const s1 = await u.snapshot();
    const s2 = await u.snapshot({ label: "second" });
    const snaps = await u.snapshots();
    expect(snaps.total).toBe(4);
    expect(snaps.snapshots.slice(0, 2).map((s) => s.id)).toEqual([s2.id, s1.id]); // newest first
    expect(s2.parent).toBe(s1.id);
    expect(snaps.snapshots[0]).toMatchObject({ id: s2.id, label: "second", root });
    expect((await u.snapshots({ limit: 1 })).snapshots.map((s) => s.id)).toEqual([s2.id]);

    const r1 = (await u.undo({ session: A })).receipt!;
    const r2 = (await u.redo(r1)).receipt!;
    const one = await u.receipts({ limit: 1 });
    expect(one.receipts.map((r) => r.id)).toEqual([r2]);
    expect(one.total).toBe(2);
    expect(one.receipts[0]).toMatchObject({ id: r2, kind: "redo", scope: { kind: "receipt", id: r1 }, recovered: false });
    const all = await u.receipts();
    expect(all.receipts.map((r) => r.id)).toEqual([r2, r1]);
    expect(all.receipts[1]).toMatchObject({ kind: "undo", scope: { kind: "session", id: `claude:${A}` }, counts: { restore: 1, delete: 1 } });

    const st = await u.status();
    expect(st).toMatchObject({ root, exists: true, sessions: 2, receipts: 2, snapshots: 4, damagedRecords: 0, errorCount: 0, errors: [] });
    expect(st.blobs).toBeGreaterThan(0);
    expect(st.records).toBeGreaterThan(0);

    const v = await u.verify();
    expect(v).toMatchObject({ ok: true, problems: [], receipts: 2 });
    expect(v.blobs).toBe(st.blobs);

    const log = await u.log({ session: A });
    expect(log.total).toBe(2);
    expect(log.calls.every((c) => c.session === `claude:${A}`)).toBe(true);
    expect(log.calls.map((c) => [c.tool, c.capture, c.paths])).toEqual([
      ["Bash", "tree", ["gen/out.txt"]],
      ["Edit", "file", ["src/a.ts"]],
    ]);
    const whole = await u.log();
    expect(whole.total).toBe(3); // the control: without the session filter, B's call is there too
  });
});

describe("library: JSON shape", () => {
  it("report items carry path, action, reason and detail (null when absent); no result holds undefined", async () => {
    const root = twoSessions();
    const u = await open({ root });
    write(root, "src/a.ts", "export const a = 3; // a person\n");
    const results: Record<string, unknown> = {};
    results.sessions = await u.sessions();
    results.log = await u.log();
    results.changes = await u.changes({ session: A });
    const p = await u.plan({ session: A });
    results.plan = p;
    for (const item of p.items) {
      expect(Object.keys(item)).toEqual(expect.arrayContaining(["path", "action", "reason", "detail"]));
      expect(item.detail).toBeNull(); // absent detail is null, not a missing key
    }
    const r = await u.undo({ session: A }, { expect: p.plan });
    results.undo = r;
    expect(r.items.find((i) => i.path === "src/a.ts")).toMatchObject({ action: "conflict", reason: "changed-since", detail: null });
    expect(r.items.find((i) => i.path === "gen/out.txt")).toMatchObject({ action: "delete", reason: null, detail: null });
    results.redo = await u.redo(r.receipt!);
    results.receipts = await u.receipts();
    results.status = await u.status();
    results.verify = await u.verify();
    const snap = await u.snapshot({ label: "shape" });
    write(root, "late.txt", "late\n");
    results.restorePlan = await u.restore(snap.id, { dryRun: true });
    results.diff = await u.diff(snap.id);
    for (const [name, x] of Object.entries(results)) {
      expect(x, name).toBeTypeOf("object");
      expectPlainJson(x);
    }
  });

  it("a later-write conflict's detail is a string naming the other session", async () => {
    const root = makeRepo({ "f.txt": "0\n" });
    claudeCall(root, A, "Write", { file_path: "f.txt", content: "A\n" }, () => write(root, "f.txt", "A\n"));
    claudeCall(root, B, "Edit", { file_path: "f.txt", old_string: "A", new_string: "B" }, () => write(root, "f.txt", "B\n"));
    const u = await open({ root });
    const p = await u.plan({ session: A });
    expect(p.items).toHaveLength(1);
    expect(p.items[0]).toMatchObject({ path: "f.txt", action: "conflict", reason: "later-write" });
    expect(p.items[0]!.detail).toMatch(new RegExp(`^claude:${B} at `));
    expect(p.partial).toBe(true);
    expectPlainJson(p);
    // Control: undoing B, the later writer, is no conflict.
    expect(actions(await u.plan({ session: B }))).toEqual([["f.txt", "restore", null]]);
  });

  // SPEC section 11: every operation returns the same data as --json; for snapshots that is SnapshotInfo
  // (labels null when absent, no internal fields such as the record's version or its excludes).
  it("snapshot and snapshots give the data `unwind snapshot --json` and `snapshots --json` print (labels null when absent)", async () => {
    const root = twoSessions();
    const u = await open({ root });
    const snap = await u.snapshot();
    const list = await u.snapshots();
    // The keys of the `--json` document (src/ops/snapshot.ts, SnapshotInfo), and nothing else.
    const keys = ["at", "call", "commit", "id", "label", "parent", "root", "session", "task", "toolarge", "tree"];
    for (const s of [snap, list.snapshots[0]!]) {
      expect(Object.keys(s).sort()).toEqual(keys);
      expect(s).toMatchObject({ id: snap.id, root, task: null, session: null, call: null, label: null });
    }
  });
});

describe("library: the built package, used as a user would", () => {
  const pkg = resolve(fileURLToPath(new URL(".", import.meta.url)), "..", "..");

  it("a plain Node script imports { open } from 'unwind' (dist/lib via exports), snapshots, writes, restores", () => {
    const root = makeRepo({ "kept.txt": "kept\n", "edited.txt": "original\n" });
    const before = treeState(root);
    const r = spawnSync(process.execPath, [join(pkg, "test", "library-script.mjs"), root], { cwd: pkg, encoding: "utf8", timeout: 60_000 });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]!);
    expect(out.module).toBe(join(pkg, "dist", "lib", "index.js")); // the built library, through package.json's exports
    expect(out.root).toBe(root);
    expect(out.snapshot).toMatch(/^s-/);
    // The control: the script's writes really happened before the restore...
    expect(out.afterWrite).toEqual({ created: true, edited: "changed by the script\n" });
    // ...and the restore took them back.
    expect(out.receipt).toMatch(RECEIPT);
    expect(out.dryRun).toBe(false);
    expect(out.items).toEqual([
      ["created.txt", "delete", null],
      ["edited.txt", "restore", null],
    ]);
    expect(treeState(root)).toEqual(before);
    expect(read(root, "edited.txt")).toBe("original\n");
  });
});

describe("apply without a receipt (the revert check's throwaway work tree)", () => {
  it("seal: false writes the files and leaves no intent and no receipt in the chain; sealed, the same undo keeps one", async () => {
    const { runUndo } = await import("../../src/ops/take-back.js");
    const { withScope, checkScope } = await import("../../src/scope/resolve.js");
    for (const seal of [false, true]) {
      const root = twoSessions();
      const u = await open({ root });
      const report = await withScope(u.context, checkScope({ session: A }), {}, "apply", ({ cs }) => runUndo(u.context, cs, { dryRun: false, force: false, merge: false, kind: "undo", seal }));
      expect(read(root, "src/a.ts")).toBe(A_TS); // written either way
      expect(report.counts.restore).toBeGreaterThan(0);
      const receipts = (await u.receipts()).receipts;
      const pending = join(u.store, "pending");
      if (seal) {
        expect(report.receipt).toMatch(RECEIPT); // control: a sealed apply is on the chain
        expect(receipts.map((r) => r.id)).toEqual([report.receipt]);
      } else {
        expect(report.receipt).toBeNull();
        expect(receipts).toEqual([]);
      }
      expect(existsSync(pending) ? readdirSync(pending) : []).toEqual([]);
    }
  });
});

describe("progress", () => {
  it("undo tells its progress path by path, ending at the total it wrote; a dry run writes nothing and tells nothing", async () => {
    const root = twoSessions();
    const u = await open({ root });
    const dry: [number, number][] = [];
    await u.undo({ session: A }, { dryRun: true, progress: (d, t) => dry.push([d, t]) });
    expect(dry).toEqual([]);
    const seen: [number, number][] = [];
    const r = await u.undo({ session: A }, { progress: (d, t) => seen.push([d, t]) });
    const written = r.counts.restore + r.counts.delete + r.counts.merge;
    expect(written).toBeGreaterThan(1);
    expect(seen[0]).toEqual([0, written]);
    expect(seen.at(-1)).toEqual([written, written]);
  });
});

describe("the snapshot's early start and recovery", () => {
  /** A repo with an apply killed right after its intent record: the next open must finish it, under the lock. */
  function crashed(): string {
    const root = makeRepo({ "a.txt": "a1\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "a2\n");
    expect(unwind(root, ["restore", id], { env: { UNWIND_TEST_CRASH: "intent" } }).code).not.toBe(0);
    return root;
  }

  it("a start this process holds is settled before recovery takes the lock; the snapshot is then taken anew", async () => {
    const { usualContext } = await import("../../src/repo/context.js");
    const { startSnapshot } = await import("../../src/capture/snapshot.js");
    const root = crashed();
    const start = startSnapshot(usualContext(root)!)!;
    expect(start).not.toBeNull(); // it holds the store lock
    const u = await open({ root, holding: start });
    expect(start.settled).toBe(true);
    expect(u.recovered).toHaveLength(1);
    expect(read(root, "a.txt")).toBe("a1\n");
    const snap = await u.snapshot({}, { start });
    expect(snap.id).toMatch(/^s-/);
  });

  it("control: without saying it holds the start, opening waits on its own lock and gives up", async () => {
    const { usualContext } = await import("../../src/repo/context.js");
    const { settleSnapshot, startSnapshot } = await import("../../src/capture/snapshot.js");
    const root = crashed();
    const start = startSnapshot(usualContext(root)!)!;
    const saved = process.env.UNWIND_LOCK_TIMEOUT_MS;
    process.env.UNWIND_LOCK_TIMEOUT_MS = "300";
    try {
      await expect(open({ root })).rejects.toMatchObject({ code: "E_LOCKED" });
    } finally {
      if (saved === undefined) delete process.env.UNWIND_LOCK_TIMEOUT_MS;
      else process.env.UNWIND_LOCK_TIMEOUT_MS = saved;
      await settleSnapshot(start);
    }
  });
});

describe("library: every input checked key by key", () => {
  it("a digest misplaced inside the scope is a usage error and nothing is written; in the options it applies", async () => {
    const root = twoSessions();
    const u = await open({ root });
    const p = await u.plan({ session: A });
    write(root, "src/a.ts", "a person's edit\n"); // the previewed plan no longer holds: an honoured expect must refuse
    const before = disk(root);
    const misplaced = await rejection(u.undo({ session: A, expect: p.plan } as any));
    expect(misplaced).toMatchObject({ code: "E_USAGE", exit: 2, message: "scope: unknown field 'expect'" });
    expect(disk(root)).toEqual(before);
    expect(await rejection(u.undo({ session: A }, { expect: p.plan, forse: true } as any))).toMatchObject({ code: "E_USAGE", message: "undo options: unknown field 'forse'" });
    expect(await rejection(u.changes({ session: A }, { path: ["src/**"] } as any))).toMatchObject({ code: "E_USAGE", message: "changes options: unknown field 'path'" });
    expect(disk(root)).toEqual(before);
    // The control: the same digest where it belongs is honoured, so the changed plan is refused (exit 3).
    expect(await rejection(u.undo({ session: A }, { expect: p.plan }))).toMatchObject({ code: "E_PLAN_CHANGED", exit: 3 });
    const fresh = await u.plan({ session: A });
    expect((await u.undo({ session: A }, { expect: fresh.plan })).receipt).toMatch(RECEIPT);
  });
});
