import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { claudeCall } from "../journal-helpers.js";
import { BIN, makeRepo, tempDir, unwind, write } from "../helpers.js";

/** A shell CI must have: .ci/run installs zsh, fish and man; a machine without one fails here rather than skip. */
function shell(name: string, args: string[], input = "") {
  const r = spawnSync(name, args, { input, encoding: "utf8", timeout: 30_000, env: { ...process.env, HOME: tempDir(), TERM: "dumb" } });
  if (r.error) throw new Error(`${name} is not installed (.ci/run installs it): ${r.error.message}`);
  return r;
}

function script(sh: string): string {
  const r = unwind(tempDir(), ["completion", sh]);
  expect(r.code, r.stderr).toBe(0);
  const file = join(tempDir(), `unwind.${sh}`);
  writeFileSync(file, r.stdout);
  return file;
}

describe("shell completions from the command table", () => {
  it("bash: completes a subcommand, a nested one, an option and an option's value; nothing for what is not there", () => {
    const file = script("bash");
    const complete = (...words: string[]) => {
      const r = shell("bash", [
        "--norc",
        "--noprofile",
        "-c",
        `source "$1"; COMP_WORDS=("\${@:2}"); COMP_CWORD=$(($# - 2)); _unwind; printf '%s\\n' "\${COMPREPLY[@]}"`,
        "x",
        file,
        "unwind",
        ...words,
      ]);
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.split("\n").filter(Boolean);
    };
    expect(complete("sna")).toEqual(["snapshot", "snapshots"]);
    expect(complete("stack", "pu")).toEqual(["push"]);
    expect(complete("undo", "--dry")).toEqual(["--dry-run"]);
    expect(complete("--color", "al")).toEqual(["always"]);
    expect(complete("completion", "")).toEqual(expect.arrayContaining(["bash", "zsh", "fish"]));
    // Negative controls: an option of another command, and one that does not exist.
    expect(complete("snapshots", "--saf")).toEqual([]);
    expect(complete("undo", "--zz")).toEqual([]);
  });

  it("fish: completes a subcommand, a nested one, an option and an option's value", () => {
    const file = script("fish");
    const complete = (line: string) => {
      const r = shell("fish", ["--no-config", "-c", `source ${file}; complete -C '${line}'`]);
      expect(r.status, r.stderr).toBe(0);
      return r.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("\t")[0]);
    };
    expect(complete("unwind sna")).toEqual(["snapshot", "snapshots"]);
    expect(complete("unwind stack pu")).toEqual(["push"]);
    expect(complete("unwind undo --dry")).toEqual(["--dry-run"]);
    expect(complete("unwind --color al")).toEqual(["always"]);
    expect(complete("unwind snapshots --saf")).toEqual([]);
  });

  it("zsh: completes a subcommand and an option at a real prompt (zpty)", () => {
    const file = script("zsh");
    // zsh completes only inside its line editor: a zsh drives an interactive one on a pseudo-terminal.
    const driver = [
      "zmodload zsh/zpty",
      "zpty z 'zsh -f -i'",
      `zpty -w z 'PS1="%% "; autoload -Uz compinit; compinit -u -D; source ${file}; print READ""Y'`,
      "zpty -r z out '*READY*'",
      "for line want in 'unwind stack pu' 'unwind stack push' 'unwind undo --dry' 'unwind undo --dry-run'; do",
      "  zpty -w -n z \"$line\"$'\\t'",
      '  zpty -r z out "*$want*" && print "completed: $want"',
      "  zpty -w -n z $'\\C-u'",
      "done",
      "zpty -d z",
    ].join("\n");
    const r = shell("zsh", ["-f", "-c", driver]);
    expect(r.stdout).toContain("completed: unwind stack push");
    expect(r.stdout).toContain("completed: unwind undo --dry-run");
  });
});

describe("the man page", () => {
  it("dist/unwind.1 renders with man, every command in it, without a warning", () => {
    const page = join(dirname(BIN), "..", "dist", "unwind.1");
    const r = shell("man", ["--warnings", "-l", page], "");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const text = r.stdout.replace(/.\x08/g, "");
    for (const heading of ["NAME", "SYNOPSIS", "GLOBAL OPTIONS", "COMMANDS", "EXIT STATUS"]) expect(text).toContain(heading);
    // Every command of the table, nested ones included, from the same table --help reads.
    for (const cmd of ["unwind snapshot", "unwind undo", "unwind stack push", "unwind watch status", "unwind completion"]) expect(text).toContain(cmd);
    expect(text).toContain("--dry-run");
  });
});

describe("unwind with no command: where this work tree stands", () => {
  const lines = (s: string) => s.split("\n");

  it("outside a repository: what to do first, exit 0, nothing created", () => {
    const dir = tempDir();
    const r = unwind(dir, []);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("is not in a git repository");
    expect(r.stdout).toContain("unwind init --claude");
    expect(spawnSync("ls", ["-A", dir], { encoding: "utf8" }).stdout).toBe("");
    for (const l of lines(r.stdout)) expect(l.length).toBeLessThanOrEqual(80);
  });

  it("in a repository: the store, the hooks per client, the last sessions and how to take one back", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const before = unwind(root, []);
    expect(before.code).toBe(0);
    expect(before.stdout).toMatch(/store +not created yet/);
    expect(before.stdout).toMatch(/claude +not installed \(unwind init --claude\)/);
    expect(unwind(root, ["init", "--claude"]).code).toBe(0);
    claudeCall(root, "sess-help-1", "Write", { file_path: join(root, "a.txt"), content: "two\n" }, () => write(root, "a.txt", "two\n"));
    const r = unwind(root, []);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(join(root, ".git", "unwind"));
    expect(r.stdout).toMatch(/claude +\.claude\/settings\.json; last ran/);
    expect(r.stdout).toMatch(/codex +not installed \(unwind init --codex\)/);
    expect(r.stdout).toContain("sess-help-1");
    expect(r.stdout).toContain("unwind undo --session claude:sess-help-1 --dry-run");
    for (const l of lines(r.stdout)) expect(l.length).toBeLessThanOrEqual(80);
    const j = unwind(root, ["--json"]);
    expect(j.json.storeExists).toBe(true);
    expect(j.json.clients.map((c: { harness: string; files: string[] }) => [c.harness, c.files])).toEqual([
      ["claude", [".claude/settings.json"]],
      ["codex", []],
      ["gemini", []],
    ]);
    expect(j.json.sessions.map((s: { session: string }) => s.session)).toEqual(["claude:sess-help-1"]);
  });

  it("negative controls: an unknown option is still a usage error, --help still the full list", () => {
    const dir = tempDir();
    const bad = unwind(dir, ["--bogus"]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(unwind(dir, ["--help"]).stdout).toContain("Commands:");
  });
});
