/**
 * `unwind hook claude|codex|gemini|qwen|copilot|opencode|cline`: capture one hook event from stdin.
 *
 * A hook runs inside every tool call an agent makes. It must never block or
 * break the agent: it always exits 0, prints nothing on stdout, and records
 * any failure in the store's error log. A file edit is captured without
 * spawning git or loading the CLI; only shell and unknown tools pay for a
 * tree snapshot, within a time budget.
 */
import { existsSync, fstatSync, readSync, realpathSync, statSync } from "node:fs";
import { parseHookEvent } from "../capture/harness/index.js";
import { captureEvent } from "../capture/capture.js";
import { locate, type Located } from "../repo/locate.js";
import { StoreFormatError } from "../repo/store-guard.js";
import { logError } from "../store/error-log.js";
import { checkName } from "../domain/paths.js";
import { hasOpenCalls } from "../store/open-calls.js";
import { stampFired } from "../store/fired.js";
import { clearMcpCall, markMcpCall } from "../store/mcp-calls.js";
import { finished, finishLater, SEALED_AT_ENV } from "../capture/finish-later.js";

/** Hook input larger than this is refused (recorded, not read on). */
export const MAX_INPUT = 64 * 1024 * 1024;

function budgetMs(): number {
  const n = Number(process.env.UNWIND_HOOK_BUDGET_MS);
  return Number.isFinite(n) && n > 0 ? n : 10_000;
}

/**
 * Reads stdin with plain read(2) calls: a pipe read through process.stdin
 * would load the net and stream modules, a measurable share of a hook's
 * start-up cost.
 */
function readInput(limit: number): string | null {
  const chunks: Buffer[] = [];
  let size = 0;
  const buf = Buffer.allocUnsafe(1 << 16);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") continue;
      if (code === "EOF") break;
      throw e;
    }
    if (n === 0) break;
    size += n;
    if (size > limit) return null;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** What `unwind hook` says to a person who runs it by hand: it reads a harness's event from stdin. */
const BY_HAND = `Usage: unwind hook claude|codex|gemini|qwen|copilot|opencode|cline [EVENT]

unwind hook HARNESS reads one hook event (JSON) from stdin; the harness runs it
on every tool call. Copilot CLI's payload does not name its event, so its
command does: unwind hook copilot preToolUse.
It always exits 0: a capture that fails is logged (see unwind status), never
the agent's problem.

Example:
  $ unwind init --claude    (writes this hook into .claude/settings.json)
`;

/**
 * Whether stdin is a terminal, by one fstat: node:tty (and process.stdin,
 * which loads it) costs ~2 ms of every hook's start-up. A character device
 * other than /dev/null is taken for a terminal.
 */
function onTerminal(): boolean {
  try {
    const st = fstatSync(0);
    return st.isCharacterDevice() && st.rdev !== statSync("/dev/null").rdev;
  } catch {
    return false;
  }
}

export async function runHook(args: string[]): Promise<number> {
  const harness = args[0] ?? "";
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(BY_HAND);
    return 0;
  }
  // A terminal on stdin is a person trying it, not a harness: say how it is used instead of logging an error.
  if (onTerminal()) {
    process.stderr.write(BY_HAND + "Nothing was captured.\n");
    return 0;
  }
  // When the event came: a post's window ends here, however long its capture takes (src/capture/finish-later.ts).
  const came = new Date();
  // Set in the process finishing a post that ran out of time: the seal its hook handed on.
  const sealedAt = process.env[SEALED_AT_ENV];
  let loc: Located | null = null;
  let event: { session: string; late: boolean } | null = null;
  let raw: string | null = null;
  try {
    raw = readInput(MAX_INPUT);
    if (raw === null) {
      await logBadInput(harness, `hook input over ${MAX_INPUT} bytes; nothing captured`);
      return 0;
    }
    const parsed = parseHookEvent(harness, raw, args[1]);
    if (!parsed.ok) {
      await logBadInput(harness, parsed.error);
      return 0;
    }
    const ev = parsed.event;
    try {
      loc = await hookPlace(harness, ev.cwd);
    } catch (e) {
      if (ev.target.kind === "ignore") return 0; // a read-only call's cwd is no business of ours
      throw e;
    }
    if (!loc) return 0;
    stampFired(loc.store, harness);
    // unwind's own undo, restore or redo: the server learns from this mark which session is calling (src/mcp/caller.ts).
    if (ev.unwindTool !== undefined) {
      if (ev.phase === "pre") markMcpCall(loc.store, { session: ev.session, tool: ev.unwindTool, call: ev.call, root: loc.root, at: new Date().toISOString() });
      else clearMcpCall(loc.store, ev.session, ev.call);
    }
    // A read-only call captures nothing, but it is the session's next call: it closes what is still
    // open (a background command's window). Only a stat when nothing is open.
    if (ev.target.kind === "ignore" && !hasOpenCalls(loc.store, ev.session)) return 0;
    const task = process.env.UNWIND_TASK;
    const badTask = task ? checkName(task) : null;
    // A bad label must not cost the capture: it is left off, and said in the error log.
    if (badTask) logError(loc.store, { kind: "bad-input", harness, message: `UNWIND_TASK '${task!.slice(0, 40)}' ${badTask}; captured without a task` });
    // Inside `unwind run`, the session is labelled with the run too (SPEC section 9); a value that could not be a run id is left off.
    const run = process.env.UNWIND_RUN;
    const labels = { ...(task && !badTask ? { task } : {}), ...(run && !checkName(run) && !run.includes("/") ? { run } : {}) };
    // Only a shell call's own post is finished later: a pre must be taken before the command runs.
    event = { session: ev.session, late: ev.phase === "post" && ev.target.kind === "tree" && ev.background !== true };
    await captureEvent(loc, ev, labels, budgetMs(), sealedAt === undefined ? {} : { sealedAt });
  } catch (e) {
    // A store of a newer format is refused before anything is read, but its error log is kept
    // append-only JSON lines in every format (docs/format.md), so the refusal is said there.
    const where = e instanceof StoreFormatError ? e.store : (loc?.store ?? (await safeStore(harness, process.cwd())));
    if (where) {
      const timeout = e instanceof Error && /timed out|locked/.test(e.message);
      let message = e instanceof Error ? e.message : String(e);
      // Out of time on a shell call's post: a process of its own finishes it, sealed at the time the post came.
      if (timeout && event?.late && sealedAt === undefined && loc && raw !== null) {
        try {
          const pid = finishLater(loc.store, event.session, ["hook", ...args], raw, came);
          message += `; finished by process ${pid}, the window closed at ${came.toISOString()}`;
        } catch (f) {
          message += `; could not start the process to finish it: ${f instanceof Error ? f.message : String(f)}`;
        }
      }
      logError(where, { kind: timeout ? "capture-timeout" : "capture-failed", harness, message });
    }
  } finally {
    if (sealedAt !== undefined && loc && event) finished(loc.store, event.session);
  }
  return 0;
}

/**
 * The variables naming the harness's project directory: Gemini CLI sets two, Codex none. Qwen Code's
 * QWEN_CODE_PROJECT_DIR is not one: it is Qwen Code's own storage for the project, under ~/.qwen.
 */
const PROJECT_VARS: Readonly<Record<string, readonly string[]>> = {
  claude: ["CLAUDE_PROJECT_DIR"],
  gemini: ["GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
  qwen: ["QWEN_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
  copilot: ["COPILOT_PROJECT_DIR", "CLAUDE_PROJECT_DIR"],
};

/** The harness's project directory, where it names one that exists. */
function projectDir(harness: string): string | null {
  const names = Object.hasOwn(PROJECT_VARS, harness) ? PROJECT_VARS[harness]! : [];
  for (const n of names) {
    const d = process.env[n];
    if (!d) continue;
    try {
      if (statSync(d).isDirectory()) return realpathSync(d);
    } catch {
      /* not there: the cwd decides */
    }
  }
  return null;
}

/**
 * Where a hook records, or null where it must not: a hook has no one to
 * ask, so a store it cannot use (SPEC section 2: a symlink, another user's)
 * is thrown here and logged nowhere, since logging into it is what is
 * refused; the next unwind command refuses it aloud.
 *
 * Outside git, the root is where the project is, not where the agent has
 * cd'ed to: a subfolder must not grow a second store (SPEC section 2: one
 * store, one root). A harness that names no project (Codex) gives only the
 * cwd, which outside git may be any folder (the home directory, /tmp): it
 * records into a store already there (made by `unwind init` or any unwind
 * command), and never makes one, nor snapshots a folder nobody chose.
 */
async function hookPlace(harness: string, cwd: string): Promise<Located | null> {
  const loc = await locate(cwd);
  if (loc.mode !== "private") return loc;
  const project = projectDir(harness);
  if (project) return project === loc.root ? loc : await locate(project);
  return existsSync(loc.store) ? loc : null;
}

async function safeStore(harness: string, cwd: string): Promise<string | null> {
  try {
    return (await hookPlace(harness, cwd))?.store ?? null;
  } catch {
    return null;
  }
}

/** Bad input is logged in the store of the hook's own cwd: the harness runs hooks from the project. */
async function logBadInput(harness: string, message: string): Promise<void> {
  const store = await safeStore(harness, process.cwd());
  if (store) {
    stampFired(store, harness); // it ran, even if what it was given is wrong
    logError(store, { kind: "bad-input", harness, message });
  }
}
