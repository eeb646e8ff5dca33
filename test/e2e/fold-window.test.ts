import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dropKeptChangeSets } from "../../src/store/changeset-cache.js";
import { BIN, git, makeRepo, unwind, write } from "../helpers.js";
import { claudePayload, hook } from "../journal-helpers.js";

/*
 * A session's fold reads only the part of the record that can bear on it
 * (src/scope/calls.ts, `scopeWindow`): its own journal, the journal files
 * with a record since the snapshot before its first call or a call still
 * open, and the snapshots from that one on. Files are left unread on the
 * facts kept of them (src/store/journal.ts), which vouch only for a file
 * whose stat has not moved for two seconds: each test waits that long once.
 */

function call(root: string, session: string, id: string, tool: string, input: Record<string, unknown>, effect: () => void, post = true): void {
  expect(hook(root, "claude", claudePayload(root, session, "PreToolUse", tool, input, id)).code).toBe(0);
  effect();
  if (post) expect(hook(root, "claude", claudePayload(root, session, "PostToolUse", tool, input, id)).code).toBe(0);
}

const settle = () => new Promise((r) => setTimeout(r, 2300));

const changed = (root: string, args: string[]) => unwind(root, ["changes", ...args, "--json"]).json.entries.map((e: { path: string; change: string }) => `${e.change} ${e.path}`);

/** The journal files a command opened, by session (strace sees every openat); the fold's own reads, with no change set kept from before. */
function journalsOpened(root: string, args: string[]): { code: number; opened: string[] } {
  dropKeptChangeSets(join(root, ".git", "unwind"));
  const log = join(mkdtempSync(join(tmpdir(), "unwind-strace-")), "trace");
  const r = spawnSync("strace", ["-f", "-e", "trace=openat", "-o", log, process.execPath, BIN, ...args], { cwd: root, encoding: "utf8", timeout: 120_000 });
  const opened = readFileSync(log, "utf8")
    .split("\n")
    .flatMap((l) => /journal\/([^"/]+\.jsonl)"/.exec(l)?.[1] ?? []);
  return { code: r.status ?? -1, opened: [...new Set(opened)].sort() };
}

const journalOf = (root: string, session: string) => {
  const dir = join(root, ".git", "unwind", "journal");
  return readdirSync(dir).find((f) => f.endsWith(".jsonl") && readFileSync(join(dir, f), "utf8").includes(`"session":"claude:${session}"`));
};

describe("a session's fold reads the part of the record that can bear on it", () => {
  it("an old session's journal is left unread, and the change set is the same as the whole record's", async () => {
    const root = makeRepo({ "old.txt": "0\n", "x.txt": "0\n" });
    call(root, "old", "toolu_o1", "Write", { file_path: join(root, "old.txt"), content: "1\n" }, () => write(root, "old.txt", "1\n"));
    await settle();
    call(root, "new", "toolu_n1", "Bash", { command: "echo 1 > x.txt", description: "x" }, () => write(root, "x.txt", "1\n"));
    const oldFile = journalOf(root, "old")!;
    const newFile = journalOf(root, "new")!;
    // The first read works out the facts of the settled file; the next leaves it unread.
    expect(changed(root, ["--session", "new"])).toEqual(["modified x.txt"]);
    const bounded = journalsOpened(root, ["changes", "--session", "new", "--json"]);
    expect(bounded.code).toBe(0);
    expect(bounded.opened).toEqual([newFile]);
    // The control: the old session's own fold opens its journal, and a task-less listing reads them all.
    expect(journalsOpened(root, ["changes", "--session", "old", "--json"]).opened).toContain(oldFile);
    expect(changed(root, ["--session", "old"])).toEqual(["modified old.txt"]);
    expect(changed(root, ["--session", "new"])).toEqual(["modified x.txt"]);
  });

  it("a call left open in an old journal is read: a change made while it was open is shared, not the new call's alone", async () => {
    const root = makeRepo({ "x.txt": "0\n" });
    // A shell call whose post never came: its window reaches to now.
    call(root, "stuck", "toolu_s1", "Bash", { command: "sleep 1000", description: "x" }, () => undefined, false);
    await settle();
    call(root, "new", "toolu_n1", "Bash", { command: "echo 1 > x.txt", description: "x" }, () => write(root, "x.txt", "1\n"));
    const plan = unwind(root, ["undo", "--session", "new", "--dry-run", "--json"]).json;
    expect(plan.items.map((i: { path: string; action: string }) => `${i.action} ${i.path}`)).toEqual(["conflict x.txt"]);
    expect(journalsOpened(root, ["changes", "--session", "new", "--json"]).opened).toContain(journalOf(root, "stuck"));
    // The control: with no call left open, the same change is the new call's, and undo restores it.
    const calm = makeRepo({ "x.txt": "0\n" });
    call(calm, "done", "toolu_d1", "Bash", { command: "true", description: "x" }, () => undefined);
    await settle();
    call(calm, "new", "toolu_n1", "Bash", { command: "echo 1 > x.txt", description: "x" }, () => write(calm, "x.txt", "1\n"));
    expect(unwind(calm, ["undo", "--session", "new", "--dry-run", "--json"]).json.items.map((i: { path: string; action: string }) => `${i.action} ${i.path}`)).toEqual(["restore x.txt"]);
    expect(journalsOpened(calm, ["changes", "--session", "new", "--json"]).opened).not.toContain(journalOf(calm, "done"));
  });

  it("a call the command itself closes: the snapshot that closed it is read, not reported missing", async () => {
    const root = makeRepo({ "old.txt": "0\n", "x.txt": "0\n" });
    call(root, "old", "toolu_o1", "Write", { file_path: join(root, "old.txt"), content: "1\n" }, () => write(root, "old.txt", "1\n"));
    await settle();
    // Its post never comes: `changes` closes it with a snapshot of its own, taken after the window was found.
    call(root, "cut", "toolu_c1", "Bash", { command: "echo 1 > x.txt", description: "x" }, () => write(root, "x.txt", "1\n"), false);
    const r = unwind(root, ["changes", "--session", "cut", "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.json.entries.map((e: { path: string; change: string }) => `${e.change} ${e.path}`)).toEqual(["modified x.txt"]);
    // Closed by a read, not by its own post: the record cannot vouch for the change, and undo says so.
    const items = (dir: string) =>
      unwind(dir, ["undo", "--session", "cut", "--dry-run", "--json"]).json.items.map((i: { path: string; action: string; reason?: string }) => `${i.action} ${i.path} ${i.reason}`);
    expect(items(root)).toEqual(["conflict x.txt changed-since"]);
    expect(journalsOpened(root, ["changes", "--session", "cut", "--json"]).opened).not.toContain(journalOf(root, "old"));
    // The control: the same calls with the old session's journal read (no time to settle), the same answers.
    const whole = makeRepo({ "old.txt": "0\n", "x.txt": "0\n" });
    call(whole, "old", "toolu_o1", "Write", { file_path: join(whole, "old.txt"), content: "1\n" }, () => write(whole, "old.txt", "1\n"));
    call(whole, "cut", "toolu_c1", "Bash", { command: "echo 1 > x.txt", description: "x" }, () => write(whole, "x.txt", "1\n"), false);
    expect(changed(whole, ["--session", "cut"])).toEqual(["modified x.txt"]);
    expect(items(whole)).toEqual(items(root));
  });

  it("an undo of a call id an old journal also holds: that journal is read, as the undo's members are all there", async () => {
    const scene = async (oldId: string, wait: boolean) => {
      const root = makeRepo({ "o.txt": "0\n", "n.txt": "0\n" });
      call(root, "old", oldId, "Write", { file_path: join(root, "o.txt"), content: "1\n" }, () => write(root, "o.txt", "1\n"));
      if (wait) await settle();
      // A shell call: its pre snapshot is where the window starts (a file call takes none).
      call(root, "new", "toolu_dup", "Bash", { command: "echo 1 > n.txt", description: "x" }, () => write(root, "n.txt", "1\n"));
      // Undone by call id: the receipt names the id, not the session, so both sessions' calls of that id are its scope.
      expect(unwind(root, ["undo", "--session", "new", "--call", "toolu_dup", "--json"]).code).toBe(0);
      return { root, out: unwind(root, ["changes", "--session", "new", "--json"]).stdout, opened: journalsOpened(root, ["changes", "--session", "new", "--json"]).opened };
    };
    const shared = await scene("toolu_dup", true);
    const whole = await scene("toolu_dup", false);
    expect(shared.out).toBe(whole.out);
    expect(shared.opened).toContain(journalOf(shared.root, "old"));
    // The control: an id only the new session has leaves the old journal unread.
    const own = await scene("toolu_own", true);
    expect(own.opened).not.toContain(journalOf(own.root, "old"));
  });

  it("an ignored file first captured in an old journal: the whole record is read, and the shell call's change to it is found", async () => {
    const root = makeRepo({ ".gitignore": "*.log\n", "app.log": "0\n" });
    call(root, "writer", "toolu_w1", "Write", { file_path: join(root, "app.log"), content: "1\n" }, () => write(root, "app.log", "1\n"));
    await settle();
    // No snapshot sees app.log: only the old capture and the later one place the shell call's change.
    call(root, "shell", "toolu_s1", "Bash", { command: "echo 2 > app.log", description: "x" }, () => write(root, "app.log", "2\n"));
    call(root, "later", "toolu_l1", "Write", { file_path: join(root, "app.log"), content: "3\n" }, () => write(root, "app.log", "3\n"));
    expect(changed(root, ["--session", "shell"])).toEqual(["modified app.log"]);
    expect(changed(root, ["--session", "shell"])).toEqual(["modified app.log"]);
    expect(journalsOpened(root, ["changes", "--session", "shell", "--json"]).opened).toContain(journalOf(root, "writer"));
    // The control: a tracked file is seen by the snapshot before the call, and the old journal is left unread.
    const tracked = makeRepo({ "app.txt": "0\n" });
    call(tracked, "writer", "toolu_w1", "Write", { file_path: join(tracked, "app.txt"), content: "1\n" }, () => write(tracked, "app.txt", "1\n"));
    await settle();
    call(tracked, "shell", "toolu_s1", "Bash", { command: "echo 2 > app.txt", description: "x" }, () => write(tracked, "app.txt", "2\n"));
    call(tracked, "later", "toolu_l1", "Write", { file_path: join(tracked, "app.txt"), content: "3\n" }, () => write(tracked, "app.txt", "3\n"));
    expect(changed(tracked, ["--session", "shell"])).toEqual(["modified app.txt"]);
    expect(journalsOpened(tracked, ["changes", "--session", "shell", "--json"]).opened).not.toContain(journalOf(tracked, "writer"));
  });

  it("a file inside a nested repository first captured in an old journal: the whole record is read, as for an ignored one", async () => {
    const root = makeRepo({ "top.txt": "0\n" });
    git(root, "init", "-q", "sub");
    write(root, "sub/x.txt", "0\n");
    call(root, "writer", "toolu_w1", "Write", { file_path: join(root, "sub/x.txt"), content: "1\n" }, () => write(root, "sub/x.txt", "1\n"));
    await settle();
    // No snapshot of the outer tree sees inside sub/: only the captures place the shell call's change.
    call(root, "shell", "toolu_s1", "Bash", { command: "echo 2 > sub/x.txt", description: "x" }, () => write(root, "sub/x.txt", "2\n"));
    call(root, "later", "toolu_l1", "Write", { file_path: join(root, "sub/x.txt"), content: "3\n" }, () => write(root, "sub/x.txt", "3\n"));
    expect(journalsOpened(root, ["changes", "--session", "shell", "--json"]).opened).toContain(journalOf(root, "writer"));
    expect(changed(root, ["--session", "shell"])).toEqual(["modified sub/x.txt"]);
  });
});
