import { existsSync, readdirSync, readFileSync } from "node:fs";
import { parseProcStat, type ProcStat } from "../domain/proc-stat.js";

/**
 * The process table as Linux shows it in /proc. Elsewhere there is no
 * /proc to read: a run then knows only its child and its process group
 * (docs/design.md, "Run capsules").
 */
export const hasProcTable = (): boolean => existsSync("/proc/self/stat");

/** One process's stat line, parsed; null once it is gone (or on a system without /proc). */
export function procStat(pid: number): ProcStat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return null;
  }
}

/** Every process visible now. A process that ends while the table is read is simply not in it. */
export function procTable(): ProcStat[] {
  const out: ProcStat[] = [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const n of names) {
    if (n.charCodeAt(0) < 48 || n.charCodeAt(0) > 57) continue;
    const s = procStat(Number(n));
    if (s) out.push(s);
  }
  return out;
}

/** The environment a process started with; null when it is gone or not ours to read. */
export function procEnviron(pid: number): Buffer | null {
  try {
    return readFileSync(`/proc/${pid}/environ`);
  } catch {
    return null;
  }
}

/** A process's argv as it runs now (after every exec); null when it is gone, a zombie, or not ours to read. */
export function procCmdline(pid: number): string[] | null {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`).toString("utf8").split("\0");
    if (argv.at(-1) === "") argv.pop();
    return argv.length > 0 ? argv : null;
  } catch {
    return null;
  }
}

export type SignalResult = "sent" | "gone" | "denied";

/** Sends one signal to one pid (or, negative, a process group). */
export function signal(pid: number, sig: NodeJS.Signals | 0): SignalResult {
  try {
    process.kill(pid, sig);
    return "sent";
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EPERM") return "denied";
    if (code === "ESRCH") return "gone";
    throw e;
  }
}

/** Whether a process of that pid exists (one of another user's counts): never a group, so a pid read from a file below 1 is none. */
export function alive(pid: number): boolean {
  return Number.isInteger(pid) && pid > 0 && signal(pid, 0) !== "gone";
}
