import { basename } from "node:path";
import { UnwindError } from "../../errors.js";
import type { Context } from "../../store/context.js";
import { readJournal, sessionFile, type JournalRecord } from "../../store/journal.js";
import { pathMatcher } from "../glob.js";
import type { ChangeSet, LaterWrite, RepoPath, Scope } from "../types.js";
import { journalEntries, observations, overlaps, treeCalls, type TreeDiff } from "./journal.js";
import { treeChangeSet } from "./tree.js";
import { listSnapshots, type Snapshot } from "../../capture/snapshot.js";

export interface JournalScope {
  kind: "session" | "call" | "task";
  id: string;
}

/** A name as the user typed it: the full `<harness>:<id>`, the bare id, or a unique prefix (6+) of either. */
export function resolveSession(records: readonly JournalRecord[], wanted: string): string {
  const names = [...new Set(records.map((r) => r.session))].sort();
  const bare = (n: string) => n.slice(n.indexOf(":") + 1);
  const exact = names.filter((n) => n === wanted || bare(n) === wanted);
  if (exact.length === 1) return exact[0]!;
  const hits = exact.length > 1 ? exact : wanted.length >= 6 ? names.filter((n) => n.startsWith(wanted) || bare(n).startsWith(wanted)) : [];
  if (hits.length === 1) return hits[0]!;
  if (hits.length > 1) {
    throw new UnwindError("E_SCOPE_AMBIGUOUS", `${hits.length} sessions match '${wanted}': ${hits.slice(0, 8).join(", ")}`, {
      hint: "give the full <harness>:<id> name or more characters",
    });
  }
  throw new UnwindError("E_SCOPE_UNKNOWN", `no session '${wanted}'${wanted.length < 6 && names.length ? " (a prefix needs 6+ characters)" : ""}`, {
    hint: "list them with: unwind sessions",
  });
}

export function resolveCall(records: readonly JournalRecord[], wanted: string): string {
  const calls = [...new Set(records.map((r) => r.call))].sort();
  if (calls.includes(wanted)) return wanted;
  const hits = wanted.length >= 6 ? calls.filter((c) => c.startsWith(wanted)) : [];
  if (hits.length === 1) return hits[0]!;
  if (hits.length > 1) {
    throw new UnwindError("E_SCOPE_AMBIGUOUS", `${hits.length} calls match '${wanted}': ${hits.slice(0, 8).join(", ")}`, { hint: "use more characters" });
  }
  throw new UnwindError("E_SCOPE_UNKNOWN", `no call '${wanted}'`, { hint: "list them with: unwind log" });
}

/** The tree diffs of tree-captured calls, one `diff-tree` each. */
export async function diffTreeCalls(
  ctx: Context,
  records: readonly JournalRecord[],
  want: (c: { session: string; call: string; postAt: string }) => boolean = () => true,
): Promise<TreeDiff[]> {
  const out: TreeDiff[] = [];
  let snapshots: Map<string, Snapshot> | null = null;
  for (const c of treeCalls(records)) {
    if (!want({ session: c.session, call: c.call, postAt: c.post.at })) continue;
    let from: { tree: string; at: string } | null = c.pre;
    if (!from) {
      snapshots ??= new Map((await listSnapshots(ctx)).map((s) => [s.id, s]));
      const parent = snapshots.get(snapshots.get(c.post.snapshot)?.parent ?? "");
      if (!parent) continue; // the first snapshot of this work tree: nothing to diff from
      from = parent;
    }
    const cs = await treeChangeSet(ctx, { kind: "call", id: c.call }, from.tree, c.post.tree);
    out.push({ session: c.session, call: c.call, preAt: from.at, postAt: c.post.at, entries: cs.entries.map(({ path, pre, post }) => ({ path, pre, post })) });
  }
  return out;
}

export interface JournalChangeSet {
  cs: ChangeSet;
  laterWrites: Map<RepoPath, LaterWrite>;
  interleaved: Map<RepoPath, { by: string | null; at: string }>;
}

/**
 * Session, call and journal-task scopes: the records that belong to the
 * scope, their file captures and tree diffs, folded into a change set.
 * A damaged record in the scope's journal refuses the whole scope (exit 4):
 * a change set built around a record we cannot read could undo too little
 * or the wrong thing.
 */
export async function journalChangeSet(ctx: Context, scope: JournalScope, opts: { since?: string; paths?: string[] }): Promise<JournalChangeSet> {
  const { records, damaged } = readJournal(ctx.store);
  let keep: (r: { session: string; call: string }) => boolean;
  let sessions: string[];
  let id = scope.id;
  if (scope.kind === "session") {
    id = resolveSession(records, scope.id);
    keep = (r) => r.session === id;
    sessions = [id];
  } else if (scope.kind === "call") {
    id = resolveCall(records, scope.id);
    keep = (r) => r.call === id;
    sessions = [...new Set(records.filter((r) => r.call === id).map((r) => r.session))];
  } else {
    sessions = [...new Set(records.filter((r) => r.task === scope.id).map((r) => r.session))];
    if (sessions.length === 0) {
      throw new UnwindError("E_SCOPE_UNKNOWN", `no evidence for task '${scope.id}': no session was recorded with it`, {
        hint: "label captures with UNWIND_TASK, or bind the task with: unwind task start",
      });
    }
    const inTask = new Set(sessions);
    keep = (r) => inTask.has(r.session);
  }
  const files = new Set(sessions.map((s) => basename(sessionFile(ctx.store, s))));
  const bad = damaged.filter((d) => files.has(d.file));
  if (bad.length > 0) {
    throw new UnwindError("E_STORE_DAMAGED", `journal record ${bad[0]!.file}:${bad[0]!.line} is damaged (${bad[0]!.why}); refusing to guess what the scope changed`, {
      hint: "run unwind verify",
    });
  }
  // Tree calls to diff: the scope's own, and other sessions' from the scope's first record on
  // (only those can be later writes). One diff-tree each, so the rest are skipped.
  const firstAt = records.find((r) => keep(r))?.at ?? "";
  const diffs = await diffTreeCalls(ctx, records, (c) => keep(c) || c.postAt >= firstAt);
  const obs = observations(records, diffs);
  const paths = pathMatcher(opts.paths ?? []);
  const entries = journalEntries(obs, { ...(opts.since ? { since: opts.since } : {}), ...(paths ? { path: paths } : {}) }, keep);
  const s: Scope = { kind: scope.kind, id };
  const { later, interleaved } = overlaps(obs, entries, keep, opts.since);
  return { cs: { scope: s, entries }, laterWrites: later, interleaved };
}
