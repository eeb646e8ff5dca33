import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, lstatSync, readlinkSync, rmSync, writeFileSync, symlinkSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, expect } from "vitest";
import { UnwindError } from "../src/domain/errors.js";

export const BIN = resolve(fileURLToPath(new URL(".", import.meta.url)), "..", "bin", "unwind");

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test file. */
export function tempDir(prefix = "unwind-test-"): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(d);
  return d;
}

export type FileSpec = string | Buffer | { content: string | Buffer; mode?: number } | { symlink: string };

export function writeFiles(root: string, files: Record<string, FileSpec>): void {
  for (const [rel, spec] of Object.entries(files)) {
    const abs = join(root, rel);
    mkdirSync(dirname(abs), { recursive: true });
    if (typeof spec === "object" && !Buffer.isBuffer(spec) && "symlink" in spec) {
      symlinkSync(spec.symlink, abs);
    } else if (typeof spec === "object" && !Buffer.isBuffer(spec)) {
      writeFileSync(abs, spec.content);
      if (spec.mode !== undefined) chmodSync(abs, spec.mode);
    } else {
      writeFileSync(abs, spec);
    }
  }
}

/** Runs real git; throws with git's stderr on failure. */
export function git(cwd: string, ...args: string[]): string {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("GIT_")) delete env[k];
  return execFileSync("git", args, {
    cwd,
    env: { ...env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** A real git repository with `files` committed (and `.gitignore` honoured). */
export function makeRepo(files: Record<string, FileSpec> = {}, opts: { commit?: boolean } = {}): string {
  const root = tempDir();
  git(root, "init", "-q", "-b", "main");
  git(root, "config", "core.autocrlf", "false");
  writeFiles(root, files);
  if (opts.commit !== false) {
    git(root, "add", "-A");
    git(root, "commit", "-q", "--allow-empty", "-m", "init");
  }
  return root;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs the built CLI as a user would: a real process, real cwd, real exit code. */
export function unwind(cwd: string, args: string[], opts: { env?: Record<string, string>; input?: string } = {}): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", ...opts.env },
    input: opts.input ?? "",
    encoding: "utf8",
    timeout: 120_000,
  });
  let json: unknown;
  if (args.includes("--json")) {
    try {
      json = JSON.parse(r.stdout);
    } catch {
      json = undefined;
    }
  }
  return { code: r.status ?? (r.signal ? 128 : -1), stdout: r.stdout, stderr: r.stderr, json };
}

/** Same, asynchronously: for racing several processes at once. */
export function unwindAsync(cwd: string, args: string[], opts: { env?: Record<string, string> } = {}): Promise<CliResult> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: "1", ...opts.env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code, signal) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      res({ code: code ?? (signal ? 128 : -1), stdout, stderr, json });
    });
  });
}

/**
 * Every file under `root` (but .git and the given exclusions) with its kind,
 * mode and content hash: compare two of these to prove a tree is byte-identical.
 */
export function treeState(root: string, exclude: string[] = [".git"]): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      if (exclude.includes(r)) continue;
      const st = lstatSync(join(root, r));
      if (st.isSymbolicLink()) out[r] = `link:${readlinkSync(join(root, r))}`;
      else if (st.isDirectory()) {
        out[r + "/"] = "dir";
        walk(r);
      } else
        out[r] = `${(st.mode & 0o777).toString(8)}:${createHash("sha256")
          .update(readFileSync(join(root, r)))
          .digest("hex")}`;
    }
  };
  walk("");
  return out;
}

/** Byte-level fingerprint of a directory (for "the store did not change"), including mtimes of files. */
export function dirFingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    let names: string[];
    try {
      names = readdirSync(join(dir, rel));
    } catch {
      return;
    }
    for (const name of names) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(dir, r));
      if (st.isDirectory()) {
        out[r + "/"] = "dir";
        walk(r);
      } else if (st.isFile()) {
        out[r] = `${st.size}:${st.mtimeMs}:${createHash("sha256")
          .update(readFileSync(join(dir, r)))
          .digest("hex")}`;
      } else out[r] = "other";
    }
  };
  walk("");
  return out;
}

export function read(root: string, rel: string): string {
  return readFileSync(join(root, rel), "utf8");
}

export function write(root: string, rel: string, content: string | Buffer): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), content);
}

export function snapshotId(cwd: string, args: string[] = []): string {
  const r = unwind(cwd, ["snapshot", "--json", ...args]);
  if (r.code !== 0) throw new Error(`snapshot failed: ${r.stderr}`);
  return r.json.id as string;
}

export function gitStatus(root: string): string {
  // --no-optional-locks: reading status must not itself rewrite .git/index.
  return git(root, "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all");
}

export { spawnSync };

/**
 * A real git behind a shell wrapper: `before` runs first (sh; "$*" holds the
 * arguments), then the real git, then `after` (its exit status kept).
 * Returns the PATH that puts it first.
 */
export function wrappedGit(before: string, after = ""): string {
  const bin = tempDir();
  const real = (process.env.PATH ?? "")
    .split(":")
    .map((d) => join(d, "git"))
    .find((p) => existsSync(p));
  const run = after ? `"${real}" "$@"\nrc=$?\n${after}\nexit $rc` : `exec "${real}" "$@"`;
  writeFileSync(join(bin, "git"), `#!/bin/sh\n${before}\n${run}\n`);
  chmodSync(join(bin, "git"), 0o755);
  return `${bin}:${process.env.PATH}`;
}

/** The tree git itself writes for the whole non-ignored work tree, from an empty index of its own. */
export function gitsTree(root: string): string {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_INDEX_FILE: join(tempDir(), "fresh.index") };
  for (const k of Object.keys(env)) if (k.startsWith("GIT_") && k !== "GIT_INDEX_FILE") delete env[k];
  execFileSync("git", ["add", "-A"], { cwd: root, env });
  return execFileSync("git", ["write-tree"], { cwd: root, env, encoding: "utf8" }).trim();
}

/**
 * Everything on disk that an operation could touch: the work tree (kind,
 * mode, bytes of every file) and everything under .git, the store included,
 * down to each file's mtime.
 */
export function disk(root: string) {
  return { tree: treeState(root), git: dirFingerprint(join(root, ".git")) };
}

/** The UnwindError a promise rejects with (fails the test if it resolves or rejects with anything else). */
export async function rejection(p: Promise<unknown>): Promise<UnwindError> {
  let result: unknown;
  try {
    result = await p;
  } catch (e) {
    expect(e).toBeInstanceOf(UnwindError);
    return e as UnwindError;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(result)}`);
}

/** The start time of a pid now (field 22 of /proc/<pid>/stat), null once it is gone or a zombie. */
export function startOf(pid: number): string | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return f[0] === "Z" ? null : (f[19] ?? null);
  } catch {
    return null;
  }
}

/** Whether a process of this pid exists (EPERM: it does, another user's). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
