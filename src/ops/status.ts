import { existsSync } from "node:fs";
import { listSnapshots } from "../capture/snapshot.js";
import type { Context } from "../repo/context.js";
import { Cas } from "../store/cas.js";
import { acknowledgeErrors, unacknowledgedErrors, type LoggedError } from "../store/error-log.js";
import { journalCensus, type JournalCensus } from "../store/journal.js";
import { Receipts } from "../store/receipts.js";
import { Capsules } from "../store/capsules.js";
import { dirBytes } from "../sys/files.js";
import { HARNESSES } from "../capture/harness/index.js";
import type { Harness } from "../capture/harness/rules.js";
import { checkHooks, type HookCheck, nextSteps } from "../capture/harness/setup.js";
import { lastFired as lastFiredAt } from "../store/fired.js";
import { originOf, SHARED_PREFIX, sharedRefs } from "../store/shared.js";

export interface StatusReport {
  root: string;
  store: string;
  mode: Context["mode"];
  exists: boolean;
  bytes: number;
  blobs: number;
  snapshots: number;
  snapshotsAllWorktrees: number;
  receipts: number;
  /** Run capsules (SPEC section 9). */
  runs: number;
  sessions: number;
  records: number;
  damagedRecords: number;
  /** Capture errors not yet acknowledged, newest last (at most 5). */
  errors: LoggedError[];
  /** How many capture errors are not yet acknowledged. */
  errorCount: number;
  /** How many were acknowledged by this call (`ack`). */
  acknowledged: number;
  /** Each settings file with unwind's hooks in it: whether they are whole and when they last ran. */
  hooks: HookHealth[];
  /**
   * Calls `unwind import` read from a client's transcript (docs/import.md):
   * how many, in how many sessions, and how many of them the hooks missed
   * (imported into a session the hooks recorded too).
   */
  imported: { calls: number; sessions: number; missedByHooks: number };
  /** Records fetched from other machines (`unwind fetch`): sessions and runs, each a ref under refs/unwind/shared/. */
  fetched: number;
}

/** How many records were fetched from other origins: the shared refs but this store's own (what it pushed). */
async function fetchedCount(ctx: Context): Promise<number> {
  const refs = await sharedRefs(ctx);
  let own: string | null = null;
  try {
    own = await originOf(ctx, { create: false });
  } catch {
    /* a bad unwind.origin is push's to report; every shared ref counts */
  }
  return [...refs.keys()].filter((r) => own === null || !r.startsWith(`${SHARED_PREFIX}${own}/`)).length;
}

export interface HookHealth extends HookCheck {
  /** When this harness's hook last ran in this store; null: never (it may not trust the project). */
  lastFired: string | null;
  /** What the harness may still need before it runs them (as `init` says), when they have never run. */
  next: string[];
}

/** unwind's hooks as installed in each harness's settings files, with when each harness's hook last ran. */
function hookHealth(ctx: Context): HookHealth[] {
  const out: HookHealth[] = [];
  for (const harness of Object.keys(HARNESSES) as Harness[]) {
    const { file, local } = HARNESSES[harness].settings;
    for (const f of local === undefined ? [file] : [file, local]) {
      const check = checkHooks(ctx.root, harness, f);
      if (check === null) continue;
      const lastFired = existsSync(ctx.store) ? lastFiredAt(ctx.store, harness) : null;
      out.push({ ...check, lastFired, next: lastFired === null ? nextSteps(ctx.root, harness) : [] });
    }
  }
  return out;
}

/** Imported calls, and those of them in sessions the hooks recorded too: calls the hooks missed. */
function importedCalls(journal: JournalCensus | null): StatusReport["imported"] {
  if (!journal) return { calls: 0, sessions: 0, missedByHooks: 0 };
  const sessions = new Set<string>();
  let missed = 0;
  for (const k of journal.imported) {
    const session = k.slice(0, k.indexOf("\0"));
    sessions.add(session);
    if (journal.hooked.has(session)) missed++;
  }
  return { calls: journal.imported.size, sessions: sessions.size, missedByHooks: missed };
}

/** The store: size, sessions, snapshots and the capture errors not yet acknowledged; `ack` acknowledges them. */
export async function status(ctx: Context, opts: { ack?: boolean | undefined } = {}): Promise<StatusReport> {
  const exists = existsSync(ctx.store);
  const snaps = exists ? await listSnapshots(ctx) : [];
  const receipts = exists ? [...new Receipts(ctx.store).heads()] : [];
  const journal = exists ? journalCensus(ctx.store) : null;
  const read = exists ? unacknowledgedErrors(ctx.store) : { errors: [], upTo: 0 };
  let errors = read.errors;
  let acknowledged = 0;
  if (opts.ack && errors.length > 0) {
    acknowledgeErrors(ctx.store, read.upTo);
    acknowledged = errors.length;
    errors = [];
  }
  // One walk of the store for its size and its blobs.
  let blobs = 0;
  const cas = Cas.in(ctx.store);
  const bytes = exists
    ? await dirBytes(
        ctx.store,
        (p) => {
          if (cas.shaOf(p) !== null) blobs++;
        },
        (d) => cas.isShard(d),
      )
    : 0;
  return {
    root: ctx.root,
    store: ctx.store,
    mode: ctx.mode,
    exists,
    bytes,
    blobs,
    snapshots: snaps.filter((s) => s.root === ctx.root).length,
    snapshotsAllWorktrees: snaps.length,
    receipts: receipts.length,
    runs: exists ? new Capsules(ctx).names().length : 0,
    sessions: journal?.sessions.size ?? 0,
    records: journal?.records ?? 0,
    damagedRecords: journal?.damaged ?? 0,
    errors: errors.slice(-5),
    errorCount: errors.length,
    acknowledged,
    hooks: hookHealth(ctx),
    imported: importedCalls(journal),
    fetched: await fetchedCount(ctx),
  };
}
