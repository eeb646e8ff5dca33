import { copyFileSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { recoverPending } from "../apply/recover.js";
import { writeWorkTree, type TreeResult } from "../capture/snapshot.js";
import { UnwindError, usage } from "../domain/errors.js";
import { pathMatcher, rootGlob } from "../domain/glob.js";
import { fsPath, insideRoot, jsonPath } from "../domain/paths.js";
import type { ChangeEntry, ChangeKind, ChangeSet } from "../domain/types.js";
import { GitError } from "../git/git.js";
import { addWorktree, removeWorktree, treeCommit } from "../git/worktrees.js";
import { contextAt, storeReady, type Context } from "../repo/context.js";
import { baselineChangeSet, checkPrefixes, governedPrefixes, loadBaseline } from "../scope/baseline.js";
import { baselineKey } from "../scope/resolve.js";
import { newCheckId, writeCheckResult } from "../store/baselines.js";
import { parseDuration } from "../store/config.js";
import { withLock } from "../store/lock.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { runCommand } from "../sys/suite.js";
import { runUndo } from "./take-back.js";

export type RevertCheckDecision = "permitted" | "not-permitted" | "no-edits";

/** Why a check could not be made (`ran: false`, exit 3): never a decision, never `permitted`. */
export type RevertCheckReason = "no-baseline" | "not-a-git-repository" | "worktree-failed" | "revert-failed" | "command-not-found" | "timeout" | "interrupted";

export interface RevertCheckEdit {
  path: string;
  pathBytes?: string;
  change: ChangeKind;
  /** What the check did to it in the throwaway worktree: back to its baseline state, or deleted (the baseline lacks it). */
  action: "restore" | "delete";
}

/** The result of SPEC section 10, kept in the store and written to `--out`. */
export interface RevertCheckResult {
  id: string;
  at: string;
  key: string;
  prefixes: string[];
  grants: string[];
  command: string[];
  /** Whether the check could be made; false only with a `reason` (exit 3). */
  ran: boolean;
  reason: RevertCheckReason | null;
  /** What went wrong, in words, where `ran` is false. */
  message: string | null;
  decision: RevertCheckDecision | null;
  /** The suite's exit code (128 + signal where a signal ended it); null where it did not run to an end. */
  testExitCode: number | null;
  /** The governed edits, each reverted in the throwaway worktree. */
  edits: RevertCheckEdit[];
  /** Edits a `--grant` glob left as they are. */
  granted: { path: string; pathBytes?: string; change: ChangeKind }[];
  /** The whole check, from start to result. */
  durationMs: number;
  /** The suite's run alone; null where it did not start. */
  suiteMs: number | null;
  /** The last lines the suite wrote (stdout and stderr). */
  output: string;
  /** The throwaway worktree, when `keep` left it in place; else null (removed). */
  worktree: string | null;
}

export interface RevertCheckOptions {
  key: string;
  /** Root-relative prefixes whose edits are governed; each must be one the baseline covers. */
  prefixes: readonly string[];
  /** Root-relative globs of edits that are allowed: neither reverted nor counted. */
  grants?: readonly string[] | undefined;
  /** Root-relative ignored directories (node_modules) to symlink into the worktree. */
  links?: readonly string[] | undefined;
  /** How long the suite may run (`90s`, `10m`, `1h`); default 30m. */
  timeout?: string | undefined;
  /** Leave the worktree in place (its path is in the result). */
  keep?: boolean | undefined;
  /** Also write the result here (absolute, or relative to the root). */
  out?: string | undefined;
  /** How the caller typed `out`, for messages; default: `out`. */
  outName?: string | undefined;
  /** The suite: argv, run without a shell. */
  command: readonly string[];
  /** Root-relative directory to run it in (default: the root): the same place in the worktree. */
  cwd?: string | undefined;
}

const DEFAULT_TIMEOUT = "30m";

/** Exit codes a shell gives for a command it could not find (127) or not run (126): the suite did not run, so it did not fail. */
const NOT_RUN = new Set([126, 127]);

interface Checked {
  key: string;
  prefixes: string[];
  grants: string[];
  links: string[];
  timeoutMs: number;
  out: string | null;
  command: string[];
  cwd: string;
  keep: boolean;
}

/** Every argument, checked before anything is read or written: a usage error changes nothing. */
function checkOptions(root: string, o: RevertCheckOptions): Checked {
  baselineKey(o.key);
  if (o.prefixes.length === 0) throw usage("revert-check needs at least one --prefix", "the prefix the baseline was captured for, e.g. --prefix tests");
  const prefixes = [...new Set(checkPrefixes(o.prefixes))];
  const grants = (o.grants ?? []).map((g) => {
    const r = rootGlob(g, "");
    if (r === null) throw usage(`--grant ${g} leaves the work tree`, "give globs inside the work tree");
    return r;
  });
  const command = [...o.command];
  if (command.length === 0 || command[0] === "") throw usage("no test command given", "put the suite after --, e.g. unwind revert-check --key K --prefix tests -- npm test");
  const timeoutText = o.timeout ?? DEFAULT_TIMEOUT;
  if (!/^\d+[smhdw]$/.test(timeoutText.trim()) || parseDuration(timeoutText) <= 0) throw usage(`--timeout ${timeoutText}: expected a duration such as 90s, 10m or 1h`);
  const links = checkPrefixes(o.links ?? []).map((l, i) => {
    const given = (o.links ?? [])[i]!;
    if (l === "") throw usage(`--link ${given}: names the whole work tree`, "link an ignored directory, e.g. --link node_modules");
    let isDir = false;
    try {
      isDir = statSync(fsPath(join(root, l))).isDirectory();
    } catch {
      /* missing */
    }
    // A suite run without its dependencies fails, and a failing suite reads as "permitted": a missing link is refused up front.
    if (!isDir) throw usage(`--link ${given}: no such directory in ${root}`, "link a directory that exists, such as node_modules after an install");
    return l;
  });
  let out: string | null = null;
  if (o.out !== undefined) {
    const typed = o.outName ?? o.out;
    if (o.out === "") throw usage("--out: empty file name");
    out = isAbsolute(o.out) ? o.out : resolve(root, o.out);
    if (!existsSync(dirname(out))) throw usage(`--out ${typed}: directory ${dirname(out)} does not exist`, "create it first, or write the result elsewhere");
  }
  return { key: o.key, prefixes, grants, links, timeoutMs: parseDuration(timeoutText), out, command, cwd: checkPrefixes([o.cwd ?? ""])[0]!, keep: Boolean(o.keep) };
}

/**
 * The revert check of SPEC section 10: were a stage's edits under the
 * prefixes needed? In a throwaway git worktree outside the root that holds
 * the work tree as it is now, each edit goes back to the state the stage
 * found (the baseline; deleted where the baseline lacks the path: never
 * HEAD, never skipped), then the suite runs there. It fails: the edits were
 * needed (`permitted`). It passes: they were not (`not-permitted`). A
 * check that could not be made says why (`ran: false`) and never permits.
 *
 * The user's work tree, index, HEAD and receipt chain are never written:
 * the revert is applied in the worktree without intent or receipt. The
 * store lock is held only to write the work tree's tree, never while the
 * suite runs.
 */
export async function revertCheck(ctx: Context, o: RevertCheckOptions): Promise<RevertCheckResult> {
  const t0 = Date.now();
  const c = checkOptions(ctx.root, o);
  const at = new Date();
  const result: RevertCheckResult = {
    id: newCheckId(at),
    at: at.toISOString(),
    key: c.key,
    prefixes: c.prefixes,
    grants: c.grants,
    command: c.command,
    ran: false,
    reason: null,
    message: null,
    decision: null,
    testExitCode: null,
    edits: [],
    granted: [],
    durationMs: 0,
    suiteMs: null,
    output: "",
    worktree: null,
  };
  const cannot = (reason: RevertCheckReason, message: string) => {
    result.ran = false;
    result.reason = reason;
    result.message = message;
    result.decision = null;
  };
  // An earlier run's result must never be read as this one's, even if this one ends in an error.
  if (c.out) rmSync(c.out, { force: true });
  await decide(ctx, c, result, cannot);
  result.durationMs = Date.now() - t0;
  // A store exists wherever a baseline was captured; a check without one creates nothing in it.
  if (storeReady(ctx)) writeCheckResult(ctx.store, result.id, result);
  if (c.out) writeFileAtomic(c.out, JSON.stringify(result, null, 2) + "\n");
  return result;
}

async function decide(ctx: Context, c: Checked, result: RevertCheckResult, cannot: (reason: RevertCheckReason, message: string) => void): Promise<void> {
  if (ctx.mode !== "git") return cannot("not-a-git-repository", `${ctx.root} is not a git repository: the check needs a git worktree`);
  let prefixes: string[];
  try {
    prefixes = governedPrefixes(loadBaseline(ctx, c.key), c.prefixes);
  } catch (e) {
    if (e instanceof UnwindError && e.code === "E_SCOPE_UNKNOWN") return cannot("no-baseline", `${e.message}${e.hint ? ` (${e.hint})` : ""}`);
    throw e;
  }

  // Under the lock only while the work tree becomes one tree (and a commit of it): the suite runs without it.
  let staged: { current: TreeResult; cs: ChangeSet; commit: string | null };
  try {
    staged = await withLock(ctx.store, "revert-check", async () => {
      await recoverPending(ctx);
      const current = await writeWorkTree(ctx, { scratch: false });
      try {
        const b = loadBaseline(ctx, c.key); // read again under the lock: a capture may have added to it
        const cs = await baselineChangeSet(ctx, b, prefixes, current);
        return { current, cs, commit: cs.entries.length > 0 ? treeCommit(ctx, current.tree, `unwind revert check ${result.id}`) : null };
      } catch (e) {
        current.dispose();
        throw e;
      }
    });
  } catch (e) {
    // The store busy past the wait, or git failing to read the work tree: there is nothing to build the worktree from.
    if ((e instanceof UnwindError && e.code === "E_LOCKED") || e instanceof GitError) return cannot("worktree-failed", `could not take the work tree as it is: ${firstLine(e)}`);
    throw e;
  }
  const granted = pathMatcher(c.grants) ?? (() => false);
  const edits: ChangeEntry[] = staged.cs.entries.filter((e) => !granted(e.path));
  result.granted = staged.cs.entries.filter((e) => granted(e.path)).map((e) => ({ ...jsonPath(e.path), change: e.change }));
  result.edits = edits.map((e) => ({ ...jsonPath(e.path), change: e.change, action: e.pre ? "restore" : "delete" }));
  if (edits.length === 0) {
    staged.current.dispose();
    result.ran = true;
    result.decision = "no-edits";
    return;
  }

  let parent: string;
  try {
    const base = realpathSync(tmpdir());
    // Checked before anything is made there: a worktree inside the root would be a directory in the user's own tree.
    if (insideRoot(ctx.root, base) !== null) throw new Error(`${base} is inside the work tree ${ctx.root}: set TMPDIR to a directory outside it`);
    parent = realpathSync(mkdtempSync(join(base, "unwind-revert-check-")));
  } catch (e) {
    staged.current.dispose();
    return cannot("worktree-failed", `no place for the worktree: ${firstLine(e)}`);
  }
  const dir = join(parent, basename(ctx.root) || "worktree");
  let added = false;
  try {
    try {
      await addWorktree(ctx, dir, staged.commit!);
      added = true;
      copyTooLarge(ctx.root, dir, staged.current);
      for (const l of c.links) linkInto(ctx.root, dir, l);
    } catch (e) {
      return cannot("worktree-failed", `could not build the throwaway worktree: ${firstLine(e)}`);
    }
    const reverted = await revertIn(contextAt(ctx, dir), { scope: staged.cs.scope, entries: edits });
    if (reverted) return cannot("revert-failed", reverted);

    const cwd = join(dir, c.cwd);
    mkdirSync(cwd, { recursive: true }); // a directory git does not keep (empty, or ignored): the suite still starts where it was asked to
    const run = await runCommand(c.command, { cwd, env: suiteEnv(), timeoutMs: c.timeoutMs });
    result.output = run.tail;
    result.suiteMs = run.spawnError ? null : run.durationMs;
    result.testExitCode = run.exitCode;
    if (run.spawnError) return cannot("command-not-found", `${c.command[0]}: ${run.spawnError === "ENOENT" ? "not found" : run.spawnError === "EACCES" ? "not executable" : run.spawnError}`);
    if (run.interrupted) return cannot("interrupted", "unwind was told to stop while the suite ran; the suite was ended");
    if (run.timedOut) return cannot("timeout", `the suite ran longer than ${Math.round(c.timeoutMs / 1000)}s (--timeout) and was ended`);
    if (run.exitCode !== null && NOT_RUN.has(run.exitCode))
      return cannot("command-not-found", `the suite exited ${run.exitCode}: a shell's "command not found" or "not executable", so it did not run`);
    result.ran = true;
    result.decision = run.exitCode === 0 ? "not-permitted" : "permitted";
  } finally {
    if (c.keep && added) result.worktree = dir;
    else {
      if (added) await removeWorktree(ctx, dir).catch(() => undefined);
      rmSync(parent, { recursive: true, force: true });
    }
    staged.current.dispose();
  }
}

/**
 * Applies the edits' revert in the throwaway worktree through the one
 * engine, without intent or receipt. Every edit must go back: a path that
 * could not (over the size cap, its bytes lost) would leave an edit in
 * place and could decide wrongly, so it is a reason not to decide.
 */
async function revertIn(wt: Context, cs: ChangeSet): Promise<string | null> {
  const r = await runUndo(wt, cs, { dryRun: false, force: true, merge: false, kind: "undo", seal: false });
  // A path that already holds its baseline state (a checkout filter made it so) is reverted as much as one restored.
  const stuck = r.items.filter((i) => i.action !== "restore" && i.action !== "delete" && !(i.action === "skip" && i.reason === "unchanged"));
  if (stuck.length === 0) return null;
  const first = stuck[0]!;
  return `${stuck.length} edit(s) could not be reverted in the worktree, e.g. ${first.path}: ${first.reason ?? first.action}${first.detail ? ` (${first.detail})` : ""}`;
}

/** Files over the size cap are not in the tree: the worktree gets the work tree's own copy. */
function copyTooLarge(root: string, dir: string, current: TreeResult): void {
  for (const p of current.toolarge) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    copyFileSync(fsPath(join(root, p)), fsPath(join(dir, p)));
  }
}

/** `--link DIR`: the work tree's ignored directory, symlinked at the same place in the worktree. */
function linkInto(root: string, dir: string, rel: string): void {
  const at = join(dir, rel);
  if (existsSync(at)) throw new Error(`--link ${rel}: the worktree already holds ${rel} (it is not ignored), so it cannot be linked`);
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(join(root, rel), at);
}

/** The suite's environment: ours, without what would point its git at the user's repository instead of the worktree. */
function suiteEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX"]) delete env[k];
  return env;
}

function firstLine(e: unknown): string {
  const m = e instanceof Error ? (e as { stderr?: string }).stderr?.trim() || e.message : String(e);
  return m.split("\n")[0] ?? m;
}
