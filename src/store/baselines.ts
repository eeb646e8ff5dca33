import { storePath } from "../domain/store-layout.js";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { UnwindError } from "../domain/errors.js";
import type { State } from "../domain/types.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { mkdirPrivate } from "../sys/files.js";

/**
 * Stage baselines (SPEC section 10): per key, the state each governed path
 * was first seen in. Bytes live in the CAS; this file holds the states.
 */
export interface Baseline {
  v: 1;
  key: string;
  /** Root-relative prefixes governed ("" is the whole tree), in the order first captured. */
  prefixes: string[];
  /** Every capture, first to last: when, with which prefixes, how many paths it added, and in which work tree (none before 2026-12-02). */
  captures: { at: string; prefixes: string[]; added: number; root?: string }[];
  /** Path -> the state first seen there. A path under the prefixes that is not here was absent. */
  entries: Record<string, State>;
}

const dirOf = (store: string) => storePath(store, "baselines");

/** One file a key, named by a hash of it: keys may hold `/`, which must not become directories. */
export function baselineFile(store: string, key: string): string {
  return join(dirOf(store), `${createHash("sha256").update(key).digest("hex").slice(0, 16)}.json`);
}

export function readBaseline(store: string, key: string): Baseline | null {
  let text: string;
  try {
    text = readFileSync(baselineFile(store, key), "utf8");
  } catch {
    return null;
  }
  let b: Baseline;
  try {
    b = JSON.parse(text) as Baseline;
  } catch {
    // Guessing at a baseline could revert to the wrong state: refused, as a damaged journal record is.
    throw new UnwindError("E_STORE_DAMAGED", `baseline '${key}' (${baselineFile(store, key)}) is damaged: it does not parse`, { hint: "run unwind verify; capture it again under a new key" });
  }
  return b.key === key ? b : null;
}

/** Written whole and fsynced, under the store lock: a reader sees the old baseline or the new one. */
export function writeBaseline(store: string, b: Baseline): void {
  mkdirPrivate(dirOf(store));
  writeFileAtomic(baselineFile(store, b.key), JSON.stringify(b) + "\n");
}

export function listBaselines(store: string): Baseline[] {
  return readBaselines(store).baselines;
}

/** Every baseline file: those that parse, and the names of those that do not (verify reports them). */
export function readBaselines(store: string): { baselines: Baseline[]; damaged: string[] } {
  let names: string[];
  try {
    names = readdirSync(dirOf(store)).filter((n) => n.endsWith(".json"));
  } catch {
    return { baselines: [], damaged: [] };
  }
  const baselines: Baseline[] = [];
  const damaged: string[] = [];
  for (const n of names) {
    try {
      baselines.push(JSON.parse(readFileSync(join(dirOf(store), n), "utf8")) as Baseline);
    } catch {
      damaged.push(n);
    }
  }
  return { baselines, damaged };
}

export function dropBaseline(store: string, key: string): void {
  unlinkSync(baselineFile(store, key));
}

const checksDir = (store: string) => storePath(store, "revert-checks");

export function newCheckId(at: Date): string {
  return `c-${at.toISOString().replace(/[-:.]/g, "")}-${randomBytes(4).toString("hex")}`;
}

/** Keeps one revert check's result (`revert-checks/<id>.json`). */
export function writeCheckResult(store: string, id: string, result: unknown): void {
  mkdirPrivate(checksDir(store));
  writeFileAtomic(join(checksDir(store), `${id}.json`), JSON.stringify(result, null, 2) + "\n");
}

/** The ids of the kept results, oldest first (ids sort by time). */
export function checkIds(store: string): string[] {
  try {
    return readdirSync(checksDir(store))
      .filter((n) => n.endsWith(".json"))
      .map((n) => n.slice(0, -5))
      .sort();
  } catch {
    return [];
  }
}

export function readCheckResult(store: string, id: string): unknown {
  return JSON.parse(readFileSync(join(checksDir(store), `${id}.json`), "utf8"));
}

export function dropCheckResult(store: string, id: string): void {
  unlinkSync(join(checksDir(store), `${id}.json`));
}
