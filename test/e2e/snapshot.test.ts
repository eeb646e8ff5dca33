import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git, makeRepo, read, snapshotId, unwind, write } from "../helpers.js";

describe("tree snapshots", () => {
  it("with a split index: the real index, its shared index and HEAD are untouched, and changes are caught", () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    git(root, "config", "core.splitIndex", "true");
    git(root, "update-index", "--split-index");
    write(root, "c.txt", "c\n");
    git(root, "add", "c.txt");
    const shared = () =>
      readdirSync(join(root, ".git"))
        .filter((f) => f.startsWith("sharedindex."))
        .sort();
    const before = { index: readFileSync(join(root, ".git", "index")), shared: shared(), head: git(root, "rev-parse", "HEAD") };
    expect(before.shared.length).toBeGreaterThan(0); // the negative control: the repository really is split
    const id = snapshotId(root);
    write(root, "a.txt", "changed\n");
    const r = unwind(root, ["restore", id, "--json"]);
    expect(r.json.items).toMatchObject([{ path: "a.txt", action: "restore", reason: null }]);
    expect(readFileSync(join(root, ".git", "index")).equals(before.index)).toBe(true);
    expect(shared()).toEqual(before.shared);
    expect(git(root, "rev-parse", "HEAD")).toBe(before.head);
  });

  it("a racily clean file (same size, same second as the index) is still captured", () => {
    const root = makeRepo({ "a.txt": "aaaa\n" });
    const s1 = snapshotId(root);
    // Same size, and an mtime set to the index's own: only git's racy check can tell.
    const idx = readdirSync(join(root, ".git", "unwind", "index")).find((f) => f.endsWith(".index"))!;
    const idxTime = statSync(join(root, ".git", "unwind", "index", idx)).mtime;
    writeFileSync(join(root, "a.txt"), "bbbb\n");
    utimesSync(join(root, "a.txt"), idxTime, idxTime);
    const s2 = snapshotId(root);
    const d = unwind(root, ["diff", s1, s2, "--json"]);
    expect(d.json.files.map((f: any) => f.path)).toEqual(["a.txt"]);
    // Restoring s1 gives the old bytes back.
    expect(unwind(root, ["restore", s1]).code).toBe(0);
    expect(read(root, "a.txt")).toBe("aaaa\n");
  });

  it("an unchanged tree costs one small commit object and ref, and names the same tree", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const a = unwind(root, ["snapshot", "--json"]).json;
    const b = unwind(root, ["snapshot", "--json"]).json;
    expect(b.tree).toBe(a.tree);
    expect(b.parent).toBe(a.id);
    expect(b.commit).not.toBe(a.commit);
    // Negative control: a change gives a different tree.
    write(root, "a.txt", "changed\n");
    expect(unwind(root, ["snapshot", "--json"]).json.tree).not.toBe(a.tree);
  });

  it("labels, --task from UNWIND_TASK, filters and limits", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    unwind(root, ["snapshot", "--label", "one"]);
    unwind(root, ["snapshot", "--session", "claude:s1"], { env: { UNWIND_TASK: "T-9" } });
    unwind(root, ["snapshot", "--label", "three"]);
    const all = unwind(root, ["snapshots", "--json"]).json.snapshots;
    expect(all.map((s: any) => s.label ?? null)).toEqual(["three", null, "one"]);
    expect(unwind(root, ["snapshots", "--task", "T-9", "--json"]).json.snapshots.map((s: any) => s.session)).toEqual(["claude:s1"]);
    expect(unwind(root, ["snapshots", "--limit", "1", "--json"]).json.snapshots).toHaveLength(1);
  });

  it("diff between two snapshots and against the work tree, as a stat and as a patch", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const s1 = snapshotId(root);
    write(root, "a.txt", "two\n");
    write(root, "new.txt", "n\n");
    const s2 = snapshotId(root);
    const stat = unwind(root, ["diff", s1, s2, "--json"]);
    expect(stat.json.files).toEqual([
      { path: "a.txt", added: 1, deleted: 1, binary: false },
      { path: "new.txt", added: 1, deleted: 0, binary: false },
    ]);
    const patch = unwind(root, ["diff", s1, "--patch"]);
    expect(patch.stdout).toContain("-one\n+two\n");
    expect(unwind(root, ["diff", s1, s2, "--stat", "--patch"]).code).toBe(2);
  });
});

describe("human output", () => {
  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)("is coloured on a terminal, never with NO_COLOR, never in a pipe", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "b\n");
    const bin = new URL("../../bin/unwind", import.meta.url).pathname;
    const onTty = (env: string) =>
      execFileSync("script", ["-qec", `${env} ${process.execPath} ${bin} restore ${id} --dry-run`, "/dev/null"], { cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "" } });
    expect(onTty("")).toContain("\u001b[");
    expect(onTty("NO_COLOR=1")).not.toContain("\u001b[");
    expect(unwind(root, ["restore", id, "--dry-run"], { env: { NO_COLOR: "" } }).stdout).not.toContain("\u001b[");
  });
});
