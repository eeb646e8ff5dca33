/**
 * The attribution fold (SPEC section 2) on plain data: who may have made
 * each change, from the points the record knows. Each rule with a negative
 * control. Pure: no fs, no git.
 */
import { describe, expect, it } from "vitest";
import { attribute, changeEvents, inOrder, NOT_CAPTURED, OPEN, snapshotPoints, takeBacks, type CallWindow, type Point } from "../../../src/scope/fold/timeline.js";
import { callWindows } from "../../../src/scope/fold/windows.js";
import type { GitOid, RepoPath, Scope, State } from "../../../src/domain/types.js";
import type { JournalRecord } from "../../../src/store/journal.js";

const P = "p.txt" as RepoPath;
const st = (v: string): State => ({ kind: "file", mode: "100644", oid: `oid-${v}` as GitOid });
const t = (n: number) => `2026-12-01T00:00:${String(n).padStart(2, "0")}.000Z`;
const tree = (session: string, call: string, start: number, end: number | null, unclosed = false): CallWindow => ({
  session,
  call,
  seq: 0,
  kind: "tree",
  start: t(start),
  end: end === null ? OPEN : t(end),
  unclosed,
});
const fileCall = (session: string, call: string, start: number, end: number, paths: string[]): CallWindow => ({
  session,
  call,
  seq: 0,
  kind: "file",
  start: t(start),
  end: t(end),
  unclosed: false,
  paths: new Set(paths),
});
const snap = (at: number, state: State | null, path = P): Point => ({ at: t(at), path, state });
const inSession = (s: string) => (c: CallWindow) => c.session === s;

describe("who may have made a change", () => {
  it("a change while only one call's window was open is that call's alone", () => {
    const calls = [tree("A", "a1", 1, 3), tree("B", "b1", 2, 5)];
    // Snapshots at 1 (A pre), 2 (B pre), 3 (A post), 5 (B post); p changed between 1 and 2: only A was open.
    const ev = changeEvents([snap(1, st("x")), snap(2, st("y")), snap(3, st("y")), snap(5, st("y"))], calls);
    const a = attribute(ev, inSession("A"));
    expect(a.entries).toEqual([{ path: P, change: "modified", pre: st("x"), post: st("y"), by: ["A"] }]);
    expect(attribute(ev, inSession("B")).entries).toEqual([]);
  });

  it("a change while two windows were open is shared: listed for each, naming the other", () => {
    const calls = [tree("A", "a1", 1, 3), tree("B", "b1", 2, 5)];
    // p changed between 2 and 3: both open.
    const ev = changeEvents([snap(1, st("x")), snap(2, st("x")), snap(3, st("y")), snap(5, st("y"))], calls);
    expect(attribute(ev, inSession("A")).entries[0]!.shared).toEqual([{ session: "B", call: "b1" }]);
    expect(attribute(ev, inSession("B")).entries[0]!.shared).toEqual([{ session: "A", call: "a1" }]);
    // A scope holding both sharing calls shares with nobody outside it.
    expect(attribute(ev, () => true).entries[0]!.shared).toBeUndefined();
  });

  it("negative control: the same two calls one after the other share nothing", () => {
    const calls = [tree("A", "a1", 1, 2), tree("B", "b1", 3, 4)];
    const ev = changeEvents([snap(1, st("x")), snap(2, st("y")), snap(3, st("y")), snap(4, st("y"))], calls);
    expect(attribute(ev, inSession("A")).entries[0]!.shared).toBeUndefined();
  });

  it("a file tool's own pre/post capture pins the path to it, even inside a shell call's window", () => {
    const calls = [tree("A", "a1", 1, 10), fileCall("B", "b1", 3, 4, [P])];
    const pts: Point[] = [
      snap(1, st("x")),
      { at: t(3), path: P, state: st("x"), call: { session: "B", call: "b1", phase: "pre" } },
      { at: t(4), path: P, state: st("y"), call: { session: "B", call: "b1", phase: "post" } },
      snap(10, st("y")),
    ];
    const ev = changeEvents(pts, calls);
    expect(attribute(ev, inSession("A")).entries).toEqual([]);
    expect(attribute(ev, inSession("B")).entries).toEqual([{ path: P, change: "modified", pre: st("x"), post: st("y"), by: ["B"] }]);
  });

  it("negative control: a file call of another path is no candidate for this one", () => {
    const calls = [tree("A", "a1", 1, 10), fileCall("B", "b1", 3, 4, ["other.txt"])];
    const ev = changeEvents([snap(1, st("x")), snap(10, st("y"))], calls);
    expect(attribute(ev, inSession("A")).entries[0]).toMatchObject({ by: ["A"] });
    expect(attribute(ev, inSession("A")).entries[0]!.shared).toBeUndefined();
  });

  it("a change no window covers is nobody's; between two of a scope's changes it makes the path interleaved (unknown writer)", () => {
    const calls = [tree("A", "a1", 1, 2), tree("A", "a2", 5, 6)];
    const ev = changeEvents([snap(1, st("x")), snap(2, st("y")), snap(5, st("z")), snap(6, st("w"))], calls);
    const a = attribute(ev, inSession("A"));
    expect(a.entries[0]).toMatchObject({ pre: st("x"), post: st("w") });
    expect(a.interleaved.get(P)).toEqual({ by: null, at: "2026-12-01T00:00:05Z" });
    // For a1 alone, the first change after it (between 2 and 5) is nobody's: a later write by an unknown writer.
    const a1 = attribute(ev, (c) => c.call === "a1");
    expect(a1.later.get(P)).toEqual({ by: null, at: "2026-12-01T00:00:05Z" });
  });

  it("a call still open shares every change from its start; its entries say unclosed", () => {
    const calls = [tree("A", "a1", 1, null, true), tree("B", "b1", 2, 3)];
    const ev = changeEvents([snap(1, st("x")), snap(2, st("x")), snap(3, st("y")), snap(9, st("y"))], calls);
    expect(attribute(ev, inSession("B")).entries[0]!.shared).toEqual([{ session: "A", call: "a1" }]);
    expect(attribute(ev, inSession("A")).entries[0]).toMatchObject({ unclosed: true });
  });

  it("a state never captured equals nothing, and two unknowns in a row are no change", () => {
    const calls = [tree("A", "a1", 1, 2)];
    const ev = changeEvents([snap(0, NOT_CAPTURED), snap(1, NOT_CAPTURED), snap(2, st("y"))], calls);
    expect(ev.get(P)!.length).toBe(1);
    expect(attribute(ev, inSession("A")).entries[0]).toMatchObject({ pre: NOT_CAPTURED, change: "modified" });
  });
});

describe("points from consecutive snapshot diffs", () => {
  it("a path a diff shows is known at the snapshots around each of its changes", () => {
    const pts = snapshotPoints(
      [t(1), t(2), t(3), t(4), t(5)],
      [
        { index: 1, entries: [{ path: P, pre: st("x"), post: st("y") }] },
        { index: 3, entries: [{ path: P, pre: st("y"), post: null }] },
      ],
    );
    expect(pts.map((p) => [p.at, p.state])).toEqual([
      [t(2), st("x")],
      [t(3), st("y")],
      [t(4), st("y")],
      [t(5), null],
    ]);
  });
  it("a captured path is known at the snapshots around each capture: from the diffs, else its constant state; an ignored one not at all", () => {
    const Q = "q.txt" as RepoPath;
    const R = "ignored.env" as RepoPath;
    const pts = snapshotPoints(
      [t(1), t(3), t(5)],
      [{ index: 0, entries: [{ path: P, pre: null, post: st("y") }] }],
      new Map([
        [P, [t(4)]],
        [Q, [t(2)]],
        [R, [t(2)]],
      ]),
      new Map([[Q, null]]),
    );
    expect(pts.filter((p) => p.path === P).map((p) => [p.at, p.state])).toEqual([
      [t(1), null],
      [t(3), st("y")],
      [t(5), st("y")],
    ]);
    expect(pts.filter((p) => p.path === Q).map((p) => [p.at, p.state])).toEqual([
      [t(1), null],
      [t(3), null],
    ]);
    expect(pts.filter((p) => p.path === R)).toEqual([]);
  });
  it("a change inside a window that does not cover its whole interval is marked uncovered: someone unrecorded may have made it", () => {
    const calls = [tree("A", "a1", 3, 4)];
    const pts: Point[] = [
      { at: t(2), path: P, state: st("x"), call: { session: "A", call: "f1", phase: "post" } },
      { at: t(5), path: P, state: st("y"), call: { session: "A", call: "f2", phase: "pre" } },
    ];
    const ev = changeEvents(pts, calls);
    expect(ev.get(P)![0]).toMatchObject({ uncovered: true });
    expect(attribute(ev, inSession("A")).interleaved.get(P)).toMatchObject({ by: null });
    // Negative control: the same change with the window spanning the interval is the call's alone.
    const covered = changeEvents(pts, [tree("A", "a1", 1, 6)]);
    expect(covered.get(P)![0]!.uncovered).toBeUndefined();
  });
});

describe("call windows", () => {
  const rec = (over: Partial<JournalRecord>): JournalRecord =>
    ({ v: 1, at: t(1), session: "S", harness: "claude", tool: "Bash", call: "c", phase: "pre", kind: "tree", snapshot: "s", tree: "t", ...over }) as JournalRecord;
  it("run from the pre to the last post; a later real post supersedes a closing one", () => {
    const w = callWindows([rec({ at: t(1) }), rec({ at: t(3), phase: "post", closedBy: "next-event" }), rec({ at: t(7), phase: "post" })], []);
    expect(w).toEqual([{ session: "S", call: "c", seq: 0, kind: "tree", start: t(1), end: t(7), unclosed: false, sure: { start: t(1), end: t(7) } }]);
  });
  it("a call closed only by the session's next event is unclosed; one with no post is open", () => {
    expect(callWindows([rec({}), rec({ at: t(3), phase: "post", closedBy: "next-event" })], [])[0]).toMatchObject({ end: t(3), unclosed: true });
    expect(callWindows([rec({})], [])[0]).toMatchObject({ end: OPEN, unclosed: true });
  });
  it("a post without its pre starts at the snapshot before it", () => {
    expect(callWindows([rec({ at: t(5), phase: "post" })], [t(1), t(4), t(5)])[0]).toMatchObject({ start: t(4), end: t(5) });
  });
});

describe("points made a path at a time (unwind's receipts)", () => {
  const Q = "q.txt" as RepoPath;
  const R = "only-receipts.txt" as RepoPath;
  const calls = [tree("A", "a1", 1, 4), fileCall("unwind", "r1", 5, 5, [P, Q, R]), fileCall("unwind", "r2", 6, 7, [P, Q, R])];
  const pre = (c: string) => ({ session: "unwind", call: c, phase: "pre" as const });
  const post = (c: string) => ({ session: "unwind", call: c, phase: "post" as const });
  // The list: snapshots and a tree call's change; a snapshot at 5 shares its millisecond with receipt r1's points.
  const listed: Point[] = [snap(0, st("a")), snap(4, st("b")), snap(5, st("b")), snap(0, st("x"), Q), snap(4, st("y"), Q)];
  const receiptPts: Point[] = [
    { at: t(5), path: P, state: st("b"), call: pre("r1") },
    { at: t(5), path: P, state: st("a"), call: post("r1") },
    { at: t(6), path: P, state: st("a"), call: pre("r2") },
    { at: t(7), path: P, state: st("b"), call: post("r2") },
    { at: t(5), path: Q, state: st("y"), call: pre("r1") },
    { at: t(5), path: Q, state: st("x"), call: post("r1") },
    { at: t(6), path: R, state: null, call: pre("r2") },
    { at: t(7), path: R, state: st("r"), call: post("r2") },
  ];
  const more = {
    paths: () => new Set(receiptPts.map((p) => p.path)),
    of: (path: RepoPath) => receiptPts.filter((p) => p.path === path),
  };

  it("give the same events as the same points listed after the others, a path only they know included", () => {
    const whole = changeEvents([...listed, ...receiptPts], calls);
    const lazily = changeEvents(listed, calls, false, more);
    expect(lazily).toEqual(whole);
    expect([...lazily.keys()]).toEqual([...whole.keys()]);
    expect(lazily.get(R)).toHaveLength(1);
    // And the folds agree: A's change of p and q, taken back by r1, and p brought again by r2.
    expect(attribute(lazily, inSession("A"))).toEqual(attribute(whole, inSession("A")));
  });

  it("negative control: the order at a shared millisecond matters, so the check above can fail", () => {
    expect(changeEvents(listed, calls, false, more)).not.toEqual(changeEvents([...receiptPts, ...listed], calls));
  });
});

describe("pure: inOrder sorts as Array.prototype.sort does, and leaves a list already in order as it is", () => {
  it("matches a stable sort on lists of every shape, equal keys keeping their order", () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return seed % n;
    };
    const cmp = (a: { k: number }, b: { k: number }) => a.k - b.k;
    for (let t = 0; t < 500; t++) {
      const list = Array.from({ length: rnd(8) }, (_, i) => ({ k: rnd(4), i }));
      if (t % 3 === 0) list.sort(cmp); // some already in order
      const expected = [...list].sort(cmp);
      expect(inOrder(list, cmp)).toEqual(expected);
    }
  });
  it("a list in order is the same array, untouched; one out of order is sorted in place", () => {
    const sorted = [1, 2, 2, 3];
    expect(inOrder(sorted, (a, b) => a - b)).toBe(sorted);
    const unsorted = [3, 1, 2];
    expect(inOrder(unsorted, (a, b) => a - b)).toBe(unsorted);
    expect(unsorted).toEqual([1, 2, 3]);
  });
});

describe("which receipts take back the scope's own work (takeBacks)", () => {
  const receipt = (id: string, kind: "undo" | "restore" | "redo", scope: Scope, at: number): CallWindow => ({ ...fileCall("unwind", id, at, at + 1, [P, "x.txt"]), took: { kind, scope } });
  const calls = [
    tree("A", "a1", 1, 2),
    tree("A", "a2", 3, 4),
    tree("B", "b1", 5, 6),
    receipt("r1", "undo", { kind: "session", id: "B" }, 7),
    receipt("r2", "undo", { kind: "session", id: "A" }, 9),
    receipt("r3", "redo", { kind: "receipt", id: "r2" }, 11),
    receipt("r4", "undo", { kind: "call", id: "a2" }, 13),
    receipt("r5", "restore", { kind: "snapshot", id: "s1" }, 15),
    receipt("r6", "redo", { kind: "receipt", id: "r6" }, 17),
    receipt("r7", "undo", { kind: "session", id: "nobody" }, 19),
  ];
  const callsOf = (s: Scope) => (s.kind === "session" ? (c: CallWindow) => c.session === s.id : s.kind === "call" ? (c: CallWindow) => c.call === s.id : null);
  const which = (inScope: (c: CallWindow) => boolean) => {
    const f = takeBacks(calls, inScope, callsOf);
    return calls.filter(f).map((c) => c.call);
  };

  it("for a session: its own undos, undos of its calls, and redos of those; not another's, a restore, a loop, nobody's", () => {
    expect(which(inSession("A"))).toEqual(["r2", "r3", "r4"]);
    expect(which(inSession("B"))).toEqual(["r1"]);
  });
  it("for one call: an undo of its whole session took back more than the call's work, so it is not the call's", () => {
    expect(which((c) => c.call === "a2")).toEqual(["r4"]);
    expect(which((c) => c.call === "a1")).toEqual([]);
  });

  // x: A wrote a, B wrote b over it; r1 undid B (back to a), r2 undid A (back to o).
  const x = "x.txt" as RepoPath;
  const pin = (id: string, phase: "pre" | "post") => ({ session: "unwind", call: id, phase });
  const pts: Point[] = [
    snap(1, st("o"), x),
    snap(2, st("a"), x),
    snap(5, st("a"), x),
    snap(6, st("b"), x),
    { at: t(7), path: x, state: st("b"), call: pin("r1", "pre") },
    { at: t(8), path: x, state: st("a"), call: pin("r1", "post") },
    { at: t(9), path: x, state: st("a"), call: pin("r2", "pre") },
    { at: t(10), path: x, state: st("o"), call: pin("r2", "post") },
  ];
  const foldB = (takesBack: (c: CallWindow) => boolean) => attribute(changeEvents(pts, calls), inSession("B"), { takesBack });

  it("undo B, undo A: B has nothing left, and A's undo is no change of B's", () => {
    expect(foldB(takeBacks(calls, inSession("B"), callsOf)).entries).toEqual([]);
  });
  it("negative control: with every receipt taken as B's own (the old rule), B's change becomes a -> o, and undo B would write A's a back", () => {
    expect(foldB(() => true).entries).toEqual([{ path: x, change: "modified", pre: st("a"), post: st("o"), by: ["B"] }]);
  });
  it("negative control: with no receipt taken as B's own, B's own undo would be a later write, and B would still show a -> b", () => {
    const a = foldB(() => false);
    expect(a.entries).toEqual([{ path: x, change: "modified", pre: st("a"), post: st("b"), by: ["B"] }]);
    expect(a.later.get(x)).toMatchObject({ by: "unwind" });
  });
});

describe("windows that open and close in one millisecond", () => {
  // An apply of one small file can take its pre and post captures in the same millisecond; the
  // attribution tests that undo twice in a row failed now and then on exactly this.
  const pin = (call: string, phase: "pre" | "post") => ({ session: "unwind", call, phase });
  const events = (end: number) =>
    changeEvents(
      [snap(1, st("x")), snap(2, st("y")), { at: t(3), path: P, state: st("y"), call: pin("r1", "pre") }, { at: t(end), path: P, state: st("x"), call: pin("r1", "post") }],
      [tree("A", "a1", 1, 2), { ...fileCall("unwind", "r1", 3, end, [P]), took: { kind: "undo", scope: { kind: "call", id: "b1" } } }],
    );

  it("a receipt's own captures pin its change even when its window has no length", () => {
    const [e] = events(3).get(P)!.slice(-1);
    expect(e!.candidates.map((c) => c.call)).toEqual(["r1"]);
    // So the receipt is a later write to A's change, named unwind, not a change by nobody recorded.
    expect(attribute(events(3), inSession("A")).later.get(P)).toMatchObject({ by: "unwind" });
  });

  it("control: the same receipt a millisecond longer was already pinned", () => {
    const [e] = events(4).get(P)!.slice(-1);
    expect(e!.candidates.map((c) => c.call)).toEqual(["r1"]);
    expect(attribute(events(4), inSession("A")).later.get(P)).toMatchObject({ by: "unwind" });
  });
});
