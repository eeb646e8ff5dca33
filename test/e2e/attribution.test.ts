/**
 * Attribution at the command line (SPEC section 2, issue 9): what only the
 * process shows. Human lines (what a path holds now, what to do next, a
 * name quoted as git quotes it), operands relative to the current
 * directory, usage errors on stderr, init, and processes racing. The
 * behaviour is in test/ops/attribution.test.ts.
 */
import { execFileSync } from "node:child_process";
import { unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, read, snapshotId, unwind, unwindAsync, write } from "../helpers.js";
import { claudeCall, ev } from "../journal-helpers.js";

const A = "sess-aaaa-1111";
const B = "sess-bbbb-2222";

describe("overlapping shell calls of two sessions (issue 9, case 4)", () => {
  it("the human line of a concurrent-call conflict says what to do next; the undo exits 1", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    ev(root, A, "PreToolUse", "Bash", { command: "make a" }, "toolu_a1");
    ev(root, B, "PreToolUse", "Bash", { command: "make b" }, "toolu_b1");
    write(root, "a.out", "from A\n");
    write(root, "b.out", "from B\n");
    ev(root, A, "PostToolUse", "Bash", { command: "make a" }, "toolu_a1");
    ev(root, B, "PostToolUse", "Bash", { command: "make b" }, "toolu_b1");
    const human = unwind(root, ["undo", "--session", A, "--dry-run"]);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/concurrent-call/);
    expect(human.stdout).toMatch(/--force/);
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.code).toBe(1);
    expect(read(root, "b.out")).toBe("from B\n");
    // Negative control: --force takes it all back, exit 0.
    expect(unwind(root, ["undo", "--session", A, "--force"]).code).toBe(0);
  });
});

describe("paths (issue 9, case 13)", () => {
  it("restore PATHs and --path globs are relative to the current directory", () => {
    const root = makeRepo({ "src/a.ts": "a1\n", "src/b.ts": "b1\n", "a.ts": "top1\n" });
    const s = snapshotId(root);
    write(root, "src/a.ts", "a2\n");
    write(root, "src/b.ts", "b2\n");
    write(root, "a.ts", "top2\n");
    const r = unwind(join(root, "src"), ["restore", s, "--json", "--", "a.ts"]);
    expect(r.json.items).toMatchObject([{ path: "src/a.ts", action: "restore", reason: null }]);
    expect(read(root, "a.ts")).toBe("top2\n");
    const u = unwind(join(root, "src"), ["undo", "--snapshot", s, "--path", "*.ts", "--dry-run", "--json"]);
    expect(u.json.items.map((i: any) => i.path)).toEqual(["src/b.ts"]);
  });
});

describe("every call is closed (issue 9, cases 5, 6 and 7)", () => {
  it("init --claude installs PostToolUseFailure beside PreToolUse and PostToolUse", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    expect(unwind(root, ["init", "--claude"]).code).toBe(0);
    const settings = JSON.parse(read(root, ".claude/settings.json"));
    expect(Object.keys(settings.hooks)).toEqual(["PreToolUse", "PostToolUse", "PostToolUseFailure"]);
  });
});

describe("undo lines say what a path holds now and what to do (issue 9, case 17)", () => {
  it("a changed-since conflict shows the current content (marked *) and the next steps; an applicable line shows now -> after", () => {
    const root = makeRepo({ "a.txt": "a1\n", "b.txt": "b1\n" });
    const s = snapshotId(root);
    write(root, "a.txt", "a2\n");
    write(root, "b.txt", "b2\n");
    const s2 = snapshotId(root);
    write(root, "a.txt", "a3 by a person\n");
    const r = unwind(root, ["undo", "--snapshot", s, "--to", s2, "--dry-run"]);
    expect(r.code).toBe(1);
    const lines = r.stdout.split("\n");
    const a = lines.find((l) => l.includes("a.txt"))!;
    const b = lines.find((l) => l.includes("b.txt"))!;
    const oid = (c: string) => execFileSync("git", ["hash-object", "--stdin"], { input: c, encoding: "utf8" }).trim().slice(0, 8);
    expect(a).toMatch(/^conflict\s+a\.txt\s+[0-9a-f]{8}\* -> /);
    expect(a).toContain(`-> ${oid("a1\n")}`);
    expect(b).toContain(`${oid("b2\n")} -> ${oid("b1\n")}`);
    // The hints are whole commands for this scope and path: see its change, --merge, --force (test/e2e/hints.test.ts runs them).
    const scope = `--snapshot ${s} --to ${s2} --path a.txt`;
    expect(r.stdout).toContain(`changed-since: changed since the scope wrote it\n`);
    for (const cmd of [`unwind changes ${scope} --patch`, `unwind undo ${scope} --merge`, `unwind undo ${scope} --force`]) expect(r.stdout).toContain(`\n      ${cmd}\n`);
  });
});

describe("names (issue 9, cases 9 and 15)", () => {
  it('task start "" and a 300-character name: exit 2 with one line on stderr naming the rule', () => {
    const root = makeRepo({ "a.txt": "a\n" });
    for (const bad of ["", "x".repeat(300), "no spaces"]) {
      const r = unwind(root, ["task", "start", bad]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/task name/);
      expect(r.stderr.split("\n").filter(Boolean)).toHaveLength(1);
    }
    const ok = unwind(root, ["task", "start", "T-1", "--json"]);
    expect(ok.code).toBe(0);
    expect(ok.json.branch).toBe("task/T-1");
  });

  it("a name that is not UTF-8 is shown quoted as git quotes it", () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]); // "café.txt" in Latin-1: not UTF-8
    const root = makeRepo({ "a.txt": "a\n", "old.txt": "old\n" });
    claudeCall(root, A, "Bash", { command: "touch café; rm old.txt" }, () => {
      writeFileSync(Buffer.concat([Buffer.from(root + "/"), latin1]), "new\n");
      unlinkSync(join(root, "old.txt"));
    });
    const human = unwind(root, ["changes", "--session", A]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('"caf\\351.txt"');
    expect(human.stdout).toContain("old.txt"); // the control: a UTF-8 name is shown as it is
    expect(human.stdout).not.toContain('"old.txt"');
  });
});

describe("concurrent applies (issue 9, case 16)", () => {
  it("three undo/restore processes at once all finish with a contract exit code, and the tree ends as one of them left it", async () => {
    const root = makeRepo({ "a.txt": "a1\n", "b.txt": "b1\n" });
    const s = snapshotId(root);
    write(root, "a.txt", "a2\n");
    write(root, "b.txt", "b2\n");
    const s2 = snapshotId(root);
    const rs = await Promise.all([unwindAsync(root, ["restore", s, "--json"]), unwindAsync(root, ["undo", "--snapshot", s, "--to", s2, "--json"]), unwindAsync(root, ["restore", s, "--", "a.txt"])]);
    for (const r of rs) expect([0, 1]).toContain(r.code);
    expect(read(root, "a.txt")).toBe("a1\n");
    expect(read(root, "b.txt")).toBe("b1\n");
  });
});
