import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acquire } from "../../src/store/lock.js";
import { makeRepo, read, unwind, write } from "../helpers.js";
import { claudePayload, hook } from "../journal-helpers.js";

/*
 * A shell call's post capture that outlives the hook's budget is finished by
 * a process of its own (src/capture/finish-later.ts), and the window still
 * closes at the post: a person's edit made while the finisher runs is told
 * apart from the call's work. The finisher is made late here by holding the
 * store lock while the person edits, with the hook's budget cut so its own
 * capture gives up at once.
 */

const N = 120;
const original = (i: number) => `export const v${i} = ${i};\n`;
const SESSION = "late0000-0000-0000-0000-000000000000";

function records(root: string): Record<string, unknown>[] {
  const dir = join(root, ".git", "unwind", "journal");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n").filter(Boolean))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pre hook, the call's effect, then the post hook, out of time, with `meanwhile` done while the finisher waits. */
async function lateCall(root: string, id: string, meanwhile: () => void) {
  const bash = { command: "sed -i s/v/w/ src/*.ts" };
  expect(hook(root, "claude", claudePayload(root, SESSION, "PreToolUse", "Bash", bash, id)).code).toBe(0);
  for (let i = 0; i < N; i++) write(root, `src/f${i}.ts`, original(i).replace("v", "w"));
  write(root, "src/added.ts", "new\n");
  rmSync(join(root, "src", `f${N - 1}.ts`));
  // The post comes a moment after the command ended (the margin ctimes are judged with).
  await new Promise((r) => setTimeout(r, 400));
  const release = await acquire(join(root, ".git", "unwind"), "test: the finisher waits", 5000);
  const post = hook(root, "claude", claudePayload(root, SESSION, "PostToolUse", "Bash", bash, id), { UNWIND_HOOK_BUDGET_MS: "300" });
  expect([post.code, post.stdout]).toEqual([0, ""]);
  try {
    meanwhile();
  } finally {
    release();
  }
  await until("the finisher's post record", () => records(root).some((r) => r.call === id && r.phase === "post"));
  const mine = records(root).filter((r) => r.call === id && r.phase === "post");
  expect(mine).toHaveLength(1);
  return mine[0]!;
}

describe("a shell call's post that outlives the hook's budget", () => {
  it("is finished by a process of its own, closes the window at the post, and tells a person's edit made meanwhile apart", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < N; i++) files[`src/f${i}.ts`] = original(i);
    files["notes.md"] = "mine\n";
    const root = makeRepo(files);
    const post = await lateCall(root, "toolu_late_1", () => {
      write(root, "src/f7.ts", "the person's edit of a file the call changed\n");
      write(root, "notes.md", "the person's edit of a file the call left alone\n");
      write(root, "person.md", "the person's new file\n");
    });
    const errors = readFileSync(join(root, ".git", "unwind", "errors.jsonl"), "utf8");
    expect(errors).toMatch(/capture-timeout.*finished by process \d+, the window closed at/);
    // Closed by its own post (no closedBy), sealed when the post came, the person's paths in doubt.
    expect(post.closedBy).toBeUndefined();
    expect(typeof post.sealedAt).toBe("string");
    expect((post.sealedAt as string) < (post.at as string)).toBe(true);
    expect([...(post.doubt as string[])].sort()).toEqual(["notes.md", "person.md", "src/f7.ts"]);

    // The session's next event waited for the finisher: its snapshot lies after the window.
    expect(hook(root, "claude", claudePayload(root, SESSION, "PreToolUse", "Bash", { command: "ls" }, "toolu_late_2")).code).toBe(0);
    const next = records(root).find((r) => r.call === "toolu_late_2")!;
    expect((next.at as string) > (post.at as string)).toBe(true);

    const dry = unwind(root, ["undo", "--call", "toolu_late_1", "--dry-run", "--json"]);
    const items = new Map((dry.json.items as { path: string; action: string; reason: string | null }[]).map((i) => [i.path, i]));
    expect(items.get("src/f7.ts")).toMatchObject({ action: "conflict", reason: "changed-since" });
    expect(items.get("notes.md")).toMatchObject({ action: "conflict", reason: "changed-since" });
    expect(items.get("person.md")).toMatchObject({ action: "conflict" });
    expect(items.get("src/f0.ts")).toMatchObject({ action: "restore" });
    expect(items.get(`src/f${N - 1}.ts`)).toMatchObject({ action: "restore" });
    expect(items.get("src/added.ts")).toMatchObject({ action: "delete" });
    expect(dry.json.counts).toMatchObject({ restore: N - 1, delete: 1, conflict: 3 });

    const undo = unwind(root, ["undo", "--call", "toolu_late_1", "--json"]);
    expect(undo.code, undo.stderr).toBe(1); // done as far as safe: the person's three paths remain
    expect(read(root, "src/f7.ts")).toBe("the person's edit of a file the call changed\n");
    expect(read(root, "notes.md")).toBe("the person's edit of a file the call left alone\n");
    expect(read(root, "person.md")).toBe("the person's new file\n");
    expect(read(root, "src/f0.ts")).toBe(original(0));
    expect(read(root, `src/f${N - 1}.ts`)).toBe(original(N - 1));
    expect(existsSync(join(root, "src", "added.ts"))).toBe(false);
  }, 60_000);

  it("control: with nothing done meanwhile, the finished post vouches for every path and the undo is whole", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < N; i++) files[`src/f${i}.ts`] = original(i);
    const root = makeRepo(files);
    const post = await lateCall(root, "toolu_late_3", () => undefined);
    expect(post.closedBy).toBeUndefined();
    expect(post.doubt).toBeUndefined();
    const undo = unwind(root, ["undo", "--call", "toolu_late_3", "--json"]);
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.json.counts).toMatchObject({ restore: N, delete: 1, conflict: 0 });
    for (const i of [0, 7, N - 1]) expect(read(root, `src/f${i}.ts`)).toBe(original(i));
  }, 60_000);
});
