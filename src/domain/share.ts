import { pathMatcher } from "./glob.js";
import type { ChangeEntry, Interleaved, LaterWrite, RepoPath, State } from "./types.js";

/**
 * What `unwind push` sends of one session, decided from plain data (SPEC
 * section 14; docs/design.md, "Sharing records through a git remote"). No
 * git, no disk: src/ops/share.ts gathers the inputs and writes the result.
 */

/**
 * Paths that look like secrets: their content stays home unless
 * `--include-secrets` (SPEC section 14). A glob without `/` is a file name
 * at any depth; one with a directory starts with `**` to match at any depth too.
 */
export const SECRET_GLOBS: readonly string[] = [
  // keys and environment files
  ".env*",
  "*.pem",
  "*.key",
  "id_*",
  "*.ppk",
  // tokens in plain text: package registries, git, hosts, databases
  ".npmrc",
  ".pypirc",
  ".netrc",
  "_netrc",
  ".git-credentials",
  ".pgpass",
  ".htpasswd",
  "**/.gem/credentials",
  // cloud credentials
  "**/.aws/credentials",
  "**/.docker/config.json",
  "credentials.json",
  "client_secret*.json",
  "service-account*.json",
  "*.tfstate",
  "*.tfstate.backup",
  // key stores
  "*.p12",
  "*.pfx",
  "*.jks",
  "*.keystore",
  "*.kdbx",
];

/** Why a path's content was left out: an `--exclude` glob, a secret-looking name, or content holding a token. */
export type LeftOutWhy = "exclude" | "secret" | "token";

/** A left-out path's reason, and the rule that caught it: the glob, or the kind of token. */
export interface LeftOut {
  why: LeftOutWhy;
  rule: string;
}

/** The state a left-out path gets: the other side never saw it, which the planner calls `not-captured`. No hash either: a hash of a short secret is as good as the secret. */
export const NOT_SENT: State = Object.freeze({ kind: "unknown" }) as State;

/** The first of `globs` that matches a path, or null. */
function firstGlob(globs: readonly string[]): (path: string) => string | null {
  const tests = globs.map((g) => [g, pathMatcher([g])!] as const);
  return (p) => tests.find(([, t]) => t(p))?.[0] ?? null;
}

/**
 * Which paths are left out, and why. An `--exclude` wins over
 * `--include-secrets`: naming a path to exclude is the stronger wish.
 * `configured`: the store's own secret patterns (`share.secretPatterns`).
 */
export function leftOutBy(excludes: readonly string[], includeSecrets: boolean, configured: readonly string[] = []): (path: string) => LeftOut | null {
  const ex = firstGlob(excludes);
  const secret = firstGlob(includeSecrets ? [] : SECRET_GLOBS);
  const mine = firstGlob(includeSecrets ? [] : configured);
  return (p) => {
    const e = ex(p);
    if (e !== null) return { why: "exclude", rule: e };
    const s = secret(p);
    if (s !== null) return { why: "secret", rule: s };
    const c = mine(p);
    return c === null ? null : { why: "secret", rule: `${c} (share.secretPatterns)` };
  };
}

/** Well-known token formats, each one pattern (no capturing group of its own), found by one pass of one expression. */
const TOKENS: readonly (readonly [string, string])[] = [
  ["an AWS access key id", String.raw`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`],
  ["a GitHub token", String.raw`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`],
  ["a GitLab token", String.raw`\bglpat-[A-Za-z0-9_-]{20,}`],
  ["a Slack token", String.raw`\bxox[baprs]-[A-Za-z0-9-]{10,}`],
  // Before OpenAI's: an Anthropic key starts with `sk-` too.
  ["an Anthropic API key", String.raw`\bsk-ant-[A-Za-z0-9_-]{20,}`],
  ["an OpenAI API key", String.raw`\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}`],
  ["an npm token", String.raw`\bnpm_[A-Za-z0-9]{36}\b`],
  ["a private key", "-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"],
  ["a Google API key", String.raw`\bAIza[0-9A-Za-z_-]{35}`],
  ["a Stripe live key", String.raw`\b[rs]k_live_[0-9A-Za-z]{24,}`],
];
const TOKEN_RE = new RegExp(TOKENS.map(([, re]) => `(${re})`).join("|"));

/**
 * The kind of the first well-known token in `bytes`, or null. Binary
 * content (a NUL in its first 8,000 bytes, as git judges it) is not
 * scanned. One pass over the bytes as latin1: every pattern is ASCII, and
 * latin1 maps each byte to one character without decoding.
 */
export function tokenIn(bytes: Buffer): string | null {
  if (bytes.subarray(0, 8000).includes(0)) return null;
  const m = TOKEN_RE.exec(bytes.toString("latin1"));
  if (!m) return null;
  const k = m.findIndex((g, i) => i > 0 && g !== undefined);
  return TOKENS[k - 1]![0];
}

/** `leftOut`, and beside it every path one of whose states' bytes hold a token (`tokens`: by SHA-256 or oid). */
export function withTokens(
  leftOut: (path: string) => LeftOut | null,
  entries: readonly { path: string; pre: State | null; post: State | null }[],
  tokens: ReadonlyMap<string, string>,
): (path: string) => LeftOut | null {
  if (tokens.size === 0) return leftOut;
  const held = new Map<string, string>();
  for (const e of entries) {
    for (const st of [e.pre, e.post]) {
      const t = st ? tokens.get(st.sha256 ?? st.oid ?? "") : undefined;
      if (t !== undefined && !held.has(e.path)) held.set(e.path, t);
    }
  }
  return (p) => leftOut(p) ?? (held.has(p) ? { why: "token", rule: held.get(p)! } : null);
}

export interface SharedCall {
  call: string;
  tool: string;
  at: string;
  capture: "file" | "tree" | "unknown";
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
/** A path whose content was left out of a shared record, and why. */
export type Excluded = { path: string } & LeftOut;

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
  excluded: Excluded[];
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
  leftOut: (path: string) => LeftOut | null,
  also: readonly string[] = [],
): { entries: E[]; excluded: Excluded[]; content: State[] } {
  const excluded = new Map<string, LeftOut>();
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
  return { entries, excluded: [...excluded].map(([path, l]) => ({ path, ...l })).sort(byPath), content };
}

/** What to send of one session: its change set with left-out paths made unknown, and the states whose bytes go along. */
export function planShare(s: SessionToShare, origin: string, leftOut: (path: string) => LeftOut | null): SharePlan {
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
