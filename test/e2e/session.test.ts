import { chmodSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { makeRepo, read, tempDir, treeState, unwind, write, writeFiles } from "../helpers.js";
import { claudeCall, claudePayload, hook, hookAsync } from "../journal-helpers.js";

const A = "sess-aaaa-1111";
const B = "sess-bbbb-2222";

/** Session A edits a.ts with Edit and runs a Bash that creates, removes and moves files. */
function sessionA(root: string) {
  claudeCall(root, A, "Edit", { file_path: join(root, "src/a.ts"), old_string: "1", new_string: "2" }, () => write(root, "src/a.ts", "export const a = 2;\n"));
  claudeCall(root, A, "Bash", { command: "mkdir -p gen/deep && echo x > gen/deep/x.ts && rm old.ts && mv keep.md moved.md", description: "shell" }, () => {
    mkdirSync(join(root, "gen/deep"), { recursive: true });
    writeFileSync(join(root, "gen/deep/x.ts"), "x\n");
    unlinkSync(join(root, "old.ts"));
    renameSync(join(root, "keep.md"), join(root, "moved.md"));
    writeFileSync(join(root, "build/out.js"), "built by the agent\n"); // ignored: never captured, never undone
  });
}

function repo() {
  return makeRepo({
    ".gitignore": "build/\n",
    "src/a.ts": "export const a = 1;\n",
    "src/b.ts": "export const b = 1;\n",
    "old.ts": "old\n",
    "keep.md": "# keep\n",
    "build/out.js": "built before\n",
  });
}

describe("session undo", () => {
  it("takes back exactly one session: its edits and its shell side effects, not another session's or a human's", () => {
    const root = repo();
    const original = treeState(root, [".git", "build"]);
    sessionA(root);
    claudeCall(root, B, "Write", { file_path: "src/b.ts", content: "export const b = 2;\n" }, () => write(root, "src/b.ts", "export const b = 2;\n"));
    write(root, "human.txt", "a person wrote this after the agents\n");

    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.json.scope).toEqual({ kind: "session", id: `claude:${A}` });
    expect(r.json.items.map((i: any) => [i.path, i.action])).toEqual([
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
    const again = unwind(root, ["undo", "--session", A, "--json"]);
    expect(again.code).toBe(0);
    expect(again.json.counts).toMatchObject({ restore: 0, delete: 0, conflict: 0 });
    expect(again.json.items.every((i: any) => i.action === "skip" && i.reason === "unchanged")).toBe(true);

    // Redo brings the session's work back exactly.
    expect(unwind(root, ["redo", r.json.receipt]).code).toBe(0);
    expect(read(root, "src/a.ts")).toBe("export const a = 2;\n");
    expect(read(root, "gen/deep/x.ts")).toBe("x\n");
    expect(existsSync(join(root, "old.ts"))).toBe(false);
    void original;
  });

  it("a human's later edit to the session's file is a conflict, left alone; --force takes it back and redo restores it", () => {
    const root = repo();
    sessionA(root);
    write(root, "src/a.ts", "export const a = 3; // human\n");
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.code).toBe(1);
    expect(r.json.items.find((i: any) => i.path === "src/a.ts")).toMatchObject({ path: "src/a.ts", action: "conflict", reason: "changed-since" });
    expect(read(root, "src/a.ts")).toBe("export const a = 3; // human\n");

    const f = unwind(root, ["undo", "--session", A, "--force", "--path", "src/a.ts", "--json"]);
    expect(f.json.items).toMatchObject([{ path: "src/a.ts", action: "restore", reason: null }]);
    expect(read(root, "src/a.ts")).toBe("export const a = 1;\n");
    expect(unwind(root, ["redo", f.json.receipt]).code).toBe(0);
    expect(read(root, "src/a.ts")).toBe("export const a = 3; // human\n");
  });

  it("later-write names the other session and when", () => {
    const root = repo();
    claudeCall(root, A, "Write", { file_path: "src/b.ts", content: "A\n" }, () => write(root, "src/b.ts", "A\n"));
    claudeCall(root, B, "Edit", { file_path: "src/b.ts", old_string: "A", new_string: "B" }, () => write(root, "src/b.ts", "B\n"));
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.code).toBe(1);
    const item = r.json.items[0];
    expect(item).toMatchObject({ path: "src/b.ts", action: "conflict", reason: "later-write" });
    expect(item.detail).toMatch(new RegExp(`^claude:${B} at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`));
    expect(read(root, "src/b.ts")).toBe("B\n");
    // Negative control: undoing B (the later writer) is not a later-write conflict.
    const rb = unwind(root, ["undo", "--session", B, "--json"]);
    expect(rb.json.items[0]).toMatchObject({ action: "restore" });
    expect(read(root, "src/b.ts")).toBe("A\n");
  });

  it("--since takes back only what the session did from then on", async () => {
    const root = repo();
    claudeCall(root, A, "Write", { file_path: "one.txt", content: "1" }, () => write(root, "one.txt", "1"));
    await new Promise((r) => setTimeout(r, 20));
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    claudeCall(root, A, "Write", { file_path: "two.txt", content: "2" }, () => write(root, "two.txt", "2"));
    const r = unwind(root, ["undo", "--session", A, "--since", since, "--json"]);
    expect(r.json.items.map((i: any) => i.path)).toEqual(["two.txt"]);
    expect(existsSync(join(root, "one.txt"))).toBe(true);
    expect(existsSync(join(root, "two.txt"))).toBe(false);
    expect(unwind(root, ["undo", "--session", A, "--since", "yesterday"]).code).toBe(2);
  });

  it("--call takes back one tool call", () => {
    const root = repo();
    const first = claudeCall(root, A, "Write", { file_path: "one.txt", content: "1" }, () => write(root, "one.txt", "1"));
    claudeCall(root, A, "Write", { file_path: "two.txt", content: "2" }, () => write(root, "two.txt", "2"));
    const r = unwind(root, ["undo", "--call", first, "--json"]);
    expect(r.json.scope).toEqual({ kind: "call", id: first });
    expect(existsSync(join(root, "one.txt"))).toBe(false);
    expect(existsSync(join(root, "two.txt"))).toBe(true);
  });

  it("--merge takes back only the session's hunks when a human edited elsewhere in the file; overlapping edits stay a conflict", () => {
    const lines = (xs: string[]) => xs.join("\n") + "\n";
    const base = ["l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9"];
    const root = makeRepo({ "f.txt": lines(base) });
    const agent = [...base];
    agent[1] = "l2 agent";
    claudeCall(root, A, "Edit", { file_path: "f.txt", old_string: "l2", new_string: "l2 agent" }, () => write(root, "f.txt", lines(agent)));
    const human = [...agent];
    human[7] = "l8 human";
    write(root, "f.txt", lines(human));

    const plain = unwind(root, ["undo", "--session", A, "--dry-run", "--json"]);
    expect(plain.json.items[0]).toMatchObject({ action: "conflict", reason: "changed-since" });
    const m = unwind(root, ["undo", "--session", A, "--merge", "--json"]);
    expect(m.json.items[0]).toMatchObject({ path: "f.txt", action: "merge" });
    const expected = [...base];
    expected[7] = "l8 human";
    expect(read(root, "f.txt")).toBe(lines(expected));
    expect(unwind(root, ["redo", m.json.receipt]).code).toBe(0);
    expect(read(root, "f.txt")).toBe(lines(human));

    // Overlapping: the human rewrote the agent's own line.
    const overlap = [...agent];
    overlap[1] = "l2 agent, then human";
    write(root, "f.txt", lines(overlap));
    const c = unwind(root, ["undo", "--session", A, "--merge", "--json"]);
    expect(c.code).toBe(1);
    expect(c.json.items[0]).toMatchObject({ action: "conflict", reason: "changed-since" });
    expect(read(root, "f.txt")).toBe(lines(overlap));
  });
});

describe("session undo refusals, each with its negative control", () => {
  it("a symlink swapped in after the session is refused; the same path as a file is restored", () => {
    const root = repo();
    claudeCall(root, A, "Write", { file_path: "w.txt", content: "agent" }, () => write(root, "w.txt", "agent"));
    const outside = join(tempDir(), "target.txt");
    writeFileSync(outside, "outside\n");
    unlinkSync(join(root, "w.txt"));
    symlinkSync(outside, join(root, "w.txt"));
    const r = unwind(root, ["undo", "--session", A, "--force", "--json"]);
    expect(r.json.items[0]).toMatchObject({ path: "w.txt", action: "conflict", reason: "symlink" });
    expect(readFileSync(outside, "utf8")).toBe("outside\n");
    unlinkSync(join(root, "w.txt"));
    write(root, "w.txt", "agent");
    expect(unwind(root, ["undo", "--session", A, "--json"]).json.items[0]).toMatchObject({ action: "delete" });
  });

  it("a hardlinked file is refused; with one link it is restored", () => {
    const root = repo();
    claudeCall(root, A, "Edit", { file_path: "src/a.ts", old_string: "1", new_string: "2" }, () => write(root, "src/a.ts", "two\n"));
    const other = join(tempDir(), "link");
    linkSync(join(root, "src/a.ts"), other);
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.json.items[0]).toMatchObject({ action: "conflict", reason: "hardlink" });
    expect(read(root, "src/a.ts")).toBe("two\n");
    unlinkSync(other);
    expect(unwind(root, ["undo", "--session", A, "--json"]).json.items[0]).toMatchObject({ action: "restore" });
  });

  it("a tampered content blob is refused as hash-mismatch; an intact one is restored", () => {
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
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.json.items[0]).toMatchObject({ action: "conflict", reason: "hash-mismatch" });
    expect(read(root, "src/a.ts")).toBe("two\n");
    writeFileSync(blob, good);
    expect(unwind(root, ["undo", "--session", A, "--json"]).json.items[0]).toMatchObject({ action: "restore" });
    expect(read(root, "src/a.ts")).toBe("export const a = 'only in the working tree';\n");
  });

  it("a tampered journal record refuses the session's undo (exit 4); verify names it; the untampered journal undoes", () => {
    const root = repo();
    claudeCall(root, A, "Edit", { file_path: "src/a.ts", old_string: "1", new_string: "2" }, () => write(root, "src/a.ts", "two\n"));
    const dir = join(root, ".git", "unwind", "journal");
    const [file] = readdirSync(dir);
    const path = join(dir, file!);
    const good = readFileSync(path, "utf8");
    writeFileSync(path, good.replace('"path":"src/a.ts"', '"path":"src/b.ts"'));
    const tree = treeState(root);
    const r = unwind(root, ["undo", "--session", A]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/journal record .*:1 is damaged \(checksum mismatch/);
    expect(treeState(root)).toEqual(tree);
    const v = unwind(root, ["verify", "--json"]);
    expect(v.code).toBe(4);
    expect(v.json.problems.map((p: any) => p.message).join("\n")).toMatch(/journal .* is damaged/);
    writeFileSync(path, good);
    expect(unwind(root, ["undo", "--session", A]).code).toBe(0);
    expect(read(root, "src/a.ts")).toBe("export const a = 1;\n");
  });

  it("a payload path outside the root, in .git or beyond a symlink is never captured (one error each); an inside path is", () => {
    const root = repo();
    const elsewhere = tempDir();
    const outside = join(elsewhere, "secret.txt");
    writeFileSync(outside, "secret\n");
    symlinkSync(elsewhere, join(root, "linkdir"));
    for (const p of [outside, "../escape.txt", join(root, ".git", "config"), "linkdir/secret.txt"]) {
      claudeCall(root, A, "Write", { file_path: p, content: "x" }, () => {});
    }
    expect(unwind(root, ["status", "--json"]).json.records).toBe(0);
    const errors = readFileSync(join(root, ".git", "unwind", "errors.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(errors.map((e) => e.kind)).toEqual(Array(8).fill("skipped-path"));
    expect(errors.map((e) => e.message).join("\n")).toMatch(/outside the root[\s\S]*not capturable \(git-dir\)[\s\S]*beyond a symlink/);
    expect(unwind(root, ["undo", "--session", A]).code).toBe(3); // nothing recorded: no such session
    expect(readFileSync(outside, "utf8")).toBe("secret\n");
    // Negative control: the same call on a path inside the root is captured and undone.
    claudeCall(root, A, "Write", { file_path: "inside.txt", content: "x" }, () => write(root, "inside.txt", "x"));
    expect(unwind(root, ["undo", "--session", A, "--json"]).json.items).toMatchObject([{ path: "inside.txt", action: "delete", reason: null }]);
  });
});

describe("hooks never block or break the agent", () => {
  const bad: [string, string, string][] = [
    ["malformed JSON", "claude", "{not json"],
    ["empty input", "claude", ""],
    ["truncated payload", "claude", '{"session_id":"s1","cwd":"/tmp","hook_event_name":"PreToolUse","tool_na'],
    ["unknown event", "claude", JSON.stringify({ session_id: "s1", cwd: "/tmp", hook_event_name: "Nope", tool_name: "Write", tool_input: {} })],
    ["missing session", "claude", JSON.stringify({ cwd: "/tmp", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: "a" } })],
    ["file tool without a path", "claude", JSON.stringify({ session_id: "s1", cwd: "/tmp", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: {} })],
    ["unknown harness", "cursor", JSON.stringify({ session_id: "s1", cwd: "/tmp", hook_event_name: "PreToolUse", tool_name: "Write", tool_input: {} })],
  ];
  it.each(bad)("%s: exit 0, nothing on stdout, nothing captured, one error-log entry", (_name, harness, input) => {
    const root = repo();
    const r = hook(root, harness, input);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    const lines = readFileSync(join(root, ".git", "unwind", "errors.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).kind).toBe("bad-input");
    expect(existsSync(join(root, ".git", "unwind", "journal"))).toBe(false);
  });

  it("huge input: exit 0, nothing captured, one error", () => {
    const root = repo();
    const payload = claudePayload(root, A, "PreToolUse", "Write", { file_path: "a.txt", content: "x".repeat(65 * 1024 * 1024) }, "t1");
    const r = hook(root, "claude", payload);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    const errors = readFileSync(join(root, ".git", "unwind", "errors.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/over \d+ bytes/);
  });

  it("negative control: a good payload is captured and logs no error", () => {
    const root = repo();
    const r = hook(root, "claude", claudePayload(root, A, "PreToolUse", "Write", { file_path: "a.txt", content: "x" }, "t1"));
    expect(r.code).toBe(0);
    expect(existsSync(join(root, ".git", "unwind", "errors.jsonl"))).toBe(false);
    expect(unwind(root, ["status", "--json"]).json.records).toBe(1);
  });

  it("read-only tools capture nothing", () => {
    const root = repo();
    hook(root, "claude", claudePayload(root, A, "PreToolUse", "Read", { file_path: "src/a.ts" }, "t1"));
    hook(root, "claude", claudePayload(root, A, "PreToolUse", "Grep", { pattern: "x" }, "t2"));
    expect(existsSync(join(root, ".git", "unwind", "journal"))).toBe(false);
  });

  it("a tree snapshot over its time budget records capture-timeout and still exits 0", () => {
    const root = repo();
    const r = hook(root, "claude", claudePayload(root, A, "PreToolUse", "Bash", { command: "ls" }, "t1"), { UNWIND_HOOK_BUDGET_MS: "1" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    const errors = readFileSync(join(root, ".git", "unwind", "errors.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(errors.map((e) => e.kind)).toEqual(["capture-timeout"]);
    expect(unwind(root, ["status"]).stdout).toMatch(/errors\s+1 not yet acknowledged/);
  });

  it("eight hook processes at once, one session and several, lose nothing", async () => {
    const root = repo();
    const payloads: string[] = [];
    for (let i = 0; i < 8; i++) {
      write(root, `f${i}.txt`, `before ${i}\n`);
      const session = i < 4 ? A : `sess-par-${i}`;
      payloads.push(claudePayload(root, session, "PreToolUse", "Write", { file_path: `f${i}.txt`, content: "after" }, `t${i}`));
    }
    const rs = await Promise.all(payloads.map((p) => hookAsync(root, "claude", p)));
    for (const r of rs) expect(r.code).toBe(0);
    for (let i = 0; i < 8; i++) write(root, `f${i}.txt`, `after ${i}\n`);
    const posts = payloads.map((p) => p.replace('"PreToolUse"', '"PostToolUse"'));
    await Promise.all(posts.map((p) => hookAsync(root, "claude", p)));
    const st = unwind(root, ["status", "--json"]).json;
    // 16 of the calls' own, and for session A's calls that were still open when another of its events came, a closing one each.
    const own = readdirSync(join(root, ".git", "unwind", "journal"))
      .filter((f) => f.endsWith(".jsonl"))
      .flatMap((f) =>
        readFileSync(join(root, ".git", "unwind", "journal", f), "utf8")
          .trim()
          .split("\n"),
      )
      .filter((l) => !l.includes('"closedBy"'));
    expect(own.length).toBe(16);
    expect(st.records).toBeGreaterThanOrEqual(16);
    expect(st.damagedRecords).toBe(0);
    expect(st.sessions).toBe(5);
    expect(existsSync(join(root, ".git", "unwind", "errors.jsonl"))).toBe(false);
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.json.items.map((i: any) => i.path)).toEqual(["f0.txt", "f1.txt", "f2.txt", "f3.txt"]);
    for (let i = 0; i < 8; i++) expect(read(root, `f${i}.txt`)).toBe(i < 4 ? `before ${i}\n` : `after ${i}\n`);
  });
});

describe("scopes and bad input", () => {
  it("unknown session is exit 3; an ambiguous prefix is exit 3 listing the candidates; a unique prefix works", () => {
    const root = repo();
    claudeCall(root, "abcdef-1", "Write", { file_path: "1.txt", content: "1" }, () => write(root, "1.txt", "1"));
    claudeCall(root, "abcdef-2", "Write", { file_path: "2.txt", content: "2" }, () => write(root, "2.txt", "2"));
    const unknown = unwind(root, ["undo", "--session", "zzzzzzzz"]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain("no session 'zzzzzzzz'");
    const amb = unwind(root, ["undo", "--session", "abcdef"]);
    expect(amb.code).toBe(3);
    expect(amb.stderr).toContain("claude:abcdef-1, claude:abcdef-2");
    const ok = unwind(root, ["undo", "--session", "abcdef-2", "--json"]);
    expect(ok.code).toBe(0);
    expect(ok.json.scope.id).toBe("claude:abcdef-2");
    expect(existsSync(join(root, "1.txt"))).toBe(true);
  });

  it("sessions and log list what was recorded", () => {
    const root = repo();
    sessionA(root);
    const s = unwind(root, ["sessions", "--json"]).json.sessions;
    expect(s).toHaveLength(1);
    expect(s[0]).toMatchObject({ session: `claude:${A}`, harness: "claude", calls: 2, paths: 5 }); // the Edit's file and the four the Bash call changed
    const log = unwind(root, ["log", "--json"]).json.calls;
    expect(log.map((c: any) => c.tool)).toEqual(["Bash", "Edit"]);
    expect(log[0].paths).toEqual(["gen/deep/x.ts", "keep.md", "moved.md", "old.ts"]);
  });

  it("works in a folder without git", () => {
    const root = tempDir();
    writeFiles(root, { "notes.md": "v1\n" });
    claudeCall(root, A, "Edit", { file_path: "notes.md", old_string: "v1", new_string: "v2" }, () => write(root, "notes.md", "v2\n"));
    claudeCall(root, A, "Bash", { command: "echo n > new.txt" }, () => write(root, "new.txt", "n\n"));
    const r = unwind(root, ["undo", "--session", A, "--json"]);
    expect(r.code).toBe(0);
    expect(read(root, "notes.md")).toBe("v1\n");
    expect(existsSync(join(root, "new.txt"))).toBe(false);
    expect(existsSync(join(root, ".git"))).toBe(false);
  });

  it("record: generic capture of paths and of the tree, undone as a session", () => {
    const root = repo();
    expect(unwind(root, ["record", "--session", "orch:run-1", "--phase", "pre", "src/a.ts"]).code).toBe(0);
    write(root, "src/a.ts", "changed\n");
    expect(unwind(root, ["record", "--session", "orch:run-1", "--phase", "post", "src/a.ts"]).code).toBe(0);
    expect(unwind(root, ["record", "--session", "orch:run-1", "--phase", "pre", "--call", "c2"]).code).toBe(0);
    write(root, "made.txt", "m\n");
    expect(unwind(root, ["record", "--session", "orch:run-1", "--phase", "post", "--call", "c2"]).code).toBe(0);
    const r = unwind(root, ["undo", "--session", "orch:run-1", "--json"]);
    expect(r.json.items.map((i: any) => [i.path, i.action])).toEqual([
      ["made.txt", "delete"],
      ["src/a.ts", "restore"],
    ]);
    expect(unwind(root, ["record", "--session", "x", "--phase", "middle"]).code).toBe(2);
  });
});
