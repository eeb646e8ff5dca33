import { Exit, UnwindError, type ExitCode } from "../domain/errors.js";

// How a failed command ends, wherever it ran: the command line, or the
// early finish of `unwind snapshot` (src/cli/early-start.ts).

export function printJsonError(code: string, message: string, hint?: string): void {
  process.stdout.write(JSON.stringify({ error: { code, message, hint: hint ?? null } }, null, 2) + "\n");
}

export function reportError(e: unknown, json: boolean): ExitCode {
  if (e instanceof UnwindError) {
    process.stderr.write(`unwind: ${e.message}${e.hint ? ` (${e.hint})` : ""}\n`);
    if (json) printJsonError(e.code, e.message, e.hint);
    return e.exit;
  }
  const sys = systemFailure(e);
  if (sys) {
    process.stderr.write(`unwind: ${sys}\n`);
    if (json) printJsonError("E_IO", sys);
    return Exit.damaged;
  }
  const msg = e instanceof Error ? (e.stack ?? e.message) : String(e);
  process.stderr.write(`unwind: internal error: ${msg}\nThis is a bug in unwind; please report it with the command you ran.\n`);
  if (json) printJsonError("E_INTERNAL", e instanceof Error ? e.message : String(e));
  return Exit.internal;
}

/** What the file system refused, said so a person can act on it; the disk's state, not a bug of unwind's. */
const SYSTEM_CODES = new Set(["EIO", "ENOSPC", "EROFS", "EDQUOT", "EACCES", "EPERM", "EMFILE", "ENFILE", "ENOMEM", "EFBIG", "ESTALE"]);

/**
 * One line for an error the system gave (a full disk, a read-only or failing
 * one), or null for anything else. Exit 4, as for a damaged store: the
 * record cannot be written or read until the disk is fixed. What was under
 * way is safe by design: an apply's intent record lets the next command
 * finish it (SPEC section 3), and every record is written whole or not at all.
 */
export function systemFailure(e: unknown): string | null {
  if (!(e instanceof Error)) return null;
  const err = e as NodeJS.ErrnoException;
  if (typeof err.code !== "string" || typeof err.syscall !== "string") return null;
  // Node's recursive mkdir reports any failure of a directory on the way as ENOENT.
  if (!SYSTEM_CODES.has(err.code) && !(err.code === "ENOENT" && err.syscall === "mkdir")) return null;
  const what = err.path ? `${err.syscall} ${err.path}` : err.syscall;
  const fix =
    err.code === "ENOSPC" || err.code === "EDQUOT"
      ? "free space"
      : err.code === "EROFS"
        ? "make it writable"
        : err.code === "EACCES" || err.code === "EPERM"
          ? "check its permissions"
          : "fix the disk";
  return `the file system refused ${what} (${err.code}); ${fix}, then run unwind status`;
}
