import { usage } from "../domain/errors.js";
import { rootGlob } from "../domain/glob.js";
import { checkName } from "../domain/paths.js";
import { parseDuration } from "../store/config.js";
import { now } from "../sys/clock.js";
import { checkPrefixes } from "./baseline.js";
import { flagOf, KINDS, keyOf, kindFlags, NARROWING, type ScopeFields, type ScopeKind, withKeys } from "./kinds.js";

/** The kinds read from the journal, whose calls have start times (`--since`). */
export const JOURNAL_KINDS: readonly ScopeKind[] = ["session", "call", "from-call", "task"];

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

/** Exactly one scope, validated before anything is read. */
export function checkScope(s: ScopeFields): CheckedScope {
  for (const k of [...KINDS, ...(Object.keys(NARROWING) as (keyof typeof NARROWING)[])]) {
    const v = s[keyOf(k)];
    if (v !== undefined && (typeof v !== "string" || v === "")) throw usage(`${flagOf(k)}: expected a non-empty id`);
  }
  const present = KINDS.filter((k) => s[keyOf(k)] !== undefined);
  // A key beside a kind that takes it narrows that kind (--session beside --call: SPEC section 4), it is not a second scope.
  const narrowing = new Set<keyof ScopeFields>(present.flatMap((k) => withKeys(k)));
  const given = present.filter((k) => !(narrowing.has(keyOf(k)) && present.some((o) => o !== k && withKeys(o).includes(keyOf(k)))));
  if (given.length === 0) throw usage("no scope given", `name one of ${kindFlags()}`);
  if (given.length > 1) throw usage(`one scope at a time (got ${given.map(flagOf).join(", ")})`);
  const kind = given[0]!;
  for (const k of Object.keys(NARROWING) as (keyof typeof NARROWING)[]) {
    const takers = KINDS.filter((t) => withKeys(t).includes(k));
    if (s[k] !== undefined && !takers.includes(kind)) throw usage(`${flagOf(k)} goes with ${takers.map(flagOf).join(" or ")}`);
  }
  if (kind === "run" && /[/\0]/.test(s.run!)) throw usage(`--run ${s.run}: not a run id`, "list them with: unwind runs");
  if (kind === "task") taskName(s.task); // a name that cannot be a task's is a usage error, not "no evidence"
  if (kind === "baseline") baselineKey(s.baseline!);
  const narrowed: Partial<Pick<CheckedScope, "session" | "to">> = {};
  for (const w of withKeys(kind)) if (s[w] !== undefined) narrowed[w as "session" | "to"] = s[w];
  return { kind, id: s[keyOf(kind)]!, ...narrowed };
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
export function rootGlobs(paths: readonly string[] | undefined): string[] {
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
    if (!JOURNAL_KINDS.includes(scope.kind)) throw usage(`--since needs a journal scope (${JOURNAL_KINDS.map(flagOf).join(", ")}), not ${flagOf(scope.kind)}`);
    sinceTime(opts.since);
  }
  if (opts.prefixes !== undefined && opts.prefixes.length > 0) {
    if (scope.kind !== "baseline") throw usage("--prefix goes with --baseline");
    checkPrefixes(opts.prefixes);
  }
}
