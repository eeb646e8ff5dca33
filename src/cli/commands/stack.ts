import { Exit, UnwindError, usage } from "../../domain/errors.js";
import { GitError } from "../../git/git.js";
import type { Context } from "../../repo/context.js";
import type { Globals } from "../globals.js";
import { table, type Output } from "../render.js";
import { open } from "./common.js";

const STACK_REFS = "refs/unwind/stacks/";

interface StackEntry {
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
 * and whose message records the branch. Pushes are create-only ref updates:
 * two concurrent pushes cannot take the same slot.
 */
export async function stack(globals: Globals, verb: "push" | "list" | "clear", opts: { task: string; branch?: string }): Promise<Output> {
  const ctx = await open(globals);
  if (ctx.mode !== "git") throw usage("stacks need a git repository");
  await checkTask(ctx, opts.task);
  if (verb === "list") {
    const entries = await listStack(ctx, opts.task);
    const human = entries.length ? table([["N", "BRANCH", "COMMIT", "PARENT"], ...entries.map((e) => [String(e.n), e.branch, e.commit.slice(0, 8), e.parentBranch ?? "-"])]) : `no stack for task ${opts.task}`;
    return { json: { task: opts.task, entries }, human, exit: Exit.ok };
  }
  if (verb === "clear") {
    if (opts.branch) throw usage("--branch goes with push");
    const refs = await ctx.git(["for-each-ref", "--format=%(refname) %(objectname)", `${STACK_REFS}${opts.task}/`]);
    const lines = refs.stdout.toString("utf8").split("\n").filter(Boolean);
    if (lines.length) await ctx.git(["update-ref", "--stdin"], { input: lines.map((l) => `delete ${l}`).join("\n") + "\n" });
    return { json: { task: opts.task, cleared: lines.length }, human: `cleared ${lines.length} stack entr${lines.length === 1 ? "y" : "ies"} of task ${opts.task}`, exit: Exit.ok };
  }
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
    const entries = await listStack(ctx, opts.task);
    const n = entries.length ? entries[entries.length - 1]!.n + 1 : 0;
    const meta = { branch, commit, parentBranch: entries.length ? entries[entries.length - 1]!.branch : null, at: new Date().toISOString() };
    const env = { GIT_AUTHOR_NAME: "unwind", GIT_AUTHOR_EMAIL: "unwind@localhost", GIT_COMMITTER_NAME: "unwind", GIT_COMMITTER_EMAIL: "unwind@localhost" };
    const tree = (await ctx.git(["rev-parse", `${commit}^{tree}`])).stdout.toString("utf8").trim();
    const c = (await ctx.git(["commit-tree", tree, "-p", commit, "-F", "-"], { input: JSON.stringify(meta) + "\n", env })).stdout.toString("utf8").trim();
    try {
      await ctx.git(["update-ref", `${STACK_REFS}${opts.task}/${n}`, c, ""]);
      return { json: { task: opts.task, n, ...meta }, human: `pushed ${branch} as entry ${n} of task ${opts.task}`, exit: Exit.ok };
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      // Lost the race for slot n: read the stack again and take the next one.
    }
  }
  throw new UnwindError("E_LOCKED", `could not push to the stack of task ${opts.task}: too many concurrent pushes`, { hint: "try again" });
}
