/**
 * Every hint a conflict prints is a whole command that works as written:
 * each one is run here, from the directory the undo ran in, and does what
 * it says. After a --merge that itself conflicted, --merge is not offered
 * again. Sessions are recorded through the real hook with Claude's payloads.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, read, unwind, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";

const S = "sess-hint-1111";
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

/** A session's Edit of src/f.txt line 2, then a person's edit of `at` in the same file. */
function conflicted(personLine: string, personText: string): string {
  const root = makeRepo({ "src/f.txt": lines(20), "src/g.txt": "g\n" });
  claudeCall(root, S, "Edit", { file_path: join(root, "src/f.txt"), old_string: "line 2", new_string: "line TWO" }, () =>
    write(root, "src/f.txt", read(root, "src/f.txt").replace("line 2\n", "line TWO\n")),
  );
  claudeCall(root, S, "Write", { file_path: join(root, "src/g.txt"), content: "G\n" }, () => write(root, "src/g.txt", "G\n"));
  write(root, "src/f.txt", read(root, "src/f.txt").replace(`${personLine}\n`, `${personText}\n`));
  return root;
}

/** The commands under the hints, as a POSIX shell would split them (single quotes only: what the hints write). */
function hints(out: string): string[][] {
  return out
    .split("\n")
    .filter((l) => /^ {6}unwind /.test(l))
    .map((l) => [...l.trim().matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!)).slice(1));
}

describe("conflict hints", () => {
  it("each is a whole command that works from where the undo ran: see the change, merge, force", () => {
    const root = conflicted("line 10", "a person's line");
    const src = join(root, "src");
    const r = unwind(src, ["undo", "--session", S]);
    expect(r.code).toBe(1);
    const cmds = hints(r.stdout);
    expect(cmds.map((c) => c.join(" "))).toEqual([`changes --session ${S} --path f.txt --patch`, `undo --session ${S} --path f.txt --merge`, `undo --session ${S} --path f.txt --force`]);
    const see = unwind(src, cmds[0]!);
    expect([see.code, see.stdout]).toEqual([0, expect.stringMatching(/^-line 2$/m)]);
    const merge = unwind(src, cmds[1]!);
    expect(merge.code).toBe(0);
    expect(read(root, "src/f.txt")).toBe(lines(20).replace("line 10\n", "a person's line\n")); // line 2 back, the person's line kept
    const force = unwind(src, cmds[2]!);
    expect(force.code).toBe(0); // nothing left to force: the merge did it
    // The control: a hint naming the path from the root would not have worked from src/.
    expect(unwind(src, ["changes", "--session", S, "--path", "src/f.txt"]).code).toBe(2);
  });

  it("after a --merge that itself conflicted, --merge is not offered again; what is offered works", () => {
    const root = conflicted("line TWO", "line two, by a person");
    const r = unwind(root, ["undo", "--session", S, "--merge"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("the three-way merge conflicts");
    const cmds = hints(r.stdout);
    expect(cmds.map((c) => c.join(" "))).toEqual([`changes --session ${S} --path src/f.txt --patch`, `undo --session ${S} --path src/f.txt --force`]);
    // The control: without --merge the same conflict offers it.
    const fresh = conflicted("line TWO", "line two, by a person");
    expect(hints(unwind(fresh, ["undo", "--session", S, "--dry-run"]).stdout).some((c) => c.includes("--merge"))).toBe(true);
    for (const c of cmds) expect(unwind(root, c).code, c.join(" ")).toBe(0);
    expect(read(root, "src/f.txt")).toBe(lines(20));
  });
});
