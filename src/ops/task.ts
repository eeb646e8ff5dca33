import type { Context } from "../repo/context.js";
import { ensureStore } from "../repo/context.js";
import { startTask, type TaskBinding } from "../scope/task.js";

/** Binds a task to a branch (and its worktree), recording the fork point (SPEC section 6). */
export async function taskStart(ctx: Context, task: string, opts: { branch?: string | undefined; worktree?: string | undefined; onto?: string | undefined } = {}): Promise<TaskBinding> {
  await ensureStore(ctx);
  return startTask(ctx, task, opts);
}
