import { isAbsolute, resolve } from "node:path";
import { Exit, usage } from "../../domain/errors.js";
import { insideRoot } from "../../domain/paths.js";
import type { RevertCheckResult } from "../../ops/revert-check.js";
import type { Globals } from "../globals.js";
import { paint, showJsonPath, table, when, type Output } from "../render.js";
import { cwdDirs, cwdGlobs, openFor, realCwd } from "./common.js";

const shown = (prefixes: readonly string[]) => prefixes.map((p) => p || ".").join(", ");

export async function capture(globals: Globals, opts: { key: string; prefix?: string[] }): Promise<Output> {
  if (!opts.prefix?.length) throw usage("baseline capture needs at least one --prefix", "e.g. --prefix tests (the files the stage should not need to touch)");
  const u = await openFor(globals);
  const r = await u.baselineCapture(opts.key, { prefixes: cwdDirs(u.root, opts.prefix, "--prefix") });
  const lines = [
    r.created
      ? `baseline ${r.key}: captured ${r.paths} path(s) under ${shown(r.prefixes)}`
      : `baseline ${r.key}: ${r.added} path(s) seen for the first time captured, ${r.kept} kept as first seen (never captured again); ${r.paths} path(s) under ${shown(r.prefixes)}`,
  ];
  if (r.excluded.length) {
    lines.push(`not captured: ${r.excluded.length} path(s) a session labelled with task ${r.key} wrote (an interrupted attempt's own work):`);
    for (const e of r.excluded) lines.push(`  ${showJsonPath(e)}`);
  }
  return { json: r, human: lines.join("\n"), exit: Exit.ok };
}

export async function list(globals: Globals): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.baselines();
  const rows = r.baselines.map((b) => [b.key, shown(b.prefixes), String(b.paths), String(b.captures), when(b.firstAt), when(b.lastAt)]);
  return { json: r, human: rows.length ? table([["KEY", "PREFIXES", "PATHS", "CAPTURES", "FIRST", "LAST"], ...rows], [], { fit: [1] }) : "no baselines", exit: Exit.ok };
}

export async function revertCheck(
  globals: Globals,
  command: string[],
  opts: { key: string; prefix?: string[]; grant?: string[]; link?: string[]; timeout?: string; keep?: boolean; out?: string },
): Promise<Output> {
  if (!opts.prefix?.length) throw usage("revert-check needs at least one --prefix", "the prefix the baseline was captured for, e.g. --prefix tests");
  if (command.length === 0) throw usage("no test command given", "put the suite after --, e.g. unwind revert-check --key K --prefix tests -- npm test");
  const u = await openFor(globals);
  const r = await u.revertCheck({
    key: opts.key,
    prefixes: cwdDirs(u.root, opts.prefix, "--prefix"),
    grants: cwdGlobs(u.root, opts.grant, "--grant").paths,
    links: cwdDirs(u.root, opts.link, "--link"),
    timeout: opts.timeout,
    keep: opts.keep,
    out: opts.out === undefined ? undefined : isAbsolute(opts.out) ? opts.out : resolve(realCwd(), opts.out),
    outName: opts.out,
    command,
    cwd: insideRoot(u.root, realCwd()) ?? "",
  });
  return { json: r, human: renderCheck(r), exit: !r.ran ? Exit.scope : r.decision === "not-permitted" ? Exit.partial : Exit.ok };
}

/** One line with the decision and why, in the words of the check; then the edits, what was granted and the suite's last lines. */
export function renderCheck(r: RevertCheckResult): string {
  const paths = r.edits.map((e) => e.path).join(", ");
  const where = shown(r.prefixes);
  const head = !r.ran
    ? paint(`could not decide (${r.reason}): ${r.message}`, "red")
    : r.decision === "no-edits"
      ? `no-edits: nothing under ${where} differs from baseline ${r.key}${r.granted.length ? ` but what --grant allows` : ""}`
      : r.decision === "permitted"
        ? paint(`permitted: edits under ${where} were needed: the suite fails (exit ${r.testExitCode}) with ${paths} reverted`, "green")
        : paint(`not-permitted: edits under ${where} were not needed: the suite passes with ${paths} reverted`, "yellow");
  const lines = [head];
  if (r.edits.length) lines.push(table(r.edits.map((e) => [`  ${e.action}`, showJsonPath(e), e.change])));
  if (r.granted.length) lines.push(table(r.granted.map((e) => ["  granted", showJsonPath(e), e.change])));
  if (r.output) lines.push(paint("the suite's last lines:", "dim"), ...r.output.split("\n").map((l) => `  | ${l}`));
  lines.push(paint(`result ${r.id}${r.worktree ? `; worktree kept at ${r.worktree}` : ""}`, "dim"));
  return lines.join("\n");
}
