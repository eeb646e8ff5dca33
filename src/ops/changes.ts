import { gitPatch, hunksOf, isText, type Hunk } from "../domain/hunks.js";
import { jsonPath } from "../domain/paths.js";
import type { Decision } from "../domain/policy.js";
import type { ChangeEntry, Scope, State, UncapturedCall } from "../domain/types.js";
import type { Context } from "../repo/context.js";
import { checkScope, withScope, type ScopeFields, type ScopeOptions } from "../scope/resolve.js";
import { Cas } from "../store/cas.js";
import { ContentReader } from "../store/content.js";
import { fileForm } from "./take-back.js";

export interface ChangesOptions extends ScopeOptions {
  /** Each text change's hunks, and the whole change set as one patch in git's format (`git apply -R` takes it back). */
  patch?: boolean | undefined;
  /**
   * With `patch`: hunks (and patch text) only for the entries from `offset`, at most `limit` of
   * them, in path order; the others carry no `hunks`. A page of a change set too large to diff
   * whole at once (the UI asks for the entries it shows).
   */
  patchRange?: { offset: number; limit: number } | undefined;
}

type ReportEntry = Omit<ChangeEntry, "path"> & {
  path: string;
  pathBytes?: string;
  decision?: Decision;
  reversible?: boolean;
  why?: string | null;
  /** With `patch`: the change's hunks, numbered as `undo --hunk` takes them; null where the change is not of text (binary, a symlink, not captured). */
  hunks?: Hunk[] | null;
};

/** The change set of SPEC section 4: what the scope changed, and who. */
export interface ChangeSetReport {
  scope: Scope;
  /** `path` with bytes that are not UTF-8 as U+FFFD, and then `pathBytes`: the path's bytes in base64. */
  entries: ReportEntry[];
  /** With `patch`: every text change in git's patch format, in path order. */
  patch?: string;
  /** The scope's calls no capture saw (imported shell calls, docs/import.md): their changes, if any, are not in `entries`. */
  uncaptured?: UncapturedCall[];
}

/** What a scope changed. Calls still open are closed first, for good (under the store lock); the work tree is not written. */
export async function changes(ctx: Context, scope: ScopeFields, opts: ChangesOptions = {}): Promise<ChangeSetReport> {
  // A run's entries carry its policy decision and whether each can be taken back (SPEC section 9).
  return withScope(ctx, checkScope(scope), opts, "read", async ({ cs, decisions }) => {
    // Object.assign, not a leading spread: see src/plan/planner.ts.
    const entries: ReportEntry[] = cs.entries.map((e) => Object.assign({}, e, jsonPath(e.path), decisions?.get(e.path)));
    const uncaptured = cs.uncaptured ? { uncaptured: cs.uncaptured } : {};
    if (!opts.patch) return { scope: cs.scope, entries, ...uncaptured };
    const reader = new ContentReader(ctx, Cas.in(ctx.store));
    const patches: string[] = [];
    const from = opts.patchRange?.offset ?? 0;
    const to = opts.patchRange ? from + opts.patchRange.limit : cs.entries.length;
    // The blobs git holds come in one batch, in the order they are read, not a process each.
    await reader.prefetch(cs.entries.slice(from, to).flatMap((e) => [e.pre, e.post]));
    for (const [i, e] of cs.entries.entries()) {
      if (i < from || i >= to) continue;
      const pre = await textOf(ctx, reader, e.path, e.pre);
      const post = await textOf(ctx, reader, e.path, e.post);
      if (pre === undefined || post === undefined || (pre === null && post === null)) {
        entries[i]!.hunks = null;
        continue;
      }
      entries[i]!.hunks = hunksOf(pre?.text ?? "", post?.text ?? "");
      patches.push(gitPatch(e.path, pre, post));
    }
    return { scope: cs.scope, entries, patch: patches.join(""), ...uncaptured };
  });
}

/** A state as text in the file's own form: null for an absent file, undefined where it is no text (binary, a symlink, bytes not recorded). */
async function textOf(ctx: Context, reader: ContentReader, path: ChangeEntry["path"], s: State | null): Promise<{ text: string; mode: string } | null | undefined> {
  if (s === null) return null;
  const data = await fileForm(ctx, reader, path, s);
  if (!data || !isText(data)) return undefined;
  return { text: data.toString("utf8"), mode: s.mode ?? "100644" };
}
