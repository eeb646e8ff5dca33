import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git, gitsTree, makeRepo, tempDir, unwind, write } from "../helpers.js";

/*
 * The pending record as `unwind snapshot` uses it, as a process (the early
 * start of its git status included: src/cli/early-start.ts). The pure
 * decision over a record is in test/unit/capture/unfolded.test.ts.
 */

describe("snapshots build on the last one's pending record", () => {
  const pendingFile = (root: string) => {
    const dir = join(root, ".git", "unwind", "index");
    return join(dir, readdirSync(dir).find((f) => f.endsWith(".pending"))!);
  };

  it("the last tree is built on while the pending files' stat data is unchanged; a file whose stat data changed is read again", () => {
    const root = makeRepo({ "a/x.txt": "x\n", "b/y.txt": "y\n" });
    unwind(root, ["snapshot"]);
    write(root, "a/x.txt", "x2\n");
    expect(unwind(root, ["snapshot", "--json"]).json.tree).toBe(gitsTree(root));
    // Plant HEAD's tree (a/x.txt still "x") as the record's tree, its own
    // mtime kept: a snapshot that builds on the record shows the planted bytes.
    const file = pendingFile(root);
    const rec = JSON.parse(readFileSync(file, "utf8"));
    const before = statSync(file);
    writeFileSync(file, JSON.stringify({ ...rec, tree: git(root, "rev-parse", "HEAD^{tree}").trim() }));
    utimesSync(file, before.atime, before.mtime); // the record's mtime is its racy-git reference
    write(root, "b/y.txt", "y2\n");
    const built = unwind(root, ["snapshot", "--json"]).json.tree;
    expect(git(root, "cat-file", "blob", `${built}:a/x.txt`)).toBe("x\n");
    expect(git(root, "cat-file", "blob", `${built}:b/y.txt`)).toBe("y2\n");
    // Negative control: the same bytes written again change the stat data, so a/x.txt is read again.
    write(root, "a/x.txt", "x2\n");
    expect(unwind(root, ["snapshot", "--json"]).json.tree).toBe(gitsTree(root));
  });

  it("a file edited back to what the index holds, a deletion and a file coming back: every tree is git's", () => {
    const root = makeRepo({ "a/x.txt": "x\n", "a/z.txt": "z\n", "b/y.txt": "y\n" });
    unwind(root, ["snapshot"]);
    const steps: (() => void)[] = [
      () => write(root, "a/x.txt", "x2\n"),
      () => write(root, "b/y.txt", "y2\n"),
      () => write(root, "a/x.txt", "x\n"), // back to the index's bytes: the record cannot serve
      () => rmSync(join(root, "a/z.txt")),
      () => write(root, "c/new.txt", "n\n"),
      () => write(root, "a/z.txt", "z again\n"),
      () => rmSync(join(root, "c"), { recursive: true }),
    ];
    for (const [i, step] of steps.entries()) {
      step();
      const r = unwind(root, ["snapshot", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json.tree, `step ${i}`).toBe(gitsTree(root));
    }
    expect(existsSync(pendingFile(root))).toBe(true);
  });

  it("a record whose tree is gone (pruned) is passed over: the snapshot is edited from the index tree", () => {
    const root = makeRepo({ "a/x.txt": "x\n", "b/y.txt": "y\n" });
    unwind(root, ["snapshot"]);
    write(root, "a/x.txt", "x2\n");
    const last = unwind(root, ["snapshot", "--json"]).json.tree as string;
    expect(JSON.parse(readFileSync(pendingFile(root), "utf8")).tree).toBe(last);
    const obj = join(root, ".git", "objects", last.slice(0, 2), last.slice(2));
    expect(existsSync(obj)).toBe(true); // negative control: it was there to lose
    rmSync(obj);
    write(root, "b/y.txt", "y2\n");
    const r = unwind(root, ["snapshot", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.tree).toBe(gitsTree(root));
  });

  it("a record that is not JSON is passed over", () => {
    const root = makeRepo({ "a/x.txt": "x\n" });
    unwind(root, ["snapshot"]);
    write(root, "a/x.txt", "x2\n");
    unwind(root, ["snapshot"]);
    writeFileSync(pendingFile(root), "{ torn");
    write(root, "a/x.txt", "x3\n");
    expect(unwind(root, ["snapshot", "--json"]).json.tree).toBe(gitsTree(root));
  });
});

describe("gc and the pending record", () => {
  it("gc that drops snapshots forgets the records (their trees may be pruned next); later snapshots stay git's", () => {
    const root = makeRepo({ "a/x.txt": "x\n", "b/y.txt": "y\n" });
    unwind(root, ["snapshot"]);
    write(root, "a/x.txt", "x2\n");
    unwind(root, ["snapshot"]);
    const dir = join(root, ".git", "unwind", "index");
    const records = () => readdirSync(dir).filter((f) => f.endsWith(".pending"));
    // Negative control: a gc that drops nothing leaves the record.
    expect(unwind(root, ["gc", "--ttl", "1d", "--json"]).json).toMatchObject({ snapshots: 0 });
    expect(records()).toHaveLength(1);
    const later = { UNWIND_NOW: "2100-01-01T00:00:00Z" };
    expect(unwind(root, ["gc", "--ttl", "1d", "--json"], { env: later }).json).toMatchObject({ snapshots: 2 });
    expect(records()).toHaveLength(0);
    git(root, "prune", "--expire=now");
    write(root, "b/y.txt", "y2\n");
    const r = unwind(root, ["snapshot", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.tree).toBe(gitsTree(root));
    git(root, "fsck", "--no-dangling");
  });
});

describe("the pending record, from a second review", () => {
  it("a restore's capture of the work tree writes no record: only a tree a snapshot ref names is built on", () => {
    const root = makeRepo({ "base.txt": "b\n", "a/x.txt": "x\n" });
    const id = unwind(root, ["snapshot", "--json"]).json.id as string;
    write(root, "a/x.txt", "x2\n");
    unwind(root, ["snapshot"]);
    const dir = join(root, ".git", "unwind", "index");
    const recordTree = () => JSON.parse(readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith(".pending"))!), "utf8")).tree as string;
    const before = recordTree();
    write(root, "notes.txt", "notes\n"); // untracked: the restore's capture of the tree holds it, no snapshot does
    write(root, "base.txt", "changed\n");
    const r = unwind(root, ["restore", id, "--json", "--", "base.txt"]);
    expect(r.code, r.stderr).toBe(0);
    expect(recordTree()).toBe(before);
    git(root, "prune", "--expire=now");
    const s = unwind(root, ["snapshot", "--json"]);
    expect(s.code, s.stderr).toBe(0);
    expect(s.json.tree).toBe(gitsTree(root));
    git(root, "fsck", "--no-dangling"); // every tree a snapshot names is there
    // Negative control: a snapshot does write it, naming its own tree.
    expect(recordTree()).toBe(s.json.tree);
  });

  it("a folder without git: gc that drops snapshots forgets its record too", () => {
    const root = tempDir();
    write(root, "a.txt", "a\n");
    unwind(root, ["snapshot"]);
    write(root, "a.txt", "a2\n");
    unwind(root, ["snapshot"]);
    const record = join(root, ".unwind", "git", "index.pending");
    expect(existsSync(record)).toBe(true); // negative control: it was there to forget
    expect(unwind(root, ["gc", "--ttl", "1d", "--json"], { env: { UNWIND_NOW: "2100-01-01T00:00:00Z" } }).json).toMatchObject({ snapshots: 2 });
    expect(existsSync(record)).toBe(false);
  });

  it("a .gitattributes or a conversion setting that changed: the snapshot still holds the bytes on disk", () => {
    for (const change of ["attributes", "autocrlf"] as const) {
      const root = makeRepo({ "keep.txt": "k\n" });
      unwind(root, ["snapshot"]);
      write(root, "foo.txt", "crlf\r\n");
      write(root, "bar.txt", "bar\n");
      unwind(root, ["snapshot"]);
      write(root, "bar.txt", "bar2\n"); // something to snapshot besides the setting itself
      if (change === "attributes") write(root, ".gitattributes", "*.txt text\n");
      else git(root, "config", "core.autocrlf", "true");
      const r = unwind(root, ["snapshot", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(git(root, "cat-file", "blob", `${r.json.tree}:foo.txt`), change).toBe("crlf\r\n");
      expect(git(root, "cat-file", "blob", `${r.json.tree}:bar.txt`), change).toBe("bar2\n");
      // Negative control: the setting is live, git's own tree holds foo.txt converted.
      expect(git(root, "cat-file", "blob", `${gitsTree(root)}:foo.txt`), change).toBe("crlf\n");
    }
  });
});
