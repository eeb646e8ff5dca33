/**
 * `treeStates` (src/scope/tree.ts): the states of named paths in a snapshot's
 * tree, read from their directories' tree objects. Checked against git's own
 * whole listing of the tree, for every kind of entry and name a snapshot can
 * hold: executables, symlinks, gitlinks, names that are not UTF-8, names
 * git's line input would split (the `ls-tree` way), and paths that are not
 * files there (a directory, a path through a file, a link or a gitlink).
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { splitZ } from "../../src/git/git.js";
import { decodePath } from "../../src/domain/path-bytes.js";
import { resolveContext } from "../../src/repo/context.js";
import { stateFromTree, treeStates } from "../../src/scope/tree.js";
import { ignoredUnder } from "../../src/scope/visibility.js";
import { CannotEditTree, treeEntries } from "../../src/capture/tree-edit.js";
import type { State } from "../../src/domain/types.js";
import { git, makeRepo } from "../helpers.js";

const raw = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

/** A tree built through the index, so names can be any bytes: each entry "<mode> <oid>\t<path bytes>". */
function treeOf(root: string, entries: { mode: string; path: Buffer }[], content = "x\n"): string {
  const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: root, input: content }).toString().trim();
  const commit = git(root, "rev-parse", "HEAD").trim();
  const input = Buffer.concat(entries.map((e) => raw(`${e.mode} ${e.mode === "160000" ? commit : blob}\t`, [...e.path], [0])));
  const env = { ...process.env, GIT_INDEX_FILE: `${root}/.git/scratch-index` };
  execFileSync("git", ["update-index", "-z", "--index-info"], { cwd: root, input, env });
  return execFileSync("git", ["write-tree"], { cwd: root, env }).toString().trim();
}

/** Keeps `tree` reachable and packs every object: none is left loose to be read in-process. */
function packAll(root: string, tree: string): void {
  const commit = execFileSync("git", ["commit-tree", tree, "-m", "keep"], { cwd: root }).toString().trim();
  execFileSync("git", ["update-ref", "refs/keep", commit], { cwd: root });
  execFileSync("git", ["repack", "-a", "-d", "-q"], { cwd: root });
  execFileSync("git", ["prune-packed"], { cwd: root });
}

/** Every non-tree entry of the tree, as git lists it whole (no pathspec). */
function listing(root: string, tree: string): Map<string, State> {
  const out = new Map<string, State>();
  for (const rec of splitZ(execFileSync("git", ["ls-tree", "-r", "-z", "--full-tree", tree], { cwd: root }))) {
    const tab = rec.indexOf("\t");
    const [mode, , oid] = rec.slice(0, tab).split(" ");
    out.set(rec.slice(tab + 1), stateFromTree(mode!, oid!)!);
  }
  return out;
}

describe("treeStates", () => {
  // Loose, the trees are read in-process; packed, through one `cat-file --batch`. The blobs differ, so the trees do too:
  // none of the second is among the trees the first left in the process's cache.
  it.each([
    ["loose", "x\n"],
    ["packed", "packed\n"],
  ])("gives git's state for each named path, and nothing for a path that is no file there (trees %s)", async (form, content) => {
    const root = makeRepo({ "seed.txt": "seed\n" });
    const junk = [0x6f, 0xff, 0xfe];
    const files: { mode: string; path: Buffer }[] = [
      { mode: "100644", path: raw("top.txt") },
      { mode: "100755", path: raw("bin/run.sh") },
      { mode: "120000", path: raw("bin/link") },
      { mode: "160000", path: raw("vendor/lib") },
      { mode: "100644", path: raw("a/b/c/deep.ts") },
      { mode: "100644", path: raw("a/b/sib.ts") },
      { mode: "100644", path: raw("spaced dir/with space.md") },
      { mode: "100644", path: raw("glob[x]/*.txt") },
      { mode: "100644", path: raw("bytes/", junk, ".txt") },
      { mode: "100644", path: raw("dir", junk, "/inner.txt") },
      { mode: "100644", path: raw("new\nline/file.txt") },
      { mode: "100644", path: raw('"quoted/file.txt') },
      { mode: "100644", path: raw("colon:dir/x.txt") },
      // What git's revision syntax would read into, after the colon that starts the path.
      { mode: "100644", path: raw("rev^{tree}/x.txt") },
      { mode: "100644", path: raw("at@{1}/x.txt") },
      { mode: "100644", path: raw(":lead/x.txt") },
      { mode: "100644", path: raw("trail /x.txt") },
      { mode: "100644", path: raw("back\\slash/x.txt") },
    ];
    for (let i = 0; i < 300; i++) files.push({ mode: "100644", path: raw(`many/f${i}.txt`) });
    const tree = treeOf(root, files, content);
    if (form === "packed") {
      packAll(root, tree);
      expect(execFileSync("git", ["count-objects", "-v"], { cwd: root }).toString()).toMatch(/^count: 0$/m); // the control: nothing is loose
    }
    const whole = listing(root, tree);
    const named = files.map((f) => decodePath(f.path));
    const notFiles = ["a/b", "a", "top.txt/under", "bin/link/under", "vendor/lib/inside", "absent.txt", "many/absent", "nodir/x", "new\nline/absent"];
    const ctx = await resolveContext(undefined, root);
    const got = await treeStates(ctx, tree, [...named, ...notFiles]);

    expect(whole.size).toBe(files.length); // the control: git lists every entry made above
    expect([...got.keys()].sort()).toEqual([...named].sort());
    for (const p of named) expect(got.get(p), p).toEqual(whole.get(p));
    expect(got.get("bin/run.sh")).toMatchObject({ kind: "file", mode: "100755" });
    expect(got.get("bin/link")).toMatchObject({ kind: "symlink" });
    expect(got.get("vendor/lib")).toMatchObject({ kind: "gitlink" });
  });

  it("answers for a few of many paths in a directory, and for none", async () => {
    const root = makeRepo({ "seed.txt": "seed\n" });
    const files = Array.from({ length: 50 }, (_, i) => ({ mode: "100644", path: raw(`d/f${i}.txt`) }));
    const tree = treeOf(root, files);
    const ctx = await resolveContext(undefined, root);
    expect([...(await treeStates(ctx, tree, ["d/f7.txt", "d/f49.txt"])).keys()].sort()).toEqual(["d/f49.txt", "d/f7.txt"]);
    expect((await treeStates(ctx, tree, [])).size).toBe(0);
  });

  it("finds the .gitignore of a directory whose name is not UTF-8, for the ignore check of a fold", async () => {
    const root = makeRepo({ "seed.txt": "seed\n" });
    const odd = raw("dir", [0xff], "/.gitignore");
    const tree = treeOf(
      root,
      [
        { mode: "100644", path: odd },
        { mode: "100644", path: raw("plain/.gitignore") },
      ],
      "*.log\n",
    );
    const ctx = await resolveContext(undefined, root);
    const rules = { tree, env: {}, excludes: { info: null, global: null } };
    const oddLog = decodePath(raw("dir", [0xff], "/x.log"));
    const ignored = await ignoredUnder(ctx, rules, [oddLog, "plain/x.log", "plain/x.txt", "elsewhere/x.log"]);
    // The control: the same rule in a directory named in UTF-8, and paths it does not cover.
    expect(ignored.sort()).toEqual(["plain/x.log", oddLog].sort());
  });

  it("tree-edit's reader refuses, not misreads, a packed tree's directory whose name has a newline", async () => {
    const root = makeRepo({ "seed.txt": "seed\n" });
    // Split at its newline, "new\nline" would be asked as "new", whose tree git has: the answers shift by one, and
    // without the refusal "new\nline/file.txt" is read from "new" (an executable there) and "zzz" taken for absent.
    const tree = treeOf(
      root,
      [
        { mode: "100755", path: raw("new/file.txt") },
        { mode: "100644", path: raw("new\nline/file.txt") },
        { mode: "100644", path: raw("ok/file.txt") },
      ],
      "newline\n",
    );
    packAll(root, tree);
    const ctx = await resolveContext(undefined, root);
    // First: "new\nline" and "ok" hold the same tree object, which the control's read would leave in the process's cache.
    await expect(treeEntries(ctx, tree, ["new\nline/file.txt", "zzz/x"], () => undefined)).rejects.toBeInstanceOf(CannotEditTree);
    // The control: a name the line input carries is read from the pack.
    expect((await treeEntries(ctx, tree, ["ok/file.txt"], () => undefined)).get("ok/file.txt")).toMatchObject({ mode: "100644" });
    // treeStates sends such a path to ls-tree, which finds it.
    expect((await treeStates(ctx, tree, ["new\nline/file.txt"])).get("new\nline/file.txt")).toMatchObject({ kind: "file", mode: "100644" });
  });

  it("takes a subtree written with a zero-padded mode, as some old tools wrote it, for a directory", async () => {
    const root = makeRepo({ "seed.txt": "seed\n" });
    const inner = treeOf(root, [{ mode: "100644", path: raw("file.txt") }], "inner\n");
    const body = (mode: string) => Buffer.concat([Buffer.from(`${mode} sub\0`), Buffer.from(inner, "hex")]);
    const write = (b: Buffer) => execFileSync("git", ["hash-object", "-t", "tree", "--literally", "-w", "--stdin"], { cwd: root, input: b }).toString().trim();
    const ctx = await resolveContext(undefined, root);
    // The control: the same tree with git's own mode.
    expect((await treeStates(ctx, write(body("40000")), ["sub", "sub/file.txt"])).get("sub/file.txt")).toMatchObject({ kind: "file" });
    const padded = await treeStates(ctx, write(body("040000")), ["sub"]);
    expect(padded.has("sub")).toBe(false);
  });
});
