/**
 * `unwind mcp`: an MCP server over stdio (SPEC section 13), so an agent can
 * inspect and take back its own work. A thin client of the library, like
 * the command line: each tool checks its arguments, calls one operation of
 * `open()` and returns what the operation returned, which is exactly the
 * command's `--json` document, as structured content, with a one-line
 * summary (and the document again as text, for clients that show the model
 * only text). An `UnwindError` becomes a tool error carrying its code, message
 * and hint; arguments that do not fit a tool's schema are refused by the SDK
 * as a tool error naming the argument, before the tool runs.
 *
 * Over MCP an agent takes back only its own session's work unless the
 * person allowed more (src/mcp/allow.ts); every receipt records that an
 * MCP call started it, and the calling session where known.
 *
 * Undo and restore apply only a previewed plan: `plan`, the digest from
 * `undo_preview` / `restore_preview`, is required and passed as `expect`,
 * so a plan that changed since the preview is refused (E_PLAN_CHANGED) and
 * nothing is written. An agent cannot undo blind.
 *
 * stdout carries only protocol messages; anything else goes to stderr.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { UNWIND_MCP_TOOLS } from "../capture/harness/rules.js";
import { mcpCallMarks } from "../store/mcp-calls.js";
import { UnwindError, usage } from "../domain/errors.js";
import { idOrLast } from "../domain/ids.js";
import { VERSION } from "../domain/version.js";
import { inTermsOf } from "../domain/terms.js";
import { open, type Unwind } from "../ops/open.js";
import type { ScopeFields } from "../scope/resolve.js";
import { mayRestore, ownReceipt, ownScope, startedBy } from "./allow.js";
import { callerOf, callerOfCall, serverRoot, type Caller } from "./caller.js";
import * as line from "./summary.js";

/** Every tool's name, in the order tools/list gives them. */
export const TOOLS = UNWIND_MCP_TOOLS;

const SESSIONS_HINT = "the sessions tool lists them, most recently active first";

const OWN_ONLY =
  "Unless the person allowed more (mcp.allow in unwind's config): only the calling session's own work (the session, one of its calls, or from one of its calls on); another session, a task or a snapshot is refused (E_NOT_ALLOWED), and so is any undo when the calling session is unknown.";

const name = (what: string) => z.string().min(1, `${what} must not be empty`);
const limit = z.number().int().min(1).optional().describe("At most this many, newest first.");
const since = z.string().min(1).optional().describe("Only those at or after this ISO time (2026-11-30T10:00:00Z), or this long ago (2h, 3d).");

/** The scope fields of changes, undo_preview and undo: one scope, as on the command line (`--session`, `--call`, ...). */
const scopeShape = (defaultSession: boolean) => ({
  session: name("session")
    .optional()
    .describe(
      `The session whose work this is about: its full name (claude:3f2a9c1e-…), bare id, its short form (the sessions tool's short), or a unique prefix or tail of 6+ characters; ${SESSIONS_HINT}.` +
        (defaultSession
          ? " Default, when no call, task or snapshot is given either: the calling agent's own session (this client names it)."
          : " Required unless call, task or snapshot is given: this client does not say which session is calling."),
    ),
  call: name("call")
    .optional()
    .describe("Only one tool call's changes: its id (e.g. toolu_01AbC…, as the log tool lists it), or its short form (the log tool's short). With session, to pick among sessions that share the id."),
  fromCall: name("fromCall")
    .optional()
    .describe(
      "This call and every later call of its session (where the agent went wrong, and everything after): the call's id or short form, as for call. With session, to pick among sessions that share the id.",
    ),
  task: name("task").optional().describe("A task's changes: the sessions labelled with it (UNWIND_TASK), or its branch when bound with `unwind task start`."),
  snapshot: name("snapshot").optional().describe("Changes since this snapshot: its id, or a unique prefix or suffix of 6+ characters (the snapshots tool lists them)."),
  to: name("to").optional().describe("With snapshot: up to this later snapshot instead of the work tree now."),
  since: since.describe("Only calls that started at or after this ISO time, or this long ago (2h, 3d). Not with snapshot."),
  paths: z
    .array(name("a path glob"))
    .optional()
    .describe('Only paths matching these globs, relative to the work tree\'s root (e.g. ["src/**", "README.md"]). A glob that matches nothing is an error.'),
});

const takeBackShape = {
  force: z
    .boolean()
    .optional()
    .describe("Also take back paths changed since the scope wrote them (the receipt keeps what is overwritten, so redo restores it). Default false: such paths are conflicts, left alone."),
  merge: z.boolean().optional().describe("For text files changed since: three-way merge, taking back only this scope's hunks and keeping the later edits. Default false."),
  hunks: z
    .array(z.number().int().min(1))
    .min(1)
    .optional()
    .describe(
      "With exactly one path in paths: take back only these hunks of the scope's change to it (numbered as the changes tool returns them with patch: true), keeping its other hunks and every later edit outside them.",
    ),
};

const planArg = (preview: string) =>
  z
    .string()
    .regex(/^[0-9a-f]{12,64}$/, `plan must be the digest ${preview} returned (12 to 64 hex digits)`)
    .describe(
      `Required: the "plan" digest that ${preview} returned for the same arguments. Applied only if the plan is still exactly that one; if anything changed since the preview, nothing is done and the error says so: preview again.`,
    );

type Result = CallToolResult & { structuredContent?: Record<string, unknown> };

/** A success: the document once, as structured content, and the summary line as the text a person reads. */
function ok(doc: object, summary: string): Result {
  return { content: [{ type: "text", text: summary }], structuredContent: doc as Record<string, unknown> };
}

/** A tool error: `CODE: message (hint)`, and the same as `{ error: { code, message, hint } }` (what `--json` prints on failure), in the tools' own terms. */
export function toolError(e: unknown): Result {
  const err =
    e instanceof UnwindError
      ? { code: e.code as string, message: inTermsOf("mcp", e.message), hint: e.hint ? inTermsOf("mcp", e.hint) : null }
      : { code: "E_INTERNAL", message: e instanceof Error ? e.message : String(e), hint: "this is a bug in unwind; please report it with the tool call that caused it" };
  // The operator sees where an internal error came from (stderr: stdout carries only the protocol).
  if (!(e instanceof UnwindError)) process.stderr.write(`unwind mcp: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  return { isError: true, content: [{ type: "text", text: `${err.code}: ${err.message}${err.hint ? ` (${err.hint})` : ""}` }], structuredContent: { error: err } };
}

export interface ServeOptions {
  /** `--root`: the work tree to guard (default: the client's project directory, else the current directory). */
  root?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Tool calls under way: `serve` lets them finish, and answer, when the client closes stdin. */
  inflight?: Set<Promise<unknown>>;
}

/** The server with every tool registered, not yet connected (tests connect it to an in-memory transport). */
export function createServer(opts: ServeOptions = {}): McpServer {
  const env = opts.env ?? process.env;
  const root = serverRoot(opts.root, env);
  const caller: Caller = callerOf(env);
  const server = new McpServer(
    { name: "unwind", version: VERSION },
    {
      instructions:
        "unwind records what each agent session changed in this work tree and takes back exactly that. " +
        `To take back work: undo_preview (look at the items and conflicts), then undo with the preview's "plan" digest. ` +
        `redo takes an undo or restore back. ${caller.session ? `Your own session is ${caller.session}.` : `Name your session explicitly; ${SESSIONS_HINT}.`}`,
    },
  );

  // The SDK refuses arguments its schema check rejects (an unknown or misspelt field, a wrong type) before a tool runs, as a
  // bare text error; every such refusal is the caller's input, so it is said as any other usage error: E_USAGE, with the
  // same structured content a tool's own refusals carry.
  (server as unknown as { createToolError: (message: string) => Result }).createToolError = (message) =>
    toolError(usage(message.replace(/^MCP error -?\d+: /, "").replace(/\s*\n\s*/g, " "), "the tool's input schema (tools/list) names every field it takes"));

  /**
   * Runs one operation on a freshly opened record (a crashed apply is
   * finished first), told who is calling; errors become tool errors. For a
   * tool that takes work back (`taking`), who is calling is this call's own
   * caller: the client's hook event for it may name the session (caller.ts).
   */
  const run =
    <A>(fn: (u: Unwind, args: A, who: Caller) => Promise<Result>, taking?: string) =>
    (args: A, extra: { _meta?: Record<string, unknown> | undefined }): Promise<Result> => {
      const call = (async () => {
        try {
          const u = await open({ root, keepChangeSets: true });
          const toolUseId = extra._meta?.["claudecode/toolUseId"];
          const who = taking ? callerOfCall(caller, mcpCallMarks(u.store), { tool: taking, root: u.root, toolUseId: typeof toolUseId === "string" ? toolUseId : undefined, now: Date.now() }) : caller;
          return await fn(u, args, who);
        } catch (e) {
          return toolError(e);
        }
      })();
      opts.inflight?.add(call);
      void call.finally(() => opts.inflight?.delete(call));
      return call;
    };

  /** The scope a call names; with none, the caller's own session when the client says which it is. */
  const scopeOf = (a: ScopeFields, who: Caller): { scope: ScopeFields; defaulted: boolean } => {
    const { session, call, fromCall, task, snapshot, to } = a;
    if (session === undefined && call === undefined && fromCall === undefined && task === undefined && snapshot === undefined) {
      if (to !== undefined) throw usage("to goes with snapshot");
      if (!who.session) throw usage("no scope given: name a session (or a call, task or snapshot)", `this client does not say which session is calling; ${SESSIONS_HINT}`);
      return { scope: { session: who.session }, defaulted: true };
    }
    return { scope: { session, call, fromCall, task, snapshot, to }, defaulted: false };
  };
  /** A defaulted session that has no record here says where the default came from. */
  const explain = async <T>(defaulted: boolean, who: Caller, p: Promise<T>): Promise<T> => {
    try {
      return await p;
    } catch (e) {
      if (defaulted && e instanceof UnwindError && e.code === "E_SCOPE_UNKNOWN") {
        throw new UnwindError("E_SCOPE_UNKNOWN", `your session ${who.session} (from ${who.source}) has no recorded calls in this work tree`, {
          hint: `are unwind's hooks installed (unwind init --claude)? Or name the session: ${SESSIONS_HINT}`,
        });
      }
      throw e;
    }
  };

  const RO = { readOnlyHint: true, openWorldHint: false } as const;
  const WRITES = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false } as const;

  server.registerTool(
    "sessions",
    {
      title: "Recorded sessions",
      description: `Agent sessions recorded in this work tree, most recently active first: name, harness, agents, tasks, first/last time, calls, paths changed. Use it to find a session's name for the other tools.${caller.session ? ` The calling agent's own session is ${caller.session}.` : ""}`,
      inputSchema: z.strictObject({ task: name("task").optional().describe("Only sessions labelled with this task."), limit, since }),
      annotations: { title: "Recorded sessions", ...RO },
    },
    run(async (u, a) => {
      const r = await u.sessions(a);
      return ok(r, line.sessionsLine(r, caller.session));
    }),
  );

  server.registerTool(
    "log",
    {
      title: "Tool calls",
      description: "Recorded tool calls, newest first (50 unless limit says otherwise), each with its session, tool, call id and the paths it changed.",
      inputSchema: z.strictObject({
        session: name("session").optional().describe(`Only this session's calls: full name, bare id, short form, or a unique prefix or tail of 6+ characters; ${SESSIONS_HINT}.`),
        task: name("task").optional().describe("Only calls labelled with this task."),
        limit,
        since,
      }),
      annotations: { title: "Tool calls", ...RO },
    },
    run(async (u, a) => {
      const r = await u.log(a);
      return ok(r, line.logLine(r));
    }),
  );

  server.registerTool(
    "changes",
    {
      title: "What a scope changed",
      description:
        "What a session (or call, task, snapshot) changed, path by path: change (added, modified, deleted, typechange, mode), the state before and after, and which sessions wrote it. Changes nothing.",
      inputSchema: z.strictObject({
        ...scopeShape(caller.session !== null),
        patch: z.boolean().optional().describe("Also each text change's hunks (numbered, for the undo tools' hunks) and the whole change as a patch in git's format. Default false."),
      }),
      annotations: { title: "What a scope changed", ...RO },
    },
    run(async (u, a, who) => {
      const { scope, defaulted } = scopeOf(a, who);
      const r = await explain(defaulted, who, u.changes(scope, { since: a.since, paths: a.paths, patch: a.patch }));
      return ok(r, line.changesLine(r));
    }),
  );

  server.registerTool(
    "undo_preview",
    {
      title: "Preview an undo",
      description:
        "What undo would do, per path, against the work tree now: restore, delete, merge, skip, or conflict with a reason (changed-since: someone edited it later; later-write: another session wrote it; concurrent-call: another call was running when it changed). Changes nothing. " +
        'Returns "plan", the digest to pass to undo with the same arguments.',
      inputSchema: z.strictObject({ ...scopeShape(caller.session !== null), ...takeBackShape }),
      annotations: { title: "Preview an undo", ...RO },
    },
    run(async (u, a, who) => {
      const { scope, defaulted } = scopeOf(a, who);
      const r = await explain(defaulted, who, u.plan(scope, { since: a.since, paths: a.paths, force: a.force, merge: a.merge, hunks: a.hunks }));
      return ok(r, line.previewLine(r, "undo"));
    }),
  );

  server.registerTool(
    "undo",
    {
      title: "Undo",
      description:
        "Takes back exactly what a session (or call, task, snapshot) changed, and nothing else: never a path someone changed since (a conflict) unless force. " +
        'Requires "plan" from undo_preview with the same arguments: the plan applied is the one previewed, or nothing is done. Writes a receipt; redo takes it back. ' +
        OWN_ONLY,
      inputSchema: z.strictObject({ ...scopeShape(caller.session !== null), ...takeBackShape, plan: planArg("undo_preview") }),
      annotations: { title: "Undo", ...WRITES },
    },
    run(async (u, a, who) => {
      const { scope, defaulted } = scopeOf(a, who);
      const r = await explain(defaulted, who, u.undo(ownScope(u, who, scope), { since: a.since, paths: a.paths, force: a.force, merge: a.merge, hunks: a.hunks, expect: a.plan, by: startedBy(who) }));
      return ok(r, line.appliedLine(r, "undone"));
    }, "undo"),
  );

  server.registerTool(
    "redo",
    {
      title: "Redo",
      description:
        "Takes an undo or a restore back: each path it wrote goes back to what it held just before, under the same rules (a path changed since is a conflict, left alone). Name the receipt (from the undo or restore result), or last: true for the newest. " +
        "Unless the person allowed more: only a receipt your own session started over MCP.",
      inputSchema: z.strictObject({
        receipt: name("receipt").optional().describe("The receipt id (r-…), or a unique prefix or suffix of 6+ characters."),
        last: z.boolean().optional().describe("true: the newest receipt. Give receipt or last, not both."),
      }),
      annotations: { title: "Redo", ...WRITES },
    },
    run(async (u, a, who) => {
      const r = await u.redo(ownReceipt(u, who, idOrLast(a.receipt, a.last, "receipt")), { by: startedBy(who) });
      return ok(r, line.appliedLine(r, "redone"));
    }, "redo"),
  );

  server.registerTool(
    "snapshot",
    {
      title: "Take a snapshot",
      description: "Takes a snapshot of the whole work tree (tracked and untracked files, not ignored ones) to restore later. Writes no file of the work tree.",
      inputSchema: z.strictObject({
        label: z.string().optional().describe('A free-form label, e.g. "before the refactor".'),
        task: name("task").optional().describe("Label it with a task."),
        session: name("session").optional().describe("Label it with a session."),
      }),
      annotations: { title: "Take a snapshot", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    run(async (u, a) => {
      const s = await u.snapshot(a);
      return ok(s, line.snapshotLine(s));
    }),
  );

  server.registerTool(
    "snapshots",
    {
      title: "Snapshots",
      description: "Snapshots of this work tree, newest first: id, time, tree, labels.",
      inputSchema: z.strictObject({
        limit,
        since,
        task: name("task").optional().describe("Only those labelled with this task."),
        session: name("session").optional().describe("Only those labelled with this session."),
        all: z.boolean().optional().describe("true: every worktree's snapshots, not only this one's."),
      }),
      annotations: { title: "Snapshots", ...RO },
    },
    run(async (u, a) => {
      const r = await u.snapshots(a);
      return ok(r, line.snapshotsLine(r));
    }),
  );

  const restoreShape = {
    snapshot: name("snapshot").optional().describe("The snapshot: its id, or a unique prefix or suffix of 6+ characters (the snapshots tool lists them)."),
    last: z.boolean().optional().describe("true: this work tree's newest snapshot. Give snapshot or last, not both."),
    paths: z
      .array(name("a path"))
      .optional()
      .describe('Only these paths (a directory means everything under it), relative to the work tree\'s root, e.g. ["src/app.ts"]. Default: the whole work tree.'),
    force: takeBackShape.force,
  };

  server.registerTool(
    "restore_preview",
    {
      title: "Preview a restore",
      description:
        "What restoring a snapshot would do, per path: make the work tree (or just paths) equal to the snapshot, deleting files added since. Changes nothing. " +
        'Returns "plan", the digest to pass to restore with the same arguments.',
      inputSchema: z.strictObject(restoreShape),
      annotations: { title: "Preview a restore", ...RO },
    },
    run(async (u, a) => {
      const r = await u.restore(idOrLast(a.snapshot, a.last, "snapshot"), { paths: a.paths ?? [], force: a.force, dryRun: true });
      return ok(r, line.previewLine(r, "restore"));
    }),
  );

  server.registerTool(
    "restore",
    {
      title: "Restore a snapshot",
      description:
        'Makes the work tree (or just paths) equal to a snapshot, deleting files added since. Requires "plan" from restore_preview with the same arguments: the plan applied is the one previewed, or nothing is done. Writes a receipt; redo takes it back. ' +
        "It takes back every session's later work, so it is refused unless the person allowed more than an agent's own work (mcp.allow).",
      inputSchema: z.strictObject({ ...restoreShape, plan: planArg("restore_preview") }),
      annotations: { title: "Restore a snapshot", ...WRITES },
    },
    run(async (u, a, who) => {
      const which = idOrLast(a.snapshot, a.last, "snapshot"); // a usage error before the refusal
      mayRestore(u, who);
      const r = await u.restore(which, { paths: a.paths ?? [], force: a.force, expect: a.plan, by: startedBy(who) });
      return ok(r, line.appliedLine(r, "restored"));
    }, "restore"),
  );

  server.registerTool(
    "status",
    {
      title: "The record's status",
      description: "The store: where it is, its size, sessions, snapshots, receipts, and capture errors not yet acknowledged (a hook that failed to record something says so here).",
      inputSchema: z.strictObject({}),
      annotations: { title: "The record's status", ...RO },
    },
    run(async (u) => {
      const d = await u.status();
      return ok(d, line.statusLine(d));
    }),
  );

  return server;
}

/**
 * Serves over stdio until the client closes stdin. Resolves when the
 * connection ends.
 */
export async function serve(opts: ServeOptions = {}): Promise<void> {
  const inflight = new Set<Promise<unknown>>();
  const server = createServer({ ...opts, inflight });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  await closed;
  // A client that sends a call and closes stdin still gets its answer: an undo under way finishes anyway.
  while (inflight.size > 0) await Promise.allSettled([...inflight]);
  await new Promise((resolve) => setImmediate(resolve)); // the SDK writes the answer after the handler resolves
  await server.close();
}

/**
 * `unwind mcp` as `unwind init --mcp` registers it, straight from bin/unwind
 * without the command line's bundle (as `unwind hook` goes to its own):
 * the client waits for this start-up before its agent can call a tool.
 * Anything else (`--root`, `--help`) goes through the command line.
 */
export function main(): void {
  serve().then(
    () => {
      process.exitCode = 0;
    },
    (e: unknown) => {
      process.stderr.write(`unwind: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\nThis is a bug in unwind; please report it with the command you ran.\n`);
      process.exitCode = 70;
    },
  );
}
