import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

describe("npm run soak: its flags", () => {
  const script = join(__dirname, "..", "..", "bench", "soak.mjs");
  const runs = () => readdirSync(tmpdir()).filter((f) => f.startsWith("unwind-soak-")).length;
  it("a flag it does not know, or a bad number, is refused at once with the usage, and no run starts (control: --help prints the same usage and exits 0)", () => {
    const before = runs();
    for (const args of [["--help"], ["--minuts", "5"], ["--calls", "x"], ["--oracle", "both"]]) {
      const r = spawnSync("node", [script, ...args], { encoding: "utf8", timeout: 20_000 });
      const help = args[0] === "--help";
      expect(r.status).toBe(help ? 0 : 2);
      expect(help ? r.stdout : r.stderr).toContain("usage: npm run soak --");
      if (!help) expect(r.stderr.split("\n")[0]).toContain(`soak: ${args[0]}`);
    }
    expect(runs()).toBe(before);
  });
});
