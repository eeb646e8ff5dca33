import { UnwindError, usage } from "../domain/errors.js";
import { GitError } from "../git/git.js";
import type { Context } from "../repo/context.js";

const STACK_REFS = "refs/unwind/stacks/";

export interface StackEntry {
  n: number;
  branch: string;
  commit: string;
  parentBranch: string | null;
  at: string;
}

async function checkTask(ctx: Context, task: string): Promise<void> {
  const r = await ctx.git(["check-ref-format", `${STACK_REFS}${task}/0`], { okCodes: [1] });
  if (r.code !== 0 || task.includes("/")) throw usage(`--task ${task}: not usable in a ref name`, "use letters, digits, '-', '_' and '.'");
}

async function listStack(ctx: Context, task: string): Promise<StackEntry[]> {
  const r = await ctx.git(["for-each-ref", "--format=%(refname)%00%(contents)%00", `${STACK_REFS}${task}/`]);
  const out: StackEntry[] = [];
  for (const rec of r.stdout.toString("utf8").split("\0\n")) {
    if (!rec) continue;
    const [ref, body] = rec.split("\0");
    try {
      const meta = JSON.parse((body ?? "").trim()) as Omit<StackEntry, "n">;
      out.push({ ...meta, n: Number(ref!.slice(ref!.lastIndexOf("/") + 1)) });
    } catch {
      /* foreign ref */
    }
  }
  return out.sort((a, b) => a.n - b.n);
}

/**
 * A task's ordered branch stack: `refs/unwind/stacks/<task>/<n>`, each a
 * small commit whose parent is the branch tip (so the work stays reachable)
 * and whose message records the branch.
 */
async function stackRepo(ctx: Context, task: string): Promise<void> {
  if (ctx.mode !== "git") throw usage("stacks need a git repository");
  await checkTask(ctx, task);
}

/** The task's stack, bottom first. */
export async function stackList(ctx: Context, task: string): Promise<{ task: string; entries: StackEntry[] }> {
  await stackRepo(ctx, task);
  return { task, entries: await listStack(ctx, task) };
}

/** Removes every entry of the task's stack (the branches stay). */
export async function stackClear(ctx: Context, task: string): Promise<{ task: string; cleared: number }> {
  await stackRepo(ctx, task);
  const refs = await ctx.git(["for-each-ref", "--format=%(refname) %(objectname)", `${STACK_REFS}${task}/`]);
  const lines = refs.stdout.toString("utf8").split("\n").filter(Boolean);
  if (lines.length) await ctx.git(["update-ref", "--stdin"], { input: lines.map((l) => `delete ${l}`).join("\n") + "\n" });
  return { task, cleared: lines.length };
}

/**
 * Pushes a branch (default: the current one) on the task's stack. Pushes are
 * create-only ref updates: two concurrent pushes cannot take the same slot.
 */
export async function stackPush(ctx: Context, task: string, opts: { branch?: string | undefined } = {}): Promise<StackEntry & { task: string }> {
  await stackRepo(ctx, task);
  let branch = opts.branch;
  if (!branch) {
    const head = await ctx.git(["symbolic-ref", "--quiet", "--short", "HEAD"], { okCodes: [1] });
    branch = head.stdout.toString("utf8").trim();
    if (!branch) throw usage("HEAD is detached", "name the branch with --branch");
  }
  const tip = await ctx.git(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`], { okCodes: [1] });
  const commit = tip.stdout.toString("utf8").trim();
  if (!commit) throw new UnwindError("E_SCOPE_UNKNOWN", `branch ${branch} does not exist`, { hint: "create the branch first, then push it" });
  for (let attempt = 0; attempt < 5; attempt++) {
    const entries = await listStack(ctx, task);
    const n = entries.length ? entries[entries.length - 1]!.n + 1 : 0;
    const meta = { branch, commit, parentBranch: entries.length ? entries[entries.length - 1]!.branch : null, at: new Date().toISOString() };
    const env = { GIT_AUTHOR_NAME: "unwind", GIT_AUTHOR_EMAIL: "unwind@localhost", GIT_COMMITTER_NAME: "unwind", GIT_COMMITTER_EMAIL: "unwind@localhost" };
    const tree = (await ctx.git(["rev-parse", `${commit}^{tree}`])).stdout.toString("utf8").trim();
    const c = (await ctx.git(["commit-tree", tree, "-p", commit, "-F", "-"], { input: JSON.stringify(meta) + "\n", env })).stdout.toString("utf8").trim();
    try {
      await ctx.git(["update-ref", `${STACK_REFS}${task}/${n}`, c, ""]);
      return { task, n, ...meta };
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      // Lost the race for slot n: read the stack again and take the next one.
    }
  }
  throw new UnwindError("E_LOCKED", `could not push to the stack of task ${task}: too many concurrent pushes`, { hint: "try again" });
}
