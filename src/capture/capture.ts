import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, lstatSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { checkRepoPath, insideRoot, inStore } from "../domain/paths.js";
import { blobOid } from "../git/objects.js";
import { modeOf } from "./observe.js";
import { tooLargeOf, tooLargeState } from "./toolarge.js";
import { BoundDir, BoundDirs, READ_FLAGS, splitRel } from "../sys/bound-dir.js";
import type { RepoPath, State } from "../domain/types.js";
import { Cas } from "../store/cas.js";
import { UnwindError } from "../domain/errors.js";
import { loadConfig } from "../store/config.js";
import { logError } from "../store/error-log.js";
import { append, type FileRecord, type JournalRecord } from "../store/journal.js";
import { acquire } from "../store/lock.js";
import { awaitFinisher, doubtSince, preTreeOf } from "./finish-later.js";
import { type OpenCall, readOpenCalls, writeOpenCalls } from "../store/open-calls.js";
import type { CaptureEvent, Phase } from "./event.js";
import type { Located } from "../repo/locate.js";
import type { Context } from "../repo/context.js";

export interface CaptureLabels {
  task?: string;
  /** The run capsule the capture happened inside (`UNWIND_RUN`, set by `unwind run`). */
  run?: string;
}

/** The path with its parent directory's symlinks resolved; null when the parent does not exist. */
function realParent(abs: string): string | null {
  try {
    return join(realpathSync(dirname(abs)), basename(abs));
  } catch {
    return null;
  }
}

/**
 * Repo-relative path of a payload path, or why it is not ours to capture
 * (`beyondLink`: a parent is a symlink; `lexical` is the path as given).
 */
export function payloadPath(root: string, store: string, cwd: string, p: string): { rel: RepoPath } | { skip: string; beyondLink?: true; lexical?: RepoPath } {
  const abs = isAbsolute(p) ? resolve(p) : resolve(cwd, p);
  let rel = insideRoot(root, abs);
  if (rel === null) {
    // The payload may name the root through a symlink (e.g. /tmp vs /private/tmp): compare real parents.
    try {
      rel = insideRoot(root, join(realpathSync(dirname(abs)), basename(abs)));
    } catch {
      /* parent does not exist: keep the lexical answer */
    }
  }
  if (rel === null || rel === "") return { skip: `${p} is outside the root` };
  const repoRel = rel;
  const problem = checkRepoPath(repoRel);
  if (problem) return { skip: `${p} is not capturable (${problem})` };
  if (inStore(root, store, repoRel)) return { skip: `${p} is inside the unwind store` };
  // A parent that is a symlink leads somewhere the record could not vouch for.
  const parts = repoRel.split("/");
  for (let i = 1; i < parts.length; i++) {
    try {
      if (lstatSync(join(root, ...parts.slice(0, i))).isSymbolicLink()) return { skip: `${p} lies beyond a symlink`, beyondLink: true, lexical: repoRel as RepoPath };
    } catch {
      break;
    }
  }
  return { rel: repoRel as RepoPath };
}

/**
 * The state of one path, with its bytes put into the CAS. Files over the
 * size cap are `toolarge`: hashed (or, past the hash limit, known by stat
 * data: src/capture/toolarge.ts), not kept. Read through its directory
 * opened without following links, the file itself opened with O_NOFOLLOW
 * and described by what was opened (src/sys/bound-dir.ts): a parent swapped
 * for a link is never read through. "blocked": a parent is a link.
 */
export function captureState(cas: Cas, root: string, rel: RepoPath, sizeCap: number, format: "sha1" | "sha256"): State | null | "not-regular" | "blocked" {
  const dirs = new BoundDirs(root);
  try {
    const [dir, name] = splitRel(rel);
    const d = dirs.dir(dir);
    // Under a file nothing can be: absent, as an lstat there says. A linked parent leads somewhere unvouched for.
    if (!(d instanceof BoundDir)) return d.kind === "absent" || d.file ? null : "blocked";
    let st;
    try {
      st = d.lstat(name);
    } catch {
      return null;
    }
    if (st.isSymbolicLink()) {
      const target = d.readlink(name);
      return { kind: "symlink", mode: "120000", size: target.length, sha256: cas.put(target), oid: blobOid(target, format) };
    }
    if (!st.isFile()) return "not-regular";
    let fd: number;
    try {
      fd = d.openFile(name, READ_FLAGS);
    } catch {
      return "not-regular"; // a link or gone since the lstat
    }
    try {
      const fst = fstatSync(fd);
      if (!fst.isFile()) return "not-regular";
      const mode = modeOf(fst);
      if (fst.size > sizeCap) return { ...tooLargeState(tooLargeOf(fd, fst)), mode };
      const data = readFileSync(fd);
      return { kind: "file", mode, size: data.length, sha256: cas.put(data), oid: blobOid(data, format) };
    } finally {
      closeSync(fd);
    }
  } finally {
    dirs.close();
  }
}

/**
 * File capture of paths (payload paths: absolute, or relative to the
 * event's cwd) as records of one call. The caller holds the store lock.
 */
export function captureFiles(loc: Located, ev: CaptureEvent, paths: readonly string[], labels: CaptureLabels, as: RecordAs = {}): FileRecord[] {
  const cas = Cas.in(loc.store);
  const { sizeCap } = loadConfig(loc.store);
  const at = new Date().toISOString();
  const records: FileRecord[] = [];
  const seen = new Set<string>();
  const skip = (message: string) => logError(loc.store, { kind: "skipped-path", harness: ev.harness, session: ev.session, tool: ev.tool, message });
  const capture = (rel: RepoPath, via?: RepoPath) => {
    if (seen.has(rel)) return;
    seen.add(rel);
    const state = captureState(cas, loc.root, rel, sizeCap, loc.objectFormat);
    if (state === "not-regular") return skip(`${rel} is not a regular file`);
    if (state === "blocked") return skip(`${rel} lies beyond a symlink`);
    records.push({ ...base(ev, at, labels, as, loc.root), kind: "file", path: rel, state, ...(via ? { via } : {}) });
  };
  for (const p of paths) {
    const where = payloadPath(loc.root, loc.store, ev.cwd, p);
    if ("skip" in where && where.beyondLink) {
      // Through a symlinked directory: the tool writes where it leads, which may be ours to capture.
      const real = realParent(isAbsolute(p) ? p : resolve(ev.cwd, p));
      const there = real ? payloadPath(loc.root, loc.store, ev.cwd, real) : null;
      if (there && "rel" in there) {
        capture(there.rel, where.lexical);
        continue;
      }
    }
    if ("skip" in where) {
      skip(where.skip);
      continue;
    }
    // The link itself, and what a tool writing through it changes: its target (SPEC section 2).
    capture(where.rel);
    const target = linkTarget(loc, ev.cwd, where.rel);
    if (target && "skip" in target) skip(target.skip);
    else if (target) capture(target.rel, where.rel);
  }
  return records;
}

/**
 * Where a tool writing to `rel` really writes when `rel` is a symlink: its
 * final target, which must itself be capturable (inside the root, not in
 * .git or a store, no symlinked parent). Null when `rel` is no symlink.
 */
function linkTarget(loc: Located, cwd: string, rel: RepoPath): { rel: RepoPath } | { skip: string } | null {
  let cur: RepoPath = rel;
  for (let hops = 0; hops < 40; hops++) {
    const abs = join(loc.root, cur);
    let target: string;
    try {
      if (!lstatSync(abs).isSymbolicLink()) return cur === rel ? null : { rel: cur };
      target = readlinkSync(abs, "utf8");
    } catch {
      return cur === rel ? null : { rel: cur }; // a dangling link: the tool creates its target
    }
    const next = payloadPath(loc.root, loc.store, cwd, resolve(dirname(abs), target));
    if ("skip" in next) return { skip: `${rel} is a symlink to ${target}, which is not capturable: ${next.skip}` };
    cur = next.rel;
  }
  return { skip: `${rel}: too many levels of symlinks` };
}

/**
 * The closing post of a file call: each of its paths as it is now, and, for
 * a path that can no longer be captured (a directory or fifo now), a state
 * the record never saw, so the call is closed all the same.
 */
function closingCaptures(loc: Located, ev: CaptureEvent, paths: readonly string[], labels: CaptureLabels, as: RecordAs): FileRecord[] {
  const got = captureFiles(
    loc,
    ev,
    paths.map((p) => join(loc.root, p)),
    labels,
    as,
  );
  const have = new Set<string>(got.map((r) => r.path));
  const at = got[0]?.at ?? new Date().toISOString();
  for (const p of paths) if (!have.has(p)) got.push({ ...base(ev, at, labels, as, loc.root), kind: "file", path: p as RepoPath, state: { kind: "unknown" } });
  return got;
}

/** A record written for another call of the session than the event's own (closing it). */
interface RecordAs {
  call?: string;
  tool?: string;
  phase?: "pre" | "post";
  closedBy?: "next-event" | "background" | "read";
  /** With `call`: that call's subagent (OpenCall.agent). */
  agent?: string | undefined;
  agentType?: string | undefined;
}

export function base(ev: CaptureEvent, at: string, labels: CaptureLabels, as: RecordAs = {}, root?: string) {
  // A record closing another call names that call's subagent, not the event's: a parent and its
  // subagents share one session, and each one's event closes what the others left open.
  const who = as.call !== undefined ? as : ev;
  return {
    v: 1 as const,
    at,
    ...(root ? { root } : {}),
    session: ev.session,
    harness: ev.harness,
    ...(who.agent ? { agent: who.agent } : {}),
    ...(who.agentType ? { agentType: who.agentType } : {}),
    ...(labels.task ? { task: labels.task } : {}),
    ...(labels.run ? { run: labels.run } : {}),
    tool: as.tool ?? ev.tool,
    call: as.call ?? ev.call,
    phase: as.phase ?? ev.phase,
    ...(as.closedBy ? { closedBy: as.closedBy } : {}),
  };
}

/**
 * Captures one event under the store lock: a file capture of its target
 * paths, or a tree snapshot attributed to the call. Shared by `unwind hook`
 * and `unwind record`. The snapshot code (and git) is loaded only when a
 * tree is needed, so a file edit's hook stays cheap.
 *
 * Every call is closed (SPEC section 2): the session's calls still open
 * (a pre with no post: interrupted, killed; or a background command whose
 * post came while it runs on) are closed by this event, with a capture of
 * their own taken now, before this event's.
 */
export async function captureEvent(loc: Located, event: CaptureEvent, labels: CaptureLabels, budgetMs: number, opts: { sealedAt?: string } = {}): Promise<JournalRecord[]> {
  // A post still being finished by a process of its own (src/capture/finish-later.ts) comes first:
  // this event's snapshot must not land inside the window it is closing.
  if (opts.sealedAt === undefined && !(await awaitFinisher(loc.store, event.session, Date.now() + budgetMs))) {
    throw new Error("waiting for the last call's capture to finish timed out");
  }
  const release = await acquire(loc.store, `capture ${event.harness} ${event.tool}`, budgetMs);
  // The budget for git starts once the lock is ours: waiting for another
  // capture must not leave a snapshot a few milliseconds to run in.
  const deadline = Date.now() + budgetMs;
  try {
    const open = readOpenCalls(loc.store, event.session);
    const key = event.pairing === "key" ? event.call : undefined;
    const ev: CaptureEvent = key === undefined ? event : { ...event, call: pairedCall(open, event.phase, key) };
    // A call a reader closed is closed: its own post pairs with it, nothing else closes it again.
    const closing = open.filter((o) => o.call !== ev.call && !o.readClosed);
    const records: JournalRecord[] = [];
    let snap: { id: string; tree: string; at: string } | null = null;
    let ctx: Context | undefined = loc.ctx;
    if (ev.target.kind === "tree" || closing.some((o) => o.kind === "tree")) {
      const [{ resolveContext }, { takeSnapshot }] = await Promise.all([import("../repo/context.js"), import("./snapshot.js")]);
      // The context discovery already built, else the same discovery again from
      // the payload's cwd (a file-edit hook never loads the git wrapper, so
      // `locate` stops short of a context).
      ctx ??= await resolveContext(undefined, ev.cwd);
      const s = await takeSnapshot(ctx, { ...(labels.task ? { task: labels.task } : {}), session: ev.session, call: ev.call, label: `${ev.tool} ${ev.phase}` }, { deadline });
      snap = { id: s.id, tree: s.tree, at: s.at };
    }
    for (const o of closing) {
      const as: RecordAs = { call: o.call, tool: o.tool, phase: "post", closedBy: o.background ? "background" : "next-event", agent: o.agent, agentType: o.agentType };
      if (o.kind === "tree") records.push({ ...base(ev, snap!.at, labels, as, loc.root), kind: "tree", snapshot: snap!.id, tree: snap!.tree });
      else records.push(...closingCaptures(loc, ev, o.paths ?? [], labels, as));
    }
    // A read-only call records nothing of its own: it only closed what was open.
    let own: JournalRecord[] = [];
    // A post finished late: what changed since the post came is listed, not vouched for.
    let sealed: { sealedAt: string; doubt?: RepoPath[] } | null = null;
    if (opts.sealedAt !== undefined && ev.target.kind === "tree" && ev.phase === "post") {
      const preTree = preTreeOf(loc.store, ev.session, ev.call);
      const doubt = preTree && ctx ? ((await doubtSince(ctx, preTree, snap!.tree, opts.sealedAt, Math.max(1, deadline - Date.now()))) as RepoPath[]) : [];
      sealed = { sealedAt: opts.sealedAt, ...(doubt.length > 0 ? { doubt } : {}) };
    }
    if (ev.target.kind === "files") own = captureFiles(loc, ev, ev.target.paths, labels);
    else if (ev.target.kind === "tree")
      own = [
        {
          ...base(ev, snap!.at, labels, {}, loc.root),
          kind: "tree",
          snapshot: snap!.id,
          tree: snap!.tree,
          ...(ev.background && ev.phase === "post" ? { background: true as const } : {}),
          ...(sealed ?? {}),
        },
      ];
    records.push(...own);
    append(loc.store, records);
    // What a reader closed is forgotten at the session's next event: a post that comes after it belongs to no call still running.
    const next = open.filter((o) => o.call !== ev.call && !closing.includes(o) && !o.readClosed);
    if (ev.target.kind === "ignore") {
      /* nothing of its own to keep open */
    } else if (ev.phase === "pre") {
      const paths = own.flatMap((r) => (r.kind === "file" ? [r.path as string] : []));
      // A file call none of whose paths could be captured has nothing to close.
      const keyed = { ...(key === undefined ? {} : { key }), ...agentOf(ev) };
      if (ev.target.kind === "tree") next.push({ call: ev.call, tool: ev.tool, kind: "tree", ...keyed });
      else if (paths.length > 0) next.push({ call: ev.call, tool: ev.tool, kind: "files", paths, ...keyed });
    } else if (ev.background) {
      // Its post came, but it runs on: the session's next call closes its window.
      next.push({ call: ev.call, tool: ev.tool, kind: "tree", background: true, ...agentOf(ev) });
    }
    if (next.length > 0 || open.length > 0) writeOpenCalls(loc.store, ev.session, next);
    return records;
  } finally {
    release();
  }
}

/** The subagent fields of an event, as an open call keeps them. */
function agentOf(ev: CaptureEvent): { agent?: string; agentType?: string } {
  return { ...(ev.agent ? { agent: ev.agent } : {}), ...(ev.agentType ? { agentType: ev.agentType } : {}) };
}

/**
 * The id of a call whose harness sends no tool-use id, from its content key:
 * a post takes the oldest open call of the session under the same key (a
 * harness runs such calls one after the other); a pre, or a post whose pre
 * left nothing open, gets a new id, so two identical calls in one session
 * stay two calls. The key alone would merge them into one.
 */
export function pairedCall(open: readonly OpenCall[], phase: Phase, key: string): string {
  if (phase === "post") {
    // A call still open first; else one a reader closed before its post came (OpenCall.readClosed).
    const pre = open.find((o) => o.key === key && o.background !== true && !o.readClosed) ?? open.find((o) => o.key === key && o.readClosed);
    if (pre !== undefined) return pre.call;
  }
  const taken = new Set(open.map((o) => o.call));
  for (;;) {
    const id = `${key}-${randomBytes(3).toString("hex")}`;
    if (!taken.has(id)) return id;
  }
}

/** A call still open when a command reads the record, as its pre record names it. */
export interface StaleCall {
  session: string;
  harness: string;
  call: string;
  tool: string;
  kind: "tree" | "file";
  paths: string[];
  task?: string;
  /** Its subagent, as its records name it. */
  agent?: string;
  agentType?: string;
  background: boolean;
}

/**
 * Closes calls still open when a command reads the record (SPEC section 2:
 * "at the latest by the next command that reads the record"), with a
 * capture taken now and kept, so what happens later is never theirs. A
 * real post that comes after still extends the window. Takes the store
 * lock unless `locked` says the caller holds it.
 */
export async function closeStaleCalls(ctx: Context, candidates: readonly StaleCall[], locked: boolean, stillOpen: () => readonly StaleCall[]): Promise<JournalRecord[]> {
  if (candidates.length === 0) return [];
  let release: () => void = () => undefined;
  if (!locked) {
    try {
      // A reader must not wait on a busy store: the calls then stay open, closed in memory for this read only.
      release = await acquire(ctx.store, "close open calls", 1000);
    } catch (e) {
      if (e instanceof UnwindError && e.code === "E_LOCKED") return [];
      throw e;
    }
  }
  try {
    // Asked again under the lock: a post may have come since the caller looked.
    const now = new Set(stillOpen().map((c) => `${c.session}\0${c.call}`));
    const stale = candidates.filter((c) => now.has(`${c.session}\0${c.call}`));
    if (stale.length === 0) return [];
    const loc: Located = { mode: ctx.mode, root: ctx.root, store: ctx.store, objectFormat: ctx.objectFormat, ctx };
    const { takeSnapshot } = await import("./snapshot.js");
    const snap = stale.some((c) => c.kind === "tree") ? await takeSnapshot(ctx, { label: "closing open calls" }) : null;
    const records: JournalRecord[] = [];
    for (const c of stale) {
      const ev: CaptureEvent = {
        harness: c.harness,
        session: c.session,
        phase: "post",
        tool: c.tool,
        call: c.call,
        cwd: ctx.root,
        target: { kind: "tree" },
        ...(c.agent ? { agent: c.agent } : {}),
        ...(c.agentType ? { agentType: c.agentType } : {}),
      };
      const labels = c.task ? { task: c.task } : {};
      const as: RecordAs = { closedBy: c.background ? "background" : "read" };
      const mine = c.kind === "tree" ? [{ ...base(ev, snap!.at, labels, as, ctx.root), kind: "tree" as const, snapshot: snap!.id, tree: snap!.tree }] : closingCaptures(loc, ev, c.paths, labels, as);
      append(ctx.store, mine);
      records.push(...mine);
      // Kept, marked closed, for its own post to pair with; a background command's post has come already.
      writeOpenCalls(
        ctx.store,
        c.session,
        readOpenCalls(ctx.store, c.session).flatMap((o) => (o.call !== c.call ? [o] : c.background ? [] : [{ ...o, readClosed: true as const }])),
      );
    }
    return records;
  } finally {
    release();
  }
}
