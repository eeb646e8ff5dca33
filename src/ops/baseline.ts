import { writeWorkTree } from "../capture/snapshot.js";
import { UnwindError, usage } from "../domain/errors.js";
import { jsonPath } from "../domain/paths.js";
import type { ChangeEntry, State } from "../domain/types.js";
import type { Context } from "../repo/context.js";
import { statesUnder, checkPrefixes } from "../scope/baseline.js";
import { journalChangeSet } from "../scope/calls.js";
import { baselineKey } from "../scope/resolve.js";
import { listBaselines, readBaseline, writeBaseline, type Baseline } from "../store/baselines.js";
import { Cas } from "../store/cas.js";
import { ContentReader } from "../store/content.js";
import { withLock } from "../store/lock.js";
import { recoverPending } from "../apply/recover.js";

export interface BaselineCaptureReport {
  key: string;
  /** Every prefix the baseline now governs. */
  prefixes: string[];
  /** This was the baseline's first capture. */
  created: boolean;
  /** Paths seen for the first time and captured now. */
  added: number;
  /** Paths already in the baseline: never captured again (first seen wins). */
  kept: number;
  /** Paths seen for the first time that a session labelled with task `key` wrote: an interrupted attempt's own work, not captured. */
  excluded: { path: string; pathBytes?: string }[];
  /** Paths in the baseline after this capture. */
  paths: number;
  at: string;
}

export interface BaselineSummary {
  key: string;
  prefixes: string[];
  paths: number;
  captures: number;
  firstAt: string;
  lastAt: string;
}

/**
 * Captures baseline `key` (SPEC section 10): every non-ignored file under
 * the prefixes, state and bytes. First seen wins per path: a path already
 * in the baseline is never captured again, so a resumed stage compares
 * against what the stage first found, not against its own earlier work. A
 * path seen for the first time is added unless a session labelled with
 * task `key` wrote it; then what it held before that session's first write
 * is taken where the record has its bytes, and otherwise nothing (it stays
 * absent, and an undo or revert check deletes it).
 */
export async function baselineCapture(ctx: Context, key: string, opts: { prefixes: readonly string[] }): Promise<BaselineCaptureReport> {
  baselineKey(key);
  if (opts.prefixes.length === 0) throw usage("baseline capture needs at least one --prefix", "e.g. --prefix tests (the files the stage should not need to touch)");
  const prefixes = [...new Set(checkPrefixes(opts.prefixes))];
  return withLock(ctx.store, "baseline", async () => {
    await recoverPending(ctx); // never capture a half-applied undo
    const current = await writeWorkTree(ctx, { scratch: false });
    try {
      const states = await statesUnder(ctx, current, prefixes);
      const at = new Date().toISOString();
      const old = readBaseline(ctx.store, key);
      const b: Baseline = old ?? { v: 1, key, prefixes: [], captures: [], entries: {} };
      const fresh = [...states.keys()].filter((p) => !(p in b.entries));
      const byTask = fresh.length > 0 ? await taskWrites(ctx, key) : new Map<string, ChangeEntry>();
      const cas = Cas.in(ctx.store);
      const reader = new ContentReader(ctx, cas);
      await reader.prefetch(fresh.map((p) => states.get(p)!));
      const excluded: string[] = [];
      let added = 0;
      for (const path of fresh) {
        const written = byTask.get(path);
        const state = written ? written.pre : states.get(path)!;
        const kept = state && (await keepBytes(reader, state));
        if (!kept) {
          excluded.push(path);
          continue;
        }
        b.entries[path] = kept;
        added++;
      }
      cas.syncWritten(); // the bytes are durable before the baseline names them
      for (const p of prefixes) if (!b.prefixes.includes(p)) b.prefixes.push(p);
      b.captures.push({ at, prefixes, added, root: ctx.root });
      writeBaseline(ctx.store, b);
      return {
        key,
        prefixes: [...b.prefixes],
        created: old === null,
        added,
        kept: states.size - fresh.length,
        excluded: excluded.map((p) => jsonPath(p)),
        paths: Object.keys(b.entries).length,
        at,
      };
    } finally {
      current.dispose();
    }
  });
}

/** The paths sessions labelled with `task` changed, with what each held before (the journal's task scope). */
async function taskWrites(ctx: Context, task: string): Promise<Map<string, ChangeEntry>> {
  try {
    const { cs } = await journalChangeSet(ctx, { kind: "task", id: task }, { close: "locked" });
    return new Map(cs.entries.map((e) => [e.path, e]));
  } catch (e) {
    // No session carries the label, or those that do worked in another worktree of the repository: they wrote nothing here.
    if (e instanceof UnwindError && (e.code === "E_SCOPE_UNKNOWN" || e.code === "E_SCOPE_OTHER_WORKTREE")) return new Map();
    throw e;
  }
}

/** The state with its bytes kept in the CAS, or null where they cannot be had (the path is then not captured). */
async function keepBytes(reader: ContentReader, s: State): Promise<State | null> {
  if (s.kind === "toolarge" || s.kind === "gitlink") return s; // by hash only, as every record keeps them
  if (s.kind !== "file" && s.kind !== "symlink") return null;
  let data: Buffer;
  try {
    data = await reader.read(s);
  } catch {
    return null;
  }
  const sha256 = reader.cas.put(data, { sync: false });
  return { kind: s.kind, mode: s.mode ?? (s.kind === "symlink" ? "120000" : "100644"), size: data.length, sha256, oid: s.oid ?? reader.oidOf(data) };
}

/** `unwind baseline list`: keys, prefixes, path counts, first and last capture. */
export function baselines(ctx: Context): { baselines: BaselineSummary[]; total: number } {
  const all = listBaselines(ctx.store)
    .map((b) => ({ key: b.key, prefixes: b.prefixes, paths: Object.keys(b.entries).length, captures: b.captures.length, firstAt: b.captures[0]?.at ?? "", lastAt: b.captures.at(-1)?.at ?? "" }))
    .sort((a, b) => (a.lastAt < b.lastAt ? 1 : a.lastAt > b.lastAt ? -1 : 0));
  return { baselines: all, total: all.length };
}
