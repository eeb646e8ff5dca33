import { usage } from "../domain/errors.js";
import { kindShapes, SCOPE_KEYS as KEYS, type ScopeFields } from "../scope/kinds.js";
import type { ChangesOptions } from "./changes.js";
import type { RedoOptions, RestoreOptions, UndoOptions } from "./undo.js";

/**
 * What a JavaScript caller may hand the library, key by key (SPEC section
 * 11). A field the library does not know is a usage error, never ignored:
 * `undo({ session, expect })`, the digest inside the scope instead of the
 * options, applied the undo unchecked before. The command line, the UI and
 * the MCP server check their own inputs as strictly (src/ui/api.ts, zod's
 * strict objects); this is the same rule for code.
 */

/** Every key of `T`, listed: a key added to the type and not here fails to compile. */
const keysOf =
  <T>() =>
  <const K extends readonly (keyof T)[]>(keys: K & ([Exclude<keyof T, K[number]>] extends [never] ? unknown : { missing: Exclude<keyof T, K[number]> })) =>
    keys as readonly string[];

// The scope's keys come from the one table of kinds; listing them here again is the compile-time check that the table
// and the type agree.
export const SCOPE_KEYS = keysOf<ScopeFields>()(KEYS as ["session", "call", "fromCall", "task", "snapshot", "to", "run", "baseline"]);
const CHANGES_KEYS = keysOf<ChangesOptions>()(["since", "paths", "pathNames", "anyWorktree", "prefixes", "safeOnly", "patch", "patchRange"]);
const UNDO_KEYS = keysOf<UndoOptions>()(["since", "paths", "pathNames", "anyWorktree", "prefixes", "safeOnly", "dryRun", "force", "merge", "expect", "hunks", "progress", "by", "patch"]);
const RESTORE_KEYS = keysOf<RestoreOptions>()(["paths", "dryRun", "force", "expect", "anyWorktree", "progress", "by"]);
const REDO_KEYS = keysOf<RedoOptions>()(["dryRun", "expect", "anyWorktree", "progress", "by"]);

const SCOPE_HINT = `a scope is one of ${kindShapes()}; options (expect, force, merge, paths, since, ...) go in the second argument`;

function only<T>(o: T, allowed: readonly string[], what: string, hint: string): T {
  if (o === undefined) return o;
  if (typeof o !== "object" || o === null || Array.isArray(o)) throw usage(`${what}: expected an object`, hint);
  for (const k of Object.keys(o)) if (!allowed.includes(k)) throw usage(`${what}: unknown field '${k}'`, hint);
  return o;
}

export const checkScopeInput = <T>(s: T) => only(s, SCOPE_KEYS, "scope", SCOPE_HINT);
export const checkChangesOptions = <T>(o: T) => only(o, CHANGES_KEYS, "changes options", `known: ${CHANGES_KEYS.join(", ")}`);
export const checkUndoOptions = <T>(o: T, what = "undo options") => only(o, UNDO_KEYS, what, `known: ${UNDO_KEYS.join(", ")}`);
export const checkPlanOptions = <T>(o: T) => {
  const keys = UNDO_KEYS.filter((k) => k !== "dryRun" && k !== "expect");
  return only(o, keys, "plan options", `known: ${keys.join(", ")} (apply a plan with undo(scope, { expect: plan }))`);
};
export const checkRestoreOptions = <T>(o: T) => only(o, RESTORE_KEYS, "restore options", `known: ${RESTORE_KEYS.join(", ")}`);
export const checkRedoOptions = <T>(o: T) => only(o, REDO_KEYS, "redo options", `known: ${REDO_KEYS.join(", ")}`);
