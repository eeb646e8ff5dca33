/** One line of `/proc/<pid>/stat`, the fields a run needs to know a process by. */
export interface ProcStat {
  pid: number;
  comm: string;
  /** R, S, D, Z (zombie: exited, not yet reaped), X (dead), T, … */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /**
   * Field 22: when the process started, in clock ticks since boot. With the
   * pid it names one process for the life of the machine: a pid the kernel
   * hands out again belongs to a process that started later.
   */
  start: string;
}

/**
 * Parses `/proc/<pid>/stat`. The command name (field 2) sits in
 * parentheses and may itself hold spaces and parentheses (`(a) (b)`), so
 * the fields after it are counted from the last `)`, as the kernel writes
 * nothing after the name that could hold one. Null for anything else.
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 1 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const rest = text
    .slice(close + 2)
    .trim()
    .split(" ");
  // rest[0] is field 3 (state); field n is rest[n - 3].
  const [state, ppid, pgrp, session, start] = [rest[0], rest[1], rest[2], rest[3], rest[19]];
  if (!Number.isInteger(pid) || pid < 1 || !state || start === undefined || !/^\d+$/.test(start)) return null;
  const nums = [ppid, pgrp, session].map(Number);
  if (nums.some((n) => !Number.isInteger(n))) return null;
  return { pid, comm: text.slice(open + 1, close), state, ppid: nums[0]!, pgrp: nums[1]!, session: nums[2]!, start };
}

/** A process that has exited: a zombie waits only for its parent to reap it, and cannot be signalled into doing anything. */
export const hasExited = (s: ProcStat): boolean => s.state === "Z" || s.state === "X" || s.state === "x";
