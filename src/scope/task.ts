import { storePath } from "../domain/store-layout.js";
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { writeWorkTree } from "../capture/snapshot.js";
import { UnwindError } from "../domain/errors.js";
import { GitError, splitZ } from "../git/git.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { resolveContext, type Context } from "../repo/context.js";
import type { ChangeSet, Interleaved, RepoPath } from "../domain/types.js";
import { diffPairs, treeChangeSet } from "./tree.js";
import { branchEntries, type BranchStep } from "./fold/branch.js";
import { inForms, legacyForm, withTooLarge } from "./snapshot-diff.js";
import { checkName } from "../domain/paths.js";
import { readJournal } from "../store/journal.js";
import { mkdirPrivate } from "../sys/files.js";

/** A task bound to a branch: by `unwind task start`, or by an orchestrator's session record. */
export interface TaskBinding {
  v: 1;
  task: string;
  branch: string;
  /** The integration branch the task forks from and merges into. */
  onto: string;
  /** The commit the branch started from; absent for orchestrator bindings (computed). */
  fork?: string;
  worktree?: string;
  source: "unwind" | "sdd";
  /** The orchestrator's session that claims the task. */
  session?: string;
  at?: string;
}

function bindingFile(ctx: Context, task: string): string {
  return storePath(ctx.store, "tasks", `${encodeURIComponent(task)}.json`);
}

async function out(ctx: Context, args: string[], okCodes: number[] = []): Promise<string | null> {
  const r = await ctx.git(args, { okCodes });
  return r.code === 0 ? r.stdout.toString("utf8").trim() : null;
}

async function commitOf(ctx: Context, ref: string): Promise<string | null> {
  return out(ctx, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], [1]);
}

async function currentBranch(ctx: Context): Promise<string | null> {
  return out(ctx, ["symbolic-ref", "--quiet", "--short", "HEAD"], [1]);
}

async function isAncestor(ctx: Context, a: string, b: string): Promise<boolean> {
  const r = await ctx.git(["merge-base", "--is-ancestor", a, b], { okCodes: [1] });
  return r.code === 0;
}

interface Worktree {
  path: string;
  branch: string | null;
}

async function worktrees(ctx: Context): Promise<Worktree[]> {
  const r = await ctx.git(["worktree", "list", "--porcelain", "-z"]);
  const outList: Worktree[] = [];
  let cur: Worktree | null = null;
  for (const line of splitZ(r.stdout)) {
    if (line.startsWith("worktree ")) {
      cur = { path: line.slice(9), branch: null };
      outList.push(cur);
    } else if (line.startsWith("branch ") && cur) cur.branch = line.slice(7).replace(/^refs\/heads\//, "");
  }
  return outList;
}

/** `unwind task start`: binds a task to a branch (creating it, and its worktree, if asked), recording the fork point. */
export async function startTask(ctx: Context, task: string, opts: { branch?: string; worktree?: string; onto?: string }): Promise<TaskBinding> {
  const bad = checkName(task);
  if (bad) throw new UnwindError("E_USAGE", `task name '${task.length > 40 ? task.slice(0, 40) + "…" : task}' ${bad}`, { hint: "a task name is 1-128 characters git accepts in a ref name" });
  if (ctx.mode !== "git") throw new UnwindError("E_USAGE", "tasks bound to branches need a git repository");
  const branch = opts.branch ?? `task/${task}`;
  const okBranch = await ctx.git(["check-ref-format", "--branch", branch], { okCodes: [128] });
  if (okBranch.code !== 0) throw new UnwindError("E_USAGE", `--branch ${branch}: not a valid branch name`);
  const onto = opts.onto ?? (await currentBranch(ctx)) ?? "main";
  const ontoTip = await commitOf(ctx, `refs/heads/${onto}`);
  if (!ontoTip) throw new UnwindError("E_SCOPE_UNKNOWN", `integration branch ${onto} does not exist`, { hint: "name it with --onto" });
  const existing = readBinding(ctx, task);
  if (existing && (existing.branch !== branch || existing.onto !== onto)) {
    throw new UnwindError("E_USAGE", `task ${task} is already bound to branch ${existing.branch} (onto ${existing.onto})`);
  }
  let tip = await commitOf(ctx, `refs/heads/${branch}`);
  if (!tip) {
    await ctx.git(["branch", "--no-track", branch, ontoTip]);
    tip = ontoTip;
  }
  const fork = existing?.fork ?? (await out(ctx, ["merge-base", tip, ontoTip], [1]));
  if (!fork) throw new UnwindError("E_SCOPE_UNKNOWN", `branch ${branch} shares no history with ${onto}`);
  // Re-running without --worktree keeps the binding's worktree (SPEC section 4).
  let worktree: string | undefined = existing?.worktree;
  if (opts.worktree) {
    worktree = resolve(opts.worktree);
    if (!existsSync(worktree)) await ctx.git(["worktree", "add", "--quiet", worktree, branch]);
    worktree = realpathSync(worktree);
    const wt = (await worktrees(ctx)).find((w) => safeReal(w.path) === worktree);
    if (!wt || wt.branch !== branch) throw new UnwindError("E_USAGE", `--worktree ${opts.worktree} is not a worktree on branch ${branch}`);
  }
  const binding: TaskBinding = { v: 1, task, branch, onto, fork, ...(worktree ? { worktree } : {}), source: "unwind", at: existing?.at ?? new Date().toISOString() };
  mkdirPrivate(dirname(bindingFile(ctx, task)));
  writeFileAtomic(bindingFile(ctx, task), JSON.stringify(binding, null, 2) + "\n");
  return binding;
}

function safeReal(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** Every task bound to a branch: by `task start` (the store's tasks/), and by orchestrator session records. */
export async function allBindings(ctx: Context): Promise<TaskBinding[]> {
  const dir = storePath(ctx.store, "tasks");
  const own: TaskBinding[] = [];
  if (existsSync(dir)) {
    for (const f of readdirSync(dir).sort()) {
      if (!f.endsWith(".json")) continue;
      try {
        const b = JSON.parse(readFileSync(join(dir, f), "utf8")) as TaskBinding;
        if (typeof b.task === "string" && typeof b.branch === "string") own.push(b);
      } catch {
        /* a binding that does not parse binds nothing; `task start` writes it anew */
      }
    }
  }
  return [...own, ...(await sddBindings(ctx, null))];
}

function readBinding(ctx: Context, task: string): TaskBinding | null {
  const f = bindingFile(ctx, task);
  if (!existsSync(f)) return null;
  return JSON.parse(readFileSync(f, "utf8")) as TaskBinding;
}

/**
 * Orchestrator layout: `.sdd/runtime/pids/<session_id>.json` holding
 * `{"task_id": ...}`, with the work on branch `agent/<session_id>`, usually
 * in a worktree under `.sdd/runtime/worktrees/`.
 */
async function sddBindings(ctx: Context, task: string | null): Promise<TaskBinding[]> {
  const tops = new Set([ctx.root, dirname(ctx.commonDir)]);
  const found = new Map<string, TaskBinding>();
  const trees = await worktrees(ctx);
  // The orchestrator integrates into what its main worktree has checked out (git lists that one first).
  const integration = trees[0]?.branch ?? "main";
  for (const top of tops) {
    const dir = join(top, ".sdd", "runtime", "pids");
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) {
      if (!f.endsWith(".json")) continue;
      let rec: { task_id?: unknown };
      try {
        rec = JSON.parse(readFileSync(join(dir, f), "utf8")) as { task_id?: unknown };
      } catch {
        continue;
      }
      // Every task (null), or the one asked for; a task_id that could not name a task is no task's.
      if (typeof rec.task_id !== "string" || (task !== null && rec.task_id !== task) || checkName(rec.task_id) !== null) continue;
      const session = basename(f, ".json");
      const branch = `agent/${session}`;
      const wt = trees.find((w) => w.branch === branch);
      found.set(session, { v: 1, task: rec.task_id, branch, onto: integration, ...(wt ? { worktree: wt.path } : {}), source: "sdd", session });
    }
  }
  return [...found.values()];
}

/**
 * The base of a task's diff: the integration branch's state that the branch
 * last took in. Not merged (or squash-merged): the merge base, which moves
 * forward when the branch syncs with (merges or rebases onto) the
 * integration branch, so work that came in that way is never the task's.
 * Merged by a merge commit: the merge base of that merge's first parent and
 * the branch. Fast-forwarded: the merge base of the branch and what the
 * integration branch held just before (its reflog); failing that, where the
 * branch was rebased onto or created (its reflog), or the fork point
 * `task start` recorded. Otherwise there is no way to tell: refuse.
 */
async function diffBase(ctx: Context, b: TaskBinding, tip: string): Promise<string> {
  const ontoTip = await commitOf(ctx, `refs/heads/${b.onto}`);
  if (!ontoTip) throw new UnwindError("E_SCOPE_UNKNOWN", `task ${b.task}: integration branch ${b.onto} does not exist`);
  if (!(await isAncestor(ctx, tip, ontoTip))) {
    const base = await out(ctx, ["merge-base", tip, ontoTip], [1]);
    if (!base) throw new UnwindError("E_SCOPE_UNKNOWN", `task ${b.task}: branch ${b.branch} shares no history with ${b.onto}`);
    return base;
  }
  // Merged: the oldest commit on the integration branch's first-parent line that contains the tip.
  const chain = (await ctx.git(["rev-list", "--first-parent", ontoTip])).stdout.toString("utf8").trim().split("\n").reverse();
  let lo = 0;
  let hi = chain.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (await isAncestor(ctx, tip, chain[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  const landing = chain[lo]!;
  if (landing !== tip) {
    const first = await commitOf(ctx, `${landing}^1`);
    const base = first ? await out(ctx, ["merge-base", first, tip], [1]) : null;
    if (base) return base;
  }
  // Fast-forward: the integration branch's reflog knows what it held before it took the tip.
  const before = await valueBefore(ctx, `refs/heads/${b.onto}`, tip);
  if (before) {
    const base = await out(ctx, ["merge-base", before, tip], [1]);
    if (base) return base;
  }
  const own = (await reflog(ctx, `refs/heads/${b.branch}`)).find((e) => /^rebase.*\(finish\):.* onto [0-9a-f]+$/.test(e.subject) || e.subject.startsWith("branch: Created from"));
  if (own) return own.subject.startsWith("branch: Created from") ? own.oid : own.subject.slice(own.subject.lastIndexOf(" ") + 1);
  if (b.fork) return b.fork;
  throw new UnwindError("E_SCOPE_UNKNOWN", `task ${b.task}: branch ${b.branch} was fast-forwarded into ${b.onto} and nothing records where it forked`, {
    hint: "bind tasks with unwind task start, which records the fork point",
  });
}

/** Newest first. */
async function reflog(ctx: Context, ref: string): Promise<{ oid: string; subject: string }[]> {
  const r = await ctx.git(["reflog", "show", "--format=%H%x00%gs", ref, "--"], { okCodes: [128] });
  if (r.code !== 0) return [];
  return r.stdout
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [oid, subject] = l.split("\0");
      return { oid: oid!, subject: subject ?? "" };
    });
}

/** What `ref` pointed at just before it first came to contain `commit`, from its reflog. */
async function valueBefore(ctx: Context, ref: string, commit: string): Promise<string | null> {
  const entries = (await reflog(ctx, ref)).reverse(); // oldest first
  for (let i = 1; i < entries.length; i++) {
    if ((await isAncestor(ctx, commit, entries[i]!.oid)) && !(await isAncestor(ctx, commit, entries[i - 1]!.oid))) return entries[i - 1]!.oid;
  }
  return null;
}

export type TaskEvidence = { kind: "branch"; binding: TaskBinding } | { kind: "journal" };

/**
 * Which evidence speaks for a task: unwind's own binding, else an
 * orchestrator's session record, else the journal. Several orchestrator
 * records claiming one task cannot be arbitrated: refuse, naming them.
 */
export async function taskEvidence(ctx: Context, task: string): Promise<TaskEvidence> {
  if (ctx.mode !== "git") return { kind: "journal" };
  const own = readBinding(ctx, task);
  if (own) {
    splitClaim(ctx, task, own);
    return { kind: "branch", binding: own };
  }
  const sdd = await sddBindings(ctx, task);
  if (sdd.length > 1) {
    throw new UnwindError(
      "E_SCOPE_AMBIGUOUS",
      `several worktrees claim task ${task}: sessions ${sdd
        .map((s) => s.session)
        .sort()
        .join(", ")}`,
      {
        hint: "remove the stale session records under .sdd/runtime/pids/",
      },
    );
  }
  if (sdd.length === 1) return { kind: "branch", binding: sdd[0]! };
  return { kind: "journal" };
}

/**
 * A branch task whose worktree is known, and sessions labelled with the task
 * that ran in another worktree: two worktrees claim it (SPEC section 6).
 * Taken from the branch alone, the task's undo skipped those sessions'
 * changes and named none of them (found by a review).
 */
function splitClaim(ctx: Context, task: string, b: TaskBinding): void {
  if (!b.worktree) return;
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const home = real(b.worktree);
  const elsewhere = readJournal(ctx.store).records.filter((r) => r.task === task && r.root !== undefined && real(r.root) !== home);
  if (elsewhere.length === 0) return;
  const sessions = [...new Set(elsewhere.map((r) => `${r.session} (${r.root})`))].sort();
  throw new UnwindError("E_SCOPE_AMBIGUOUS", `several worktrees claim task ${task}: its branch ${b.branch} in ${b.worktree}, and sessions ${sessions.join(", ")}`, {
    hint: "take those sessions back one by one: unwind undo --session S",
  });
}

/**
 * Where the task's own history starts: the newest rebase onto the
 * integration branch (its commits were rewritten on top of that), else the
 * fork `task start` recorded, else where the branch was created (its
 * reflog), else what the integration branch's history tells (`diffBase`).
 */
async function forkPoint(ctx: Context, b: TaskBinding, tip: string): Promise<string> {
  const own = await reflog(ctx, `refs/heads/${b.branch}`);
  const rebased = own.find((e) => /^rebase.*\(finish\):.* onto [0-9a-f]+$/.test(e.subject));
  if (rebased) return rebased.subject.slice(rebased.subject.lastIndexOf(" ") + 1);
  if (b.fork && (await isAncestor(ctx, b.fork, tip))) return b.fork;
  const created = [...own].reverse().find((e) => e.subject.startsWith("branch: Created from"));
  if (created) return created.oid;
  return diffBase(ctx, b, tip);
}

/**
 * The task's history as steps: each commit on the branch's first-parent
 * line since the fork, marked own or the integration branch's. A merge whose
 * other parent the integration branch holds is a sync; a commit whose patch
 * the integration branch already had (and the task did not make) is a
 * cherry-pick of it.
 */
async function branchSteps(ctx: Context, b: TaskBinding, fork: string, tip: string): Promise<BranchStep[]> {
  const ontoTip = await commitOf(ctx, `refs/heads/${b.onto}`);
  const chain = (await ctx.git(["rev-list", "--first-parent", "--reverse", "--parents", `${fork}..${tip}`])).stdout
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" "));
  if (chain.length === 0) return [];
  const own = new Map<string, boolean>();
  for (const [c, ...parents] of chain) {
    let sync = false;
    if (ontoTip) for (const p of parents.slice(1)) sync ||= await isAncestor(ctx, p, ontoTip);
    own.set(c!, !sync);
  }
  // Cherry-picks: the integration branch's commits the task's history does not hold, by patch id.
  const theirs = ontoTip ? (await ctx.git(["rev-list", "--no-merges", ontoTip, `^${tip}`, `^${fork}`])).stdout.toString("utf8").split("\n").filter(Boolean) : [];
  const mine = chain.filter(([, ...ps]) => ps.length === 1).map(([c]) => c!);
  if (theirs.length > 0 && mine.length > 0) {
    const ids = async (commits: string[]) => {
      // The patches as git stores them: a textconv or external diff is the person's program for reading diffs, and color would break the ids.
      const patches = await ctx.git(["show", "--no-merges", "-p", "--no-textconv", "--no-ext-diff", "--no-color", "--format=commit %H", ...commits]);
      const r = await ctx.git(["patch-id", "--stable"], { input: patches.stdout });
      return r.stdout
        .toString("utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split(" ") as [string, string]);
    };
    const picked = new Set((await ids(theirs)).map(([id]) => id));
    for (const [id, c] of await ids(mine)) if (picked.has(id)) own.set(c, false);
  }
  const diffs = await diffPairs(
    ctx,
    chain.map(([c, p]) => ({ from: p!, to: c! })),
  );
  // Commits hold git's clean form of what git converts.
  const clean = legacyForm(ctx, {});
  return Promise.all(chain.map(async ([c], i) => ({ id: c!, own: own.get(c!)!, entries: await inForms(ctx, diffs[i]!, { clean }, { clean }, {}) })));
}

/**
 * A branch task's change set: its own commits since the fork (never a
 * two-dot diff against where the integration branch is now; what came in
 * from the integration branch is not the task's), then the task worktree's
 * current state, uncommitted work included. It stays the same after the
 * branch is merged, however often.
 */
export async function branchChangeSet(ctx: Context, b: TaskBinding): Promise<{ cs: ChangeSet; interleaved: Map<RepoPath, Interleaved> }> {
  try {
    const tip = await commitOf(ctx, `refs/heads/${b.branch}`);
    if (!tip) {
      throw new UnwindError("E_SCOPE_UNKNOWN", `task ${b.task}: branch ${b.branch} is gone`, { hint: "restore the branch, or undo the task's sessions instead" });
    }
    const fork = await forkPoint(ctx, b, tip);
    const steps = await branchSteps(ctx, b, fork, tip);
    const commitsClean = legacyForm(ctx, {});
    const by = [b.session ?? `branch:${b.branch}`];
    const scope = { kind: "task" as const, id: b.task };
    const wt = b.worktree ? (await worktrees(ctx)).find((w) => safeReal(w.path) === safeReal(b.worktree!) && w.branch === b.branch) : undefined;
    if (wt && existsSync(wt.path)) {
      const wctx = await resolveContext(wt.path);
      const now = await writeWorkTree(wctx, { scratch: true });
      try {
        const cs = await treeChangeSet(ctx, scope, tip, now.tree, [], by, now.env);
        // A commit holds git's clean form, the scratch tree the bytes on disk: compared in their forms.
        const entries = await inForms(ctx, cs.entries, { clean: commitsClean }, {}, now.env);
        // Files over the cap are absent from the scratch tree, not from the worktree (SPEC 2).
        steps.push({ id: "worktree", own: true, entries: withTooLarge(entries, undefined, now.toolargeFiles) });
      } finally {
        now.dispose();
      }
    }
    const { entries, interleaved } = branchEntries(steps, by);
    return { cs: { scope, entries }, interleaved };
  } catch (e) {
    if (e instanceof GitError) throw new UnwindError("E_GIT", `task ${b.task}: ${e.message}`, e.hint ? { hint: e.hint } : {});
    throw e;
  }
}
