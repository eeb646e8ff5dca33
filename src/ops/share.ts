import { existsSync } from "node:fs";
import { basename, relative, resolve } from "node:path";
import { UnwindError, usage } from "../domain/errors.js";
import { rootGlob } from "../domain/glob.js";
import { sha256 } from "../domain/hash.js";
import { sortByPath } from "../domain/paths.js";
import { checkOrigin, leftOutBy, NOT_SENT, planShare, redactEntries, tokenIn, withTokens, type Excluded, type SharedCall, type SharedSessionDoc } from "../domain/share.js";
import type { State } from "../domain/types.js";
import type { Context } from "../repo/context.js";
import { journalChangeSet, journalTimeline, resolveSession } from "../scope/calls.js";
import { Cas } from "../store/cas.js";
import type { Capsule } from "../store/capsules.js";
import { loadConfig, secretPatterns } from "../store/config.js";
import { ContentReader } from "../store/content.js";
import { encode, readJournal, type JournalRecord } from "../store/journal.js";
import { FETCH_REFSPEC, fetchedRuns, fetchedSessions, originOf, runObjects, runRef, SHARED_PREFIX, sessionObjects, sessionRef, sharedRefs, writeBlob, type SharedRunDoc } from "../store/shared.js";
import { resolveRun } from "../scope/capsule.js";
import { summarizeSessions } from "./sessions.js";

/**
 * `unwind push` and `unwind fetch` (SPEC section 14; docs/design.md,
 * "Sharing records through a git remote"). What goes is decided by the
 * pure `planShare`; this file reads the record, writes the git objects and
 * runs git push and fetch with explicit refspecs.
 */

export interface PushOptions {
  /** Sessions by name (full, bare id, or 6+ prefix). */
  sessions?: readonly string[] | undefined;
  /** Every session labelled with this task. */
  task?: string | undefined;
  /** A run capsule (its id, a unique prefix or suffix of 6+ characters). */
  run?: string | undefined;
  /** Every session recorded in this work tree. */
  all?: boolean | undefined;
  /** Root-relative globs whose paths' content is left out (not-captured on the other side). */
  excludes?: readonly string[] | undefined;
  /** Send secret-looking paths (SECRET_GLOBS, `share.secretPatterns`) and content holding a token like any other. */
  includeSecrets?: boolean | undefined;
  /** Say what would go, and how many bytes; write nothing, push nothing. */
  dryRun?: boolean | undefined;
}

export interface PushedSession {
  session: string;
  ref: string;
  /** The commit the ref names after the push (what it would name, on a dry run). */
  commit: string;
  /** Against what this store last pushed of the session: a first push, a changed record, or the same one again. */
  status: "new" | "updated" | "unchanged";
  entries: number;
  /** Content blobs the record holds, and their bytes (uncompressed; git sends only what the remote lacks). */
  blobs: number;
  bytes: number;
  /** States whose bytes are gone from this store (the other side then says missing-blob for them). */
  missing: number;
  /** What was left out, why (`exclude`, `secret`, `token`) and the rule that caught it (the glob, the kind of token). */
  excluded: Excluded[];
}

/** A run capsule as pushed: as a session, by its id. */
export type PushedRun = Omit<PushedSession, "session"> & { run: string };

export interface PushReport {
  remote: string;
  /** This store's origin; null on a dry run before the first push (the name is made then). */
  origin: string | null;
  dryRun: boolean;
  sessions: PushedSession[];
  /** With `--run`: the capsule. */
  runs: PushedRun[];
  /** Secret-looking paths, and paths whose content holds a token, left out (SPEC: named in a warning). */
  secrets: string[];
  /** Sessions `--all` passed over, and why. */
  skipped: { session: string; why: string }[];
  /** Bytes of every blob the pushed records hold. */
  bytes: number;
}

/** A remote `git push`/`git fetch` can be given: a configured name, a URL, or an existing path (made absolute: git runs in the root). */
async function checkRemote(ctx: Context, remote: string): Promise<string> {
  if (remote === "" || remote.startsWith("-")) throw usage(`remote '${remote}': not a remote`, "name a configured remote (git remote -v), a URL or a path");
  const names = (await ctx.git(["remote"])).stdout.toString("utf8").split("\n").filter(Boolean);
  if (names.includes(remote)) return remote;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(remote) || /^[^/:]+@[^/:]+:/.test(remote)) return remote;
  const path = resolve(process.cwd(), remote);
  if (existsSync(path)) return path;
  throw usage(`no remote '${remote}': not a configured remote, a URL or an existing path`, names.length ? `configured: ${names.join(", ")}` : "add one with: git remote add origin URL");
}

/** Which sessions a push means; refused (exit 2 or 3) before anything is read beyond the journal. */
function chooseSessions(ctx: Context, records: readonly JournalRecord[], o: PushOptions): { names: string[]; skipped: { session: string; why: string }[] } {
  const given = [o.sessions && o.sessions.length > 0 ? "--session" : null, o.task !== undefined ? "--task" : null, o.run !== undefined ? "--run" : null, o.all ? "--all" : null].filter(
    (x) => x !== null,
  );
  if (given.length === 0) throw usage("nothing chosen to push", "name --session S (repeatable), --task T, --run R or --all");
  if (given.length > 1) throw usage(`one choice at a time (got ${given.join(", ")})`);
  const skipped: { session: string; why: string }[] = [];
  if (o.run !== undefined) return { names: [], skipped };
  if (o.sessions && o.sessions.length > 0) return { names: [...new Set(o.sessions.map((s) => resolveSession(records, s)))], skipped };
  if (o.task !== undefined) {
    const names = [...new Set(records.filter((r) => r.task === o.task).map((r) => r.session))].sort();
    if (names.length === 0) throw new UnwindError("E_SCOPE_UNKNOWN", `no session was recorded with task '${o.task}'`, { hint: "list them with: unwind sessions" });
    return { names, skipped };
  }
  // --all: the sessions of this work tree; another worktree's can only be resolved there.
  const here = new Set<string>();
  const elsewhere = new Set<string>();
  for (const r of records) (r.root === undefined || r.root === ctx.root ? here : elsewhere).add(r.session);
  for (const s of [...elsewhere].sort()) if (!here.has(s)) skipped.push({ session: s, why: "recorded in another work tree: push it from there" });
  return { names: [...here].sort(), skipped };
}

/** The calls of one session as `unwind log` lists them, and its summary, without closing anything (a push writes nothing to the journal). */
async function callsOf(ctx: Context, records: readonly JournalRecord[], session: string) {
  const mine = records.filter((r) => r.session === session);
  const calls = new Map<string, SharedCall>();
  for (const r of mine) {
    let c = calls.get(r.call);
    if (!c) calls.set(r.call, (c = { call: r.call, tool: r.tool, at: r.at, capture: r.kind, paths: [] }));
    if (r.kind === "file" && r.phase === "post" && !c.paths.includes(r.path)) c.paths.push(r.path);
  }
  const treeCalls = new Set(mine.filter((r) => r.kind === "tree").map((r) => r.call));
  const treePaths = new Map<string, string[]>();
  if (treeCalls.size > 0) {
    const { events } = await journalTimeline(ctx, records, (w) => w.session === session && treeCalls.has(w.call));
    for (const [path, list] of events) {
      for (const e of list) {
        for (const w of e.candidates) {
          if (w.kind !== "tree" || w.session !== session || !treeCalls.has(w.call)) continue;
          const paths = treePaths.get(w.call) ?? [];
          if (!paths.includes(path)) paths.push(path);
          treePaths.set(w.call, paths);
        }
      }
    }
    for (const [call, paths] of treePaths) calls.get(call)!.paths = sortByPath(paths.map((path) => ({ path }))).map((p) => p.path);
  }
  const summary = summarizeSessions(mine, new Map([...treePaths].map(([call, paths]) => [`${session}\0${call}`, paths])))[0]!;
  const list = [...calls.values()].sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  return { summary, calls: list };
}

/** Pushes the chosen sessions' records to `remote` under `refs/unwind/shared/<origin>/`, with explicit refspecs only. */
export async function push(ctx: Context, remoteArg: string | undefined, o: PushOptions = {}): Promise<PushReport> {
  const excludes = (o.excludes ?? []).map((g) => {
    const r = rootGlob(g, "");
    if (r === null || r === "") throw usage(`--exclude ${g}: not a path glob inside the work tree`);
    return r;
  });
  const { records } = readJournal(ctx.store);
  const { names, skipped } = chooseSessions(ctx, records, o);
  // A run's seal is checked before anything else is read: a tampered capsule is refused whole (exit 4), never shared.
  const run = o.run !== undefined ? await resolveRun(ctx, o.run) : null;
  const remote = await checkRemote(ctx, remoteArg ?? "origin");
  const dryRun = Boolean(o.dryRun);
  // Nothing to push (--all in a store without sessions) is an answer, and writes nothing: not even the origin's name.
  const origin = await originOf(ctx, { create: !dryRun && (names.length > 0 || run !== null) });
  const includeSecrets = Boolean(o.includeSecrets);
  const leftOut = leftOutBy(excludes, includeSecrets, secretPatterns(loadConfig(ctx.store)));
  const reader = new ContentReader(ctx, Cas.in(ctx.store));
  const pushed = origin ? await sharedRefs(ctx, `${SHARED_PREFIX}${origin}/`) : new Map<string, string>();
  const parentTrees = await treesOf(ctx, [...pushed.values()]);
  const at = new Date();
  const out: PushedSession[] = [];
  const secrets = new Set<string>();
  const noteSecrets = (excluded: readonly Excluded[]) => {
    for (const e of excluded) if (e.why !== "exclude") secrets.add(e.path);
  };
  for (const name of names) {
    // The one resolver, reading only: open calls are closed in memory, nothing is written to the journal.
    const { cs, laterWrites, interleaved } = await journalChangeSet(ctx, { kind: "session", id: name }, {});
    const { summary, calls } = await callsOf(ctx, records, name);
    const mine = records.filter((r) => r.session === name);
    const toShare = {
      session: name,
      harness: summary.harness,
      summary: { agents: summary.agents, tasks: summary.tasks, first: summary.first, last: summary.last, calls: summary.calls, paths: summary.paths },
      calls,
      entries: cs.entries,
      laterWrites,
      interleaved,
      recordPaths: mine.flatMap((r) => (r.kind === "file" ? [r.path] : [])),
    };
    let plan = planShare(toShare, origin ?? "<origin>", leftOut);
    const read = await contentOf(ctx, reader, plan.content, { write: !dryRun, scan: !includeSecrets });
    // A path whose bytes hold a token is left out like a secret-looking name: planned again, its other states unsent too.
    if (read.tokens.size > 0) plan = planShare(toShare, origin ?? "<origin>", withTokens(leftOut, cs.entries, read.tokens));
    noteSecrets(plan.doc.excluded);
    const { content, missing } = read.pick(plan.content);
    const entries = plan.doc.entries.map((e) => ({ ...e, pre: read.named(e.pre), post: read.named(e.post) }));
    const redacted = mine.map((r) => homeless(ctx, r.kind === "file" && r.state !== null && plan.redact.has(r.path) ? { ...r, state: NOT_SENT } : r));
    const recordBytes = Buffer.from(encode(redacted));
    const doc: SharedSessionDoc = { ...plan.doc, entries, records: sha256(recordBytes) };
    const ref = sessionRef(ctx, origin ?? "<origin>", name);
    const parent = pushed.get(ref) ?? null;
    let objs = sessionObjects(ctx, doc, recordBytes, content, parent, { write: false, at });
    const same = parent !== null && parentTrees.get(parent) === objs.tree;
    if (!same && !dryRun) objs = sessionObjects(ctx, doc, recordBytes, content, parent, { write: true, at });
    out.push({
      session: name,
      ref,
      commit: same ? parent! : objs.commit,
      status: parent === null ? "new" : same ? "unchanged" : "updated",
      entries: entries.length,
      blobs: objs.blobs,
      bytes: objs.bytes,
      missing,
      excluded: plan.doc.excluded,
    });
  }
  const runsOut: PushedRun[] = [];
  if (run) {
    const c = run.capsule;
    let red = redactEntries(c.entries, leftOut);
    const read = await contentOf(ctx, reader, red.content, { write: !dryRun, scan: !includeSecrets });
    if (read.tokens.size > 0) red = redactEntries(c.entries, withTokens(leftOut, c.entries, read.tokens));
    noteSecrets(red.excluded);
    const { content, missing } = read.pick(red.content);
    const entries = red.entries.map((e) => ({ ...e, pre: read.named(e.pre), post: read.named(e.post) }));
    const doc: SharedRunDoc = { v: 1, origin: origin ?? "<origin>", run: { ...capsuleHomeless(c), entries }, seal: run.seal, excluded: red.excluded };
    const ref = runRef(origin ?? "<origin>", c.id);
    const parent = pushed.get(ref) ?? null;
    let objs = runObjects(ctx, doc, content, parent, { write: false, at });
    const same = parent !== null && parentTrees.get(parent) === objs.tree;
    if (!same && !dryRun) objs = runObjects(ctx, doc, content, parent, { write: true, at });
    const status = parent === null ? ("new" as const) : same ? ("unchanged" as const) : ("updated" as const);
    runsOut.push({ run: c.id, ref, commit: same ? parent! : objs.commit, status, entries: entries.length, blobs: objs.blobs, bytes: objs.bytes, missing, excluded: red.excluded });
  }
  const all = [...out, ...runsOut];
  const report: PushReport = { remote: remoteArg ?? "origin", origin, dryRun, sessions: out, runs: runsOut, secrets: [...secrets].sort(), skipped, bytes: all.reduce((n, s) => n + s.bytes, 0) };
  if (dryRun || all.length === 0) return report;
  // Explicit refspecs, the new commits as sources: a push that fails leaves the local refs as they were.
  const r = await ctx.git(["push", "--porcelain", remote, ...all.map((s) => `${s.commit}:${s.ref}`)], { okCodes: [1] });
  const rejected = new Set<string>();
  for (const line of r.stdout.toString("utf8").split("\n")) {
    const m = /^!\t[^:]*:(\S+)\t/.exec(line);
    if (m) rejected.add(m[1]!);
  }
  if (r.code !== 0 && rejected.size === 0) throw new UnwindError("E_GIT", `git push to ${report.remote} failed: ${r.stderr.trim().split("\n")[0] ?? ""}`);
  const zero = "0".repeat(ctx.objectFormat === "sha256" ? 64 : 40);
  const moves = all.filter((s) => s.status !== "unchanged" && !rejected.has(s.ref)).map((s) => `update ${s.ref} ${s.commit} ${pushed.get(s.ref) ?? zero}\n`);
  if (moves.length > 0) await ctx.git(["update-ref", "--stdin"], { input: Buffer.from(moves.join("")) });
  if (rejected.size > 0) {
    throw new UnwindError("E_GIT", `the remote refused ${[...rejected].join(", ")}: it holds something else there`, {
      hint: "someone pushed there under this origin: set another with git config unwind.origin NAME",
    });
  }
  return report;
}

const keyOf = (st: State) => st.sha256 ?? st.oid;

/**
 * Each state's bytes, verified as they are read and, with `scan`, searched
 * for a well-known token; written as a blob at once unless they hold one
 * (ids only on a dry run). `tokens`: the states whose bytes hold a token
 * (never written: a path holding one is planned again, left out). `pick`
 * gives the blobs of the states a plan keeps and how many of them are gone
 * here; `named` gives a state the blob id of its raw bytes, the name of its
 * `content/` entry. A state whose bytes are gone keeps its record and
 * counts as missing.
 */
async function contentOf(ctx: Context, reader: ContentReader, states: readonly State[], o: { write: boolean; scan: boolean }) {
  await reader.prefetch(states);
  const blobOf = new Map<string, { oid: string; size: number }>();
  const tokens = new Map<string, string>();
  for (const st of states) {
    let bytes: Buffer;
    try {
      bytes = await reader.read(st);
    } catch {
      continue;
    }
    const token = o.scan ? tokenIn(bytes) : null;
    if (token !== null) tokens.set(keyOf(st)!, token);
    else blobOf.set(keyOf(st)!, { oid: writeBlob(ctx, bytes, o.write), size: bytes.length });
  }
  const pick = (kept: readonly State[]) => {
    const content = kept.flatMap((st) => blobOf.get(keyOf(st)!) ?? []);
    return { content, missing: kept.length - content.length };
  };
  const named = (st: State | null): State | null => {
    const k = st && (st.kind === "file" || st.kind === "symlink") ? keyOf(st) : undefined;
    const oid = k ? blobOf.get(k)?.oid : undefined;
    return oid ? ({ ...st!, oid } as State) : st;
  };
  return { tokens, pick, named };
}

/** What a pushed journal record of another work tree than the pushing one says for its root. */
const OTHER_ROOT = "(another work tree)";

/**
 * A journal record as pushed: the recording machine's absolute root is
 * not sent (it names a person's directories, and means nothing elsewhere).
 * A record of this work tree drops it; one of another work tree says only
 * that. Nothing on the other side reads it: the change set was resolved here.
 */
function homeless(ctx: Context, r: JournalRecord): JournalRecord {
  const { root, ...rest } = r;
  return root === undefined || root === ctx.root ? rest : { ...rest, root: OTHER_ROOT };
}

/**
 * A capsule as pushed: its root as `.`, its directory and policy file
 * relative to it (a file outside it by name alone). The capsule's own seal
 * (kept beside it, for reference) covers the original; the record's seal
 * on the wire covers what is sent. The command line goes as it was typed.
 */
function capsuleHomeless(c: Capsule): Capsule {
  const rel = (p: string) => {
    const r = relative(c.root, p);
    return r === "" ? "." : r === ".." || r.startsWith("../") || r.startsWith("/") ? basename(p) : r;
  };
  return {
    ...c,
    root: ".",
    cwd: rel(c.cwd),
    policy: { ...c.policy, source: c.policy.source === null ? null : rel(c.policy.source) },
    tamper: c.tamper.map((t) => t.split(c.root).join(".")),
  };
}

/** The tree of each commit (one git process). */
async function treesOf(ctx: Context, commits: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (commits.length === 0) return out;
  const r = await ctx.git(["rev-parse", ...commits.map((c) => `${c}^{tree}`)], { okCodes: [128] });
  r.stdout
    .toString("utf8")
    .split("\n")
    .forEach((t, k) => {
      if (k < commits.length && /^[0-9a-f]+$/.test(t)) out.set(commits[k]!, t);
    });
  return out;
}

export interface FetchReport {
  remote: string;
  /** Every shared ref after the fetch, and what the fetch did to it. */
  refs: { ref: string; origin: string; commit: string; status: "new" | "updated" | "unchanged" }[];
  /** Fetched sessions now readable (of other origins, seal intact). */
  sessions: number;
  /** Fetched run capsules now readable. */
  runs: number;
  /** Fetched records that fail their seal or cannot be read: `verify` names them, `undo` refuses them. */
  damaged: { ref: string; problem: string }[];
}

export interface FetchOptions {
  /** Only these origins' records (each `refs/unwind/shared/<origin>/*`); default: every origin's. */
  origins?: readonly string[] | undefined;
}

/** Fetches `refs/unwind/shared/*` (or only the named origins') from `remote` with explicit refspecs; fetching twice changes nothing. */
export async function fetch(ctx: Context, remoteArg: string | undefined, o: FetchOptions = {}): Promise<FetchReport> {
  const own = await originOf(ctx, { create: false });
  const origins = [...new Set(o.origins ?? [])];
  for (const name of origins) {
    const bad = checkOrigin(name);
    if (bad) throw usage(`--origin ${name}: ${bad}`, "list the origins a remote holds with: git ls-remote REMOTE 'refs/unwind/shared/*'");
    if (name === own) throw usage(`--origin ${name}: that is this store's own origin; its records move only by its own pushes`, "name another machine's origin");
  }
  const remote = await checkRemote(ctx, remoteArg ?? "origin");
  const before = await sharedRefs(ctx);
  // This store's own records are written by its pushes alone: a negative refspec keeps a remote from moving them.
  const mine = own && origins.length === 0 ? [`^${SHARED_PREFIX}${own}/*`] : [];
  const specs = origins.length === 0 ? [FETCH_REFSPEC] : origins.map((n) => `${SHARED_PREFIX}${n}/*:${SHARED_PREFIX}${n}/*`);
  // No FETCH_HEAD: a second fetch must leave the repository exactly as it was.
  const r = await ctx.git(["fetch", "--no-write-fetch-head", "--no-progress", remote, ...specs, ...mine], { okCodes: [1] });
  const after = await sharedRefs(ctx);
  if (r.code !== 0) {
    const line = r.stderr.split("\n").find((l) => l.includes("rejected")) ?? r.stderr.trim().split("\n")[0] ?? "";
    throw new UnwindError("E_GIT", `git fetch from ${remoteArg ?? "origin"} refused a shared ref: ${line.trim()}`, {
      hint: "the remote's history of that record was rewritten; inspect it with git ls-remote before trusting it",
    });
  }
  const refs = [...after].map(([ref, commit]) => ({
    ref,
    origin: ref.slice(SHARED_PREFIX.length).split("/")[0] ?? "",
    commit,
    status: !before.has(ref) ? ("new" as const) : before.get(ref) === commit ? ("unchanged" as const) : ("updated" as const),
  }));
  const fetched = [...(await fetchedSessions(ctx)), ...(await fetchedRuns(ctx))];
  return {
    remote: remoteArg ?? "origin",
    refs,
    sessions: fetched.filter((s) => s.doc !== null && "session" in s).length,
    runs: fetched.filter((s) => s.doc !== null && "run" in s).length,
    damaged: fetched.filter((s) => s.doc === null).map((s) => ({ ref: s.ref, problem: s.problem ?? "cannot be read" })),
  };
}
