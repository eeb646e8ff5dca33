import { storePath } from "../domain/store-layout.js";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { writeFileAtomic } from "../sys/atomic.js";
import { mkdirPrivate } from "../sys/files.js";

/** `run-unsealed`: a wrapped command ran but its capsule could not be sealed (SPEC section 9: said on stderr and by status). */
export type CaptureErrorKind = "bad-input" | "capture-timeout" | "capture-failed" | "skipped-path" | "run-unsealed";

export interface CaptureError {
  at: string;
  kind: CaptureErrorKind;
  harness?: string;
  session?: string;
  tool?: string;
  message: string;
}

/**
 * Capture failures go here, never to the agent: a hook must not block or
 * break the tool call it observes. `unwind status` and `verify` show them.
 */
export function logError(store: string, e: Omit<CaptureError, "at">): void {
  try {
    mkdirPrivate(store);
    appendFileSync(storePath(store, "errors.jsonl"), JSON.stringify({ at: new Date().toISOString(), ...e }) + "\n");
  } catch {
    // Nowhere left to record it (disk full, read-only store): the hook still must not fail.
  }
}

/** A capture error as read back: an unreadable line is kept as a message, never dropped. */
export interface LoggedError {
  at: string;
  kind: CaptureErrorKind | "unreadable";
  message: string;
  harness?: string;
  session?: string;
  tool?: string;
}

const ackPath = (store: string) => storePath(store, "errors.ack");
const logPath = (store: string) => storePath(store, "errors.jsonl");

/**
 * How many bytes of the log were acknowledged (`unwind status --ack`). By
 * offset, not by time: a line that cannot be read, or one a slow hook
 * appended with an earlier time, is acknowledged exactly when it was shown.
 */
function acknowledgedBytes(store: string): number {
  try {
    const n = Number(readFileSync(ackPath(store), "utf8").trim());
    return Number.isSafeInteger(n) && n >= 0 ? n : 0;
  } catch {
    return 0;
  }
}

/** The log's errors after the last acknowledgement, oldest first, and the log's length they were read at. */
export function unacknowledgedErrors(store: string): { errors: LoggedError[]; upTo: number } {
  if (!existsSync(logPath(store))) return { errors: [], upTo: 0 };
  const all = readFileSync(logPath(store));
  // Only whole lines: one a hook is still appending is read next time.
  const upTo = all.lastIndexOf(0x0a) + 1;
  let from = acknowledgedBytes(store);
  if (from > upTo) from = 0; // the log was replaced since: everything in it is new
  const errors = all
    .subarray(from, upTo)
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l): LoggedError => {
      try {
        return JSON.parse(l) as LoggedError;
      } catch {
        return { at: "?", kind: "unreadable", message: `unreadable error record: ${l.slice(0, 80)}` };
      }
    });
  return { errors, upTo };
}

/** Marks the log up to `upTo` bytes (what `unacknowledgedErrors` read) as seen: `status` stops showing it; the log itself is kept. */
export function acknowledgeErrors(store: string, upTo: number): void {
  writeFileAtomic(ackPath(store), `${upTo}\n`);
}
