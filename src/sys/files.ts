import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Every file under `dir` (none if it is missing), without following symlinks. */
export function* walkFiles(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* walkFiles(p);
    else yield p;
  }
}

/** The bytes of every file under `dir`. */
export function dirBytes(dir: string): number {
  let n = 0;
  for (const p of walkFiles(dir)) {
    try {
      n += statSync(p).size;
    } catch {
      /* vanished */
    }
  }
  return n;
}

/**
 * The file system's own clock now, in its own resolution: `file` is
 * written and its modification time read back. Stat data older than this
 * cannot be left unchanged by a later write (src/capture/observe.ts
 * `unchangedSince`).
 */
export function fsClock(file: string): number {
  writeFileSync(file, "t"); // a write, which always sets the time (an empty truncate may not)
  return statSync(file).mtimeMs;
}
