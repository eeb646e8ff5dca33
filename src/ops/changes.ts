import { jsonPath } from "../domain/paths.js";
import type { Decision } from "../domain/policy.js";
import type { ChangeEntry, Scope } from "../domain/types.js";
import type { Context } from "../repo/context.js";
import { checkScope, withScope, type ScopeFields, type ScopeOptions } from "../scope/resolve.js";

/** The change set of SPEC section 4: what the scope changed, and who. */
export interface ChangeSetReport {
  scope: Scope;
  /** `path` with bytes that are not UTF-8 as U+FFFD, and then `pathBytes`: the path's bytes in base64. */
  entries: (Omit<ChangeEntry, "path"> & { path: string; pathBytes?: string; decision?: Decision; reversible?: boolean; why?: string | null })[];
}

/** What a scope changed. Calls still open are closed first, for good (under the store lock); the work tree is not written. */
export async function changes(ctx: Context, scope: ScopeFields, opts: ScopeOptions = {}): Promise<ChangeSetReport> {
  // A run's entries carry its policy decision and whether each can be taken back (SPEC section 9).
  return withScope(ctx, checkScope(scope), opts, "read", async ({ cs, decisions }) => ({
    scope: cs.scope,
    // Object.assign, not a leading spread: see src/plan/planner.ts.
    entries: cs.entries.map((e) => Object.assign({}, e, jsonPath(e.path), decisions?.get(e.path))),
  }));
}
