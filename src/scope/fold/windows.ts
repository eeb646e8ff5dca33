import { runSession } from "../../domain/call-ref.js";
import type { JournalRecord } from "../../store/journal.js";
import type { StaleCall } from "../../capture/capture.js";
import { OPEN, type CallWindow, type Point } from "./timeline.js";

/** A window made from journal records: its file paths are a set that can be listed. */
export type RecordWindow = CallWindow & { paths?: ReadonlySet<string> };

/**
 * Each call's window from its records: from its pre capture to its last
 * post capture. A later post supersedes an earlier one (a call closed for
 * the session's next event, then finished after all; a background command
 * closed at the session's next call). A post whose pre is missing (the pre
 * capture failed) starts at the snapshot before it, crediting the call with
 * too much rather than too little; a call with no post yet stays OPEN.
 * `snapshotTimes` is sorted.
 */
export function callWindows(records: readonly JournalRecord[], snapshotTimes: readonly string[]): RecordWindow[] {
  // One list per run of a call: a pre after the call's post starts another run (ids repeat where
  // the harness derives them), so two runs never merge into one window spanning both.
  const runs = new Map<string, JournalRecord[][]>();
  for (const r of records) {
    const k = `${r.session}\0${r.call}`;
    let list = runs.get(k);
    if (!list) runs.set(k, (list = [[]]));
    let cur = list[list.length - 1]!;
    if (r.phase === "pre" && cur.some((x) => x.phase === "post")) list.push((cur = []));
    cur.push(r);
  }
  const out: RecordWindow[] = [];
  for (const list of runs.values()) {
    list.forEach((run, seq) => {
      const r0 = run[0]!;
      const pre = run.find((r) => r.phase === "pre");
      const posts = run.filter((r) => r.phase === "post");
      const lastPost = posts[posts.length - 1];
      const tree = run.some((r) => r.kind === "tree");
      let start = pre?.at;
      if (start === undefined) {
        const postAt = posts[0]!.at;
        start = [...snapshotTimes].reverse().find((t) => t < postAt) ?? postAt;
      }
      // A background command's own post does not end its window: the session's next call does.
      const runsOn = lastPost !== undefined && lastPost.closedBy === undefined && lastPost.background === true;
      const w: RecordWindow = {
        session: r0.session,
        call: r0.call,
        seq,
        kind: tree ? "tree" : "file",
        start,
        end: lastPost && !runsOn ? lastPost.at : OPEN,
        unclosed: !lastPost || lastPost.closedBy === "next-event" || lastPost.closedBy === "read",
      };
      // The record vouches only for what lies between the call's own pre and its own last post.
      const ownPost = [...posts].reverse().find((r) => r.closedBy === undefined);
      w.sure = pre && ownPost ? { start: pre.at, end: ownPost.at } : null;
      if (ownPost?.kind === "tree" && ownPost.sealedAt !== undefined && ownPost === lastPost) w.doubt = { until: ownPost.sealedAt, has: doubtOf(ownPost.doubt) };
      if (!tree) w.paths = new Set(run.flatMap((r) => (r.kind === "file" ? [r.path] : [])));
      out.push(w);
    });
  }
  return out;
}

/** Membership in a finished post's `doubt` list: a set only where there is one to ask. */
function doubtOf(paths: readonly string[] | undefined): (path: string) => boolean {
  if (!paths || paths.length === 0) return () => false;
  const set = new Set(paths);
  return (p) => set.has(p);
}

/** The known points of file captures: each path's state before and after its own call. */
export function filePoints(records: readonly JournalRecord[]): Point[] {
  const out: Point[] = [];
  for (const r of records) {
    if (r.kind === "file") out.push({ at: r.at, path: r.path, state: r.state, call: { session: r.session, call: r.call, phase: r.phase } });
  }
  return out;
}

/** The calls still open, as their records name them: what a reading command closes. */
export function openCalls(records: readonly JournalRecord[]): StaleCall[] {
  const windows = callWindows(records, []).filter((w) => w.end === OPEN);
  return windows.map((w) => {
    const mine = records.filter((r) => r.session === w.session && r.call === w.call);
    const r0 = mine[0]!;
    return {
      session: w.session,
      harness: r0.harness,
      call: w.call,
      tool: r0.tool,
      kind: w.kind,
      paths: [...(w.paths ?? [])],
      ...(r0.task ? { task: r0.task } : {}),
      ...(r0.agent ? { agent: r0.agent } : {}),
      ...(r0.agentType ? { agentType: r0.agentType } : {}),
      background: mine.some((r) => r.background === true),
    };
  });
}

/** What a run's window is read from: its snapshots' metadata (src/capture/snapshot.ts). */
export interface RunSnapshot {
  at: string;
  root?: string;
  task?: string;
  label?: string;
  run?: string;
  runSince?: string;
}

/**
 * Each ended run as a tree call's window (SPEC section 9: its change set
 * is before -> after under section 2's rules): from its before snapshot to
 * its after snapshot, both its own, so the record vouches for all of it.
 * Read from the after snapshot, which names the run and when its before
 * was taken; runs recorded before snapshots named them are found by their
 * labels. A run still in flight (no after yet) is no window: a run whose
 * `unwind` process died would otherwise hold one open for ever.
 */
export type RunWindow = CallWindow & { task?: string; root?: string };

export function runWindows(snaps: readonly RunSnapshot[]): RunWindow[] {
  const befores = new Map<string, string>();
  const afters: { id: string; at: string; since?: string; task?: string; root?: string }[] = [];
  for (const s of snaps) {
    const old = s.run === undefined ? /^run (\S+): (before|after)$/.exec(s.label ?? "") : null;
    const id = s.run ?? old?.[1];
    if (id === undefined) continue;
    const after = s.runSince !== undefined || old?.[2] === "after";
    if (after)
      afters.push({ id, at: s.at, ...(s.runSince !== undefined ? { since: s.runSince } : {}), ...(s.task !== undefined ? { task: s.task } : {}), ...(s.root !== undefined ? { root: s.root } : {}) });
    else befores.set(id, s.at);
  }
  const out: RunWindow[] = [];
  for (const a of afters) {
    const start = a.since ?? befores.get(a.id);
    if (start === undefined) continue;
    const w: RunWindow = { session: runSession(a.id), call: a.id, seq: 0, kind: "tree", start, end: a.at, unclosed: false, sure: { start, end: a.at } };
    if (a.task !== undefined) w.task = a.task;
    if (a.root !== undefined) w.root = a.root;
    out.push(w);
  }
  return out;
}
