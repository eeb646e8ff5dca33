/**
 * Every write, delete and read in the work tree is bound to the directory
 * it checked (SPEC section 2). A real process in the work tree swaps a
 * parent directory `d` for a symlink to a directory outside the root and
 * back, as fast as it can, while an undo deletes and writes paths in `d`
 * and while a file capture reads one: nothing outside is ever deleted,
 * written or recorded. The negative controls run the same loops with the
 * binding off (UNWIND_TEST_BOUND=off, acts by path as unwind did before)
 * and see the outside files lost, overwritten and read.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { commitWrite, performDelete, stageWrite } from "../../src/apply/perform.js";
import { captureState } from "../../src/capture/capture.js";
import { observeOne } from "../../src/capture/observe.js";
import { BoundDirs } from "../../src/sys/bound-dir.js";
import { sha256 } from "../../src/domain/hash.js";
import type { RepoPath } from "../../src/domain/types.js";
import { open } from "../../src/index.js";
import { Cas } from "../../src/store/cas.js";
import { makeRepo, tempDir } from "../helpers.js";

/**
 * The swapper: a real process that exchanges the directory `d` and a
 * symlink to the outside directory, atomically (renameat2 with
 * RENAME_EXCHANGE, through Python's ctypes: Node has no call for it), so
 * at every instant `d` is one or the other. Mostly the directory (plans and
 * rechecks see it, and act), the link for short spells.
 */
const SWAPPER = `
import ctypes, os, random, sys, time
libc = ctypes.CDLL(None, use_errno=True)
d, link = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
def swap():
    if libc.renameat2(-100, d, -100, link, 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
def spin(us):
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass
print("go", flush=True)
while True:
    spin(random.random() * 200)
    swap()
    spin(random.random() * 50)
    swap()
`;

let swapper: ChildProcess | null = null;

/** Starts the swapper as a real process; resolves once it runs. */
function startSwapper(d: string, outside: string): Promise<void> {
  symlinkSync(outside, `${d}.link`);
  const child = spawn("python3", ["-c", SWAPPER, d, `${d}.link`], { stdio: ["ignore", "pipe", "inherit"] });
  swapper = child;
  return new Promise((res) => child.stdout!.once("data", () => res()));
}

/** Stops it and puts the real directory back in place. */
async function stopSwapper(d: string): Promise<void> {
  const child = swapper!;
  swapper = null;
  const gone = new Promise((res) => child.once("exit", res));
  child.kill("SIGKILL");
  await gone;
  // Killed mid-spell: the link is at d and the directory at d.link.
  if (lstatSync(d).isSymbolicLink()) {
    unlinkSync(d);
    renameSync(`${d}.link`, d);
  } else unlinkSync(`${d}.link`);
}

afterEach(() => {
  swapper?.kill("SIGKILL");
  swapper = null;
});

async function withBinding<T>(on: boolean, fn: () => Promise<T>): Promise<T> {
  const was = process.env.UNWIND_TEST_BOUND;
  if (on) delete process.env.UNWIND_TEST_BOUND;
  else process.env.UNWIND_TEST_BOUND = "off";
  try {
    return await fn();
  } finally {
    if (was === undefined) delete process.env.UNWIND_TEST_BOUND;
    else process.env.UNWIND_TEST_BOUND = was;
  }
}

const N = 25;
const TRIES = Number(process.env.RACE_TRIES) || 20;

/**
 * `TRIES` undos of a shell call, each deleting the `N` files of `d` it
 * added and writing back the `N` it deleted, with the swapper running: how
 * many outside files were deleted or overwritten, and how many paths the
 * undos acted on.
 */
async function undoRace(bound: boolean): Promise<{ lost: number; written: number; acted: number }> {
  const root = makeRepo({ "a.txt": "a\n" });
  const outside = tempDir();
  const d = join(root, "d");
  const u = await open({ root });
  let lost = 0;
  let written = 0;
  let acted = 0;
  const fill = () => {
    for (let i = 0; i < N; i++) {
      writeFileSync(join(outside, `x${i}`), "new\n"); // what undo expects at d/x: a recheck through the link passes
      writeFileSync(join(outside, `y${i}`), "outside\n");
    }
  };
  fill();
  for (let t = 0; t < TRIES; t++) {
    rmSync(d, { recursive: true, force: true });
    mkdirSync(d);
    for (let i = 0; i < N; i++) writeFileSync(join(d, `y${i}`), "in\n");
    const session = `race:t${t}`;
    await u.record([], { session, phase: "pre", call: "c" });
    for (let i = 0; i < N; i++) {
      unlinkSync(join(d, `y${i}`));
      writeFileSync(join(d, `x${i}`), "new\n");
    }
    await u.record([], { session, phase: "post", call: "c" });
    await startSwapper(d, outside);
    const r = await withBinding(bound, () => u.undo({ session }));
    await stopSwapper(d);
    acted += r.items.filter((i) => i.action === "delete" || i.action === "restore").length;
    for (let i = 0; i < N; i++) {
      if (!existsSync(join(outside, `x${i}`))) lost++;
      if (readFileSync(join(outside, `y${i}`), "utf8") !== "outside\n") written++;
    }
    fill();
  }
  return { lost, written, acted };
}

/**
 * The apply's two acts on d/x and d/y, `times` each, through the code an
 * undo runs (a recheck by `observeOne` through the same directories, then
 * the unlink, or the temp file's rename), with the swapper running.
 */
async function performRace(bound: boolean, times: number): Promise<{ lost: number; written: number; acted: number }> {
  const root = makeRepo({ "a.txt": "a\n" });
  const outside = tempDir();
  const d = join(root, "d");
  mkdirSync(d);
  let lost = 0;
  let written = 0;
  let acted = 0;
  writeFileSync(join(outside, "x"), "new\n");
  writeFileSync(join(outside, "y"), "outside\n");
  await startSwapper(d, outside);
  await withBinding(bound, async () => {
    for (let i = 0; i < times; i++) {
      writeFileSync(join(root, "d.link", "x"), "new\n"); // wherever d is now: into the real one, or the outside one
      const dirs = new BoundDirs(root);
      try {
        const file = (rel: string) => () => {
          const o = observeOne(root, rel, "sha1", dirs);
          return o.kind === "file" || o.kind === "absent" ? o : null;
        };
        if (performDelete(dirs, "d/x" as RepoPath, file("d/x"))) acted++;
        const staged = stageWrite(dirs, "d/y" as RepoPath, { kind: "file", mode: "100644" }, Buffer.from("in\n"), "race");
        if (commitWrite(dirs, "d/y" as RepoPath, staged, file("d/y"))) acted++;
      } catch {
        /* a parent in the way: a conflict, nothing done */
      } finally {
        dirs.close();
      }
      if (!existsSync(join(outside, "x"))) {
        lost++;
        writeFileSync(join(outside, "x"), "new\n");
      }
      if (readFileSync(join(outside, "y"), "utf8") !== "outside\n") {
        written++;
        writeFileSync(join(outside, "y"), "outside\n");
      }
    }
  });
  await stopSwapper(d);
  return { lost, written, acted };
}

/** `reads` captures of d/x with the swapper running: how many recorded the outside file's bytes as d/x's. */
async function captureRace(bound: boolean, reads: number): Promise<{ outsideRead: number; captured: number }> {
  const root = makeRepo({ "d/x": "inside\n" });
  const outside = tempDir();
  writeFileSync(join(outside, "x"), "OUTSIDE secret\n");
  const cas = new Cas(join(tempDir(), "cas"));
  const secret = sha256(Buffer.from("OUTSIDE secret\n"));
  let outsideRead = 0;
  let captured = 0;
  await startSwapper(join(root, "d"), outside);
  await withBinding(bound, async () => {
    for (let i = 0; i < reads; i++) {
      const s = captureState(cas, root, "d/x" as RepoPath, 1 << 20, "sha1");
      if (typeof s === "object" && s?.sha256 === secret) outsideRead++;
      if (typeof s === "object" && s?.kind === "file") captured++;
    }
  });
  await stopSwapper(join(root, "d"));
  return { outsideRead, captured };
}

describe("a parent swapped for a symlink mid-act never sends an act outside the root", () => {
  it(`undo deletes and writes in d while d is swapped: no outside file is deleted or written in ${TRIES} tries`, async () => {
    const on = await undoRace(true);
    console.log(`undo race, ${TRIES} tries of ${N} deletes and ${N} writes: ${JSON.stringify(on)}`);
    expect(on.acted).toBeGreaterThan(0); // the undos did act while the swapper ran
    expect([on.lost, on.written]).toEqual([0, 0]);
    // By path, the same race lost or overwrote an outside file in 1 of 10 tries on a quiet machine, 13 times in 20
    // on a busy one: too uncertain to assert at a test's cost (RACE_CONTROL=1 runs it). The apply's own acts
    // below, repeated, are its negative control.
    if (process.env.RACE_CONTROL) console.log(`undo race by path: ${JSON.stringify(await undoRace(false))}`);
  }, 600_000);

  it("the apply's recheck and act, repeated while d is swapped: never outside (negative control: by path, outside)", async () => {
    const on = await performRace(true, 1000);
    const off = await performRace(false, 1000);
    console.log(`apply race, 1000 deletes and 1000 writes: bound ${JSON.stringify(on)}, by path ${JSON.stringify(off)}`);
    expect(on.acted).toBeGreaterThan(0);
    expect([on.lost, on.written]).toEqual([0, 0]);
    expect(off.lost + off.written).toBeGreaterThan(0);
  }, 300_000);

  it("a file capture of d/x while d is swapped never records the outside file's bytes (negative control: by path, it does)", async () => {
    // The control first, in rounds until the race shows by path (under load the swapper runs less often: once,
    // 3,000 reads by path met it not at all); then as many reads bound, which must never meet it.
    let reads = 0;
    const off = { outsideRead: 0, captured: 0 };
    for (let round = 0; round < 10 && off.outsideRead === 0; round++) {
      const r = await captureRace(false, 3000);
      reads += 3000;
      off.outsideRead += r.outsideRead;
      off.captured += r.captured;
    }
    const on = await captureRace(true, reads);
    console.log(`capture race, ${reads} reads: bound ${JSON.stringify(on)}, by path ${JSON.stringify(off)}`);
    expect(off.outsideRead).toBeGreaterThan(0);
    expect(on.captured).toBeGreaterThan(0);
    expect(on.outsideRead).toBe(0);
  }, 600_000);
});
