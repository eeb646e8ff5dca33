import { storePath } from "../domain/store-layout.js";
import { existsSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { isTempName, writeFileAtomic } from "../sys/atomic.js";
import { itemLines, type ReceiptItem, type ReceiptKind } from "../store/receipts.js";
import type { StartedBy, Scope } from "../domain/types.js";
import { mkdirPrivate } from "../sys/files.js";

/**
 * Written (and fsynced) before the first change to the work tree: the whole
 * plan with what each path held and what it will hold, all content already
 * durable in the CAS or git. After a crash the next command replays it.
 */
export interface Intent {
  v: 1;
  receipt: string;
  kind: ReceiptKind;
  at: string;
  scope: Scope;
  /** Items in apply order; acting ones carry before/after with SHA-256. */
  items: ReceiptItem[];
  /** Directories the apply must not remove (they hold restored or kept paths). */
  keepDirs: string[];
  /** Who started it, for the receipt a recovery seals. Absent in intents written before it was recorded. */
  by?: StartedBy;
}

export function pendingDir(store: string): string {
  return storePath(store, "pending");
}

export function writeIntent(store: string, intent: Intent): void {
  mkdirPrivate(pendingDir(store));
  // One item a line, as a receipt: the intent of 10,000 paths is never one 4 MB string (and its buffer) at the apply's peak.
  const { items, ...head } = intent;
  writeFileAtomic(join(pendingDir(store), `${intent.receipt}.json`), itemLines(head, "items", items));
}

export function clearIntent(store: string, id: string): void {
  try {
    unlinkSync(join(pendingDir(store), `${id}.json`));
  } catch {
    /* already cleared */
  }
}

/** Whether anything is in the pending folder: an intent, or the temp file of one whose writing a crash cut short. */
export function anythingPending(store: string): boolean {
  try {
    return readdirSync(pendingDir(store)).length > 0;
  } catch {
    return false;
  }
}

/**
 * Removes the temp files of intents whose writing a crash cut short: such an
 * apply had not touched the work tree (the intent is renamed into place
 * before the first path), so there is nothing to finish. The caller holds
 * the store lock, which every intent is written under: no live writer's
 * temp file is taken.
 */
export function clearTornIntents(store: string): void {
  let names: string[];
  try {
    names = readdirSync(pendingDir(store));
  } catch {
    return;
  }
  for (const f of names) {
    if (!isTempName(f)) continue;
    try {
      unlinkSync(join(pendingDir(store), f));
    } catch {
      /* already gone */
    }
  }
}

export function pendingIntents(store: string): Intent[] {
  const dir = pendingDir(store);
  if (!existsSync(dir)) return [];
  const out: Intent[] = [];
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    let text: string;
    try {
      text = readFileSync(join(dir, f), "utf8");
    } catch (e) {
      // Another process finished that apply between our listing and our read: nothing pending there.
      if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw e;
    }
    out.push(JSON.parse(text) as Intent);
  }
  return out;
}
