import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { endProcesses } from "../../src/capture/run/owned.js";
import { open } from "../../src/ops/open.js";
import { makeRepo, rejection, startOf } from "../helpers.js";

/*
 * Ending processes by identity (SPEC section 9), against real processes:
 * a pid is signalled only while its start time still matches the record.
 * A reused pid is made by recording a live process under a start time it
 * does not have, as a process that started later under the same pid would.
 */

const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) c.kill("SIGKILL");
});

function sleeper(): { pid: number; start: string } {
  const c = spawn("sleep", ["300"], { stdio: "ignore" });
  started.push(c);
  return { pid: c.pid!, start: startOf(c.pid!)! };
}

describe("ending recorded processes", () => {
  it("a reused pid (the start time differs) is never signalled", async () => {
    const p = sleeper();
    const forged = String(BigInt(p.start) + 1n);
    expect(await endProcesses([{ pid: p.pid, start: forged }], { graceMs: 200 })).toEqual([{ pid: p.pid, start: forged, outcome: "pid-reused" }]);
    expect(startOf(p.pid)).toBe(p.start); // still running
  });

  it("negative control: the same process under its real start time is terminated", async () => {
    const p = sleeper();
    expect(await endProcesses([p], { graceMs: 2000 })).toEqual([{ ...p, outcome: "terminated" }]);
    expect(startOf(p.pid)).toBeNull();
  });

  it("one that ignores TERM is killed after the grace; one with no recorded start time is never signalled; a gone one has exited", async () => {
    const stubborn = spawn("sh", ["-c", "trap '' TERM; while :; do sleep 0.05; done"], { stdio: "ignore" });
    started.push(stubborn);
    await new Promise((r) => setTimeout(r, 100));
    const s = { pid: stubborn.pid!, start: startOf(stubborn.pid!)! };
    const blind = sleeper();
    const gone = sleeper();
    started[started.length - 1]!.kill("SIGKILL");
    await new Promise((r) => setTimeout(r, 100));
    const out = await endProcesses([s, { pid: blind.pid, start: null }, gone], { graceMs: 300 });
    expect(out.map((o) => o.outcome)).toEqual(["killed", "unverifiable", "already-exited"]);
    expect(startOf(blind.pid)).toBe(blind.start);
  });

  it("a dry run signals nothing", async () => {
    const p = sleeper();
    expect((await endProcesses([p], { graceMs: 100, dryRun: true }))[0]!.outcome).toBe("still-running");
    expect(startOf(p.pid)).toBe(p.start);
  });
});

describe("the library's runs", () => {
  it("run, runs, runShow and cleanup resolve to the --json documents; a tampered capsule rejects with exit 4", async () => {
    const root = makeRepo({ "a.txt": "1\n" });
    const u = await open({ root });
    const r = await u.run(["sh", "-c", "printf '2\\n' > a.txt"], { id: "lib1", cwd: root });
    expect(r).toMatchObject({ id: "lib1", status: 0, sealed: true, changes: { allow: 0, review: 1, deny: 0 }, tamper: [] });
    expect((await u.runs()).runs.map((x) => [x.id, x.exit, x.sealed])).toEqual([["lib1", 0, true]]);
    const shown = await u.runShow("lib1");
    expect(shown.entries).toMatchObject([{ path: "a.txt", change: "modified", decision: "review", reversible: true }]);
    expect((await u.cleanup("lib1")).remaining).toBe(0);
    const plan = await u.plan({ run: "lib1" });
    expect(plan.counts.restore).toBe(1);
    const file = `${u.store}/runs/lib1.json`;
    const { writeFileSync } = await import("node:fs");
    writeFileSync(file, readFileSync(file, "utf8").replace('"review"', '"allow"'));
    const e = await rejection(u.plan({ run: "lib1" }));
    expect([e.code, e.exit]).toEqual(["E_STORE_DAMAGED", 4]);
  });
});

describe("retention", () => {
  it("gc drops capsules older than the TTL from the end of the chain; what is kept still verifies", async () => {
    const root = makeRepo({ "a.txt": "1\n" });
    const u = await open({ root });
    await u.run(["true"], { id: "old1", cwd: root });
    await new Promise((r) => setTimeout(r, 1200));
    const kept = await u.run(["true"], { id: "new1", cwd: root });
    expect(kept.sealed).toBe(true);
    const endedNew = Date.parse((await u.runShow("new1")).record.endedAt);
    vi.stubEnv("UNWIND_NOW", new Date(endedNew + 500).toISOString());
    try {
      expect((await u.gc({ ttl: "1s", dryRun: true })).runs).toBe(1);
      expect((await u.runs()).total).toBe(2); // negative control: a dry run drops nothing
      expect((await u.gc({ ttl: "1s" })).runs).toBe(1);
    } finally {
      vi.unstubAllEnvs();
    }
    expect((await u.runs()).runs.map((r) => r.id)).toEqual(["new1"]);
    expect(await u.verify()).toMatchObject({ ok: true, runs: 1 });
    expect((await rejection(u.runShow("old1"))).exit).toBe(3);
  });
});
