import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, snapshotId, tempDir, treeState, unwind, write } from "../helpers.js";

describe("bad input: one clear line, the right exit code, nothing changed", () => {
  const cases: [string, string[], number, RegExp][] = [
    ["unknown command", ["frobnicate"], 2, /unknown command/],
    ["unknown flag", ["snapshots", "--bogus"], 2, /unknown option/],
    ["missing argument", ["restore"], 2, /no snapshot given/],
    ["bad --limit", ["snapshots", "--limit", "zero"], 2, /--limit zero/],
    ["bad --ttl", ["gc", "--ttl", "soon"], 2, /--ttl soon/],
    ["unknown snapshot", ["restore", "s-nope-123456"], 3, /no snapshot s-nope-123456/],
    ["unknown receipt", ["redo", "r-20260101T000000Z-deadbeef"], 3, /no receipt r-20260101T000000Z-deadbeef/],
    ["undo without scope", ["undo"], 2, /no scope given/],
    ["dry run without scope", ["undo", "--dry-run"], 2, /no scope given/],
    ["two scopes", ["undo", "--snapshot", "a", "--session", "b"], 2, /one scope at a time/],
    ["unknown run", ["undo", "--run", "r-1"], 3, /no run r-1/],
    ["unknown session", ["undo", "--session", "claude:abcdefgh"], 3, /no session 'claude:abcdefgh'/],
    ["bad --since", ["undo", "--session", "abc", "--since", "last tuesday"], 2, /--since last tuesday: not an ISO time/],
    ["bad --phase", ["record", "--session", "s", "--phase", "during"], 2, /--phase during: expected pre or post/],
    ["stack without task", ["stack", "list"], 2, /--task/],
  ];
  it.each(cases)("%s", (_name, args, code, message) => {
    const root = makeRepo({ "a.txt": "a\n" });
    snapshotId(root);
    write(root, "a.txt", "changed\n");
    const before = treeState(root);
    const r = unwind(root, args);
    expect(r.code).toBe(code);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split("\n").length).toBeLessThanOrEqual(2); // commander may add a suggestion line
    expect(treeState(root)).toEqual(before);
  });

  it("--json errors are one JSON document on stdout", () => {
    const root = makeRepo({});
    const r = unwind(root, ["restore", "nope-nope", "--json"]);
    expect(r.code).toBe(3);
    expect(r.json.error.code).toBe("E_SCOPE_UNKNOWN");
  });

  it("--root that is not a directory is a usage error naming it", () => {
    const root = tempDir();
    const r = unwind(root, ["status", "--root", join(root, "missing")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("missing: not a directory");
  });

  it("git missing from PATH is a clear error", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const r = unwind(root, ["snapshot"], { env: { PATH: "/nonexistent" } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/git.*(not found|could not be started)/);
  });

  it("help and version exit 0", () => {
    const root = tempDir();
    expect(unwind(root, ["--help"]).code).toBe(0);
    // The store format named is the one a store made now records in its VERSION file.
    const repo = makeRepo();
    unwind(repo, ["init"]);
    const format = readFileSync(join(repo, ".git", "unwind", "VERSION"), "utf8").trim();
    expect(unwind(root, ["--version"]).stdout.trim()).toMatch(new RegExp(`^\\d+\\.\\d+\\.\\d+ \\(store format ${format}\\)$`));
  });
});
