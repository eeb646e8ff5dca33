/**
 * unwind against the real Qwen Code and GitHub Copilot CLI (issue 32): each
 * installed at an exact version (UNWIND_REAL_QWEN, UNWIND_REAL_COPILOT),
 * run headless twice in a loopback-only network namespace against the fake
 * model server (OpenAI Chat Completions), unwind installed by `unwind init`
 * as a user would. Two sessions: the first writes, edits, deletes and creates
 * through the shell and runs a failing command; the second writes one file.
 * unwind must list both sessions under the client's harness, credit each call
 * with exactly the paths it changed, log no capture error, and undo of the
 * first session must give back the committed tree plus the second's work.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { git, gitStatus, makeRepo, tempDir, treeState, unwind } from "../helpers.js";
import { addRecorder, clientVersion, installClient, netnsProblem, type Payload, type RunResult, runClient, type Script, type LogCall } from "./clients.js";

type Name = "qwen" | "copilot";

const FILES = { "a.txt": "alpha\n", "doomed.txt": "doomed\n", "README.md": "a repository for the real clients\n" };
const DELETE_AND_CREATE = "rm doomed.txt && echo made > made.txt";
const FAILING = "echo x > failed.txt; exit 3";

interface Scenario {
  first: Script;
  second: Script;
  /** The first session's calls that change files: tool, then its paths, sorted. */
  calls: string[];
  /** The tool whose hook unwind's matcher must leave out. */
  read: string;
}

function scenario(name: Name, repo: string): Scenario {
  const abs = (p: string) => join(repo, p);
  if (name === "qwen") {
    return {
      first: {
        steps: [
          { tool: "read_file", input: { file_path: abs("a.txt") } },
          { tool: "write_file", input: { file_path: abs("new.txt"), content: "new file\n" } },
          { tool: "edit", input: { file_path: abs("a.txt"), old_string: "alpha", new_string: "alpha, edited" } },
          { tool: "run_shell_command", input: { command: DELETE_AND_CREATE, description: "delete one file, create another", is_background: false } },
          { tool: "run_shell_command", input: { command: FAILING, description: "a failing command that still writes", is_background: false } },
        ],
        final: "Done.",
      },
      second: { steps: [{ tool: "write_file", input: { file_path: abs("second.txt"), content: "second\n" } }], final: "Done." },
      calls: ["edit a.txt", "run_shell_command doomed.txt made.txt", "run_shell_command failed.txt", "write_file new.txt"],
      read: "read_file",
    };
  }
  return {
    first: {
      steps: [
        { tool: "view", input: { path: abs("a.txt") } },
        { tool: "create", input: { path: abs("new.txt"), file_text: "new file\n" } },
        { tool: "edit", input: { path: abs("a.txt"), old_str: "alpha", new_str: "alpha, edited" } },
        { tool: "bash", input: { command: DELETE_AND_CREATE, description: "delete one file, create another" } },
        { tool: "bash", input: { command: FAILING, description: "a failing command that still writes" } },
      ],
      final: "Done.",
    },
    second: { steps: [{ tool: "create", input: { path: abs("second.txt"), file_text: "second\n" } }], final: "Done." },
    calls: ["bash doomed.txt made.txt", "bash failed.txt", "create new.txt", "edit a.txt"],
    read: "view",
  };
}

interface Outcome {
  repo: string;
  /** The first session (the one that wrote new.txt), and the second. */
  first: string;
  second: string;
  runs: RunResult[];
  committed: Record<string, string>;
  afterFirst: Record<string, string>;
  sessions: Array<{ session: string; harness: string }>;
  calls: LogCall[];
  scenario: Scenario;
}

let problem: string | null | undefined;

function drive(name: Name): Outcome {
  problem ??= netnsProblem();
  if (problem !== null) throw new Error(`refusing to run ${name}: no loopback-only network namespace (${problem}). Nothing may leave the machine.`);
  const bin = installClient(name);
  const repo = makeRepo(FILES);
  const init = unwind(repo, ["init", `--${name}`]);
  expect(init.code, init.stderr).toBe(0);
  const works = [tempDir(`unwind-real-${name}-`), tempDir(`unwind-real-${name}-`)];
  for (const w of works) mkdirSync(w, { recursive: true });
  // One recorder set per run would need two settings files; the first run's recorder keeps both runs' payloads.
  addRecorder(repo, name, works[0]!);
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", `unwind init --${name}`);
  expect(gitStatus(repo)).toBe("");
  const committed = treeState(repo);
  const sc = scenario(name, repo);

  const first = runClient(name, bin, repo, sc.first, works[0]!);
  if (first.refused) throw new Error(`refusing to run ${name}: ${first.refused}`);
  expect(first.ok, `the client failed\n${first.story}`).toBe(true);
  const afterFirst = treeState(repo);
  const second = runClient(name, bin, repo, sc.second, works[1]!);
  expect(second.ok, `the client failed\n${second.story}`).toBe(true);
  for (const [run, script] of [
    [first, sc.first],
    [second, sc.second],
  ] as const) {
    const served = Math.max(...run.requests.map((q) => (typeof q.done === "number" && Array.isArray(q.tools) ? q.done : -1)));
    expect(served, `the client stopped before the end of the script\n${run.story}`).toBe(script.steps.length);
  }

  // UNWIND_REAL_PAYLOADS=DIR keeps what the client sent (hook payloads, model requests) for docs/clients.md.
  const keep = process.env.UNWIND_REAL_PAYLOADS;
  if (keep) {
    mkdirSync(keep, { recursive: true });
    writeFileSync(join(keep, `${name}-${clientVersion(name)}.json`), JSON.stringify({ payloads: first.all, unwindGroup: first.payloads, requests: first.requests, stderr: first.stderr }, null, 2));
  }
  const calls = unwind(repo, ["log", "--json"]).json.calls as LogCall[];
  const one = calls.find((c) => c.paths.includes("new.txt"))?.session ?? "";
  const two = calls.find((c) => c.paths.includes("second.txt"))?.session ?? "";
  return {
    repo,
    first: one,
    second: two,
    runs: [first, second],
    committed,
    afterFirst,
    sessions: unwind(repo, ["sessions", "--json"]).json.sessions,
    calls,
    scenario: sc,
  };
}

const sorted = (xs: string[]) => [...xs].sort();
const toolOf = (p: Payload) => String(p.payload.tool_name ?? p.payload.toolName);

for (const name of ["qwen", "copilot"] as const) {
  describe(`${name} ${clientVersion(name)}, the real client`, () => {
    let o: Outcome;
    beforeAll(() => {
      o = drive(name);
    }, 600_000);

    it("fires unwind's hooks, and both sessions are listed under its harness", () => {
      const story = o.runs.map((r) => r.story).join("\n");
      expect(o.runs[0]!.payloads.length, `no hook payload was recorded\n${story}`).toBeGreaterThan(0);
      expect(
        o.sessions.map((s) => s.harness),
        story,
      ).toEqual([name, name]);
      expect(o.sessions.every((s) => s.session.startsWith(`${name}:`))).toBe(true);
      expect(sorted(o.sessions.map((s) => s.session))).toEqual(sorted([o.first, o.second]));
      expect(o.first).not.toBe(o.second);
    });

    it("credits each call of the first session with exactly the paths it changed (write, edit, shell delete + create, failing shell)", () => {
      const got = o.calls.filter((c) => c.session === o.first && c.paths.length > 0).map((c) => `${c.tool} ${sorted(c.paths).join(" ")}`);
      expect(sorted(got), `unwind log:\n${JSON.stringify(o.calls, null, 1)}\n${o.runs[0]!.story}`).toEqual(o.scenario.calls);
      const second = o.calls.filter((c) => c.session === o.second);
      expect(second.map((c) => c.paths)).toEqual([["second.txt"]]);
    });

    it("unwind's matcher leaves the read out and lets every other call through", () => {
      const all = o.runs[0]!.all.map(toolOf);
      const ours = o.runs[0]!.payloads.map(toolOf);
      expect(all).toContain(o.scenario.read);
      expect(ours).not.toContain(o.scenario.read);
      expect(ours).toEqual(all.filter((t) => t !== o.scenario.read));
    });

    it("unwind status shows no capture errors", () => {
      const r = unwind(o.repo, ["status", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json.errors, JSON.stringify(r.json.errors)).toEqual([]);
    });

    it("undo of the first session gives back the committed tree and keeps the second session's work", () => {
      const undo = unwind(o.repo, ["undo", "--session", o.first, "--json"]);
      expect(undo.code, `${undo.stdout}\n${undo.stderr}`).toBe(0);
      expect(undo.json.counts.conflict).toBe(0);
      const after = treeState(o.repo);
      expect(after["second.txt"]).toBeDefined();
      const { "second.txt": _, ...rest } = after;
      expect(rest).toEqual(o.committed);
      expect(o.afterFirst["second.txt"]).toBeUndefined();
    });

    if (name === "qwen") {
      it("a failing shell command sends PostToolUseFailure, with the tool's own id", () => {
        const failure = o.runs[0]!.all.filter((p) => p.payload.hook_event_name === "PostToolUseFailure");
        expect(failure.map(toolOf)).toEqual(["run_shell_command"]);
        expect(String(failure[0]!.payload.tool_use_id)).toMatch(/^toolu_/);
      });
    } else {
      it("the payload names neither its event nor the call: the hook command does the one, the call's content the other", () => {
        const p = o.runs[0]!.all;
        expect(p.some((x) => "hook_event_name" in x.payload || "toolCallId" in x.payload || "tool_use_id" in x.payload)).toBe(false);
        expect(p.map((x) => x.event)).toContain("postToolUse");
        // A failing shell command is an ordinary postToolUse.
        expect(p.filter((x) => x.event === "postToolUseFailure")).toEqual([]);
      });
    }
  });
}

describe("Copilot CLI in a folder it does not trust", () => {
  it("runs none of the folder's hooks, silently; trusted in ~/.copilot/config.json it runs them", () => {
    problem ??= netnsProblem();
    if (problem !== null) throw new Error(`refusing to run copilot: no loopback-only network namespace (${problem})`);
    const bin = installClient("copilot");
    const repo = makeRepo(FILES);
    expect(unwind(repo, ["init", "--copilot"]).code).toBe(0);
    const script: Script = { steps: [{ tool: "bash", input: { command: "echo one > one.txt", description: "write" } }], final: "Done." };
    const untrusted = tempDir("unwind-real-copilot-");
    const run = runClient("copilot", bin, repo, script, untrusted, { copilotTrust: "none" });
    expect(run.ok, run.story).toBe(true);
    expect(treeState(repo)["one.txt"]).toBeDefined();
    expect(unwind(repo, ["sessions", "--json"]).json.sessions).toEqual([]);
    const steps = unwind(repo, ["status", "--json"], { env: { HOME: join(untrusted, "home"), COPILOT_HOME: "", COPILOT_ALLOW_ALL: "" } }).json.hooks[0].next;
    expect(steps[0]).toContain("trust this folder in Copilot CLI");

    const trusted = tempDir("unwind-real-copilot-");
    mkdirSync(join(trusted, "home", ".copilot"), { recursive: true });
    writeFileSync(join(trusted, "home", ".copilot", "config.json"), JSON.stringify({ trusted_folders: [repo] }));
    const again = runClient("copilot", bin, repo, { ...script, steps: [{ tool: "bash", input: { command: "echo two > two.txt", description: "write" } }] }, trusted, { copilotTrust: "none" });
    expect(again.ok, again.story).toBe(true);
    expect((unwind(repo, ["log", "--json"]).json.calls as LogCall[]).map((c) => c.paths)).toEqual([["two.txt"]]);
  });
});
