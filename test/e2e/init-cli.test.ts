import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, read, unwind, write } from "../helpers.js";
import { claudePayload } from "../journal-helpers.js";

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

  it("a settings file it cannot parse is a usage error and is left as it was", () => {
    const root = makeRepo({ ".claude/settings.json": "{ not json" });
    const r = unwind(root, ["init", "--claude"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(".claude/settings.json");
    expect(read(root, ".claude/settings.json")).toBe("{ not json");
  });
});
