import { adopt, carriesRun, type Identity, type Ownership } from "../../domain/owned-procs.js";
import { hasExited, type ProcStat } from "../../domain/proc-stat.js";
import type { EndOutcome, ProcessRecord } from "../../store/capsules.js";
import { hasProcTable, procCmdline, procEnviron, procStat, procTable, signal } from "../../sys/procs.js";

/**
 * How often the process table is read while a command runs: every 50 ms,
 * or less often where a reading takes long (a reading costs about 25 µs a
 * process; on a machine with thousands, the pause is four times the
 * reading, so watching never takes more than a fifth of a core).
 */
export const POLL_MS = 50;

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * A process's environment, or null where it cannot be told. Mid-exec (a
 * background job going `setsid` -> `nohup` -> `sleep`) and as a zombie,
 * /proc/<pid>/environ reads empty: measured here, 2,682 empty reads against
 * 18,350 whole ones over 200 such chains. Taken for "not ours", an empty
 * read made the run miss its own setsid'd job for good (the keep-processes
 * test failed on it now and then). So an empty read is tried again a few
 * times, a millisecond apart, and then said to be unknown.
 */
function settledEnviron(pid: number, tries: number): Buffer | null {
  for (let i = 0; i < tries; i++) {
    const env = procEnviron(pid);
    if (env === null) return null; // gone
    if (env.length > 0) return env;
    Atomics.wait(pause, 0, 0, 1);
  }
  return null;
}

/**
 * Watches the process table while a run's command lasts, and remembers
 * every process it owns by pid and start time (SPEC section 9): the child;
 * any child of an owned process; any member of the child's process group
 * or session; and any process that carries the run's own key (`UNWIND_RUN_KEY`) in the
 * environment it started with. The last catches a descendant that left
 * with `setsid` and whose parent died before a reading saw the two
 * together (it was reparented to init): the environment survives both.
 * Once seen, a process stays owned whoever its parent becomes.
 */
export class ProcessWatch {
  /** Every process owned, by "pid:start": a pid the kernel reuses within the run is a second process, kept beside the first. */
  private readonly owned = new Map<string, ProcessRecord>();
  /** The newest owned identity of each pid: what the next reading's parents are judged by. */
  private readonly latest = new Map<number, string>();
  /** Processes judged not ours, by pid and start: the environment is read once per process. */
  private readonly foreign = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  readonly tracking: "proc" | "group" = hasProcTable() ? "proc" : "group";
  private readonly child: Identity;
  private readonly t0 = Date.now();

  constructor(
    /** The run's own key in its environment (`RUN_KEY_VAR`): what a descendant that left the tree is known by. */
    private readonly runKey: string,
    childPid: number,
  ) {
    // Read at once: the child is at worst a zombie until we reap it, so its start time is still there.
    const st = this.tracking === "proc" ? procStat(childPid) : null;
    this.child = { pid: childPid, start: st?.start ?? "0" };
    if (st) this.add(st, "child");
    // No identity to check against (no /proc): recorded, and never signalled by cleanup.
    else this.owned.set(`${childPid}:`, { pid: childPid, start: null, comm: "", ppid: process.pid, how: "child", seenAfterMs: 0, end: null });
  }

  start(): void {
    if (this.tracking !== "proc" || this.timer) return;
    const tick = () => {
      const t = performance.now();
      this.scan();
      this.timer = setTimeout(tick, Math.max(POLL_MS, 4 * (performance.now() - t)));
      this.timer.unref();
    };
    tick();
  }

  /** One reading of the table; also called once more when the command exits (`last`: no later reading will ask again). */
  scan(last = false): void {
    if (this.tracking !== "proc") return;
    const table = procTable();
    // A process is first seen as whatever forked it (sh, setsid, nohup): its name is kept up to date through its execs.
    for (const s of table) {
      const r = this.owned.get(`${s.pid}:${s.start}`);
      if (r) r.comm = s.comm;
    }
    for (let round = 0; round < 8; round++) {
      for (const { stat, how } of adopt(table, this.latest, this.child)) this.add(stat, how);
      let found = false;
      for (const s of table) {
        const key = `${s.pid}:${s.start}`;
        if (this.owned.has(key) || this.foreign.has(key) || BigInt(s.start) < BigInt(this.child.start) || s.pid === process.pid) continue;
        // An exited process reads an empty environment for good, and can start nothing more: not asked.
        if (hasExited(s)) {
          this.foreign.add(key);
          continue;
        }
        const env = settledEnviron(s.pid, last ? 100 : 5);
        if (env === null) continue; // unknown: asked again at the next reading, never taken for "not ours"
        if (carriesRun(env, this.runKey)) {
          this.add(s, "environ");
          found = true;
        } else this.foreign.add(key);
      }
      if (!found) return; // nothing new: no descendants to adopt
    }
  }

  private add(s: ProcStat, how: Ownership): void {
    const key = `${s.pid}:${s.start}`;
    if (this.owned.has(key)) return;
    this.owned.set(key, { pid: s.pid, start: s.start, comm: s.comm, ppid: s.ppid, how, seenAfterMs: Date.now() - this.t0, end: null });
    this.latest.set(s.pid, s.start);
  }

  /** The child's identity as recorded (its start time null where it could not be read). */
  childRecord(): ProcessRecord {
    return [...this.owned.values()].find((r) => r.how === "child")!;
  }

  /** Stops watching; each owned process still running gets what it runs now (`cmd`), read from itself. */
  stop(): ProcessRecord[] {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const r of this.owned.values()) {
      const cmd = r.start === null ? null : commandLine(r.pid, r.start);
      if (cmd) r.cmd = cmd;
    }
    return [...this.owned.values()].sort((a, b) => a.seenAfterMs - b.seenAfterMs || a.pid - b.pid);
  }

  /** Signals every owned process still alive under its identity (a timeout's TERM and KILL). */
  signalAll(sig: NodeJS.Signals): void {
    for (const r of this.owned.values()) {
      if (r.start !== null && running(r.pid, r.start) === "yes") signal(r.pid, sig);
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether the process named by pid and start time is still there and has not exited. */
function running(pid: number, start: string): "yes" | "gone" | "reused" {
  const st = procStat(pid);
  if (!st || hasExited(st)) return "gone";
  return st.start === start ? "yes" : "reused";
}

/**
 * What the process named by pid and start time runs now, from its own
 * /proc/<pid>/cmdline; null when that process is gone or has exited. Its
 * identity is checked on both sides of the read: a pid reused in between
 * would name another process's command.
 */
export function commandLine(pid: number, start: string): string[] | null {
  if (running(pid, start) !== "yes") return null;
  const cmd = procCmdline(pid);
  return cmd && running(pid, start) === "yes" ? cmd : null;
}

export interface Ended {
  pid: number;
  start: string | null;
  outcome: EndOutcome;
}

/**
 * Ends recorded processes by identity (SPEC section 9): each is signalled
 * only while its pid and start time both still match, TERM first, KILL
 * after `graceMs`. A pid now held by another process is `pid-reused` and
 * never signalled; one with no recorded start time is `unverifiable` and
 * never signalled. Nothing but the given processes is ever looked for.
 * With `dryRun`, what would be signalled is `still-running` and nothing is sent.
 */
export async function endProcesses(list: readonly { pid: number; start: string | null }[], opts: { graceMs: number; dryRun?: boolean }): Promise<Ended[]> {
  const out: Ended[] = list.map((p) => ({ pid: p.pid, start: p.start, outcome: "already-exited" as EndOutcome }));
  const live: Ended[] = [];
  for (const e of out) {
    if (e.start === null) {
      e.outcome = "unverifiable";
      continue;
    }
    const now = running(e.pid, e.start);
    if (now === "gone") continue;
    if (now === "reused") {
      e.outcome = "pid-reused";
      continue;
    }
    e.outcome = "still-running";
    live.push(e);
  }
  if (opts.dryRun || live.length === 0) return out;
  const signalled: Ended[] = [];
  for (const e of live) {
    // Checked again right before the signal: the pid must still be this process.
    const now = running(e.pid, e.start!);
    if (now !== "yes") {
      e.outcome = now === "gone" ? "already-exited" : "pid-reused";
      continue;
    }
    const r = signal(e.pid, "SIGTERM");
    if (r === "denied") e.outcome = "access-denied";
    else if (r === "gone") e.outcome = "already-exited";
    else signalled.push(e);
  }
  const waitGone = async (xs: Ended[], ms: number) => {
    const until = Date.now() + ms;
    for (;;) {
      const left = xs.filter((e) => running(e.pid, e.start!) === "yes");
      if (left.length === 0 || Date.now() >= until) return left;
      await sleep(20);
    }
  };
  const stubborn = await waitGone(signalled, opts.graceMs);
  for (const e of signalled) if (!stubborn.includes(e)) e.outcome = "terminated";
  for (const e of stubborn) {
    if (running(e.pid, e.start!) !== "yes") {
      e.outcome = "terminated";
      continue;
    }
    const r = signal(e.pid, "SIGKILL");
    e.outcome = r === "denied" ? "access-denied" : "killed";
  }
  const left = await waitGone(
    stubborn.filter((e) => e.outcome === "killed"),
    2000,
  );
  for (const e of left) e.outcome = "still-running";
  return out;
}
