import { describe, expect, it } from "vitest";
import { adopt, carriesRun } from "../../../src/domain/owned-procs.js";
import type { ProcStat } from "../../../src/domain/proc-stat.js";

const p = (pid: number, ppid: number, start: string, o: Partial<ProcStat> = {}): ProcStat => ({ pid, comm: "x", state: "S", ppid, pgrp: pid, session: pid, start, ...o });
const CHILD = { pid: 100, start: "500" };

describe("which processes a run owns", () => {
  it("the child, its descendants (a chain in one reading), and members of its group or session", () => {
    const table = [p(1, 0, "1"), p(100, 50, "500"), p(101, 100, "510"), p(102, 101, "520"), p(103, 1, "530", { pgrp: 100 }), p(104, 1, "540", { session: 100 })];
    const got = adopt(table, new Map(), CHILD).map((a) => [a.stat.pid, a.how]);
    expect(got).toEqual([
      [100, "child"],
      [101, "descendant"],
      [102, "descendant"],
      [103, "group"],
      [104, "group"],
    ]);
  });
  it("keeps a descendant once seen whoever its parent becomes, and never adopts what started before the child", () => {
    // 101 was seen under 100; now 100 is gone and 101's parent is init: already owned, nothing new.
    expect(
      adopt(
        [p(101, 1, "510")],
        new Map([
          [100, "500"],
          [101, "510"],
        ]),
        CHILD,
      ),
    ).toEqual([]);
    // A process older than the child is nobody's descendant, even if its parent's pid is one we own now.
    expect(adopt([p(100, 50, "500"), p(7, 100, "400")], new Map([[100, "500"]]), CHILD)).toEqual([]);
  });
  it("a parent pid now held by another process does not make its children ours", () => {
    // We owned pid 101 (start 510); pid 101 is now another process (start 900): its child is not ours.
    const table = [p(101, 1, "900"), p(200, 101, "950")];
    expect(adopt(table, new Map([[101, "510"]]), CHILD)).toEqual([]);
    // negative control: the same child under our 101 is adopted
    expect(adopt([p(101, 1, "510"), p(200, 101, "950")], new Map([[101, "510"]]), CHILD).map((a) => a.stat.pid)).toEqual([200]);
  });
  it("recognises the run's variable in an environment, exactly", () => {
    const env = (vars: string[]) => Buffer.from(vars.map((v) => `${v}\0`).join(""));
    expect(carriesRun(env(["PATH=/bin", "UNWIND_RUN_KEY=k1"]), "k1")).toBe(true);
    expect(carriesRun(env(["UNWIND_RUN_KEY=k1"]), "k1")).toBe(true);
    expect(carriesRun(env(["UNWIND_RUN_KEY=k12"]), "k1")).toBe(false);
    expect(carriesRun(env(["XUNWIND_RUN_KEY=k1"]), "k1")).toBe(false);
    // The run's id is what hooks label sessions with; another run of the same id elsewhere carries it too.
    expect(carriesRun(env(["UNWIND_RUN=k1"]), "k1")).toBe(false);
  });
});
