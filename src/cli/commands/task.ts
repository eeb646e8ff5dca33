import { Exit, usage } from "../../domain/errors.js";
import type { Globals } from "../globals.js";
import { table, when, type Output } from "../render.js";
import { openFor } from "./common.js";

export async function taskStart(globals: Globals, task: string, opts: { branch?: string; worktree?: string; onto?: string }): Promise<Output> {
  const u = await openFor(globals);
  const b = await u.taskStart(task, opts);
  const human = `task ${b.task}: branch ${b.branch} onto ${b.onto}, forked at ${b.fork!.slice(0, 8)}${b.worktree ? `, worktree ${b.worktree}` : ""}`;
  return { json: b, human, exit: Exit.ok };
}

export async function stack(globals: Globals, verb: "push" | "list" | "clear", opts: { task: string; branch?: string }): Promise<Output> {
  if (verb !== "push" && opts.branch) throw usage("--branch goes with push");
  const u = await openFor(globals);
  if (verb === "list") {
    const r = await u.stackList(opts.task);
    const rows = r.entries.map((e) => [String(e.n), e.branch, e.commit.slice(0, 8), e.parentBranch ?? "-", when(e.at)]);
    return { json: r, human: rows.length ? table([["N", "BRANCH", "COMMIT", "PARENT", "PUSHED"], ...rows]) : `no stack for task ${opts.task}`, exit: Exit.ok };
  }
  if (verb === "clear") {
    const r = await u.stackClear(opts.task);
    return { json: r, human: `cleared ${r.cleared} stack entr${r.cleared === 1 ? "y" : "ies"} of task ${r.task}`, exit: Exit.ok };
  }
  const r = await u.stackPush(opts.task, { branch: opts.branch });
  return { json: r, human: `pushed ${r.branch} as entry ${r.n} of task ${r.task}`, exit: Exit.ok };
}

export async function taskList(globals: Globals): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.taskList();
  if (r.tasks.length === 0) return { json: r, human: "no tasks (label sessions with UNWIND_TASK, runs with --task, or bind a branch with unwind task start T)", exit: Exit.ok };
  const rows = r.tasks.map((t) => [
    t.task,
    t.bindings.map((b) => `${b.branch} -> ${b.onto}${b.source === "sdd" ? " (orchestrator)" : ""}`).join(", ") || "-",
    String(t.sessions.length),
    String(t.runs.length),
    t.last === null ? "-" : when(t.last),
  ]);
  return { json: r, human: table([["TASK", "BRANCH", "SESSIONS", "RUNS", "LAST"], ...rows]), exit: Exit.ok };
}
