import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { writeFileAtomic } from "../sys/atomic.js";
import { join } from "node:path";

export type CaptureErrorKind = "bad-input" | "capture-timeout" | "capture-failed" | "skipped-path";

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
    mkdirSync(store, { recursive: true });
    appendFileSync(join(store, "errors.jsonl"), JSON.stringify({ at: new Date().toISOString(), ...e }) + "\n");
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

const ackPath = (store: string) => join(store, "errors.ack");

/** The time up to which errors were acknowledged (`unwind status --ack`), or null. */
export function acknowledgedUntil(store: string): string | null {
  try {
    return readFileSync(ackPath(store), "utf8").trim() || null;
  } catch {
    return null;
  }
}

/** The errors logged after the last acknowledgement, oldest first; `total` counts them all. */
export function unacknowledgedErrors(store: string): LoggedError[] {
  const p = join(store, "errors.jsonl");
  if (!existsSync(p)) return [];
  const after = acknowledgedUntil(store);
  return readFileSync(p, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l): LoggedError => {
      try {
        return JSON.parse(l) as LoggedError;
      } catch {
        return { at: "?", kind: "unreadable", message: `unreadable error record: ${l.slice(0, 80)}` };
      }
    })
    .filter((e) => after === null || e.at === "?" || e.at > after);
}

/** Marks every error logged so far as seen: `status` stops showing them; the log itself is kept. */
export function acknowledgeErrors(store: string, upTo: string): void {
  writeFileAtomic(ackPath(store), upTo + "\n");
}
