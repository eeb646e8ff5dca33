import { storePath } from "../domain/store-layout.js";
import { createHash } from "node:crypto";
import { realpathSync, statSync, writeFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { insideRoot } from "../domain/paths.js";
import { mkdirPrivate } from "../sys/files.js";
import { UnwindError } from "../domain/errors.js";
import { STORE_FORMAT } from "../domain/version.js";
import { envStore, findPlace, PRIVATE_STORE_NAME, privateRootOf, STORE_DIR_NAME } from "./discover.js";
import { guardStore } from "./store-guard.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { git, GitError, type GitOptions, type GitResult } from "../git/git.js";

/**
 * Where unwind works: the root it guards, the store it writes, and how to
 * address the git repository that holds its refs and objects.
 */
export interface Context {
  /** Absolute, symlink-resolved work tree root. */
  readonly root: string;
  readonly store: string;
  /** "git": the root is a git work tree. "private": a folder without git, served by a git dir inside the store. */
  readonly mode: "git" | "private";
  /** The git dir of this work tree (per worktree), or the private one. */
  readonly gitDir: string;
  /** The store's git dir for refs and objects shared by all worktrees. */
  readonly commonDir: string;
  /** The private index unwind keeps for this work tree's snapshots. */
  readonly indexFile: string;
  /** The real index of this work tree, only read to seed the private one. */
  readonly realIndex: string | null;
  readonly objectFormat: "sha1" | "sha256";
  /** Runs git against this repository (refs, objects), never against the real index. */
  git(args: readonly string[], opts?: Omit<GitOptions, "cwd">): Promise<GitResult>;
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export async function resolveContext(rootOpt: string | undefined, cwd = process.cwd()): Promise<Context> {
  const start = resolve(cwd, rootOpt ?? ".");
  if (!isDirectory(start)) {
    throw new UnwindError("E_NOT_DIR", `--root ${rootOpt ?? start}: not a directory`, {
      hint: "pass an existing directory, or run unwind from inside the work tree",
    });
  }
  const usual = usualContext(start, cwd);
  if (usual) return usual;
  const env = envStore(cwd);
  let probe: GitResult | null = null;
  try {
    probe = await git(["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir", "--show-object-format"], { cwd: start, okCodes: [128] });
  } catch (e) {
    if (e instanceof GitError && e.gitCode === 129) {
      throw new UnwindError("E_GIT_OLD", "git is too old for unwind (needs 2.31 or newer)", {
        hint: "upgrade git",
      });
    }
    throw e;
  }
  if (probe.code === 0) {
    const [top, gitDir, commonDir, format] = probe.stdout.toString("utf8").trim().split("\n");
    if (!top || !gitDir || !commonDir) {
      throw new UnwindError("E_GIT", `git rev-parse gave no work tree for ${start}`);
    }
    const real = realpathSync(commonDir);
    const store = env ?? join(real, STORE_DIR_NAME);
    guardStore(store);
    return gitContext(realpathSync(top), realpathSync(gitDir), real, format === "sha256" ? "sha256" : "sha1", store);
  }
  if (/not a git repository/i.test(probe.stderr)) {
    const root = privateRootOf(start, PRIVATE_STORE_NAME);
    const store = env ?? join(root, PRIVATE_STORE_NAME);
    guardStore(store);
    return privateContext(root, store);
  }
  throw new UnwindError("E_GIT", `cannot use ${start}: ${probe.stderr.trim().split("\n")[0] ?? "git failed"}`, {
    hint: "run unwind from a work tree, not from inside .git or a bare repository",
  });
}

/** One private index per work tree, named by this key of its (real) git dir. */
export function indexKey(gitDir: string): string {
  return createHash("sha256").update(gitDir).digest("hex").slice(0, 16);
}

/**
 * The context of the usual layouts (a work tree, a linked worktree, a folder
 * without git), found by reading files alone; null where only `git
 * rev-parse` can tell.
 */
export function usualContext(start: string, cwd = process.cwd()): Context | null {
  const place = findPlace(start, cwd);
  if (place === "unusual") return null;
  return place.mode === "private" ? privateContext(place.root, place.store) : gitContext(place.root, place.gitDir, place.commonDir, place.objectFormat, place.store);
}

function gitContext(root: string, gitDir: string, commonDir: string, objectFormat: "sha1" | "sha256", store: string): Context {
  const key = indexKey(gitDir);
  return makeContext({
    root,
    store,
    mode: "git",
    gitDir,
    commonDir,
    indexFile: storePath(store, "index", `${key}.index`),
    realIndex: join(gitDir, "index"),
    objectFormat,
    env: {},
  });
}

function privateContext(root: string, store: string): Context {
  const privateGit = storePath(store, "git");
  return makeContext({
    root,
    store,
    mode: "private",
    gitDir: privateGit,
    commonDir: privateGit,
    indexFile: join(privateGit, "index"),
    realIndex: null,
    objectFormat: "sha1",
    env: { GIT_DIR: privateGit, GIT_WORK_TREE: root },
  });
}

interface ContextParts {
  root: string;
  store: string;
  mode: "git" | "private";
  gitDir: string;
  commonDir: string;
  indexFile: string;
  realIndex: string | null;
  objectFormat: "sha1" | "sha256";
  env: Record<string, string>;
}

function makeContext(p: ContextParts): Context {
  return {
    root: p.root,
    store: p.store,
    mode: p.mode,
    gitDir: p.gitDir,
    commonDir: p.commonDir,
    indexFile: p.indexFile,
    realIndex: p.realIndex,
    objectFormat: p.objectFormat,
    git: (args, opts = {}) => git(args, { ...opts, cwd: p.root, env: { ...p.env, ...(opts.env ?? {}) } }),
  };
}

/** Whether `ensureStore` has nothing left to do (it writes VERSION after the directories). */
export function storeReady(ctx: Context): boolean {
  return existsSync(storePath(ctx.store, "VERSION")) && (ctx.mode !== "private" || existsSync(join(ctx.gitDir, "HEAD")));
}

/**
 * Creates the store (and, for a folder without git, its private git dir) on
 * first use. Only commands that write call this: a dry run must not create
 * anything.
 */
export async function ensureStore(ctx: Context): Promise<void> {
  mkdirPrivate(storePath(ctx.store, "cas"));
  mkdirPrivate(storePath(ctx.store, "index"));
  mkdirPrivate(storePath(ctx.store, "receipts"));
  const version = storePath(ctx.store, "VERSION");
  // Atomic: a crash must leave no VERSION rather than a torn one.
  if (!existsSync(version))
    writeFileAtomic(
      version,
      `${STORE_FORMAT}
`,
    );
  if (ctx.mode === "private" && !existsSync(join(ctx.gitDir, "HEAD"))) {
    // --shared=0600: what git itself makes in it (objects, refs) is private too, whatever the umask.
    await git(["init", "--bare", "--quiet", "--shared=0600", ctx.gitDir], { cwd: ctx.root });
    // The folder must never become a repository of its own, and the store must never be captured.
    const rel = insideRoot(ctx.root, ctx.store);
    const lines = ["# written by unwind: the store is never captured", "/.git/"];
    if (rel) lines.push(`/${rel}/`);
    mkdirPrivate(join(ctx.gitDir, "info"));
    writeFileSync(join(ctx.gitDir, "info", "exclude"), lines.join("\n") + "\n");
    await git(["config", "core.bare", "false"], { cwd: ctx.root, env: { GIT_DIR: ctx.gitDir } });
  }
}

/**
 * The same repository and store seen from another work tree of it (the
 * revert check's throwaway worktree): git runs there and paths resolve
 * there. Only for a git repository, whose linked worktrees share its objects.
 */
export function contextAt(ctx: Context, root: string): Context {
  if (ctx.mode !== "git") throw new UnwindError("E_GIT", `${ctx.root} is not a git repository`);
  return makeContext({ root, store: ctx.store, mode: "git", gitDir: ctx.gitDir, commonDir: ctx.commonDir, indexFile: ctx.indexFile, realIndex: null, objectFormat: ctx.objectFormat, env: {} });
}
