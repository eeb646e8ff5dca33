/**
 * `unwind import --claude`: a real Claude Code 2.1.332 transcript
 * (test/fixtures/transcripts/, captured through test/real's harness with no
 * hooks installed; docs/import.md) turned into imported records, then
 * reviewed and taken back, through the built CLI in real git repositories.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { dirFingerprint, makeRepo, read, tempDir, treeState, unwind, write } from "../helpers.js";

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "transcripts", "claude-2.1.332.jsonl");
const ID = "b143fe8e-0761-4f19-a0ba-88ad459a4676";
const SESSION = `claude:${ID}`;

/** The repository as it was before the session (the transcript's Write, Edit, Bash, Write, Edit). */
const BEFORE = { "a.txt": "alpha\nbeta\n", "keep.txt": "keep\n", "src/x.sh": { content: "#!/bin/sh\necho x\n", mode: 0o755 } };

/** What the session left: its file tools' work, and its shell command's made.txt. */
function runSession(root: string, only?: (file: string) => boolean): void {
  const after: Record<string, string> = { "new.txt": "new file\n", "a.txt": "alpha, edited\nbeta\n", "made.txt": "made\n", "keep.txt": "kept, rewritten\n", "src/x.sh": "#!/bin/sh\necho y\n" };
  for (const [p, c] of Object.entries(after)) if (!only || only(p)) write(root, p, c);
}

/** A Claude Code configuration directory holding the transcript under this root's project slug. */
function claudeDir(root: string, text = readFileSync(FIXTURE, "utf8")): { env: Record<string, string>; file: string } {
  const dir = tempDir("unwind-claude-config-");
  const file = join(dir, "projects", root.replace(/[^A-Za-z0-9]/g, "-"), `${ID}.jsonl`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text.replaceAll("/__ROOT__", root).replaceAll("/__HOME__", dir));
  return { env: { CLAUDE_CONFIG_DIR: dir }, file };
}

/** Each file of the work tree and its content (git's own files aside). */
function contents(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of Object.keys(treeState(root, [".git"])).filter((p) => !p.endsWith("/"))) out[p] = read(root, p);
  return out;
}

interface Imported {
  sessions: { session: string; calls: { call: string; tool: string; capture: string; paths: string[]; status: string; why?: string }[]; counts: Record<string, number>; missedByHooks: number }[];
}

describe("unwind import --claude", () => {
  it("imports a session run before init, then undo takes back its file tools' work and names the shell call it cannot", () => {
    const root = makeRepo(BEFORE);
    runSession(root);
    const { env } = claudeDir(root);

    // --dry-run says what would come in and writes nothing: not even a store.
    const dry = unwind(root, ["import", "--claude", "--dry-run", "--json"], { env });
    expect(dry.code, dry.stderr).toBe(0);
    const s = (dry.json as Imported).sessions[0]!;
    expect(s.session).toBe(SESSION);
    expect(s.calls.map((c) => [c.tool, c.status, c.capture, c.paths.join(" ")])).toEqual([
      ["Write", "imported", "file", "new.txt"],
      ["Edit", "imported", "file", "a.txt"],
      ["Bash", "imported", "unknown", ""],
      ["Write", "imported", "file", "keep.txt"],
      ["Edit", "imported", "file", "src/x.sh"],
      // Not offered by this client: its failure wrote nothing.
      ["MultiEdit", "skipped", "file", ""],
    ]);
    expect(existsSync(join(root, ".git", "unwind")), "a dry run writes no store").toBe(false);

    const imp = unwind(root, ["import", "--claude", ID.slice(0, 8)], { env });
    expect(imp.code, imp.stderr).toBe(0);
    expect(imp.stdout).toContain("imported 5 call(s) (1 with shell effects unknown)");
    const log = unwind(root, ["log", "--json"]).json as { calls: { tool: string; capture: string; imported?: boolean; paths: string[] }[] };
    expect(log.calls.every((c) => c.imported === true)).toBe(true);
    expect(log.calls.find((c) => c.tool === "Bash")).toMatchObject({ capture: "unknown", paths: [] });

    // changes names the shell call beside the paths; it claims none.
    const cs = unwind(root, ["changes", "--session", ID, "--json"]);
    expect(cs.json.entries.map((e: { path: string; change: string }) => `${e.change} ${e.path}`)).toEqual(["modified a.txt", "modified keep.txt", "added new.txt", "modified src/x.sh"]);
    expect(cs.json.uncaptured.map((c: { tool: string; command: string }) => `${c.tool}: ${c.command}`)).toEqual(["Bash: echo made > made.txt"]);

    const undo = unwind(root, ["undo", "--session", SESSION, "--json"]);
    expect(undo.code, "a shell call not taken back leaves the undo partial").toBe(1);
    expect(undo.json.counts).toMatchObject({ restore: 3, delete: 1, conflict: 0 });
    expect(undo.json.uncaptured).toHaveLength(1);
    // Back to before the session, but the shell command's file, which no capture saw.
    expect(contents(root)).toEqual({ "a.txt": "alpha\nbeta\n", "keep.txt": "keep\n", "made.txt": "made\n", "src/x.sh": "#!/bin/sh\necho x\n" });
    expect(statSync(join(root, "src/x.sh")).mode & 0o777, "the file's mode is kept").toBe(0o755);
    const human = unwind(root, ["undo", "--session", SESSION, "--dry-run"]);
    expect(human.stdout).toContain("1 imported call(s) would not be taken back");
    expect(human.stdout).toContain("not-captured  Bash toolu_fake_03: echo made > made.txt");
  });

  it("is idempotent: a second import adds nothing", () => {
    const root = makeRepo(BEFORE);
    runSession(root);
    const { env } = claudeDir(root);
    expect(unwind(root, ["import", "--claude"], { env }).code).toBe(0);
    const journal = dirFingerprint(join(root, ".git", "unwind", "journal"));
    const again = unwind(root, ["import", "--claude", "--json"], { env });
    expect(again.code, again.stderr).toBe(0);
    expect((again.json as Imported).sessions[0]!.counts).toMatchObject({ imported: 0, recorded: 5 });
    expect(dirFingerprint(join(root, ".git", "unwind", "journal"))).toEqual(journal);
    // Negative control: the first import did write.
    expect(Object.keys(journal).length).toBeGreaterThan(0);
  });

  it("takes back only where a path still holds what the session left: a later edit is changed-since", () => {
    const root = makeRepo(BEFORE);
    runSession(root);
    const { env } = claudeDir(root);
    expect(unwind(root, ["import", "--claude"], { env }).code).toBe(0);
    write(root, "keep.txt", "a person's edit\n");
    const undo = unwind(root, ["undo", "--session", ID, "--json"]);
    expect(undo.code).toBe(1);
    const byPath = Object.fromEntries(undo.json.items.map((i: { path: string; action: string; reason: string | null }) => [i.path, `${i.action} ${i.reason ?? ""}`.trim()]));
    expect(byPath).toEqual({ "a.txt": "restore", "keep.txt": "conflict changed-since", "new.txt": "delete", "src/x.sh": "restore" });
    expect(read(root, "keep.txt")).toBe("a person's edit\n");
  });

  it("adds only the calls the hooks missed, and status points them out", async () => {
    const root = makeRepo(BEFORE);
    const { env } = claudeDir(root);
    // The hooks caught the first Write (its real tool-use id), then stopped firing.
    const hook = (event: string, extra: object) =>
      unwind(root, ["hook", "claude"], {
        input: JSON.stringify({
          session_id: ID,
          hook_event_name: event,
          cwd: root,
          tool_name: "Write",
          tool_use_id: "toolu_fake_01",
          tool_input: { file_path: join(root, "new.txt"), content: "new file\n" },
          ...extra,
        }),
      });
    expect(hook("PreToolUse", {}).code).toBe(0);
    runSession(root, (p) => p === "new.txt");
    expect(hook("PostToolUse", { tool_response: {} }).code).toBe(0);
    runSession(root);
    const before = unwind(root, ["status", "--json"]).json;
    expect(before.imported).toEqual({ calls: 0, sessions: 0, missedByHooks: 0 });

    const imp = unwind(root, ["import", "--claude", "--json"], { env });
    expect(imp.code, imp.stderr).toBe(0);
    const s = (imp.json as Imported).sessions[0]!;
    expect(s.calls.find((c) => c.call === "toolu_fake_01")!.status).toBe("recorded");
    expect(s.counts).toMatchObject({ imported: 4, recorded: 1 });
    expect(s.missedByHooks).toBe(4);
    const status = unwind(root, ["status"]);
    expect(status.stdout).toContain("4 call(s) imported that hooks missed");
    expect(unwind(root, ["status", "--json"]).json.imported).toEqual({ calls: 4, sessions: 1, missedByHooks: 4 });
    // Once the journal has settled, status counts it from each file's facts (src/store/journal.ts): the same figures.
    await new Promise((r) => setTimeout(r, 2300));
    expect(unwind(root, ["status", "--json"]).json.imported).toEqual({ calls: 4, sessions: 1, missedByHooks: 4 });
    expect(unwind(root, ["status", "--json"]).json.imported).toEqual({ calls: 4, sessions: 1, missedByHooks: 4 });

    const undo = unwind(root, ["undo", "--session", SESSION, "--json"]);
    expect(undo.json.counts).toMatchObject({ restore: 3, delete: 1, conflict: 0 });
    expect(contents(root)).toEqual({ "a.txt": "alpha\nbeta\n", "keep.txt": "keep\n", "made.txt": "made\n", "src/x.sh": "#!/bin/sh\necho x\n" });
  });

  it("refuses bad input with one line, the right exit code, and nothing written", () => {
    const root = makeRepo(BEFORE);
    runSession(root);
    const { env, file } = claudeDir(root);
    const tree = treeState(root);

    const none = unwind(root, ["import", "--claude", "0000ffff"], { env });
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/^unwind: no Claude Code session '0000ffff' for /);
    expect(none.stderr.trim().split("\n")).toHaveLength(1);

    const missing = unwind(root, ["import", "--claude", join(root, "gone.jsonl")], { env });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("no transcript");

    const lines = readFileSync(file, "utf8").split("\n");
    lines[5] = lines[5]!.slice(0, 40);
    const bad = join(root, "..", `${ID}.jsonl`);
    writeFileSync(bad, lines.join("\n"));
    const torn = unwind(root, ["import", "--claude", bad, "--json"], { env });
    expect(torn.code).toBe(3);
    expect(torn.json.error.code).toBe("E_TRANSCRIPT");
    expect(torn.json.error.message).toContain(`${ID}.jsonl:6 is not valid JSON`);

    const codex = unwind(root, ["import", "--codex"], { env });
    expect(codex.code).toBe(2);
    expect(codex.stderr).toContain("Codex's session logs keep an edit as a diff");

    expect(existsSync(join(root, ".git", "unwind")), "nothing was written").toBe(false);
    expect(treeState(root)).toEqual(tree);
    // Negative control: the same transcript, whole, imports.
    expect(unwind(root, ["import", "--claude", file], { env }).code).toBe(0);
  });
});
