/**
 * Qwen Code and GitHub Copilot CLI through `unwind hook`, fed the payloads
 * the real clients sent (Qwen Code 0.24.4, Copilot CLI 1.0.102:
 * test/fixtures/hooks/{qwen,copilot}, docs/clients.md), and `unwind init`
 * for both. The real clients themselves run in test/real.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, read, tempDir, treeState, unwind, write, writeFiles } from "../helpers.js";

const PROJECT = "/home/dev/project";

/** A real fixture payload, re-pointed at `root`; `patch` changes it further. */
function fixture(harness: "qwen" | "copilot", name: string, root: string, patch: (p: any) => void = () => {}): string {
  const text = readFileSync(new URL(`../fixtures/hooks/${harness}/${name}.json`, import.meta.url), "utf8");
  const p = JSON.parse(text.split(PROJECT).join(root));
  patch(p);
  return JSON.stringify(p);
}

/** One hook event through the real `unwind hook` process: it must exit 0 and print nothing. */
function send(root: string, args: string[], payload: string, env: Record<string, string> = {}): void {
  const r = unwind(root, ["hook", ...args], { input: payload, env });
  expect([r.code, r.stdout, r.stderr]).toEqual([0, "", ""]);
}

const qwen = (root: string, name: string, env?: Record<string, string>, patch?: (p: any) => void) => send(root, ["qwen"], fixture("qwen", name, root, patch), env);
const copilot = (root: string, event: string, name: string, patch?: (p: any) => void) => send(root, ["copilot", event], fixture("copilot", name, root, patch));

interface Call {
  call: string;
  session: string;
  tool: string;
  paths: string[];
}
const calls = (root: string) => unwind(root, ["log", "--json"]).json.calls as Call[];
const errors = (root: string) => unwind(root, ["status", "--json"]).json.errors as Array<{ message: string; harness: string }>;
/** Each call as its tool and sorted paths, oldest first. */
const credit = (log: Call[]) => log.map((c) => `${c.tool} ${[...c.paths].sort().join(" ")}`).reverse();
const credited = (root: string) => credit(calls(root));

const FILES = { "a.txt": "alpha\n", "doomed.txt": "doomed\n", "README.md": "readme\n" };

describe("Qwen Code: the real payloads", () => {
  it("write_file, edit, a shell delete + create and a failing shell command (PostToolUseFailure) are each credited with exactly their paths, and taken back", () => {
    const root = makeRepo(FILES);
    const before = treeState(root);
    qwen(root, "read-file.pre");
    qwen(root, "write-file.pre");
    write(root, "new.txt", "new\n");
    qwen(root, "write-file.post");
    qwen(root, "edit.pre");
    write(root, "a.txt", "alpha, edited\n");
    qwen(root, "edit.post");
    qwen(root, "run-shell-command.pre");
    unlinkSync(join(root, "doomed.txt"));
    write(root, "made.txt", "made\n");
    qwen(root, "run-shell-command.post");
    qwen(root, "run-shell-command-failing.pre");
    write(root, "failed.txt", "x\n");
    qwen(root, "run-shell-command-failing.post");
    // Written after the failure's post: no call's (PostToolUseFailure closed the failing one).
    write(root, "after.txt", "after\n");

    expect(errors(root)).toEqual([]);
    const log = calls(root);
    expect(credit(log)).toEqual(["write_file new.txt", "edit a.txt", "run_shell_command doomed.txt made.txt", "run_shell_command failed.txt"]);
    // Qwen Code's own tool-use ids pair pre and post; the read left no record.
    expect(log.every((c) => c.call.startsWith("toolu_") && c.session.startsWith("qwen:"))).toBe(true);

    const undo = unwind(root, ["undo", "--session", log[0]!.session, "--json"]);
    expect(undo.code, undo.stderr).toBe(0);
    expect(treeState(root)).toEqual({ ...before, "after.txt": treeState(root)["after.txt"]! });
  });

  it("control: a failing call whose PostToolUseFailure never came stays open, and what is written next is its", () => {
    const root = makeRepo(FILES);
    qwen(root, "run-shell-command-failing.pre");
    write(root, "failed.txt", "x\n");
    write(root, "after.txt", "after\n");
    expect(credited(root)).toEqual(["run_shell_command after.txt failed.txt"]);
  });

  it("keeps one store at the project Qwen Code names, not in the folder the shell moved to, nor in QWEN_CODE_PROJECT_DIR (Qwen's own storage)", () => {
    const project = tempDir();
    writeFiles(project, { "src/keep.txt": "keep\n" });
    const storage = tempDir();
    const sub = join(project, "src");
    const env = { QWEN_PROJECT_DIR: project, GEMINI_PROJECT_DIR: project, CLAUDE_PROJECT_DIR: project, QWEN_CODE_PROJECT_DIR: storage };
    const shell = (phase: string) =>
      fixture("qwen", `run-shell-command.${phase}`, project, (p) => {
        p.cwd = sub;
      });
    send(sub, ["qwen"], shell("pre"), env);
    write(project, "src/made.txt", "made\n");
    send(sub, ["qwen"], shell("post"), env);
    expect(existsSync(join(project, ".unwind"))).toBe(true);
    expect(existsSync(join(sub, ".unwind"))).toBe(false);
    expect(existsSync(join(storage, ".unwind"))).toBe(false);
    expect(calls(project).map((c) => c.paths)).toEqual([["src/made.txt"]]);
  });
});

describe("Copilot CLI: the real payloads (no event name, no call id)", () => {
  it("create, edit, a shell delete + create, a failing shell command and a failed edit are each credited with exactly their paths, and taken back", () => {
    const root = makeRepo(FILES);
    const before = treeState(root);
    copilot(root, "preToolUse", "view.pre");
    copilot(root, "preToolUse", "create.pre");
    write(root, "new.txt", "new\n");
    copilot(root, "postToolUse", "create.post");
    copilot(root, "preToolUse", "edit.pre");
    write(root, "a.txt", "alpha, edited\n");
    copilot(root, "postToolUse", "edit.post");
    copilot(root, "preToolUse", "bash.pre");
    unlinkSync(join(root, "doomed.txt"));
    write(root, "made.txt", "made\n");
    copilot(root, "postToolUse", "bash.post");
    copilot(root, "preToolUse", "bash-failing.pre");
    write(root, "failed.txt", "x\n");
    copilot(root, "postToolUse", "bash-failing.post");
    copilot(root, "preToolUse", "edit-no-match.pre");
    copilot(root, "postToolUseFailure", "edit-no-match.post-failure");

    expect(errors(root)).toEqual([]);
    const log = calls(root);
    // The failed edit's file capture names its target; it changed nothing there (its change set below).
    expect(credit(log)).toEqual(["create new.txt", "edit a.txt", "bash doomed.txt made.txt", "bash failed.txt", "edit a.txt"]);
    expect(new Set(log.map((c) => c.call)).size).toBe(log.length);
    expect(log.every((c) => c.session.startsWith("copilot:"))).toBe(true);
    const failed = unwind(root, ["changes", "--session", log[0]!.session, "--call", log[0]!.call, "--json"]);
    expect(failed.code, failed.stderr).toBe(0);
    expect(failed.json.entries).toEqual([]);

    const undo = unwind(root, ["undo", "--session", log[0]!.session, "--json"]);
    expect(undo.code, undo.stderr).toBe(0);
    expect(treeState(root)).toEqual(before);
  });

  it("two identical shell calls one after the other stay two calls, the second taken back alone", () => {
    const root = makeRepo(FILES);
    const shell = (phase: string) =>
      fixture("copilot", `bash.${phase}`, root, (p) => {
        p.toolArgs.command = "echo hi >> log.txt";
      });
    for (let i = 1; i <= 2; i++) {
      send(root, ["copilot", "preToolUse"], shell("pre"));
      write(root, "log.txt", "hi\n".repeat(i));
      send(root, ["copilot", "postToolUse"], shell("post"));
    }
    const log = calls(root);
    expect(log.map((c) => c.paths)).toEqual([["log.txt"], ["log.txt"]]);
    expect(unwind(root, ["undo", "--session", log[0]!.session, "--call", log[0]!.call, "--json"]).code).toBe(0);
    expect(read(root, "log.txt")).toBe("hi\n");
  });

  it("a command started with mode async keeps its window open until the session's next call", () => {
    const root = makeRepo(FILES);
    copilot(root, "preToolUse", "bash-async.pre");
    copilot(root, "postToolUse", "bash-async.post");
    write(root, "bg.txt", "bg\n"); // the background command writes after its post came
    copilot(root, "preToolUse", "view.pre");
    const bg = calls(root).find((c) => c.tool === "bash")!;
    expect(bg.paths).toEqual(["bg.txt"]);
  });

  it("control: without mode async the same command's window closes at its post", () => {
    const root = makeRepo(FILES);
    const sync = (p: any) => {
      delete p.toolArgs.mode;
    };
    copilot(root, "preToolUse", "bash-async.pre", sync);
    copilot(root, "postToolUse", "bash-async.post", sync);
    write(root, "bg.txt", "bg\n");
    copilot(root, "preToolUse", "view.pre");
    expect(calls(root).find((c) => c.tool === "bash")!.paths).toEqual([]);
  });

  it("a hook command that names no event captures nothing, exits 0 and says in the error log how to fix it", () => {
    const root = makeRepo(FILES);
    send(root, ["copilot"], fixture("copilot", "create.pre", root));
    write(root, "new.txt", "new\n");
    send(root, ["copilot"], fixture("copilot", "create.post", root));
    expect(calls(root)).toEqual([]);
    const [e] = errors(root);
    expect(e?.harness).toBe("copilot");
    expect(e?.message).toContain("run unwind init --copilot again");
    // Control: the same payloads with the event are captured.
    copilot(root, "preToolUse", "create.pre");
    copilot(root, "postToolUse", "create.post");
    expect(calls(root).map((c) => c.paths)).toEqual([["new.txt"]]);
  });
});

describe("unwind init --qwen / --copilot", () => {
  it("merges into the user's own settings, keeps their comments and hooks, and a second run changes nothing", () => {
    const qwenFile =
      '{\n  // mine\n  "$version": 3,\n  "model": { "name": "qwen3" },\n  "hooks": { "PreToolUse": [{ "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "./lint.sh" }] }] }\n}\n';
    const mine = { type: "command", bash: "./audit.sh", timeoutSec: 5 };
    const root = makeRepo({
      ".qwen/settings.json": qwenFile,
      ".github/hooks/unwind.json": JSON.stringify({ version: 1, hooks: { preToolUse: [mine] } }),
      ".github/hooks/other.json": '{"version": 1, "hooks": {}}\n',
    });
    const r = unwind(root, ["init", "--qwen", "--copilot", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.hooks.map((h: any) => [h.file, h.added])).toEqual([
      [".qwen/settings.json", ["PreToolUse", "PostToolUse", "PostToolUseFailure"]],
      [".github/hooks/unwind.json", ["preToolUse", "postToolUse", "postToolUseFailure"]],
    ]);
    const q = read(root, ".qwen/settings.json");
    expect(q).toContain("// mine");
    expect(q).toContain('"$version": 3'); // a user's file keeps its own version: migrating it is Qwen Code's
    expect(q).toContain("./lint.sh");
    const c = JSON.parse(read(root, ".github/hooks/unwind.json"));
    expect(c.version).toBe(1);
    expect(c.hooks.preToolUse[0]).toEqual(mine);
    expect(c.hooks.preToolUse[1].bash).toMatch(/ hook copilot preToolUse$/);
    expect(c.hooks.postToolUseFailure[0].bash).toMatch(/ hook copilot postToolUseFailure$/);
    expect(read(root, ".github/hooks/other.json")).toBe('{"version": 1, "hooks": {}}\n');

    const files = [".qwen/settings.json", ".github/hooks/unwind.json"].map((f) => read(root, f));
    expect(unwind(root, ["init", "--qwen", "--copilot", "--json"]).json.hooks.every((h: any) => h.changed === false)).toBe(true);
    expect([".qwen/settings.json", ".github/hooks/unwind.json"].map((f) => read(root, f))).toEqual(files);
  });

  it("a new file: Qwen Code's $version (else Qwen rewrites it at start), Copilot's version 1; read-only tools left out by the matcher", () => {
    const root = makeRepo(FILES);
    expect(unwind(root, ["init", "--qwen", "--copilot"]).code).toBe(0);
    const q = JSON.parse(read(root, ".qwen/settings.json"));
    expect(q.$version).toBe(4);
    const m = new RegExp(q.hooks.PreToolUse[0].matcher);
    expect(["read_file", "grep_search", "glob"].some((t) => m.test(t))).toBe(false);
    expect(["write_file", "edit", "run_shell_command", "a_tool_nobody_knows"].every((t) => m.test(t))).toBe(true);
    const c = JSON.parse(read(root, ".github/hooks/unwind.json"));
    expect(c.version).toBe(1);
    const cm = new RegExp(c.hooks.preToolUse[0].matcher);
    expect([cm.test("view"), cm.test("create"), cm.test("bash"), cm.test("read_bash")]).toEqual([false, true, true, true]);
  });

  it("a moved binary, or a command without its event, updates unwind's one entry in place, keeping the user's other fields", () => {
    const root = makeRepo({
      ".github/hooks/unwind.json": JSON.stringify({
        version: 1,
        hooks: {
          preToolUse: [{ type: "command", bash: "/old/place/unwind hook copilot preToolUse", timeoutSec: 99, env: { A: "1" } }],
          postToolUse: [{ type: "command", bash: "unwind hook copilot" }],
        },
      }),
    });
    const r = unwind(root, ["init", "--copilot", "--json"]);
    expect(r.json.hooks[0].updated).toEqual(["preToolUse", "postToolUse"]);
    const { preToolUse: pre, postToolUse: post } = JSON.parse(read(root, ".github/hooks/unwind.json")).hooks;
    expect([pre.length, post.length]).toEqual([1, 1]);
    expect(pre[0]).toMatchObject({ timeoutSec: 99, env: { A: "1" } });
    expect(pre[0].bash).not.toContain("/old/place");
    expect(post[0].bash).toMatch(/ hook copilot postToolUse$/);
  });

  it("the installed commands capture when run through a shell, as the clients run them", () => {
    const root = makeRepo(FILES);
    expect(unwind(root, ["init", "--qwen", "--copilot"]).code).toBe(0);
    const qcmd: string = JSON.parse(read(root, ".qwen/settings.json")).hooks.PreToolUse[0].hooks[0].command;
    const c = JSON.parse(read(root, ".github/hooks/unwind.json")).hooks;
    const sh = (cmd: string, input: string) => execFileSync("sh", ["-c", cmd], { cwd: root, input });
    sh(qcmd, fixture("qwen", "write-file.pre", root));
    write(root, "new.txt", "new\n");
    sh(qcmd, fixture("qwen", "write-file.post", root));
    sh(c.preToolUse[0].bash, fixture("copilot", "edit.pre", root));
    write(root, "a.txt", "alpha, edited\n");
    sh(c.postToolUse[0].bash, fixture("copilot", "edit.post", root));
    const log = calls(root);
    expect(credit(log)).toEqual(["write_file new.txt", "edit a.txt"]);
    expect(log.map((x) => x.session.split(":")[0])).toEqual(["copilot", "qwen"]);
  });

  it("says the step each still needs, in init and in status until the hooks run; Copilot's stops once the folder is trusted", () => {
    const root = makeRepo(FILES);
    const home = tempDir();
    const env = { HOME: home, COPILOT_HOME: "", COPILOT_ALLOW_ALL: "" };
    const first = unwind(root, ["init", "--qwen", "--copilot", "--json"], { env });
    expect(first.json.hooks.map((h: any) => [h.harness, h.next.length])).toEqual([
      ["qwen", 1],
      ["copilot", 1],
    ]);
    expect(first.json.hooks[1].next[0]).toContain(`add "${root}" to "trusted_folders" in ${join(home, ".copilot", "config.json")}`);
    const status = () => unwind(root, ["status", "--json"], { env }).json.hooks as Array<{ harness: string; next: string[]; lastFired: string | null }>;
    expect(status().map((h) => [h.harness, h.next.length])).toEqual([
      ["qwen", 1],
      ["copilot", 1],
    ]);
    // Copilot's step goes once its config trusts the folder (its hooks have still not run); Qwen's once its hook ran.
    mkdirSync(join(home, ".copilot"));
    writeFiles(home, { ".copilot/config.json": JSON.stringify({ trusted_folders: [root] }) });
    qwen(root, "write-file.pre", env);
    expect(status().map((h) => [h.harness, h.next.length, h.lastFired !== null])).toEqual([
      ["qwen", 0, true],
      ["copilot", 0, false],
    ]);
  });

  it("--mcp with Copilot CLI is a usage error and writes nothing", () => {
    const root = makeRepo(FILES);
    const r = unwind(root, ["init", "--copilot", "--qwen", "--mcp"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("does not register its MCP server with copilot");
    expect([existsSync(join(root, ".github")), existsSync(join(root, ".qwen"))]).toEqual([false, false]);
  });
});
