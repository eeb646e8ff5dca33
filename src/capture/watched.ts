import { existsSync, lstatSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fsPath, hasRawBytes } from "../domain/path-bytes.js";
import { inStore } from "../domain/paths.js";
import { GitError, splitZ, type GitResult } from "../git/git.js";
import { lineSafe } from "../git/objects.js";
import type { Context } from "../repo/context.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { ASK_TIMEOUT_MS, ask, watchFiles, type ChangesAnswer, type WatchToken } from "../watch/protocol.js";
import { conversionInputs } from "./conversion.js";
import { globalExcludesFile } from "./excludes.js";
import { STATUS_ARGS } from "./index-config.js";
import { indexEnv } from "./disk-form.js";
import { CannotEditTree, treeEntries, type TreeEntry } from "./tree-edit.js";

// A snapshot told by the watcher (src/watch/daemon.ts) what changed since
// the last one, instead of `git status` looking at every file. What it
// produces is what status would have printed for the private index, as
// status's own `-z` records, so the rest of the snapshot is the same code
// either way. Three ways, cheapest first:
// - "watched": every path to look at is a file or symlink the index holds,
//   an untracked path listed last time and untouched since, or a new file
//   (checked against the ignore rules by one `git check-ignore`), under real
//   directories and outside nested repositories: no git status at all;
// - "pathspec": anything else (a new or removed directory, a file replaced
//   by a directory, a symlinked parent): `git status` limited to those
//   paths, so git itself decides ignore rules, nested repositories and what
//   a directory holds;
// - "full": the plain `git status`, whenever the watcher cannot vouch for
//   the whole period since the last snapshot (docs/design.md, "The watcher").

export type ScanKind = "watched" | "pathspec" | "full";

/** How a snapshot found what changed, and the token it is to keep (null: the watcher did not answer). */
export interface WatchScan {
  token: WatchToken | null;
  scan: ScanKind;
  reason: string | null;
  /** The rules outside the work tree, measured before the scan (see rulesKey). */
  rules: string;
  /** What the index tree the scan began with holds at paths the last state named (it need not be read again). */
  held: ReadonlyMap<string, TreeEntry | null>;
  indexTree: string | null;
}

/** Kept beside the private index after each snapshot taken while a watcher runs (docs/format.md). */
interface WatchState {
  v: 1;
  token: WatchToken | null;
  /** The index tree after that snapshot: `dirty` is relative to it. */
  indexTree: string | null;
  rules: string;
  /**
   * Every path that differed from the index tree then, with what the index
   * tree holds there: they are looked at again, whatever the watcher says,
   * without reading the index tree for them.
   */
  dirty: [string, TreeEntry | null][];
  scan: ScanKind;
  reason: string | null;
  at: string;
}

/** More paths than this to look at: a full status (and pathspecs stay short of argv limits). */
const MAX_PATHSPECS = 1000;

const statePath = (ctx: Context) => `${ctx.indexFile}.watch`;

/**
 * `git status` of the private index as the watcher allows, or null when no
 * watcher runs for this root (no info file): then nothing differs from a
 * snapshot without one.
 */
export function watchedStatus(ctx: Context, indexTree: string | null, timeoutMs: number | undefined): { status: Promise<GitResult>; watch: Promise<WatchScan> } | null {
  const files = watchFiles(ctx.root, ctx.store);
  if (!existsSync(files.info)) return null;
  const rules = rulesKey(ctx); // before the scan: a rule changed during it shows next time
  // A hook's budget is a deadline: what the wait for the daemon took is not given to git again.
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  const left = () => (deadline === undefined ? undefined : Math.max(1, deadline - Date.now()));
  const full = () => ctx.git(STATUS_ARGS, { env: indexEnv(ctx), optionalLocks: true, timeoutMs: left() });
  const plan = decide(ctx, indexTree, rules, files.socket, left).catch((e: unknown) => fullScan(null, `the watched scan failed: ${message(e)}`, rules, indexTree));
  const status = plan.then(async (p) => {
    if (p.scan.scan === "full") return full();
    if (p.output !== null) return { stdout: p.output, stderr: "", code: 0 };
    // Read-only: a status limited to pathspecs writes back an untracked cache that covers only them, and the
    // next full status (or a scratch one from a copy of the index) then misses untracked files elsewhere.
    return ctx.git(["--literal-pathspecs", ...STATUS_ARGS, "--", ...p.paths], { env: indexEnv(ctx), optionalLocks: false, timeoutMs: left() }).catch((e: unknown) => {
      // A pathspec git refuses (beyond a symlink, say) is no reason to fail the snapshot.
      if (!(e instanceof GitError) || e.gitCode === "timeout") throw e;
      p.scan.scan = "full";
      p.scan.reason = `git status of the changed paths failed: ${e.message}`;
      return full();
    });
  });
  status.catch(() => undefined); // awaited by whoever finishes the snapshot
  return { status, watch: plan.then((p) => p.scan) };
}

interface Plan {
  scan: WatchScan;
  /** Status records made here ("watched"), or null to ask git. */
  output: Buffer | null;
  paths: string[];
}

const fullScan = (token: WatchToken | null, reason: string, rules: string, indexTree: string | null, held: ReadonlyMap<string, TreeEntry | null> = new Map()): Plan => ({
  scan: { token, scan: "full", reason, rules, held, indexTree },
  output: null,
  paths: [],
});

async function decide(ctx: Context, indexTree: string | null, rules: string, socket: string, left: () => number | undefined): Promise<Plan> {
  const state = readState(ctx);
  let ans: ChangesAnswer;
  try {
    ans = await ask<ChangesAnswer>(socket, { op: "changes", since: state?.token ?? null }, Math.min(ASK_TIMEOUT_MS, left() ?? ASK_TIMEOUT_MS));
    if (typeof ans.instance !== "string" || typeof ans.seq !== "number" || !Array.isArray(ans.paths)) throw new Error("a garbled answer");
  } catch (e) {
    return fullScan(null, `the watcher did not answer: ${message(e)}`, rules, indexTree);
  }
  const token = { instance: ans.instance, seq: ans.seq };
  if (!state || !indexTree || state.indexTree !== indexTree) {
    return fullScan(token, ans.vouch ? "the private index was rewritten since the last snapshot" : (ans.reason ?? "the watcher cannot vouch"), rules, indexTree);
  }
  const held = new Map(state.dirty); // valid: the index tree is the one they were read from
  if (!ans.vouch) return fullScan(token, ans.reason ?? "the watcher cannot vouch", rules, indexTree, held);
  const full = (reason: string) => fullScan(token, reason, rules, indexTree, held);
  if (state.rules !== rules) return full("git config or ignore rules outside the work tree changed");
  const set = new Set(held.keys());
  for (const p of ans.paths) if (!outside(ctx, p)) set.add(p);
  const paths = [...set];
  // Ignore rules decide what every other path is; attributes how it hashes. Only a change counts: the paths the
  // last snapshot left differing were listed under the rules as they still are. (A rules file inside a directory
  // reported whole only rules what is below it, which git status of that directory reads.)
  const rule = ans.paths.find((p) => /(^|\/)\.git(ignore|attributes)$/.test(p));
  if (rule) return full(`${rule} changed`);
  if (paths.length > MAX_PATHSPECS) return full(`${paths.length} paths changed`);
  if (paths.some((p) => hasRawBytes(p) || !lineSafe(p))) return full("a changed name a pathspec cannot carry");
  const made = paths.length === 0 ? Buffer.alloc(0) : await withoutGit(ctx, indexTree, paths, held, new Set(ans.paths), left);
  const scan = { token, rules, held, indexTree };
  if (typeof made === "string") return { scan: { ...scan, scan: "pathspec", reason: made }, output: null, paths };
  return { scan: { ...scan, scan: "watched", reason: null }, output: made, paths };
}

/**
 * Status records for `paths`, made without git status, when each is one of:
 * - a file or symlink the index holds (so never ignored): " M" if it is
 *   there (the snapshot hashes it; one that turns out unchanged hashes to
 *   what the index has), " D" if it is gone;
 * - an untracked path the last snapshot listed that nothing touched since
 *   (`changed`: what the watcher reported): "??" as it was then, the rules
 *   being the same (else this is a full scan);
 * - a path the index does not hold that changed: a file or symlink now is
 *   "??" unless the ignore rules say otherwise (one `git check-ignore`, the
 *   rules git status applies, leading directories included); gone, it is
 *   nothing.
 * Every directory on the way must be a real directory now, and an untracked
 * path must not be inside a nested repository (git status shows those as
 * one entry, which snapshots leave out). Anything else: why git status
 * must look.
 */
async function withoutGit(
  ctx: Context,
  indexTree: string,
  paths: string[],
  known: ReadonlyMap<string, TreeEntry | null>,
  changed: ReadonlySet<string>,
  timeoutMs: () => number | undefined,
): Promise<Buffer | string> {
  const held = new Map(known);
  const unknown = paths.filter((p) => !held.has(p));
  try {
    if (unknown.length > 0) for (const [p, e] of await treeEntries(ctx, indexTree, unknown, timeoutMs)) held.set(p, e);
  } catch (e) {
    if (e instanceof CannotEditTree) return e.message;
    throw e;
  }
  const dirs = new Map<string, { real: boolean; repo: boolean }>();
  const dir = (d: string) => {
    let it = dirs.get(d);
    if (!it) {
      let real = false;
      let repo = false;
      try {
        real = lstatSync(fsPath(join(ctx.root, d))).isDirectory();
        repo = real && lstatSync(fsPath(join(ctx.root, d, ".git")), { throwIfNoEntry: false }) !== undefined;
      } catch {
        /* not a directory on the way */
      }
      dirs.set(d, (it = { real, repo }));
    }
    return it;
  };
  const records: string[] = [];
  const fresh: string[] = [];
  for (const p of paths) {
    const e = held.get(p);
    for (let d = dirOf(p); d !== ""; d = dirOf(d)) {
      const at = dir(d);
      if (!at.real) return `${d} is not a directory now`;
      if (!e && at.repo) return `${p} is inside the nested repository ${d}`;
    }
    if (e && !/^(100644|100755|120000)$/.test(e.mode)) return `${p} was a directory`;
    const st = lstatSync(fsPath(join(ctx.root, p)), { throwIfNoEntry: false });
    if (st && !(st.isFile() || st.isSymbolicLink())) return st.isDirectory() ? `${p} is a directory` : `${p} is not a file`;
    if (e) records.push(st ? ` M ${p}` : ` D ${p}`);
    else if (!changed.has(p)) records.push(`?? ${p}`);
    else if (st) fresh.push(p);
  }
  if (fresh.length > 0) {
    // Exit 1: none of them is ignored.
    const r = await ctx.git(["check-ignore", "--no-index", "--stdin", "-z"], { input: fresh.join("\0") + "\0", okCodes: [1], timeoutMs: timeoutMs() });
    const ignored = new Set(splitZ(r.stdout));
    for (const p of fresh) if (!ignored.has(p)) records.push(`?? ${p}`);
  }
  return Buffer.from(records.join("\0") + "\0");
}

const dirOf = (p: string) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");

function outside(ctx: Context, p: string): boolean {
  const parts = p.split("/");
  return parts[0] === ".git" || parts.includes(".unwind") || inStore(ctx.root, ctx.store, p);
}

/**
 * The state of every file outside the work tree that could change what a
 * snapshot holds or how it hashes: git's config files and attributes
 * (conversionInputs), `info/exclude` and the global excludes file. The
 * watcher sees only the work tree: a change to any of these is a full scan.
 */
export function rulesKey(ctx: Context): string {
  const st = (f: string | null) => {
    if (!f) return "-";
    try {
      const s = lstatSync(f, { throwIfNoEntry: false });
      return s ? `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}` : "-";
    } catch {
      return "?";
    }
  };
  return [conversionInputs(ctx), st(join(ctx.commonDir, "info", "exclude")), st(globalExcludesFile(ctx))].join(" ");
}

function readState(ctx: Context): WatchState | null {
  try {
    const s = JSON.parse(readFileSync(statePath(ctx), "utf8")) as WatchState;
    return s.v === 1 && Array.isArray(s.dirty) && s.dirty.every((d) => Array.isArray(d) && typeof d[0] === "string") ? s : null;
  } catch {
    return null;
  }
}

/**
 * Kept once the snapshot's ref exists: the token, and which of the paths
 * status listed still differ from the index tree as it is now
 * (`indexTree`; the snapshot may have folded them in), each with what the
 * index tree holds there: a path the new tree holds otherwise than the
 * index tree, or one neither holds that is on disk (a file over the size
 * cap). What the index tree holds is carried over from the scan where it
 * is the same tree, and what the new tree holds comes from the edit, so
 * trees are read only for paths new to the record, or after a fold. A
 * cache: atomic against a kill, not fsynced; a missing or unreadable one
 * only costs a full scan.
 */
export async function keepWatchState(
  ctx: Context,
  scan: WatchScan,
  result: { listed: readonly string[]; entries: ReadonlyMap<string, TreeEntry | null> | null; tree: string },
  indexTree: string | null,
): Promise<void> {
  let dirty: [string, TreeEntry | null][];
  try {
    dirty = await stillDiffering(ctx, scan, result, indexTree);
  } catch {
    rmSync(statePath(ctx), { force: true }); // the next snapshot scans everything
    return;
  }
  const state: WatchState = { v: 1, token: scan.token, indexTree, rules: scan.rules, dirty, scan: scan.scan, reason: scan.reason, at: new Date().toISOString() };
  writeFileAtomic(statePath(ctx), JSON.stringify(state) + "\n", { sync: false });
}

async function stillDiffering(
  ctx: Context,
  scan: WatchScan,
  result: { listed: readonly string[]; entries: ReadonlyMap<string, TreeEntry | null> | null; tree: string },
  indexTree: string | null,
): Promise<[string, TreeEntry | null][]> {
  const { listed } = result;
  if (listed.length === 0) return [];
  if (!indexTree) throw new Error("no index tree");
  const none = () => undefined;
  const base = new Map<string, TreeEntry | null>();
  const carried = indexTree === scan.indexTree ? scan.held : new Map<string, TreeEntry | null>();
  const unknown: string[] = [];
  for (const p of listed) {
    if (carried.has(p)) base.set(p, carried.get(p)!);
    else unknown.push(p);
  }
  if (unknown.length > 0) for (const [p, e] of await treeEntries(ctx, indexTree, unknown, none)) base.set(p, e);
  const now = result.entries ?? (await treeEntries(ctx, result.tree, listed, none));
  const out: [string, TreeEntry | null][] = [];
  for (const p of listed) {
    const a = now.get(p) ?? null;
    const b = base.get(p) ?? null;
    const differs = a && b ? a.mode !== b.mode || a.oid !== b.oid : a || b ? true : onDisk(ctx, p);
    if (differs) out.push([p, b]);
  }
  return out;
}

function onDisk(ctx: Context, p: string): boolean {
  try {
    return lstatSync(fsPath(join(ctx.root, p)), { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false; // a file where a directory was on the way
  }
}

/** The last snapshot's scan, for `unwind watch status`. */
export function lastScan(ctx: Context): { scan: ScanKind; reason: string | null; at: string } | null {
  const s = readState(ctx);
  return s ? { scan: s.scan, reason: s.reason, at: s.at } : null;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
