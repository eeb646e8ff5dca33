import { join } from "node:path";
import { resolveSnapshot, writeWorkTree } from "../capture/snapshot.js";
import { UnwindError, usage } from "../domain/errors.js";
import { pathMatcher } from "../domain/glob.js";
import type { ChangeSet, Interleaved, LaterWrite, RepoPath } from "../domain/types.js";
import type { Context } from "../repo/context.js";
import { Cas } from "../store/cas.js";
import type { Capsule, CapsuleEntry } from "../store/capsules.js";
import { baselineChangeSet, checkPrefixes, governedPrefixes, loadBaseline } from "./baseline.js";
import { resolveRun, runChangeSet } from "./capsule.js";
import { journalChangeSet } from "./calls.js";
import { type CheckedScope, checkScopeOptions, rootGlobs, type ScopeOptions, sinceTime } from "./check.js";
import { fetchedChangeSet, fetchedRunCapsule, fetchedTaskHint, findFetched } from "./fetched.js";
import type { ScopeKind } from "./kinds.js";
import { nowSide, snapshotChangeSet, snapshotSide } from "./snapshot-diff.js";
import { branchChangeSet, taskEvidence } from "./task.js";

export { baselineKey, type CheckedScope, checkScope, checkScopeOptions, type ScopeOptions, sinceTime, taskName } from "./check.js";
export type { ScopeFields, ScopeInput, ScopeKind } from "./kinds.js";

export interface Resolved {
  cs: ChangeSet;
  /** Paths kept as they are (a run's `allow` paths under `--safe-only`): planned as retained skips. */
  retained?: ReadonlySet<string>;
  /** A run's own record of each path: its policy decision and whether it can be taken back. */
  decisions?: ReadonlyMap<string, Pick<CapsuleEntry, "decision" | "reversible" | "why">>;
  laterWrites?: Map<RepoPath, LaterWrite>;
  interleaved?: Map<RepoPath, Interleaved>;
  /** Another machine's record (`unwind fetch`): trusted as the branch is, so its undo never writes where git ignores (SPEC section 14). */
  fetched?: true;
}

/**
 * How an operation reads a scope: "apply" (the store lock held, the work
 * tree captured for real), "dry" (nothing written anywhere) or "read"
 * (`changes`: scratch trees, but calls still open are closed for good, under
 * the lock).
 */
export type Reading = "apply" | "dry" | "read";

/** What a resolver is handed: the checked scope and options, how it is read, and the `--path` globs rooted. */
interface Ask {
  ctx: Context;
  scope: CheckedScope;
  opts: ScopeOptions;
  reading: Reading;
  globs: string[];
}

/**
 * A resolver's answer: the change set and what the planner needs, the
 * paths `--path` is matched against (`touched`: what the scope changed,
 * whatever those paths hold now; default its entries), and what to release
 * once the caller is done with it (scratch trees).
 */
interface Resolution extends Resolved {
  touched?: ReadonlySet<string>;
  dispose?: () => void;
}

type Resolver = (a: Ask) => Promise<Resolution>;

/**
 * Taking back another work tree's record (a snapshot, a run, a baseline)
 * would write its files over this one's (SPEC section 4, as for restore);
 * reading it is harmless. `foreign`: what names the other work tree, or
 * null when the record is this one's.
 */
function refuseForeign(reading: Reading, opts: ScopeOptions, foreign: string | null): void {
  if (foreign === null || reading === "read" || opts.anyWorktree) return;
  throw new UnwindError("E_SCOPE_OTHER_WORKTREE", foreign, { hint: "undo it from that work tree, or pass --any-worktree to write it here" });
}

/** A dry run writes nothing; a real undo holds the lock already; `changes` takes it to close open calls. */
const closing = (reading: Reading) => (reading === "apply" ? { close: "locked" as const } : reading === "read" ? { close: "lock" as const } : {});

/** Sessions, calls and a task's sessions: windows of the journal, attributed by the one timeline fold (src/scope/calls.ts). */
const journal: Resolver = async ({ ctx, scope, opts, reading, globs }) => {
  const since = opts.since !== undefined ? sinceTime(opts.since) : undefined;
  const narrow = scope.session !== undefined ? { session: scope.session } : {};
  try {
    const kind = scope.kind as "session" | "call" | "from-call" | "task";
    return await journalChangeSet(ctx, { kind, id: scope.id, ...narrow }, { ...(since ? { since } : {}), paths: globs, ...closing(reading) });
  } catch (e) {
    if (scope.kind === "task" && e instanceof UnwindError && e.code === "E_SCOPE_UNKNOWN") await fetchedTaskHint(ctx, scope.id);
    // No local session by that name: a fetched one (SPEC section 14), read-only and checked before use.
    const fetched = scope.kind === "session" && e instanceof UnwindError && e.code === "E_SCOPE_UNKNOWN" ? await findFetched(ctx, scope.id) : null;
    if (!fetched) throw e;
    if (since !== undefined) throw usage(`--since: session ${fetched.doc!.session} was fetched from ${fetched.origin}; it is taken back whole`, "narrow it with --path instead");
    const f = await fetchedChangeSet(ctx, fetched);
    return { cs: f.cs, laterWrites: f.laterWrites, interleaved: f.interleaved, fetched: true };
  }
};

/** A task bound to a branch is that branch's commits and work tree; otherwise its labelled sessions and runs, as the journal has them. */
const task: Resolver = async (a) => {
  const evidence = await taskEvidence(a.ctx, a.scope.id);
  if (evidence.kind !== "branch") return journal(a);
  if (a.opts.since !== undefined) throw usage(`--since: task ${a.scope.id} is bound to branch ${evidence.binding.branch}, which has no capture times`);
  return branchChangeSet(a.ctx, evidence.binding);
};

/** Each governed path from the state the stage found to the work tree now. */
const baseline: Resolver = async ({ ctx, scope, opts, reading }) => {
  const b = loadBaseline(ctx, scope.id);
  const others = [...new Set(b.captures.flatMap((c) => (c.root === undefined || c.root === ctx.root ? [] : [c.root])))];
  const only = b.captures.some((c) => c.root === ctx.root) ? "not only" : "not";
  refuseForeign(reading, opts, others.length > 0 ? `baseline ${b.key} was captured in another work tree (${others.join(", ")}), ${only} in ${ctx.root}` : null);
  const prefixes = governedPrefixes(b, opts.prefixes && checkPrefixes(opts.prefixes));
  // The work tree as one tree: a real undo holds the lock and refreshes the private index; the others write nothing.
  const current = await writeWorkTree(ctx, { scratch: reading !== "apply" });
  try {
    return { cs: await baselineChangeSet(ctx, b, prefixes, current), dispose: () => current.dispose() };
  } catch (e) {
    current.dispose();
    throw e;
  }
};

/** A local run is a window among this work tree's calls and receipts, attributed by the same fold as a call. */
const run: Resolver = async ({ ctx, scope, opts, reading, globs }) => {
  // The seal is checked before anything else is read: a tampered capsule is refused whole (exit 4).
  let capsule: Capsule;
  let fetched = false;
  try {
    capsule = (await resolveRun(ctx, scope.id)).capsule;
  } catch (e) {
    // No local run by that id: a fetched one (SPEC section 14), checked before use; it applies to this work tree.
    const f = e instanceof UnwindError && e.code === "E_SCOPE_UNKNOWN" ? await fetchedRunCapsule(ctx, scope.id) : null;
    if (!f) throw e;
    capsule = f.capsule;
    fetched = true;
  }
  refuseForeign(reading, opts, !fetched && capsule.root !== ctx.root ? `run ${capsule.id} ran in another work tree (${capsule.root}), not in ${ctx.root}` : null);
  const how = { taking: reading !== "read", safeOnly: Boolean(opts.safeOnly) };
  if (fetched || capsule.root !== ctx.root || !capsule.rollback) {
    // Fetched, or another work tree's (read, or taken back with --any-worktree): its window cannot be placed among this work
    // tree's records. A run without rollback is only read, and its before snapshot is gone: its sealed entries were
    // attributed when it ended (src/ops/run.ts).
    return { ...runChangeSet(capsule, how), ...(fetched ? { fetched: true as const } : {}) };
  }
  const r = await journalChangeSet(ctx, { kind: "run", id: capsule.id }, { paths: globs, ...closing(reading) });
  return { ...r, ...runChangeSet(capsule, how, r.cs.entries) };
};

/** Changes since a snapshot: to a later one, or to the work tree now. */
const snapshot: Resolver = async ({ ctx, scope, opts, reading }) => {
  const from = await resolveSnapshot(ctx, scope.id);
  const to = scope.to !== undefined ? await resolveSnapshot(ctx, scope.to) : null;
  const foreign = [from, to].find((x) => x && x.root !== ctx.root);
  refuseForeign(reading, opts, foreign ? `snapshot ${foreign.id} was taken in another work tree (${foreign.root}), not in ${ctx.root}` : null);
  const current = to ? null : await writeWorkTree(ctx, { scratch: reading !== "apply" });
  try {
    const cas = new Cas(join(ctx.store, "cas"));
    const cs = await snapshotChangeSet(ctx, { kind: "snapshot", id: from.id }, snapshotSide(ctx, cas, from), to ? snapshotSide(ctx, cas, to) : nowSide(ctx, current!));
    return { cs, ...(current ? { dispose: () => current.dispose() } : {}) };
  } catch (e) {
    current?.dispose();
    throw e;
  }
};

/** One resolver per kind: a kind added to src/scope/kinds.ts and not here does not compile. */
const RESOLVERS: Record<ScopeKind, Resolver> = { session: journal, call: journal, "from-call": journal, task, snapshot, run, baseline };

/**
 * The one way every scope is read: its kind's resolver gives the change
 * set, with what the planner needs to know about other writers; `--path`
 * narrows it the same way for every kind; `fn` has it while scratch trees
 * live.
 */
export async function withScope<T>(ctx: Context, scope: CheckedScope, opts: ScopeOptions, reading: Reading, fn: (r: Resolved) => Promise<T>): Promise<T> {
  checkScopeOptions(scope, opts);
  const globs = rootGlobs(opts.paths);
  const { touched, dispose, ...r } = await RESOLVERS[scope.kind]({ ctx, scope, opts, reading, globs });
  try {
    onlyPaths(r.cs, globs, opts.pathNames ?? opts.paths ?? [], touched);
    return await fn(r);
  } finally {
    dispose?.();
  }
}

/**
 * Keeps only the entries `--path` globs select (all without any). A glob
 * that selects no path the scope changed (`touched`: whatever those paths
 * hold now, a change already taken back included) is a usage error naming
 * it: a typo must not read as "nothing to do", and a narrowed undo run
 * twice must not read as a typo.
 */
function onlyPaths(cs: ChangeSet, globs: readonly string[], named: readonly string[], touched?: ReadonlySet<string>): ChangeSet {
  const keep = pathMatcher(globs);
  if (!keep) return cs;
  const changed = touched ? [...touched] : cs.entries.map((e) => e.path);
  globs.forEach((g, i) => {
    const one = pathMatcher([g])!;
    if (!changed.some((p) => one(p))) {
      throw usage(`--path ${named[i] ?? g} matches nothing in the ${cs.scope.kind} ${cs.scope.id}`, "globs are relative to the current directory; list the paths with: unwind changes");
    }
  });
  cs.entries = cs.entries.filter((e) => keep(e.path));
  return cs;
}
