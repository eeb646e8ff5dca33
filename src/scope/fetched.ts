import { UnwindError } from "../domain/errors.js";
import type { SharedSessionDoc } from "../domain/share.js";
import type { ChangeSet, Interleaved, LaterWrite, RepoPath } from "../domain/types.js";
import type { Context } from "../repo/context.js";
import { pickId } from "../domain/ids.js";
import type { Capsule } from "../store/capsules.js";
import { checkFetched, checkFetchedRun, fetchedRuns, fetchedSessions, type FetchedSession } from "../store/shared.js";
import { resolveSession } from "./calls.js";

/**
 * Fetched sessions as scopes (SPEC section 14): a fetched session is one
 * sealed change set, resolved on the machine that recorded it
 * (docs/design.md, "Sharing records through a git remote"). It goes to the
 * same planner and applier as every scope.
 */

/** The fetched session a name means (as local names are typed), or null when no fetched session has it. */
export async function findFetched(ctx: Context, wanted: string): Promise<FetchedSession | null> {
  const all = await fetchedSessions(ctx);
  // Damaged ones count too, by the name their commit gives: asking for one must be refused as damaged (exit 4), not "unknown".
  const named = all.filter((s) => s.session !== null);
  if (named.length === 0) return null;
  let name: string;
  try {
    name = resolveSession(named.map((s) => ({ session: s.session! })) as unknown as Parameters<typeof resolveSession>[0], wanted);
  } catch (e) {
    if (e instanceof UnwindError && e.code === "E_SCOPE_UNKNOWN") return null;
    throw e;
  }
  const hits = named.filter((s) => s.session === name);
  if (hits.length > 1) {
    throw new UnwindError("E_SCOPE_AMBIGUOUS", `session ${name} was fetched from ${hits.length} origins: ${hits.map((h) => h.origin).join(", ")}`, {
      hint: "drop the copy you do not want with: git update-ref -d <ref>",
    });
  }
  return hits[0]!;
}

/**
 * The change set of a fetched session, after checking everything that
 * vouches for it (seal, records, content): a record that fails is refused
 * whole (exit 4), as a damaged local journal or a capsule whose seal fails.
 */
export async function fetchedChangeSet(
  ctx: Context,
  s: FetchedSession,
): Promise<{ cs: ChangeSet; laterWrites: Map<RepoPath, LaterWrite>; interleaved: Map<RepoPath, Interleaved>; doc: SharedSessionDoc }> {
  const problems = await checkFetched(ctx, s);
  if (problems.length > 0 || !s.doc) {
    throw new UnwindError("E_STORE_DAMAGED", `fetched session ${s.session ?? s.ref} (origin ${s.origin}) fails its check: ${problems[0] ?? s.problem}; nothing was done`, {
      hint: "run unwind verify; fetch it again from a remote you trust",
    });
  }
  const doc = s.doc;
  return {
    doc,
    // A copy: the planner's callers may narrow the entries.
    cs: { scope: { kind: "session", id: doc.session }, entries: doc.entries.map((e) => ({ ...e })) },
    laterWrites: new Map(doc.laterWrites.map(({ path, ...l }) => [path as RepoPath, l])),
    interleaved: new Map(doc.interleaved.map(({ path, ...i }) => [path as RepoPath, i])),
  };
}

/**
 * A task whose only sessions were fetched: refused (exit 3) naming them. A
 * task's change set is folded from every call's window on one machine's
 * timeline; fetched sessions arrive as change sets already folded, and
 * stacking two of them could hide a write between them. Each one is taken
 * back by `--session`. Returns when no fetched session carries the task.
 */
export async function fetchedTaskHint(ctx: Context, task: string): Promise<void> {
  const names = (await fetchedSessions(ctx)).flatMap((s) => (s.doc?.summary.tasks.includes(task) ? [s.doc.session] : []));
  if (names.length === 0) return;
  throw new UnwindError("E_SCOPE_UNKNOWN", `task '${task}' has only fetched sessions here (${names.join(", ")}); a fetched task is not taken back as one`, {
    hint: `take them back one by one: unwind undo --session ${names[0]}`,
  });
}

/**
 * The fetched run capsule an id names (as local run ids are typed: the id,
 * or a unique prefix or suffix of 6+ characters), checked (seal, content)
 * before use; null when no fetched run has it. A record that fails is
 * refused whole (exit 4), as a local capsule whose seal fails.
 */
export async function fetchedRunCapsule(ctx: Context, wanted: string): Promise<{ capsule: Capsule; origin: string } | null> {
  const all = (await fetchedRuns(ctx)).filter((r) => r.run !== null);
  if (all.length === 0) return null;
  let id: string;
  try {
    id = pickId([...new Set(all.map((r) => r.run!))].sort().reverse(), wanted, "run", "unwind runs");
  } catch (e) {
    if (e instanceof UnwindError && e.code === "E_SCOPE_UNKNOWN") return null;
    throw e;
  }
  const hits = all.filter((r) => r.run === id);
  if (hits.length > 1) {
    throw new UnwindError("E_SCOPE_AMBIGUOUS", `run ${id} was fetched from ${hits.length} origins: ${hits.map((h) => h.origin).join(", ")}`, {
      hint: "drop the copy you do not want with: git update-ref -d <ref>",
    });
  }
  const r = hits[0]!;
  const problems = await checkFetchedRun(ctx, r);
  if (problems.length > 0 || !r.doc) {
    throw new UnwindError("E_STORE_DAMAGED", `fetched run ${id} (origin ${r.origin}) fails its check: ${problems[0] ?? r.problem}; nothing was done`, {
      hint: "run unwind verify; fetch it again from a remote you trust",
    });
  }
  return { capsule: r.doc.run, origin: r.origin };
}
