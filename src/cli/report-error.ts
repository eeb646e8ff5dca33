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
  const msg = e instanceof Error ? (e.stack ?? e.message) : String(e);
  process.stderr.write(`unwind: internal error: ${msg}\nThis is a bug in unwind; please report it with the command you ran.\n`);
  if (json) printJsonError("E_INTERNAL", e instanceof Error ? e.message : String(e));
  return Exit.internal;
}
