import { storePath } from "../domain/store-layout.js";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { findExecutable, startCommand, type CommandExit } from "../capture/run/command.js";
import { endProcesses, ProcessWatch } from "../capture/run/owned.js";
import { takeSnapshot, SNAPSHOT_REFS, type Snapshot } from "../capture/snapshot.js";
import { usage } from "../domain/errors.js";
import { sha256 } from "../domain/hash.js";
import { RUN_KEY_VAR } from "../domain/owned-procs.js";
import { checkName } from "../domain/paths.js";
import { decider, irreversible, NO_POLICY, parsePolicy, type Decision, type Policy } from "../domain/policy.js";
import type { Context } from "../repo/context.js";
import { taskName } from "../scope/resolve.js";
import { journalChangeSet } from "../scope/calls.js";
import { Capsules, newRunId, type Capsule, type CapsuleEntry, type ProcessRecord, type SnapshotRef } from "../store/capsules.js";
import { parseDuration } from "../store/config.js";
import { logError } from "../store/error-log.js";
import { withLock } from "../store/lock.js";
import { Receipts } from "../store/receipts.js";

export interface RunOptions {
  /** The run's id (a name git accepts in a ref, no `/`); default: `run-<time>-<8 hex>`. */
  id?: string | undefined;
  /** Label the run, and hook sessions inside it, with a task (default: $UNWIND_TASK). */
  task?: string | undefined;
  /** The policy file (relative to `cwd`); default: `.unwind/policy.json` in the root if present, else everything `review`. */
  policy?: string | undefined;
  /** End the command's process group after this long (`90s`, `10m`): TERM, a grace period, KILL. */
  timeout?: string | undefined;
  /** false (`--no-rollback`): record hashes only, keep no earlier bytes; undo of the run is refused. */
  rollback?: boolean | undefined;
  /** Leave processes the command left running as they are (they are still recorded, for `cleanup`). */
  keepProcesses?: boolean | undefined;
  /** Where the command runs (default: the process's directory). */
  cwd?: string | undefined;
  /** Extra environment for the command (on top of this process's). */
  env?: Record<string, string> | undefined;
  /** Grace between TERM and KILL, for a timeout and for processes left running when the command ends (default 3s). */
  graceMs?: number | undefined;
  /** Told the run's id once the before snapshot is taken and the command is about to start. */
  onStart?: ((id: string) => void) | undefined;
}

export interface RunReport {
  id: string;
  /** What `unwind run` exits with: the command's own exit code, or 128 + the signal's number. */
  status: number;
  exit: CommandExit;
  durationMs: number;
  /** Whether the capsule was sealed; when not, `error` says why (and `unwind status` shows it). */
  sealed: boolean;
  seal: string | null;
  error: string | null;
  changes: Record<Decision, number>;
  processes: { owned: number; ended: number; left: number };
  /** Records of the store found rewritten while the command ran. */
  tamper: string[];
}

/** Grace between TERM and KILL when the run itself ends processes. */
export const RUN_GRACE_MS = 3000;

/** The policy that governs a run, read once before the command starts: what the command does to the file later cannot change it. */
export function loadPolicy(root: string, cwd: string, file: string | undefined): { rules: Policy; source: string | null; sha256: string | null } {
  const path = file !== undefined ? resolve(cwd, file) : join(root, ".unwind", "policy.json");
  if (file === undefined && !existsSync(path)) return { rules: NO_POLICY, source: null, sha256: null };
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw usage(`--policy ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, "give the path of a policy file (docs/policy.md)");
  }
  return { rules: parsePolicy(text, file ?? path), source: path, sha256: sha256(text) };
}

function timeoutMs(text: string | undefined): number | null {
  if (text === undefined) return null;
  try {
    const ms = parseDuration(text);
    if (ms > 0) return ms;
  } catch {
    /* said below */
  }
  throw usage(`--timeout ${text}: expected a duration such as 90s, 10m or 2h`);
}

const refOf = (s: Snapshot): SnapshotRef => ({ snapshot: s.id, commit: s.commit, tree: s.tree });

/**
 * Runs a command in a sealed run capsule (SPEC section 9): a tree snapshot
 * before and after (each under the store lock, which is not held while the
 * command runs), the command in its own process group with its stdio
 * untouched, its processes watched and, when it ends, those still running
 * ended by identity; then the change set, a policy decision per path, and
 * the seal. Everything that can be refused is refused before the command
 * starts; once it has run, its exit status is the result whatever happens
 * to the seal.
 */
export async function run(ctx: Context, argv: readonly string[], opts: RunOptions = {}): Promise<RunReport> {
  if (argv.length === 0 || argv[0] === "") throw usage("no command given", "unwind run [options] -- CMD [ARG...]");
  const capsules = new Capsules(ctx);
  const id = opts.id ?? newRunId();
  if (opts.id !== undefined) {
    const bad = checkName(opts.id) ?? (opts.id.includes("/") ? "holds a /" : null);
    if (bad) throw usage(`run id '${opts.id.slice(0, 40)}' ${bad}`, "a run id is 1-128 characters git accepts in a ref name, without /");
    if (capsules.exists(opts.id)) throw usage(`run ${opts.id} already exists`, "give another --id, or leave it out for a fresh one");
  }
  const task = taskName(opts.task ?? (process.env.UNWIND_TASK || undefined));
  const cwd = resolve(opts.cwd ?? process.cwd());
  const limit = timeoutMs(opts.timeout);
  const policy = loadPolicy(ctx.root, cwd, opts.policy);
  const rollback = policy.rules.rollback && opts.rollback !== false;
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  findExecutable(argv[0]!, cwd, env.PATH ?? "");
  const graceMs = opts.graceMs ?? RUN_GRACE_MS;

  // What the command could rewrite, as it stands before it starts: compared when it ends.
  const sealsBefore = capsules.fileSeals();
  const chainBefore = receiptProblems(ctx).length === 0;

  const before = await withLock(ctx.store, "run", () => takeSnapshot(ctx, { ...(task ? { task } : {}), label: `run ${id}: before`, run: id }));
  opts.onStart?.(id);
  // Hooks inside the run label their sessions with its task; without one, with the run itself.
  env.UNWIND_RUN = id;
  const runKey = randomBytes(16).toString("hex");
  env[RUN_KEY_VAR] = runKey;
  env.UNWIND_TASK = task ?? id;
  const startedAt = new Date();
  let watch: ProcessWatch | null = null;
  let child: Awaited<ReturnType<typeof startCommand>>;
  try {
    child = await startCommand(argv, { cwd, env, timeoutMs: limit, graceMs, onSignal: (sig) => watch?.signalAll(sig) });
  } catch (e) {
    // It never ran (it vanished since it was found, or exec failed): no record claims it did.
    await ctx.git(["update-ref", "-d", SNAPSHOT_REFS + before.id, before.commit]).catch(() => undefined);
    throw e;
  }
  watch = new ProcessWatch(runKey, child.pid);
  watch.start();
  const exit = await child.done;
  watch.scan(true); // what the command left behind as it exited
  const childRecord = watch.childRecord();
  const processes = watch.stop();
  const endedAt = new Date();

  let ended = 0;
  let left = 0;
  const report = (sealed: boolean, seal: string | null, error: string | null, changes: Record<Decision, number>, tamper: string[]): RunReport => ({
    id,
    status: exit.status,
    exit,
    durationMs: endedAt.getTime() - startedAt.getTime(),
    sealed,
    seal,
    error,
    changes,
    processes: { owned: processes.length, ended, left },
    tamper,
  });
  try {
    // The child itself has exited (we reaped it); the rest are ended by identity unless kept.
    const others = processes.filter((p) => p !== childRecord);
    if (!opts.keepProcesses) {
      const outcomes = await endProcesses(others, { graceMs });
      outcomes.forEach((o, k) => {
        others[k]!.end = o.outcome;
      });
      ended = outcomes.filter((o) => o.outcome === "terminated" || o.outcome === "killed").length;
      left = outcomes.filter((o) => o.outcome === "still-running" || o.outcome === "access-denied").length;
    } else left = (await endProcesses(others, { graceMs, dryRun: true })).filter((o) => o.outcome === "still-running").length;

    return await withLock(ctx.store, "run", async () => {
      const after = await takeSnapshot(ctx, { ...(task ? { task } : {}), label: `run ${id}: after`, run: id, runSince: before.at });
      // The run's window among every call and receipt the record holds (SPEC section 9: before -> after under section 2's rules):
      // another agent's file write, or an undo, made while the command ran is not the run's.
      const { cs } = await journalChangeSet(ctx, { kind: "run", id }, {});
      const decide = decider(policy.rules);
      const entries: CapsuleEntry[] = cs.entries.map((e) => {
        const why = irreversible(e, rollback);
        return { path: e.path, change: e.change, pre: e.pre, post: e.post, decision: decide(e.path), reversible: why === null, why };
      });
      const tamper = await tampering(ctx, capsules, sealsBefore, chainBefore, before);
      const capsule: Omit<Capsule, "prev"> = {
        v: 1,
        id,
        argv: [...argv],
        cwd,
        root: ctx.root,
        task: task ?? null,
        startedAt: startedAt.toISOString(),
        endedAt: endedAt.toISOString(),
        durationMs: endedAt.getTime() - startedAt.getTime(),
        exit: { code: exit.code, signal: exit.signal, status: exit.status, timedOut: exit.timedOut },
        timeoutMs: limit,
        policy,
        rollback,
        keepProcesses: Boolean(opts.keepProcesses),
        processTracking: watch!.tracking,
        before: refOf(before),
        after: refOf(after),
        processes: processes as ProcessRecord[],
        tamper,
        entries,
      };
      const { seal } = await capsules.seal(capsule);
      // Without rollback no earlier bytes are kept: the before snapshot's ref goes (its objects are left to git's gc).
      if (!rollback) await ctx.git(["update-ref", "-d", SNAPSHOT_REFS + before.id, before.commit]);
      const counts: Record<Decision, number> = { allow: 0, review: 0, deny: 0 };
      for (const e of entries) counts[e.decision]++;
      return report(true, seal, null, counts, tamper);
    });
  } catch (e) {
    // The command has run: its exit status stands. The failure is said here and kept for `unwind status`.
    const message = e instanceof Error ? e.message : String(e);
    logError(ctx.store, { kind: "run-unsealed", message: `run ${id} (${argv.join(" ").slice(0, 80)}): not sealed: ${message}` });
    return report(false, null, message, { allow: 0, review: 0, deny: 0 }, []);
  } finally {
    child.release();
  }
}

/**
 * What the command may have rewritten in the store while it ran, judged
 * against what this process read before it started (held in memory, out
 * of the command's reach): capsules that existed then, the receipt chain,
 * and the run's own before snapshot's ref. A run is not a sandbox; this
 * says when the record was tampered with instead of trusting it.
 */
async function tampering(ctx: Context, capsules: Capsules, sealsBefore: Map<string, string>, chainBefore: boolean, before: Snapshot): Promise<string[]> {
  const out: string[] = [];
  const now = capsules.fileSeals();
  for (const [id, seal] of sealsBefore) {
    const then = now.get(id);
    if (then === undefined) out.push(`capsule ${id} was removed while the command ran`);
    else if (then !== seal) out.push(`capsule ${id} was rewritten while the command ran`);
  }
  if (chainBefore) for (const p of receiptProblems(ctx)) out.push(`receipts: ${p} (while the command ran)`);
  const ref = await ctx.git(["rev-parse", "-q", "--verify", SNAPSHOT_REFS + before.id], { okCodes: [1] });
  if (ref.stdout.toString("utf8").trim() !== before.commit)
    out.push(`the before snapshot's ref ${SNAPSHOT_REFS + before.id} was moved or removed while the command ran (the run used the one it took)`);
  return out;
}

const receiptProblems = (ctx: Context): string[] => (existsSync(storePath(ctx.store, "receipts")) ? new Receipts(ctx.store).verify() : []);
