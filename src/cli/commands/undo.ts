import { join, relative } from "node:path";
import { acts } from "../../domain/actions.js";
import { callName } from "../../domain/call-ref.js";
import { Exit, usage } from "../../domain/errors.js";
import type { State, UncapturedCall } from "../../domain/types.js";
import type { ChangeSetReport } from "../../ops/changes.js";
import type { NowState, ReportItem, UndoReport } from "../../ops/take-back.js";
import { checkScope, checkScopeOptions, type ScopeFields } from "../../scope/resolve.js";
import { checkHunks } from "../../ops/undo.js";
import { shortNames } from "../../ops/sessions.js";
import type { Globals } from "../globals.js";
import { paint, progress, short, showJsonPath, showPath, table, type Color, type Output } from "../render.js";
import { cwdDirs, cwdGlobs, cwdPaths, openFor, realCwd } from "./common.js";
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

/** The scope and its narrowing as the person typed them (ids as given: they resolved), for hints that repeat the command. */
function typedScope(opts: ScopeFlags & { safeOnly?: boolean }): string[] {
  const flags: [string, string | undefined][] = [
    ["--session", opts.session],
    ["--call", opts.call],
    ["--from-call", opts.fromCall],
    ["--task", opts.task],
    ["--snapshot", opts.snapshot],
    ["--to", opts.to],
    ["--run", opts.run],
    ["--baseline", opts.baseline],
    ["--since", opts.since],
  ];
  return [
    ...flags.flatMap(([f, v]) => (v === undefined ? [] : [f, v])),
    ...(opts.prefix ?? []).flatMap((p) => ["--prefix", p]),
    ...(opts.anyWorktree ? ["--any-worktree"] : []),
    ...(opts.safeOnly ? ["--safe-only"] : []),
  ];
}

/** A root-relative path as the current directory names it (what --path and restore's paths take). */
function fromHere(root: string): (path: string) => string {
  const cwd = realCwd();
  return (path) => relative(cwd, join(root, path)) || ".";
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
    const retry: Retry = { command: "undo", args: typedScope(opts), paths: opts.path ?? [], here: fromHere(u.root), merged: Boolean(opts.merge) };
    return opts.patch ? renderPlanPatch(r, retry) : renderReport(r, opts, retry);
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
    const args = [typeof which === "string" ? which : r.scope.id, ...(opts.anyWorktree ? ["--any-worktree"] : [])];
    return renderReport(r, opts, { command: "restore", args, paths: rawPaths, here: fromHere(u.root), merged: false });
  } finally {
    line.done();
  }
}

export async function redo(globals: Globals, id: string | undefined, opts: ReportFlags & { last?: boolean; anyWorktree?: boolean }): Promise<Output> {
  const which = idOrLast(id, opts.last, "receipt");
  const u = await openFor(globals);
  const line = progress(opts.dryRun ? "planning" : "redoing");
  try {
    const r = await u.redo(which, { dryRun: opts.dryRun, expect: opts.expect, anyWorktree: opts.anyWorktree, progress: line.tick, by: CLI });
    return renderReport(r, opts, { command: "redo", args: [], paths: [], here: fromHere(u.root), merged: false });
  } finally {
    line.done();
  }
}

export async function changes(globals: Globals, opts: ScopeFlags & { patch?: boolean }): Promise<Output> {
  const scope = scopeOf(opts);
  const u = await openFor(globals);
  const cs = await u.changes(scope, { ...cwdGlobs(u.root, opts.path), since: opts.since, anyWorktree: opts.anyWorktree, prefixes: cwdDirs(u.root, opts.prefix, "--prefix"), patch: opts.patch });
  // Short names need every session's and call's id (the record index's, or the journal's): only the human list shows them.
  const human = globals.json ? "" : opts.patch ? renderPatch(cs) : [renderChanges(cs, await shortNames(u.context)), ...uncapturedLines(cs.uncaptured, "not in this list")].join("\n");
  return { json: cs, human, exit: Exit.ok };
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
function renderPlanPatch(r: UndoReport, retry: Retry): Output {
  const notes = [
    ...(r.notText ?? []).map((p) => `# ${showPath(p)}: ${r.items.find((i) => i.path === p)?.action ?? "written"}, not text: no patch`),
    ...r.items.filter((i) => !acts(i.action)).map((i) => `# ${i.action} ${showJsonPath(i)}${i.reason ? `: ${i.reason}${i.detail ? ` (${i.detail})` : ""}` : ""}`),
  ];
  const summary = renderReport(r, { quiet: true }, retry)
    .human.split("\n")
    .map((l) => `# ${l.trimStart()}`);
  return { json: r, human: [r.patch?.trimEnd() ?? "", ...notes, ...summary].filter(Boolean).join("\n"), exit: r.partial ? Exit.partial : Exit.ok };
}

/** The change set as a table; `name` gives a writer's short id (`sessions` and `log` show the same). */
function renderChanges(cs: ChangeSetReport, name: (id: string) => string): string {
  // A run's entries lead with the policy's decision (SPEC section 9).
  const rows = cs.entries.map((e) => [
    ...(e.decision ? [e.decision] : []),
    e.change,
    showJsonPath(e),
    `${short(hashOf(e.pre))} -> ${short(hashOf(e.post))}`,
    e.by.map(name).join(","),
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

/** What each kind of conflict means; the commands that act on it follow, whole (`hintCommands`). */
const NEXT: Partial<Record<NonNullable<ReportItem["reason"]>, string>> = {
  "changed-since": "changed since the scope wrote it",
  "later-write": "another session wrote it later",
  "concurrent-call": "another call was running when it changed, so it may be theirs",
  "not-captured": "its earlier state was never recorded: there is nothing to go back to, restore it by hand",
  toolarge: "over the size cap: recorded by hash only, never overwritten or deleted",
  symlink: "a symlink the record does not show is in the way: nothing is written through it",
  hardlink: "the file has other links: writing would change them too",
  "not-regular": "not a regular file (a directory, fifo, device or submodule): left alone",
  "missing-blob": "the stored bytes are gone",
  "hash-mismatch": "the stored bytes are damaged",
  "unsafe-path": "outside the root, in .git or in the store: never written",
  "ignored-path": "git ignores it here and the record was fetched: a fetched record never writes where git status cannot show it; write it by hand if you want it",
  "io-error": "writing failed (see the detail); nothing was changed at that path",
};

/**
 * How the command that made a report was typed, so a hint can be a whole
 * command that works as written: the same scope and narrowing, with the
 * conflicting paths as `--path` (relative to the current directory).
 */
export interface Retry {
  command: "undo" | "restore" | "redo";
  /** The scope and its narrowing as typed: `--session X --since 2h`, a restore's snapshot id. */
  args: string[];
  /** The --path globs as typed, for when the conflicting paths are too many to name. */
  paths: readonly string[];
  /** A root-relative path as the current directory names it. */
  here: (path: string) => string;
  /** A merge asked for: a --merge that conflicted is not suggested again. */
  merged: boolean;
}

/** An argument as a POSIX shell takes it back unchanged. */
export function shellArg(a: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

/** The conflicting paths of one reason as --path arguments: named when few and free of glob characters, else the --path globs as typed. */
function narrowing(r: UndoReport, reason: string, retry: Retry): string[] {
  const paths = r.items.filter((i) => i.action === "conflict" && i.reason === reason && i.pathBytes === undefined).map((i) => i.path);
  if (paths.length > 0 && paths.length <= 3 && !paths.some((p) => /[*?[\]\\]/.test(p))) return paths.flatMap((p) => ["--path", retry.here(p)]);
  return retry.paths.flatMap((p) => ["--path", p]);
}

/**
 * The commands that act on one kind of conflict, each whole and as it
 * works: keep the later edits (--merge, never again after a --merge that
 * conflicted), take it back anyway (--force), see the change.
 */
export function hintCommands(reason: NonNullable<ReportItem["reason"]>, r: UndoReport, retry: Retry): [string, string][] {
  if (reason === "missing-blob" || reason === "hash-mismatch") return [["check the store", "unwind verify"]];
  if (reason !== "changed-since" && reason !== "later-write" && reason !== "concurrent-call") return [];
  const line = (...a: string[]) => ["unwind", ...a].map(shellArg).join(" ");
  if (retry.command === "redo") return [];
  if (retry.command === "restore") {
    const paths = r.items.filter((i) => i.action === "conflict" && i.reason === reason && i.pathBytes === undefined).map((i) => retry.here(i.path));
    const id = retry.args[0]!;
    return [
      ["see what changed since the snapshot", line("diff", id, "--patch")],
      ["restore anyway (the receipt keeps it)", line("restore", ...retry.args, "--force", ...(paths.length > 0 && paths.length <= 3 ? ["--", ...paths] : []))],
    ];
  }
  const narrow = narrowing(r, reason, retry);
  // changes lists a run's paths whole: --safe-only is undo's alone.
  const out: [string, string][] = [["see the scope's change", line("changes", ...retry.args.filter((a) => a !== "--safe-only"), ...narrow, "--patch")]];
  if (reason !== "concurrent-call" && !retry.merged) out.push(["keep the later edits, take back the rest", line("undo", ...retry.args, ...narrow, "--merge")]);
  out.push(["take it back anyway (the receipt keeps what is there)", line("undo", ...retry.args, ...narrow, "--force")]);
  return out;
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
export function renderReport(r: UndoReport, opts: { quiet?: boolean; all?: boolean } = {}, retry?: Retry): Output {
  const c = r.counts;
  const covers = r.scope.kind === "from-call" && r.scope.calls !== undefined ? `call ${r.scope.id} and the ${r.scope.calls - 1} after it: ` : "";
  // Two lines, each within 80 columns: the counts, then the receipt (or the plan's digest) on its own.
  const summary = [
    `${r.dryRun ? "dry run: " : ""}${covers}${c.restore} restored, ${c.delete} deleted, ${c.merge} merged, ${c.skip} skipped${retainedNote(r)}, ${c.conflict} conflicts`,
    r.receipt ? `receipt ${r.receipt}` : r.dryRun ? `nothing was changed; to apply exactly this plan: --expect ${r.plan.slice(0, 12)}` : "nothing was changed, so no receipt",
  ].join("\n");
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
  const next = reasons.filter((x) => NEXT[x]).flatMap((x) => [`  ${x}: ${NEXT[x]}`, ...(retry ? hintCommands(x, r, retry) : []).map(([what, cmd]) => `    ${what}:\n      ${cmd}`)]);
  return {
    json: r,
    human: [...body, ...cutLine, summary, ...uncapturedLines(r.uncaptured, `${r.dryRun ? "would not be" : "not"} taken back`)].join("\n") + [...next].map((l) => `\n${l}`).join(""),
    exit: r.partial ? Exit.partial : Exit.ok,
  };
}

/** Calls no capture saw (imported shell calls): named, never dropped silently (docs/import.md). */
function uncapturedLines(calls: readonly UncapturedCall[] | undefined, what: string): string[] {
  if (!calls?.length) return [];
  return [
    paint(`${calls.length} imported call(s) ${what}: no capture saw what they changed;`, "yellow"),
    paint("check by hand what they did:", "yellow"),
    ...calls.map((c) => `  not-captured  ${c.tool} ${c.call}${c.command !== undefined ? `: ${c.command.replace(/\s+/g, " ").slice(0, 80)}` : ""}`),
  ];
}
