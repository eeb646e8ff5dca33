/**
 * Ids as a person meets them, with real-shaped Claude ids (a session is
 * `claude:` and a UUID, 44 characters; a call `toolu_01` and 22 more):
 * `log` and `sessions` show each by its shortest unique tail and fit 100
 * columns, every command takes that tail back, and a file's state is named
 * by one id (its git blob id) in the CLI, the UI's API and MCP. Sessions are
 * recorded through the real hook with Claude's payloads.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { open } from "../../src/index.js";
import { ROUTES } from "../../src/ui/api.js";
import { BIN, git, makeRepo, read, unwind, write } from "../helpers.js";
import { ev } from "../journal-helpers.js";
import { claudeCall, claudeUuid, rng } from "../real-ids.js";

const r = rng(31);
const S1 = claudeUuid(r);
const S2 = claudeUuid(r);

/** One Claude tool call with a real-shaped id, through the real hook. */
function call(root: string, session: string, tool: string, input: Record<string, unknown>, effect: () => void): string {
  const id = claudeCall(r);
  ev(root, session, "PreToolUse", tool, input, id);
  effect();
  ev(root, session, "PostToolUse", tool, input, id);
  return id;
}

/** Two sessions: S1 edits src/app.ts and writes src/new.ts, then S2 writes docs/notes.md. */
function recorded() {
  const root = makeRepo({ "src/app.ts": "export const a = 1;\n", "README.md": "readme\n" });
  const edit = (p: string, c: string) => ({ file_path: join(root, p), content: c });
  const c1 = call(root, S1, "Write", edit("src/app.ts", "export const a = 2;\n"), () => write(root, "src/app.ts", "export const a = 2;\n"));
  const c2 = call(root, S1, "Write", edit("src/new.ts", "export const n = 1;\n"), () => write(root, "src/new.ts", "export const n = 1;\n"));
  const c3 = call(root, S2, "Write", edit("docs/notes.md", "notes\n"), () => write(root, "docs/notes.md", "notes\n"));
  return { root, c1, c2, c3 };
}

const cols = (s: string) => Math.max(...s.split("\n").map((l) => [...l].length));

describe("short ids", () => {
  it("log and sessions fit 100 columns with real Claude ids, and every command takes what they show back", () => {
    const { root, c1, c2, c3 } = recorded();
    const log = unwind(root, ["log"]);
    const sessions = unwind(root, ["sessions"]);
    expect([log.code, sessions.code]).toEqual([0, 0]);
    expect(cols(log.stdout)).toBeLessThanOrEqual(100);
    expect(cols(sessions.stdout)).toBeLessThanOrEqual(100);
    const calls = unwind(root, ["log", "--json"]).json.calls as { call: string; session: string; short: string; sessionShort: string }[];
    const listed = unwind(root, ["sessions", "--json"]).json.sessions as { session: string; short: string }[];
    expect(calls.map((c) => c.call).sort()).toEqual([c1, c2, c3].sort());
    for (const c of calls) {
      expect(c.call.endsWith(c.short) && c.short.length >= 6 && c.short.length < c.call.length).toBe(true);
      expect(log.stdout).toMatch(new RegExp(`  ${c.sessionShort} +Write +${c.short}  `));
      // The control: shown whole, the same line would not fit.
      const line = log.stdout.split("\n").find((l) => l.includes(c.short))!;
      expect([...line].length + (c.session.length - c.sessionShort.length) + (c.call.length - c.short.length)).toBeGreaterThan(100);
      expect(log.stdout).not.toContain(c.call);
    }
    expect(listed.map((s) => s.session).sort()).toEqual([`claude:${S1}`, `claude:${S2}`].sort());
    for (const s of listed) {
      expect(s.session.endsWith(s.short) && s.short.length >= 6).toBe(true);
      expect(sessions.stdout).toMatch(new RegExp(`^${s.short} +claude `, "m"));
      expect(calls.filter((c) => c.session === s.session).every((c) => c.sessionShort === s.short)).toBe(true);
    }
    const short = (id: string) => calls.find((c) => c.call === id)!.short;
    const s1 = listed.find((s) => s.session === `claude:${S1}`)!.short;

    // Taken back by --session, --call (alone and narrowed), --from-call, and log --session.
    const paths = (args: string[]) => unwind(root, [...args, "--json"]).json.entries.map((e: { path: string }) => e.path);
    expect(paths(["changes", "--session", s1])).toEqual(["src/app.ts", "src/new.ts"]);
    expect(paths(["changes", "--call", short(c1)])).toEqual(["src/app.ts"]);
    expect(paths(["changes", "--call", short(c2), "--session", s1])).toEqual(["src/new.ts"]);
    const from = unwind(root, ["undo", "--from-call", short(c1), "--dry-run", "--json"]);
    expect([from.code, from.json.scope.calls, from.json.items.map((i: { path: string }) => i.path)]).toEqual([0, 2, ["src/app.ts", "src/new.ts"]]);
    expect(
      unwind(root, ["log", "--session", s1, "--json"])
        .json.calls.map((c: { call: string }) => c.call)
        .sort(),
    ).toEqual([c1, c2].sort());
    // Output that names a session beside other things names it the same way: changes' writers, a receipt's scope.
    const human = unwind(root, ["changes", "--session", s1]).stdout;
    expect(human).toMatch(new RegExp(`^modified +src/app\\.ts +[0-9a-f]{8} -> [0-9a-f]{8} +${s1}$`, "m"));
    expect(human).not.toContain(S1);
    expect(unwind(root, ["undo", "--call", short(c2)]).code).toBe(0);
    expect(unwind(root, ["receipts"]).stdout).toMatch(new RegExp(` call ${short(c2)} +cli `));
    // The control: five characters of a tail name nothing, and say how many are needed.
    const five = unwind(root, ["changes", "--call", short(c1).slice(-5)]);
    expect([five.code, five.stderr]).toEqual([3, expect.stringContaining(`no call '${short(c1).slice(-5)}'`)]);

    // The UI's timeline carries the same short forms.
    return (async () => {
      const t = (await ROUTES["/api/timeline"]!.run(await open({ root }), {})) as { calls: typeof calls; sessions: typeof listed };
      expect(t.calls.map((c) => [c.call, c.short, c.sessionShort]).sort()).toEqual(calls.map((c) => [c.call, c.short, c.sessionShort]).sort());
      expect(t.sessions.map((s) => [s.session, s.short]).sort()).toEqual(listed.map((s) => [s.session, s.short]).sort());
    })();
  });
});

const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

async function mcp(cwd: string): Promise<Client> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(CLAUDE_CODE_SESSION_ID|CLAUDE_PROJECT_DIR|GEMINI_PROJECT_DIR|UNWIND_.*)$/.test(k)) env[k] = v;
  const client = new Client({ name: "unwind-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp"], cwd, env, stderr: "pipe" }));
  clients.push(client);
  return client;
}

type Tool = { isError?: boolean; content: { text: string }[]; structuredContent?: any };
const tool = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as unknown as Tool;

describe("one id for a file's state", () => {
  it("changes, the undo preview, the UI's API and MCP name each state by its git blob id, which git itself takes", async () => {
    const { root, c1 } = recorded();
    write(root, "src/app.ts", "export const a = 3;\n"); // a person's edit since: what the path holds now is neither state
    const blob = (p: string) => git(root, "hash-object", p).trim();
    const sha = (p: string) => createHash("sha256").update(read(root, p)).digest("hex");

    const cs = unwind(root, ["changes", "--session", S1, "--json"]).json;
    const app = cs.entries.find((e: { path: string }) => e.path === "src/app.ts");
    const post = app.post.oid as string;
    // git takes the short form the CLI shows, for any state git holds (here the committed one), and computes it for a file now.
    expect(spawnSync("git", ["cat-file", "-p", app.pre.oid.slice(0, 8)], { cwd: root, encoding: "utf8" }).stdout).toBe("export const a = 1;\n");
    expect(git(root, "rev-parse", "HEAD:src/app.ts").trim()).toBe(app.pre.oid);
    expect(post).toBe(spawnSync("git", ["hash-object", "--stdin"], { cwd: root, input: "export const a = 2;\n", encoding: "utf8" }).stdout.trim());
    const human = unwind(root, ["changes", "--session", S1]).stdout;
    expect(human).toContain(`${app.pre.oid.slice(0, 8)} -> ${post.slice(0, 8)}`);
    expect(human).not.toContain(app.post.sha256.slice(0, 8)); // control: the other family is not shown

    const dry = unwind(root, ["undo", "--session", S1, "--dry-run", "--json"]);
    const now = dry.json.items.find((i: { path: string }) => i.path === "src/app.ts").now;
    expect([now.oid, now.sha256]).toEqual([blob("src/app.ts"), sha("src/app.ts")]);
    const dryHuman = unwind(root, ["undo", "--session", S1, "--dry-run"]).stdout;
    expect(dryHuman).toContain(`${blob("src/app.ts").slice(0, 8)}*`);
    expect(dryHuman).not.toContain(sha("src/app.ts").slice(0, 8));

    const u = await open({ root });
    const ui = (await ROUTES["/api/changes"]!.run(u, { session: S1 })) as typeof cs;
    const uiPlan = (await ROUTES["/api/plan"]!.run(u, { session: S1 })) as typeof dry.json;
    const uiCurrent = (await ROUTES["/api/current"]!.run(u, { path: "src/app.ts" })) as { oid: string };
    expect(ui.entries.find((e: { path: string }) => e.path === "src/app.ts").post.oid).toBe(post);
    expect(uiPlan.items.find((i: { path: string }) => i.path === "src/app.ts").now.oid).toBe(blob("src/app.ts"));
    expect(uiCurrent.oid).toBe(blob("src/app.ts"));

    const c = await mcp(root);
    const m = await tool(c, "changes", { session: S1 });
    expect(m.structuredContent.entries.find((e: { path: string }) => e.path === "src/app.ts").post.oid).toBe(post);
    const mp = await tool(c, "undo_preview", { session: S1 });
    expect(mp.structuredContent.items.find((i: { path: string }) => i.path === "src/app.ts").now.oid).toBe(blob("src/app.ts"));

    // MCP's preview takes fromCall (by its short form too) beside paths and hunks; an unknown field is refused.
    const short = unwind(root, ["log", "--json"]).json.calls.find((x: { call: string }) => x.call === c1).short;
    const fromCall = await tool(c, "undo_preview", { fromCall: short, paths: ["src/new.ts"] });
    expect([fromCall.isError, fromCall.structuredContent?.scope, fromCall.structuredContent?.items.map((i: { path: string }) => i.path)]).toEqual([
      undefined,
      { kind: "from-call", id: c1, calls: 2 },
      ["src/new.ts"],
    ]);
    const typo = await tool(c, "undo_preview", { fromcall: short });
    expect(typo.isError).toBe(true);
    expect(typo.content[0]!.text).toMatch(/^E_USAGE: .*fromcall/);
    expect(typo.structuredContent.error.code).toBe("E_USAGE");
  });
});
