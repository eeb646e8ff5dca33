import { describe, expect, it } from "vitest";
// @ts-expect-error: the soak is a plain script of bench/ (npm run soak), imported here for its short, seeded run.
import { soak } from "../../bench/soak.mjs";

/*
 * Issue 34, item 1, the short version: the same soak `npm run soak` runs for
 * 20,000 calls, here seeded and small. Every round's oracle check (changes
 * exact per session, each undo exactly its scope, each redo exactly back),
 * `verify` and the model's bytes at the end must hold: any violation fails.
 */
describe("soak (short, seeded)", () => {
  it("three agents, one of each harness: no oracle violation, verify ok", async () => {
    // Sessions of 4-20 calls, so agents start new ones and a session that has ended can be undone.
    const s = await soak({ agents: 3, calls: 24, seed: 34, sessionCalls: 4 });
    expect(s.violations).toEqual([]);
    expect(s.verify).toMatch(/^ok: /);
    // The run did what it claims: calls of every kind went through the hook, and at least one undo.
    expect(s.calls).toBeGreaterThanOrEqual(24);
    expect(s.hookMs.n).toBeGreaterThanOrEqual(48);
    expect(s.sessions).toBeGreaterThan(3);
  }, 300_000);
});
