import { readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { open } from "../../src/index.js";
import { storedAsIs } from "../../src/capture/conversion.js";
import { listSnapshots } from "../../src/capture/snapshot.js";
import { resolveContext } from "../../src/repo/context.js";
import { git, makeRepo, read, unwind, write } from "../helpers.js";

/*
 * Tree snapshots, their lists and diffs through the library. The command
 * line's side (UNWIND_TASK as the default --task, --stat/--patch, colour)
 * is in test/e2e/snapshot.test.ts; the early start of `unwind snapshot`'s
 * git status in test/e2e/lock.test.ts.
 */

describe("tree snapshots", () => {
  it("with a split index: the real index, its shared index and HEAD are untouched, and changes are caught", async () => {
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
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    write(root, "a.txt", "changed\n");
    const r = await u.restore(id);
    expect(r.items).toMatchObject([{ path: "a.txt", action: "restore", reason: null }]);
    expect(readFileSync(join(root, ".git", "index")).equals(before.index)).toBe(true);
    expect(shared()).toEqual(before.shared);
    expect(git(root, "rev-parse", "HEAD")).toBe(before.head);
  });

  it("a racily clean file (same size, same second as the index) is still captured", async () => {
    const root = makeRepo({ "a.txt": "aaaa\n" });
    const u = await open({ root });
    const s1 = (await u.snapshot()).id;
    // Same size, and an mtime set to the index's own: only git's racy check can tell.
    const idx = readdirSync(join(root, ".git", "unwind", "index")).find((f) => f.endsWith(".index"))!;
    const idxTime = statSync(join(root, ".git", "unwind", "index", idx)).mtime;
    writeFileSync(join(root, "a.txt"), "bbbb\n");
    utimesSync(join(root, "a.txt"), idxTime, idxTime);
    const s2 = (await u.snapshot()).id;
    const d = await u.diff(s1, s2);
    expect(d.files.map((f) => f.path)).toEqual(["a.txt"]);
    // Restoring s1 gives the old bytes back.
    expect((await u.restore(s1)).partial).toBe(false);
    expect(read(root, "a.txt")).toBe("aaaa\n");
  });

  it("an unchanged tree costs one small commit object and ref, and names the same tree", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const u = await open({ root });
    const a = await u.snapshot();
    const b = await u.snapshot();
    expect(b.tree).toBe(a.tree);
    expect(b.parent).toBe(a.id);
    expect(b.commit).not.toBe(a.commit);
    // Negative control: a change gives a different tree.
    write(root, "a.txt", "changed\n");
    expect((await u.snapshot()).tree).not.toBe(a.tree);
  });

  it("labels, task and session, filters and limits", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const u = await open({ root });
    await u.snapshot({ label: "one" });
    await u.snapshot({ session: "claude:s1", task: "T-9" });
    await u.snapshot({ label: "three" });
    const all = (await u.snapshots()).snapshots;
    expect(all.map((s) => s.label ?? null)).toEqual(["three", null, "one"]);
    expect((await u.snapshots({ task: "T-9" })).snapshots.map((s) => s.session)).toEqual(["claude:s1"]);
    expect((await u.snapshots({ limit: 1 })).snapshots).toHaveLength(1);
  });

  it("diff between two snapshots and against the work tree, as a stat and as a patch", async () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const u = await open({ root });
    const s1 = (await u.snapshot()).id;
    write(root, "a.txt", "two\n");
    write(root, "new.txt", "n\n");
    const s2 = (await u.snapshot()).id;
    const stat = await u.diff(s1, s2);
    expect(stat.files).toEqual([
      { path: "a.txt", added: 1, deleted: 1, binary: false },
      { path: "new.txt", added: 1, deleted: 0, binary: false },
    ]);
    expect(stat.patch).toBeNull();
    const patch = await u.diff(s1, null, { patch: true });
    expect(patch.to).toBeNull();
    expect(patch.patch).toContain("-one\n+two\n");
  });
});

describe("an attributes file anywhere on a path's way means git may convert it, so its bytes are git's to hash", () => {
  it("found at the root, at each level, and below a directory another path already walked; one off the way is not", async () => {
    const root = makeRepo({ "x.txt": "x\n", "a/b/c.txt": "c\n", "a/b/d/e.txt": "e\n", "z/f.txt": "f\n" });
    const ctx = await resolveContext(undefined, root);
    const paths = ["a/b/c.txt", "x.txt", "a/b/d/e.txt"];
    expect(storedAsIs(ctx, paths)).toBe(true); // the control: no attributes anywhere
    for (const at of [".gitattributes", "a/.gitattributes", "a/b/.gitattributes", "a/b/d/.gitattributes"]) {
      write(root, at, "*.txt text eol=crlf\n");
      expect(storedAsIs(ctx, paths), at).toBe(false);
      rmSync(join(root, at));
    }
    write(root, "z/.gitattributes", "*.txt text eol=crlf\n");
    expect(storedAsIs(ctx, paths)).toBe(true);
  });

  it("a process that lists the snapshots again reads only the commits it has not read, and lists what a fresh process lists", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const u = await open({ root });
    const ids: string[] = [];
    for (const t of ["1", "2", "3"]) {
      write(root, "a.txt", `${t}\n`);
      ids.push((await u.snapshot()).id);
    }
    const base = await resolveContext(undefined, root);
    const spawned: string[][] = [];
    // The real git, each run noted.
    const ctx = {
      ...base,
      git: (args: readonly string[], opts?: Parameters<typeof base.git>[1]) => {
        spawned.push([...args]);
        return base.git(args, opts);
      },
    };
    // Another process: what git lists.
    const fresh = () => JSON.parse(unwind(root, ["snapshots", "--json"]).stdout).snapshots.map((s: { id: string }) => s.id);
    expect((await listSnapshots(ctx)).map((s) => s.id)).toEqual([...ids].reverse());
    // Since: two more taken, the older packed, one dropped.
    for (const t of ["4", "5"]) {
      write(root, "a.txt", `${t}\n`);
      ids.push((await u.snapshot()).id);
    }
    git(root, "pack-refs", "--all");
    git(root, "update-ref", "-d", `refs/unwind/snapshots/${ids[1]}`);
    spawned.length = 0;
    const again = await listSnapshots(ctx);
    expect(again.map((s) => s.id)).toEqual([ids[4], ids[3], ids[2], ids[0]]);
    expect(again.map((s) => s.id)).toEqual(fresh());
    // The new commits were read here (loose objects), not by listing every ref's commit again.
    expect(spawned.filter((a) => a[0] === "for-each-ref")).toEqual([]);
    // Negative control: where this process has read none (the same repository by another spelling of its path), git lists them all.
    await listSnapshots({ ...ctx, commonDir: `${ctx.commonDir}/.` });
    expect(spawned.filter((a) => a[0] === "for-each-ref")).toHaveLength(1);
  });
});
