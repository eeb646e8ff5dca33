import type { ProcStat } from "./proc-stat.js";

/** How a run came to own a process (SPEC section 9: the child and every descendant seen while it lasts). */
export type Ownership = "child" | "descendant" | "group" | "environ";

export interface Identity {
  pid: number;
  start: string;
}

const sameAge = (a: string, b: string) => BigInt(a) >= BigInt(b);

/**
 * Which processes of one reading of the process table a run takes as its
 * own, beyond those it already owns (by pid and start time): a child of an
 * owned process, or a member of the child's process group or session. Only
 * processes that started no earlier than the child are candidates: nothing
 * older can descend from it. Pure; a chain of new processes in one reading
 * is followed to its end.
 */
export function adopt(table: readonly ProcStat[], owned: ReadonlyMap<number, string>, child: Identity): { stat: ProcStat; how: Ownership }[] {
  const out: { stat: ProcStat; how: Ownership }[] = [];
  const live = new Map(table.map((s) => [s.pid, s]));
  const mine = new Map(owned);
  // A parent is ours when the pid we own is still the process we saw (or has just gone, leaving its pid unused).
  const ownsPid = (pid: number) => {
    const start = mine.get(pid);
    if (start === undefined) return false;
    const now = live.get(pid);
    return !now || now.start === start;
  };
  const candidates = table.filter((s) => mine.get(s.pid) !== s.start && sameAge(s.start, child.start)).sort((a, b) => (BigInt(a.start) < BigInt(b.start) ? -1 : 1));
  let grew = true;
  while (grew) {
    grew = false;
    for (const s of candidates) {
      if (mine.get(s.pid) === s.start) continue;
      const how: Ownership | null = s.pid === child.pid && s.start === child.start ? "child" : ownsPid(s.ppid) ? "descendant" : s.pgrp === child.pid || s.session === child.pid ? "group" : null;
      if (!how) continue;
      mine.set(s.pid, s.start);
      out.push({ stat: s, how });
      grew = true;
    }
  }
  return out;
}

/**
 * The variable a run sets in its child's environment, naming this one run
 * by a random key: a descendant that escaped the tree (setsid, its parent
 * gone) still carries it. Not `UNWIND_RUN`, the run's id: two runs of one
 * id in two work trees (`--id build`) would each take the other's
 * processes for their own, and one's timeout ended the other's command
 * (two copies of the run tests side by side did, every time).
 */
export const RUN_KEY_VAR = "UNWIND_RUN_KEY";

export function carriesRun(environ: Buffer, runKey: string): boolean {
  return environ.toString("latin1").split("\0").includes(`${RUN_KEY_VAR}=${runKey}`);
}
