import { storePath } from "../domain/store-layout.js";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";

/**
 * When each harness's hook last ran in this store: `<store>/fired/<harness>`,
 * the time as text. A hook that is installed but never runs (a project the
 * harness does not trust, hooks not approved) records nothing at all and
 * says nothing; this stamp is how `unwind status` tells.
 */
const HARNESS = /^[a-z][a-z0-9-]{0,31}$/;

/** Notes that `harness`'s hook ran now. Never throws: a hook must not fail over its own bookkeeping. */
export function stampFired(store: string, harness: string, now = new Date()): void {
  if (!HARNESS.test(harness)) return;
  const file = storePath(store, "fired", harness);
  try {
    writeFileSync(file, now.toISOString());
  } catch {
    try {
      mkdirSync(storePath(store, "fired"), { mode: 0o700 }); // not recursive: a hook does not create a store just to note this; 0700 as every directory of the store
      writeFileSync(file, now.toISOString());
    } catch {
      /* no store yet, or not writable: nothing to note it in */
    }
  }
}

/** When `harness`'s hook last ran, or null when it never did (in this store). */
export function lastFired(store: string, harness: string): string | null {
  if (!HARNESS.test(harness)) return null;
  try {
    const at = readFileSync(storePath(store, "fired", harness), "utf8").trim();
    return Number.isNaN(Date.parse(at)) ? null : at;
  } catch {
    return null;
  }
}
