/**
 * `unwind init --opencode|--cline`: clients with no JSON settings to merge a
 * hook into. OpenCode runs plugins in its own process, so unwind writes one
 * (`.opencode/plugin/unwind.js`) that runs `unwind hook opencode`; Cline runs
 * one executable per event, named after it (`.clinerules/hooks/PreToolUse`).
 *
 * These files are unwind's own, known by a marker line: a second run changes
 * nothing, a moved binary rewrites them, and a file of the same name that is
 * not unwind's (the user's own hook or plugin) is never replaced: `init`
 * names it and stops, before anything is written. Every other file in those
 * folders is the user's and is not read.
 */
import { chmodSync, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeSettingsFile, readSettingsFile, SettingsError, isUnwindHookCommand, type InitResult } from "./settings.js";
import { HARNESSES } from "./index.js";
import { OPENCODE_QUIET } from "./opencode.js";
import type { Harness } from "./rules.js";

type OwnHarness = "opencode" | "cline";

/** The line that marks a file as unwind's: it names the init that wrote it. */
const marker = (harness: OwnHarness) => `written by \`unwind init --${harness}\``;

/** The Cline events unwind writes a hook file for, in order. */
function clineEvents(): string[] {
  return Object.keys(HARNESSES.cline.events);
}

/**
 * The OpenCode plugin: each call that may write is handed to `command` on
 * stdin, and awaited, so the pre capture is taken before the tool runs. It
 * never throws into OpenCode: a hook that cannot run costs the record, not the
 * agent's work.
 */
export function opencodePlugin(command: string): string {
  return `// unwind records OpenCode's tool calls for undo: ${marker("opencode")}.
// The next \`unwind init --opencode\` rewrites this file; a plugin of your own goes in a file of its own.
import { spawn, spawnSync } from "node:child_process";

const COMMAND = ${JSON.stringify(command)};
// Tools that only read: no process is started for them.
const QUIET = new Set(${JSON.stringify(OPENCODE_QUIET)});
const TIMEOUT_MS = 30000;

function send(payload) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn("/bin/sh", ["-c", COMMAND], { stdio: ["pipe", "ignore", "ignore"] });
    } catch {
      return resolve();
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    child.on("error", done);
    child.on("close", done);
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

export const UnwindPlugin = async ({ directory }) => {
  // Calls whose after has not come: a tool that throws gets none.
  const open = new Map();
  return {
    "tool.execute.before": async (input, output) => {
      if (QUIET.has(input.tool)) return;
      if (!open.has(input.sessionID)) open.set(input.sessionID, new Set());
      open.get(input.sessionID).add(input.callID);
      await send({ event: "tool.execute.before", directory, input, output });
    },
    "tool.execute.after": async (input, output) => {
      if (QUIET.has(input.tool)) return;
      open.get(input.sessionID)?.delete(input.callID);
      await send({ event: "tool.execute.after", directory, input, output });
    },
    event: async ({ event }) => {
      if (event.type !== "session.idle") return;
      const id = event.properties?.sessionID;
      if (!(open.get(id)?.size > 0)) return;
      open.delete(id);
      // OpenCode exits without waiting for an event handler: only a synchronous run is sure to finish.
      try {
        spawnSync("/bin/sh", ["-c", COMMAND], { input: JSON.stringify({ event: "session.idle", directory, sessionID: id }), stdio: ["pipe", "ignore", "ignore"], timeout: TIMEOUT_MS });
      } catch {}
    },
  };
};
`;
}

/** One Cline hook file: it runs `command` with the payload on its stdin, and never fails the call. */
export function clineHook(command: string): string {
  return `#!/bin/sh
# unwind records Cline's tool calls for undo: ${marker("cline")}.
# The next \`unwind init --cline\` rewrites this file; a hook of your own can go beside it as <Event>.sh (Cline runs both).
${command}
exit 0
`;
}

/** Where each file goes and what it must hold. */
function plan(harness: OwnHarness, command: string): Array<{ file: string; events: string[]; text: string; mode: number }> {
  if (harness === "opencode") return [{ file: HARNESSES.opencode.settings.file, events: Object.keys(HARNESSES.opencode.events), text: opencodePlugin(command), mode: 0o644 }];
  return clineEvents().map((e) => ({ file: `${HARNESSES.cline.settings.file}/${e}`, events: [e], text: clineHook(command), mode: 0o755 }));
}

/** The unwind hook command a file of ours runs, or undefined when the file is not unwind's. */
export function ownCommand(harness: OwnHarness, text: string): string | undefined {
  if (!text.includes(marker(harness))) return undefined;
  for (const line of text.split("\n")) {
    const m = harness === "opencode" ? /^const COMMAND = ("(?:[^"\\]|\\.)*");$/.exec(line.trim()) : null;
    const cmd = m !== null ? (JSON.parse(m[1]!) as string) : line.trim();
    if (isUnwindHookCommand(cmd, harness)) return cmd;
  }
  return undefined;
}

/**
 * Writes unwind's files for `harness` (the full hook command given), or with
 * `write` false only checks that they can be written. Throws a SettingsError
 * naming a file in the way.
 */
export function installOwnFiles(root: string, harness: OwnHarness, full: string, write: boolean): InitResult {
  const added: string[] = [];
  const updated: string[] = [];
  const todo: Array<{ f: ReturnType<typeof readSettingsFile>; text: string; mode: number }> = [];
  for (const p of plan(harness, full)) {
    const f = readSettingsFile(root, p.file);
    if (f.raw === undefined) {
      added.push(...p.events);
      todo.push({ f, text: p.text, mode: p.mode });
      continue;
    }
    if (ownCommand(harness, f.raw) === undefined)
      throw new SettingsError(f.label, harness === "cline" ? `a hook of your own (not unwind's); move it to ${p.file}.sh, which Cline runs too` : "a plugin of your own (not unwind's); rename it");
    if (f.raw !== p.text || ((f.mode ?? 0) & 0o111) !== (p.mode & 0o111)) {
      updated.push(...p.events);
      todo.push({ f, text: p.text, mode: p.mode });
    }
  }
  if (write)
    for (const { f, text, mode } of todo) {
      writeSettingsFile({ ...f, mode }, text);
      chmodSync(f.target, mode);
    }
  return { harness, file: HARNESSES[harness].settings.file, changed: todo.length > 0, added, updated };
}

/** unwind's files of `harness` as they are: the events they cover and the command they run (null: none of ours). */
export function ownHooks(root: string, harness: OwnHarness): { events: string[]; missing: string[]; command: string } | null {
  const events: string[] = [];
  const missing: string[] = [];
  let command: string | undefined;
  for (const p of plan(harness, "")) {
    let cmd: string | undefined;
    try {
      const path = join(root, p.file);
      // A Cline hook without its exec bit is never run: it does not count.
      if (harness === "cline" && (lstatSync(path).mode & 0o111) === 0) throw new Error("not executable");
      cmd = ownCommand(harness, readFileSync(path, "utf8"));
    } catch {
      cmd = undefined;
    }
    if (cmd === undefined) missing.push(...p.events);
    else {
      events.push(...p.events);
      command ??= cmd;
    }
  }
  return command === undefined ? null : { events, missing, command };
}

export function isOwnHarness(harness: Harness): harness is OwnHarness {
  return HARNESSES[harness].settings.own !== undefined;
}
