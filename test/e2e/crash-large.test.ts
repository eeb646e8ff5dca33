import { spawn } from "node:child_process";
import { chmodSync, readdirSync, renameSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, makeRepo, snapshotId, treeState, unwind, write } from "../helpers.js";

/**
 * SPEC section 3 under a real SIGKILL that lands anywhere in a large restore,
 * not only between two paths (crash.test.ts covers each named point): the
 * kill comes at a measured fraction of the write phase, so it falls while
 * several writes are in flight. After each kill, before anything recovers,
 * every path must hold its old bytes or its new ones; the next command must
 * then finish the job, and redo must bring back exactly what was replaced.
 */

const FILES = 1200;

/** Deterministic bytes of a given length, different per seed. */
function bytes(seed: number, length: number): Buffer {
  const b = Buffer.alloc(length);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

function setup() {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < FILES; i++) files[`d${i % 20}/f${i}.bin`] = bytes(i, i % 100 === 0 ? 512 * 1024 : 2048 + (i % 7) * 1000);
  const root = makeRepo(files);
  symlinkSync("d0/f0.bin", join(root, "link"));
  chmodSync(join(root, "d1/f1.bin"), 0o755);
  const original = treeState(root);
  const id = snapshotId(root);
  // Every kind of change: modified (a different length, so a torn file shows), deleted, added in new directories,
  // renamed (mv), mode flipped, a symlink retargeted, a directory replaced by a file.
  for (let i = 0; i < FILES; i++) {
    const rel = `d${i % 20}/f${i}.bin`;
    if (i % 10 === 3) unlinkSync(join(root, rel));
    else if (i % 10 === 4) write(root, `added/a${i % 5}/g${i}.bin`, bytes(i + 7, 3000));
    else if (i % 10 === 5) renameSync(join(root, rel), join(root, `d${i % 20}/moved-${i}.bin`));
    else write(root, rel, bytes(i + 100_000, i % 100 === 0 ? 700 * 1024 : 1500 + (i % 5) * 900));
  }
  chmodSync(join(root, "d1/f1.bin"), 0o644);
  unlinkSync(join(root, "link"));
  symlinkSync("d2/f2.bin", join(root, "link"));
  rmSync(join(root, "d19"), { recursive: true });
  // Every file of d3 and d13 was deleted; the empty directories go too, as an apply that empties a directory removes it.
  for (const d of ["d3", "d13"]) rmSync(join(root, d), { recursive: true });
  write(root, "d19", "a file where a directory was\n");
  return { root, id, original, changed: treeState(root) };
}

/** Files only, temp files of a killed apply left out: what "old or new" is judged on. */
function filesOf(state: Record<string, string>): Map<string, string> {
  return new Map(Object.entries(state).filter(([p, v]) => v !== "dir" && !/(^|\/)\.unwind-[^/]*\.tmp$/.test(p)));
}

/** Runs `restore id`, and kills it `delay` ms after its intent is on disk (never, when delay is null). Returns ms from intent to exit. */
function restoreKilledAt(root: string, id: string, delay: number | null): Promise<{ span: number; signal: string | null }> {
  const pending = join(root, ".git", "unwind", "pending");
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "restore", id, "--json"], { cwd: root, stdio: "ignore" });
    let intentAt = 0;
    const poll = setInterval(() => {
      if (intentAt) return;
      let names: string[] = [];
      try {
        names = readdirSync(pending);
      } catch {}
      // The intent is on disk once its `.json` is: before that rename, only its temp file is (a kill there leaves the tree wholly old).
      if (!names.some((n) => n.endsWith(".json"))) return;
      intentAt = performance.now();
      if (delay !== null) setTimeout(() => child.kill("SIGKILL"), delay);
    }, 1);
    child.on("exit", (_code, signal) => {
      clearInterval(poll);
      resolve({ span: intentAt ? performance.now() - intentAt : 0, signal });
    });
  });
}

describe("SIGKILL anywhere in a large restore, repeated: nothing torn, nothing lost", () => {
  it("each kill leaves every path old or new, and the next command finishes the restore", async () => {
    const { root, id, original, changed } = setup();
    const oldFiles = filesOf(changed);
    const newFiles = filesOf(original);

    // Calibration, uninterrupted: how long the writes take on this machine.
    const full = await restoreKilledAt(root, id, null);
    expect(full.signal).toBeNull();
    expect(treeState(root)).toEqual(original);
    const first = unwind(root, ["receipts", "--json"]).json.receipts[0].id;
    expect(unwind(root, ["redo", first]).code).toBe(0);
    expect(treeState(root)).toEqual(changed);

    let mixed = 0;
    for (const fraction of [0.05, 0.25, 0.5, 0.75]) {
      const killed = await restoreKilledAt(root, id, Math.max(1, Math.round(full.span * fraction)));
      const after = filesOf(treeState(root));
      let fromNew = 0;
      let fromOld = 0;
      for (const p of new Set([...oldFiles.keys(), ...newFiles.keys(), ...after.keys()])) {
        const now = after.get(p);
        // Old or new, never anything else: a path absent now was absent on one side.
        expect([oldFiles.get(p), newFiles.get(p)], `${p} after a kill at ${fraction}`).toContain(now);
        if (now !== oldFiles.get(p)) fromNew++;
        else if (now !== newFiles.get(p)) fromOld++;
      }
      if (killed.signal === "SIGKILL" && fromNew > 0 && fromOld > 0) mixed++;

      // The next command recovers: the restore is finished, no temp file is left, the store verifies.
      const next = unwind(root, ["receipts", "--json"]);
      expect(next.code).toBe(0);
      expect(treeState(root)).toEqual(original);
      expect(readdirSync(join(root, ".git", "unwind", "pending"))).toEqual([]);
      expect(unwind(root, ["verify"]).code).toBe(0);
      // Nothing lost: redo brings back exactly the tree the killed restore began to replace.
      expect(unwind(root, ["redo", next.json.receipts[0].id]).code).toBe(0);
      expect(treeState(root)).toEqual(changed);
    }
    // The kills did land mid-write: at least one left a tree part old, part new (else the checks above prove little).
    expect(mixed).toBeGreaterThan(0);
  }, 300_000);
});
