import { appendFileSync, mkdirSync } from "node:fs";
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
