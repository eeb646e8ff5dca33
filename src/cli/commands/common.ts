import { pendingIntents } from "../../apply/intent.js";
import { recoverPending } from "../../apply/recover.js";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { rootGlob } from "../../domain/glob.js";
import { checkName, checkRepoPath, insideRoot } from "../../domain/paths.js";
import type { RepoPath } from "../../domain/types.js";
import { usage } from "../../domain/errors.js";
import { resolveContext, type Context } from "../../repo/context.js";
import { withLock } from "../../store/lock.js";
import type { Globals } from "../globals.js";

/**
 * Resolves root and store, and finishes any apply a crash interrupted before
 * the command does anything else (SPEC section 3: the next command recovers).
 */
export async function open(globals: Globals): Promise<Context> {
  const ctx = await resolveContext(globals.root);
  // Only an actual intent takes the lock: a dry run must not create even a lock file.
  if (pendingIntents(ctx.store).length > 0) {
    await withLock(ctx.store, "recover", async () => {
      const done = await recoverPending(ctx);
      for (const r of done) process.stderr.write(`unwind: finished interrupted ${r.kind} ${r.id}\n`);
    });
  }
  return ctx;
}

/** The current directory, repository-relative ("" at the root, or outside it). */
export function cwdBase(ctx: Context): string {
  let cwd = process.cwd();
  try {
    cwd = realpathSync(cwd);
  } catch {
    /* gone: as typed */
  }
  const rel = insideRoot(ctx.root, cwd);
  return rel ?? "";
}

/**
 * PATHs from argv, relative to the current directory as git's pathspecs
 * are, validated once here. A path naming the root itself means the whole
 * tree: the result is then empty (no limit).
 */
export function cwdPaths(ctx: Context, raw: readonly string[]): RepoPath[] {
  const out: RepoPath[] = [];
  for (const p of raw) {
    if (p.includes("\0")) throw usage(`path '${p}' holds a NUL byte`);
    const rel = insideRoot(ctx.root, resolve(realCwd(), p));
    if (rel === null) throw usage(`path '${p}' is outside the work tree ${ctx.root}`, "give paths inside the work tree, relative to the current directory");
    if (rel === "") return [];
    const problem = checkRepoPath(rel);
    if (problem === "git-dir") throw usage(`path '${p}' is inside .git`, "unwind never writes there");
    if (problem) throw usage(`path '${p}' is not a usable path (${problem})`);
    out.push(rel as RepoPath);
  }
  return out;
}

function realCwd(): string {
  try {
    return realpathSync(process.cwd());
  } catch {
    return process.cwd();
  }
}

/** `--path` globs, relative to the current directory, in root-relative form. */
export function cwdGlobs(ctx: Context, globs: readonly string[] | undefined): string[] {
  const base = cwdBase(ctx);
  return (globs ?? []).map((g) => {
    const r = rootGlob(g, base);
    if (r === null) throw usage(`--path ${g} leaves the work tree`, "give globs relative to the current directory, inside the work tree");
    return r;
  });
}

/** A task label from `--task` or `UNWIND_TASK`, checked before anything is written. */
export function taskLabel(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const bad = checkName(name);
  if (bad) throw usage(`task name '${name.length > 40 ? name.slice(0, 40) + "…" : name}' ${bad}`, "a task name is 1-128 characters git accepts in a ref name");
  return name;
}
