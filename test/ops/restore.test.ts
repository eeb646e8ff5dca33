import { existsSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync, chmodSync, unlinkSync, rmSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { open } from "../../src/index.js";
import { dirFingerprint, git, gitStatus, makeRepo, read, tempDir, treeState, write, writeFiles } from "../helpers.js";

/*
 * Restore (and undo --snapshot) through the library on real repositories.
 * Paths given to the library are root-relative; the command line's
 * cwd-relative paths and its refusal of paths outside the root are in
 * test/e2e/restore.test.ts.
 */

/** Root-relative paths for `restore`. */
const repoPaths = (...ps: string[]) => ps;

const binary = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13, 0]);

describe("restore a snapshot on a real repository", () => {
  it("brings back modified, deleted and added files, exec bits and symlinks, then redo returns the exact tree", async () => {
    const root = makeRepo({
      "a.txt": "one\n",
      "bin.dat": binary,
      "run.sh": { content: "#!/bin/sh\n", mode: 0o755 },
      "name with spaces.txt": "spaces\n",
      "ünï/cödé.txt": "unicode\n",
      link: { symlink: "a.txt" },
      "keep/deep/x.txt": "x\n",
    });
    write(root, "line\nbreak.txt", "newline in name\n");
    const before = treeState(root);
    const u = await open({ root });
    const id = (await u.snapshot()).id;

    write(root, "a.txt", "two\n");
    writeFileSync(join(root, "bin.dat"), Buffer.from([9, 9, 9]));
    chmodSync(join(root, "run.sh"), 0o644);
    unlinkSync(join(root, "name with spaces.txt"));
    rmSync(join(root, "ünï"), { recursive: true });
    unlinkSync(join(root, "link"));
    symlinkSync("run.sh", join(root, "link"));
    write(root, "added/nested/new.txt", "new\n");
    unlinkSync(join(root, "line\nbreak.txt"));
    const after = treeState(root);

    const r = await u.restore(id);
    expect(r.partial).toBe(false);
    expect(treeState(root)).toEqual(before);
    expect(existsSync(join(root, "added"))).toBe(false); // directories it emptied are gone
    expect(r.counts.conflict).toBe(0);

    const redo = await u.redo(r.receipt!);
    expect(redo.partial).toBe(false);
    expect(treeState(root)).toEqual(after);
  });

  it("never touches the real index, HEAD, staged changes or ignored files", async () => {
    const root = makeRepo({ ".gitignore": "build/\n*.log\n", "a.txt": "one\n", "b.txt": "b\n" });
    write(root, "build/out.js", "compiled\n");
    write(root, "debug.log", "log\n");
    write(root, "b.txt", "staged\n");
    git(root, "add", "b.txt");
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    const head = git(root, "rev-parse", "HEAD");
    const indexBytes = readFileSync(join(root, ".git", "index"));

    write(root, "a.txt", "changed\n");
    write(root, "build/out.js", "recompiled\n");
    write(root, "debug.log", "more log\n");
    const r = await u.restore(id);
    expect(r.partial).toBe(false);
    expect(read(root, "a.txt")).toBe("one\n");
    expect(read(root, "build/out.js")).toBe("recompiled\n");
    expect(read(root, "debug.log")).toBe("more log\n");
    expect(git(root, "rev-parse", "HEAD")).toBe(head);
    expect(readFileSync(join(root, ".git", "index")).equals(indexBytes)).toBe(true);
    expect(git(root, "diff", "--cached", "--name-only")).toBe("b.txt\n");
  });

  it("a dry run leaves the work tree, the index file and the store byte-identical", async () => {
    const root = makeRepo({ "a.txt": "one\n", "b.txt": "b\n" });
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    write(root, "a.txt", "two\n");
    write(root, "c.txt", "new\n");
    unlinkSync(join(root, "b.txt"));
    const tree = treeState(root);
    const gitDir = dirFingerprint(join(root, ".git"));
    const status = gitStatus(root);

    const dry = await u.restore(id, { dryRun: true });
    expect(dry.partial).toBe(false);
    expect(dry.receipt).toBeNull();
    expect(dry.dryRun).toBe(true);
    expect(dry.items.map((i) => [i.path, i.action])).toEqual([
      ["a.txt", "restore"],
      ["b.txt", "restore"],
      ["c.txt", "delete"],
    ]);
    expect(treeState(root)).toEqual(tree);
    expect(dirFingerprint(join(root, ".git"))).toEqual(gitDir); // store, index, objects, refs
    expect(gitStatus(root)).toBe(status);

    // Negative control: the same call without dryRun does change all three.
    const real = await u.restore(id);
    expect(real.partial).toBe(false);
    expect(treeState(root)).not.toEqual(tree);
    expect(dirFingerprint(join(root, ".git"))).not.toEqual(gitDir);
  });

  it("restores only the named paths (a directory means everything under it)", async () => {
    const root = makeRepo({ "a.txt": "a\n", "dir/b.txt": "b\n", "dir/c.txt": "c\n" });
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    write(root, "a.txt", "A\n");
    write(root, "dir/b.txt", "B\n");
    write(root, "dir/c.txt", "C\n");
    const r = await u.restore(id, { paths: repoPaths("dir/b.txt") });
    expect(r.partial).toBe(false);
    expect([read(root, "a.txt"), read(root, "dir/b.txt"), read(root, "dir/c.txt")]).toEqual(["A\n", "b\n", "C\n"]);
    const d = await u.restore(id, { paths: repoPaths("dir") });
    expect(d.partial).toBe(false);
    expect(read(root, "dir/c.txt")).toBe("c\n");
    expect(read(root, "a.txt")).toBe("A\n");
  });

  it("works opened from a subdirectory and in a linked worktree, sharing one store", async () => {
    const root = makeRepo({ "a.txt": "main\n", "sub/dir/f.txt": "f\n" });
    const sub = join(root, "sub", "dir");
    const fromSub = await open({ cwd: sub });
    expect(fromSub.root).toBe(root);
    const id = (await fromSub.snapshot()).id;
    write(root, "a.txt", "changed\n");
    expect((await fromSub.restore(id)).partial).toBe(false);
    expect(read(root, "a.txt")).toBe("main\n");

    const wt = join(tempDir(), "wt");
    git(root, "worktree", "add", "-q", "-b", "feature", wt);
    write(wt, "a.txt", "in worktree\n");
    const w = await open({ root: wt });
    const wid = (await w.snapshot()).id;
    write(wt, "a.txt", "later\n");
    write(wt, "extra.txt", "x\n");
    expect(read(root, "a.txt")).toBe("main\n");
    const r = await w.restore(wid);
    expect(r.partial).toBe(false);
    expect(read(wt, "a.txt")).toBe("in worktree\n");
    expect(existsSync(join(wt, "extra.txt"))).toBe(false);
    expect(read(root, "a.txt")).toBe("main\n"); // the main work tree is not touched
    // One store in the common git dir; each worktree lists its own snapshots.
    expect(existsSync(join(root, ".git", "unwind"))).toBe(true);
    expect(existsSync(join(wt, ".unwind"))).toBe(false);
    const mine = (await w.snapshots()).snapshots.map((s) => s.id);
    const all = (await w.snapshots({ all: true })).snapshots.map((s) => s.id);
    expect(mine).toEqual([wid]);
    expect(all.sort()).toEqual([id, wid].sort());
  });

  it("works in a folder without git, which never becomes a repository", async () => {
    const root = tempDir();
    writeFiles(root, { "notes.md": "v1\n", "data/x.bin": binary });
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    write(root, "notes.md", "v2\n");
    write(root, "new.txt", "n\n");
    const r = await u.restore(id);
    expect(r.partial).toBe(false);
    expect(read(root, "notes.md")).toBe("v1\n");
    expect(existsSync(join(root, "new.txt"))).toBe(false);
    expect(existsSync(join(root, ".git"))).toBe(false);
    expect(existsSync(join(root, ".unwind", "git"))).toBe(true);
    // The store is never captured: restoring never deletes it.
    expect((await u.verify()).ok).toBe(true);
  });

  it("a path changed after the restore plan's snapshot is a conflict, and --force restores it keeping what was there", async () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const u = await open({ root });
    const s1 = (await u.snapshot()).id;
    write(root, "a.txt", "two\n");
    const s2 = (await u.snapshot()).id;
    write(root, "a.txt", "three (human)\n");
    // undo --snapshot s1 --to s2 takes back only s1→s2; the human's edit is not s2's state.
    const r = await u.undo({ snapshot: s1, to: s2 });
    expect(r.partial).toBe(true);
    expect(r.items).toMatchObject([{ path: "a.txt", action: "conflict", reason: "changed-since" }]);
    expect(read(root, "a.txt")).toBe("three (human)\n");
    // Negative control: the same undo when the file is still at s2's state restores it.
    write(root, "a.txt", "two\n");
    const ok = await u.undo({ snapshot: s1, to: s2 });
    expect(ok.items[0]!.action).toBe("restore");
    expect(read(root, "a.txt")).toBe("one\n");
    // --force over a later edit, then redo gives the later edit back.
    write(root, "a.txt", "four (human)\n");
    const f = await u.undo({ snapshot: s1, to: s2 }, { force: true });
    expect(f.items[0]!.action).toBe("restore");
    expect(read(root, "a.txt")).toBe("one\n");
    expect((await u.redo(f.receipt!)).partial).toBe(false);
    expect(read(root, "a.txt")).toBe("four (human)\n");
  });

  it("undo twice is a no-op the second time", async () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    write(root, "a.txt", "two\n");
    expect((await u.restore(id)).partial).toBe(false);
    const again = await u.restore(id);
    expect(again.partial).toBe(false);
    expect(again.items).toEqual([]);
  });

  it("leaves untracked files over the size cap alone and says so", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    write(root, "big.bin", Buffer.alloc(2048, 1));
    vi.stubEnv("UNWIND_SIZE_CAP", "1024");
    try {
      const s = await u.snapshot();
      expect(s.toolarge).toEqual(["big.bin"]);
      const r = await u.restore(id);
      expect(r.items).toHaveLength(1);
      expect(r.items[0]).toMatchObject({ path: "big.bin", action: "conflict", reason: "toolarge" });
      expect(r.partial).toBe(true);
      expect(existsSync(join(root, "big.bin"))).toBe(true);
    } finally {
      vi.unstubAllEnvs();
    }
    // Negative control: under a larger cap the file is captured and restore deletes it (redoably).
    const r2 = await u.restore(id);
    expect(r2.items[0]!.action).toBe("delete");
    expect(existsSync(join(root, "big.bin"))).toBe(false);
  });
});

describe("paths the library refuses", () => {
  it("a path outside the root or inside .git is a usage error before anything is read; an inside path restores", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    write(root, "a.txt", "A\n");
    const before = dirFingerprint(root);
    for (const p of ["../x", "/etc/passwd", "a/../../x", ".git/config"]) {
      await expect(u.restore(id, { paths: [p] }), p).rejects.toMatchObject({ code: "E_USAGE", exit: 2 });
    }
    expect(dirFingerprint(root)).toEqual(before);
    // control: the same call with a path inside the root restores it
    expect((await u.restore(id, { paths: ["./a.txt"] })).partial).toBe(false);
    expect(read(root, "a.txt")).toBe("a\n");
  });
});

describe("refusals on disk", () => {
  it("a parent directory swapped for a symlink is refused, nothing written through it; unless the plan removes the symlink", async () => {
    const root = makeRepo({ "d/f.txt": "orig\n" });
    const outside = tempDir();
    writeFileSync(join(outside, "f.txt"), "outside\n");
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    rmSync(join(root, "d"), { recursive: true });
    symlinkSync(outside, join(root, "d"));
    // Only the file: the symlink stays, so writing d/f.txt would write outside the root.
    const r = await u.restore(id, { paths: repoPaths("d/f.txt") });
    expect(r.items).toMatchObject([{ path: "d/f.txt", action: "conflict", reason: "symlink", detail: "d is a symlink" }]);
    expect(readFileSync(join(outside, "f.txt"), "utf8")).toBe("outside\n");
    expect(r.partial).toBe(true);
    // The whole tree: the plan deletes the symlink d first, then writes d/f.txt into a real directory.
    const all = await u.restore(id);
    expect(all.items.map((i) => [i.path, i.action])).toEqual([
      ["d", "delete"],
      ["d/f.txt", "restore"],
    ]);
    expect(lstatSync(join(root, "d")).isDirectory()).toBe(true);
    expect(read(root, "d/f.txt")).toBe("orig\n");
    expect(readFileSync(join(outside, "f.txt"), "utf8")).toBe("outside\n");
  });

  it("a file that became a directory of files is restored in one run, and redo brings the directory back", async () => {
    const root = makeRepo({ f: "file\n" });
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    unlinkSync(join(root, "f"));
    write(root, "f/x.txt", "x\n");
    const after = treeState(root);
    const r = await u.restore(id);
    expect(r.partial).toBe(false);
    expect(read(root, "f")).toBe("file\n");
    expect((await u.redo(r.receipt!)).partial).toBe(false);
    expect(treeState(root)).toEqual(after);
  });

  it("a hardlinked file is refused; the same file with one link is restored", async () => {
    const root = makeRepo({ "h.txt": "orig\n" });
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    write(root, "h.txt", "changed\n");
    const other = join(tempDir(), "other");
    require("node:fs").linkSync(join(root, "h.txt"), other);
    const r = await u.restore(id);
    expect(r.items[0]).toMatchObject({ path: "h.txt", action: "conflict", reason: "hardlink" });
    expect(read(root, "h.txt")).toBe("changed\n");
    unlinkSync(other);
    const ok = await u.restore(id);
    expect(ok.items[0]!.action).toBe("restore");
    expect(read(root, "h.txt")).toBe("orig\n");
  });

  it("a fifo where a file was is refused as not-regular", async () => {
    const root = makeRepo({ p: "file\n" });
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    unlinkSync(join(root, "p"));
    require("node:child_process").execFileSync("mkfifo", [join(root, "p")]);
    const r = await u.restore(id);
    expect(r.items[0]).toMatchObject({ path: "p", action: "conflict", reason: "not-regular" });
    expect(statSync(join(root, "p")).isFIFO()).toBe(true);
    unlinkSync(join(root, "p"));
    expect((await u.restore(id)).items[0]!.action).toBe("restore");
  });

  it("a directory where a file was is refused as not-regular", async () => {
    const root = makeRepo({ x: "file\n" });
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    unlinkSync(join(root, "x"));
    mkdirSync(join(root, "x"));
    const r = await u.restore(id);
    expect(r.items.length).toBe(1);
    expect(r.items[0]).toMatchObject({ path: "x", action: "conflict", reason: "not-regular" });
  });
});
