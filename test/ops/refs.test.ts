import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRef } from "../../src/git/refs.js";
import { resolveContext } from "../../src/repo/context.js";
import { git, makeRepo, tempDir, wrappedGit } from "../helpers.js";

const head = (root: string) => git(root, "rev-parse", "HEAD").trim();
function target(root: string, name: string): string {
  try {
    return git(root, "rev-parse", "--verify", "-q", name).trim();
  } catch {
    return ""; // no such ref
  }
}

/** A `git` on PATH that logs its arguments, then runs the real one. */
function loggingGit(): { env: string; log: string } {
  const log = join(tempDir(), "log");
  return { env: wrappedGit(`echo "$*" >> "${log}"`), log };
}

async function withPath<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const old = process.env.PATH;
  process.env.PATH = path;
  try {
    return await fn();
  } finally {
    process.env.PATH = old;
  }
}

describe("createRef", () => {
  it("writes a ref git reads, leaves no lock, and never overwrites a loose one", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(root);
    const oid = head(root);
    const tree = git(root, "rev-parse", "HEAD^{tree}").trim();
    await createRef(ctx, "refs/unwind/t/a", oid);
    expect(target(root, "refs/unwind/t/a")).toBe(oid);
    expect(existsSync(join(root, ".git", "refs", "unwind", "t", "a.lock"))).toBe(false);

    await expect(createRef(ctx, "refs/unwind/t/a", tree)).rejects.toThrow(/update-ref/);
    expect(target(root, "refs/unwind/t/a")).toBe(oid);

    // Negative control: a new name is created.
    await createRef(ctx, "refs/unwind/t/b", tree);
    expect(target(root, "refs/unwind/t/b")).toBe(tree);
  });

  it("a lock someone else holds is theirs: git is asked, refuses, and the lock stays", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(root);
    const lock = join(root, ".git", "refs", "unwind", "t", "c.lock");
    mkdirSync(join(lock, ".."), { recursive: true });
    writeFileSync(lock, "theirs\n");
    await expect(createRef(ctx, "refs/unwind/t/c", head(root))).rejects.toThrow(/lock/);
    expect(readFileSync(lock, "utf8")).toBe("theirs\n");
    expect(target(root, "refs/unwind/t/c")).toBe("");
  });

  it("a reftable repository goes through git update-ref; a files one does not", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(root);
    const { env, log } = loggingGit();
    const oid = head(root);
    await withPath(env, () => createRef(ctx, "refs/unwind/t/files", oid));
    expect(existsSync(log) ? readFileSync(log, "utf8") : "").not.toMatch(/update-ref/);
    mkdirSync(join(root, ".git", "reftable"));
    await withPath(env, () => createRef(ctx, "refs/unwind/t/reftable", oid).catch(() => undefined));
    expect(readFileSync(log, "utf8")).toMatch(/update-ref --no-deref refs\/unwind\/t\/reftable/);
  });
});
