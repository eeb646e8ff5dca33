import { acts } from "../../domain/actions.js";
import { callName } from "../../domain/call-ref.js";
import { Exit, usage } from "../../domain/errors.js";
import type { State } from "../../domain/types.js";
import type { ChangeSetReport } from "../../ops/changes.js";
import type { NowState, ReportItem, UndoReport } from "../../ops/take-back.js";
import { checkScope, checkScopeOptions, type ScopeFields } from "../../scope/resolve.js";
import { checkHunks } from "../../ops/undo.js";
import type { Globals } from "../globals.js";
import { paint, progress, short, showJsonPath, showPath, table, type Color, type Output } from "../render.js";
import { cwdDirs, cwdGlobs, cwdPaths, openFor } from "./common.js";
import { idOrLast } from "../../domain/ids.js";

interface ScopeFlags extends ScopeFields {
  anyWorktree?: boolean;
  prefix?: string[];
  since?: string;
  path?: string[];
}

interface ReportFlags {
  dryRun?: boolean;
  force?: boolean;
  expect?: string;
  quiet?: boolean;
  all?: boolean;
}

/** What a receipt records of who started it (SPEC section 13). */
const CLI = { client: "cli" } as const;

/** The scope and its options, checked before the store is touched: a usage error changes nothing and reads nothing. */
function scopeOf(opts: ScopeFlags & { safeOnly?: boolean }): ScopeFields {
  const { session, call, fromCall, task, snapshot, to, run, baseline } = opts;
  const scope = { session, call, fromCall, task, snapshot, to, run, baseline };
  checkScopeOptions(checkScope(scope), { since: opts.since, safeOnly: opts.safeOnly });
  // The prefixes themselves are relative to the current directory and checked once the root is known.
  if (opts.prefix?.length && baseline === undefined) throw usage("--prefix goes with --baseline", "e.g. unwind changes --baseline K --prefix tests");
  return scope;
}

/** `--hunk 1,3` as numbers; anything else is left for the library's check to name. */
function hunkList(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  return text.split(",").map((t) => (/^\d+$/.test(t.trim()) ? Number(t.trim()) : Number.NaN));
}

export async function undo(globals: Globals, opts: ScopeFlags & ReportFlags & { merge?: boolean; safeOnly?: boolean; hunk?: string; patch?: boolean }): Promise<Output> {
  const scope = scopeOf(opts);
  const hunks = hunkList(opts.hunk);
  checkHunks({ hunks, paths: opts.path });
  const u = await openFor(globals);
  const line = progress(opts.dryRun ? "planning" : "undoing");
  try {
    const r = await u.undo(scope, {
      ...cwdGlobs(u.root, opts.path),
      since: opts.since,
      anyWorktree: opts.anyWorktree,
      prefixes: cwdDirs(u.root, opts.prefix, "--prefix"),
      dryRun: opts.dryRun,
      force: opts.force,
      merge: opts.merge,
      safeOnly: opts.safeOnly,
      expect: opts.expect,
      hunks,
      patch: opts.patch,
      progress: line.tick,
      by: CLI,
    });
    return opts.patch ? renderPlanPatch(r) : renderReport(r, opts);
  } finally {
    line.done();
  }
}

export async function restore(globals: Globals, id: string | undefined, rawPaths: string[], opts: ReportFlags & { anyWorktree?: boolean; last?: boolean }): Promise<Output> {
  // `restore --last -- PATH`: with --last the first operand is a path, not an id.
  if (opts.last && id !== undefined) [id, rawPaths] = [undefined, [id, ...rawPaths]];
  const which = idOrLast(id, opts.last, "snapshot");
  const u = await openFor(globals);
  const line = progress(opts.dryRun ? "planning" : "restoring");
  try {
    const r = await u.restore(which, { paths: cwdPaths(u.root, rawPaths), dryRun: opts.dryRun, force: opts.force, expect: opts.expect, anyWorktree: opts.anyWorktree, progress: line.tick, by: CLI });
    return renderReport(r, opts);
  } finally {
    line.done();
  }
}

export async function redo(globals: Globals, id: string | undefined, opts: ReportFlags & { last?: boolean; anyWorktree?: boolean }): Promise<Output> {
  const which = idOrLast(id, opts.last, "receipt");
  const u = await openFor(globals);
  const line = progress(opts.dryRun ? "planning" : "redoing");
  try {
    return renderReport(await u.redo(which, { dryRun: opts.dryRun, expect: opts.expect, anyWorktree: opts.anyWorktree, progress: line.tick, by: CLI }), opts);
  } finally {
    line.done();
  }
}

export async function changes(globals: Globals, opts: ScopeFlags & { patch?: boolean }): Promise<Output> {
  const scope = scopeOf(opts);
  const u = await openFor(globals);
  const cs = await u.changes(scope, { ...cwdGlobs(u.root, opts.path), since: opts.since, anyWorktree: opts.anyWorktree, prefixes: cwdDirs(u.root, opts.prefix, "--prefix"), patch: opts.patch });
  return { json: cs, human: opts.patch ? renderPatch(cs) : renderChanges(cs), exit: Exit.ok };
}

/**
 * The change set as git's patch. Each hunk header ends with `hunk N`, its
 * number for `undo --path P --hunk N` (git reads what follows the second
 * `@@` as a heading, so `git apply -R` still takes it); what is no text is
 * named in a comment line, which git apply skips.
 */
function renderPatch(cs: ChangeSetReport): string {
  const files = (cs.patch ?? "").split(/(?=^diff --git )/m).map((file) => {
    let n = 0;
    return file.replace(/^(@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@).*$/gm, (_h, head: string) => `${head} hunk ${++n}`);
  });
  const notText = cs.entries.filter((e) => e.hunks === null).map((e) => `# ${showJsonPath(e)}: ${e.change}, not text: no patch`);
  return [files.join("").trimEnd(), ...notText].filter(Boolean).join("\n") || "no changes";
}

/**
 * A dry run as the patch it would make (`git apply` takes it), then what
 * the patch cannot show as `#` lines, which git apply skips: paths that are
 * no text, every skip and conflict, and the summary with the digest.
 */
function renderPlanPatch(r: UndoReport): Output {
  const notes = [
    ...(r.notText ?? []).map((p) => `# ${showPath(p)}: ${r.items.find((i) => i.path === p)?.action ?? "written"}, not text: no patch`),
    ...r.items.filter((i) => !acts(i.action)).map((i) => `# ${i.action} ${showJsonPath(i)}${i.reason ? `: ${i.reason}${i.detail ? ` (${i.detail})` : ""}` : ""}`),
  ];
  const summary = renderReport(r, { quiet: true })
    .human.split("\n")
    .map((l) => `# ${l.trimStart()}`);
  return { json: r, human: [r.patch?.trimEnd() ?? "", ...notes, ...summary].filter(Boolean).join("\n"), exit: r.partial ? Exit.partial : Exit.ok };
}

function renderChanges(cs: ChangeSetReport): string {
  // A run's entries lead with the policy's decision (SPEC section 9).
  const rows = cs.entries.map((e) => [
    ...(e.decision ? [e.decision] : []),
    e.change,
    showJsonPath(e),
    `${short(hashOf(e.pre))} -> ${short(hashOf(e.post))}`,
    e.by.join(","),
    [e.shared ? `shared with ${e.shared.map(callName).join(", ")}` : "", e.unclosed ? "unclosed" : "", e.reversible === false ? `cannot be taken back: ${e.why}` : ""].filter(Boolean).join("; "),
  ]);
  return rows.length ? table(rows) + `\n${rows.length} path(s)` : "no changes";
}

function hashOf(s: State | null): string | null {
  if (!s) return null;
  if (s.kind === "unknown") return "?";
  return s.oid ?? s.sha256 ?? "?";
}

const actionColor: Record<string, Color> = { restore: "green", delete: "red", merge: "cyan", skip: "dim", conflict: "yellow" };

/** Whether what the path holds is the record's state `s` (content and, for files, mode). */
function holds(n: NowState, s: State | null): boolean {
  if (!s || (n.kind !== "file" && n.kind !== "symlink") || n.kind !== s.kind) return false;
  if (s.sha256 ? s.sha256 !== n.sha256 : !(s.oid && n.oid === s.oid)) return false;
  return n.kind !== "file" || s.mode === undefined || s.mode === n.mode;
}

/** What a path holds now, named as the record names it where it is one of its states. */
function nowOf(i: ReportItem): string {
  const n = i.now;
  if (n.kind === "absent") return "-";
  if (n.kind === "dir") return "(a directory)";
  if (n.kind === "other") return "(not a file)";
  if (n.kind === "blocked") return n.file ? `(under the file ${n.at})` : `(beyond the symlink ${n.at})`;
  if (holds(n, i.post)) return short(hashOf(i.post));
  if (holds(n, i.pre)) return short(hashOf(i.pre));
  return `${short(n.oid ?? n.sha256)}*`;
}

/** What undo makes (or would make) the path. */
function targetOf(i: ReportItem): string {
  if (i.action === "delete") return "-";
  if (i.action === "merge") return "(merged)";
  if (i.action === "skip") return nowOf(i);
  return i.pre ? short(hashOf(i.pre)) : "-";
}

/** `changed-since` where --merge itself conflicted: suggesting --merge again would be no help. */
const MERGE_OVERLAPS =
  "changed since the scope wrote it: the merge overlaps the later edit: take back the hunks it does not touch (--path P --hunk N), or take it back anyway with --force (the receipt keeps it)";

/** What a person can do about each kind of conflict left. */
const NEXT: Partial<Record<NonNullable<ReportItem["reason"]>, string>> = {
  "changed-since": "changed since the scope wrote it: keep the later edit with --merge (or take back single hunks: --path P --hunk N), or take it back anyway with --force (the receipt keeps it)",
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
  "ignored-path": "git ignores it here and the record was fetched: a fetched record never writes where git status cannot show it; write it by hand if you want it",
  "io-error": "writing failed (see the detail); nothing was changed at that path",
};

/**
 * The hint for a kind of conflict, with the command that shows what the
 * scope changed (`unwind diff` takes snapshots only). Where --merge itself
 * conflicted, suggesting --merge again would be no help.
 */
function nextFor(reason: NonNullable<ReportItem["reason"]>, r: UndoReport): string {
  const mergeFailed = reason === "changed-since" && r.items.some((i) => i.reason === reason && i.detail === "the three-way merge conflicts");
  const text = mergeFailed ? MERGE_OVERLAPS : NEXT[reason]!;
  if (reason !== "changed-since" && reason !== "later-write") return text;
  const see = r.scope.kind === "snapshot" ? `unwind diff ${r.scope.id}` : r.scope.kind === "receipt" ? "" : `unwind changes --${r.scope.kind} ${r.scope.id} --patch`;
  return see ? `${text}; see the scope's change with: ${see}` : text;
}

/** How many of the skips a run's --safe-only kept on purpose. */
function retainedNote(r: UndoReport): string {
  const n = r.items.filter((i) => i.action === "skip" && i.reason === "retained").length;
  return n ? ` (${n} retained)` : "";
}

/** Lines of paths shown before the rest is summed up (every conflict is always shown). */
const SHOWN = 100;

/**
 * One line per path (action, path, now -> target, reason) and a summary. A
 * long report shows every conflict and the first of the rest; `quiet`
 * shows only the summary; `all` every path.
 */
export function renderReport(r: UndoReport, opts: { quiet?: boolean; all?: boolean } = {}): Output {
  const c = r.counts;
  const covers = r.scope.kind === "from-call" && r.scope.calls !== undefined ? `call ${r.scope.id} and the ${r.scope.calls - 1} after it: ` : "";
  const summary =
    `${r.dryRun ? "dry run: " : ""}${covers}${c.restore} restored, ${c.delete} deleted, ${c.merge} merged, ${c.skip} skipped${retainedNote(r)}, ${c.conflict} conflicts` +
    (r.receipt
      ? `; receipt ${r.receipt}`
      : r.dryRun
        ? `; nothing was changed; plan ${r.plan.slice(0, 12)} (apply exactly it with --expect ${r.plan.slice(0, 12)})`
        : "; nothing was changed, so no receipt");
  let shown = opts.quiet ? [] : r.items;
  if (!opts.all && !opts.quiet && shown.length > SHOWN) {
    let others = SHOWN;
    shown = r.items.filter((i) => i.action === "conflict" || others-- > 0);
  }
  const rows = shown.map((i) => [i.action, showJsonPath(i), `${nowOf(i)} -> ${targetOf(i)}`, i.reason ? `${i.reason}${i.detail ? `: ${i.detail}` : ""}` : ""]);
  const body = rows.length
    ? table(rows)
        .split("\n")
        .map((line, k) => paint(line, actionColor[shown[k]!.action] ?? "dim"))
    : [];
  const rest = r.items.length - shown.length;
  const cutLine = rest > 0 && !opts.quiet ? [paint(`… and ${rest} more path(s) (--all lists every one, --json gives them all)`, "dim")] : [];
  const reasons = [...new Set(r.items.filter((i) => i.action === "conflict" && i.reason).map((i) => i.reason!))];
  const next = reasons.filter((x) => NEXT[x]).map((x) => `  ${x}: ${nextFor(x, r)}`);
  return { json: r, human: [...body, ...cutLine, summary, ...next].join("\n"), exit: r.partial ? Exit.partial : Exit.ok };
}
