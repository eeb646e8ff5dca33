import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, makeRepo, read, tempDir, unwind, write, writeFiles } from "../helpers.js";
import { claudePayload, hook } from "../journal-helpers.js";

describe("unwind init", () => {
  it("installs hooks whose command works from any directory of the project, and is idempotent", () => {
    const root = makeRepo({ "src/a.ts": "a\n" });
    const r = unwind(root, ["init", "--claude", "--codex", "--gemini", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json.hooks.map((h: any) => [h.file, h.changed])).toEqual([
      [".claude/settings.json", true],
      [".codex/hooks.json", true],
      [".gemini/settings.json", true],
    ]);
    const settings = JSON.parse(read(root, ".claude/settings.json"));
    const command: string = settings.hooks.PreToolUse[0].hooks[0].command;
    expect(command).toMatch(/ hook claude$/);

    // The harness runs the command through a shell, from wherever the agent is.
    const sub = join(root, "src");
    mkdirSync(sub, { recursive: true });
    const payload = (event: "PreToolUse" | "PostToolUse") => claudePayload(sub, "init-sess-1", event, "Write", { file_path: "a.ts", content: "b\n" }, "toolu_init");
    execFileSync("sh", ["-c", command], { cwd: "/", input: payload("PreToolUse") });
    write(root, "src/a.ts", "b\n");
    execFileSync("sh", ["-c", command], { cwd: "/", input: payload("PostToolUse") });
    const undo = unwind(root, ["undo", "--session", "init-sess-1", "--json"]);
    expect(undo.json.items).toMatchObject([{ path: "src/a.ts", action: "restore", reason: null }]);
    expect(read(root, "src/a.ts")).toBe("a\n");

    const before = ["claude/settings.json", "codex/hooks.json", "gemini/settings.json"].map((f) => readFileSync(join(root, "." + f), "utf8"));
    const again = unwind(root, ["init", "--claude", "--codex", "--gemini", "--json"]);
    expect(again.json.hooks.every((h: any) => h.changed === false)).toBe(true);
    expect(["claude/settings.json", "codex/hooks.json", "gemini/settings.json"].map((f) => readFileSync(join(root, "." + f), "utf8"))).toEqual(before);
  });

  it("the hook runs without NODE_EXTRA_CA_CERTS, which Node would read at every start-up for nothing", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    expect(unwind(root, ["init", "--claude"]).code).toBe(0);
    const command: string = JSON.parse(read(root, ".claude/settings.json")).hooks.PreToolUse[0].hooks[0].command;
    const env = { ...process.env, NODE_EXTRA_CA_CERTS: join(root, "no-such-bundle.pem") };
    const input = claudePayload(root, "ca-1", "PreToolUse", "Write", { file_path: "a.txt", content: "b\n" }, "toolu_ca");
    // Node warns on stderr when the bundle it reads at start-up is missing: the installed command never reads it.
    const installed = spawnSync("sh", ["-c", command], { cwd: root, env, input, encoding: "utf8" });
    expect([installed.status, installed.stderr]).toEqual([0, ""]);
    const plain = spawnSync(process.execPath, [BIN, "hook", "claude"], { cwd: root, env, input, encoding: "utf8" });
    expect(plain.stderr).toContain("Ignoring extra certs"); // control: the same hook started without the env in front
    expect(unwind(root, ["log", "--json"]).json.calls.map((c: any) => c.call)).toEqual(["toolu_ca"]);
  });

  it("a settings file it cannot parse is a usage error and is left as it was", () => {
    const root = makeRepo({ ".claude/settings.json": "{ not json" });
    const r = unwind(root, ["init", "--claude"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(".claude/settings.json");
    expect(read(root, ".claude/settings.json")).toBe("{ not json");
  });

  it("--local writes Claude Code's settings for this machine only; --local for another client is exit 2 and writes nothing", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const bad = unwind(root, ["init", "--local", "--claude", "--codex"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--local: codex has no settings file for this machine only");
    expect(existsSync(join(root, ".claude"))).toBe(false);
    expect(existsSync(join(root, ".codex"))).toBe(false);
    expect(unwind(root, ["init", "--local"]).code).toBe(2);
    const r = unwind(root, ["init", "--local", "--claude", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json.hooks.map((h: any) => h.file)).toEqual([".claude/settings.local.json"]);
    expect(existsSync(join(root, ".claude/settings.json"))).toBe(false);
    expect(JSON.parse(read(root, ".claude/settings.local.json")).hooks.PreToolUse[0].hooks[0].command).toMatch(/ hook claude$/);
    // Control: without --local the shared file is the one written.
    expect(unwind(root, ["init", "--claude", "--json"]).json.hooks.map((h: any) => h.file)).toEqual([".claude/settings.json"]);
  });

  it("says the step each client still needs, and stops saying it once the client's own file has it", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const home = tempDir();
    const env = { HOME: home, GEMINI_CLI_TRUST_WORKSPACE: "" };
    const first = unwind(root, ["init", "--codex", "--gemini"], { env });
    expect(first.stdout).toContain(`next: trust the project in Codex`);
    expect(first.stdout).toContain(`[projects."${root}"] trust_level = "trusted"`);
    expect(first.stdout).toContain("next: approve unwind's hooks in Codex");
    expect(first.stdout).toContain("next: trust this folder in Gemini CLI");
    writeFiles(home, { ".codex/config.toml": `[projects."${root}"]\ntrust_level = "trusted"\n`, ".gemini/trustedFolders.json": JSON.stringify({ [root]: "TRUST_FOLDER" }) });
    const again = unwind(root, ["init", "--codex", "--gemini", "--json"], { env });
    expect(again.json.hooks.map((h: any) => [h.harness, h.next.length])).toEqual([
      ["codex", 1],
      ["gemini", 0],
    ]);
  });
});

describe("unwind status: have the hooks run?", () => {
  const hooksOf = (root: string) => unwind(root, ["status", "--json"], { env: { HOME: tempDir() } }).json.hooks;

  it("never, until the harness runs one, even for a read-only tool; then when", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    expect(unwind(root, ["init", "--claude", "--gemini"]).code).toBe(0);
    const before = hooksOf(root);
    expect(before.map((h: any) => [h.harness, h.file, h.lastFired, h.missing, h.commandFound])).toEqual([
      ["claude", ".claude/settings.json", null, [], true],
      ["gemini", ".gemini/settings.json", null, [], true],
    ]);
    expect(before[0].next.length).toBeGreaterThan(0);
    const started = Date.now() - 1000;
    expect(hook(root, "claude", claudePayload(root, "s1", "PreToolUse", "Read", { file_path: "a.txt" }, "toolu_r")).code).toBe(0);
    const after = hooksOf(root);
    expect(Date.parse(after[0].lastFired)).toBeGreaterThanOrEqual(started);
    expect(after[0].next).toEqual([]);
    expect(after[1].lastFired).toBeNull(); // Gemini's hook has not run
    expect(unwind(root, ["status"]).stdout).toMatch(/claude {2}\.claude\/settings\.json {2}last ran \d+s ago/);
  });

  it("a hook command whose binary is gone, or an event without unwind's hook, is named with the fix", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    writeFiles(root, {
      ".claude/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: "/nonexistent/bin/unwind hook claude" }] }] } }),
    });
    const [h] = hooksOf(root);
    expect(h).toMatchObject({ harness: "claude", commandFound: false, events: ["PreToolUse"], missing: ["PostToolUse", "PostToolUseFailure"] });
    const text = unwind(root, ["status"]).stdout;
    expect(text).toContain("/nonexistent/bin/unwind is not there: run unwind init --claude again");
    expect(text).toContain("no hook on PostToolUse, PostToolUseFailure");
    // Control: init repairs both.
    expect(unwind(root, ["init", "--claude"]).code).toBe(0);
    expect(hooksOf(root)[0]).toMatchObject({ commandFound: true, missing: [] });
  });
});
