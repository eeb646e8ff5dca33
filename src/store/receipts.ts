import { storePath } from "../domain/store-layout.js";
import { createHash, randomBytes, type Hash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { Action, Counts, StartedBy, Reason, RepoPath, Scope, State } from "../domain/types.js";
import { UnwindError } from "../domain/errors.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { fileLines, mkdirPrivate } from "../sys/files.js";
import { sha256 } from "../domain/hash.js";

export interface ReceiptItem {
  path: RepoPath;
  action: Action;
  reason: Reason | null;
  detail?: string;
  /** What the path held just before (null: absent); its bytes are in the CAS or git. */
  before: State | null;
  /** What the apply left there. */
  after: State | null;
}

export type ReceiptKind = "undo" | "restore" | "redo";

export interface Receipt {
  v: 1;
  id: string;
  kind: ReceiptKind;
  at: string;
  scope: Scope;
  /** The receipt before this one in the chain, by id and the SHA-256 of its file. */
  prev: { id: string; sha256: string } | null;
  items: ReceiptItem[];
  counts: Counts;
  /** Set when a crash interrupted the apply and a later command finished it. */
  recovered?: boolean;
  /** When the last write was done (`at` is when the first was about to be). Absent in older receipts. */
  doneAt?: string;
  /** The work tree it was applied to. Absent in older receipts. */
  root?: string;
  /** Who started it. Absent in receipts written before it was recorded. */
  by?: StartedBy;
}

export interface ChainPointer {
  id: string;
  sha256: string;
}

export function newReceiptId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `r-${stamp}-${randomBytes(4).toString("hex")}`;
}

const RECEIPT_ID = /^r-\d{8}T\d{6}Z-[0-9a-f]{8}$/;

export class Receipts {
  readonly dir: string;
  constructor(store: string) {
    this.dir = storePath(store, "receipts");
  }

  private headPath(): string {
    return join(this.dir, "HEAD");
  }
  /** Where the chain legitimately starts after gc dropped older receipts. */
  private basePath(): string {
    return join(this.dir, "BASE");
  }
  fileOf(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  head(): ChainPointer | null {
    return readPointer(this.headPath());
  }

  base(): ChainPointer | null {
    return readPointer(this.basePath());
  }

  /** Appends under the store lock (the caller holds it): receipt file first, then the head moves. */
  append(r: Omit<Receipt, "prev">): Receipt {
    mkdirPrivate(this.dir);
    const full: Receipt = { ...r, prev: this.head() };
    // Written and hashed a line at a time: a receipt of 10,000 paths is ~4 MB of text, never held whole.
    const hash = createHash("sha256");
    writeFileAtomic(this.fileOf(r.id), hashed(receiptLines(full), hash));
    writeFileAtomic(this.headPath(), JSON.stringify({ id: r.id, sha256: hash.digest("hex") }) + "\n");
    return full;
  }

  read(id: string): Receipt {
    const { head, items } = this.readLazily(id);
    return { ...head, items: [...items()] };
  }

  /** `read`, with the items parsed one at a time as they are asked for (`walkLazily`): a redo of 100,000 paths never holds the receipt's text. */
  readLazily(id: string): LazyReceipt {
    if (!RECEIPT_ID.test(id) || !existsSync(this.fileOf(id))) {
      throw new UnwindError("E_SCOPE_UNKNOWN", `no receipt ${id}`, { hint: "list them with: unwind receipts" });
    }
    return lazily(this.fileOf(id));
  }

  /** Every receipt's id, newest first: the chain's order (ids name only the second), then any file off the chain. */
  ids(): string[] {
    if (!existsSync(this.dir)) return [];
    const chain = [...this.heads()].map((r) => r.id);
    const on = new Set(chain);
    const off = readdirSync(this.dir)
      .filter((f) => f.endsWith(".json") && RECEIPT_ID.test(f.slice(0, -5)) && !on.has(f.slice(0, -5)))
      .map((f) => f.slice(0, -5))
      .sort()
      .reverse();
    return [...chain, ...off];
  }

  /** Newest first, following the chain. Stops quietly at a break; `verify` reports breaks. */
  list(limit = Infinity): Receipt[] {
    const out: Receipt[] = [];
    for (const r of this.walk()) {
      if (out.length >= limit) break;
      out.push(r);
    }
    return out;
  }

  /** Each receipt's head (everything but its items, which are never parsed), newest first, following the chain. */
  *heads(): Generator<Omit<Receipt, "items">> {
    for (const r of this.walkLazily()) yield r.head;
  }

  /** `list`, one receipt at a time: a reader that keeps little of each never holds them all. */
  *walk(): Generator<Receipt> {
    for (const r of this.walkLazily()) yield { ...r.head, items: [...r.items()] };
  }

  /**
   * `walk`, with each receipt's items parsed one at a time as they are
   * asked for (a receipt written one item a line, `receiptLines`; an older
   * indented one is parsed whole): 10,000 items become small objects that
   * die young, not one tree that outlives the read.
   */
  *walkLazily(): Generator<LazyReceipt> {
    let p = this.head();
    while (p) {
      const file = this.fileOf(p.id);
      if (!existsSync(file)) return;
      const r = lazily(file);
      yield r;
      p = r.head.prev;
    }
  }

  /** Every problem in the chain, as one line each; empty when intact. */
  verify(): string[] {
    const problems: string[] = [];
    const base = this.base();
    const seen = new Set<string>();
    let p = this.head();
    while (p) {
      if (base && p.id === base.id && p.sha256 === base.sha256) break;
      if (seen.has(p.id)) {
        problems.push(`receipt chain loops at ${p.id}`);
        break;
      }
      seen.add(p.id);
      let bytes: string;
      try {
        bytes = readFileSync(this.fileOf(p.id), "utf8");
      } catch {
        problems.push(`receipt ${p.id} is missing (the chain is broken)`);
        break;
      }
      if (sha256(bytes) !== p.sha256) {
        problems.push(`receipt ${p.id} was altered (SHA-256 does not match the chain)`);
        break;
      }
      const id = p.id;
      try {
        p = (JSON.parse(bytes) as Receipt).prev;
      } catch {
        problems.push(`receipt ${id} is not valid JSON`);
        break;
      }
    }
    for (const f of readdirSync(this.dir)) {
      const id = f.replace(/\.json$/, "");
      if (f.endsWith(".json") && !seen.has(id) && problems.length === 0) {
        problems.push(`receipt ${id} is not on the chain`);
      }
    }
    return problems;
  }

  /**
   * gc: drops receipts older than `cutoff`. BASE keeps the chain's own
   * pointer to the newest dropped receipt, so `verify` knows the chain
   * legitimately ends there rather than being broken.
   */
  dropOlderThan(cutoff: number, dryRun: boolean): Receipt[] {
    const dropped: { r: Receipt; via: ChainPointer }[] = [];
    let via = this.head();
    while (via && existsSync(this.fileOf(via.id))) {
      const r = JSON.parse(readFileSync(this.fileOf(via.id), "utf8")) as Receipt;
      if (Date.parse(r.at) < cutoff) dropped.push({ r, via });
      via = r.prev;
    }
    if (dryRun || dropped.length === 0) return dropped.map((d) => d.r);
    writeFileAtomic(this.basePath(), JSON.stringify(dropped[0]!.via) + "\n");
    for (const d of dropped) unlinkSync(this.fileOf(d.r.id));
    return dropped.map((d) => d.r);
  }
}

function readPointer(path: string): ChainPointer | null {
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, "utf8")) as ChainPointer;
}

/** A receipt's head, and its items as they are read (a receipt written one item a line, `receiptLines`; an older indented one is parsed whole). */
export interface LazyReceipt {
  head: Omit<Receipt, "items">;
  items: () => Generator<ReceiptItem>;
}

function lazily(file: string): LazyReceipt {
  // The first line alone says which form this is, and is the head of a lined one.
  const lines = fileLines(file);
  const first = lines.next();
  lines.return(undefined);
  const line0 = first.done ? "" : first.value;
  let head: Omit<Receipt, "items">;
  let items: () => Generator<ReceiptItem>;
  if (line0.endsWith(`"items":[`)) {
    const { items: _none, ...h } = JSON.parse(`${line0}]}`) as Receipt;
    head = h;
    // Read again, a line at a time, when asked: 10,000 items are never one string of megabytes.
    items = function* () {
      let skip = true;
      for (const line of fileLines(file)) {
        if (skip) {
          skip = false;
          continue;
        }
        if (line.startsWith("]")) return;
        yield JSON.parse(line.endsWith(",") ? line.slice(0, -1) : line) as ReceiptItem;
      }
    };
  } else {
    const text = readFileSync(file, "utf8");
    const { items: all, ...h } = JSON.parse(text) as Receipt;
    head = h;
    items = function* () {
      yield* all;
    };
  }
  return { head, items };
}

/**
 * A receipt's bytes: its fields on the first line, then one item a line
 * (JSON either way). A receipt of 10,000 paths is a third the size it was
 * indented, and a person can still read it, or grep it, path by path.
 */
export function* receiptLines(r: Receipt): Generator<string> {
  const { items, ...head } = r;
  yield* itemLines(head, "items", items);
}

/**
 * A JSON object whose fields are `head`'s on the first line, then `key`'s
 * list one element a line: the layout receipts and intents share, written a
 * line at a time.
 */
export function* itemLines(head: object, key: string, items: readonly unknown[]): Generator<string> {
  const top = JSON.stringify(head);
  yield `${top === "{}" ? "{" : `${top.slice(0, -1)},`}${JSON.stringify(key)}:[\n`;
  for (let k = 0; k < items.length; k++) yield `${JSON.stringify(items[k])}${k < items.length - 1 ? "," : ""}\n`;
  yield "]}\n";
}

/** Passes `lines` through, hashing each. */
function* hashed(lines: Iterable<string>, hash: Hash): Generator<string> {
  for (const line of lines) {
    hash.update(line);
    yield line;
  }
}
