import type { TreeResult } from "../capture/snapshot.js";
import { tooLargeState } from "../capture/toolarge.js";
import { UnwindError, usage } from "../domain/errors.js";
import type { ChangeSet, State } from "../domain/types.js";
import { splitZ } from "../git/git.js";
import type { Context } from "../repo/context.js";
import { readBaseline, type Baseline } from "../store/baselines.js";
import { baselineEntries, underPrefix, uncovered } from "./fold/baseline-diff.js";
import { stateFromTree } from "./tree.js";

/** Baseline `key`, or a refusal naming it (exit 3): nothing to compare against is not "no edits". */
export function loadBaseline(ctx: Context, key: string): Baseline {
  const b = readBaseline(ctx.store, key);
  if (!b) {
    throw new UnwindError("E_SCOPE_UNKNOWN", `no baseline '${key}'`, {
      hint: `capture it when the stage starts: unwind baseline capture --key ${key} --prefix DIR; list them with: unwind baseline list`,
    });
  }
  return b;
}

/**
 * The prefixes a caller asks about (default: all the baseline's). One the
 * baseline does not cover was never captured, so every file under it would
 * read as added and be deleted by an undo: refused, naming it.
 */
export function governedPrefixes(b: Baseline, asked: readonly string[] | undefined): string[] {
  if (!asked || asked.length === 0) return [...b.prefixes];
  const out = uncovered(asked, b.prefixes);
  if (out.length > 0) {
    throw new UnwindError("E_SCOPE_UNKNOWN", `baseline '${b.key}' does not cover ${out.map((p) => `'${p || "."}'`).join(", ")} (it covers ${b.prefixes.map((p) => `'${p || "."}'`).join(", ")})`, {
      hint: `capture the prefix into it first: unwind baseline capture --key ${b.key} --prefix ${out[0] || "."}`,
    });
  }
  return [...asked];
}

/** Root-relative prefixes as given to the library: normalized (`./tests/` as `tests`, `.` as the whole tree) and checked. */
export function checkPrefixes(raw: readonly string[]): string[] {
  return raw.map((p) => {
    if (p.includes("\0")) throw usage(`--prefix ${p}: holds a NUL byte`);
    if (p.startsWith("/")) throw usage(`--prefix ${p}: absolute`, "give prefixes relative to the work tree's root");
    const parts = p.split("/").filter((x) => x !== "" && x !== ".");
    if (parts.includes("..")) throw usage(`--prefix ${p}: leaves the work tree`, "give prefixes inside the work tree");
    if (parts.some((x) => x.toLowerCase() === ".git" || x === ".unwind")) throw usage(`--prefix ${p}: inside .git or a store`, "unwind never captures or writes there");
    return parts.join("/");
  });
}

/** What each non-ignored path under `prefixes` holds in the tree `now` (files over the size cap by size and hash). */
export async function statesUnder(ctx: Context, now: Pick<TreeResult, "tree" | "env" | "toolargeFiles">, prefixes: readonly string[]): Promise<Map<string, State>> {
  const args = ["--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", now.tree];
  if (!prefixes.includes("")) args.push("--", ...prefixes);
  const r = await ctx.git(args, { env: now.env });
  const out = new Map<string, State>();
  for (const rec of splitZ(r.stdout)) {
    const tab = rec.indexOf("\t");
    const [mode, , oid] = rec.slice(0, tab).split(" ");
    const s = stateFromTree(mode!, oid!);
    const path = rec.slice(tab + 1);
    if (s && underPrefix(path, prefixes)) out.set(path, s);
  }
  for (const [path, big] of Object.entries(now.toolargeFiles)) if (underPrefix(path, prefixes)) out.set(path, tooLargeState(big));
  return out;
}

/** The change set of `--baseline K`: each governed path from its baseline state to what the tree `now` holds. */
export async function baselineChangeSet(ctx: Context, b: Baseline, prefixes: readonly string[], now: Pick<TreeResult, "tree" | "env" | "toolargeFiles">): Promise<ChangeSet> {
  const states = await statesUnder(ctx, now, prefixes);
  return { scope: { kind: "baseline", id: b.key }, entries: baselineEntries(b.entries, states, prefixes, b.key) };
}
