import { existsSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync, chmodSync, unlinkSync, rmSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dirFingerprint, git, gitStatus, makeRepo, read, snapshotId, tempDir, treeState, unwind, write, writeFiles } from "../helpers.js";

const binary = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13, 0]);

describe("restore a snapshot on a real repository", () => {
  it("brings back modified, deleted and added files, exec bits and symlinks, then redo returns the exact tree", () => {
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
    const id = snapshotId(root);

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

    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(treeState(root)).toEqual(before);
    expect(existsSync(join(root, "added"))).toBe(false); // directories it emptied are gone
    expect(r.json.counts.conflict).toBe(0);

    const redo = unwind(root, ["redo", r.json.receipt, "--json"]);
    expect(redo.code).toBe(0);
    expect(treeState(root)).toEqual(after);
  });

  it("never touches the real index, HEAD, staged changes or ignored files", () => {
    const root = makeRepo({ ".gitignore": "build/\n*.log\n", "a.txt": "one\n", "b.txt": "b\n" });
    write(root, "build/out.js", "compiled\n");
    write(root, "debug.log", "log\n");
    write(root, "b.txt", "staged\n");
    git(root, "add", "b.txt");
    const id = snapshotId(root);
    const head = git(root, "rev-parse", "HEAD");
    const indexBytes = readFileSync(join(root, ".git", "index"));

    write(root, "a.txt", "changed\n");
    write(root, "build/out.js", "recompiled\n");
    write(root, "debug.log", "more log\n");
    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.code).toBe(0);
    expect(read(root, "a.txt")).toBe("one\n");
    expect(read(root, "build/out.js")).toBe("recompiled\n");
    expect(read(root, "debug.log")).toBe("more log\n");
    expect(git(root, "rev-parse", "HEAD")).toBe(head);
    expect(readFileSync(join(root, ".git", "index")).equals(indexBytes)).toBe(true);
    expect(git(root, "diff", "--cached", "--name-only")).toBe("b.txt\n");
  });

  it("a dry run leaves the work tree, the index file and the store byte-identical", () => {
    const root = makeRepo({ "a.txt": "one\n", "b.txt": "b\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "two\n");
    write(root, "c.txt", "new\n");
    unlinkSync(join(root, "b.txt"));
    const tree = treeState(root);
    const gitDir = dirFingerprint(join(root, ".git"));
    const status = gitStatus(root);

    const dry = unwind(root, ["restore", id, "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    expect(dry.json.receipt).toBeNull();
    expect(dry.json.dryRun).toBe(true);
    expect(dry.json.items.map((i: any) => [i.path, i.action])).toEqual([
      ["a.txt", "restore"],
      ["b.txt", "restore"],
      ["c.txt", "delete"],
    ]);
    expect(treeState(root)).toEqual(tree);
    expect(dirFingerprint(join(root, ".git"))).toEqual(gitDir); // store, index, objects, refs
    expect(gitStatus(root)).toBe(status);

    // Negative control: the same command without --dry-run does change all three.
    const real = unwind(root, ["restore", id, "--json"]);
    expect(real.code).toBe(0);
    expect(treeState(root)).not.toEqual(tree);
    expect(dirFingerprint(join(root, ".git"))).not.toEqual(gitDir);
  });

  it("restores only the named paths, and refuses paths outside the root", () => {
    const root = makeRepo({ "a.txt": "a\n", "dir/b.txt": "b\n", "dir/c.txt": "c\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "A\n");
    write(root, "dir/b.txt", "B\n");
    write(root, "dir/c.txt", "C\n");
    const r = unwind(root, ["restore", id, "--json", "--", "dir/b.txt"]);
    expect(r.code).toBe(0);
    expect([read(root, "a.txt"), read(root, "dir/b.txt"), read(root, "dir/c.txt")]).toEqual(["A\n", "b\n", "C\n"]);
    const d = unwind(root, ["restore", id, "--", "dir"]);
    expect(d.code).toBe(0);
    expect(read(root, "dir/c.txt")).toBe("c\n");
    expect(read(root, "a.txt")).toBe("A\n");

    const tree = treeState(root);
    for (const bad of ["../x", "/etc/passwd", "a/../../x", ".git/config"]) {
      const b = unwind(root, ["restore", id, "--", bad]);
      expect(b.code, bad).toBe(2);
      expect(b.stderr.trim().split("\n")).toHaveLength(1);
      expect(b.stderr).toContain(bad);
    }
    expect(treeState(root)).toEqual(tree);
  });

  it("works from a subdirectory and in a linked worktree, sharing one store", () => {
    const root = makeRepo({ "a.txt": "main\n", "sub/dir/f.txt": "f\n" });
    const sub = join(root, "sub", "dir");
    const id = snapshotId(sub);
    write(root, "a.txt", "changed\n");
    expect(unwind(sub, ["restore", id]).code).toBe(0);
    expect(read(root, "a.txt")).toBe("main\n");

    const wt = join(tempDir(), "wt");
    git(root, "worktree", "add", "-q", "-b", "feature", wt);
    write(wt, "a.txt", "in worktree\n");
    const wid = snapshotId(wt);
    write(wt, "a.txt", "later\n");
    write(wt, "extra.txt", "x\n");
    expect(read(root, "a.txt")).toBe("main\n");
    const r = unwind(wt, ["restore", wid, "--json"]);
    expect(r.code).toBe(0);
    expect(read(wt, "a.txt")).toBe("in worktree\n");
    expect(existsSync(join(wt, "extra.txt"))).toBe(false);
    expect(read(root, "a.txt")).toBe("main\n"); // the main work tree is not touched
    // One store in the common git dir; each worktree lists its own snapshots.
    expect(existsSync(join(root, ".git", "unwind"))).toBe(true);
    expect(existsSync(join(wt, ".unwind"))).toBe(false);
    const mine = unwind(wt, ["snapshots", "--json"]).json.snapshots.map((s: any) => s.id);
    const all = unwind(wt, ["snapshots", "--all", "--json"]).json.snapshots.map((s: any) => s.id);
    expect(mine).toEqual([wid]);
    expect(all.sort()).toEqual([id, wid].sort());
  });

  it("works in a folder without git, which never becomes a repository", () => {
    const root = tempDir();
    writeFiles(root, { "notes.md": "v1\n", "data/x.bin": binary });
    const id = snapshotId(root);
    write(root, "notes.md", "v2\n");
    write(root, "new.txt", "n\n");
    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.code).toBe(0);
    expect(read(root, "notes.md")).toBe("v1\n");
    expect(existsSync(join(root, "new.txt"))).toBe(false);
    expect(existsSync(join(root, ".git"))).toBe(false);
    expect(existsSync(join(root, ".unwind", "git"))).toBe(true);
    // The store is never captured: restoring never deletes it.
    expect(unwind(root, ["verify", "--json"]).json.ok).toBe(true);
  });

  it("a path changed after the restore plan's snapshot is a conflict, and --force restores it keeping what was there", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const s1 = snapshotId(root);
    write(root, "a.txt", "two\n");
    const s2 = snapshotId(root);
    write(root, "a.txt", "three (human)\n");
    // undo --snapshot s1 --to s2 takes back only s1→s2; the human's edit is not s2's state.
    const r = unwind(root, ["undo", "--snapshot", s1, "--to", s2, "--json"]);
    expect(r.code).toBe(1);
    expect(r.json.items).toMatchObject([{ path: "a.txt", action: "conflict", reason: "changed-since" }]);
    expect(read(root, "a.txt")).toBe("three (human)\n");
    // Negative control: the same undo when the file is still at s2's state restores it.
    write(root, "a.txt", "two\n");
    const ok = unwind(root, ["undo", "--snapshot", s1, "--to", s2, "--json"]);
    expect(ok.json.items[0].action).toBe("restore");
    expect(read(root, "a.txt")).toBe("one\n");
    // --force over a later edit, then redo gives the later edit back.
    write(root, "a.txt", "four (human)\n");
    const f = unwind(root, ["undo", "--snapshot", s1, "--to", s2, "--force", "--json"]);
    expect(f.json.items[0].action).toBe("restore");
    expect(read(root, "a.txt")).toBe("one\n");
    expect(unwind(root, ["redo", f.json.receipt]).code).toBe(0);
    expect(read(root, "a.txt")).toBe("four (human)\n");
  });

  it("undo twice is a no-op the second time", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "two\n");
    expect(unwind(root, ["restore", id]).code).toBe(0);
    const again = unwind(root, ["restore", id, "--json"]);
    expect(again.code).toBe(0);
    expect(again.json.items).toEqual([]);
  });

  it("leaves untracked files over the size cap alone and says so", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const id = snapshotId(root, []);
    write(root, "big.bin", Buffer.alloc(2048, 1));
    const s = unwind(root, ["snapshot", "--json"], { env: { UNWIND_SIZE_CAP: "1024" } });
    expect(s.json.toolarge).toEqual(["big.bin"]);
    const r = unwind(root, ["restore", id, "--json"], { env: { UNWIND_SIZE_CAP: "1024" } });
    expect(r.json.items).toHaveLength(1);
    expect(r.json.items[0]).toMatchObject({ path: "big.bin", action: "conflict", reason: "toolarge" });
    expect(r.code).toBe(1);
    expect(existsSync(join(root, "big.bin"))).toBe(true);
    // Negative control: under a larger cap the file is captured and restore deletes it (redoably).
    const r2 = unwind(root, ["restore", id, "--json"]);
    expect(r2.json.items[0].action).toBe("delete");
    expect(existsSync(join(root, "big.bin"))).toBe(false);
  });
});

describe("refusals on disk", () => {
  it("a parent directory swapped for a symlink is refused, nothing written through it; unless the plan removes the symlink", () => {
    const root = makeRepo({ "d/f.txt": "orig\n" });
    const outside = tempDir();
    writeFileSync(join(outside, "f.txt"), "outside\n");
    const id = snapshotId(root);
    rmSync(join(root, "d"), { recursive: true });
    symlinkSync(outside, join(root, "d"));
    // Only the file: the symlink stays, so writing d/f.txt would write outside the root.
    const r = unwind(root, ["restore", id, "--json", "--", "d/f.txt"]);
    expect(r.json.items).toMatchObject([{ path: "d/f.txt", action: "conflict", reason: "symlink", detail: "d is a symlink" }]);
    expect(readFileSync(join(outside, "f.txt"), "utf8")).toBe("outside\n");
    expect(r.code).toBe(1);
    // The whole tree: the plan deletes the symlink d first, then writes d/f.txt into a real directory.
    const all = unwind(root, ["restore", id, "--json"]);
    expect(all.json.items.map((i: any) => [i.path, i.action])).toEqual([
      ["d", "delete"],
      ["d/f.txt", "restore"],
    ]);
    expect(lstatSync(join(root, "d")).isDirectory()).toBe(true);
    expect(read(root, "d/f.txt")).toBe("orig\n");
    expect(readFileSync(join(outside, "f.txt"), "utf8")).toBe("outside\n");
  });

  it("a file that became a directory of files is restored in one run, and redo brings the directory back", () => {
    const root = makeRepo({ f: "file\n" });
    const id = snapshotId(root);
    unlinkSync(join(root, "f"));
    write(root, "f/x.txt", "x\n");
    const after = treeState(root);
    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.code).toBe(0);
    expect(read(root, "f")).toBe("file\n");
    expect(unwind(root, ["redo", r.json.receipt]).code).toBe(0);
    expect(treeState(root)).toEqual(after);
  });

  it("a hardlinked file is refused; the same file with one link is restored", () => {
    const root = makeRepo({ "h.txt": "orig\n" });
    const id = snapshotId(root);
    write(root, "h.txt", "changed\n");
    const other = join(tempDir(), "other");
    require("node:fs").linkSync(join(root, "h.txt"), other);
    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.json.items[0]).toMatchObject({ path: "h.txt", action: "conflict", reason: "hardlink" });
    expect(read(root, "h.txt")).toBe("changed\n");
    unlinkSync(other);
    const ok = unwind(root, ["restore", id, "--json"]);
    expect(ok.json.items[0].action).toBe("restore");
    expect(read(root, "h.txt")).toBe("orig\n");
  });

  it("a fifo where a file was is refused as not-regular", () => {
    const root = makeRepo({ p: "file\n" });
    const id = snapshotId(root);
    unlinkSync(join(root, "p"));
    require("node:child_process").execFileSync("mkfifo", [join(root, "p")]);
    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.json.items[0]).toMatchObject({ path: "p", action: "conflict", reason: "not-regular" });
    expect(statSync(join(root, "p")).isFIFO()).toBe(true);
    unlinkSync(join(root, "p"));
    expect(unwind(root, ["restore", id, "--json"]).json.items[0].action).toBe("restore");
  });

  it("a directory where a file was is refused as not-regular", () => {
    const root = makeRepo({ x: "file\n" });
    const id = snapshotId(root);
    unlinkSync(join(root, "x"));
    mkdirSync(join(root, "x"));
    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.json.items.length).toBe(1);
    expect(r.json.items[0]).toMatchObject({ path: "x", action: "conflict", reason: "not-regular" });
  });
});
