import { spawn } from "node:child_process";

export interface CommandResult {
  /** The exit code; 128 + the signal's number where a signal ended it; null when it never started or timed out. */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** We were told to stop (SIGINT, SIGTERM, SIGHUP) while it ran: its group was ended with us. */
  interrupted: boolean;
  /** Why it could not be started (ENOENT: not found, EACCES: not executable), or null. */
  spawnError: string | null;
  /** The end of what it wrote to stdout and stderr, interleaved as it came. */
  tail: string;
  durationMs: number;
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

/** Bytes of output kept while the command runs; the tail is cut from them. */
const KEEP_BYTES = 64 * 1024;

/**
 * Runs `argv` (no shell) in `cwd` in its own process group, stdin closed,
 * keeping the tail of its output. On `timeoutMs` the whole group gets
 * SIGTERM, then SIGKILL after `graceMs`; when the command exits, whatever
 * it left running in its group is ended too, so nothing outlives the check
 * that started it. A SIGINT, SIGTERM or SIGHUP sent to us while it runs
 * ends its group the same way (its own group does not get the terminal's
 * signals), and the result says it was interrupted.
 */
export function runCommand(argv: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; graceMs?: number; tailLines?: number }): Promise<CommandResult> {
  const started = Date.now();
  const grace = opts.graceMs ?? 5000;
  return new Promise((resolve) => {
    let kept = Buffer.alloc(0);
    const keep = (b: Buffer) => {
      kept = Buffer.concat([kept, b]);
      if (kept.length > KEEP_BYTES) kept = kept.subarray(kept.length - KEEP_BYTES);
    };
    const child = spawn(argv[0]!, argv.slice(1), { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let timedOut = false;
    let killer: NodeJS.Timeout | undefined;
    const group = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        /* the group is gone */
      }
    };
    const end = () => {
      group("SIGTERM");
      killer ??= setTimeout(() => group("SIGKILL"), grace);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      end();
    }, opts.timeoutMs);
    let interrupted = false;
    const onSignal = () => {
      interrupted = true;
      end();
    };
    const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
    for (const s of signals) process.on(s, onSignal);
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let done = false;
    const finish = (r: Omit<CommandResult, "tail" | "durationMs" | "interrupted">) => {
      if (done) return;
      done = true;
      for (const s of signals) process.off(s, onSignal);
      clearTimeout(timer);
      if (killer) clearTimeout(killer);
      resolve({ ...r, interrupted, tail: tailOf(kept, opts.tailLines ?? 40), durationMs: Date.now() - started });
    };
    child.on("error", (e: NodeJS.ErrnoException) => finish({ exitCode: null, signal: null, timedOut: false, spawnError: e.code ?? String(e) }));
    child.on("exit", (code, signal) => {
      group("SIGKILL"); // what the command left running in its group
      // Output still in the pipes is read before the result is final; a grandchild that escaped the group cannot hold it up for long.
      const settle = () => finish({ exitCode: timedOut ? null : (code ?? (signal ? 128 + (SIGNALS[signal] ?? 0) : null)), signal, timedOut, spawnError: null });
      const wait = setTimeout(settle, 2000);
      child.on("close", () => {
        clearTimeout(wait);
        settle();
      });
    });
  });
}

/** The last `lines` lines of `buf` as text. */
function tailOf(buf: Buffer, lines: number): string {
  const all = buf.toString("utf8").replace(/\r\n/g, "\n").split("\n");
  if (all.at(-1) === "") all.pop();
  return all.slice(-lines).join("\n");
}
