/**
 * The git wrapper's `spool` (src/git/git.ts): git's output through a temp
 * file, unlinked at once, rather than a pipe, for `cat-file --batch` of
 * many blobs. The same bytes either way, no file left, no descriptor left
 * open, and the pipe where no temp file can be made.
 */
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { git as runGit, GitError } from "../../src/git/git.js";
import { git, makeRepo, tempDir } from "../helpers.js";

const savedTmp = process.env.TMPDIR;
afterEach(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
});

/** A repository with blobs of every kind a restore reads: text, binary, empty, one of 3 MiB. */
function blobs(): { root: string; oids: string[] } {
  const root = makeRepo({
    "a.txt": "alpha\n",
    "bin.dat": Buffer.from([0, 1, 2, 255, 10, 0]),
    empty: "",
    "big.txt": "x".repeat(3 * 1024 * 1024),
  });
  const oids = git(root, "ls-files", "-s")
    .trim()
    .split("\n")
    .map((l) => l.split(" ")[1]!);
  return { root, oids };
}

const openFds = () => readdirSync("/proc/self/fd").length;

/** What git's stdout is, as `readlink /proc/self/fd/1` in a process git starts says. */
async function stdoutOf(root: string, spool: boolean): Promise<string> {
  const r = await runGit(["-c", "alias.where=!readlink /proc/self/fd/1", "where"], { cwd: root, spool });
  return r.stdout.toString().trim();
}

describe("git's output spooled through a temp file", () => {
  it("gives the bytes the pipe gives, for many blobs and one of megabytes", async () => {
    const { root, oids } = blobs();
    const input = `${[...oids, ...oids, ...oids].join("\n")}\n`;
    const piped = await runGit(["cat-file", "--batch", "--buffer"], { cwd: root, input });
    const spooled = await runGit(["cat-file", "--batch", "--buffer"], { cwd: root, input, spool: true });
    expect(piped.stdout.length).toBeGreaterThan(9 * 1024 * 1024);
    expect(spooled.stdout.equals(piped.stdout)).toBe(true);
  });

  it("is a file no name leads to, and leaves nothing in the temp directory (the pipe otherwise)", async () => {
    const { root } = blobs();
    const tmp = tempDir("unwind-spool-");
    process.env.TMPDIR = tmp;
    expect(await stdoutOf(root, false)).toMatch(/^(pipe|socket):/); // the control: without spool, the pipe Node makes (a socket pair)
    expect(await stdoutOf(root, true)).toMatch(new RegExp(`^${tmp}/unwind-git-\\d+-[0-9a-f]{12} \\(deleted\\)$`));
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("closes its file when git fails or cannot be started, and falls back to the pipe where no temp file can be made", async () => {
    const { root, oids } = blobs();
    const before = openFds();
    for (let i = 0; i < 20; i++) {
      const e = await runGit(["cat-file", "--batch", "--no-such-option"], { cwd: root, spool: true }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(GitError);
    }
    // git not found: Node says so with an "error", then a "close"; the spool is closed once, and nothing throws.
    const nowhere = tempDir("unwind-spool-");
    for (let i = 0; i < 20; i++) {
      const e = await runGit(["version"], { cwd: root, env: { PATH: nowhere }, spool: true }).catch((x: unknown) => x);
      expect((e as GitError).message).toMatch(/git not found on PATH/);
    }
    await new Promise((r) => setTimeout(r, 50)); // any "close" still to come
    expect(openFds()).toBe(before);

    const missing = join(tempDir("unwind-spool-"), "gone");
    process.env.TMPDIR = missing;
    expect(await stdoutOf(root, true)).toMatch(/^(pipe|socket):/);
    const r = await runGit(["cat-file", "--batch"], { cwd: root, input: `${oids[0]}\n`, spool: true });
    expect(r.stdout.toString()).toMatch(/ blob \d+\n/);
    mkdirSync(missing); // the control: the same setting, once the directory is there, spools
    expect(await stdoutOf(root, true)).toMatch(/\(deleted\)$/);
  });
});
