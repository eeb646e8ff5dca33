import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startEarly } from "../../src/cli/early-start.js";
import { makeRepo, read, snapshotId, unwind, unwindAsync, wrappedGit, write } from "../helpers.js";

/** A live process (sleep) named as the store lock's holder. */
function holdLock(root: string) {
  const holder = spawn("sleep", ["30"]);
  writeFileSync(join(root, ".git", "unwind", "lock"), JSON.stringify({ pid: holder.pid, host: hostname(), at: new Date().toISOString(), what: "test" }));
  return holder;
}

describe("the store lock", () => {
  it("eight processes snapshotting at once all succeed, one after another", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => unwindAsync(root, ["snapshot", "--json", "--label", `p${i}`])));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const ids = new Set(runs.map((r) => r.json.id));
    expect(ids.size).toBe(8);
    expect(unwind(root, ["snapshots", "--json"]).json.snapshots).toHaveLength(8);
    expect(existsSync(join(root, ".git", "unwind", "lock"))).toBe(false);
  });

  it("a restore racing a snapshot never interleaves with it", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "b\n");
    const [r, s] = await Promise.all([unwindAsync(root, ["restore", id, "--json"]), unwindAsync(root, ["snapshot", "--json"])]);
    expect(r.code, r.stderr).toBe(0);
    expect(s.code, s.stderr).toBe(0);
    expect(read(root, "a.txt")).toBe("a\n");
  });

  it("waits for a live holder and gives up with a clear message, changing nothing", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "b\n");
    const holder = holdLock(root);
    try {
      const r = unwind(root, ["restore", id], { env: { UNWIND_LOCK_TIMEOUT_MS: "300" } });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/locked by pid \d+/);
      expect(read(root, "a.txt")).toBe("b\n");
    } finally {
      holder.kill();
    }
  });

  it("takes over a lock whose holder died", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "b\n");
    const store = join(root, ".git", "unwind");
    mkdirSync(store, { recursive: true });
    // A pid that cannot be alive: the kernel's pid_max is below 2^22 on Linux.
    writeFileSync(join(store, "lock"), JSON.stringify({ pid: 4_194_304 + 17, host: hostname(), at: "2026-01-01T00:00:00Z", what: "dead" }));
    const r = unwind(root, ["restore", id], { env: { UNWIND_LOCK_TIMEOUT_MS: "2000" } });
    expect(r.code).toBe(0);
    expect(read(root, "a.txt")).toBe("a\n");
  });

  it("snapshot starts git status before parsing its command line; a bad command line still leaves the store unlocked", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    snapshotId(root); // the store and private index exist: the early start applies
    const bad = unwind(root, ["snapshot", "--bogus"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown option '--bogus'/);
    expect(existsSync(join(root, ".git", "unwind", "lock"))).toBe(false);
    // Negative control: the same early start with a good command line takes the snapshot.
    write(root, "a.txt", "b\n");
    const good = unwind(root, ["snapshot", "--json"]);
    expect(good.code, good.stderr).toBe(0);
    const globalFirst = unwind(root, ["--json", "snapshot", "--label", "g"]);
    expect(globalFirst.code, globalFirst.stderr).toBe(0);
    expect(globalFirst.json.label).toBe("g");
    expect(unwind(root, ["snapshots", "--json"]).json.snapshots).toHaveLength(3);
    expect(existsSync(join(root, ".git", "unwind", "lock"))).toBe(false);
  });

  it("snapshot gives way when the store is busy or an apply must be finished first", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "b\n");
    const holder = holdLock(root);
    const lock = join(root, ".git", "unwind", "lock");
    try {
      const r = unwind(root, ["snapshot"], { env: { UNWIND_LOCK_TIMEOUT_MS: "300" } });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/locked by pid \d+/);
      expect(JSON.parse(readFileSync(lock, "utf8")).pid).toBe(holder.pid); // never taken from its holder
    } finally {
      holder.kill();
      rmSync(lock, { force: true });
    }
    // An apply killed mid-way is finished before the snapshot is taken.
    const crashed = unwind(root, ["restore", id], { env: { UNWIND_TEST_CRASH: "write:1" } });
    expect(crashed.code).not.toBe(0);
    const snap = unwind(root, ["snapshot", "--json"]);
    expect(snap.code, snap.stderr).toBe(0);
    expect(snap.stderr).toMatch(/finished interrupted restore/);
    expect(read(root, "a.txt")).toBe("a\n");
  });
});

describe("the early start of snapshot's git status (bin/unwind, src/cli/early-start.ts)", () => {
  /** startEarly run in `root`; the lock it takes is released once its status is done. */
  async function early(root: string, argv: string[]): Promise<boolean> {
    const was = process.cwd();
    process.chdir(root);
    try {
      const e = startEarly(argv);
      if (!e) return false;
      await e.status;
      e.release();
      return true;
    } finally {
      process.chdir(was);
    }
  }

  it("starts for `[--json] snapshot …` once the store and private index exist, and for nothing else", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    expect(await early(root, ["snapshot"])).toBe(false); // no store yet: the normal path creates it
    snapshotId(root);
    const cases: [string[], boolean][] = [
      [["snapshot"], true],
      [["--json", "snapshot", "--label", "x"], true],
      [["snapshot", "--task", "t"], true],
      [["snapshots"], false],
      [["restore", "snapshot"], false],
      [["snapshot", "--root", "."], false],
      [["--root=.", "snapshot"], false],
      [["snapshot", "--help"], false],
      [["--verbose", "snapshot"], false],
    ];
    for (const [argv, starts] of cases) expect(await early(root, argv), argv.join(" ")).toBe(starts);
    // A busy store: the normal path waits for it.
    const holder = holdLock(root);
    try {
      expect(await early(root, ["snapshot"])).toBe(false);
    } finally {
      holder.kill();
      rmSync(join(root, ".git", "unwind", "lock"), { force: true });
    }
    expect(existsSync(join(root, ".git", "unwind", "lock"))).toBe(false);
  });

  it("a failure of the early-started git status is reported as the normal path reports it, and the lock is released", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    snapshotId(root);
    const env = { PATH: wrappedGit(`case " $* " in *" status "*) echo "fatal: injected" >&2; exit 128;; esac`) };
    const viaEarly = unwind(root, ["snapshot"], { env });
    const viaNormal = unwind(root, ["snapshot", "--root", "."], { env }); // --root: no early start
    expect(viaNormal.code).not.toBe(0);
    expect(viaNormal.stderr).toMatch(/git status exited 128: fatal: injected/);
    expect(viaEarly.code).toBe(viaNormal.code);
    expect(viaEarly.stderr).toBe(viaNormal.stderr);
    expect(existsSync(join(root, ".git", "unwind", "lock"))).toBe(false);
  });

  it("a bad setting while the early status fails too: reported as the normal path reports it, no unhandled rejection", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    snapshotId(root);
    const env = { PATH: wrappedGit(`case " $* " in *" status "*) echo "fatal: injected" >&2; exit 128;; esac`), UNWIND_SIZE_CAP: "abc" };
    const viaEarly = unwind(root, ["snapshot", "--json"], { env });
    const viaNormal = unwind(root, ["snapshot", "--json", "--root", "."], { env });
    expect(viaNormal.code).not.toBe(0);
    expect(viaEarly.code).toBe(viaNormal.code);
    expect(viaEarly.stdout).toBe(viaNormal.stdout);
    expect(viaEarly.stderr).toBe(viaNormal.stderr);
    expect(existsSync(join(root, ".git", "unwind", "lock"))).toBe(false);
  });
});
