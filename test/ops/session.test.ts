import { chmodSync, existsSync, linkSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { open } from "../../src/index.js";
import { makeRepo, read, tempDir, treeState, unwind, write, writeFiles } from "../helpers.js";
import { A, repo, sessionA } from "../session-fixture.js";
import { claudeCall, claudeCallEnv } from "../journal-helpers.js";

/*
 * Session undo through the library (SPEC section 11): sessions are recorded
 * through the real `unwind hook claude` process, then every operation is
 * called directly. What only the command line shows (exit codes of the
 * process, stderr, the hook's own exit) is in test/e2e/session.test.ts.
 */

const B = "sess-bbbb-2222";

describe("session undo", () => {
  it("takes back exactly one session: its edits and its shell side effects, not another session's or a human's", async () => {
    const root = repo();
    const original = treeState(root, [".git", "build"]);
    sessionA(root);
    claudeCall(root, B, "Write", { file_path: "src/b.ts", content: "export const b = 2;\n" }, () => write(root, "src/b.ts", "export const b = 2;\n"));
    write(root, "human.txt", "a person wrote this after the agents\n");

    const u = await open({ root });
    const r = await u.undo({ session: A });
    expect(r.partial).toBe(false);
    expect(r.scope).toEqual({ kind: "session", id: `claude:${A}` });
    expect(r.items.map((i) => [i.path, i.action])).toEqual([
      ["gen/deep/x.ts", "delete"],
      ["keep.md", "restore"],
      ["moved.md", "delete"],
      ["old.ts", "restore"],
      ["src/a.ts", "restore"],
    ]);
    expect(read(root, "src/a.ts")).toBe("export const a = 1;\n");
    expect(read(root, "old.ts")).toBe("old\n");
    expect(read(root, "keep.md")).toBe("# keep\n");
    expect(existsSync(join(root, "moved.md"))).toBe(false);
    expect(existsSync(join(root, "gen"))).toBe(false); // the directories it created are gone too
    expect(read(root, "src/b.ts")).toBe("export const b = 2;\n"); // session B's work stays
    expect(read(root, "human.txt")).toContain("a person"); // the human's later file stays
    expect(read(root, "build/out.js")).toBe("built by the agent\n"); // ignored output untouched

    // Undo is idempotent.
    const again = await u.undo({ session: A });
    expect(again.partial).toBe(false);
    expect(again.counts).toMatchObject({ restore: 0, delete: 0, conflict: 0 });
    expect(again.items.every((i) => i.action === "skip" && i.reason === "unchanged")).toBe(true);

    // Redo brings the session's work back exactly.
    expect((await u.redo(r.receipt!)).partial).toBe(false);
    expect(read(root, "src/a.ts")).toBe("export const a = 2;\n");
    expect(read(root, "gen/deep/x.ts")).toBe("x\n");
    expect(existsSync(join(root, "old.ts"))).toBe(false);
    void original;
  });

  it("a human's later edit to the session's file is a conflict, left alone; --force takes it back and redo restores it", async () => {
    const root = repo();
    sessionA(root);
    write(root, "src/a.ts", "export const a = 3; // human\n");
    const u = await open({ root });
    const r = await u.undo({ session: A });
    expect(r.partial).toBe(true);
    expect(r.items.find((i) => i.path === "src/a.ts")).toMatchObject({ path: "src/a.ts", action: "conflict", reason: "changed-since" });
    expect(read(root, "src/a.ts")).toBe("export const a = 3; // human\n");

    const f = await u.undo({ session: A }, { force: true, paths: ["src/a.ts"] });
    expect(f.items).toMatchObject([{ path: "src/a.ts", action: "restore", reason: null }]);
    expect(read(root, "src/a.ts")).toBe("export const a = 1;\n");
    expect((await u.redo(f.receipt!)).partial).toBe(false);
    expect(read(root, "src/a.ts")).toBe("export const a = 3; // human\n");
  });

  it("later-write names the other session and when", async () => {
    const root = repo();
    claudeCall(root, A, "Write", { file_path: "src/b.ts", content: "A\n" }, () => write(root, "src/b.ts", "A\n"));
    claudeCall(root, B, "Edit", { file_path: "src/b.ts", old_string: "A", new_string: "B" }, () => write(root, "src/b.ts", "B\n"));
    const u = await open({ root });
    const r = await u.undo({ session: A });
    expect(r.partial).toBe(true);
    const item = r.items[0]!;
    expect(item).toMatchObject({ path: "src/b.ts", action: "conflict", reason: "later-write" });
    expect(item.detail).toMatch(new RegExp(`^claude:${B} at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`));
    expect(read(root, "src/b.ts")).toBe("B\n");
    // Negative control: undoing B (the later writer) is not a later-write conflict.
    const rb = await u.undo({ session: B });
    expect(rb.items[0]).toMatchObject({ action: "restore" });
    expect(read(root, "src/b.ts")).toBe("A\n");
  });

  it("--since takes back only what the session did from then on", async () => {
    const root = repo();
    claudeCall(root, A, "Write", { file_path: "one.txt", content: "1" }, () => write(root, "one.txt", "1"));
    await new Promise((r) => setTimeout(r, 20));
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    claudeCall(root, A, "Write", { file_path: "two.txt", content: "2" }, () => write(root, "two.txt", "2"));
    const u = await open({ root });
    const r = await u.undo({ session: A }, { since });
    expect(r.items.map((i) => i.path)).toEqual(["two.txt"]);
    expect(existsSync(join(root, "one.txt"))).toBe(true);
    expect(existsSync(join(root, "two.txt"))).toBe(false);
    await expect(u.undo({ session: A }, { since: "yesterday" })).rejects.toMatchObject({ code: "E_USAGE", exit: 2 });
  });

  it("--call takes back one tool call", async () => {
    const root = repo();
    const first = claudeCall(root, A, "Write", { file_path: "one.txt", content: "1" }, () => write(root, "one.txt", "1"));
    claudeCall(root, A, "Write", { file_path: "two.txt", content: "2" }, () => write(root, "two.txt", "2"));
    const r = await (await open({ root })).undo({ call: first });
    expect(r.scope).toEqual({ kind: "call", id: first });
    expect(existsSync(join(root, "one.txt"))).toBe(false);
    expect(existsSync(join(root, "two.txt"))).toBe(true);
  });

  it("--merge takes back only the session's hunks when a human edited elsewhere in the file; overlapping edits stay a conflict", async () => {
    const lines = (xs: string[]) => xs.join("\n") + "\n";
    const base = ["l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9"];
    const root = makeRepo({ "f.txt": lines(base) });
    const agent = [...base];
    agent[1] = "l2 agent";
    claudeCall(root, A, "Edit", { file_path: "f.txt", old_string: "l2", new_string: "l2 agent" }, () => write(root, "f.txt", lines(agent)));
    const human = [...agent];
    human[7] = "l8 human";
    write(root, "f.txt", lines(human));

    const u = await open({ root });
    const plain = await u.undo({ session: A }, { dryRun: true });
    expect(plain.items[0]).toMatchObject({ action: "conflict", reason: "changed-since" });
    const m = await u.undo({ session: A }, { merge: true });
    expect(m.items[0]).toMatchObject({ path: "f.txt", action: "merge" });
    const expected = [...base];
    expected[7] = "l8 human";
    expect(read(root, "f.txt")).toBe(lines(expected));
    expect((await u.redo(m.receipt!)).partial).toBe(false);
    expect(read(root, "f.txt")).toBe(lines(human));

    // Overlapping: the human rewrote the agent's own line.
    const overlap = [...agent];
    overlap[1] = "l2 agent, then human";
    write(root, "f.txt", lines(overlap));
    const c = await u.undo({ session: A }, { merge: true });
    expect(c.partial).toBe(true);
    expect(c.items[0]).toMatchObject({ action: "conflict", reason: "changed-since" });
    expect(read(root, "f.txt")).toBe(lines(overlap));
  });
});

describe("session undo refusals, each with its negative control", () => {
  it("a symlink swapped in after the session is refused; the same path as a file is restored", async () => {
    const root = repo();
    claudeCall(root, A, "Write", { file_path: "w.txt", content: "agent" }, () => write(root, "w.txt", "agent"));
    const outside = join(tempDir(), "target.txt");
    writeFileSync(outside, "outside\n");
    unlinkSync(join(root, "w.txt"));
    symlinkSync(outside, join(root, "w.txt"));
    const u = await open({ root });
    const r = await u.undo({ session: A }, { force: true });
    expect(r.items[0]).toMatchObject({ path: "w.txt", action: "conflict", reason: "symlink" });
    expect(readFileSync(outside, "utf8")).toBe("outside\n");
    unlinkSync(join(root, "w.txt"));
    write(root, "w.txt", "agent");
    expect((await u.undo({ session: A })).items[0]).toMatchObject({ action: "delete" });
  });

  it("a hardlinked file is refused; with one link it is restored", async () => {
    const root = repo();
    claudeCall(root, A, "Edit", { file_path: "src/a.ts", old_string: "1", new_string: "2" }, () => write(root, "src/a.ts", "two\n"));
    const other = join(tempDir(), "link");
    linkSync(join(root, "src/a.ts"), other);
    const u = await open({ root });
    const r = await u.undo({ session: A });
    expect(r.items[0]).toMatchObject({ action: "conflict", reason: "hardlink" });
    expect(read(root, "src/a.ts")).toBe("two\n");
    unlinkSync(other);
    expect((await u.undo({ session: A })).items[0]).toMatchObject({ action: "restore" });
  });

  it("a tampered content blob is refused as hash-mismatch; an intact one is restored", async () => {
    const root = repo();
    // Uncommitted content: the CAS holds the only copy of what the session replaced.
    write(root, "src/a.ts", "export const a = 'only in the working tree';\n");
    claudeCall(root, A, "Edit", { file_path: "src/a.ts", old_string: "only", new_string: "two" }, () => write(root, "src/a.ts", "two\n"));
    const cas = join(root, ".git", "unwind", "cas", "sha256");
    const sha = require("node:crypto").createHash("sha256").update("export const a = 'only in the working tree';\n").digest("hex");
    const blob = join(cas, sha.slice(0, 2), sha.slice(2));
    const good = readFileSync(blob);
    chmodSync(blob, 0o644);
    writeFileSync(blob, deflateSync(Buffer.from("export const a = 666;\n")));
    const u = await open({ root });
    const r = await u.undo({ session: A });
    expect(r.items[0]).toMatchObject({ action: "conflict", reason: "hash-mismatch" });
    expect(read(root, "src/a.ts")).toBe("two\n");
    writeFileSync(blob, good);
    expect((await u.undo({ session: A })).items[0]).toMatchObject({ action: "restore" });
    expect(read(root, "src/a.ts")).toBe("export const a = 'only in the working tree';\n");
  });

  it("a tampered journal record refuses the session's undo (exit 4); verify names it; the untampered journal undoes", async () => {
    const root = repo();
    claudeCall(root, A, "Edit", { file_path: "src/a.ts", old_string: "1", new_string: "2" }, () => write(root, "src/a.ts", "two\n"));
    const dir = join(root, ".git", "unwind", "journal");
    const [file] = readdirSync(dir);
    const path = join(dir, file!);
    const good = readFileSync(path, "utf8");
    writeFileSync(path, good.replace('"path":"src/a.ts"', '"path":"src/b.ts"'));
    const tree = treeState(root);
    const u = await open({ root });
    await expect(u.undo({ session: A })).rejects.toMatchObject({ code: "E_STORE_DAMAGED", exit: 4, message: expect.stringMatching(/journal record .*:1 is damaged \(checksum mismatch/) });
    expect(treeState(root)).toEqual(tree);
    const v = await u.verify();
    expect(v.ok).toBe(false); // the command exits 4
    expect(v.problems.map((p) => p.message).join("\n")).toMatch(/journal .* is damaged/);
    writeFileSync(path, good);
    expect((await u.undo({ session: A })).partial).toBe(false);
    expect(read(root, "src/a.ts")).toBe("export const a = 1;\n");
  });

  it("a payload path outside the root, in .git or beyond a symlink is never captured (one error each); an inside path is", async () => {
    const root = repo();
    const elsewhere = tempDir();
    const outside = join(elsewhere, "secret.txt");
    writeFileSync(outside, "secret\n");
    symlinkSync(elsewhere, join(root, "linkdir"));
    for (const p of [outside, "../escape.txt", join(root, ".git", "config"), "linkdir/secret.txt"]) {
      claudeCall(root, A, "Write", { file_path: p, content: "x" }, () => {});
    }
    const u = await open({ root });
    expect((await u.status()).records).toBe(0);
    const errors = readFileSync(join(root, ".git", "unwind", "errors.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(errors.map((e) => e.kind)).toEqual(Array(8).fill("skipped-path"));
    expect(errors.map((e) => e.message).join("\n")).toMatch(/outside the root[\s\S]*not capturable \(git-dir\)[\s\S]*beyond a symlink/);
    await expect(u.undo({ session: A })).rejects.toMatchObject({ code: "E_SCOPE_UNKNOWN", exit: 3 }); // nothing recorded: no such session
    expect(readFileSync(outside, "utf8")).toBe("secret\n");
    // Negative control: the same call on a path inside the root is captured and undone.
    claudeCall(root, A, "Write", { file_path: "inside.txt", content: "x" }, () => write(root, "inside.txt", "x"));
    expect((await (await open({ root })).undo({ session: A })).items).toMatchObject([{ path: "inside.txt", action: "delete", reason: null }]);
  });
});

describe("scopes and bad input", () => {
  it("unknown session is exit 3; an ambiguous prefix is exit 3 listing the candidates; a unique prefix works", async () => {
    const root = repo();
    claudeCall(root, "abcdef-1", "Write", { file_path: "1.txt", content: "1" }, () => write(root, "1.txt", "1"));
    claudeCall(root, "abcdef-2", "Write", { file_path: "2.txt", content: "2" }, () => write(root, "2.txt", "2"));
    const u = await open({ root });
    await expect(u.undo({ session: "zzzzzzzz" })).rejects.toMatchObject({ code: "E_SCOPE_UNKNOWN", exit: 3, message: expect.stringContaining("no session 'zzzzzzzz'") });
    await expect(u.undo({ session: "abcdef" })).rejects.toMatchObject({ code: "E_SCOPE_AMBIGUOUS", exit: 3, message: expect.stringContaining("claude:abcdef-1, claude:abcdef-2") });
    const ok = await u.undo({ session: "abcdef-2" });
    expect(ok.partial).toBe(false);
    expect(ok.scope.id).toBe("claude:abcdef-2");
    expect(existsSync(join(root, "1.txt"))).toBe(true);
  });

  it("sessions and log list what was recorded", async () => {
    const root = repo();
    sessionA(root);
    const u = await open({ root });
    const s = (await u.sessions()).sessions;
    expect(s).toHaveLength(1);
    expect(s[0]).toMatchObject({ session: `claude:${A}`, harness: "claude", calls: 2, paths: 5 }); // the Edit's file and the four the Bash call changed
    const log = (await u.log()).calls;
    expect(log.map((c) => c.tool)).toEqual(["Bash", "Edit"]);
    expect(log[0]!.paths).toEqual(["gen/deep/x.ts", "keep.md", "moved.md", "old.ts"]);
  });

  it("works in a folder without git", async () => {
    const root = tempDir();
    writeFiles(root, { "notes.md": "v1\n" });
    // Outside git, a hook makes a store only in the project its harness names, as Claude Code does.
    const env = { CLAUDE_PROJECT_DIR: root };
    claudeCallEnv(root, A, "Edit", { file_path: "notes.md", old_string: "v1", new_string: "v2" }, () => write(root, "notes.md", "v2\n"), env);
    claudeCallEnv(root, A, "Bash", { command: "echo n > new.txt" }, () => write(root, "new.txt", "n\n"), env);
    const r = await (await open({ root })).undo({ session: A });
    expect(r.partial).toBe(false);
    expect(read(root, "notes.md")).toBe("v1\n");
    expect(existsSync(join(root, "new.txt"))).toBe(false);
    expect(existsSync(join(root, ".git"))).toBe(false);
  });

  it("record: generic capture of paths and of the tree, undone as a session", async () => {
    const root = repo();
    expect(unwind(root, ["record", "--session", "orch:run-1", "--phase", "pre", "src/a.ts"]).code).toBe(0);
    write(root, "src/a.ts", "changed\n");
    expect(unwind(root, ["record", "--session", "orch:run-1", "--phase", "post", "src/a.ts"]).code).toBe(0);
    expect(unwind(root, ["record", "--session", "orch:run-1", "--phase", "pre", "--call", "c2"]).code).toBe(0);
    write(root, "made.txt", "m\n");
    expect(unwind(root, ["record", "--session", "orch:run-1", "--phase", "post", "--call", "c2"]).code).toBe(0);
    const r = await (await open({ root })).undo({ session: "orch:run-1" });
    expect(r.items.map((i) => [i.path, i.action])).toEqual([
      ["made.txt", "delete"],
      ["src/a.ts", "restore"],
    ]);
  });
});
