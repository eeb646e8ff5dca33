/**
 * Claude Code's subagents (the Agent tool) against the real client (issue 32
 * item 3): the fake model server has the parent call Agent, and serves the
 * subagent's own conversation (recognized by the prompt the parent handed it)
 * a Write and a Bash of its own. unwind must list the subagent's calls under
 * the PARENT session, name the subagent on each, credit each call exactly its
 * paths, and take back the parent's and the subagent's work together with
 * `undo --session`. Two runs: a subagent the parent waits for
 * (`run_in_background: false`), and one of a project's own agent type left in
 * the background (2.1.x's default), whose shell command runs while the parent
 * writes a file. `npm run test:real`; docs/clients.md, "Subagents".
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { git, gitStatus, makeRepo, tempDir, treeState, unwind } from "../helpers.js";
import { addRecorder, clientVersion, installClient, netnsProblem, type LogCall, type Payload, type RunResult, runClient, type Script, expectUndoRedo } from "./clients.js";

const FILES = {
  "a.txt": "alpha\n",
  "doomed.txt": "doomed\n",
  "README.md": "a repository for Claude Code's subagents\n",
};

/** A project's own agent type (`.claude/agents/<name>.md`): its name is what the subagent's payloads carry as agent_type. */
const SCRIBE = "---\nname: scribe\ndescription: Writes the files it is asked to write.\ntools: Bash, Write\n---\nYou write the files you are asked to write, nothing else.\n";

/** The call ids the fake server gives: the parent's `toolu_fake_00`, a subagent's `toolu_fake_<marker>_00`. */
const id = (i: number, marker?: string) => `toolu_fake_${marker === undefined ? "" : `${marker}_`}${String(i).padStart(2, "0")}`;

interface Case {
  marker: string;
  agentType: string;
  background: boolean;
  script: (repo: string) => Script;
  /** call id -> "<tool> <paths>" for every call that changed files. */
  calls: Record<string, string>;
  /** Of those, the subagent's. */
  subCalls: string[];
  changes: Record<string, string>;
}

const FOREGROUND: Case = {
  marker: "SUBAGENT-FG",
  agentType: "general-purpose",
  background: false,
  script: (repo) => ({
    steps: [
      {
        tool: "Agent",
        input: { description: "write two files", prompt: "SUBAGENT-FG: write sub.txt, then make sub-shell.txt and drop doomed.txt.", subagent_type: "general-purpose", run_in_background: false },
      },
      { tool: "Bash", input: { command: "echo parent >> a.txt", description: "the parent's own change" } },
    ],
    agents: {
      "SUBAGENT-FG": {
        steps: [
          { tool: "Write", input: { file_path: join(repo, "sub.txt"), content: "from the subagent\n" } },
          { tool: "Bash", input: { command: "rm doomed.txt && echo shell > sub-shell.txt", description: "the subagent's shell" } },
        ],
        final: "Sub done.",
      },
    },
    final: "Done.",
  }),
  calls: {
    [id(0, "SUBAGENT-FG")]: "Write sub.txt",
    [id(1, "SUBAGENT-FG")]: "Bash doomed.txt sub-shell.txt",
    [id(1)]: "Bash a.txt",
  },
  subCalls: [id(0, "SUBAGENT-FG"), id(1, "SUBAGENT-FG")],
  changes: { "a.txt": "modified", "doomed.txt": "deleted", "sub-shell.txt": "added", "sub.txt": "added" },
};

const BACKGROUND: Case = {
  marker: "SUBAGENT-BG",
  agentType: "scribe",
  background: true,
  script: (repo) => ({
    steps: [
      { tool: "Agent", input: { description: "write two files", prompt: "SUBAGENT-BG: make sub-shell.txt once parent.txt is there, then write sub.txt.", subagent_type: "scribe" } },
      // The parent goes on while its subagent runs: held back a little, this write lands inside the subagent's shell command.
      { tool: "Write", input: { file_path: join(repo, "parent.txt"), content: "from the parent\n" }, delayMs: 1500 },
    ],
    agents: {
      "SUBAGENT-BG": {
        steps: [
          // Waits (10 s at most) for the parent's write: the two calls' windows overlap.
          {
            tool: "Bash",
            input: { command: "for i in $(seq 100); do [ -e parent.txt ] && break; sleep 0.1; done; echo shell > sub-shell.txt", description: "the subagent's shell, waiting for the parent" },
          },
          { tool: "Write", input: { file_path: join(repo, "sub.txt"), content: "from the subagent\n" } },
        ],
        final: "Sub done.",
      },
    },
    final: "Done.",
  }),
  calls: {
    [id(0, "SUBAGENT-BG")]: "Bash sub-shell.txt",
    [id(1, "SUBAGENT-BG")]: "Write sub.txt",
    [id(1)]: "Write parent.txt",
  },
  subCalls: [id(0, "SUBAGENT-BG"), id(1, "SUBAGENT-BG")],
  changes: { "parent.txt": "added", "sub-shell.txt": "added", "sub.txt": "added" },
};

interface Outcome {
  repo: string;
  run: RunResult;
  committed: Record<string, string>;
  afterRun: Record<string, string>;
  afterRunStatus: string;
  sessions: Array<{ session: string; harness: string; agents: string[] }>;
  calls: Array<LogCall & { short: string; agent?: string; agentType?: string }>;
}

let problem: string | null | undefined;

function drive(c: Case): Outcome {
  problem ??= netnsProblem();
  if (problem !== null) throw new Error(`refusing to run claude: no loopback-only network namespace (${problem}). Nothing may leave the machine.`);
  const bin = installClient("claude");
  const repo = makeRepo(FILES);
  const work = tempDir("unwind-real-subagent-");
  mkdirSync(work, { recursive: true });
  const init = unwind(repo, ["init", "--claude"]);
  expect(init.code, init.stderr).toBe(0);
  addRecorder(repo, "claude", work);
  mkdirSync(join(repo, ".claude", "agents"), { recursive: true });
  writeFileSync(join(repo, ".claude", "agents", "scribe.md"), SCRIBE);
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "unwind init --claude, and an agent type");
  const committed = treeState(repo);

  const script = c.script(repo);
  const run = runClient("claude", bin, repo, script, work);
  if (run.refused) throw new Error(`refusing to run claude: ${run.refused}`);
  expect(run.ok, `the client failed\n${run.story}`).toBe(true);
  // Both conversations went through their whole script: the parent's and the subagent's.
  const served = (agent: string | undefined) => Math.max(-1, ...run.requests.filter((q) => q.agent === agent && Array.isArray(q.tools)).map((q) => q.done as number));
  expect(served(undefined), `the parent stopped before the end of its script\n${run.story}`).toBe(script.steps.length);
  expect(served(c.marker), `the subagent stopped before the end of its script\n${run.story}`).toBe(2);

  const keep = process.env.UNWIND_REAL_PAYLOADS;
  if (keep) {
    mkdirSync(keep, { recursive: true });
    writeFileSync(join(keep, `claude-${clientVersion("claude")}-subagent-${c.background ? "background" : "foreground"}.json`), JSON.stringify({ payloads: run.all, requests: run.requests }, null, 2));
  }
  return {
    repo,
    run,
    committed,
    afterRun: treeState(repo),
    afterRunStatus: gitStatus(repo),
    sessions: unwind(repo, ["sessions", "--json"]).json.sessions,
    calls: unwind(repo, ["log", "--json"]).json.calls,
  };
}

const sorted = (xs: string[]) => [...xs].sort();
const pre = (o: Outcome, call: string): Payload["payload"] => o.run.all.find((p) => p.payload.tool_use_id === call && p.payload.hook_event_name === "PreToolUse")!.payload;

for (const c of [FOREGROUND, BACKGROUND]) {
  describe(`claude ${clientVersion("claude")}: a ${c.background ? "background subagent of a project's own type" : "subagent the parent waits for"}`, () => {
    let o: Outcome;
    beforeAll(() => {
      o = drive(c);
    }, 300_000);

    it("the subagent's payloads carry agent_id and agent_type, under the parent's session_id", () => {
      const parent = pre(o, id(0));
      expect(parent.tool_name).toBe("Agent");
      expect("agent_id" in parent || "agent_type" in parent, "the Agent call itself is the parent's").toBe(false);
      const subs = c.subCalls.map((call) => pre(o, call));
      const agentId = subs[0]!.agent_id;
      expect(typeof agentId === "string" && agentId.length > 0, JSON.stringify(subs[0])).toBe(true);
      for (const p of subs) {
        expect([p.session_id, p.agent_id, p.agent_type, p.transcript_path]).toEqual([parent.session_id, agentId, c.agentType, parent.transcript_path]);
      }
      // A subagent left in the background is launched at once: the Agent call's response names it by the same id.
      if (c.background) {
        const at = (call: string, event: string) => o.run.all.findIndex((p) => p.payload.tool_use_id === call && p.payload.hook_event_name === event);
        expect(at(id(0, c.marker), "PreToolUse"), "the subagent's shell command began before the parent's write ended").toBeLessThan(at(id(1), "PostToolUse"));
        // The windows overlap: the parent's write began before the shell command ended (the command waits for the file it
        // makes). Which of the two posts comes first is a race: the command sees the file within 0.1 s, often before the
        // parent's post hook is started.
        expect(at(id(1), "PreToolUse"), "the parent's write began before the subagent's shell command ended").toBeLessThan(at(id(0, c.marker), "PostToolUse"));
        const post = o.run.all.find((p) => p.payload.tool_use_id === id(0) && p.payload.hook_event_name === "PostToolUse")!.payload;
        expect(post.tool_response).toMatchObject({ isAsync: true, status: "async_launched", agentId });
      }
    });

    it("one session, the parent's: the subagent's calls are listed under it, each naming the subagent", () => {
      expect(
        o.sessions.map((s) => s.harness),
        o.run.story,
      ).toEqual(["claude"]);
      const session = o.sessions[0]!.session;
      expect(session).toBe(`claude:${String(pre(o, id(0)).session_id)}`);
      expect(o.calls.every((x) => x.session === session)).toBe(true);
      const agentId = String(pre(o, c.subCalls[0]!).agent_id);
      expect(o.sessions[0]!.agents).toEqual([agentId]);
      for (const x of o.calls) {
        const sub = c.subCalls.includes(x.call);
        expect([x.call, x.agent, x.agentType]).toEqual([x.call, sub ? agentId : undefined, sub ? c.agentType : undefined]);
      }
    });

    it("credits each call, the parent's and the subagent's, with exactly its paths", () => {
      const got = Object.fromEntries(o.calls.filter((x) => x.paths.length > 0).map((x) => [x.call, `${x.tool} ${sorted(x.paths).join(" ")}`]));
      expect(got, `unwind log:\n${JSON.stringify(o.calls, null, 1)}\n${o.run.story}`).toEqual(c.calls);
      const changes = unwind(o.repo, ["changes", "--session", o.sessions[0]!.session, "--json"]);
      expect(changes.code, changes.stderr).toBe(0);
      const entries = changes.json.entries as Array<{ path: string; change: string; shared?: unknown }>;
      expect(Object.fromEntries(entries.map((e) => [e.path, e.change]))).toEqual(c.changes);
      expect(entries.filter((e) => e.shared !== undefined)).toEqual([]);
      const status = unwind(o.repo, ["status", "--json"]);
      expect(status.json.errors, JSON.stringify(status.json.errors)).toEqual([]);
    });

    it("unwind log names the subagent after the tool, within 80 columns", () => {
      const r = unwind(o.repo, ["log"]);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.trimEnd().split("\n");
      const short = (call: string) => o.calls.find((x) => x.call === call)!.short;
      for (const call of Object.keys(c.calls)) {
        const line = lines.find((l) => l.includes(`  ${short(call)}  `))!;
        expect(line, r.stdout).toBeDefined();
        expect(line.includes(` agent:${c.agentType}  `), line).toBe(c.subCalls.includes(call));
      }
      expect(
        lines.filter((l) => l.length > 80),
        r.stdout,
      ).toEqual([]);
    });

    it("undo of the parent session takes back the subagent's work too; redo brings it all back", () => {
      expectUndoRedo(o.repo, o.sessions[0]!.session, o);
    });
  });
}
