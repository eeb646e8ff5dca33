/**
 * Reading less without trusting more (issue 11): an apply reuses what its
 * plan read only where the file system proves the path unchanged, and reads
 * blobs in bounded batches. Real files, real git objects.
 */
import { chmodSync, existsSync, readdirSync, renameSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ByteCache } from "../../src/domain/byte-cache.js";
import { sha256 } from "../../src/domain/hash.js";
import { keptKey, observeOne } from "../../src/capture/observe.js";
import { looseHeader } from "../../src/git/objects.js";
import { resolveContext } from "../../src/repo/context.js";
import { Cas } from "../../src/store/cas.js";
import { BlobError } from "../../src/store/cas.js";
import { ContentReader } from "../../src/store/content.js";
import { fsClock, readFileBriefly } from "../../src/sys/files.js";
import type { GitOid, State } from "../../src/domain/types.js";
import { open } from "../../src/index.js";
import { git, makeRepo, read, spawnSync, tempDir, write } from "../helpers.js";

/** Waits until the file system's clock has moved past every time set so far. */
async function nextTick(dir: string): Promise<void> {
  const start = fsClock(join(dir, "tick"));
  while (fsClock(join(dir, "tick")) <= start) await new Promise((r) => setTimeout(r, 2));
}

describe("a file's stat data stands in for a second read only where it proves the file unchanged", () => {
  it("unchanged and older than the clock: the plan's observation is given back, unread", async () => {
    const dir = tempDir();
    write(dir, "f.txt", "one\n");
    await nextTick(dir);
    const fsNow = fsClock(join(dir, "clock"));
    const was = observeOne(dir, "f.txt", "sha1");
    expect(observeOne(dir, "f.txt", "sha1", undefined, { reuse: { as: was, fsNow } })).toBe(was);
  });
  it("rewritten with the same size and its modification time put back: read again (the change time gives it away)", async () => {
    const dir = tempDir();
    write(dir, "f.txt", "one\n");
    utimesSync(join(dir, "f.txt"), 1e9, 1e9); // a whole second, so it can be put back exactly
    await nextTick(dir);
    const fsNow = fsClock(join(dir, "clock"));
    const was = observeOne(dir, "f.txt", "sha1");
    writeFileSync(join(dir, "f.txt"), "two\n");
    utimesSync(join(dir, "f.txt"), 1e9, 1e9);
    expect(statSync(join(dir, "f.txt")).mtimeMs).toBe((was as { stamp: { mtimeMs: number } }).stamp.mtimeMs);
    const now = observeOne(dir, "f.txt", "sha1", undefined, { reuse: { as: was, fsNow } });
    expect(now).not.toBe(was);
    expect(now.kind === "file" && now.sha256).toBe(sha256(Buffer.from("two\n")));
  });
  it("written in the clock's current tick: read again even though nothing changed since (racy, as git calls it)", () => {
    const dir = tempDir();
    const fsNow = fsClock(join(dir, "clock"));
    write(dir, "f.txt", "one\n"); // at or after fsNow: a write in this tick would leave its times alone
    const was = observeOne(dir, "f.txt", "sha1");
    expect(was.kind === "file" && was.stamp!.ctimeMs >= fsNow).toBe(true);
    const now = observeOne(dir, "f.txt", "sha1", undefined, { reuse: { as: was, fsNow } });
    expect(now).not.toBe(was);
    expect(now).toMatchObject({ kind: "file", sha256: (was as { sha256: string }).sha256 });
  });
  it("replaced by another file (rename over it): read again", async () => {
    const dir = tempDir();
    write(dir, "f.txt", "one\n");
    write(dir, "g.txt", "one\n");
    await nextTick(dir);
    const fsNow = fsClock(join(dir, "clock"));
    const was = observeOne(dir, "f.txt", "sha1");
    renameSync(join(dir, "g.txt"), join(dir, "f.txt")); // same bytes, same size: another inode
    expect(observeOne(dir, "f.txt", "sha1", undefined, { reuse: { as: was, fsNow } })).not.toBe(was);
  });
});

/** `n` blobs in a real repository's object store, with their states. */
function blobs(root: string, n: number, size: number): { states: State[]; data: Buffer[] } {
  const data = Array.from({ length: n }, (_, i) => Buffer.from(`${i}:`.padEnd(size, "x")));
  const dir = tempDir();
  const files = data.map((d, i) => {
    const f = join(dir, `b${i}`);
    writeFileSync(f, d);
    return f;
  });
  const oids = git(root, "hash-object", "-w", ...files)
    .trim()
    .split("\n");
  return { data, states: oids.map((oid, i) => ({ kind: "file", mode: "100644", size: data[i]!.length, oid: oid as GitOid })) };
}
describe("blobs are read in bounded batches, each verified", () => {
  it("every blob comes back intact while the cache stays within its budget", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(undefined, root);
    const { states, data } = blobs(root, 40, 300);
    const reader = new ContentReader(ctx, new Cas(join(tempDir(), "cas")), new ByteCache(2000));
    await reader.prefetch(states);
    for (const [i, s] of states.entries()) {
      expect((await reader.read(s)).equals(data[i]!)).toBe(true);
      expect(reader.cache.size).toBeLessThanOrEqual(2000);
    }
    // Read again, in order, after the cache let the first ones go: still intact.
    for (const [i, s] of states.entries()) expect((await reader.read(s)).equals(data[i]!)).toBe(true);
  });
  it("sizes a state does not record are asked of git first, so no batch outgrows half the budget (negative control: with sizes given, the same)", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(undefined, root);
    const { states, data } = blobs(root, 30, 400);
    for (const withSize of [false, true]) {
      const reader = new ContentReader(ctx, new Cas(join(tempDir(), "cas")), new ByteCache(4000));
      await reader.prefetch(withSize ? states : states.map(({ size: _s, ...s }) => s));
      for (const [i, s] of states.entries()) expect((await reader.read(s)).equals(data[i]!)).toBe(true);
      expect(reader.batches.length).toBeGreaterThan(5);
      // Half the budget, plus git's header line for each object.
      for (const b of reader.batches) expect(b).toBeLessThanOrEqual(2000 + 5 * 60);
    }
  });
  it("a blob too large to keep is fetched alone and not kept; ones that fit share batches (the negative control)", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(undefined, root);
    for (const [size, alone] of [
      [600, true],
      [400, false],
    ] as const) {
      const { states, data } = blobs(root, 8, size);
      const reader = new ContentReader(ctx, new Cas(join(tempDir(), "cas")), new ByteCache(4000, 500));
      await reader.prefetch(states);
      for (const [i, s] of states.entries()) expect((await reader.read(s)).equals(data[i]!)).toBe(true);
      expect(reader.batches.length === states.length).toBe(alone);
      expect(reader.cache.size === 0).toBe(alone);
    }
  });
  it("a missing blob in the middle of a batch fails alone (negative control: its neighbours read)", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(undefined, root);
    const { states, data } = blobs(root, 6, 100);
    const gone: State = { kind: "file", mode: "100644", size: 100, oid: "1".repeat(40) as GitOid };
    const list = [...states.slice(0, 3), gone, ...states.slice(3)];
    const reader = new ContentReader(ctx, new Cas(join(tempDir(), "cas")), new ByteCache(100_000));
    await reader.prefetch(list);
    await expect(reader.read(gone)).rejects.toBeInstanceOf(BlobError);
    expect(await reader.status(gone)).toBe("missing");
    for (const [i, s] of states.entries()) expect((await reader.read(s)).equals(data[i]!)).toBe(true);
  });
  it("bytes that fail the recorded SHA-256 are a mismatch, never returned", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(undefined, root);
    const { states } = blobs(root, 1, 50);
    const reader = new ContentReader(ctx, new Cas(join(tempDir(), "cas")));
    expect(await reader.status(states[0]!)).toBe("ok");
    expect(await reader.status({ ...states[0]!, sha256: sha256(Buffer.from("something else")) })).toBe("mismatch");
  });
});

describe("loose blobs are read in-process, packed ones by git, each verified against its oid", () => {
  it("the same blobs read intact loose, then packed (git repack)", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(undefined, root);
    const { states, data } = blobs(root, 50, 120);
    for (const packed of [false, true]) {
      if (packed) {
        // Unreferenced, so `git repack` would leave them loose: packed by name, then the loose copies pruned.
        const r = spawnSync("git", ["pack-objects", "-q", join(root, ".git", "objects", "pack", "pack")], { cwd: root, input: states.map((s) => s.oid).join("\n") + "\n" });
        expect(r.status).toBe(0);
        git(root, "prune-packed");
      }
      const path = join(root, ".git", "objects", states[0]!.oid!.slice(0, 2), states[0]!.oid!.slice(2));
      expect(existsSync(path)).toBe(!packed);
      const reader = new ContentReader(ctx, new Cas(join(tempDir(), "cas")));
      await reader.prefetch(states);
      for (const [i, s] of states.entries()) expect((await reader.read(s)).equals(data[i]!)).toBe(true);
    }
  });
  it("git holds a blob of the recorded size, loose or packed; a state of another size it does not hold (the control)", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(undefined, root);
    const { states } = blobs(root, 40, 90);
    const wrong = states.map((s, i) => (i % 3 === 0 ? { ...s, size: 91 } : s));
    const expected = new Set(wrong.filter((s) => s.size === 90).map((s) => s.oid));
    expect(looseHeader(join(root, ".git", "objects"), states[0]!.oid!)).toEqual({ type: "blob", size: 90 }); // loose: read here
    for (const packed of [false, true]) {
      if (packed) {
        const r = spawnSync("git", ["pack-objects", "-q", join(root, ".git", "objects", "pack", "pack")], { cwd: root, input: states.map((s) => s.oid).join("\n") + "\n" });
        expect(r.status).toBe(0);
        git(root, "prune-packed");
      }
      const reader = new ContentReader(ctx, new Cas(join(tempDir(), "cas")));
      expect(await reader.heldByGit(wrong)).toEqual(expected);
    }
    expect(looseHeader(join(root, ".git", "objects"), states[0]!.oid!)).toBeNull(); // packed now: git answered
  });
  it("a loose object whose bytes fail its oid is a mismatch, never returned (negative control: its neighbour reads)", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(undefined, root);
    const { states, data } = blobs(root, 2, 80);
    // A well-formed loose object of the same type and size, with other bytes: only the oid check can tell.
    const bad = states[0]!;
    const path = join(root, ".git", "objects", bad.oid!.slice(0, 2), bad.oid!.slice(2));
    chmodSync(path, 0o644);
    writeFileSync(path, deflateSync(Buffer.concat([Buffer.from("blob 80\0"), Buffer.alloc(80, "z")])));
    const reader = new ContentReader(ctx, new Cas(join(tempDir(), "cas")));
    await reader.prefetch(states);
    expect(await reader.status(bad)).toBe("mismatch");
    await expect(reader.read(bad)).rejects.toBeInstanceOf(BlobError);
    expect((await reader.read(states[1]!)).equals(data[1]!)).toBe(true);
  });
});

describe("a batch's temp files are written first; each path is still re-checked right before its rename", () => {
  /** Undoes s1 → s2 of a.txt and b.txt; `during` runs once a.txt is done, while b.txt's temp file already waits. */
  async function undoWith(during: (root: string) => void) {
    const root = makeRepo({ "a.txt": "a1\n", "b.txt": "b1\n" });
    const u = await open({ root });
    const s1 = (await u.snapshot()).id;
    write(root, "a.txt", "a2\n");
    write(root, "b.txt", "b2\n");
    const s2 = (await u.snapshot()).id;
    const r = await u.undo({ snapshot: s1, to: s2 }, { progress: (done) => done === 1 && during(root) });
    return { root, r };
  }

  it("a person's write to a path whose temp file is ready keeps the person's bytes (a conflict), and no temp file is left", async () => {
    const { root, r } = await undoWith((root) => write(root, "b.txt", "b3 (human, mid-undo)\n"));
    expect(r.items).toMatchObject([
      { path: "a.txt", action: "restore" },
      { path: "b.txt", action: "conflict", reason: "changed-since" },
    ]);
    expect(read(root, "a.txt")).toBe("a1\n");
    expect(read(root, "b.txt")).toBe("b3 (human, mid-undo)\n");
    expect(readdirSync(root).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("negative control: with nobody writing, the same undo restores both", async () => {
    const { root, r } = await undoWith(() => {});
    expect(r.items.map((i: { action: string }) => i.action)).toEqual(["restore", "restore"]);
    expect(read(root, "b.txt")).toBe("b1\n");
  });
});

describe("a plan reads each small file into one reused buffer, and keeps copies", () => {
  it("bytes exact at every size around the buffer's, and for a file grown past the size its lstat gave", () => {
    const dir = tempDir();
    for (const n of [0, 1, 65535, 65536, 65537, 200_000]) {
      const data = Buffer.alloc(n, n % 251);
      writeFileSync(join(dir, `f${n}`), data);
      expect(readFileBriefly(join(dir, `f${n}`), n).equals(data), `${n} bytes`).toBe(true);
    }
    const grown = Buffer.alloc(100_000, 7);
    writeFileSync(join(dir, "grown"), grown);
    expect(readFileBriefly(join(dir, "grown"), 10).equals(grown)).toBe(true);
  });

  it("what the plan keeps for the apply is each file's own bytes, though each read reuses one buffer", () => {
    const dir = tempDir();
    write(dir, "a.txt", "aaaa\n");
    write(dir, "b.txt", "bbbb\n");
    // Control: two reads hand back views of the same memory; a view kept would change under the next read.
    const first = readFileBriefly(join(dir, "a.txt"), 5);
    readFileBriefly(join(dir, "b.txt"), 5);
    expect(first.toString()).toBe("bbbb\n");

    const keep = new ByteCache(1 << 20);
    const a = observeOne(dir, "a.txt", "sha1", undefined, { keep });
    const b = observeOne(dir, "b.txt", "sha1", undefined, { keep });
    if (a.kind !== "file" || b.kind !== "file") throw new Error("files expected");
    expect(keep.get(keptKey("a.txt", a.sha256))?.toString()).toBe("aaaa\n");
    expect(keep.get(keptKey("b.txt", b.sha256))?.toString()).toBe("bbbb\n");
    expect(a.sha256).toBe(sha256(Buffer.from("aaaa\n")));
  });
});
