import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { claudePayload } from "../journal-helpers.js";
import { BIN, makeRepo, read, tempDir, write } from "../helpers.js";

const PKG = resolve(dirname(BIN), "..");

/** The environment of a person's shell: none of the npm_* variables an enclosing `npm test` sets (a prefix among them). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && !k.startsWith("UNWIND_")) env[k] = v;
  return { ...env, NO_COLOR: "1", ...extra };
}

let prefix = "";
let files: string[] = [];
let installOutput = "";

// One pack and one install for the file. The pack skips prepack's build: `npm test` has just built
// dist/, and a rebuild would empty it under the test files running beside this one.
beforeAll(() => {
  const out = tempDir("unwind-pack-");
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", out], { cwd: PKG, env: cleanEnv(), encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }),
  ) as { filename: string; files: { path: string }[] }[];
  files = packed[0]!.files.map((f) => f.path);
  prefix = tempDir("unwind-prefix-");
  // --offline: with no dependency to fetch, the install needs no registry and no cache.
  installOutput = execFileSync("npm", ["install", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", join(out, packed[0]!.filename)], {
    cwd: out,
    env: cleanEnv(),
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}, 120_000);

/** A shell's environment with the prefix's bin/ on PATH, and nothing of the checkout the test runs from. */
const shellEnv = () => cleanEnv({ PATH: [join(prefix, "bin"), dirname(process.execPath), "/usr/bin", "/bin"].join(delimiter) });

/** Runs the installed `unwind` as a shell would find it on PATH. */
function installed(cwd: string, args: string[], input = "") {
  const r = spawnSync("unwind", args, {
    cwd,
    input,
    encoding: "utf8",
    env: shellEnv(),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("the packed tarball, installed into an empty prefix", () => {
  it("carries what it runs and nothing else, and installs with no dependency", () => {
    expect(files.length).toBeGreaterThan(0);
    const stray = files.filter((f) => !/^(bin|dist)\//.test(f) && !["package.json", "README.md", "LICENSE"].includes(f));
    expect(stray).toEqual([]);
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    for (const f of ["LICENSE", "bin/unwind", "dist/unwind.cjs", "dist/hook.cjs", "dist/mcp.cjs", "dist/lib/index.js", "dist/unwind.1"]) expect(files).toContain(f);
    expect(installOutput).toMatch(/added 1 package\b/);
    const home = join(prefix, "lib", "node_modules", "unwind");
    expect(existsSync(join(home, "node_modules"))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(home, "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest.dependencies ?? {}).toEqual({});
    // npm links the man page where `man unwind` looks for it under the prefix.
    expect(existsSync(join(prefix, "share", "man", "man1", "unwind.1"))).toBe(true);
  });

  it("runs --version, init --claude, the hook it installed on a real payload, and an undo", () => {
    const v = installed(tempDir(), ["--version"]);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^\d+\.\d+\.\d+ \(store format \d+\)\n$/);

    const root = makeRepo({ "a.txt": "one\n" });
    const init = installed(root, ["init", "--claude"]);
    expect(init.code, init.stderr).toBe(0);
    // On PATH, the installed copy writes its bare name into the hook command (it survives an upgrade).
    const settings = JSON.parse(read(root, ".claude/settings.json")) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
    const command = settings.hooks.PreToolUse![0]!.hooks[0]!.command;
    expect(command).toMatch(/ unwind hook claude$/);

    // As Claude Code runs it: the settings' command through a shell, the payload on stdin.
    const hook = (payload: string) => spawnSync("sh", ["-c", command], { cwd: root, input: payload, encoding: "utf8", env: shellEnv() });
    const input = { file_path: join(root, "a.txt"), content: "two\n" };
    const pre = hook(claudePayload(root, "sess-install-1", "PreToolUse", "Write", input, "toolu_install_1"));
    expect([pre.status, pre.stdout, pre.stderr]).toEqual([0, "", ""]);
    write(root, "a.txt", "two\n");
    const post = hook(claudePayload(root, "sess-install-1", "PostToolUse", "Write", input, "toolu_install_1"));
    expect([post.status, post.stdout, post.stderr]).toEqual([0, "", ""]);

    const log = installed(root, ["log", "--json"]);
    expect(log.code).toBe(0);
    expect(JSON.stringify(JSON.parse(log.stdout))).toContain("a.txt");

    const undo = installed(root, ["undo", "--session", "sess-install-1", "--json"]);
    expect(undo.code, undo.stderr).toBe(0);
    expect(read(root, "a.txt")).toBe("one\n");
  });
});
