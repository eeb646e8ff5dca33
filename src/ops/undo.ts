import type { Progress } from "../apply/apply.js";
import { recoverPending } from "../apply/recover.js";
import { resolveSnapshot, writeWorkTree } from "../capture/snapshot.js";
import { acts } from "../domain/actions.js";
import { UnwindError, usage } from "../domain/errors.js";
import { pickId, type IdRef } from "../domain/ids.js";
import { changeKind } from "../domain/states.js";
import type { ChangeEntry, ChangeSet, StartedBy } from "../domain/types.js";
import { rootPaths } from "../domain/paths.js";
import type { Context } from "../repo/context.js";
import { checkScope, checkScopeOptions, withScope, type ScopeFields, type ScopeOptions } from "../scope/resolve.js";
import { nowSide, snapshotChangeSet, snapshotSide } from "../scope/snapshot-diff.js";
import { Cas } from "../store/cas.js";
import { withLock } from "../store/lock.js";
import { Receipts, type Receipt } from "../store/receipts.js";
import { Capsules } from "../store/capsules.js";
import { checkDigest, runUndo, type UndoReport } from "./take-back.js";

export interface UndoOptions extends ScopeOptions {
  /** Plan only: nothing is written anywhere (not even a lock file). */
  dryRun?: boolean | undefined;
  /** Take back paths changed since (SPEC section 3); the receipt keeps what is overwritten. */
  force?: boolean | undefined;
  /** Keep later edits: take back only this scope's hunks. */
  merge?: boolean | undefined;
  /** Apply only if the plan's digest is still this one (from a preview's `plan`); else exit 3 and nothing is done. */
  expect?: string | undefined;
  /** Only these hunks (1-based, as `changes` with `patch` numbers them) of the one path `paths` selects; the rest of its change and every later edit stay. */
  hunks?: readonly number[] | undefined;
  /** Told how many of the paths to write are written, as the apply goes (for a progress line). */
  progress?: Progress | undefined;
  /** Who started it, recorded in the receipt (default: the library). */
  by?: StartedBy | undefined;
  /** With `dryRun`: also the content each path would get, as git's patch from what it holds now (the report's `patch`). */
  patch?: boolean | undefined;
}

/** A program calling the library names no client: its receipts say `library`. */
const LIBRARY: StartedBy = { client: "library" };

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

/** Takes a scope's changes back (SPEC section 3), or plans it with `dryRun`. */
export async function undo(ctx: Context, scopeFields: ScopeFields, opts: UndoOptions = {}): Promise<UndoReport> {
  const scope = checkScope(scopeFields);
  checkScopeOptions(scope, opts); // usage errors before the lock is taken or anything is read
  checkHunks(opts);
  checkDigest(opts.expect);
  const dryRun = Boolean(opts.dryRun);
  if (opts.patch && !dryRun) throw usage("--patch shows what a dry run would write: add --dry-run", "e.g. unwind undo --session S --dry-run --patch");
  // A refused plan writes nothing: checked first by a dry run, then planned again under the lock.
  if (opts.expect !== undefined && !dryRun) await undo(ctx, scopeFields, { ...opts, dryRun: true, progress: undefined });
  return guarded(ctx, dryRun, "undo", () =>
    withScope(ctx, scope, opts, dryRun ? "dry" : "apply", async ({ cs, laterWrites, interleaved, retained, fetched }) => {
      const r = await runUndo(ctx, cs, {
        dryRun,
        force: Boolean(opts.force),
        merge: Boolean(opts.merge),
        kind: "undo",
        expect: opts.expect,
        progress: opts.progress,
        laterWrites,
        interleaved,
        retained,
        hunks: opts.hunks,
        fetched,
        by: opts.by ?? LIBRARY,
        patch: dryRun && Boolean(opts.patch),
      });
      // After sealing only results are added to a capsule (SPEC section 9): this undo's receipt.
      // A fetched run's capsule is not this store's: its receipt is the record here (SPEC section 14: fetched records are read-only).
      if (scope.kind === "run" && r.receipt && new Capsules(ctx).tryRead(cs.scope.id) !== null)
        new Capsules(ctx).appendResult(cs.scope.id, { kind: "undo", at: new Date().toISOString(), receipt: r.receipt, safeOnly: Boolean(opts.safeOnly), counts: r.counts });
      return r;
    }),
  );
}

/** `hunks` name hunks of one path: whole numbers from 1, with that path given. */
export function checkHunks(opts: { hunks?: readonly number[] | undefined; paths?: readonly string[] | undefined }): void {
  if (opts.hunks === undefined) return;
  if (!Array.isArray(opts.hunks) || opts.hunks.length === 0 || opts.hunks.some((n) => !Number.isInteger(n) || n < 1)) {
    throw usage(`--hunk ${String(opts.hunks)}: expected hunk numbers from 1, e.g. --hunk 2 or --hunk 1,3`, "list a path's hunks with: unwind changes SCOPE --path P --patch");
  }
  if (!opts.paths?.length) throw usage("--hunk needs the path whose hunks it names: --path P", "list a path's hunks with: unwind changes SCOPE --path P --patch");
}

/** The dry run of `undo`, with the plan's digest to apply it by. */
export function plan(ctx: Context, scope: ScopeFields, opts: Omit<UndoOptions, "dryRun" | "expect"> = {}): Promise<UndoReport> {
  return undo(ctx, scope, { ...opts, dryRun: true });
}

export interface RestoreOptions {
  /** Root-relative paths: only these (a directory means everything under it); one outside the root or in .git is a usage error. */
  paths?: readonly string[] | undefined;
  dryRun?: boolean | undefined;
  force?: boolean | undefined;
  expect?: string | undefined;
  /** Write a snapshot taken in another worktree of the repository here. */
  anyWorktree?: boolean | undefined;
  progress?: Progress | undefined;
  by?: StartedBy | undefined;
}

/** Makes the non-ignored work tree (or just `paths`) equal to a snapshot; redoable. */
export async function restore(ctx: Context, id: IdRef, opts: RestoreOptions = {}): Promise<UndoReport> {
  checkDigest(opts.expect);
  const paths = rootPaths(opts.paths ?? []); // usage errors before anything is read
  const snap = await resolveSnapshot(ctx, id);
  if (snap.root !== ctx.root && !opts.anyWorktree) {
    throw new UnwindError("E_SCOPE_OTHER_WORKTREE", `snapshot ${snap.id} was taken in another work tree (${snap.root}), not in ${ctx.root}`, {
      hint: "restore it from that work tree, or pass --any-worktree to write it here",
    });
  }
  const dryRun = Boolean(opts.dryRun);
  // As for undo: a stale digest is refused before the real tree is written (status would refresh the private index).
  if (opts.expect !== undefined && !dryRun) await restore(ctx, id, { ...opts, dryRun: true, progress: undefined });
  return guarded(ctx, dryRun, "restore", async () => {
    const current = await writeWorkTree(ctx, { scratch: dryRun });
    try {
      const cas = Cas.in(ctx.store);
      const cs = await snapshotChangeSet(ctx, { kind: "snapshot", id: snap.id }, snapshotSide(ctx, cas, snap), nowSide(ctx, current), paths);
      return await runUndo(ctx, cs, { dryRun, force: Boolean(opts.force), merge: false, kind: "restore", expect: opts.expect, progress: opts.progress, by: opts.by ?? LIBRARY });
    } finally {
      current.dispose();
    }
  });
}

export interface RedoOptions {
  dryRun?: boolean | undefined;
  expect?: string | undefined;
  anyWorktree?: boolean | undefined;
  progress?: Progress | undefined;
  by?: StartedBy | undefined;
}

/** The receipt `id` names; `--last` means this work tree's newest (the store is shared by every worktree of the repository). */
export function pickReceipt(ctx: Context, id: IdRef): Receipt {
  return new Receipts(ctx.store).read(pickReceiptId(ctx, id));
}

function pickReceiptId(ctx: Context, id: IdRef): string {
  const receipts = new Receipts(ctx.store);
  const ids = typeof id === "string" ? receipts.ids() : [...receipts.heads()].filter((r) => r.root === undefined || r.root === ctx.root).map((r) => r.id);
  return pickId(ids, id, "receipt", "unwind receipts");
}

/** Takes an undo or a restore back: what its receipt wrote goes back to what was there. */
export async function redo(ctx: Context, id: IdRef, opts: RedoOptions = {}): Promise<UndoReport> {
  checkDigest(opts.expect);
  const dryRun = Boolean(opts.dryRun);
  const { head: receipt, items } = new Receipts(ctx.store).readLazily(pickReceiptId(ctx, id));
  // Redoing another worktree's receipt would write its files here (as restore, SPEC section 4).
  if (receipt.root !== undefined && receipt.root !== ctx.root && !opts.anyWorktree) {
    throw new UnwindError("E_SCOPE_OTHER_WORKTREE", `receipt ${receipt.id} was applied in another work tree (${receipt.root}), not in ${ctx.root}`, {
      hint: "redo it from that work tree, or pass --any-worktree to write it here",
    });
  }
  // Read an item at a time: a receipt of 100,000 paths is 40 MB of text, never held whole.
  const by = [receipt.id];
  const entries: ChangeEntry[] = [];
  for (const i of items()) if (acts(i.action)) entries.push({ path: i.path, change: changeKind(i.before, i.after), pre: i.before, post: i.after, by });
  const cs: ChangeSet = { scope: { kind: "receipt", id: receipt.id }, entries };
  return guarded(ctx, dryRun, "redo", () => runUndo(ctx, cs, { dryRun, force: false, merge: false, kind: "redo", expect: opts.expect, progress: opts.progress, by: opts.by ?? LIBRARY }));
}
