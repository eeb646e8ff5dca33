import { anythingPending } from "../apply/intent.js";
import { recoverPending } from "../apply/recover.js";
import { settleSnapshot, type SnapshotLabels, type SnapshotStart } from "../capture/snapshot.js";
import type { IdRef } from "../domain/ids.js";
import { resolveContext, type Context } from "../repo/context.js";
import { keepChangeSets } from "../scope/calls.js";
import type { ScopeFields, ScopeInput } from "../scope/resolve.js";
import { withLock } from "../store/lock.js";
import type { Receipt } from "../store/receipts.js";
import { baselineCapture, baselines } from "./baseline.js";
import { changes, type ChangesOptions } from "./changes.js";
import { content, contents, current, stamp, type ContentRef } from "./content.js";
import { gc } from "./gc.js";
import type { ListOptions } from "./list.js";
import { init, record, type Harness, type RecordOptions } from "./record.js";
import { receipts } from "./receipts.js";
import { revertCheck, type RevertCheckOptions } from "./revert-check.js";
import { log, sessions, type LogOptions } from "./sessions.js";
import { diff, snapshot, snapshots, type SnapshotsOptions } from "./snapshot.js";
import { stackClear, stackList, stackPush } from "./stack.js";
import { status } from "./status.js";
import { taskList, taskStart } from "./task.js";
import { plan, redo, restore, undo, type RestoreOptions, type UndoOptions } from "./undo.js";
import { verify } from "./verify.js";
import { checkChangesOptions, checkPlanOptions, checkRedoOptions, checkRestoreOptions, checkScopeInput, checkUndoOptions } from "./inputs.js";
import { run, type RunOptions } from "./run.js";
import { cleanup, runShow, runs } from "./runs.js";
import { fetch, push, type FetchOptions, type PushOptions } from "./share.js";
import { importSessions, type ImportOptions } from "./import.js";

export interface OpenOptions {
  /** The work tree to guard (default: the repository of `cwd`). */
  root?: string | undefined;
  /** Where a relative `root` is resolved from (default: the process's directory). */
  cwd?: string | undefined;
  /**
   * A snapshot's first phase this process began, holding the store lock
   * (src/cli/early-start.ts). Recovery needs that lock, so when there is an
   * apply to finish the start is settled first and the snapshot taken anew.
   */
  holding?: SnapshotStart | null | undefined;
  /**
   * Keep the last few change sets folded, while the record is unchanged
   * (src/scope/calls.ts): for a process that asks for the same scope again,
   * as the UI and MCP servers do. A one-shot caller leaves it off.
   */
  keepChangeSets?: boolean | undefined;
}

/**
 * Opens the work tree's record: resolves root and store, and finishes any
 * apply a crash interrupted before anything else is done (SPEC section 3:
 * the next command recovers). Every operation is a method of what it
 * returns, resolving to the same data `--json` prints (SPEC section 11).
 */
export async function open(opts: OpenOptions = {}) {
  const ctx = await resolveContext(opts.root, opts.cwd);
  if (opts.keepChangeSets) keepChangeSets(ctx);
  // Only something pending takes the lock: a dry run must not create even a lock file.
  let recovered: Receipt[] = [];
  if (anythingPending(ctx.store)) {
    if (opts.holding) await settleSnapshot(opts.holding);
    recovered = await withLock(ctx.store, "recover", () => recoverPending(ctx));
  }
  return bind(ctx, recovered);
}

function bind(ctx: Context, recovered: readonly Receipt[]) {
  return {
    root: ctx.root,
    store: ctx.store,
    /** Applies a crash interrupted, finished when this was opened. */
    recovered: recovered.map((r) => ({ id: r.id, kind: r.kind })),
    /** The repository context, for code of unwind's own that goes below the operations. */
    context: ctx,

    // Checked key by key before anything is read (src/ops/inputs.ts): a misplaced option is an error, not ignored.
    changes: async (scope: ScopeInput | ScopeFields, o?: ChangesOptions) => changes(ctx, checkScopeInput(scope), checkChangesOptions(o)),
    plan: async (scope: ScopeInput | ScopeFields, o?: Omit<UndoOptions, "dryRun" | "expect">) => plan(ctx, checkScopeInput(scope), checkPlanOptions(o)),
    undo: async (scope: ScopeInput | ScopeFields, o?: UndoOptions) => undo(ctx, checkScopeInput(scope), checkUndoOptions(o)),
    restore: async (id: IdRef, o?: RestoreOptions) => restore(ctx, id, checkRestoreOptions(o)),
    redo: async (id: IdRef, o?: Parameters<typeof redo>[2]) => redo(ctx, id, checkRedoOptions(o)),

    snapshot: (labels?: SnapshotLabels, o?: { start?: SnapshotStart | null }) => snapshot(ctx, labels, o),
    snapshots: (o?: SnapshotsOptions) => snapshots(ctx, o),
    diff: (a: IdRef, b?: IdRef | null, o?: { patch?: boolean }) => diff(ctx, a, b, o),
    /** The verified bytes of a recorded state (a change set's or plan's pre or post), by its sha256 and/or oid. */
    content: (ref: ContentRef) => content(ctx, ref),
    /** Several states' bytes at once, each as `content` reads it or the error it would throw (git's blobs in one batch). */
    contents: (refs: readonly ContentRef[]) => contents(ctx, refs),
    /** What a root-relative work tree path holds now (bytes of a file up to 8 MiB, a symlink's target), read without following links. */
    current: async (path: string) => current(ctx, path),
    /** A cheap fingerprint of the record: it changes when anything is captured, snapshotted, applied or logged. */
    stamp: async () => stamp(ctx),

    sessions: (o?: ListOptions & { task?: string }) => sessions(ctx, o),
    log: (o?: LogOptions) => log(ctx, o),
    receipts: (o?: ListOptions) => receipts(ctx, o),

    verify: () => verify(ctx),
    status: (o?: { ack?: boolean }) => status(ctx, o),
    gc: (o?: { ttl?: string; dryRun?: boolean }) => gc(ctx, o),

    taskStart: (task: string, o?: { branch?: string; worktree?: string; onto?: string }) => taskStart(ctx, task, o),
    taskList: () => taskList(ctx),
    stackPush: (task: string, o?: { branch?: string }) => stackPush(ctx, task, o),
    stackList: (task: string) => stackList(ctx, task),
    stackClear: (task: string) => stackClear(ctx, task),

    record: (paths: readonly string[], o: RecordOptions) => record(ctx, paths, o),
    /** Calls from a client's own session transcript as imported records (docs/import.md); `dryRun` writes nothing. */
    importSessions: (o: ImportOptions) => importSessions(ctx, o),
    init: (harnesses: readonly Harness[], o?: Parameters<typeof init>[2]) => init(ctx, harnesses, o),

    baselineCapture: (key: string, o: { prefixes: readonly string[] }) => baselineCapture(ctx, key, o),
    baselines: async () => baselines(ctx),
    revertCheck: (o: RevertCheckOptions) => revertCheck(ctx, o),

    run: (argv: readonly string[], o?: RunOptions) => run(ctx, argv, o),
    runs: (o?: ListOptions & { task?: string }) => runs(ctx, o),
    runShow: (id: IdRef) => runShow(ctx, id),
    cleanup: (id: IdRef, o?: { grace?: string; dryRun?: boolean }) => cleanup(ctx, id, o),

    /** Sends the chosen sessions' records to a git remote under refs/unwind/shared/<origin>/ (SPEC section 14); remote default `origin`. */
    push: (o: PushOptions & { remote?: string | undefined }) => push(ctx, o.remote, o),
    /** Fetches refs/unwind/shared/* from a git remote; the records become readable, never writable. */
    fetch: (o: FetchOptions & { remote?: string | undefined } = {}) => fetch(ctx, o.remote, o),
  };
}

/** The opened record: every operation of SPEC section 11. */
export type Unwind = ReturnType<typeof bind>;
