import type { Command } from "@commander-js/extra-typings";
import { HARNESSES } from "../../capture/harness/index.js";
import type { Harness } from "../../capture/harness/rules.js";
import { Exit } from "../../domain/errors.js";
import { completionScript, type Shell } from "../describe.js";
import type { Globals } from "../globals.js";
import { paint, table, when, type Output } from "../render.js";
import { openFor } from "./common.js";

/** `unwind completion SHELL`: the script, on stdout as it is (never JSON: a shell sources it). */
export async function completion(program: Command, shell: Shell): Promise<Output> {
  const script = completionScript(program, shell);
  return { json: { shell, script }, human: script, exit: Exit.ok };
}

/** How many sessions the start screen shows. */
const RECENT = 3;

export interface StartHere {
  root: string;
  /** "git": a repository's work tree; "private": a folder without git. */
  mode: "git" | "private";
  store: string;
  storeExists: boolean;
  /** Per client: the settings files holding unwind's hooks (none: not installed) and when its hook last ran. */
  clients: { harness: Harness; files: string[]; lastFired: string | null }[];
  sessions: { session: string; harness: string; last: string; calls: number; paths: number }[];
  totalSessions: number;
}

/**
 * `unwind` alone: where this work tree stands (store, hooks per client, the
 * last sessions) and the next command to type, then the commands in one
 * paragraph. A person's first screen, so it never fails on a missing store.
 */
export async function startHere(globals: Globals, program: Command): Promise<Output> {
  const u = await openFor(globals);
  const st = await u.status();
  const clients = (Object.keys(HARNESSES) as Harness[]).map((harness) => {
    const mine = st.hooks.filter((h) => h.harness === harness);
    return { harness, files: mine.map((h) => h.file), lastFired: mine.find((h) => h.lastFired !== null)?.lastFired ?? null };
  });
  const list = st.exists ? await u.sessions({ limit: RECENT }) : { sessions: [], total: 0 };
  const doc: StartHere = {
    root: st.root,
    mode: st.mode === "git" ? "git" : "private",
    store: st.store,
    storeExists: st.exists,
    clients,
    sessions: list.sessions.map((s) => ({ session: s.session, harness: s.harness, last: s.last, calls: s.calls, paths: s.paths })),
    totalSessions: list.total,
  };
  const lines = [paint("unwind: a flight recorder and precise undo for AI coding agents", "bold"), ""];
  if (doc.mode !== "git" && !doc.storeExists) {
    lines.push(`${doc.root} is not in a git repository.`, "Start here: cd into your project's repository, then", "  unwind init --claude      (or --codex, --gemini: the clients you use)");
  } else {
    const rows: string[][] = [
      [doc.mode === "git" ? "repository" : "folder", doc.root],
      ["store", doc.storeExists ? doc.store : "not created yet (unwind init creates it)"],
    ];
    for (const c of clients) {
      const state = c.files.length === 0 ? `not installed (unwind init --${c.harness})` : `${c.files.join(", ")}; ${c.lastFired ? `last ran ${when(c.lastFired)}` : "never ran yet"}`;
      rows.push([c === clients[0] ? "hooks" : "", `${c.harness.padEnd(6)}  ${state}`]);
    }
    lines.push(table(rows, [], { max: 80 }), "");
    if (doc.sessions.length > 0) {
      lines.push(`last sessions (${doc.totalSessions} in all: unwind sessions):`);
      lines.push(table(doc.sessions.map((s) => [`  ${s.session}`, s.harness, when(s.last), `${s.calls} call(s), ${s.paths} path(s)`])));
      const s = doc.sessions[0]!.session;
      lines.push(
        "",
        "An agent went wrong? See what it did, then take it back:",
        `  unwind changes --session ${s}`,
        `  unwind undo --session ${s} --dry-run`,
        "  unwind ui                 (the same in a browser)",
      );
    } else if (clients.every((c) => c.files.length === 0)) {
      lines.push("Start here: install the hooks of the clients you use, then work as usual:", "  unwind init --claude      (or --codex, --gemini)");
    } else {
      lines.push("No session recorded yet: start the client (a session open before init", "needs a restart), let the agent work, then: unwind sessions");
    }
  }
  const names = program.commands.map((c) => c.name());
  lines.push("", "Commands (unwind COMMAND --help for one, unwind --help for all):", ...wrap(names.join(", "), 78).map((l) => `  ${l}`));
  return { json: doc, human: lines.join("\n"), exit: Exit.ok };
}

/** Words wrapped at `cols`. */
function wrap(text: string, cols: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const w of text.split(" ")) {
    if (line && line.length + 1 + w.length > cols) {
      out.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) out.push(line);
  return out;
}
