import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, rmSync, symlinkSync, existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CannotEditTree, incrementalTree, PACK_AT } from "../../src/capture/tree-edit.js";
import { resolveContext } from "../../src/repo/context.js";
import { FOLD_PATHS } from "../../src/capture/private-index.js";
import { git, gitsTree, makeRepo, unwind, wrappedGit, write } from "../helpers.js";

/*
 * Snapshot trees as `unwind snapshot` writes them, as a process (the early
 * start of its git status included; a wrapped git on the process's PATH),
 * checked against the tree git writes. The pure tree edits are in
 * test/unit/capture/tree-edit.test.ts.
 */

function prng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

describe("trees edited in-process equal the trees git writes", () => {
  it("over rounds of random adds, edits, deletes, mode changes, symlinks and file/directory swaps", () => {
    const root = makeRepo({ "a/b/c.txt": "c\n", "a/x.txt": "x\n", "top.txt": "t\n", "name with space.txt": "s\n" });
    const rnd = prng(7);
    const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
    const names = ["a", "a/b", "a/b/c.txt", "a/x.txt", "a/new.txt", "d/e/f.txt", "top.txt", "z.txt", "ü.txt", "a-b.txt", "a.b", "link"];
    unwind(root, ["snapshot"]); // seeds the private index and the recorded tree
    for (let round = 0; round < 12; round++) {
      for (let k = 0; k < 4; k++) {
        const p = pick(names);
        const abs = join(root, p);
        const op = pick(["write", "write", "delete", "chmod", "symlink", "dir"]);
        try {
          if (op === "delete") rmSync(abs, { recursive: true, force: true });
          else if (op === "chmod" && existsSync(abs) && lstatSync(abs).isFile()) chmodSync(abs, lstatSync(abs).mode & 0o111 ? 0o644 : 0o755);
          else if (op === "symlink") {
            rmSync(abs, { recursive: true, force: true });
            mkdirSync(join(abs, ".."), { recursive: true });
            symlinkSync(`target-${round}`, abs);
          } else if (op === "dir") {
            rmSync(abs, { recursive: true, force: true });
            write(root, `${p}/inner-${round}.txt`, `${round}\n`);
          } else {
            if (existsSync(abs) && !lstatSync(abs).isFile()) rmSync(abs, { recursive: true, force: true });
            write(root, p, `round ${round} ${k}\n`);
          }
        } catch {
          /* a parent is a file or symlink: that operation does not apply this round */
        }
      }
      const snap = unwind(root, ["snapshot", "--json"]);
      expect(snap.code, snap.stderr).toBe(0);
      expect(snap.json.tree, `round ${round}`).toBe(gitsTree(root));
    }
  });

  it("changes stay out of the private index until more than FOLD_PATHS differ, then are folded in; trees stay git's", () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 100; i++) files[`d${i % 7}/f${i}.txt`] = `${i}\n`;
    const root = makeRepo(files);
    unwind(root, ["snapshot"]);
    const dir = join(root, ".git", "unwind", "index");
    const indexFile = join(dir, readdirSync(dir).find((f) => f.endsWith(".index"))!);
    const indexBytes = () => readFileSync(indexFile);
    const staged = (p: string) => git(root, "ls-files", "-s", "--", p).split(" ")[1];
    const snap = () => {
      const r = unwind(root, ["snapshot", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      return r.json.tree as string;
    };
    const seeded = indexBytes();

    // Edits in place (a new or deleted file would let git status rewrite the
    // index for its untracked cache): the index is not rewritten.
    write(root, "d1/f1.txt", "one\n");
    write(root, "d2/f2.txt", "two\n");
    expect(snap()).toBe(gitsTree(root));
    expect(indexBytes().equals(seeded)).toBe(true);
    write(root, "new/file.txt", "new\n");
    rmSync(join(root, "d2/f2.txt"));
    expect(snap()).toBe(gitsTree(root));

    // A stale entry whose file goes back to the indexed bytes is simply clean again.
    write(root, "d1/f1.txt", "1\n");
    expect(snap()).toBe(gitsTree(root));

    for (let i = 10; i < 10 + FOLD_PATHS + 1; i++) write(root, `d${i % 7}/f${i}.txt`, `changed ${i}\n`);
    expect(snap()).toBe(gitsTree(root));
    // Negative control for the unchanged index above: past FOLD_PATHS the index takes the changes in.
    expect(indexBytes().equals(seeded)).toBe(false);
    const env = { ...process.env, GIT_INDEX_FILE: indexFile };
    const ours = execFileSync("git", ["ls-files", "-s", "--", "d3/f10.txt"], { cwd: root, env, encoding: "utf8" }).split(" ")[1];
    expect(ours).toBe(execFileSync("git", ["hash-object", "d3/f10.txt"], { cwd: root, encoding: "utf8" }).trim());
    expect(ours).not.toBe(staged("d3/f10.txt")); // the user's index still has the old blob

    write(root, "d4/f11.txt", "after the fold\n");
    expect(snap()).toBe(gitsTree(root));
    // Every object written in-process (trees, commits) reads back as git's own.
    git(root, "fsck", "--strict", "--no-dangling");
  });

  it("a change of PACK_AT files or more goes into one pack that git reads and checks; fewer stay loose", () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < PACK_AT + 40; i++) files[`p${i % 9}/f${i}.txt`] = `${i}\n`;
    const root = makeRepo(files);
    unwind(root, ["snapshot"]);
    const packs = () => readdirSync(join(root, ".git", "objects", "pack")).filter((f) => f.endsWith(".idx"));
    const before = packs();
    // A shell call's worth: every file rewritten, one of them twice the same bytes as another (written once).
    for (let i = 0; i < PACK_AT + 40; i++) write(root, `p${i % 9}/f${i}.txt`, i === 1 ? "same\n" : i === 2 ? "same\n" : `${i} again\n`);
    const r = unwind(root, ["snapshot", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.tree).toBe(gitsTree(root));
    const added = packs().filter((f) => !before.includes(f));
    expect(added).toHaveLength(1);
    // git's own reading of the pack and its index: every object's CRC, offset and id.
    const verified = git(root, "verify-pack", "-v", join(".git", "objects", "pack", added[0]!));
    expect(verified.split("\n").filter((l) => / blob /.test(l))).toHaveLength(PACK_AT + 39);
    expect(spawnSync("git", ["fsck", "--strict", "--no-dangling"], { cwd: root, encoding: "utf8" }).status).toBe(0);
    expect(git(root, "cat-file", "-p", `${r.json.tree}:p1/f1.txt`).trim()).toBe("same");
    // Control: a few files stay loose objects, no new pack.
    write(root, "p0/f0.txt", "small change\n");
    const small = unwind(root, ["snapshot", "--json"]);
    expect(small.json.tree).toBe(gitsTree(root));
    expect(packs()).toHaveLength(before.length + 1);
  });

  it("base trees that git gc packed are read through git", () => {
    const root = makeRepo({ "a/b/c.txt": "c\n", "a/d.txt": "d\n" });
    unwind(root, ["snapshot"]);
    write(root, "a/b/c.txt", "c2\n");
    const first = unwind(root, ["snapshot", "--json"]).json.tree as string;
    const sub = git(root, "rev-parse", `${first}:a/b`).trim();
    const loose = (oid: string) => existsSync(join(root, ".git", "objects", oid.slice(0, 2), oid.slice(2)));
    expect(loose(sub)).toBe(true); // negative control: before gc the edited tree is loose
    git(root, "gc", "-q");
    expect(loose(sub)).toBe(false);
    write(root, "a/b/c.txt", "c3\n");
    write(root, "a/b/e.txt", "e\n");
    expect(unwind(root, ["snapshot", "--json"]).json.tree).toBe(gitsTree(root));
  });

  it("a base tree that is gone (pruned, lost) is not taken for an empty directory: the snapshot is written from the index", () => {
    const root = makeRepo({ "a/b/c.txt": "c\n", "a/b/keep.txt": "keep\n", "a/d.txt": "d\n" });
    unwind(root, ["snapshot"]); // the index tree is HEAD's tree, whose objects are loose here
    const gone = git(root, "rev-parse", "HEAD:a/b").trim();
    const file = join(root, ".git", "objects", gone.slice(0, 2), gone.slice(2));
    expect(existsSync(file)).toBe(true); // negative control: it was there to lose
    rmSync(file);
    write(root, "a/b/c.txt", "c2\n");
    const r = unwind(root, ["snapshot", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.tree).toBe(gitsTree(root)); // a/b/keep.txt is still in it
    expect(git(root, "ls-tree", "-r", "--name-only", r.json.tree)).toContain("a/b/keep.txt");
  });

  it("a changed file that vanishes before it is hashed (a build's temp file) is simply gone from the snapshot, which still succeeds", () => {
    const root = makeRepo({ "a/keep.txt": "keep\n", "a/tmp.txt": "tmp\n", ".gitattributes": "*.bin binary\n" });
    unwind(root, ["snapshot"]);
    // A real git, behind a wrapper that deletes the file the moment status has
    // listed it as changed, before the snapshot reads it: what a concurrent
    // process deleting it would do, deterministically.
    const env = { PATH: wrappedGit("", `case " $* " in *" status "*) rm -f "$VANISH";; esac`), VANISH: join(root, "a/tmp.txt") };

    write(root, "a/keep.txt", "keep 2\n");
    write(root, "a/tmp.txt", "tmp 2\n");
    const r = unwind(root, ["snapshot", "--json"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(root, "a/tmp.txt"))).toBe(false); // the wrapper did delete it
    expect(r.json.tree).toBe(gitsTree(root));
    expect(git(root, "ls-tree", "-r", "--name-only", r.json.tree)).not.toContain("a/tmp.txt");
  });

  it("a damaged base tree (an object whose body is not a tree) is treated the same", () => {
    const root = makeRepo({ "a/b.txt": "b\n" });
    unwind(root, ["snapshot"]);
    const junk = execFileSync("git", ["hash-object", "-t", "tree", "--literally", "-w", "--stdin"], { cwd: root, input: "not a tree", encoding: "utf8" }).trim();
    const dir = join(root, ".git", "unwind", "index");
    writeFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith(".base"))!), junk + "\n");
    write(root, "a/b.txt", "b2\n");
    const d = unwind(root, ["snapshot", "--json"]);
    expect(d.code, d.stderr).toBe(0);
    expect(d.json.tree).toBe(gitsTree(root));
  });

  it("the index tree outlives the snapshots that named it: gc and git prune leave it, and later snapshots stay whole", () => {
    const scenario = () => {
      const root = makeRepo({ "c.txt": "c\n" });
      write(root, "notes.txt", "untracked\n"); // so the index tree is not HEAD's tree, which HEAD would keep alive
      const t0 = unwind(root, ["snapshot", "--json"]).json.tree as string;
      write(root, "c.txt", "c2\n");
      unwind(root, ["snapshot"]);
      const gc = unwind(root, ["gc", "--ttl", "1d"], { env: { UNWIND_NOW: "2099-01-01T00:00:00Z" } });
      expect(gc.code, gc.stderr).toBe(0);
      expect(unwind(root, ["snapshots", "--json"]).json.snapshots).toEqual([]); // nothing names t0 any more
      return { root, t0 };
    };
    const exists = (root: string, oid: string) => spawnSync("git", ["cat-file", "-e", oid], { cwd: root }).status === 0;

    const { root, t0 } = scenario();
    git(root, "prune", "--expire=now");
    expect(exists(root, t0)).toBe(true);
    git(root, "checkout", "c.txt"); // the work tree is the index tree again
    const again = unwind(root, ["snapshot", "--json"]);
    expect(again.json.tree).toBe(t0);
    expect(again.json.tree).toBe(gitsTree(root));
    git(root, "gc", "-q"); // fails on a ref to a missing tree
    git(root, "fsck", "--no-dangling");

    // Negative control: without the index ref, git prunes it.
    const other = scenario();
    const refs = git(other.root, "for-each-ref", "--format=%(refname)", "refs/unwind/index/").trim().split("\n");
    expect(refs).toHaveLength(1);
    git(other.root, "update-ref", "-d", refs[0]!);
    git(other.root, "prune", "--expire=now");
    expect(exists(other.root, other.t0)).toBe(false);
  });

  it("exec bits as git reads them (the owner's), and symlink targets that are not UTF-8, byte for byte", () => {
    const root = makeRepo({ "g.sh": "g\n", "o.sh": "o\n", "u.sh": "u\n" });
    unwind(root, ["snapshot"]);
    for (const [f, mode] of [
      ["g.sh", 0o654],
      ["o.sh", 0o645],
      ["u.sh", 0o744],
    ] as const) {
      write(root, f, `${f} changed\n`);
      chmodSync(join(root, f), mode);
    }
    const target = Buffer.from([0x66, 0xff, 0x6f]);
    symlinkSync(target, join(root, "odd-link"));
    const snap = unwind(root, ["snapshot", "--json"]).json;
    expect(snap.tree).toBe(gitsTree(root));
    const modes = git(root, "ls-tree", snap.tree)
      .trim()
      .split("\n")
      .map((l) => `${l.split("\t")[1]} ${l.split(" ")[0]}`);
    expect(modes).toEqual(expect.arrayContaining(["g.sh 100644", "o.sh 100644", "u.sh 100755", "odd-link 120000"]));
    rmSync(join(root, "odd-link"));
    expect(unwind(root, ["restore", snap.id]).code).toBe(0);
    expect(readlinkSync(join(root, "odd-link"), "buffer").equals(target)).toBe(true);
  });
});

describe("incrementalTree on a path that stopped being a regular file", () => {
  it("a fifo in a file's place is refused at once (the long way takes over), never read into a hang", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    unwind(root, ["snapshot"]);
    execFileSync("mkfifo", [join(root, "p")]);
    const ctx = await resolveContext(root, root);
    const base = git(root, "rev-parse", "HEAD^{tree}").trim();
    await expect(incrementalTree(ctx, base, new Map(), ["p"], () => 5_000)).rejects.toBeInstanceOf(CannotEditTree);
    // Negative control: a regular file there is hashed.
    rmSync(join(root, "p"));
    write(root, "p", "p\n");
    const r = await incrementalTree(ctx, base, new Map(), ["p"], () => 5_000);
    expect(r.changes.get("p")?.oid).toBe(git(root, "hash-object", "p").trim());
  });
});
