/**
 * `unwind init --opencode|--cline` and `unwind hook opencode|cline`, through
 * the payloads the real clients sent (OpenCode 1.18.33 through unwind's
 * plugin, Cline CLI 3.0.65; test/fixtures/hooks/<client>/session.json, one
 * session each, in the order they came), on real repositories.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { BIN, dirFingerprint, makeRepo, treeState, unwind, write } from "../helpers.js";
import { hook } from "../journal-helpers.js";

type Payload = Record<string, any>;

/** The client's recorded session, re-pointed at `root`. */
function session(client: "opencode" | "cline", root: string): Payload[] {
  const text = readFileSync(new URL(`../fixtures/hooks/${client}/session.json`, import.meta.url), "utf8");
  return JSON.parse(text.split("/home/dev/projects/webapp").join(root)) as Payload[];
}

const FILES = { "a.txt": "alpha\n", "doomed.txt": "doomed\n", "README.md": "readme\n" };

/** What each recorded call did to the work tree, done between its pre and its post. */
const EFFECTS: Record<string, (root: string) => void> = {
  call_fake_00: (root) => write(root, "new.txt", "new file\n"),
  call_fake_02: (root) => write(root, "a.txt", "alpha, edited\n"),
  call_fake_03: (root) => {
    unlinkSync(join(root, "doomed.txt"));
    write(root, "made.txt", "made\n");
  },
  call_fake_04: (root) => write(root, "failed.txt", "x\n"),
  // call_fake_05, the edit whose text was not found, changed nothing.
};

const callOf = (p: Payload): string | undefined => p.input?.callID ?? p.tool_call?.id;

/** Feeds the payloads to `unwind hook <client>` in order, doing each call's work after its pre. */
function replay(client: "opencode" | "cline", root: string, payloads: Payload[]): void {
  for (const p of payloads) {
    const r = hook(root, client, JSON.stringify(p));
    expect([r.code, r.stdout, r.stderr]).toEqual([0, "", ""]);
    const pre = p.event === "tool.execute.before" || p.hookName === "tool_call";
    const effect = EFFECTS[callOf(p) ?? ""];
    if (pre && effect) effect(root);
  }
}

/** `<call> <how>` for each call closed by something other than its own post, from the journal as the hooks left it. */
function closedBy(root: string): string[] {
  const dir = join(root, ".git", "unwind", "journal");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n"))
    .flatMap((l) => {
      const m = /"call":"([^"]+)".*"closedBy":"([^"]+)"/.exec(l);
      return m === null ? [] : [`${m[1]} ${m[2]}`];
    });
}

const openFiles = (root: string) => readdirSync(join(root, ".git", "unwind", "journal")).filter((f) => f.endsWith(".open"));

for (const client of ["opencode", "cline"] as const) {
  describe(`${client}: a recorded session through unwind hook ${client}`, () => {
    it("credits each call with exactly its paths, closes every call by the session's last event, and the session is taken back exactly", () => {
      const root = makeRepo(FILES);
      const before = treeState(root);
      const payloads = session(client, root);
      // Control first: until the session's last event, the call cut short (OpenCode) or the last call's window (Cline) is open.
      replay(client, root, payloads.slice(0, -1));
      expect(openFiles(root)).toHaveLength(client === "opencode" ? 1 : 0);
      replay(client, root, payloads.slice(-1));
      expect(openFiles(root)).toEqual([]);
      // OpenCode's edit that threw got no after: the plugin's session.idle closed it. Cline sent a post for it.
      expect(closedBy(root)).toEqual(client === "opencode" ? ["call_fake_05 next-event"] : []);
      const sessions = unwind(root, ["sessions", "--json"]).json.sessions;
      expect(sessions.map((s: any) => s.harness)).toEqual([client]);
      const id = sessions[0].session as string;
      expect(id).toMatch(client === "opencode" ? /^opencode:ses_/ : /^cline:conv_/);
      // The read (call_fake_01) is no call of unwind's: OpenCode's plugin never sends it, Cline's read_files is
      // read-only; its editor calls, in the same payloads, are (the control).
      const calls = unwind(root, ["log", "--json"]).json.calls as Array<{ call: string; tool: string; paths: string[] }>;
      const [w, e, sh] = client === "opencode" ? ["write", "edit", "bash"] : ["editor", "editor", "run_commands"];
      expect(Object.fromEntries(calls.map((c) => [c.call, `${c.tool} ${[...c.paths].sort().join(" ")}`]))).toEqual({
        call_fake_00: `${w} new.txt`,
        call_fake_02: `${e} a.txt`,
        call_fake_03: `${sh} doomed.txt made.txt`,
        call_fake_04: `${sh} failed.txt`,
        call_fake_05: `${e} a.txt`,
      });
      // The failed edit looked at a.txt and changed nothing.
      expect(unwind(root, ["changes", "--session", id, "--call", "call_fake_05", "--json"]).json.entries).toEqual([]);
      expect(unwind(root, ["status", "--json"]).json.errors).toEqual([]);
      const r = unwind(root, ["undo", "--session", id, "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(treeState(root)).toEqual(before);
    });
  });
}

describe("cline: what the payload says", () => {
  it("a payload without taskId is a capture error naming it, and the agent is not blocked", () => {
    const root = makeRepo(FILES);
    unwind(root, ["init", "--cline"]);
    const { taskId: _, ...noTask } = session("cline", root)[0]!;
    const r = hook(root, "cline", JSON.stringify(noTask));
    expect([r.code, r.stdout]).toEqual([0, ""]);
    expect(unwind(root, ["status", "--json"]).json.errors.map((e: any) => e.message)).toEqual(["payload has no session_id (a non-empty string)"]);
  });
});

describe("unwind init --opencode", () => {
  it("writes unwind's plugin beside the user's own, a second run changes nothing, and status says what to do", () => {
    const root = makeRepo({ ...FILES, ".opencode/plugin/mine.js": "export const Mine = async () => ({});\n", "opencode.json": '{"model": "x/y"}\n' });
    const user = { mine: readFileSync(join(root, ".opencode/plugin/mine.js"), "utf8"), config: readFileSync(join(root, "opencode.json"), "utf8") };
    const r = unwind(root, ["init", "--opencode"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("updated    .opencode/plugin/unwind.js  (+tool.execute.before,\n           +tool.execute.after, +session.idle)");
    expect(r.stdout).toContain("next: restart the OpenCode sessions already open in this project");
    const plugin = join(root, ".opencode/plugin/unwind.js");
    expect(readFileSync(plugin, "utf8")).toContain(`hook opencode`);
    expect(readFileSync(join(root, ".opencode/plugin/mine.js"), "utf8")).toBe(user.mine);
    expect(readFileSync(join(root, "opencode.json"), "utf8")).toBe(user.config);
    const mtime = statSync(plugin).mtimeMs;
    const again = unwind(root, ["init", "--opencode"]);
    expect(again.stdout).toContain("unchanged  .opencode/plugin/unwind.js");
    expect(statSync(plugin).mtimeMs).toBe(mtime);
    const status = unwind(root, ["status", "--json"]).json.hooks;
    expect(status).toMatchObject([
      { harness: "opencode", file: ".opencode/plugin/unwind.js", events: ["tool.execute.before", "tool.execute.after", "session.idle"], missing: [], lastFired: null, commandFound: true },
    ]);
    expect(status[0].next[0]).toMatch(/^restart the OpenCode sessions/);
    // A moved binary: unwind's plugin is rewritten in place.
    writeFileSync(plugin, readFileSync(plugin, "utf8").replace(/^const COMMAND = .*$/m, 'const COMMAND = "/old/place/unwind hook opencode";'));
    expect(unwind(root, ["init", "--opencode"]).stdout).toContain("~tool.execute.before");
    expect(readFileSync(plugin, "utf8")).not.toContain("/old/place");
  });

  it("a plugin of the user's own named unwind.js is refused, one line naming it, and nothing is written (a store neither)", () => {
    const root = makeRepo({ ...FILES, ".opencode/plugin/unwind.js": "export const Theirs = async () => ({});\n" });
    const before = dirFingerprint(root);
    const r = unwind(root, ["init", "--opencode", "--cline"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(join(root, ".opencode/plugin/unwind.js"));
    expect(dirFingerprint(root)).toEqual(before);
  });

  it("the plugin, run as OpenCode runs it, hands each writing call to unwind and closes a call cut short when the session goes idle", async () => {
    const root = makeRepo(FILES);
    expect(unwind(root, ["init", "--opencode"]).code).toBe(0);
    const make = (await import(pathToFileURL(join(root, ".opencode/plugin/unwind.js")).href)).UnwindPlugin;
    const hooks = await make({ directory: root, worktree: root });
    const s = "ses_plugin_test";
    await hooks["tool.execute.before"]({ tool: "read", sessionID: s, callID: "c0" }, { args: { filePath: "a.txt" } });
    expect(existsSync(join(root, ".git", "unwind", "journal")), "read starts no process").toBe(false);
    await hooks["tool.execute.before"]({ tool: "write", sessionID: s, callID: "c1" }, { args: { filePath: "new.txt", content: "n\n" } });
    write(root, "new.txt", "n\n");
    await hooks["tool.execute.after"]({ tool: "write", sessionID: s, callID: "c1", args: { filePath: "new.txt", content: "n\n" } }, { title: "", metadata: {}, output: "" });
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: s, callID: "c2" }, { args: { command: "echo x > x.txt" } });
    write(root, "x.txt", "x\n");
    expect(openFiles(root)).toHaveLength(1);
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: s } } });
    expect(openFiles(root)).toEqual([]);
    const calls = unwind(root, ["log", "--json"]).json.calls;
    expect(calls.map((c: any) => [c.call, c.paths])).toEqual([
      ["c2", ["x.txt"]],
      ["c1", ["new.txt"]],
    ]);
  });

  it("the plugin never throws into OpenCode when unwind cannot be run", async () => {
    const root = makeRepo(FILES);
    expect(unwind(root, ["init", "--opencode"]).code).toBe(0);
    const plugin = join(root, ".opencode/plugin/unwind.js");
    const gone = join(root, ".opencode/plugin/gone.js");
    writeFileSync(gone, readFileSync(plugin, "utf8").replace(/^const COMMAND = .*$/m, 'const COMMAND = "/nowhere/unwind hook opencode";'));
    const hooks = await (await import(pathToFileURL(gone).href)).UnwindPlugin({ directory: root });
    await expect(hooks["tool.execute.before"]({ tool: "bash", sessionID: "s", callID: "c" }, { args: { command: "true" } })).resolves.toBeUndefined();
    await expect(hooks.event({ event: { type: "session.idle", properties: { sessionID: "s" } } })).resolves.toBeUndefined();
  });
});

describe("unwind init --cline", () => {
  const EVENTS = ["PreToolUse", "PostToolUse", "TaskComplete", "TaskCancel"];

  it("writes an executable hook per event beside the user's own hooks; a second run changes nothing", () => {
    const root = makeRepo({ ...FILES, ".clinerules/hooks/TaskStart": "#!/bin/sh\necho mine\n", ".clinerules/hooks/PreToolUse.sh": "echo mine\n" });
    const r = unwind(root, ["init", "--cline"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("updated    .clinerules/hooks  (+PreToolUse, +PostToolUse, +TaskComplete,\n           +TaskCancel)");
    for (const e of EVENTS) {
      const f = join(root, ".clinerules/hooks", e);
      expect(statSync(f).mode & 0o111).toBe(0o111);
      expect(readFileSync(f, "utf8")).toMatch(/ hook cline\nexit 0\n$/);
    }
    expect(readFileSync(join(root, ".clinerules/hooks/TaskStart"), "utf8")).toBe("#!/bin/sh\necho mine\n");
    expect(readFileSync(join(root, ".clinerules/hooks/PreToolUse.sh"), "utf8")).toBe("echo mine\n");
    const fp = dirFingerprint(join(root, ".clinerules"));
    expect(unwind(root, ["init", "--cline"]).stdout).toContain("unchanged  .clinerules/hooks");
    expect(dirFingerprint(join(root, ".clinerules"))).toEqual(fp);
    expect(unwind(root, ["status", "--json"]).json.hooks).toMatchObject([{ harness: "cline", events: EVENTS, missing: [], next: [], commandFound: true }]);
    // A hook file that lost its exec bit is one Cline does not run: missing, and put back by the next init.
    chmodSync(join(root, ".clinerules/hooks/PostToolUse"), 0o644);
    expect(unwind(root, ["status", "--json"]).json.hooks[0].missing).toEqual(["PostToolUse"]);
    expect(unwind(root, ["init", "--cline"]).stdout).toContain("~PostToolUse");
    expect(statSync(join(root, ".clinerules/hooks/PostToolUse")).mode & 0o111).toBe(0o111);
  });

  it("a hook of the user's own under an event's name is refused with where to move it, and nothing is written", () => {
    const root = makeRepo({ ...FILES, ".clinerules/hooks/PostToolUse": "#!/bin/sh\necho mine\n" });
    const before = dirFingerprint(root);
    const r = unwind(root, ["init", "--cline"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(".clinerules/hooks/PostToolUse: a hook of your own (not unwind's); move it to .clinerules/hooks/PostToolUse.sh");
    expect(dirFingerprint(root)).toEqual(before);
  });

  it("the installed hook runs unwind with the payload and exits 0 even when unwind is gone", () => {
    const root = makeRepo(FILES);
    expect(unwind(root, ["init", "--cline"]).code).toBe(0);
    const pre = join(root, ".clinerules/hooks/PreToolUse");
    const payload = session("cline", root)[0]!;
    const run = (file: string) => spawnSync(file, [], { cwd: root, input: JSON.stringify(payload), encoding: "utf8", env: { ...process.env, PATH: `${join(BIN, "..")}:${process.env.PATH}` } });
    const ok = run(pre);
    expect([ok.status, ok.stdout]).toEqual([0, ""]);
    expect(unwind(root, ["sessions", "--json"]).json.sessions.map((s: any) => s.harness)).toEqual(["cline"]);
    const broken = join(root, "broken-hook");
    writeFileSync(broken, readFileSync(pre, "utf8").replace(/^env .*$/m, "/nowhere/unwind hook cline"), { mode: 0o755 });
    expect(run(broken).status).toBe(0);
  });
});

describe("unwind init --mcp with a client unwind does not register its server with", () => {
  it("is refused, one line, and nothing is written", () => {
    const root = makeRepo(FILES);
    const before = dirFingerprint(root);
    const r = unwind(root, ["init", "--cline", "--mcp"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/--mcp: unwind does not register its MCP server with cline yet/);
    expect(dirFingerprint(root)).toEqual(before);
  });
});
