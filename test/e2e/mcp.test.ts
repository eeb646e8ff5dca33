/**
 * `unwind mcp` through the official SDK's own client over stdio: the real
 * `bin/unwind mcp` process, started in a real repository where two Claude
 * sessions were recorded through the real hook binary (test/journal-helpers.ts).
 * Every "nothing happened" assertion compares the whole work tree and
 * everything under .git (the store included) and has a control where the
 * same call, allowed, does change things.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { TOOLS } from "../../src/mcp/server.js";
import { BIN, disk, makeRepo, read, treeState, unwind, write } from "../helpers.js";
import { A_TS, A_TS2, B_TS, B_TS2, twoSessions as twoFixture } from "../session-fixture.js";
import { claudePayload, hook } from "../journal-helpers.js";

const A = "mcp-aaaa-1111";
const B = "mcp-bbbb-2222";
const HEX64 = /^[0-9a-f]{64}$/;

const twoSessions = () => twoFixture(A, B);

/** The environment a client would give the server, without anything naming a calling session or a project directory unless `extra` does. */
function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(CLAUDE_CODE_SESSION_ID|CLAUDE_PROJECT_DIR|GEMINI_PROJECT_DIR|UNWIND_.*)$/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

/** An SDK client connected to `node bin/unwind mcp` started in `cwd`. */
async function connect(cwd: string, env: Record<string, string> = {}, args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", ...args], cwd, env: serverEnv(env), stderr: "pipe" });
  const client = new Client({ name: "unwind-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: any;
}

async function call(c: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  return (await c.callTool({ name, arguments: args })) as unknown as ToolResult;
}

/** A successful call's document, checked to come once, as structured content, with its one-line summary as the only text. */
async function doc(c: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = await call(c, name, args);
  expect(r.isError, `${name}: ${r.content[0]?.text}`).toBeFalsy();
  expect(r.content).toHaveLength(1);
  expect(r.content[0]!.type).toBe("text");
  expect(r.content[0]!.text).not.toContain("\n");
  expect(r.structuredContent).toBeTypeOf("object");
  return r.structuredContent;
}

/** The command line's flags for what the tools take as arguments: an agent over MCP has none of them to pass. */
const CLI_FLAGS = /--(force|merge|path|hunk|dry-run|expect|session|call|from-call|task|snapshot|to|since|last|any-worktree)\b/;

/** A tool error: its text `CODE: message (hint)` and the same as structured content. */
async function failure(c: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string; hint: string | null; text: string }> {
  const r = await call(c, name, args);
  expect(r.isError, `${name} should have failed`).toBe(true);
  const text = r.content[0]!.text;
  if (r.structuredContent) {
    const e = r.structuredContent.error;
    expect(text).toBe(`${e.code}: ${e.message}${e.hint ? ` (${e.hint})` : ""}`);
    expect(text).not.toMatch(CLI_FLAGS);
    return { ...e, text };
  }
  return { code: "", message: text, hint: null, text }; // refused by the SDK's schema check, before the tool ran
}

describe("unwind mcp: the tools", () => {
  it("lists every tool, each with a title, a description and a strict input schema; undo and restore require the plan", async () => {
    const root = twoSessions();
    const c = await connect(root);
    expect(c.getServerVersion()).toMatchObject({ name: "unwind" });
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual([...TOOLS]);
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(60);
      expect(t.title, t.name).toBeTruthy();
      expect(t.inputSchema.type).toBe("object");
      expect(t.inputSchema.additionalProperties, t.name).toBe(false);
      for (const [k, p] of Object.entries(t.inputSchema.properties ?? {})) expect((p as { description?: string }).description, `${t.name}.${k}`).toBeTruthy();
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.undo!.inputSchema.required).toEqual(["plan"]);
    expect(byName.restore!.inputSchema.required).toEqual(["plan"]);
    expect(byName.undo_preview!.inputSchema.required ?? []).toEqual([]);
    expect(Object.keys(byName.undo_preview!.inputSchema.properties!)).not.toContain("plan");
    expect(byName.undo!.annotations).toMatchObject({ destructiveHint: true });
    expect(byName.undo_preview!.annotations).toMatchObject({ readOnlyHint: true });
    // No client session here: the tools say the session must be named, and how to find it.
    expect((byName.changes!.inputSchema.properties as any).session.description).toMatch(/Required unless call, task or snapshot is given/);
  });

  it("two Claude sessions: inspect them, preview A, undo exactly A with the digest (B untouched), redo brings A back", async () => {
    const root = twoSessions();
    const c = await connect(root, { CLAUDE_CODE_SESSION_ID: A });

    const s = await doc(c, "sessions");
    expect(s.total).toBe(2);
    expect(s.sessions.map((x: any) => x.session)).toEqual([`claude:${B}`, `claude:${A}`]);
    expect(s.sessions[1]).toMatchObject({ harness: "claude", calls: 2, paths: 2 });

    const log = await doc(c, "log", { session: A });
    expect(log.calls.map((x: any) => [x.tool, x.paths])).toEqual([
      ["Bash", ["gen/out.txt"]],
      ["Edit", ["src/a.ts"]],
    ]);

    const cs = await doc(c, "changes", { session: A });
    expect(cs.scope).toEqual({ kind: "session", id: `claude:${A}` });
    expect(cs.entries.map((e: any) => [e.path, e.change, e.by])).toEqual([
      ["gen/out.txt", "added", [`claude:${A}`]],
      ["src/a.ts", "modified", [`claude:${A}`]],
    ]);

    const before = disk(root);
    const p = await doc(c, "undo_preview", { session: A });
    expect(p.plan).toMatch(HEX64);
    expect(p).toMatchObject({ dryRun: true, receipt: null, partial: false, counts: { restore: 1, delete: 1, merge: 0, skip: 0, conflict: 0 } });
    expect(p.items.map((i: any) => [i.path, i.action])).toEqual([
      ["gen/out.txt", "delete"],
      ["src/a.ts", "restore"],
    ]);
    expect(disk(root)).toEqual(before); // a preview changes nothing anywhere

    const u = await doc(c, "undo", { session: A, plan: p.plan });
    expect(u.receipt).toMatch(/^r-/);
    expect(u).toMatchObject({ dryRun: false, plan: p.plan, partial: false, counts: p.counts });
    // Exactly A's work is gone: the tree is the one before A, with B's write kept.
    const after = treeState(root);
    expect(after["src/b.ts"]).toBe(before.tree["src/b.ts"]);
    expect(read(root, "src/a.ts")).toBe(A_TS);
    expect(read(root, "src/b.ts")).toBe(B_TS2);
    expect(existsSync(join(root, "gen"))).toBe(false);
    const expected = { ...before.tree };
    delete expected["gen/"];
    delete expected["gen/out.txt"];
    expected["src/a.ts"] = after["src/a.ts"]!;
    expect(after).toEqual(expected);

    const r = await doc(c, "redo", { receipt: u.receipt });
    expect(r).toMatchObject({ scope: { kind: "receipt", id: u.receipt }, partial: false, counts: { restore: 2, conflict: 0 } });
    expect(treeState(root)).toEqual(before.tree);
  });

  it("a stale digest is refused as a tool error and nothing changes; a fresh preview's digest applies", async () => {
    const root = twoSessions();
    const c = await connect(root, { CLAUDE_CODE_SESSION_ID: A });
    const old = await doc(c, "undo_preview", { session: A });
    // After the preview, a person deletes the file A generated: the plan for that path changes (delete -> skip).
    write(root, "gen/out.txt", "generated\n");
    const { rmSync } = await import("node:fs");
    rmSync(join(root, "gen"), { recursive: true });
    const before = disk(root);

    const e = await failure(c, "undo", { session: A, plan: old.plan });
    expect(e.code).toBe("E_PLAN_CHANGED");
    expect(e.message).toContain("nothing was done");
    expect(e.hint).toBe("preview it again (undo_preview or restore_preview), check it, and apply with the new digest");
    expect(disk(root)).toEqual(before); // not a byte, not an mtime, not the store

    // The control: the same call with a fresh preview's digest does change things.
    const fresh = await doc(c, "undo_preview", { session: A });
    expect(fresh.plan).not.toBe(old.plan);
    expect(fresh.items.map((i: any) => [i.path, i.action])).toEqual([
      ["gen/out.txt", "skip"],
      ["src/a.ts", "restore"],
    ]);
    const u = await doc(c, "undo", { session: A, plan: fresh.plan });
    expect(u.receipt).toMatch(/^r-/);
    expect(read(root, "src/a.ts")).toBe(A_TS);
    expect(read(root, "src/b.ts")).toBe(B_TS2);
  });

  it("bad arguments are tool errors naming the argument; nothing changes and the server goes on", async () => {
    const root = twoSessions();
    const c = await connect(root);
    const p = await doc(c, "undo_preview", { session: A });
    const before = disk(root);

    expect((await failure(c, "undo", { session: 42, plan: p.plan })).text).toMatch(/session/);
    expect((await failure(c, "undo", { session: A })).text).toMatch(/plan/);
    expect((await failure(c, "undo", { session: A, plan: "not-a-digest" })).text).toMatch(/plan must be the digest undo_preview returned/);
    expect((await failure(c, "undo", { sesion: A, plan: p.plan })).text).toMatch(/sesion/);
    expect((await failure(c, "changes", { session: A, paths: "src/**" })).text).toMatch(/paths/);
    // Checked by the tool itself: an UnwindError with code and hint.
    const none = await failure(c, "undo", { plan: p.plan });
    expect(none).toMatchObject({ code: "E_USAGE", message: expect.stringContaining("no scope given") });
    expect(none.hint).toMatch(/sessions tool/);
    const unknown = await failure(c, "undo_preview", { session: "claude:nobody-here" });
    expect(unknown.code).toBe("E_SCOPE_UNKNOWN");
    const two = await failure(c, "redo", { receipt: "r-20261130T101500Z-9af83b7d", last: true });
    expect(two).toMatchObject({ code: "E_USAGE", message: expect.stringContaining("not both") });
    const glob = await failure(c, "undo_preview", { session: A, paths: ["nothing/**"] });
    expect(glob).toMatchObject({ code: "E_USAGE", message: expect.stringContaining("nothing/**") });
    // In the tools' terms: the argument is paths, the glob is root-relative, the changes tool lists them.
    expect(glob.message).toMatch(/^paths nothing\/\*\* matches nothing/);
    expect(glob.hint).toBe("globs are relative to the work tree's root; the changes tool lists the paths");
    const hunkless = await failure(c, "undo_preview", { session: A, hunks: [1] });
    expect(hunkless.message).toBe("hunks needs the path whose hunks it names: paths: [P]");
    expect(hunkless.hint).toBe("list a path's hunks with: the changes tool with paths: [P] and patch: true");
    // The control: the command line says the same in its own flags.
    const cli = unwind(root, ["undo", "--session", A, "--path", "nothing/**", "--dry-run"]);
    expect(cli.stderr).toMatch(/--path nothing\/\*\* matches nothing/);
    expect(disk(root)).toEqual(before);

    // The control: the server still answers, and the same undo, called right (by A itself), applies.
    await doc(c, "sessions");
    const u = await doc(await connect(root, { CLAUDE_CODE_SESSION_ID: A }), "undo", { session: A, plan: p.plan });
    expect(u.receipt).toMatch(/^r-/);
    expect(read(root, "src/a.ts")).toBe(A_TS);
  });

  it("snapshot, snapshots, restore_preview and restore (only with the previewed plan), redo", async () => {
    const root = twoSessions();
    unwind(root, ["init", "--mcp-allow", "any"]); // a restore takes back everyone's work: the person allows it
    const c = await connect(root);
    const snap = await doc(c, "snapshot", { label: "before the experiment" });
    expect(snap).toMatchObject({ id: expect.any(String), label: "before the experiment" });
    const list = await doc(c, "snapshots");
    expect(list.snapshots[0].id).toBe(snap.id); // newest first (the Bash call's own snapshots come after)
    const at = treeState(root);

    write(root, "src/a.ts", "experiment\n");
    write(root, "scratch.txt", "tmp\n");
    const p = await doc(c, "restore_preview", { snapshot: snap.id });
    expect(p.items.map((i: any) => [i.path, i.action])).toEqual([
      ["scratch.txt", "delete"],
      ["src/a.ts", "restore"],
    ]);
    // Stale: the work tree moved on after the preview; refused, nothing written.
    write(root, "scratch.txt", "tmp, edited\n");
    const before = disk(root);
    expect((await failure(c, "restore", { snapshot: snap.id, plan: p.plan })).code).toBe("E_PLAN_CHANGED");
    expect(disk(root)).toEqual(before);

    const fresh = await doc(c, "restore_preview", { last: true });
    const r = await doc(c, "restore", { last: true, plan: fresh.plan });
    expect(r.receipt).toMatch(/^r-/);
    expect(treeState(root)).toEqual(at);

    // Only some paths, relative to the root.
    write(root, "src/a.ts", "again\n");
    write(root, "src/b.ts", "again\n");
    const some = await doc(c, "restore_preview", { snapshot: snap.id, paths: ["./src/a.ts"] });
    expect(some.items.map((i: any) => i.path)).toEqual(["src/a.ts"]);
    expect((await failure(c, "restore_preview", { snapshot: snap.id, paths: ["../outside"] })).code).toBe("E_USAGE");

    const back = await doc(c, "redo", { last: true });
    expect(back.scope).toEqual({ kind: "receipt", id: r.receipt });
    expect(read(root, "scratch.txt")).toBe("tmp, edited\n");

    const st = await doc(c, "status");
    expect(st).toMatchObject({ root, sessions: 2, receipts: 2 });
  });

  it("defaults the session to the calling Claude Code session (CLAUDE_CODE_SESSION_ID), and says so when it has no record", async () => {
    const root = twoSessions();
    const c = await connect(root, { CLAUDE_CODE_SESSION_ID: A });
    const { tools } = await c.listTools();
    expect((tools.find((t) => t.name === "undo")!.inputSchema.properties as any).session.description).toMatch(/Default.*the calling agent's own session/);
    expect(tools.find((t) => t.name === "sessions")!.description).toContain(`claude:${A}`);

    const cs = await doc(c, "changes");
    expect(cs.scope).toEqual({ kind: "session", id: `claude:${A}` });
    const p = await doc(c, "undo_preview");
    expect(p.scope).toEqual({ kind: "session", id: `claude:${A}` });
    // Naming another session still works, and a call scope is not narrowed to the caller's.
    expect((await doc(c, "changes", { session: B })).scope).toEqual({ kind: "session", id: `claude:${B}` });
    await doc(c, "undo", { plan: p.plan });
    expect(read(root, "src/a.ts")).toBe(A_TS);
    expect(read(root, "src/b.ts")).toBe(B_TS2);

    // A caller the record does not know: the error says where the default came from.
    const other = await connect(root, { CLAUDE_CODE_SESSION_ID: "not-recorded-here" });
    const e = await failure(other, "changes", {});
    expect(e.code).toBe("E_SCOPE_UNKNOWN");
    expect(e.message).toContain("claude:not-recorded-here (from CLAUDE_CODE_SESSION_ID)");
  });

  it("guards the project directory the client names, wherever it was started", async () => {
    const root = twoSessions();
    const elsewhere = makeRepo({ "x.txt": "x\n" });
    const c = await connect(elsewhere, { CLAUDE_PROJECT_DIR: root });
    expect((await doc(c, "sessions")).total).toBe(2);
    const d = await connect(elsewhere, { CLAUDE_PROJECT_DIR: root }, ["--root", elsewhere]);
    expect((await doc(d, "sessions")).total).toBe(0);
  });
});

describe("unwind mcp with unwind's hooks installed", () => {
  it("an agent takes back its own session through MCP; the hook leaves unwind's own tool calls to their receipts", async () => {
    const root = twoSessions();
    const c = await connect(root, { CLAUDE_CODE_SESSION_ID: A });
    /** One MCP tool call as Claude Code makes it: PreToolUse hook, the call, PostToolUse hook. */
    const viaClaude = async (tool: string, args: Record<string, unknown>, id: string) => {
      expect(hook(root, "claude", claudePayload(root, A, "PreToolUse", `mcp__unwind__${tool}`, args, id)).code).toBe(0);
      const result = await doc(c, tool, args);
      expect(hook(root, "claude", claudePayload(root, A, "PostToolUse", `mcp__unwind__${tool}`, args, id)).code).toBe(0);
      return result;
    };
    const p = await viaClaude("undo_preview", {}, "toolu_mcp_1");
    const u = await viaClaude("undo", { plan: p.plan }, "toolu_mcp_2");
    expect(u.receipt).toMatch(/^r-/);
    expect(read(root, "src/a.ts")).toBe(A_TS);
    expect(existsSync(join(root, "gen"))).toBe(false);
    // The session's record is its own work only; taken back, a new preview finds nothing left to do.
    const log = await doc(c, "log", { session: A });
    expect(log.calls.map((x: any) => x.tool)).toEqual(["Bash", "Edit"]);
    const again = await doc(c, "undo_preview");
    expect(again.items.filter((i: any) => i.action !== "skip")).toEqual([]);
    expect(again.partial).toBe(false);
    // The control: another server's tool call around the same kind of work is on the record.
    hook(root, "claude", claudePayload(root, A, "PreToolUse", "mcp__other__tool", {}, "toolu_mcp_3"));
    hook(root, "claude", claudePayload(root, A, "PostToolUse", "mcp__other__tool", {}, "toolu_mcp_3"));
    expect((await doc(c, "log", { session: A })).calls.map((x: any) => x.tool)).toEqual(["mcp__other__tool", "Bash", "Edit"]);
  });
});

describe("unwind mcp: an agent takes back only its own work unless the person allowed more (SPEC section 13)", () => {
  const receiptsBy = (root: string) => Object.fromEntries(unwind(root, ["receipts", "--json"]).json.receipts.map((r: any) => [r.id, r.by]));

  it("A's server refuses to undo B (session, call, task, snapshot), B untouched; A's own undo works; allowed, the same undo of B applies", async () => {
    const root = twoSessions();
    const c = await connect(root, { CLAUDE_CODE_SESSION_ID: A });
    const pB = await doc(c, "undo_preview", { session: B }); // looking is not taking back
    const bCall = (await doc(c, "log", { session: B })).calls[0].call as string;
    const snap = await doc(c, "snapshot", {});
    const before = disk(root);

    const e = await failure(c, "undo", { session: B, plan: pB.plan });
    expect(e.code).toBe("E_NOT_ALLOWED");
    // In the tools' terms: the tool and its argument, never a command-line flag; the hint says what the person can do.
    expect(e.message).toBe(`undo: session ${B} is not the calling session (claude:${A}); over MCP an agent takes back only its own session's work`);
    expect(e.message).not.toContain("--");
    expect(e.hint).toContain("unwind init --mcp-allow any");
    expect(e.hint).toContain('mcp.allow to "any"');
    expect((await failure(c, "undo", { session: `claude:${B}`, plan: pB.plan })).code).toBe("E_NOT_ALLOWED");
    // B's call, named alone or with B's session: looked for among A's calls only.
    expect((await failure(c, "undo", { call: bCall, plan: pB.plan })).code).toBe("E_SCOPE_UNKNOWN");
    expect((await failure(c, "undo", { call: bCall, session: B, plan: pB.plan })).code).toBe("E_NOT_ALLOWED");
    expect((await failure(c, "undo", { snapshot: snap.id, plan: pB.plan })).message).toMatch(/^undo: snapshot .* takes back everyone's changes since it/);
    expect((await failure(c, "undo", { task: "t1", plan: pB.plan })).code).toBe("E_NOT_ALLOWED");
    expect(disk(root)).toEqual(before); // not a byte of the work tree, nothing in the store

    // The controls: A's own work, by default or by name, one call of it; its receipt says who started it.
    const aCall = (await doc(c, "log", { session: A })).calls.find((x: any) => x.tool === "Edit").call as string;
    const pCall = await doc(c, "undo_preview", { call: aCall });
    const one = await doc(c, "undo", { call: aCall, plan: pCall.plan });
    expect(read(root, "src/a.ts")).toBe(A_TS);
    const pA = await doc(c, "undo_preview", { session: A.slice(0, 8) });
    const u = await doc(c, "undo", { session: A.slice(0, 8), plan: pA.plan });
    expect(existsSync(join(root, "gen"))).toBe(false);
    expect(read(root, "src/b.ts")).toBe(B_TS2);
    expect(receiptsBy(root)).toEqual({ [one.receipt]: { client: "mcp", session: `claude:${A}` }, [u.receipt]: { client: "mcp", session: `claude:${A}` } });

    // Allowed by the person (read at each call: the running server sees it), the same undo of B applies.
    expect(unwind(root, ["init", "--mcp-allow", "any"]).code).toBe(0);
    const uB = await doc(c, "undo", { session: B, plan: (await doc(c, "undo_preview", { session: B })).plan });
    expect(read(root, "src/b.ts")).toBe(B_TS);
    expect(receiptsBy(root)[uB.receipt]).toEqual({ client: "mcp", session: `claude:${A}` });
    // And back to own: refused again.
    expect(unwind(root, ["init", "--mcp-allow", "own"]).code).toBe(0);
    expect((await failure(c, "undo", { session: B, plan: pB.plan })).code).toBe("E_NOT_ALLOWED");
  });

  it("a caller the client does not name takes back nothing, and the refusal says how to allow it", async () => {
    const root = twoSessions();
    const c = await connect(root);
    const p = await doc(c, "undo_preview", { session: A });
    const before = disk(root);
    const e = await failure(c, "undo", { session: A, plan: p.plan });
    expect(e.code).toBe("E_NOT_ALLOWED");
    expect(e.message).toMatch(/^undo: the calling session is unknown/);
    expect(e.hint).toContain("unwind init --mcp-allow any");
    expect((await failure(c, "redo", { last: true })).code).toBe("E_NOT_ALLOWED");
    expect(disk(root)).toEqual(before);
    // A value the person mistyped is not "any": refused, naming the key.
    const config = join(unwind(root, ["status", "--json"]).json.store, "config.json");
    writeFileSync(config, '{"mcp": {"allow": "all"}}\n');
    const typo = await failure(c, "undo", { session: A, plan: p.plan });
    expect(typo).toMatchObject({ code: "E_USAGE", message: expect.stringContaining('mcp.allow is "all", not "own" or "any"') });
    expect(read(root, "src/a.ts")).toBe(A_TS2);
    // The control: allowed, the same call applies, and its receipt names no session.
    unwind(root, ["init", "--mcp-allow", "any"]);
    const u = await doc(c, "undo", { session: A, plan: p.plan });
    expect(read(root, "src/a.ts")).toBe(A_TS);
    expect(receiptsBy(root)[u.receipt]).toEqual({ client: "mcp" });
  });

  it("the caller is the session the client's own hook event for this call names (its tool-use id, else the one open mark)", async () => {
    const root = twoSessions();
    const c = await connect(root); // the environment names no session: Codex and Gemini CLI name none
    const marks = () => readdirSync(join(unwind(root, ["status", "--json"]).json.store, "mcp-calls")).filter((f) => f.endsWith(".json"));
    const pre = (session: string, tool: string, id: string) => expect(hook(root, "claude", claudePayload(root, session, "PreToolUse", `mcp__unwind__${tool}`, {}, id)).code).toBe(0);
    const post = (session: string, tool: string, id: string) => expect(hook(root, "claude", claudePayload(root, session, "PostToolUse", `mcp__unwind__${tool}`, {}, id)).code).toBe(0);
    const withId = async (name: string, args: Record<string, unknown>, id: string) => (await c.callTool({ name, arguments: args, _meta: { "claudecode/toolUseId": id } })) as unknown as ToolResult;
    const pA = await doc(c, "undo_preview", { session: A });
    const pB = await doc(c, "undo_preview", { session: B });

    // A's call, by its tool-use id, asks for B's work: A is calling, so it is refused and B's file stays.
    pre(A, "undo", "toolu_a1");
    const before = disk(root);
    const refused = await withId("undo", { session: B, plan: pB.plan }, "toolu_a1");
    expect(refused.structuredContent.error).toMatchObject({ code: "E_NOT_ALLOWED", message: expect.stringContaining(`session ${B} is not the calling session (claude:${A})`) });
    expect(disk(root)).toEqual(before);
    post(A, "undo", "toolu_a1");
    expect(marks()).toEqual([]); // the post event takes the mark away

    // The control: A's own work, by that call's id; the receipt names A.
    pre(A, "undo", "toolu_a2");
    pre(B, "undo", "toolu_b1"); // another session's call under way at the same time does not confuse an id
    const u = (await withId("undo", { session: A, plan: pA.plan }, "toolu_a2")).structuredContent;
    expect(u.receipt).toMatch(/^r-/);
    expect(read(root, "src/a.ts")).toBe(A_TS);
    expect(receiptsBy(root)[u.receipt]).toEqual({ client: "mcp", session: `claude:${A}` });
    post(A, "undo", "toolu_a2");

    // No tool-use id: B's is the one open mark of undo here, so B is calling, and may take back B.
    const uB = await doc(c, "undo", { session: B, plan: pB.plan });
    expect(read(root, "src/b.ts")).toBe(B_TS);
    expect(receiptsBy(root)[uB.receipt]).toEqual({ client: "mcp", session: `claude:${B}` });
    // Two sessions with an open mark: unknown, nothing taken back.
    pre(A, "redo", "toolu_a3");
    pre(B, "redo", "toolu_b2");
    const twoBefore = disk(root);
    expect((await failure(c, "redo", { receipt: uB.receipt })).message).toMatch(/^redo: the calling session is unknown/);
    expect(disk(root)).toEqual(twoBefore);
    post(A, "redo", "toolu_a3");
    expect((await doc(c, "redo", { receipt: uB.receipt })).scope).toEqual({ kind: "receipt", id: uB.receipt }); // B alone again
    expect(read(root, "src/b.ts")).toBe(B_TS2);
  });

  it("restore is refused by default, even to the caller (it takes back everyone's later work); allowed, it applies", async () => {
    const root = twoSessions();
    const c = await connect(root, { CLAUDE_CODE_SESSION_ID: A });
    const snap = await doc(c, "snapshot", {});
    write(root, "later.txt", "a person's later file\n");
    const p = await doc(c, "restore_preview", { snapshot: snap.id });
    expect(p.items.map((i: any) => [i.path, i.action])).toEqual([["later.txt", "delete"]]);
    const before = disk(root);
    const e = await failure(c, "restore", { snapshot: snap.id, plan: p.plan });
    expect(e.code).toBe("E_NOT_ALLOWED");
    expect(e.message).toMatch(/^restore: a restore makes the work tree equal to a snapshot/);
    expect(e.hint).toContain("unwind init --mcp-allow any");
    expect(disk(root)).toEqual(before);
    expect(read(root, "later.txt")).toBe("a person's later file\n");

    unwind(root, ["init", "--mcp-allow", "any"]);
    const r = await doc(c, "restore", { snapshot: snap.id, plan: p.plan });
    expect(existsSync(join(root, "later.txt"))).toBe(false);
    expect(receiptsBy(root)[r.receipt]).toEqual({ client: "mcp", session: `claude:${A}` });
  });

  it("redo over MCP: only a receipt this same session started over MCP", async () => {
    const root = twoSessions();
    const cli = unwind(root, ["undo", "--session", B, "--json"]);
    expect(cli.code).toBe(0);
    expect(receiptsBy(root)[cli.json.receipt]).toEqual({ client: "cli" });
    const a = await connect(root, { CLAUDE_CODE_SESSION_ID: A });
    const before = disk(root);
    const e = await failure(a, "redo", { receipt: cli.json.receipt });
    expect(e).toMatchObject({ code: "E_NOT_ALLOWED", message: expect.stringContaining(`receipt ${cli.json.receipt} was started by cli, not by the calling session (claude:${A})`) });
    expect((await failure(a, "redo", { last: true })).code).toBe("E_NOT_ALLOWED");
    expect(disk(root)).toEqual(before);

    // A's own undo over MCP: A redoes it; B's server may not.
    const u = await doc(a, "undo", { plan: (await doc(a, "undo_preview", {})).plan });
    const b = await connect(root, { CLAUDE_CODE_SESSION_ID: B });
    expect((await failure(b, "redo", { receipt: u.receipt })).message).toContain(`was started by mcp claude:${A}, not by the calling session (claude:${B})`);
    const r = await doc(a, "redo", { last: true });
    expect(r.scope).toEqual({ kind: "receipt", id: u.receipt });
    expect(read(root, "src/a.ts")).toBe(A_TS2);
    expect(receiptsBy(root)[r.receipt]).toEqual({ client: "mcp", session: `claude:${A}` });
  });
});

describe("unwind mcp: the process", () => {
  it("writes only JSON-RPC messages to stdout and exits when the client closes stdin", async () => {
    const root = twoSessions();
    const child = spawn(process.execPath, [BIN, "mcp"], { cwd: root, env: serverEnv({ CLAUDE_CODE_SESSION_ID: A }) });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const send = (m: object) => child.stdin.write(JSON.stringify(m) + "\n");
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "sessions", arguments: {} } });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "undo", arguments: { session: A, plan: "0".repeat(64) } } });
    await new Promise<void>((res) => {
      const check = () => (out.split("\n").filter(Boolean).length >= 3 ? res() : setTimeout(check, 20));
      check();
    });
    child.stdin.end();
    const code = await new Promise<number | null>((res) => child.on("exit", res));
    expect(code).toBe(0);
    const lines = out.split("\n").filter(Boolean);
    expect(lines).toHaveLength(3);
    // Requests are served concurrently: answers may come in any order.
    const msgs = lines.map((l) => JSON.parse(l)).sort((a, b) => a.id - b.id);
    expect(msgs.map((m) => [m.jsonrpc, m.id])).toEqual([
      ["2.0", 1],
      ["2.0", 2],
      ["2.0", 3],
    ]);
    expect(msgs[0].result.serverInfo.name).toBe("unwind");
    expect(msgs[1].result.structuredContent.total).toBe(2);
    expect(msgs[2].result).toMatchObject({ isError: true, structuredContent: { error: { code: "E_PLAN_CHANGED" } } });
  });

  it("a call the client sends right before closing stdin is finished and answered", async () => {
    const root = twoSessions();
    const child = spawn(process.execPath, [BIN, "mcp"], { cwd: root, env: serverEnv() });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const send = (m: object) => child.stdin.write(JSON.stringify(m) + "\n");
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "snapshot", arguments: { label: "at the close" } } });
    child.stdin.end(); // at once: the snapshot is still being taken
    expect(await new Promise<number | null>((res) => child.on("exit", res))).toBe(0);
    const msgs = out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(msgs.map((m) => m.id).sort()).toEqual([1, 2]);
    const snap = msgs.find((m) => m.id === 2).result.structuredContent;
    expect(snap.label).toBe("at the close");
    expect(unwind(root, ["snapshots", "--json"]).json.snapshots.map((s: { id: string }) => s.id)).toContain(snap.id);
  });
});

describe("unwind mcp: patches and hunks", () => {
  it("changes with patch numbers the hunks; undo_preview and undo take back one hunk by the preview's digest, the rest stays", async () => {
    const root = makeRepo({ "f.txt": Array.from({ length: 20 }, (_, i) => `l${i + 1}\n`).join("") });
    const after = read(root, "f.txt").replace("l2\n", "TWO\n").replace("l18\n", "EIGHTEEN\n");
    expect(hook(root, "claude", claudePayload(root, A, "PreToolUse", "Edit", { file_path: join(root, "f.txt"), old_string: "l2", new_string: "TWO" }, "toolu_h1")).code).toBe(0);
    write(root, "f.txt", after);
    expect(hook(root, "claude", claudePayload(root, A, "PostToolUse", "Edit", { file_path: join(root, "f.txt"), old_string: "l2", new_string: "TWO" }, "toolu_h1")).code).toBe(0);
    const c = await connect(root, { CLAUDE_CODE_SESSION_ID: A });
    const cs = await doc(c, "changes", { patch: true });
    expect(cs.entries[0].hunks.map((h: any) => h.n)).toEqual([1, 2]);
    expect(cs.patch).toMatch(/^\+EIGHTEEN$/m);
    const p = await doc(c, "undo_preview", { paths: ["f.txt"], hunks: [2] });
    expect(p.items.map((i: any) => i.action)).toEqual(["merge"]);
    // The control: a preview with no hunks would take back the whole file.
    expect((await doc(c, "undo_preview", { paths: ["f.txt"] })).items.map((i: any) => i.action)).toEqual(["restore"]);
    const u = await doc(c, "undo", { paths: ["f.txt"], hunks: [2], plan: p.plan });
    expect(u.receipt).toMatch(/^r-/);
    expect(read(root, "f.txt")).toBe(after.replace("EIGHTEEN\n", "l18\n"));
  });
});
