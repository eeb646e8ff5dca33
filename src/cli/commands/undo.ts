import { resolveSnapshot, writeWorkTree } from "../../capture/snapshot.js";
import { runUndo, type UndoReport } from "../../ops/take-back.js";
import { isPartial } from "../../domain/actions.js";
import type { ChangeEntry, ChangeSet, Interleaved, LaterWrite, RepoPath, State } from "../../domain/types.js";
import { journalChangeSet } from "../../scope/calls.js";
import { branchChangeSet, taskEvidence } from "../../scope/task.js";
import { pathMatcher } from "../../domain/glob.js";
import { Exit, UnwindError, usage } from "../../domain/errors.js";
import { parseDuration } from "../../store/config.js";
import { now } from "../../sys/clock.js";
import type { Context } from "../../repo/context.js";
import { withLock } from "../../store/lock.js";
import { recoverPending } from "../../apply/recover.js";
import { acts } from "../../domain/actions.js";
import { changeKind, matches } from "../../domain/states.js";
import { Receipts } from "../../store/receipts.js";
import type { Globals } from "../globals.js";
import { paint, progress, short, showPath, table, type Color, type Output } from "../render.js";
import { cwdGlobs, cwdPaths, open, taskLabel } from "./common.js";
import { jsonPath } from "../../domain/paths.js";
import { nowSide, snapshotChangeSet, snapshotSide } from "../../scope/snapshot-diff.js";
import { Cas } from "../../store/cas.js";
import { join } from "node:path";

interface ScopeOpts {
  anyWorktree?: boolean;
  session?: string;
  call?: string;
  task?: string;
  snapshot?: string;
  to?: string;
  run?: string;
  since?: string;
  path?: string[];
}

/**
 * Runs `fn` under the store lock unless this is a dry run, which must not
 * even create a lock file. An apply that died while we waited for the lock
 * is finished first, so we never plan on a half-applied tree.
 */
function guarded<T>(ctx: Context, dryRun: boolean, what: string, fn: () => Promise<T>): Promise<T> {
  if (dryRun) return fn();
  return withLock(ctx.store, what, async () => {
    await recoverPending(ctx);
    return fn();
  });
}

export async function restore(globals: Globals, id: string, rawPaths: string[], opts: { dryRun?: boolean; force?: boolean; anyWorktree?: boolean }): Promise<Output> {
  const ctx = await open(globals);
  const paths = cwdPaths(ctx, rawPaths);
  const snap = await resolveSnapshot(ctx, id);
  if (snap.root !== ctx.root && !opts.anyWorktree) {
    throw new UnwindError("E_SCOPE_OTHER_WORKTREE", `snapshot ${snap.id} was taken in another work tree (${snap.root}), not in ${ctx.root}`, {
      hint: "restore it from that work tree, or pass --any-worktree to write it here",
    });
  }
  const dryRun = Boolean(opts.dryRun);
  const done = progress("restoring");
  const report = await guarded(ctx, dryRun, "restore", async () => {
    const now = await writeWorkTree(ctx, { scratch: dryRun });
    try {
      const cas = new Cas(join(ctx.store, "cas"));
      const cs = await snapshotChangeSet(ctx, { kind: "snapshot", id: snap.id }, snapshotSide(cas, snap), nowSide(ctx, now), paths);
      return await runUndo(ctx, cs, { dryRun, force: Boolean(opts.force), merge: false, kind: "restore" });
    } finally {
      now.dispose();
    }
  }).finally(done);
  return renderReport(report);
}

type ScopeKind = "session" | "call" | "task" | "run" | "snapshot";

/** `--since`: an ISO time, or a duration back from now (`2h`, `3d`: SPEC section 4). */
function sinceTime(text: string): string {
  if (/^\d+[smhdw]$/.test(text)) return new Date(now().getTime() - parseDuration(text)).toISOString();
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(Date.parse(text))) throw usage(`--since ${text}: not an ISO time or a duration`, "e.g. 2026-11-30T10:00:00Z, or 2h, 3d");
  return new Date(text).toISOString();
}

/** Exactly one scope, validated before anything is read. */
function pickScope(opts: ScopeOpts): ScopeKind {
  // --session beside --call narrows the call (SPEC section 4), it is not a second scope.
  const given = (["session", "call", "task", "run", "snapshot"] as const).filter((k) => opts[k] !== undefined && !(k === "session" && opts.call !== undefined));
  if (given.length === 0) throw usage("no scope given", "name one of --session, --call, --task, --snapshot or --run");
  if (given.length > 1) throw usage(`one scope at a time (got --${given.join(", --")})`);
  const kind = given[0]!;
  if (opts.to !== undefined && kind !== "snapshot") throw usage("--to goes with --snapshot");
  if (kind === "run") throw new UnwindError("E_NOT_BUILT", "--run scopes are not built yet", { hint: "run capsules are planned (SPEC section 9)" });
  if (kind === "task") taskLabel(opts.task); // a name that cannot be a task's is a usage error, not "no evidence"
  if (opts.since !== undefined) {
    if (kind === "snapshot") throw usage("--since needs a journal scope (--session, --call, --task)");
    sinceTime(opts.since); // checked before anything is read
  }
  return kind;
}

interface Resolved {
  cs: ChangeSet;
  laterWrites?: Map<RepoPath, LaterWrite>;
  interleaved?: Map<RepoPath, Interleaved>;
}

/**
 * Keeps only the entries `--path` globs select (all without any). A glob
 * that selects nothing is a usage error naming it: a typo must not read as
 * "nothing to do".
 */
function onlyPaths(cs: ChangeSet, globs: readonly string[], typed: readonly string[]): ChangeSet {
  const keep = pathMatcher(globs);
  if (!keep) return cs;
  globs.forEach((g, i) => {
    const one = pathMatcher([g])!;
    if (!cs.entries.some((e) => one(e.path))) {
      throw usage(`--path ${typed[i]} matches nothing in the ${cs.scope.kind} ${cs.scope.id}`, "globs are relative to the current directory; list the paths with: unwind changes");
    }
  });
  cs.entries = cs.entries.filter((e) => keep(e.path));
  return cs;
}

/** Resolves the scope (`kind`, as `pickScope` chose it) to a change set and hands it to `fn`; scratch trees live only as long as `fn`. */
/**
 * How a command reads a scope: "apply" (the store lock held, the work tree
 * captured for real), "dry" (nothing written anywhere) or "read" (`changes`:
 * scratch trees, but calls still open are closed for good, under the lock).
 */
type Reading = "apply" | "dry" | "read";

async function withScope(ctx: Context, kind: ScopeKind, opts: ScopeOpts, reading: Reading, fn: (r: Resolved) => Promise<Output>): Promise<Output> {
  const scratch = reading !== "apply";
  const globs = cwdGlobs(ctx, opts.path);
  const typed = opts.path ?? [];
  if (kind === "task") {
    const evidence = await taskEvidence(ctx, opts.task!);
    if (evidence.kind === "branch") {
      if (opts.since !== undefined) throw usage(`--since: task ${opts.task} is bound to branch ${evidence.binding.branch}, which has no capture times`);
      const { cs, interleaved } = await branchChangeSet(ctx, evidence.binding);
      return fn({ cs: onlyPaths(cs, globs, typed), interleaved });
    }
  }
  if (kind !== "snapshot") {
    const since = opts.since !== undefined ? sinceTime(opts.since) : undefined;
    const narrow = kind === "call" && opts.session !== undefined ? { session: opts.session } : {};
    // A dry run writes nothing; a real undo holds the lock already; `changes` takes it to close open calls.
    const close = reading === "apply" ? "locked" : reading === "read" ? "lock" : undefined;
    const r = await journalChangeSet(ctx, { kind: kind as "session" | "call" | "task", id: opts[kind]!, ...narrow }, { ...(since ? { since } : {}), paths: globs, ...(close ? { close } : {}) });
    onlyPaths(r.cs, globs, typed);
    return fn(r);
  }
  const from = await resolveSnapshot(ctx, opts.snapshot!);
  const to = opts.to ? await resolveSnapshot(ctx, opts.to) : null;
  // Taking back another worktree's snapshot would write its files here (SPEC 4, as for restore); reading it is harmless.
  const foreign = [from, to].find((x) => x && x.root !== ctx.root);
  if (foreign && reading !== "read" && !opts.anyWorktree) {
    throw new UnwindError("E_SCOPE_OTHER_WORKTREE", `snapshot ${foreign.id} was taken in another work tree (${foreign.root}), not in ${ctx.root}`, {
      hint: "undo it from that work tree, or pass --any-worktree to write it here",
    });
  }
  const now = to ? null : await writeWorkTree(ctx, { scratch });
  try {
    const cas = new Cas(join(ctx.store, "cas"));
    const cs = await snapshotChangeSet(ctx, { kind: "snapshot", id: from.id }, snapshotSide(cas, from), to ? snapshotSide(cas, to) : nowSide(ctx, now!));
    return await fn({ cs: onlyPaths(cs, globs, typed) });
  } finally {
    now?.dispose();
  }
}

export async function undo(globals: Globals, opts: ScopeOpts & { dryRun?: boolean; force?: boolean; merge?: boolean }): Promise<Output> {
  const kind = pickScope(opts); // usage errors before the store is touched
  const ctx = await open(globals);
  const dryRun = Boolean(opts.dryRun);
  const done = progress("undoing");
  return guarded(ctx, dryRun, "undo", () =>
    withScope(ctx, kind, opts, dryRun ? "dry" : "apply", async ({ cs, laterWrites, interleaved }) =>
      renderReport(
        await runUndo(ctx, cs, {
          dryRun,
          force: Boolean(opts.force),
          merge: Boolean(opts.merge),
          kind: "undo",
          ...(laterWrites ? { laterWrites } : {}),
          ...(interleaved ? { interleaved } : {}),
        }),
      ),
    ),
  ).finally(done);
}

export async function changes(globals: Globals, opts: ScopeOpts): Promise<Output> {
  const kind = pickScope(opts); // usage errors before the store is touched
  const ctx = await open(globals);
  return withScope(ctx, kind, opts, "read", async ({ cs }) => {
    const rows = cs.entries.map((e) => [
      e.change,
      showPath(e.path),
      `${short(hashOf(e.pre))} -> ${short(hashOf(e.post))}`,
      e.by.join(","),
      [e.shared ? `shared with ${e.shared.map((c) => `${c.session} ${c.call}`).join(", ")}` : "", e.unclosed ? "unclosed" : ""].filter(Boolean).join("; "),
    ]);
    const human = rows.length ? table(rows) + `\n${rows.length} path(s)` : "no changes";
    return { json: { scope: cs.scope, entries: cs.entries.map((e) => ({ ...e, ...jsonPath(e.path) })) }, human, exit: Exit.ok };
  });
}

export async function redo(globals: Globals, id: string, opts: { dryRun?: boolean }): Promise<Output> {
  const ctx = await open(globals);
  const dryRun = Boolean(opts.dryRun);
  const receipt = new Receipts(ctx.store).read(id);
  const entries: ChangeEntry[] = receipt.items
    .filter((i) => acts(i.action))
    .map((i) => ({ path: i.path, change: changeKind(i.before, i.after), pre: i.before, post: i.after, by: [receipt.id] }));
  const cs: ChangeSet = { scope: { kind: "receipt", id: receipt.id }, entries };
  const report = await guarded(ctx, dryRun, "redo", () => runUndo(ctx, cs, { dryRun, force: false, merge: false, kind: "redo" }));
  return renderReport(report);
}

function hashOf(s: State | null): string | null {
  if (!s) return null;
  if (s.kind === "unknown") return "?";
  return s.oid ?? s.sha256 ?? "?";
}

const actionColor: Record<string, Color> = { restore: "green", delete: "red", merge: "cyan", skip: "dim", conflict: "yellow" };

/** What a path holds now, named as the record names it where it is one of its states. */
function nowOf(i: UndoReport["items"][number]): string {
  const n = i.now;
  if (n.kind === "absent") return "-";
  if (n.kind === "dir") return "(a directory)";
  if (n.kind === "other") return "(not a file)";
  if (n.kind === "blocked") return `(beyond the symlink ${n.at})`;
  if (matches(n, i.post)) return short(hashOf(i.post));
  if (matches(n, i.pre)) return short(hashOf(i.pre));
  return `${short(n.sha256)}*`;
}

/** What undo makes (or would make) the path. */
function targetOf(i: UndoReport["items"][number]): string {
  if (i.action === "delete") return "-";
  if (i.action === "merge") return "(merged)";
  if (i.action === "skip") return nowOf(i);
  return i.pre ? short(hashOf(i.pre)) : "-";
}

/** What a person can do about each kind of conflict left. */
const NEXT: Partial<Record<NonNullable<UndoReport["items"][number]["reason"]>, string>> = {
  "changed-since": "changed since the scope wrote it: see it with `unwind diff`, keep the later edit with --merge, or take it back anyway with --force (the receipt keeps it)",
  "later-write": "another session wrote it later: --merge keeps their hunks, --force takes it back anyway (the receipt keeps it)",
  "concurrent-call": "another call was running when it changed, so it may be theirs: undo a scope that holds both calls, or --force",
  "not-captured": "its earlier state was never recorded: there is nothing to go back to, restore it by hand",
  toolarge: "over the size cap: recorded by hash only, never overwritten or deleted",
  symlink: "a symlink the record does not show is in the way: nothing is written through it",
  hardlink: "the file has other links: writing would change them too",
  "not-regular": "not a regular file (a directory, fifo, device or submodule): left alone",
  "missing-blob": "the stored bytes are gone: run `unwind verify`",
  "hash-mismatch": "the stored bytes are damaged: run `unwind verify`",
  "unsafe-path": "outside the root, in .git or in the store: never written",
  "io-error": "writing failed (see the detail); nothing was changed at that path",
};

export function renderReport(r: UndoReport): Output {
  const rows = r.items.map((i) => [i.action, showPath(i.path), `${nowOf(i)} -> ${targetOf(i)}`, i.reason ? `${i.reason}${i.detail ? `: ${i.detail}` : ""}` : ""]);
  const c = r.counts;
  const summary =
    `${r.dryRun ? "dry run: " : ""}${c.restore} restored, ${c.delete} deleted, ${c.merge} merged, ${c.skip} skipped, ${c.conflict} conflicts` +
    (r.receipt ? `; receipt ${r.receipt}` : r.dryRun ? "; nothing was changed" : "");
  const body = rows.length ? table(rows).split("\n").map((line, k) => paint(line, actionColor[r.items[k]!.action] ?? "dim")) : [];
  const reasons = [...new Set(r.items.filter((i) => i.action === "conflict" && i.reason).map((i) => i.reason!))];
  const next = reasons.filter((x) => NEXT[x]).map((x) => `  ${x}: ${NEXT[x]}`);
  const json = { receipt: r.receipt, scope: r.scope, dryRun: r.dryRun, items: r.items.map(({ path, action, reason, detail }) => ({ ...jsonPath(path), action, reason, ...(detail ? { detail } : {}) })), counts: r.counts };
  return { json, human: [...body, summary, ...next].join("\n"), exit: isPartial(r.items) ? Exit.partial : Exit.ok };
}
