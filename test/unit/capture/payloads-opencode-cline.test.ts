/**
 * OpenCode's and Cline's payloads read into a CaptureEvent: the recorded
 * sessions of test/fixtures/hooks/<client>/session.json (what unwind's
 * OpenCode plugin and Cline CLI 3.0.65 sent), and variants of them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { CaptureEvent } from "../../../src/capture/event.js";
import { parseHookEvent } from "../../../src/capture/harness/index.js";

type Payload = Record<string, any>;
const CWD = "/home/dev/projects/webapp";

function recorded(client: "opencode" | "cline"): Payload[] {
  return JSON.parse(readFileSync(new URL(`../../fixtures/hooks/${client}/session.json`, import.meta.url), "utf8")) as Payload[];
}

function parse(client: string, p: Payload): CaptureEvent | string {
  const r = parseHookEvent(client, JSON.stringify(p));
  return r.ok ? r.event : r.error;
}

const brief = (e: CaptureEvent | string) => (typeof e === "string" ? e : `${e.phase} ${e.tool} ${e.call} ${JSON.stringify(e.target)}`);

describe("opencode", () => {
  const session = recorded("opencode");

  it("reads every payload of the recorded session: phase, tool, call id, target; session.idle closes and captures nothing", () => {
    const events = session.map((p) => parse("opencode", p));
    expect(events.map(brief)).toEqual([
      'pre write call_fake_00 {"kind":"files","paths":["new.txt"]}',
      'post write call_fake_00 {"kind":"files","paths":["new.txt"]}',
      'pre edit call_fake_02 {"kind":"files","paths":["a.txt"]}',
      'post edit call_fake_02 {"kind":"files","paths":["a.txt"]}',
      'pre bash call_fake_03 {"kind":"tree"}',
      'post bash call_fake_03 {"kind":"tree"}',
      'pre bash call_fake_04 {"kind":"tree"}',
      'post bash call_fake_04 {"kind":"tree"}',
      'pre edit call_fake_05 {"kind":"files","paths":["a.txt"]}',
      expect.stringMatching(/^post session\.idle h-[0-9a-f]{16} \{"kind":"ignore"\}$/),
    ]);
    for (const e of events as CaptureEvent[]) expect([e.harness, e.session, e.cwd]).toEqual(["opencode", `opencode:${session[0]!.input.sessionID}`, CWD]);
  });

  it("the read-only tools and task are ignored; a tool it does not know gets a tree snapshot", () => {
    const pre = session[4]!;
    for (const tool of ["read", "glob", "grep", "list", "webfetch", "todowrite", "skill", "task"])
      expect(brief(parse("opencode", { ...pre, input: { ...pre.input, tool } }))).toMatch(/ \{"kind":"ignore"\}$/);
    expect(brief(parse("opencode", { ...pre, input: { ...pre.input, tool: "some_mcp_tool" } }))).toMatch(/ \{"kind":"tree"\}$/);
  });

  it("apply_patch is read for its files; a patch it cannot read gets a tree snapshot", () => {
    const pre = { ...session[0]!, input: { ...session[0]!.input, tool: "apply_patch" } };
    const patch = "*** Begin Patch\n*** Add File: x.txt\n+x\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n";
    expect(brief(parse("opencode", { ...pre, output: { args: { patchText: patch } } }))).toBe('pre apply_patch call_fake_00 {"kind":"files","paths":["x.txt","a.txt"]}');
    expect(brief(parse("opencode", { ...pre, output: { args: { patchText: "nonsense" } } }))).toBe('pre apply_patch call_fake_00 {"kind":"tree"}');
  });

  it("a payload missing what names it is one line saying what", () => {
    const pre = session[0]!;
    expect(parse("opencode", { ...pre, event: undefined })).toBe("payload has no event (the plugin's hook name)");
    expect(parse("opencode", { ...pre, event: "tool.definition" })).toBe("unsupported event tool.definition");
    expect(parse("opencode", { ...pre, input: { ...pre.input, sessionID: undefined } })).toBe("payload has no session_id (a non-empty string)");
    expect(parse("opencode", { ...pre, directory: undefined })).toBe("payload has no cwd (a non-empty string)");
    expect(parse("opencode", { ...pre, output: { args: {} } })).toBe("write payload has no filePath");
  });
});

describe("cline", () => {
  const session = recorded("cline");

  it("reads every payload of the recorded session; read_files and the task's end capture nothing", () => {
    expect(session.map((p) => brief(parse("cline", p)))).toEqual([
      'pre editor call_fake_00 {"kind":"files","paths":["new.txt"]}',
      'post editor call_fake_00 {"kind":"files","paths":["new.txt"]}',
      'pre read_files call_fake_01 {"kind":"ignore"}',
      'post read_files call_fake_01 {"kind":"ignore"}',
      'pre editor call_fake_02 {"kind":"files","paths":["a.txt"]}',
      'post editor call_fake_02 {"kind":"files","paths":["a.txt"]}',
      'pre run_commands call_fake_03 {"kind":"tree"}',
      'post run_commands call_fake_03 {"kind":"tree"}',
      'pre run_commands call_fake_04 {"kind":"tree"}',
      'post run_commands call_fake_04 {"kind":"tree"}',
      'pre editor call_fake_05 {"kind":"files","paths":["a.txt"]}',
      'post editor call_fake_05 {"kind":"files","paths":["a.txt"]}',
      expect.stringMatching(/^post TaskComplete h-[0-9a-f]{16} \{"kind":"ignore"\}$/),
    ]);
    const e = parse("cline", session[0]!) as CaptureEvent;
    expect([e.session, e.cwd, e.agent]).toEqual([`cline:${session[0]!.taskId}`, CWD, undefined]);
  });

  it("a failing command's post (success: true at the top) is an ordinary post, captured like any other", () => {
    const post = session.find((p) => p.tool_result?.id === "call_fake_04")!;
    expect(post.postToolUse.success).toBe(true);
    expect(brief(parse("cline", post))).toBe('post run_commands call_fake_04 {"kind":"tree"}');
  });

  it("a payload without a tool is the task's end (TaskCancel unless it says taskComplete); a spawned agent's call names the agent", () => {
    const { taskComplete: _, ...cancel } = session.at(-1)!;
    expect(brief(parse("cline", cancel))).toMatch(/^post TaskCancel h-/);
    const sub = parse("cline", { ...session[0]!, agent_id: "agent_sub", parent_agent_id: "agent_root" }) as CaptureEvent;
    expect(sub.agent).toBe("agent_sub");
  });

  it("the project is workspaceRoots[0] without workspaceInfo; without either, or without taskId, one line says what is missing", () => {
    const { workspaceInfo: _, ...noInfo } = session[0]!;
    expect((parse("cline", noInfo) as CaptureEvent).cwd).toBe(CWD);
    expect(parse("cline", { ...noInfo, workspaceRoots: [] })).toBe("payload has no cwd (a non-empty string)");
    expect(parse("cline", { ...session[0]!, taskId: undefined })).toBe("payload has no session_id (a non-empty string)");
    expect(parse("cline", { ...session[0]!, tool_call: { ...session[0]!.tool_call, input: {} } })).toBe("editor payload has no path");
  });
});
