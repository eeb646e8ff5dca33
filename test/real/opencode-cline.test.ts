/**
 * unwind against the real OpenCode and Cline (issue 32): each installed from
 * the npm registry at an exact version and run headless in a loopback-only
 * network namespace against the fake model server (OpenAI Chat Completions),
 * with unwind installed by `unwind init --opencode|--cline` as a user would.
 * Two sessions in one repository: a write, an edit, a shell command that
 * deletes and creates, a failing shell command and a failing edit, then a
 * second session of its own. Each call must be credited with exactly its
 * paths, nothing left open, no capture error, and undo of one session must
 * give back the other's work.
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { git, gitStatus, makeRepo, tempDir, treeState, unwind } from "../helpers.js";
import { netnsProblem, type RunResult, type Script, type LogCall } from "./clients.js";
import { addOtherRecorder, installOther, type OtherClient, otherVersion, quietOpencodeFolder, runOther } from "./opencode-cline.js";

const FILES = { "a.txt": "alpha\n", "doomed.txt": "doomed\n", "README.md": "a repository for the real clients\n" };
const DELETE_AND_CREATE = "rm doomed.txt && echo made > made.txt";
const FAILING = "echo x > failed.txt; exit 3";
const id = (i: number) => `call_fake_${String(i).padStart(2, "0")}`;

/** The first session's script in each client's own tool names, and the second's. */
function scripts(name: OtherClient): [Script, Script] {
  if (name === "opencode")
    return [
      {
        steps: [
          { tool: "write", input: { filePath: "new.txt", content: "new file\n" } },
          { tool: "read", input: { filePath: "a.txt" } },
          { tool: "edit", input: { filePath: "a.txt", oldString: "alpha", newString: "alpha, edited" } },
          { tool: "bash", input: { command: DELETE_AND_CREATE, description: "delete one file, create another" } },
          { tool: "bash", input: { command: FAILING, description: "a failing command that still writes" } },
          // Its text is not in the file: the tool throws, and OpenCode sends no tool.execute.after.
          { tool: "edit", input: { filePath: "a.txt", oldString: "not in the file", newString: "x" } },
        ],
        final: "Done.",
      },
      {
        steps: [
          { tool: "write", input: { filePath: "second.txt", content: "second session\n" } },
          { tool: "bash", input: { command: "echo two > two.txt", description: "write" } },
        ],
        final: "Done.",
      },
    ];
  return [
    {
      steps: [
        { tool: "editor", input: { path: "new.txt", new_text: "new file\n" } },
        { tool: "read_files", input: { files: [{ path: "a.txt" }] } },
        { tool: "editor", input: { path: "a.txt", old_text: "alpha", new_text: "alpha, edited" } },
        { tool: "run_commands", input: { commands: [DELETE_AND_CREATE] } },
        { tool: "run_commands", input: { commands: [FAILING] } },
        { tool: "editor", input: { path: "a.txt", old_text: "not in the file", new_text: "x" } },
      ],
      final: "Done.",
    },
    {
      steps: [
        { tool: "editor", input: { path: "second.txt", new_text: "second session\n" } },
        { tool: "run_commands", input: { commands: ["echo two > two.txt"] } },
      ],
      final: "Done.",
    },
  ];
}

/** What each call of the first session that may write is credited with: its tool and exactly the paths it changed (the failing edit none). */
function expected(name: OtherClient): Record<string, string> {
  const [write, edit, shell] = name === "opencode" ? ["write", "edit", "bash"] : ["editor", "editor", "run_commands"];
  return { [id(0)]: `${write} new.txt`, [id(2)]: `${edit} a.txt`, [id(3)]: `${shell} doomed.txt made.txt`, [id(4)]: `${shell} failed.txt`, [id(5)]: edit };
}

/** The paths one call changed, as its change set says. */
function changed(repo: string, session: string, call: string): string[] {
  const r = unwind(repo, ["changes", "--session", session, "--call", call, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return (r.json.entries as Array<{ path: string }>).map((e) => e.path).sort();
}

interface Outcome {
  repo: string;
  runs: RunResult[];
  committed: Record<string, string>;
  afterFirst: Record<string, string>;
  sessions: Array<{ session: string; harness: string }>;
  calls: LogCall[];
  /** `<call> <how>` for each call closed by something other than its own post. */
  closedBy: string[];
  first: string;
  second: string;
}

function drive(name: OtherClient): Outcome {
  const problem = netnsProblem();
  if (problem !== null) throw new Error(`refusing to run ${name}: no loopback-only network namespace (${problem}). Nothing may leave the machine.`);
  const bin = installOther(name);
  const repo = makeRepo(FILES);
  const init = unwind(repo, ["init", `--${name}`]);
  expect(init.code, init.stderr).toBe(0);
  if (name === "opencode") quietOpencodeFolder(join(repo, ".opencode"));
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", `unwind init --${name}`);
  expect(gitStatus(repo)).toBe("");
  const committed = treeState(repo);
  const runs: RunResult[] = [];
  const [one, two] = scripts(name);
  let afterFirst: Record<string, string> = {};
  for (const script of [one, two]) {
    const work = tempDir(`unwind-real-${name}-`);
    mkdirSync(work, { recursive: true });
    // The recorder goes into the committed plugin for each run afresh (a second wrapping would record twice).
    if (name === "opencode") git(repo, "checkout", "--", ".opencode/plugin/unwind.js");
    addOtherRecorder(repo, name, work);
    const run = runOther(name, bin, repo, script, work);
    if (run.refused) throw new Error(`refusing to run ${name}: ${run.refused}`);
    expect(run.ok, `the client failed\n${run.story}`).toBe(true);
    const served = Math.max(...run.requests.map((q) => (typeof q.done === "number" && Array.isArray(q.tools) ? q.done : -1)));
    expect(served, `the client stopped before the end of the script\n${run.story}`).toBe(script.steps.length);
    runs.push(run);
    if (runs.length === 1) afterFirst = treeState(repo);
  }
  // How each call's window was closed, read before any unwind command could close one itself (by "read").
  const journal = join(repo, ".git", "unwind", "journal");
  const closedBy = readdirSync(journal)
    .flatMap((f) => readFileSync(join(journal, f), "utf8").split("\n"))
    .flatMap((l) => {
      const m = /"call":"([^"]+)".*"closedBy":"([^"]+)"/.exec(l);
      return m === null ? [] : [`${m[1]} ${m[2]}`];
    });
  // The recorder wrapped into the plugin is the test's, not the user's: the committed plugin comes back.
  git(repo, "checkout", "--", ".");
  const sessions = unwind(repo, ["sessions", "--json"]).json.sessions as Outcome["sessions"];
  const calls = unwind(repo, ["log", "--json"]).json.calls as LogCall[];
  const sessionOf = (path: string) => calls.find((c) => c.paths.includes(path))?.session ?? "";
  return { repo, runs, committed, afterFirst, sessions, calls, closedBy, first: sessionOf("new.txt"), second: sessionOf("second.txt") };
}

for (const name of ["opencode", "cline"] as const) {
  describe(`${name} ${otherVersion(name)}, the real client`, () => {
    let o: Outcome;
    beforeAll(() => {
      o = drive(name);
    }, 600_000);
    const story = () => `unwind log:\n${JSON.stringify(o.calls, null, 1)}\n${o.runs.map((r) => r.story).join("\n---\n")}`;

    it("fires unwind's hook, and each run is a session of its own under its harness", () => {
      expect(
        o.runs.every((r) => r.payloads.length > 0),
        story(),
      ).toBe(true);
      expect(
        o.sessions.map((s) => s.harness),
        story(),
      ).toEqual([name, name]);
      expect(o.first.startsWith(`${name}:`), story()).toBe(true);
      expect(o.second.startsWith(`${name}:`)).toBe(true);
      expect(o.first).not.toBe(o.second);
    });

    it("credits each call with exactly the paths it changed (write, edit, shell delete + create, failing shell)", () => {
      const first = o.calls.filter((c) => c.session === o.first);
      const got = Object.fromEntries(first.map((c) => [c.call, [c.tool, ...changed(o.repo, o.first, c.call)].join(" ")]));
      expect(got, story()).toEqual(expected(name));
      const second = o.calls.filter((c) => c.session === o.second);
      expect(
        second.map((c) => changed(o.repo, o.second, c.call)),
        story(),
      ).toEqual([["two.txt"], ["second.txt"]]);
    });

    it("leaves no call open and logs no capture error", () => {
      const r = unwind(o.repo, ["status", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json.errors, JSON.stringify(r.json.errors)).toEqual([]);
      const store = join(o.repo, ".git", "unwind");
      const open = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? open(join(dir, e.name)) : e.name.endsWith(".open") ? [e.name] : []));
      expect(open(store), story()).toEqual([]);
      expect(r.json.hooks.map((h: { harness: string; lastFired: string | null }) => [h.harness, h.lastFired !== null])).toEqual([[name, true]]);
    });

    it("undo of the first session gives back exactly the second session's work on the committed tree; then the second's gives back the commit", () => {
      const second = Object.fromEntries(Object.entries(treeState(o.repo)).filter(([p]) => p === "second.txt" || p === "two.txt"));
      expect(Object.keys(second).sort()).toEqual(["second.txt", "two.txt"]);
      const undo = unwind(o.repo, ["undo", "--session", o.first, "--json"]);
      expect(undo.code, `${undo.stdout}\n${undo.stderr}`).toBe(0);
      expect(treeState(o.repo)).toEqual({ ...o.committed, ...second });
      const undo2 = unwind(o.repo, ["undo", "--session", o.second, "--json"]);
      expect(undo2.code, `${undo2.stdout}\n${undo2.stderr}`).toBe(0);
      expect(gitStatus(o.repo)).toBe("");
      expect(treeState(o.repo)).toEqual(o.committed);
    });

    if (name === "opencode") {
      it("OpenCode sends tool.execute.after for every call but the edit that threw; the plugin's session.idle closed that one", () => {
        const first = o.runs[0]!.payloads.map((p) => `${p.payload.event} ${(p.payload.input as { callID?: string } | undefined)?.callID ?? ""}`.trim());
        // read is left out by the plugin itself: no process is started for it.
        expect(first).toEqual([
          `tool.execute.before ${id(0)}`,
          `tool.execute.after ${id(0)}`,
          `tool.execute.before ${id(2)}`,
          `tool.execute.after ${id(2)}`,
          `tool.execute.before ${id(3)}`,
          `tool.execute.after ${id(3)}`,
          `tool.execute.before ${id(4)}`,
          `tool.execute.after ${id(4)}`,
          `tool.execute.before ${id(5)}`,
          "session.idle",
        ]);
        expect(o.closedBy, story()).toEqual([`${id(5)} next-event`]);
      });
    } else {
      it("Cline's failing command is a PostToolUse with success: true at the top, the failure only in the tool's output", () => {
        const post = o.runs[0]!.payloads.find((p) => (p.payload.tool_result as { id?: string } | undefined)?.id === id(4));
        expect(post, story()).toBeDefined();
        expect((post!.payload.postToolUse as { success: boolean }).success).toBe(true);
        expect((post!.payload.tool_result as { output: Array<{ success: boolean; error: string }> }).output[0]).toMatchObject({ success: false, error: "Command exited with code 3" });
        expect(o.afterFirst["failed.txt"]).toBeDefined();
        // Cline sends a PostToolUse for the edit that failed too: no call waited for another event to close it.
        expect(o.closedBy, story()).toEqual([]);
      });
    }
  });
}
