import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { open } from "../../src/index.js";
import { makeRepo, read, rejection, unwind, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";

/**
 * Hunk-level undo (SPEC section 4, "Patches and hunks"): `changes --patch`
 * numbers a change's hunks, `undo --path P --hunk N` takes back only those,
 * through the one engine (dry run, digest, receipt, redo). Sessions are
 * recorded through the real hook with Claude's payloads.
 */

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
const S = "sess-hunk-1111";

/** A session whose one Edit changed line 2 and line 18 of a 20-line file: two hunks. */
function edited(): string {
  const root = makeRepo({ "f.txt": lines(20), "g.txt": "g\n" });
  const after = lines(20).replace("line 2\n", "line TWO\n").replace("line 18\n", "line EIGHTEEN\n");
  claudeCall(root, S, "Edit", { file_path: join(root, "f.txt"), old_string: "line 2", new_string: "line TWO" }, () => write(root, "f.txt", after));
  claudeCall(root, S, "Write", { file_path: join(root, "g.txt"), content: "G\n" }, () => write(root, "g.txt", "G\n"));
  return root;
}

const actions = (r: { json: { items: { path: string; action: string; reason: string | null }[] } }) => r.json.items.map((i) => [i.path, i.action, i.reason]);

describe("changes --patch", () => {
  it("is git's patch with numbered hunks, and git apply -R takes the session back", () => {
    const root = edited();
    const p = unwind(root, ["changes", "--session", S, "--patch"]);
    expect(p.code).toBe(0);
    expect(p.stdout).toMatch(/^@@ -1,5 \+1,5 @@ hunk 1$/m);
    expect(p.stdout).toMatch(/^@@ -15,6 \+15,6 @@ hunk 2$/m);
    expect(p.stdout).toMatch(/^diff --git a\/g\.txt b\/g\.txt$/m);
    const check = spawnSync("git", ["apply", "-R", "--check"], { cwd: root, input: p.stdout, encoding: "utf8" });
    expect([check.status, check.stderr]).toEqual([0, ""]);
    const json = unwind(root, ["changes", "--session", S, "--patch", "--json"]).json;
    expect(json.entries.map((e: { path: string; hunks: unknown[] }) => [e.path, e.hunks.length])).toEqual([
      ["f.txt", 2],
      ["g.txt", 1],
    ]);
    // The control: the patch is of this change, so it does not apply -R once the tree is back.
    expect(unwind(root, ["undo", "--session", S]).code).toBe(0);
    expect(spawnSync("git", ["apply", "-R", "--check"], { cwd: root, input: p.stdout }).status).not.toBe(0);
  });
});

describe("undo --hunk", () => {
  it("takes back one hunk, keeps the other hunk, a later edit beside it and the other path; again it is a skip; redo brings it back", () => {
    const root = edited();
    write(root, "f.txt", read(root, "f.txt").replace("line 10\n", "a person's line\n"));
    const dry = unwind(root, ["undo", "--session", S, "--path", "f.txt", "--hunk", "2", "--dry-run", "--json"]);
    expect(actions(dry)).toEqual([["f.txt", "merge", null]]);
    const u = unwind(root, ["undo", "--session", S, "--path", "f.txt", "--hunk", "2", "--expect", dry.json.plan, "--json"]);
    expect([u.code, actions(u)]).toEqual([0, [["f.txt", "merge", null]]]);
    const now = read(root, "f.txt");
    expect(now).toContain("line TWO\n"); // hunk 1 kept
    expect(now).toContain("a person's line\n"); // the later edit beside it kept
    expect(now).toContain("line 18\n"); // hunk 2 taken back
    expect(now).not.toContain("EIGHTEEN");
    expect(read(root, "g.txt")).toBe("G\n");
    const again = unwind(root, ["undo", "--session", S, "--path", "f.txt", "--hunk", "2", "--json"]);
    expect([again.code, actions(again), again.json.receipt]).toEqual([0, [["f.txt", "skip", "unchanged"]], null]);
    expect(unwind(root, ["redo", u.json.receipt]).code).toBe(0);
    expect(read(root, "f.txt")).toContain("line EIGHTEEN\n");
    expect(read(root, "f.txt")).toContain("a person's line\n");
  });

  it("a later edit inside the hunk is a conflict and nothing is written; the same hunk untouched merges (control)", () => {
    const root = edited();
    write(root, "f.txt", read(root, "f.txt").replace("line EIGHTEEN\n", "line EIGHTEEN, edited by a person\n"));
    const before = read(root, "f.txt");
    const r = unwind(root, ["undo", "--session", S, "--path", "f.txt", "--hunk", "2", "--json"]);
    expect([r.code, actions(r)]).toEqual([1, [["f.txt", "conflict", "changed-since"]]]);
    expect(read(root, "f.txt")).toBe(before);
    const ok = unwind(root, ["undo", "--session", S, "--path", "f.txt", "--hunk", "1", "--json"]);
    expect([ok.code, actions(ok)]).toEqual([0, [["f.txt", "merge", null]]]);
    expect(read(root, "f.txt")).toBe(before.replace("line TWO\n", "line 2\n"));
  });

  it("bad input is one line, exit 2, nothing written", () => {
    const root = edited();
    const before = read(root, "f.txt");
    const cases: [string[], RegExp][] = [
      [["--hunk", "3", "--path", "f.txt"], /f\.txt has 2 hunk/],
      [["--hunk", "0", "--path", "f.txt"], /expected hunk numbers from 1/],
      [["--hunk", "x", "--path", "f.txt"], /expected hunk numbers from 1/],
      [["--hunk", "1"], /needs the path/],
      [["--hunk", "1", "--path", "*.txt"], /hunks of one path/],
    ];
    for (const [args, msg] of cases) {
      const r = unwind(root, ["undo", "--session", S, ...args]);
      expect([r.code, r.stderr.trim().split("\n").length], args.join(" ")).toEqual([2, 1]);
      expect(r.stderr).toMatch(msg);
    }
    expect(read(root, "f.txt")).toBe(before);
  });

  it("the library takes paths and hunks the same way, previewed and applied by digest", async () => {
    const root = edited();
    const u = await open({ root });
    const p = await u.plan({ session: S }, { paths: ["f.txt"], hunks: [1] });
    expect(p.items.map((i) => [i.path, i.action])).toEqual([["f.txt", "merge"]]);
    // Another hunk is another plan: its digest differs.
    expect((await u.plan({ session: S }, { paths: ["f.txt"], hunks: [2] })).plan).not.toBe(p.plan);
    expect((await rejection(u.undo({ session: S }, { hunks: [1] }))).code).toBe("E_USAGE");
    await u.undo({ session: S }, { paths: ["f.txt"], hunks: [1], expect: p.plan });
    expect(read(root, "f.txt")).toBe(lines(20).replace("line 18\n", "line EIGHTEEN\n"));
  });
});

describe("undo --dry-run --patch", () => {
  it("is the content each path would get, as a patch git apply makes so: applied, the tree is what the undo then makes", () => {
    const root = edited();
    write(root, "f.txt", read(root, "f.txt").replace("line 10\n", "a person's line\n"));
    const before = { f: read(root, "f.txt"), g: read(root, "g.txt") };
    // Without --merge the person's edit is a conflict: not in the patch, named in a line git apply skips.
    const plain = unwind(root, ["undo", "--session", S, "--dry-run", "--patch"]);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toMatch(/^diff --git a\/g\.txt b\/g\.txt$/m);
    expect(plain.stdout).not.toMatch(/^diff --git a\/f\.txt/m);
    expect(plain.stdout).toMatch(/^# conflict f\.txt: changed-since/m);
    const p = unwind(root, ["undo", "--session", S, "--merge", "--dry-run", "--patch"]);
    expect(p.code).toBe(0);
    expect(p.stdout).toMatch(/^-line TWO$/m);
    expect(p.stdout).toMatch(/^\+line 2$/m);
    expect(p.stdout).not.toMatch(/^-a person's line$/m); // the later edit stays
    const digest = p.stdout.match(/--expect ([0-9a-f]{12})/)![1]!;
    expect([read(root, "f.txt"), read(root, "g.txt")]).toEqual([before.f, before.g]); // a dry run
    const apply = (args: string[]) => spawnSync("git", ["apply", ...args], { cwd: root, input: p.stdout, encoding: "utf8" });
    expect(apply(["--check"]).status).toBe(0);
    expect(apply([]).status).toBe(0);
    const byPatch = { f: read(root, "f.txt"), g: read(root, "g.txt") };
    expect(byPatch).not.toEqual(before);
    expect(apply(["--check"]).status).not.toBe(0); // control: the patch is of the tree as it was, not as it is now
    expect(apply(["-R"]).status).toBe(0);
    expect(unwind(root, ["undo", "--session", S, "--merge", "--expect", digest]).code).toBe(0);
    expect({ f: read(root, "f.txt"), g: read(root, "g.txt") }).toEqual(byPatch);
    // Only a dry run: anything else is a usage error, nothing written.
    const bad = unwind(root, ["undo", "--session", S, "--patch"]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining("add --dry-run")]);
    expect({ f: read(root, "f.txt"), g: read(root, "g.txt") }).toEqual(byPatch);
  });
});
