import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodePath, encodePath } from "../domain/path-bytes.js";
import { UnwindError } from "../domain/errors.js";

export interface GitOptions {
  cwd: string;
  /** Extra environment (GIT_DIR, GIT_INDEX_FILE, ...); inherited GIT_* are always cleared first. */
  env?: Record<string, string>;
  input?: string | Buffer;
  timeoutMs?: number | undefined;
  /** Exit codes that are answers, not failures (e.g. 1 for `diff --quiet`). */
  okCodes?: number[];
  /** Allow git to take optional locks (only for our private index). */
  optionalLocks?: boolean;
  /**
   * git's output goes to a temp file (removed from its directory at once),
   * read whole when git exits. For `cat-file --batch` of many blobs: git
   * writes each blob with writes of its own, and a pipe read as they come
   * was an event-loop turn and a chunk a blob in this process. Where no
   * temp file can be made, the pipe.
   */
  spool?: boolean;
}

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

export const DEFAULT_GIT_TIMEOUT_MS = 120_000;

/** git failed: carries argv, exit code and git's own stderr so messages can quote it. */
export class GitError extends UnwindError {
  readonly args: readonly string[];
  readonly gitCode: number | "timeout" | "spawn";
  readonly stderr: string;

  constructor(args: readonly string[], gitCode: number | "timeout" | "spawn", stderr: string) {
    const first = stderr.trim().split("\n")[0] ?? "";
    const sub = args.find((a, i) => !a.startsWith("-") && args[i - 1] !== "-c") ?? "";
    const what = gitCode === "timeout" ? "timed out" : gitCode === "spawn" ? "could not be started" : `exited ${gitCode}`;
    super(gitCode === "spawn" ? "E_GIT_MISSING" : "E_GIT", `git ${sub} ${what}${first ? `: ${first}` : ""}`, gitCode === "spawn" ? { hint: "install git 2.31 or newer and put it on PATH" } : {});
    this.name = "GitError";
    this.args = args;
    this.gitCode = gitCode;
    this.stderr = stderr;
  }
}

/**
 * The environment git runs with: the caller's, minus every inherited GIT_*
 * variable. A hook runs inside the agent's process tree, where GIT_DIR or
 * GIT_INDEX_FILE from some outer git command would silently redirect us.
 */
export function gitEnv(extra: Record<string, string> = {}, optionalLocks = false): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("GIT_")) env[k] = v;
  }
  env.GIT_TERMINAL_PROMPT = "0";
  // Reading commands must never rewrite the user's index behind their back.
  if (!optionalLocks) env.GIT_OPTIONAL_LOCKS = "0";
  return { ...env, ...extra };
}

/**
 * Every git call runs with hooks off: unwind's ref updates, index writes,
 * commits, worktrees and pushes are its own bookkeeping, not the person's git
 * commands, and a repository's hooks (reference-transaction on every capture,
 * pre-push on a share) must neither run nor see them. /dev/null is not a
 * directory, so git finds no hook there and says nothing. A local remote's
 * receive hooks still run: git does not pass `-c` to the other side.
 */
const NO_HOOKS = ["-c", "core.hooksPath=/dev/null"];

export function git(args: readonly string[], opts: GitOptions): Promise<GitResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const okCodes = opts.okCodes ?? [];
  // Paths in the input keep their exact bytes (see decodePath).
  const input = typeof opts.input === "string" ? encodePath(opts.input) : (opts.input ?? "");
  return new Promise((resolve, reject) => {
    const spooled = opts.spool ? spoolFile() : null;
    let child;
    try {
      // Loaded on the first spawn, not with this module: a watched snapshot spawns no git at all (~2 ms of a hook's start-up).
      const { spawn } = process.getBuiltinModule("node:child_process");
      child = spawn("git", [...NO_HOOKS, ...args], {
        cwd: opts.cwd,
        env: gitEnv(opts.env, opts.optionalLocks),
        stdio: ["pipe", spooled ?? "pipe", "pipe"],
      });
    } catch (e) {
      if (spooled !== null) closeSync(spooled);
      reject(new GitError(args, "spawn", String(e)));
      return;
    }
    // The listeners below outlive the child by a turn of the event loop (its pipes close then), and a caller
    // that does not yield keeps them longer: an apply's writes are synchronous. Whatever they reach stays
    // live with them, so they reach the output and the promise (and through it the result) only until it is
    // settled: a 100,000-line `cat-file --batch-check` was 14 MB held through every write of an undo.
    let pending: { resolve: (r: GitResult) => void; reject: (e: GitError) => void } | null = { resolve, reject };
    let out: Buffer[] = [];
    let err: Buffer[] = [];
    // Once: an "error" can come before the "close", and the spool's descriptor must be closed exactly once.
    const settle = (outcome: GitResult | GitError) => {
      const p = pending;
      if (p === null) return;
      pending = null;
      out = [];
      err = [];
      if (spooled !== null) closeSync(spooled);
      if (outcome instanceof GitError) p.reject(outcome);
      else p.resolve(outcome);
    };
    let timedOut = false;
    // SIGTERM first: git removes its lock files on SIGTERM, not on SIGKILL.
    let killer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGTERM");
      killer = setTimeout(() => child.kill("SIGKILL"), 2000);
    }, timeoutMs);
    child.stdout?.on("data", (b: Buffer) => out.push(b));
    // stdin and stderr are pipes whatever stdout is.
    child.stderr!.on("data", (b: Buffer) => err.push(b));
    child.on("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      settle(new GitError(args, "spawn", e.code === "ENOENT" ? "git not found on PATH" : String(e)));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (killer) clearTimeout(killer);
      if (pending === null) return; // settled by an "error": the spool is closed
      const stderr = Buffer.concat(err).toString("utf8");
      if (timedOut) return settle(new GitError(args, "timeout", stderr));
      const c = code ?? -1;
      if (c !== 0 && !okCodes.includes(c)) return settle(new GitError(args, c, stderr));
      settle({ stdout: spooled === null ? Buffer.concat(out) : readSpool(spooled), stderr, code: c });
    });
    child.stdin!.on("error", () => {
      /* git may exit before reading all input; the close handler reports it */
    });
    child.stdin!.end(input);
  });
}

/** A temp file for git's output, already unlinked (no name to leave behind), or null where none can be made. */
function spoolFile(): number | null {
  const path = join(tmpdir(), `unwind-git-${process.pid}-${randomBytes(6).toString("hex")}`);
  let fd: number;
  try {
    fd = openSync(path, "wx+", 0o600);
  } catch {
    return null;
  }
  try {
    unlinkSync(path);
    return fd;
  } catch {
    closeSync(fd);
    return null;
  }
}

function readSpool(fd: number): Buffer {
  const size = fstatSync(fd).size;
  const b = Buffer.allocUnsafe(size);
  let at = 0;
  while (at < size) {
    const n = readSync(fd, b, at, size - at, at);
    if (n === 0) break;
    at += n;
  }
  return b.subarray(0, at);
}

/** One answer of `git cat-file --batch`; null where git said "missing" (or "ambiguous"). */
export interface BatchObject {
  oid: string;
  type: string;
  body: Buffer;
}

/** Splits `git cat-file --batch` output for `count` requests into its objects, in request order. */
export function parseBatch(out: Buffer, count: number): (BatchObject | null)[] {
  const objects: (BatchObject | null)[] = [];
  let pos = 0;
  for (let k = 0; k < count; k++) {
    const nl = out.indexOf(10, pos);
    const m = /^(\S+) (\S+) (\d+)$/.exec(out.subarray(pos, nl).toString("utf8"));
    pos = nl + 1;
    if (!m) {
      objects.push(null); // "<name> missing": no content follows
      continue;
    }
    const size = Number(m[3]);
    objects.push({ oid: m[1]!, type: m[2]!, body: out.subarray(pos, pos + size) });
    pos += size + 1;
  }
  return objects;
}

/**
 * Splits NUL-terminated `-z` output into fields, dropping the trailing empty
 * one. Fields are paths as often as not, so each is decoded losslessly
 * (`decodePath`): a name that is not UTF-8 keeps its bytes.
 */
export function splitZ(buf: Buffer | string): string[] {
  const b = typeof buf === "string" ? encodePath(buf) : buf;
  const parts: string[] = [];
  let start = 0;
  for (let nul = b.indexOf(0, start); nul >= 0; nul = b.indexOf(0, start)) {
    parts.push(decodePath(b.subarray(start, nul)));
    start = nul + 1;
  }
  if (start < b.length) parts.push(decodePath(b.subarray(start)));
  return parts;
}
