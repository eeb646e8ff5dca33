import { join } from "node:path";
import { resolveSnapshot, writeWorkTree } from "../capture/snapshot.js";
import { UnwindError, usage } from "../domain/errors.js";
import { pathMatcher, rootGlob } from "../domain/glob.js";
import { checkName } from "../domain/paths.js";
import type { ChangeSet, Interleaved, LaterWrite, RepoPath } from "../domain/types.js";
import type { Context } from "../repo/context.js";
import { Cas } from "../store/cas.js";
import { parseDuration } from "../store/config.js";
import { now } from "../sys/clock.js";
import { journalChangeSet } from "./calls.js";
import { fetchedChangeSet, fetchedRunCapsule, fetchedTaskHint, findFetched } from "./fetched.js";
import { nowSide, snapshotChangeSet, snapshotSide } from "./snapshot-diff.js";
import { branchChangeSet, taskEvidence } from "./task.js";
import { baselineChangeSet, checkPrefixes, governedPrefixes, loadBaseline } from "./baseline.js";
import { resolveRun, runChangeSet } from "./capsule.js";
import type { Capsule, CapsuleEntry } from "../store/capsules.js";

/**
 * A scope as a caller names it (SPEC sections 4 and 11): exactly one of
 * these, except that `session` beside `call` narrows the call.
 */
export type ScopeInput =
  | { session: string }
  | { call: string; session?: string }
  | { fromCall: string; session?: string }
  | { task: string }
  | { snapshot: string; to?: string }
  | { run: string }
  | { baseline: string };

/** Every key a scope may have: what a JavaScript caller or a command line hands in, checked by `checkScope`. */
export interface ScopeFields {
  session?: string | undefined;
  call?: string | undefined;
  /** Call C and every later call of its session. */
  fromCall?: string | undefined;
  task?: string | undefined;
  snapshot?: string | undefined;
  to?: string | undefined;
  run?: string | undefined;
  baseline?: string | undefined;
}

export type ScopeKind = "session" | "call" | "from-call" | "task" | "snapshot" | "run" | "baseline";

/** A scope checked for shape: one kind, its id, and what narrows it. */
export interface CheckedScope {
  kind: ScopeKind;
  id: string;
  /** With `call`: the session that narrows it. */
  session?: string;
  /** With `snapshot`: the later snapshot (default: the work tree now). */
  to?: string;
}

export interface ScopeOptions {
  /** Only calls that started at or after this time: an ISO time, or a duration back from now (`2h`, `3d`). */
  since?: string | undefined;
  /** Root-relative globs; only the entries they select. One that selects nothing is a usage error. */
  paths?: readonly string[] | undefined;
  /** How the caller typed `paths` (relative to its directory), for messages; default: `paths`. */
  pathNames?: readonly string[] | undefined;
  /** Take back a snapshot scope taken in another worktree of the repository. */
  anyWorktree?: boolean | undefined;
  /** With a baseline scope: only these root-relative prefixes (each one the baseline covers); default: all of its. */
  prefixes?: readonly string[] | undefined;
  /** With a run: take back only its `review` and `deny` paths; its `allow` paths are kept and reported as retained. */
  safeOnly?: boolean | undefined;
}

const KINDS: readonly ScopeKind[] = ["session", "call", "from-call", "task", "snapshot", "run", "baseline"];

/** Where each kind's id is in ScopeFields, and its flag. */
const keyOf = (k: ScopeKind | "to"): keyof ScopeFields => (k === "from-call" ? "fromCall" : k);

/** Exactly one scope, validated before anything is read. */
export function checkScope(s: ScopeFields): CheckedScope {
  for (const k of [...KINDS, "to"] as const) {
    const v = s[keyOf(k)];
    if (v !== undefined && (typeof v !== "string" || v === "")) throw usage(`--${k}: expected a non-empty id`);
  }
  // --session beside --call (or --from-call) narrows the call (SPEC section 4), it is not a second scope.
  const narrows = s.call !== undefined || s.fromCall !== undefined;
  const given = KINDS.filter((k) => s[keyOf(k)] !== undefined && !(k === "session" && narrows));
  if (given.length === 0) throw usage("no scope given", "name one of --session, --call, --from-call, --task, --snapshot, --run or --baseline");
  if (given.length > 1) throw usage(`one scope at a time (got --${given.join(", --")})`);
  const kind = given[0]!;
  if (s.to !== undefined && kind !== "snapshot") throw usage("--to goes with --snapshot");
  if (kind === "run" && /[/\0]/.test(s.run!)) throw usage(`--run ${s.run}: not a run id`, "list them with: unwind runs");
  if (kind === "task") taskName(s.task); // a name that cannot be a task's is a usage error, not "no evidence"
  if (kind === "baseline") baselineKey(s.baseline!);
  return {
    kind,
    id: s[keyOf(kind)]!,
    ...((kind === "call" || kind === "from-call") && s.session !== undefined ? { session: s.session } : {}),
    ...(kind === "snapshot" && s.to !== undefined ? { to: s.to } : {}),
  };
}

/** A task label, checked before anything is written. */
export function taskName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const bad = checkName(name);
  if (bad) throw usage(`task name '${name.length > 40 ? name.slice(0, 40) + "…" : name}' ${bad}`, "a task name is 1-128 characters git accepts in a ref name");
  return name;
}

/** A baseline key (SPEC section 4: 1-128 characters git accepts in a ref name), checked before anything is read or written. */
export function baselineKey(key: string): string {
  const bad = checkName(key);
  if (bad) throw usage(`baseline key '${key.length > 40 ? key.slice(0, 40) + "…" : key}' ${bad}`, "a key is 1-128 characters git accepts in a ref name");
  return key;
}

/** `--since`: an ISO time, or a duration back from now (`2h`, `3d`: SPEC section 4). */
export function sinceTime(text: string): string {
  if (/^\d+[smhdw]$/.test(text)) return new Date(now().getTime() - parseDuration(text)).toISOString();
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(Date.parse(text))) throw usage(`--since ${text}: not an ISO time or a duration`, "e.g. 2026-11-30T10:00:00Z, or 2h, 3d");
  return new Date(text).toISOString();
}

/** Root-relative globs as every client gives them (`./src/**` as `src/**`); one that leaves the work tree is a usage error. */
function rootGlobs(paths: readonly string[] | undefined): string[] {
  return (paths ?? []).map((g) => {
    const r = rootGlob(g, "");
    if (r === null) throw usage(`path glob ${g} leaves the work tree`, "give globs relative to the work tree's root");
    return r;
  });
}

/** The options that go with a scope, checked before anything is read. */
export function checkScopeOptions(scope: CheckedScope, opts: ScopeOptions): void {
  rootGlobs(opts.paths);
  if (opts.safeOnly && scope.kind !== "run") throw usage("--safe-only goes with --run", "a run's policy decides which paths are safe to keep");
  if (opts.since !== undefined) {
    if (scope.kind === "snapshot" || scope.kind === "baseline" || scope.kind === "run") throw usage(`--since needs a journal scope (--session, --call, --from-call, --task), not --${scope.kind}`);
    sinceTime(opts.since);
  }
  if (opts.prefixes !== undefined && opts.prefixes.length > 0) {
    if (scope.kind !== "baseline") throw usage("--prefix goes with --baseline");
    checkPrefixes(opts.prefixes);
  }
}

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

/**
 * The one resolver every scope goes through: the scope's change set, with
 * what the planner needs to know about other writers, handed to `fn`;
 * scratch trees live only as long as `fn`.
 */
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

export async function withScope<T>(ctx: Context, scope: CheckedScope, opts: ScopeOptions, reading: Reading, fn: (r: Resolved) => Promise<T>): Promise<T> {
  checkScopeOptions(scope, opts);
  const globs = rootGlobs(opts.paths);
  const named = opts.pathNames ?? opts.paths ?? [];
  if (scope.kind === "task") {
    const evidence = await taskEvidence(ctx, scope.id);
    if (evidence.kind === "branch") {
      if (opts.since !== undefined) throw usage(`--since: task ${scope.id} is bound to branch ${evidence.binding.branch}, which has no capture times`);
      const { cs, interleaved } = await branchChangeSet(ctx, evidence.binding);
      return fn({ cs: onlyPaths(cs, globs, named), interleaved });
    }
  }
  if (scope.kind === "session" || scope.kind === "call" || scope.kind === "from-call" || scope.kind === "task") {
    const since = opts.since !== undefined ? sinceTime(opts.since) : undefined;
    const narrow = scope.session !== undefined ? { session: scope.session } : {};
    // A dry run writes nothing; a real undo holds the lock already; `changes` takes it to close open calls.
    const close = reading === "apply" ? "locked" : reading === "read" ? "lock" : undefined;
    let r: Awaited<ReturnType<typeof journalChangeSet>>;
    try {
      r = await journalChangeSet(ctx, { kind: scope.kind, id: scope.id, ...narrow }, { ...(since ? { since } : {}), paths: globs, ...(close ? { close } : {}) });
    } catch (e) {
      if (scope.kind === "task" && e instanceof UnwindError && e.code === "E_SCOPE_UNKNOWN") await fetchedTaskHint(ctx, scope.id);
      // No local session by that name: a fetched one (SPEC section 14), read-only and checked before use.
      const fetched = scope.kind === "session" && e instanceof UnwindError && e.code === "E_SCOPE_UNKNOWN" ? await findFetched(ctx, scope.id) : null;
      if (!fetched) throw e;
      if (since !== undefined) throw usage(`--since: session ${fetched.doc!.session} was fetched from ${fetched.origin}; it is taken back whole`, "narrow it with --path instead");
      const f = await fetchedChangeSet(ctx, fetched);
      return fn({ cs: onlyPaths(f.cs, globs, named), laterWrites: f.laterWrites, interleaved: f.interleaved, fetched: true });
    }
    onlyPaths(r.cs, globs, named, r.touched);
    return fn(r);
  }
  if (scope.kind === "baseline") {
    const b = loadBaseline(ctx, scope.id);
    const others = [...new Set(b.captures.flatMap((c) => (c.root === undefined || c.root === ctx.root ? [] : [c.root])))];
    const only = b.captures.some((c) => c.root === ctx.root) ? "not only" : "not";
    refuseForeign(reading, opts, others.length > 0 ? `baseline ${b.key} was captured in another work tree (${others.join(", ")}), ${only} in ${ctx.root}` : null);
    const prefixes = governedPrefixes(b, opts.prefixes && checkPrefixes(opts.prefixes));
    // The work tree as one tree: a real undo holds the lock and refreshes the private index; the others write nothing.
    const current = await writeWorkTree(ctx, { scratch: reading !== "apply" });
    try {
      return await fn({ cs: onlyPaths(await baselineChangeSet(ctx, b, prefixes, current), globs, named) });
    } finally {
      current.dispose();
    }
  }
  if (scope.kind === "run") {
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
    const taking = reading !== "read";
    if (fetched || capsule.root !== ctx.root || !capsule.rollback) {
      // Fetched, or another work tree's (read, or taken back with --any-worktree): its window cannot be placed among this work
      // tree's records. A run without rollback is only read, and its before snapshot is gone: its sealed entries were
      // attributed when it ended (src/ops/run.ts).
      const { cs, retained, decisions } = runChangeSet(capsule, { taking, safeOnly: Boolean(opts.safeOnly) });
      return fn({ cs: onlyPaths(cs, globs, named), retained, decisions, ...(fetched ? { fetched: true as const } : {}) });
    }
    // A local run is a window among this work tree's calls and receipts, attributed by the same fold.
    const close = reading === "apply" ? "locked" : reading === "read" ? "lock" : undefined;
    const r = await journalChangeSet(ctx, { kind: "run", id: capsule.id }, { paths: globs, ...(close ? { close } : {}) });
    const { cs, retained, decisions } = runChangeSet(capsule, { taking, safeOnly: Boolean(opts.safeOnly) }, r.cs.entries);
    return fn({ ...r, cs: onlyPaths(cs, globs, named, r.touched), retained, decisions });
  }
  if (scope.kind !== "snapshot") throw new UnwindError("E_NOT_BUILT", `--${scope.kind} scopes are not built yet`);
  const from = await resolveSnapshot(ctx, scope.id);
  const to = scope.to !== undefined ? await resolveSnapshot(ctx, scope.to) : null;
  const foreign = [from, to].find((x) => x && x.root !== ctx.root);
  refuseForeign(reading, opts, foreign ? `snapshot ${foreign.id} was taken in another work tree (${foreign.root}), not in ${ctx.root}` : null);
  const current = to ? null : await writeWorkTree(ctx, { scratch: reading !== "apply" });
  try {
    const cas = new Cas(join(ctx.store, "cas"));
    const cs = await snapshotChangeSet(ctx, { kind: "snapshot", id: from.id }, snapshotSide(ctx, cas, from), to ? snapshotSide(ctx, cas, to) : nowSide(ctx, current!));
    return await fn({ cs: onlyPaths(cs, globs, named) });
  } finally {
    current?.dispose();
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
