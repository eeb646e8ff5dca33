import type { JournalRecord } from "../../store/journal.js";
import { OPEN, type CallWindow, type Point } from "./timeline.js";

/**
 * Each call's window from its records: from its pre capture to its last
 * post capture. A later post supersedes an earlier one (a call closed for
 * the session's next event, then finished after all; a background command
 * closed at the session's next call). A post whose pre is missing (the pre
 * capture failed) starts at the snapshot before it, crediting the call with
 * too much rather than too little; a call with no post yet stays OPEN.
 * `snapshotTimes` is sorted.
 */
export function callWindows(records: readonly JournalRecord[], snapshotTimes: readonly string[]): CallWindow[] {
  const by = new Map<string, JournalRecord[]>();
  for (const r of records) {
    const k = `${r.session}\0${r.call}`;
    let list = by.get(k);
    if (!list) by.set(k, (list = []));
    list.push(r);
  }
  const out: CallWindow[] = [];
  for (const list of by.values()) {
    const r0 = list[0]!;
    const pre = list.find((r) => r.phase === "pre");
    const posts = list.filter((r) => r.phase === "post");
    const lastPost = posts[posts.length - 1];
    const tree = list.some((r) => r.kind === "tree");
    let start = pre?.at;
    if (start === undefined) {
      const postAt = posts[0]!.at;
      start = [...snapshotTimes].reverse().find((t) => t < postAt) ?? postAt;
    }
    const w: CallWindow = {
      session: r0.session,
      call: r0.call,
      kind: tree ? "tree" : "file",
      start,
      end: lastPost?.at ?? OPEN,
      unclosed: !lastPost || lastPost.closedBy === "next-event",
    };
    if (!tree) w.paths = new Set(list.map((r) => (r.kind === "file" ? r.path : "")));
    out.push(w);
  }
  return out;
}

/** The known points of file captures: each path's state before and after its own call. */
export function filePoints(records: readonly JournalRecord[]): Point[] {
  const out: Point[] = [];
  for (const r of records) {
    if (r.kind === "file") out.push({ at: r.at, path: r.path, state: r.state, call: { session: r.session, call: r.call, phase: r.phase } });
  }
  return out;
}
