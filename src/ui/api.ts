import { UnwindError, usage } from "../domain/errors.js";
import type { Unwind } from "../ops/open.js";
import type { RunSummary } from "../ops/runs.js";
import type { ScopeFields } from "../scope/resolve.js";

/**
 * The UI's JSON API: each route checks its arguments and calls one
 * operation of the library, returning its `--json` document (SPEC section
 * 11). GET routes only read (a dry run writes nothing, not even a lock
 * file); the three POST routes apply, and only the plan the person saw:
 * its digest is required and passed as `expect`, so a plan that changed
 * since the preview is refused (E_PLAN_CHANGED) and nothing is written.
 */
export type Route = { method: "GET" | "POST"; run: (u: Unwind, args: Args) => Promise<unknown> };

/** A GET's query or a POST's JSON body, as plain values. */
export type Args = Record<string, unknown>;

const SCOPE_KEYS = ["session", "call", "fromCall", "task", "snapshot", "to", "run", "baseline"] as const;

/** What narrows an undo within its scope: one path (and some of its hunks), a run's policy. */
const NARROW = ["path", "hunks", "safeOnly"] as const;

/** What a receipt records of who started it (SPEC section 13). */
const UI = { client: "ui" } as const;

/** How many calls the timeline lists: their tree-captured paths cost a git diff each. */
const TIMELINE_CALLS = 300;

/** A route that takes exactly `keys`: an unknown argument is refused (a misspelt `sesion` must not widen an undo to some default). */
const route = (method: Route["method"], keys: readonly string[], run: (u: Unwind, a: Args) => Promise<unknown>): Route => ({
  method,
  run: (u, a) => {
    only(a, keys);
    return run(u, a);
  },
});

export const ROUTES: Record<string, Route> = {
  "/api/timeline": route("GET", [], async (u) => {
    const { unchanged: _, ...doc } = await timeline(u);
    return doc;
  }),
  "/api/stamp": route("GET", [], (u) => u.stamp()),
  "/api/status": route("GET", [], (u) => u.status()),
  "/api/verify": route("GET", [], (u) => u.verify()),
  // With `patch`, each text change carries its hunks as the engine numbers them: the page's "take back this hunk" names those numbers.
  "/api/changes": route("GET", [...SCOPE_KEYS, "patch", "offset", "limit"], (u, a) =>
    u.changes(scopeOf(a), { patch: flag(a.patch), ...(a.limit !== undefined ? { patchRange: { offset: count(a, "offset", 0), limit: count(a, "limit", 1) } } : {}) }),
  ),
  // The calls the timeline's filters select, among every call (the timeline itself lists the newest 300).
  "/api/log": route("GET", ["session", "task", "path", "limit"], (u, a) => u.log({ session: optText(a, "session"), task: optText(a, "task"), path: optText(a, "path"), limit: count(a, "limit", 1) })),
  "/api/plan": route("GET", [...SCOPE_KEYS, ...NARROW, "force", "merge"], (u, a) => u.plan(scopeOf(a), { force: flag(a.force), merge: flag(a.merge), ...narrowed(a, "query") })),
  "/api/restore-plan": route("GET", ["snapshot", "force"], (u, a) => u.restore(text(a, "snapshot"), { dryRun: true, force: flag(a.force) })),
  "/api/redo-plan": route("GET", ["receipt"], (u, a) => u.redo(text(a, "receipt"), { dryRun: true })),
  "/api/content": route("GET", ["sha256", "oid"], async (u, a) => {
    const c = await u.content({ sha256: optText(a, "sha256"), oid: optText(a, "oid") });
    return { size: c.size, sha256: c.sha256, oid: c.oid, ...shown(c.bytes) };
  }),
  // A page of diffs asks for both sides of each entry it shows: one request, one batch of git's blobs.
  "/api/contents": route("GET", ["refs"], async (u, a) => {
    const got = await u.contents(refsOf(a));
    return {
      contents: got.map((c) =>
        c instanceof UnwindError ? { error: { code: c.code, message: c.message, hint: c.hint ?? null }, status: statusOf(c) } : { size: c.size, sha256: c.sha256, oid: c.oid, ...shown(c.bytes) },
      ),
    };
  }),
  "/api/current": route("GET", ["path"], async (u, a) => {
    const c = await u.current(text(a, "path"));
    return { path: c.path, kind: c.kind, size: c.size, sha256: c.sha256, oid: c.oid, ...(c.bytes ? shown(c.bytes) : { text: null, binary: false, tooLarge: c.kind === "toolarge" }) };
  }),
  "/api/undo": route("POST", [...SCOPE_KEYS, ...NARROW, "force", "merge", "plan"], (u, a) =>
    u.undo(scopeOf(a), { force: bool(a, "force"), merge: bool(a, "merge"), ...narrowed(a, "body"), expect: digest(a), by: UI }),
  ),
  "/api/run": route("GET", ["run"], (u, a) => u.runShow(text(a, "run"))),
  // A cleanup ends only the processes its capsule names, each while its pid and start time still match; the page previews it (a dry run) first.
  "/api/cleanup-plan": route("GET", ["run"], (u, a) => u.cleanup(text(a, "run"), { dryRun: true })),
  "/api/cleanup": route("POST", ["run"], (u, a) => u.cleanup(text(a, "run"))),
  "/api/restore": route("POST", ["snapshot", "force", "plan"], (u, a) => u.restore(text(a, "snapshot"), { force: bool(a, "force"), expect: digest(a), by: UI })),
  "/api/redo": route("POST", ["receipt", "plan"], (u, a) => u.redo(text(a, "receipt"), { expect: digest(a), by: UI })),
};

/** Bytes a diff can show as text: UTF-8 without NUL, up to 2 MiB; anything else is shown as its size and hash. */
const TEXT_LIMIT = 2 * 1024 * 1024;

/** At most this many states in one `/api/contents`: a page's both sides, with room. */
const CONTENTS_LIMIT = 100;

/** `refs=SHA256:OID,…`, either side of a pair empty where the state has no such hash. */
function refsOf(a: Args): { sha256: string | null; oid: string | null }[] {
  const list = text(a, "refs").split(",");
  if (list.length > CONTENTS_LIMIT) throw usage(`refs: ${list.length} states, at most ${CONTENTS_LIMIT} at once`, "ask for a page at a time");
  return list.map((r) => {
    const m = /^([^:]*):([^:]*)$/.exec(r);
    if (!m) throw usage(`refs: ${JSON.stringify(r.slice(0, 80))} is not SHA256:OID`, "leave a side empty where the state has no such hash");
    return { sha256: m[1] || null, oid: m[2] || null };
  });
}

function shown(bytes: Buffer): { text: string | null; binary: boolean; tooLarge: boolean } {
  if (bytes.length > TEXT_LIMIT) return { text: null, binary: false, tooLarge: true };
  if (bytes.includes(0)) return { text: null, binary: true, tooLarge: false };
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes), binary: false, tooLarge: false };
  } catch {
    return { text: null, binary: true, tooLarge: false };
  }
}

/**
 * What the timeline lists, kept by the server with the record's stamp it
 * was read under (src/store/stamp.ts: the same stamp the live view follows,
 * so what it would not reload for is what a kept timeline cannot miss). A
 * page load or a live reload on an unchanged record answers from it; it is
 * kept only if the stamp is the same after the read as before it. The
 * server reads it once as it starts (`warmTimeline`), while the browser is
 * still opening.
 */
const kept = new WeakMap<Unwind, { stamp: string; body: Promise<TimelineDoc> }>();

type TimelineDoc = Awaited<ReturnType<typeof readTimeline>>;

export function timeline(u: Unwind): Promise<TimelineDoc> {
  return u.stamp().then(({ stamp }) => {
    const k = kept.get(u);
    if (k?.stamp === stamp) return k.body;
    const body = readTimeline(u, stamp);
    kept.set(u, { stamp, body });
    // A read that failed, or saw the record change under it, is not kept.
    const drop = () => {
      if (kept.get(u)?.body === body) kept.delete(u);
    };
    body.then((doc) => {
      if (!doc.unchanged) drop();
    }, drop);
    return body;
  });
}

/** Starts the timeline's first read; a failure here is the first page load's to report. */
export function warmTimeline(u: Unwind): void {
  timeline(u).catch(() => undefined);
}

async function readTimeline(u: Unwind, before: string) {
  const [sessions, log, snapshots, receipts, baselines] = await Promise.all([u.sessions(), u.log({ limit: TIMELINE_CALLS }), u.snapshots(), u.receipts(), u.baselines()]);
  const r = await runs(u);
  const unchanged = (await u.stamp()).stamp === before;
  return {
    root: u.root,
    // The stamp from before the reads: where the record changed meanwhile, the live view's next stamp differs from it, and the page reloads.
    stamp: before,
    sessions: sessions.sessions,
    calls: log.calls,
    callsTotal: log.total,
    snapshots: snapshots.snapshots,
    receipts: receipts.receipts,
    runs: r.about,
    runList: r.list,
    baselines: baselines.baselines,
    /** Not sent: whether the record was the same after the reads as before (`timeline` keeps only such a read). */
    unchanged,
  };
}

/** The run capsules, and whether the library has them (a library without them says E_NOT_BUILT): the timeline says so instead of failing. */
async function runs(u: Unwind): Promise<{ about: { available: boolean; note: string | null }; list: RunSummary[] }> {
  try {
    const r = await u.runs({ limit: TIMELINE_CALLS });
    return { about: { available: true, note: null }, list: r.runs };
  } catch (e) {
    if (e instanceof UnwindError && e.code === "E_NOT_BUILT") return { about: { available: false, note: e.message }, list: [] };
    throw e;
  }
}

/**
 * One path, some of its hunks, a run's safe-only: from a query (strings:
 * `hunks=1,3`, `safeOnly=1`) or a POST body (JSON: an array, a boolean).
 */
function narrowed(a: Args, from: "query" | "body"): { paths?: string[]; hunks?: number[]; safeOnly?: boolean } {
  const out: { paths?: string[]; hunks?: number[]; safeOnly?: boolean } = {};
  if (a.path !== undefined) out.paths = [text(a, "path")];
  if (a.hunks !== undefined) {
    const v = a.hunks;
    const list = from === "query" && typeof v === "string" ? v.split(",").map((x) => (/^\d+$/.test(x) ? Number(x) : Number.NaN)) : v;
    if (!Array.isArray(list) || list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 1)) throw usage("hunks: expected hunk numbers from 1 (1,3 in a query; [1, 3] in a body)");
    out.hunks = list as number[];
  }
  if (a.safeOnly !== undefined) out.safeOnly = from === "query" ? flag(a.safeOnly) : bool(a, "safeOnly");
  return out;
}

function only(a: Args, keys: readonly string[]): void {
  const extra = Object.keys(a).filter((k) => !keys.includes(k));
  if (extra.length > 0) throw usage(`unknown argument ${extra.map((k) => JSON.stringify(k)).join(", ")}`, keys.length ? `expected: ${keys.join(", ")}` : "this takes no arguments");
}

function scopeOf(a: Args): ScopeFields {
  const s: ScopeFields = {};
  for (const k of SCOPE_KEYS) if (a[k] !== undefined) s[k] = text(a, k);
  return s;
}

function text(a: Args, k: string): string {
  const v = a[k];
  if (typeof v !== "string" || v === "") throw usage(`${k}: expected a non-empty string`);
  return v;
}

function optText(a: Args, k: string): string | undefined {
  return a[k] === undefined ? undefined : text(a, k);
}

/** A whole number from a query, at least `min`; `min` itself when absent (a limit of 1 when none is given never happens: the UI names it). */
function count(a: Args, k: string, min: number): number {
  const v = a[k];
  if (v === undefined) return min;
  if (typeof v !== "string" || !/^\d{1,7}$/.test(v) || Number(v) < min) throw usage(`${k}: expected a whole number from ${min}`);
  return Number(v);
}

/** A query flag: present as `1` or `true`. */
function flag(v: unknown): boolean {
  return v === "1" || v === "true";
}

function bool(a: Args, k: string): boolean {
  const v = a[k];
  if (v === undefined) return false;
  if (typeof v !== "boolean") throw usage(`${k}: expected true or false`);
  return v;
}

function digest(a: Args): string {
  const v = a.plan;
  if (typeof v !== "string" || !/^[0-9a-f]{12,64}$/.test(v)) throw usage("plan: the digest of the preview being applied is required (12 to 64 hex digits)", "preview first; apply sends its digest");
  return v;
}

/** The HTTP status of a refusal: the CLI's exit codes, as a browser understands them. */
export function statusOf(e: unknown): number {
  if (!(e instanceof UnwindError)) return 500;
  switch (e.code) {
    case "E_USAGE":
    case "E_NOT_DIR":
      return 400;
    case "E_SCOPE_UNKNOWN":
      return 404;
    case "E_PLAN_CHANGED":
    case "E_SCOPE_AMBIGUOUS":
    case "E_SCOPE_OTHER_WORKTREE":
      return 409;
    case "E_LOCKED":
      return 423;
    case "E_NOT_BUILT":
      return 501;
    default:
      return 500;
  }
}
