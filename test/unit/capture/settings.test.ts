/**
 * `unwind init`: merging unwind's hooks into the harnesses' project settings.
 * The pure merge is tested as a table; installHooks on real temporary
 * directories, each rule with a negative control (the same setup with the
 * one triggering fact changed gives a different outcome).
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse } from "jsonc-parser";
import { describe, expect, it } from "vitest";
import { HARNESSES as HARNESS_RULES } from "../../../src/capture/harness/index.js";
import { type Harness, matcherExcept } from "../../../src/capture/harness/rules.js";
import { hookSettingsFile, installHooks, isUnwindHookCommand, mergeHooks } from "../../../src/capture/harness/settings.js";
import { dirFingerprint, tempDir, writeFiles } from "../../helpers.js";

const CMD = "/opt/unwind/bin/unwind";
/** The harnesses with a JSON settings file to merge into (OpenCode and Cline get files of unwind's own: own-files.test.ts). */
type JsonHarness = Exclude<Harness, "opencode" | "cline">;
const CLAUDE_MATCHER = matcherExcept(HARNESS_RULES.claude.quiet);
const GEMINI_MATCHER = matcherExcept(HARNESS_RULES.gemini.quiet);
const QWEN_MATCHER = matcherExcept(HARNESS_RULES.qwen.quiet);
const COPILOT_MATCHER = matcherExcept(HARNESS_RULES.copilot.quiet);
const copilotEntry = (event: string) => ({ type: "command", bash: `${CMD} hook copilot ${event}`, matcher: COPILOT_MATCHER, timeoutSec: 30 });
const json = (v: unknown, indent: number | string = 2) => JSON.stringify(v, null, indent) + "\n";

/** The exact files a fresh install writes. */
const FRESH: Record<JsonHarness, unknown> = {
  claude: {
    hooks: {
      PreToolUse: [{ matcher: CLAUDE_MATCHER, hooks: [{ type: "command", command: `${CMD} hook claude`, timeout: 30 }] }],
      PostToolUse: [{ matcher: CLAUDE_MATCHER, hooks: [{ type: "command", command: `${CMD} hook claude`, timeout: 30 }] }],
      PostToolUseFailure: [{ matcher: CLAUDE_MATCHER, hooks: [{ type: "command", command: `${CMD} hook claude`, timeout: 30 }] }],
    },
  },
  codex: {
    hooks: {
      PreToolUse: [{ hooks: [{ type: "command", command: `${CMD} hook codex`, timeout: 30 }] }],
      PostToolUse: [{ hooks: [{ type: "command", command: `${CMD} hook codex`, timeout: 30 }] }],
    },
  },
  gemini: {
    hooks: {
      BeforeTool: [{ matcher: GEMINI_MATCHER, hooks: [{ name: "unwind", type: "command", command: `${CMD} hook gemini`, timeout: 30000 }] }],
      AfterTool: [{ matcher: GEMINI_MATCHER, hooks: [{ name: "unwind", type: "command", command: `${CMD} hook gemini`, timeout: 30000 }] }],
    },
  },
  qwen: {
    $version: 4,
    hooks: {
      PreToolUse: [{ matcher: QWEN_MATCHER, hooks: [{ type: "command", command: `${CMD} hook qwen`, timeout: 30 }] }],
      PostToolUse: [{ matcher: QWEN_MATCHER, hooks: [{ type: "command", command: `${CMD} hook qwen`, timeout: 30 }] }],
      PostToolUseFailure: [{ matcher: QWEN_MATCHER, hooks: [{ type: "command", command: `${CMD} hook qwen`, timeout: 30 }] }],
    },
  },
  copilot: {
    version: 1,
    hooks: {
      preToolUse: [copilotEntry("preToolUse")],
      postToolUse: [copilotEntry("postToolUse")],
      postToolUseFailure: [copilotEntry("postToolUseFailure")],
    },
  },
};
const EVENTS: Record<JsonHarness, string[]> = {
  claude: ["PreToolUse", "PostToolUse", "PostToolUseFailure"],
  codex: ["PreToolUse", "PostToolUse"],
  gemini: ["BeforeTool", "AfterTool"],
  qwen: ["PreToolUse", "PostToolUse", "PostToolUseFailure"],
  copilot: ["preToolUse", "postToolUse", "postToolUseFailure"],
};
const FILES: Record<JsonHarness, string> = {
  claude: ".claude/settings.json",
  codex: ".codex/hooks.json",
  gemini: ".gemini/settings.json",
  qwen: ".qwen/settings.json",
  copilot: ".github/hooks/unwind.json",
};
const HARNESSES: JsonHarness[] = ["claude", "codex", "gemini", "qwen", "copilot"];

function deepFreeze<T>(v: T): T {
  if (typeof v === "object" && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

function unwindEntry(harness: Harness, command = CMD): unknown {
  const c = `${command} hook ${harness}`;
  return harness === "gemini" ? { name: "unwind", type: "command", command: c, timeout: 30000 } : { type: "command", command: c, timeout: 30 };
}

/** A user's Claude settings: other top-level keys, a Bash linter group, another event. */
const USER_CLAUDE = {
  permissions: { allow: ["Bash(npm test:*)"], deny: [] },
  model: "opus",
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "npx eslint --stdin", timeout: 10 }] }],
    Stop: [{ hooks: [{ type: "command", command: "say done" }] }],
  },
  env: { FOO: "1" },
};

/** USER_CLAUDE after unwind's hooks are merged in: the user's groups, events and keys kept, in order. */
const CLAUDE_MERGED = {
  permissions: USER_CLAUDE.permissions,
  model: "opus",
  hooks: {
    PreToolUse: [USER_CLAUDE.hooks.PreToolUse[0], { matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }],
    Stop: USER_CLAUDE.hooks.Stop,
    PostToolUse: [{ matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }],
    PostToolUseFailure: [{ matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }],
  },
  env: { FOO: "1" },
};

// ------------------------------------------------------------------ pure merge

describe("mergeHooks (pure)", () => {
  it.each(HARNESSES)("%s: no settings, or {}, gives exactly the documented shape", (h) => {
    expect(mergeHooks(h, undefined, CMD)).toEqual({ settings: FRESH[h], added: EVENTS[h], updated: [] });
    expect(mergeHooks(h, {}, CMD)).toEqual({ settings: FRESH[h], added: EVENTS[h], updated: [] });
    expect(hookSettingsFile(h)).toBe(FILES[h]);
  });

  it.each(HARNESSES)("%s: merging into its own output changes nothing, and never mutates its input", (h) => {
    const once = deepFreeze(mergeHooks(h, undefined, CMD).settings);
    const twice = mergeHooks(h, once, CMD); // frozen input: a mutation would throw
    expect(twice).toEqual({ settings: once, added: [], updated: [] });
    expect(twice.settings).not.toBe(once);
  });

  const table: Array<{ name: string; harness: Harness; existing: unknown; settings: unknown; added: string[]; updated?: string[] }> = [
    {
      name: "user settings, groups and events kept in order; ours appended as a new group",
      harness: "claude",
      existing: USER_CLAUDE,
      settings: CLAUDE_MERGED,
      added: ["PreToolUse", "PostToolUse", "PostToolUseFailure"],
    },
    {
      name: "present on one event only: only the other events are added",
      harness: "claude",
      existing: { hooks: { PreToolUse: [{ matcher: "Edit|Write", hooks: [unwindEntry("claude")] }] } },
      settings: {
        hooks: {
          PreToolUse: [{ matcher: "Edit|Write", hooks: [unwindEntry("claude")] }],
          PostToolUse: [{ matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }],
          PostToolUseFailure: [{ matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }],
        },
      },
      added: ["PostToolUse", "PostToolUseFailure"],
    },
    {
      name: "an earlier install's every-tool matcher, on a group of unwind's alone, becomes this version's (the user's Edit|Write above is kept)",
      harness: "claude",
      existing: {
        hooks: {
          PreToolUse: [{ matcher: "*", hooks: [unwindEntry("claude")] }],
          PostToolUse: [{ matcher: "^(?!(?:Read)$).*", hooks: [unwindEntry("claude")] }],
          PostToolUseFailure: [{ matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }],
        },
      },
      settings: {
        hooks: {
          PreToolUse: [{ matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }],
          PostToolUse: [{ matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }],
          PostToolUseFailure: [{ matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }],
        },
      },
      added: [],
      updated: ["PreToolUse", "PostToolUse"],
    },
    {
      name: "gemini: an earlier install without a matcher gets this version's",
      harness: "gemini",
      existing: { hooks: { BeforeTool: [{ hooks: [unwindEntry("gemini")] }], AfterTool: [{ matcher: GEMINI_MATCHER, hooks: [unwindEntry("gemini")] }] } },
      settings: { hooks: { BeforeTool: [{ hooks: [unwindEntry("gemini")], matcher: GEMINI_MATCHER }], AfterTool: [{ matcher: GEMINI_MATCHER, hooks: [unwindEntry("gemini")] }] } },
      added: [],
      updated: ["BeforeTool"],
    },
    {
      name: "moved binary: the one entry is updated in place, its other fields and neighbours kept",
      harness: "claude",
      existing: {
        hooks: {
          PreToolUse: [
            {
              matcher: "*",
              hooks: [
                { type: "command", command: "lint" },
                { type: "command", command: "/old/bin/unwind hook claude", timeout: 99 },
              ],
            },
          ],
          PostToolUse: [{ matcher: "*", hooks: [{ type: "command", command: "'/old path/unwind' hook claude", timeout: 30 }] }],
        },
      },
      settings: {
        hooks: {
          PreToolUse: [
            {
              matcher: "*",
              hooks: [
                { type: "command", command: "lint" },
                { type: "command", command: `${CMD} hook claude`, timeout: 99 },
              ],
            },
          ],
          PostToolUse: [{ matcher: CLAUDE_MATCHER, hooks: [{ type: "command", command: `${CMD} hook claude`, timeout: 30 }] }],
          // Installed before PostToolUseFailure was hooked: that event is added, not "updated".
          PostToolUseFailure: [{ matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }],
        },
      },
      added: ["PostToolUseFailure"],
      updated: ["PreToolUse", "PostToolUse"],
    },
    {
      name: "a current entry and a stale one: nothing changes (nothing is dropped)",
      harness: "codex",
      existing: { hooks: { PreToolUse: [{ hooks: [unwindEntry("codex", "/old/unwind"), unwindEntry("codex")] }], PostToolUse: [{ hooks: [unwindEntry("codex")] }] } },
      settings: { hooks: { PreToolUse: [{ hooks: [unwindEntry("codex", "/old/unwind"), unwindEntry("codex")] }], PostToolUse: [{ hooks: [unwindEntry("codex")] }] } },
      added: [],
    },
    {
      name: "`hook claude` commands that are not unwind's are left alone (negative control for the update)",
      harness: "claude",
      existing: {
        hooks: {
          PreToolUse: [
            {
              matcher: "*",
              hooks: [
                { type: "command", command: "other-tool hook claude" },
                { type: "command", command: "/home/unwinder/bin/audit hook claude" },
              ],
            },
          ],
          PostToolUse: [
            {
              hooks: [
                { type: "command", command: "/opt/unwind/bin/unwind hook codex" },
                { type: "command", command: "/opt/unwind/bin/unwind hook claude --verbose" },
              ],
            },
          ],
        },
      },
      settings: {
        hooks: {
          PreToolUse: [
            {
              matcher: "*",
              hooks: [
                { type: "command", command: "other-tool hook claude" },
                { type: "command", command: "/home/unwinder/bin/audit hook claude" },
              ],
            },
            { matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] },
          ],
          PostToolUse: [
            {
              hooks: [
                { type: "command", command: "/opt/unwind/bin/unwind hook codex" },
                { type: "command", command: "/opt/unwind/bin/unwind hook claude --verbose" },
              ],
            },
            { matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] },
          ],
          PostToolUseFailure: [{ matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }],
        },
      },
      added: ["PreToolUse", "PostToolUse", "PostToolUseFailure"],
    },
    {
      name: "gemini: other blocks and non-event keys of hooks kept",
      harness: "gemini",
      existing: { general: { vimMode: true }, hooks: { disabled: ["x"], BeforeTool: [] }, ui: { theme: "dark" } },
      settings: {
        general: { vimMode: true },
        hooks: { disabled: ["x"], BeforeTool: [{ matcher: GEMINI_MATCHER, hooks: [unwindEntry("gemini")] }], AfterTool: [{ matcher: GEMINI_MATCHER, hooks: [unwindEntry("gemini")] }] },
        ui: { theme: "dark" },
      },
      added: ["BeforeTool", "AfterTool"],
    },
    {
      name: "groups without a hooks array and entries without a command are skipped, not dropped",
      harness: "codex",
      existing: { description: "d", hooks: { PreToolUse: [{ matcher: "Bash" }, { hooks: [{ type: "prompt", prompt: "p" }] }] } },
      settings: {
        description: "d",
        hooks: {
          PreToolUse: [{ matcher: "Bash" }, { hooks: [{ type: "prompt", prompt: "p" }] }, { hooks: [unwindEntry("codex")] }],
          PostToolUse: [{ hooks: [unwindEntry("codex")] }],
        },
      },
      added: ["PreToolUse", "PostToolUse"],
    },
  ];
  it.each(table)("$harness: $name", ({ harness, existing, settings, added, updated }) => {
    const r = mergeHooks(harness, deepFreeze(existing), CMD);
    expect(r).toEqual({ settings, added, updated: updated ?? [] });
    // Key order is part of the contract, toEqual does not check it.
    expect(JSON.stringify(r.settings)).toBe(JSON.stringify(settings));
  });

  const bad: Array<[string, unknown, string]> = [
    ["top level is an array", [], "the top level is an array"],
    ["top level is a string", "x", "the top level is a string"],
    ["top level is null", null, "the top level is null"],
    ["hooks is an array", { hooks: [] }, `"hooks" is an array`],
    ["hooks is a string", { hooks: "x" }, `"hooks" is a string`],
    ["hooks is null", { hooks: null }, `"hooks" is null`],
    ["an event is an object", { hooks: { PreToolUse: {} } }, `"hooks.PreToolUse" is an object, expected an array`],
    ["an event is a string", { hooks: { PostToolUse: "x" } }, `"hooks.PostToolUse" is a string`],
    ["a group is a string", { hooks: { PreToolUse: ["x"] } }, `"hooks.PreToolUse[0]" is a string`],
    ["a group's hooks is an object", { hooks: { PreToolUse: [{ hooks: {} }] } }, `"hooks.PreToolUse[0].hooks" is an object`],
    ["an entry is a string", { hooks: { PreToolUse: [{ hooks: [{ command: "a" }, "b"] }] } }, `"hooks.PreToolUse[0].hooks[1]" is a string`],
  ];
  it.each(bad)("refuses when %s, naming the file and the problem on one line", (_name, existing, problem) => {
    let message = "";
    try {
      mergeHooks("claude", existing, CMD);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(".claude/settings.json: ");
    expect(message).toContain(problem);
    expect(message).toContain("by hand");
    expect(message).not.toContain("\n");
  });

  it("a wrongly typed event the harness does not use is not unwind's business (negative control)", () => {
    const r = mergeHooks("claude", { hooks: { Stop: "x", BeforeTool: 3 } }, CMD);
    expect(r.added).toEqual(["PreToolUse", "PostToolUse", "PostToolUseFailure"]);
    expect((r.settings as { hooks: Record<string, unknown> }).hooks.Stop).toBe("x");
  });

  it.each([
    ["/opt/unwind/bin/unwind hook claude", "claude", true],
    ["'/my path/bin/unwind' hook claude", "claude", true],
    ["npx -y unwind@0.1.0 hook claude", "claude", true],
    ["node /srv/unwind/dist/cli.js hook claude", "claude", true],
    ["C:\\tools\\unwind.cmd hook gemini", "gemini", true],
    ["unwind hook codex  ", "codex", true],
    ["unwind hook codex", "claude", false],
    ["other-tool hook claude", "claude", false],
    ["/home/unwinder/bin/audit hook claude", "claude", false],
    ["my-unwind-linter hook claude", "claude", false],
    ["unwind hook claude --json", "claude", false],
    ["hook claude", "claude", false],
  ] as const)("isUnwindHookCommand(%j, %s) is %s", (cmd, h, want) => {
    expect(isUnwindHookCommand(cmd, h)).toBe(want);
  });
});

// ------------------------------------------------------------------ files on disk

function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected an error");
}

describe("installHooks", () => {
  it.each(HARNESSES)("%s: a fresh install creates the directory and writes exactly the documented file", (h) => {
    const root = tempDir();
    const r = installHooks(root, h, CMD);
    expect(r).toEqual({ harness: h, file: FILES[h], changed: true, added: EVENTS[h], updated: [] });
    expect(readFileSync(join(root, FILES[h]), "utf8")).toBe(json(FRESH[h]));
    // No temp file left behind.
    expect(readdirSync(join(root, FILES[h], ".."))).toEqual([FILES[h].split("/").at(-1)]);
  });

  it.each(HARNESSES)("%s: a second run changes nothing, not even the mtime (the first run is the control)", (h) => {
    const root = tempDir();
    expect(installHooks(root, h, CMD).changed).toBe(true);
    const before = dirFingerprint(root);
    const again = installHooks(root, h, CMD);
    expect(again).toEqual({ harness: h, file: FILES[h], changed: false, added: [], updated: [] });
    expect(dirFingerprint(root)).toEqual(before);
  });

  it("claude: the user's settings, groups and other events are kept, in order", () => {
    const root = tempDir();
    writeFiles(root, { ".claude/settings.json": json(USER_CLAUDE), ".claude/settings.local.json": "{}\n" });
    const r = installHooks(root, "claude", CMD);
    expect(r.added).toEqual(["PreToolUse", "PostToolUse", "PostToolUseFailure"]);
    expect(readFileSync(join(root, ".claude/settings.json"), "utf8")).toBe(json(CLAUDE_MERGED));
    expect(readFileSync(join(root, ".claude/settings.local.json"), "utf8")).toBe("{}\n");
    const before = dirFingerprint(root);
    expect(installHooks(root, "claude", CMD).changed).toBe(false);
    expect(dirFingerprint(root)).toEqual(before);
  });

  it("gemini: a general block and hooks.disabled are kept; codex: description kept", () => {
    const root = tempDir();
    const gem = { general: { preferredEditor: "vim" }, hooks: { disabled: ["noisy"] }, model: { name: "gemini-2.5-pro" } };
    writeFiles(root, { ".gemini/settings.json": json(gem), ".codex/hooks.json": json({ description: "team hooks", hooks: {} }) });
    expect(installHooks(root, "gemini", CMD).changed).toBe(true);
    expect(readFileSync(join(root, ".gemini/settings.json"), "utf8")).toBe(
      json({ general: gem.general, hooks: { disabled: ["noisy"], ...(FRESH.gemini as { hooks: object }).hooks }, model: gem.model }),
    );
    expect(installHooks(root, "codex", CMD).changed).toBe(true);
    expect(readFileSync(join(root, ".codex/hooks.json"), "utf8")).toBe(json({ description: "team hooks", ...(FRESH.codex as object) }));
  });

  it("a moved binary updates the one entry per event instead of adding a second", () => {
    const root = tempDir();
    installHooks(root, "claude", "/old/place/bin/unwind");
    const r = installHooks(root, "claude", CMD);
    expect(r).toEqual({ harness: "claude", file: FILES.claude, changed: true, added: [], updated: ["PreToolUse", "PostToolUse", "PostToolUseFailure"] });
    expect(readFileSync(join(root, FILES.claude), "utf8")).toBe(json(FRESH.claude));
    // Control: the same binary again is a no-op.
    expect(installHooks(root, "claude", CMD).changed).toBe(false);
  });

  it("unrelated `hook claude` commands are left alone and unwind's is added beside them", () => {
    const root = tempDir();
    const user = { hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: "other-tool hook claude" }] }] } };
    writeFiles(root, { ".claude/settings.json": json(user) });
    const r = installHooks(root, "claude", CMD);
    expect(r.added).toEqual(["PreToolUse", "PostToolUse", "PostToolUseFailure"]);
    const after = JSON.parse(readFileSync(join(root, FILES.claude), "utf8"));
    expect(after.hooks.PreToolUse).toEqual([user.hooks.PreToolUse[0], { matcher: CLAUDE_MATCHER, hooks: [unwindEntry("claude")] }]);
  });

  const broken: Array<[JsonHarness, string, string]> = [
    ["claude", '{"hooks": {"PreToolUse": [}\n', "not valid JSON"],
    ["claude", '{"model": "opus",}\n', "not valid JSON"],
    ["codex", "not json at all", "not valid JSON"],
    ["gemini", '{\n  // my settings\n  "general": {\n}\n', "not valid JSON with comments (CloseBraceExpected on line"],
    ["claude", '{\n  // my settings\n  "model": "opus"\n}\n', "not valid JSON"],
    ["claude", '{"hooks": []}\n', `"hooks" is an array, expected an object`],
    ["codex", '{"hooks": "PreToolUse"}\n', `"hooks" is a string, expected an object`],
    ["claude", '{"hooks": {"PreToolUse": "unwind"}}\n', `"hooks.PreToolUse" is a string, expected an array`],
    ["gemini", '{"hooks": {"AfterTool": {"hooks": []}}}\n', `"hooks.AfterTool" is an object, expected an array`],
    ["claude", "[1, 2]\n", "the top level is an array"],
  ];
  it.each(broken)("%s: %j is left byte-identical and refused, naming the file", (h, content, problem) => {
    const root = tempDir();
    writeFiles(root, { [FILES[h]]: content });
    const before = dirFingerprint(root);
    const message = errorOf(() => installHooks(root, h, CMD));
    expect(message).toContain(join(root, FILES[h]));
    expect(message).toContain(problem);
    expect(message).toContain("fix it by hand");
    expect(message).not.toContain("\n");
    expect(dirFingerprint(root)).toEqual(before);
  });

  it("gemini: a file with comments and trailing commas is merged, every comment and the user's lines kept", () => {
    const root = tempDir();
    const text = '{\n  // my settings\n  "general": {\n    "vimMode": true, // I like vim\n  },\n  /* theme */ "ui": {\n    "theme": "dark"\n  },\n}\n';
    writeFiles(root, { [FILES.gemini]: text });
    expect(installHooks(root, "gemini", CMD).added).toEqual(["BeforeTool", "AfterTool"]);
    const after = readFileSync(join(root, FILES.gemini), "utf8");
    for (const line of ["  // my settings", '    "vimMode": true, // I like vim', '  /* theme */ "ui": {']) expect(after.split("\n")).toContain(line);
    const parsed = parse(after, [], { allowTrailingComma: true });
    expect(parsed).toEqual({ general: { vimMode: true }, ui: { theme: "dark" }, ...(FRESH.gemini as object) });
    // A second run reads its own output back and changes nothing.
    expect(installHooks(root, "gemini", CMD).changed).toBe(false);
    expect(readFileSync(join(root, FILES.gemini), "utf8")).toBe(after);
  });

  it("negative control for the refusals: the same kind of file, well formed, is merged", () => {
    const root = tempDir();
    writeFiles(root, { [FILES.claude]: '{"model": "opus"}\n' });
    expect(installHooks(root, "claude", CMD).changed).toBe(true);
    expect(readFileSync(join(root, FILES.claude), "utf8")).toBe(json({ model: "opus", ...(FRESH.claude as object) }));
  });

  it("keeps the file's indentation, line endings and mode", () => {
    const root = tempDir();
    writeFiles(root, {
      [FILES.claude]: { content: json({ model: "opus" }, 4), mode: 0o600 },
      [FILES.codex]: json({ hooks: {} }, "\t").replace(/\n/g, "\r\n"),
    });
    installHooks(root, "claude", CMD);
    expect(readFileSync(join(root, FILES.claude), "utf8")).toBe(json({ model: "opus", ...(FRESH.claude as object) }, 4));
    expect(statSync(join(root, FILES.claude)).mode & 0o777).toBe(0o600);
    installHooks(root, "codex", CMD);
    expect(readFileSync(join(root, FILES.codex), "utf8")).toBe(json(FRESH.codex, "\t").replace(/\n/g, "\r\n"));
  });

  it("an empty file is treated as empty settings", () => {
    const root = tempDir();
    writeFiles(root, { [FILES.gemini]: "\n" });
    expect(installHooks(root, "gemini", CMD).changed).toBe(true);
    expect(readFileSync(join(root, FILES.gemini), "utf8")).toBe(json(FRESH.gemini));
  });

  it("a settings file kept as a symlink is edited where it points; the link stays a link", () => {
    const root = tempDir();
    const dotfiles = tempDir();
    writeFiles(dotfiles, { "claude-settings.json": json({ model: "opus" }) });
    writeFiles(root, { [FILES.claude]: { symlink: join(dotfiles, "claude-settings.json") } });
    expect(installHooks(root, "claude", CMD).changed).toBe(true);
    expect(lstatSync(join(root, FILES.claude)).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(root, FILES.claude))).toBe(join(dotfiles, "claude-settings.json"));
    expect(readFileSync(join(dotfiles, "claude-settings.json"), "utf8")).toBe(json({ model: "opus", ...(FRESH.claude as object) }));
    expect(readdirSync(dotfiles)).toEqual(["claude-settings.json"]);
  });

  it("a dangling symlink is refused, not replaced", () => {
    const root = tempDir();
    writeFiles(root, { [FILES.claude]: { symlink: "/nonexistent/unwind-test/settings.json" } });
    expect(errorOf(() => installHooks(root, "claude", CMD))).toContain("symlink to a missing file");
    expect(readlinkSync(join(root, FILES.claude))).toBe("/nonexistent/unwind-test/settings.json");
  });

  it("a settings path that is a directory is refused", () => {
    const root = tempDir();
    writeFiles(root, { [`${FILES.codex}/x`]: "" });
    expect(errorOf(() => installHooks(root, "codex", CMD))).toContain("not a regular file");
  });

  it("the three harnesses live side by side without touching each other", () => {
    const root = tempDir();
    for (const h of HARNESSES) installHooks(root, h, CMD);
    for (const h of HARNESSES) expect(readFileSync(join(root, FILES[h]), "utf8")).toBe(json(FRESH[h]));
  });
});
