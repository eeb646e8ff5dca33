import { pathMatcher } from "./glob.js";
import type { ChangeEntry, Interleaved, LaterWrite, RepoPath, State } from "./types.js";

/**
 * What `unwind push` sends of one session, decided from plain data (SPEC
 * section 14; docs/design.md, "Sharing records through a git remote"). No
 * git, no disk: src/ops/share.ts gathers the inputs and writes the result.
 */

/** File names that look like secrets: their content stays home unless `--include-secrets` (SPEC section 14). */
export const SECRET_GLOBS: readonly string[] = [".env*", "*.pem", "*.key", "id_*"];

/** Why a path's content was left out: an `--exclude` glob, or a secret-looking name. */
export type LeftOutWhy = "exclude" | "secret";

/** The state a left-out path gets: the other side never saw it, which the planner calls `not-captured`. No hash either: a hash of a short secret is as good as the secret. */
export const NOT_SENT: State = Object.freeze({ kind: "unknown" }) as State;

/**
 * Which paths are left out, and why. An `--exclude` wins over
 * `--include-secrets`: naming a path to exclude is the stronger wish.
 */
export function leftOutBy(excludes: readonly string[], includeSecrets: boolean): (path: string) => LeftOutWhy | null {
  const ex = pathMatcher(excludes);
  const secret = includeSecrets ? undefined : pathMatcher(SECRET_GLOBS);
  return (p) => (ex?.(p) ? "exclude" : secret?.(p) ? "secret" : null);
}

export interface SharedCall {
  call: string;
  tool: string;
  at: string;
  capture: "file" | "tree";
  paths: string[];
}

export interface SharedSummary {
  agents: string[];
  tasks: string[];
  first: string;
  last: string;
  calls: number;
  /** Paths its calls changed: file captures, and what its shell calls' snapshots show. */
  paths: number;
}

/** `session.json` of a shared record (docs/format.md, "Shared records"). */
export interface SharedSessionDoc {
  v: 1;
  origin: string;
  session: string;
  harness: string;
  summary: SharedSummary;
  calls: SharedCall[];
  entries: ChangeEntry[];
  laterWrites: ({ path: string } & LaterWrite)[];
  interleaved: ({ path: string } & Interleaved)[];
  excluded: { path: string; why: LeftOutWhy }[];
  /** SHA-256 of `records.jsonl`. */
  records: string;
}

/** One session as the recording machine resolved it: everything `planShare` needs. */
export interface SessionToShare {
  session: string;
  harness: string;
  summary: SharedSummary;
  calls: readonly SharedCall[];
  entries: readonly ChangeEntry[];
  laterWrites: ReadonlyMap<RepoPath, LaterWrite>;
  interleaved: ReadonlyMap<RepoPath, Interleaved>;
  /** The paths its journal's file records name (they are redacted too). */
  recordPaths: readonly string[];
}

export interface SharePlan {
  /** `session.json` without the hash of the records, which the caller writes. */
  doc: Omit<SharedSessionDoc, "records">;
  /** Paths whose states in the journal records become NOT_SENT. */
  redact: ReadonlySet<string>;
  /** Every state whose bytes go along (file and symlink states with a hash), once each. */
  content: State[];
}

const byPath = (a: { path: string }, b: { path: string }) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)) as number;

/**
 * Entries with left-out paths made unknown, the states whose bytes go
 * along (file and symlink states with a hash, once each), and what was left
 * out. `also` names paths beyond the entries (a session's records and calls)
 * that are checked too. Works for a session's change set and a run's entries alike.
 */
export function redactEntries<E extends { path: string; pre: State | null; post: State | null }>(
  list: readonly E[],
  leftOut: (path: string) => LeftOutWhy | null,
  also: readonly string[] = [],
): { entries: E[]; excluded: { path: string; why: LeftOutWhy }[]; content: State[] } {
  const excluded = new Map<string, LeftOutWhy>();
  const consider = (p: string) => {
    if (excluded.has(p)) return;
    const why = leftOut(p);
    if (why) excluded.set(p, why);
  };
  for (const e of list) consider(e.path);
  for (const p of also) consider(p);
  const hide = (st: State | null) => (st === null ? null : NOT_SENT);
  const entries = list.map((e) => (excluded.has(e.path) ? { ...e, pre: hide(e.pre), post: hide(e.post) } : e));
  const content: State[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    for (const st of [e.pre, e.post]) {
      if (!st || (st.kind !== "file" && st.kind !== "symlink")) continue;
      const key = st.sha256 ?? st.oid;
      if (!key || seen.has(key)) continue;
      seen.add(key);
      content.push(st);
    }
  }
  return { entries, excluded: [...excluded].map(([path, why]) => ({ path, why })).sort(byPath), content };
}

/** What to send of one session: its change set with left-out paths made unknown, and the states whose bytes go along. */
export function planShare(s: SessionToShare, origin: string, leftOut: (path: string) => LeftOutWhy | null): SharePlan {
  const { entries, excluded, content } = redactEntries(s.entries, leftOut, [...s.recordPaths, ...s.calls.flatMap((c) => c.paths)]);
  return {
    doc: {
      v: 1,
      origin,
      session: s.session,
      harness: s.harness,
      summary: s.summary,
      calls: [...s.calls],
      entries,
      laterWrites: [...s.laterWrites].map(([path, l]) => ({ path, ...l })).sort(byPath),
      interleaved: [...s.interleaved].map(([path, i]) => ({ path, ...i })).sort(byPath),
      excluded,
    },
    redact: new Set(excluded.map((e) => e.path)),
    content,
  };
}

/** An origin name: one ref component of letters, digits, `.`, `_`, `-` (1-64), as `git config unwind.origin` or `<store>/origin` gives it. Null when fine, else why not. */
export function checkOrigin(name: string): string | null {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) return "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";
  if (name.endsWith(".lock") || name.includes("..")) return "is not a name git accepts in a ref";
  return null;
}

/** A host name as the start of an origin: lower case, runs of anything else as one '-'. */
export function hostSlug(host: string): string {
  const s = host
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40);
  return s || "host";
}
