/**
 * What a harness still needs before it runs unwind's hooks, read from its own
 * files; the matchers that keep read-only tools from starting a hook; and the
 * hook command that survives the binary moving. Each rule beside the same
 * setup with its one deciding fact changed.
 */
import { chmodSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HARNESSES } from "../../../src/capture/harness/index.js";
import { type Harness, matcherExcept } from "../../../src/capture/harness/rules.js";
import { codexHookKeys, codexTrusts, commandFound, geminiTrusts, hookProgram, nextSteps, programOf } from "../../../src/capture/harness/setup.js";
import { tempDir, writeFiles } from "../../helpers.js";

/** How Claude Code and Gemini CLI test a matcher with characters beyond a plain list: a JavaScript regular expression. */
const fires = (matcher: string, tool: string) => new RegExp(matcher).test(tool);

describe("matchers: read-only tools start no hook, every other tool does", () => {
  for (const h of ["claude", "gemini"] as Harness[]) {
    const rules = HARNESSES[h];
    const m = matcherExcept(rules.quiet);
    it(`${h}: each quiet tool is left out; writing, shell and unknown tools fire`, () => {
      for (const t of rules.quiet) expect(fires(m, t), t).toBe(false);
      for (const t of [...Object.keys(rules.fileTools), "Bash", "run_shell_command", "SomeNewTool", "mcp__other__write"]) expect(fires(m, t), t).toBe(true);
      // Names that only start or end like a quiet tool are other tools.
      expect(fires(m, `${rules.quiet[0]}X`)).toBe(true);
      expect(fires(m, `X${rules.quiet[0]}`)).toBe(true);
    });
    it(`${h}: only read-only tools are quiet, and none that closes a background command's window`, () => {
      for (const t of rules.quiet) expect(rules.readOnly.has(t), t).toBe(true);
      for (const t of ["BashOutput", "KillShell", "KillBash", "TaskOutput", "TaskStop", "read_background_output", "list_background_processes"]) expect(rules.quiet).not.toContain(t);
    });
  }
  it("a name with regular expression characters is matched literally", () => {
    const m = matcherExcept(["a.b"]);
    expect(fires(m, "a.b")).toBe(false);
    expect(fires(m, "axb")).toBe(true);
  });
});

describe("Codex: is the project trusted?", () => {
  const config = (text: string) => {
    const dir = tempDir();
    writeFiles(dir, { "config.toml": text });
    return join(dir, "config.toml");
  };
  it('a [projects."<root>"] table with trust_level = "trusted" trusts it', () => {
    expect(codexTrusts(config('model = "x"\n\n[projects."/work/app"]\ntrust_level = "trusted"\n'), "/work/app")).toBe(true);
    expect(codexTrusts(config("[projects.'/work/app']\ntrust_level = 'trusted'\n"), "/work/app")).toBe(true);
  });
  it("another project, another level, or the key in another table does not", () => {
    expect(codexTrusts(config('[projects."/work/other"]\ntrust_level = "trusted"\n'), "/work/app")).toBe(false);
    expect(codexTrusts(config('[projects."/work/app"]\ntrust_level = "untrusted"\n'), "/work/app")).toBe(false);
    expect(codexTrusts(config('[projects."/work/app"]\n[tui]\ntrust_level = "trusted"\n'), "/work/app")).toBe(false);
    expect(codexTrusts("/nonexistent/config.toml", "/work/app")).toBe(false);
  });
  it("init's steps: trust, and approval of unwind's hooks, each asked for until config.toml has it", () => {
    const home = tempDir();
    const root = tempDir();
    writeFiles(root, {
      ".codex/hooks.json": JSON.stringify({
        hooks: {
          PreToolUse: [
            {
              hooks: [
                { type: "command", command: "lint" },
                { type: "command", command: "unwind hook codex" },
              ],
            },
          ],
          PostToolUse: [{ hooks: [{ type: "command", command: "unwind hook codex" }] }],
        },
      }),
    });
    const keys = codexHookKeys(root);
    const hooksJson = join(root, ".codex/hooks.json");
    expect(keys).toEqual([`${hooksJson}:pre_tool_use:0:1`, `${hooksJson}:post_tool_use:0:0`]);
    const steps = nextSteps(root, "codex", { HOME: home });
    expect(steps).toHaveLength(2);
    expect(steps[0]).toContain(`[projects."${root}"] trust_level = "trusted"`);
    expect(steps[1]).toContain("/hooks");
    const trust = `[projects."${root}"]\ntrust_level = "trusted"\n`;
    const approval = (key: string) => `[hooks.state."${key}"]\ntrusted_hash = "sha256:0123abcd"\n`;
    writeFiles(home, { ".codex/config.toml": trust + approval(keys[0]!) });
    expect(nextSteps(root, "codex", { HOME: home })).toEqual([steps[1]]); // one hook of two approved: still asked
    writeFiles(home, { ".codex/config.toml": trust + approval(keys[0]!) + approval(keys[1]!) });
    expect(nextSteps(root, "codex", { HOME: home })).toEqual([]);
    expect(nextSteps(root, "codex", { HOME: home, CODEX_HOME: tempDir() })).toHaveLength(2); // CODEX_HOME is where Codex looks
  });
});

describe("Gemini CLI: is the folder trusted?", () => {
  const folders = (rules: Record<string, string>) => {
    const dir = tempDir();
    writeFiles(dir, { "trustedFolders.json": JSON.stringify(rules) });
    return join(dir, "trustedFolders.json");
  };
  it("the folder or a folder above it, or TRUST_PARENT on a sibling", () => {
    expect(geminiTrusts(folders({ "/work/app": "TRUST_FOLDER" }), "/work/app")).toBe(true);
    expect(geminiTrusts(folders({ "/work": "TRUST_FOLDER" }), "/work/app")).toBe(true);
    expect(geminiTrusts(folders({ "/work/other": "TRUST_PARENT" }), "/work/app")).toBe(true);
  });
  it("not a folder that only starts alike, not below DO_NOT_TRUST, not without a file", () => {
    expect(geminiTrusts(folders({ "/work/ap": "TRUST_FOLDER" }), "/work/app")).toBe(false);
    expect(geminiTrusts(folders({ "/work": "TRUST_FOLDER", "/work/app": "DO_NOT_TRUST" }), "/work/app")).toBe(false);
    expect(geminiTrusts("/nonexistent/trustedFolders.json", "/work/app")).toBe(false);
  });
  it("init's step is there until the folder is trusted, by file or by GEMINI_CLI_TRUST_WORKSPACE", () => {
    const home = tempDir();
    expect(nextSteps("/work/app", "gemini", { HOME: home })[0]).toContain('"/work/app": "TRUST_FOLDER"');
    expect(nextSteps("/work/app", "gemini", { HOME: home, GEMINI_CLI_TRUST_WORKSPACE: "true" })).toEqual([]);
    writeFiles(home, { ".gemini/trustedFolders.json": JSON.stringify({ "/work": "TRUST_FOLDER" }) });
    expect(nextSteps("/work/app", "gemini", { HOME: home })).toEqual([]);
  });
});

describe("the hook command", () => {
  const binary = () => {
    const dir = tempDir();
    writeFiles(dir, { "real/unwind": "#!/bin/sh\n" });
    chmodSync(join(dir, "real/unwind"), 0o755);
    return { dir, bin: join(dir, "real/unwind") };
  };
  it("is the bare name when `unwind` on PATH is this very binary, so it survives the binary moving", () => {
    const { dir, bin } = binary();
    writeFiles(dir, { "path/.keep": "" });
    symlinkSync(bin, join(dir, "path/unwind"));
    expect(hookProgram(bin, { PATH: `/nonexistent:${join(dir, "path")}` })).toBe("unwind");
  });
  it("is the absolute path when `unwind` on PATH is another binary, or there is none", () => {
    const { bin } = binary();
    const other = binary();
    expect(hookProgram(bin, { PATH: join(other.dir, "real") })).toBe(bin);
    expect(hookProgram(bin, { PATH: "" })).toBe(bin);
    expect(hookProgram("/opt/my tools/unwind", { PATH: "" })).toBe("'/opt/my tools/unwind'");
  });
  it("its program is the word after an env and the env's own words", () => {
    expect(programOf("env -u NODE_EXTRA_CA_CERTS unwind hook claude")).toBe("unwind");
    expect(programOf("env -u A -u B X=1 '/opt/my tools/unwind' hook codex")).toBe("/opt/my tools/unwind");
    expect(programOf("/usr/bin/unwind hook gemini")).toBe("/usr/bin/unwind");
  });

  it("is found when its program is there, by path or on PATH; not when it is gone", () => {
    const { dir, bin } = binary();
    expect(commandFound(`${bin} hook claude`, { PATH: "" })).toBe(true);
    expect(commandFound(`'${bin}' hook claude`, { PATH: "" })).toBe(true);
    expect(commandFound("unwind hook claude", { PATH: join(dir, "real") })).toBe(true);
    expect(commandFound("unwind hook claude", { PATH: "/nonexistent" })).toBe(false);
    expect(commandFound(`${bin}-moved hook claude`, { PATH: "" })).toBe(false);
    expect(commandFound(`env -u NODE_EXTRA_CA_CERTS ${bin} hook claude`, { PATH: "" })).toBe(true);
    expect(commandFound(`env -u NODE_EXTRA_CA_CERTS ${bin}-moved hook claude`, { PATH: "/usr/bin:/bin" })).toBe(false); // env is there, unwind is not
  });
});
