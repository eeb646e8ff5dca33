import { alive } from "../sys/procs.js";
import { spawn } from "node:child_process";
import { closeSync, lstatSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { decodePath, fsPath } from "../domain/path-bytes.js";
import { sessionFile, decodeLine } from "../store/journal.js";
import { mkdirPrivate } from "../sys/files.js";
import type { Context } from "../repo/context.js";

/**
 * A shell call's post capture that outlives the hook's budget (a formatter
 * or a `sed -i` over 100,000 files: git status alone must read every one of
 * them again) is finished by a process of its own, started detached by the
 * hook that ran out of time, so the agent goes on at once.
 *
 * The call's window still ends at its own post (SPEC section 2): the hook's
 * start time is handed on as `UNWIND_HOOK_SEALED_AT`, and the finisher's
 * snapshot, taken later, vouches only for what it can prove was so then.
 * A path whose inode changed (ctime) at or after that moment, or, where it
 * is absent or new, whose directory did, is listed in the post record's
 * `doubt`: its state at the post is not known, so a change there is not
 * proved the call's (undo: `changed-since`), while every other path's state
 * in the later snapshot is its state at the post. A person's edit made
 * while the finisher ran is told apart that way, never taken back as the
 * agent's.
 *
 * ctime, not mtime: no tool sets it (`touch -d`, `cp -p` and `tar` set
 * mtimes). `DOUBT_MARGIN_MS` before the seal counts too: the kernel stamps
 * ctimes from a coarse clock that lags the one the hook read, so a write
 * just after the post may carry a stamp just before it.
 *
 * While it runs, a marker beside the session's journal names it: the
 * session's next event waits for it (up to its own budget), so no later
 * call's snapshot lands inside the window the finisher is closing.
 */
export const DOUBT_MARGIN_MS = 100;
/** How long the finisher may take: generous, since no agent waits on it. */
export const FINISH_BUDGET_MS = 10 * 60_000;
export const SEALED_AT_ENV = "UNWIND_HOOK_SEALED_AT";

const markerOf = (store: string, session: string) => sessionFile(store, session).replace(/\.jsonl$/, ".finishing");

/**
 * Starts the finisher: the same hook command on the same input, with the
 * seal and a long budget. Returns its pid.
 */
export function finishLater(store: string, session: string, argv: readonly string[], input: string, sealedAt: Date): number | undefined {
  const marker = markerOf(store, session);
  mkdirPrivate(dirname(marker));
  const inputFile = `${marker}.input`;
  writeFileSync(inputFile, input, { mode: 0o600 });
  const fd = openSync(inputFile, "r");
  try {
    const child = spawn(process.execPath, [process.argv[1]!, ...argv], {
      detached: true,
      stdio: [fd, "ignore", "ignore"],
      env: { ...process.env, [SEALED_AT_ENV]: sealedAt.toISOString(), UNWIND_HOOK_BUDGET_MS: String(FINISH_BUDGET_MS) },
    });
    child.unref();
    if (child.pid !== undefined) writeFileSync(marker, `${child.pid}\n`, { mode: 0o600 });
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

/** Called by the finisher when it is done, whatever happened: the session's next event need wait no longer. */
export function finished(store: string, session: string): void {
  const marker = markerOf(store, session);
  rmSync(marker, { force: true });
  rmSync(`${marker}.input`, { force: true });
}

/** Waits, up to `deadline`, while a live finisher of the session's last call is at work; true if none is (any more). */
export async function awaitFinisher(store: string, session: string, deadline: number): Promise<boolean> {
  const marker = markerOf(store, session);
  for (;;) {
    let pid: number;
    try {
      pid = Number(readFileSync(marker, "utf8").trim());
    } catch {
      return true;
    }
    if (!alive(pid)) {
      rmSync(marker, { force: true }); // one that died left it
      return true;
    }
    if (Date.now() >= deadline) return false;
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** The tree of the call's own pre capture, from the session's journal; null where there is none. */
export function preTreeOf(store: string, session: string, call: string): string | null {
  let text: string;
  try {
    text = readFileSync(sessionFile(store, session), "utf8");
  } catch {
    return null;
  }
  let tree: string | null = null;
  for (const line of text.split("\n")) {
    if (!line) continue;
    const r = decodeLine(line);
    if (typeof r !== "string" && r.kind === "tree" && r.call === call && r.phase === "pre") tree = r.tree;
  }
  return tree;
}

/**
 * The paths that differ between the call's pre tree and the finisher's
 * tree whose state at `sealedAt` the later tree cannot vouch for: changed
 * (ctime) since, or, where absent or new, in a directory changed since.
 */
export async function doubtSince(ctx: Context, preTree: string, tree: string, sealedAt: string, timeoutMs: number | undefined): Promise<string[]> {
  const r = await ctx.git(["diff-tree", "-r", "-z", "--no-renames", "--name-status", preTree, tree], timeoutMs === undefined ? {} : { timeoutMs });
  // NUL-separated names as bytes (not UTF-8 text): a name that is not UTF-8 stays that name.
  const fields: string[] = [];
  for (let at = 0, nul = r.stdout.indexOf(0); nul >= 0; at = nul + 1, nul = r.stdout.indexOf(0, at)) fields.push(decodePath(r.stdout.subarray(at, nul)));
  const since = Date.parse(sealedAt) - DOUBT_MARGIN_MS;
  const changedSince = (p: string): boolean => {
    try {
      return lstatSync(fsPath(join(ctx.root, p))).ctimeMs >= since;
    } catch {
      return true; // unreadable: no proof
    }
  };
  // The nearest directory that still exists: where an entry was added or removed, its ctime moved.
  const dirChangedSince = (p: string): boolean => {
    for (let d = dirname(p); ; d = dirname(d)) {
      try {
        return lstatSync(fsPath(join(ctx.root, d === "." ? "" : d))).ctimeMs >= since;
      } catch {
        if (d === "." || d === "/") return true;
      }
    }
  };
  const out: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i]!;
    const p = fields[i + 1]!;
    const doubt = status === "D" ? dirChangedSince(p) : status === "A" ? changedSince(p) || dirChangedSince(p) : changedSince(p);
    if (doubt) out.push(p);
  }
  return out;
}
