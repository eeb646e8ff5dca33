import type { Context } from "../repo/context.js";
import { ensureStore } from "../repo/context.js";
import { allBindings, startTask, type TaskBinding } from "../scope/task.js";
import { existsSync } from "node:fs";
import { readJournal } from "../store/journal.js";
import { Capsules } from "../store/capsules.js";

/** Binds a task to a branch (and its worktree), recording the fork point (SPEC section 6). */
export async function taskStart(ctx: Context, task: string, opts: { branch?: string | undefined; worktree?: string | undefined; onto?: string | undefined } = {}): Promise<TaskBinding> {
  await ensureStore(ctx);
  return startTask(ctx, task, opts);
}

/** One task and the evidence that it exists: what `--task T` would go on. */
export interface TaskSummary {
  task: string;
  /** Branches it is bound to: by `task start` (source "unwind") or an orchestrator's session record ("sdd"). */
  bindings: TaskBinding[];
  /** Sessions with calls labelled with the task (`UNWIND_TASK`, `record --task`). */
  sessions: string[];
  /** Run capsules labelled with it, newest first. */
  runs: string[];
  /** The earliest and latest time on that evidence (a binding's, a call's, a run's); null when none has one. */
  first: string | null;
  last: string | null;
}

/** Every task with its evidence, the most recently active first (SPEC section 4, `task list`). Reads only. */
export async function taskList(ctx: Context): Promise<{ tasks: TaskSummary[] }> {
  const byTask = new Map<string, TaskSummary>();
  const of = (task: string) => {
    let t = byTask.get(task);
    if (t === undefined) byTask.set(task, (t = { task, bindings: [], sessions: [], runs: [], first: null, last: null }));
    return t;
  };
  const seen = (t: TaskSummary, at: string | undefined) => {
    if (!at) return;
    if (t.first === null || at < t.first) t.first = at;
    if (t.last === null || at > t.last) t.last = at;
  };
  for (const b of await allBindings(ctx)) {
    const t = of(b.task);
    t.bindings.push(b);
    seen(t, b.at);
  }
  if (existsSync(ctx.store)) {
    for (const r of readJournal(ctx.store).records) {
      if (!r.task) continue;
      const t = of(r.task);
      if (!t.sessions.includes(r.session)) t.sessions.push(r.session);
      seen(t, r.at);
    }
    const capsules = new Capsules(ctx);
    for (const id of capsules.ids()) {
      const c = capsules.tryRead(id);
      if (!c?.task) continue;
      const t = of(c.task);
      t.runs.push(id);
      seen(t, c.startedAt);
    }
  }
  const tasks = [...byTask.values()].sort((a, b) => (b.last ?? "").localeCompare(a.last ?? "") || a.task.localeCompare(b.task));
  return { tasks };
}
