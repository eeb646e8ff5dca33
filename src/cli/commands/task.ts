import { startTask } from "../../scope/task.js";
import { Exit } from "../../domain/errors.js";
import { ensureStore } from "../../repo/context.js";
import type { Globals } from "../globals.js";
import type { Output } from "../render.js";
import { open } from "./common.js";

export async function taskStart(globals: Globals, task: string, opts: { branch?: string; worktree?: string; onto?: string }): Promise<Output> {
  const ctx = await open(globals);
  await ensureStore(ctx);
  const b = await startTask(ctx, task, opts);
  const human = `task ${b.task}: branch ${b.branch} onto ${b.onto}, forked at ${b.fork!.slice(0, 8)}${b.worktree ? `, worktree ${b.worktree}` : ""}`;
  return { json: b, human, exit: Exit.ok };
}
