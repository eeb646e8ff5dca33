import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { usage } from "../../domain/errors.js";
import { signal } from "../../sys/procs.js";

/** The signals a person or a supervisor sends `unwind run` that the command must get too. */
const FORWARDED: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

export interface CommandExit {
  /** The command's exit code, or null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What `unwind run` exits with: the code, or 128 + the signal's number. */
  status: number;
  timedOut: boolean;
}

/**
 * The executable `argv[0]` names, found as the shell would (a name with a
 * `/` as a path from `cwd`, else along PATH). Checked before anything is
 * recorded: a command that cannot start is a usage error, not a run.
 */
export function findExecutable(cmd: string, cwd: string, path = process.env.PATH ?? ""): string {
  const ok = (p: string) => {
    try {
      if (!statSync(p).isFile()) return false;
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (cmd.includes("/")) {
    const p = isAbsolute(cmd) ? cmd : resolve(cwd, cmd);
    try {
      statSync(p);
    } catch {
      throw usage(`command not found: ${cmd}`, "give a command that exists, after --");
    }
    if (!ok(p)) throw usage(`command is not an executable file: ${cmd}`, "check its path and its exec bit");
    return p;
  }
  for (const dir of path.split(delimiter)) {
    const p = join(dir === "" ? cwd : resolve(cwd, dir), cmd);
    if (ok(p)) return p;
  }
  throw usage(`command not found: ${cmd}`, "give a command on PATH, or its path, after --");
}

export interface Supervised {
  pid: number;
  done: Promise<CommandExit>;
  /**
   * Stops holding SIGINT, SIGTERM and SIGHUP. Until then, once the command
   * has exited, they are swallowed: a second Ctrl-C must not kill unwind
   * between the command's end and its capsule's seal.
   */
  release(): void;
}

/**
 * Starts the command in its own session and process group (Node's
 * `detached`: setsid), with stdin, stdout and stderr passed through
 * untouched, and supervises it: SIGINT, SIGTERM and SIGHUP sent to
 * `unwind run` are passed on to the group (a terminal's Ctrl-C reaches
 * only the terminal's foreground group, which is ours, not the child's
 * new one); `timeoutMs` ends the group with TERM, then KILL after
 * `graceMs`. `onSignal` is told each signal a timeout sends, so the owned
 * processes that left the group get it too; a forwarded signal goes to
 * the group alone, as the terminal would have sent it.
 * Resolves once the command has started; rejects if it could not start.
 */
export function startCommand(
  argv: readonly string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number | null; graceMs: number; onSignal?: (sig: NodeJS.Signals) => void },
): Promise<Supervised> {
  return new Promise((res, rej) => {
    // Held before the command exists: a signal sent the moment it starts (before Node tells us it has)
    // would otherwise end us by its default action, the command left running unwatched. Kept until it exists.
    const early: NodeJS.Signals[] = [];
    let pid: number | undefined;
    let timedOut = false;
    let exited = false;
    const toGroup = (sig: NodeJS.Signals) => {
      if (exited || pid === undefined) return;
      signal(-pid, sig);
    };
    const forward = (sig: NodeJS.Signals) => (pid === undefined ? early.push(sig) : toGroup(sig));
    const release = () => {
      for (const s of FORWARDED) process.removeListener(s, forward);
    };
    for (const s of FORWARDED) process.on(s, forward);
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd, env: opts.env, stdio: "inherit", detached: true });
    } catch (e) {
      release();
      throw e;
    }
    pid = child.pid;
    // A timeout ends the tree: the group, and the owned processes that left it.
    const end = (sig: NodeJS.Signals) => {
      toGroup(sig);
      opts.onSignal?.(sig);
    };
    const timers: NodeJS.Timeout[] = [];
    const done = new Promise<CommandExit>((resolveDone) => {
      child.once("exit", (code, sig) => {
        exited = true;
        for (const t of timers) clearTimeout(t);
        const n = sig ? (osConstants.signals[sig] ?? 0) : 0;
        resolveDone({ code: sig ? null : code, signal: sig, status: sig ? 128 + n : (code ?? 0), timedOut });
      });
    });
    child.once("error", (e) => {
      if (pid !== undefined) return;
      release();
      rej(usage(`cannot start ${argv[0]}: ${(e as NodeJS.ErrnoException).code ?? e.message}`, "check the command after --"));
      // A signal meant for us while there was nothing to pass it to: it ends us, as it would have.
      if (early.length > 0) process.kill(process.pid, early[0]!);
    });
    child.once("spawn", () => {
      if (opts.timeoutMs !== null) {
        timers.push(
          setTimeout(() => {
            timedOut = true;
            end("SIGTERM");
            timers.push(setTimeout(() => end("SIGKILL"), opts.graceMs));
          }, opts.timeoutMs),
        );
      }
      res({ pid: pid!, done, release });
    });
  });
}
