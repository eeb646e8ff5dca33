/**
 * Claude Code's subagents through `unwind hook claude`, with payloads in the
 * shape Claude Code 2.1.332 really sent (test/fixtures/hooks/claude/subagent-*,
 * from test/real/claude-subagents.test.ts): the subagent's calls carry the
 * parent's session_id plus agent_id/agent_type. A parent and its subagent
 * run at once in one session, so each one's event closes what the other left
 * open; the closing record must name the closed call's subagent, not the
 * closing event's. `unwind log` names the subagent after the tool.
 */
import { readdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { makeRepo, read, treeState, unwind, write } from "../helpers.js";
import { hook } from "../journal-helpers.js";

const AGENT = "a950bcfbb96dbf2ad";
const SESSION = "claude:3f6c1d2e-8a4b-4c7e-9b1f-5d2a7e9c0b14";

/** A fixture payload re-pointed at `root`, with fields patched. */
function payload(name: string, root: string, patch: Record<string, unknown> = {}): string {
  const text = readFileSync(new URL(`../fixtures/hooks/claude/${name}.json`, import.meta.url), "utf8");
  return JSON.stringify({ ...(JSON.parse(text.split("/home/dev/projects/webapp").join(root)) as object), ...patch });
}

function send(root: string, name: string, patch: Record<string, unknown> = {}): void {
  const r = hook(root, "claude", payload(name, root, patch));
  expect([r.code, r.stdout, r.stderr]).toEqual([0, "", ""]);
}

interface Rec {
  call: string;
  phase: string;
  agent?: string;
  agentType?: string;
  closedBy?: string;
}

function journal(root: string): Rec[] {
  const dir = join(root, ".git", "unwind", "journal");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n"))
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Rec);
}

const PARENT_BASH = "toolu_01Ts6GhY2wKeP9mVrL4nBdQx";
const PARENT_WRITE = "toolu_01HpQ7sVbN3xKc2LrT9mWzEa";
const SUB_WRITE = "toolu_01Ag2ZrU6yLfM8kPcT3xHwNs";
const SUB_BASH = "toolu_01Sb7QnV4kRmX2cJ8tLpWyDe";

/**
 * The parent's shell command runs while its subagent writes a file; then the
 * subagent's shell command runs while the parent writes one.
 */
const COMMITTED = { "README.md": "readme\n", "doomed.txt": "doomed\n", "src/lib/keep.ts": "keep\n" };

function interleaved(): { root: string; committed: Record<string, string> } {
  const root = makeRepo(COMMITTED);
  const committed = treeState(root);
  send(root, "bash.pre");
  send(root, "subagent-write.pre");
  write(root, "sub.txt", "from the subagent\n");
  send(root, "subagent-write.post");
  write(root, "lint.txt", "fixed\n");
  send(root, "bash.post");
  send(root, "subagent-bash.pre");
  send(root, "write.pre");
  write(root, "src/lib/slugify.ts", "export function slugify() {}\n");
  send(root, "write.post");
  write(root, "sub-shell.txt", "shell\n");
  unlinkSync(join(root, "doomed.txt"));
  send(root, "subagent-bash.post");
  return { root, committed };
}

describe("Claude Code subagents (payloads as 2.1.332 sent them)", () => {
  let root: string;
  let committed: Record<string, string>;
  beforeAll(() => {
    ({ root, committed } = interleaved());
  }, 60_000);

  it("a record closing another call names that call's subagent, not the closing event's", () => {
    const records = journal(root);
    // The scenario did what it is for: each side closed the other's open call.
    expect(records.filter((r) => r.closedBy !== undefined).map((r) => `${r.call} ${r.closedBy}`)).toEqual([`${PARENT_BASH} next-event`, `${SUB_BASH} next-event`]);
    const sub = new Set([SUB_WRITE, SUB_BASH]);
    for (const r of records) {
      expect([r.call, r.phase, r.closedBy, r.agent, r.agentType]).toEqual([r.call, r.phase, r.closedBy, sub.has(r.call) ? AGENT : undefined, sub.has(r.call) ? "general-purpose" : undefined]);
    }
  });

  it("the subagent's calls are the parent session's, each named and credited exactly its paths", () => {
    const sessions = unwind(root, ["sessions", "--json"]).json.sessions as Array<{ session: string; agents: string[] }>;
    expect(sessions.map((s) => [s.session, s.agents])).toEqual([[SESSION, [AGENT]]]);
    expect(unwind(root, ["sessions"]).stdout).toMatch(new RegExp(`^\\S+ +claude +${AGENT} `, "m"));
    const calls = unwind(root, ["log", "--json"]).json.calls as Array<{ call: string; tool: string; paths: string[]; agent?: string; agentType?: string }>;
    expect(Object.fromEntries(calls.map((c) => [c.call, [c.tool, [...c.paths].sort().join(" "), c.agent ?? "-", c.agentType ?? "-"]]))).toEqual({
      [PARENT_BASH]: ["Bash", "lint.txt", "-", "-"],
      [SUB_WRITE]: ["Write", "sub.txt", AGENT, "general-purpose"],
      [SUB_BASH]: ["Bash", "doomed.txt sub-shell.txt", AGENT, "general-purpose"],
      [PARENT_WRITE]: ["Write", "src/lib/slugify.ts", "-", "-"],
    });
  });

  it("unwind log names the subagent after the tool, by its type, in 80 columns", () => {
    const r = unwind(root, ["log"]);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout.trimEnd().split("\n");
    expect(rows[0]).toMatch(/^WHEN +SESSION +TOOL +CALL +PATHS$/);
    const row = (paths: string) => rows.find((l) => l.endsWith(`  ${paths}`)) ?? `no row for ${paths}`;
    expect(row("doomed.txt sub-shell.txt")).toMatch(/ Bash agent:general-purpose +\S+ +doomed\.txt sub-shell\.txt$/);
    expect(row("sub.txt")).toMatch(/ Write agent:general-purpose +\S+ +sub\.txt$/);
    expect(row("lint.txt")).toMatch(/ Bash +\S+ +lint\.txt$/);
    expect(row("src/lib/slugify.ts")).toMatch(/ Write +\S+ +src\/lib\/slugify\.ts$/);
    expect(rows.filter((l) => l.includes("agent:"))).toHaveLength(2);
    expect(
      rows.filter((l) => l.length > 80),
      r.stdout,
    ).toEqual([]);
  });

  it("undo --call takes back one of the subagent's calls; undo of the parent session takes back the rest, the parent's and the subagent's", () => {
    const one = unwind(root, ["undo", "--session", SESSION, "--call", SUB_BASH, "--json"]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.json.items.map((i: { path: string; action: string }) => `${i.path} ${i.action}`)).toEqual(["doomed.txt restore", "sub-shell.txt delete"]);
    expect(read(root, "sub.txt")).toBe("from the subagent\n");
    const undo = unwind(root, ["undo", "--session", SESSION, "--json"]);
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.json.counts.conflict).toBe(0);
    expect(treeState(root)).toEqual(committed);
  });

  it("a subagent's call left open, closed by the next command that reads the record, keeps its subagent", () => {
    const repo = makeRepo({ "README.md": "readme\n" });
    send(repo, "subagent-bash.pre");
    write(repo, "late.txt", "late\n");
    expect(unwind(repo, ["log", "--json"]).code).toBe(0);
    const records = journal(repo);
    expect(records.map((r) => [r.phase, r.closedBy, r.agent, r.agentType])).toEqual([
      ["pre", undefined, AGENT, "general-purpose"],
      ["post", "read", AGENT, "general-purpose"],
    ]);
  });

  it("a subagent with no type is named by its id", () => {
    const repo = makeRepo({ "README.md": "readme\n" });
    send(repo, "subagent-write.pre", { agent_type: undefined });
    write(repo, "sub.txt", "from the subagent\n");
    send(repo, "subagent-write.post", { agent_type: undefined });
    expect(unwind(repo, ["log"]).stdout).toMatch(new RegExp(` Write agent:${AGENT} +\\S+ +sub\\.txt\\n`));
  });
});
