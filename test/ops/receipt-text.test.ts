/**
 * Receipts are written one item a line and read item by item; receipts
 * written indented by earlier versions read the same. Real files in a
 * temporary store.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256 } from "../../src/domain/hash.js";
import type { RepoPath } from "../../src/domain/types.js";
import { type Receipt, type ReceiptItem, Receipts } from "../../src/store/receipts.js";
import { fileLines } from "../../src/sys/files.js";
import { writeFileAtomic } from "../../src/sys/atomic.js";
import { type Intent, pendingDir, pendingIntents, writeIntent } from "../../src/apply/intent.js";
import { tempDir } from "../helpers.js";

const item = (path: string, n: number): ReceiptItem => ({
  path: path as RepoPath,
  action: "restore",
  reason: null,
  before: { kind: "file", mode: "100644", size: n, sha256: sha256(Buffer.from(`b${n}`)) },
  after: null,
});

const receipt = (id: string, items: ReceiptItem[]): Omit<Receipt, "prev"> => ({
  v: 1,
  id,
  kind: "undo",
  at: "2026-12-01T00:00:00.000Z",
  scope: { kind: "session", id: "s" },
  items,
  counts: { restore: items.length, delete: 0, merge: 0, skip: 0, conflict: 0 },
});

describe("receipt text", () => {
  it("one item a line, one JSON document, and read back item by item exactly as written", () => {
    const store = tempDir();
    const rs = new Receipts(store);
    const items = [item("a.txt", 1), item('odd "name",\n.txt', 2), item("z/b.txt", 3)];
    const full = rs.append(receipt("r-20261201T000000Z-0000000a", items));
    const text = readFileSync(rs.fileOf(full.id), "utf8");
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(items.length + 2);
    expect(lines[0]!.endsWith('"items":[')).toBe(true);
    expect(JSON.parse(text)).toEqual(full);
    const [lazy] = [...rs.walkLazily()];
    expect([...lazy!.items()]).toEqual(items);
    expect(rs.list()).toEqual([full]);
    expect(rs.verify()).toEqual([]);
  });
  it("an empty receipt reads as one with no items", () => {
    const rs = new Receipts(tempDir());
    const full = rs.append(receipt("r-20261201T000000Z-0000000b", []));
    expect(rs.list()).toEqual([full]);
  });
  it("a receipt written indented (earlier versions) reads the same, on the same chain", () => {
    const store = tempDir();
    const rs = new Receipts(store);
    const old = rs.append(receipt("r-20261201T000000Z-0000000c", [item("old.txt", 1)]));
    const indented = `${JSON.stringify(old, null, 2)}\n`;
    writeFileSync(rs.fileOf(old.id), indented);
    writeFileSync(join(store, "receipts", "HEAD"), `${JSON.stringify({ id: old.id, sha256: sha256(indented) })}\n`);
    const next = rs.append(receipt("r-20261201T000001Z-0000000d", [item("new.txt", 2)]));
    expect(rs.list()).toEqual([next, old]);
    expect([...rs.walkLazily()].map((r) => [r.head.id, [...r.items()].map((i) => i.path)])).toEqual([
      [next.id, ["new.txt"]],
      [old.id, ["old.txt"]],
    ]);
    expect(rs.verify()).toEqual([]);
  });
});

describe("a receipt is read a line at a time, never as one string", () => {
  it("lines cross the 64 KiB reads intact, multi-byte characters included, the last without a newline too", () => {
    const file = join(tempDir(), "lines.txt");
    // Lines of odd lengths with two-byte and four-byte characters, so read boundaries fall inside lines and characters.
    const lines = Array.from({ length: 3000 }, (_, i) => `${i} ${"é".repeat(i % 97)}${"😀".repeat(i % 13)} ${"x".repeat((i * 37) % 211)}`);
    writeFileSync(file, lines.join("\n"));
    expect([...fileLines(file)]).toEqual(lines);
    writeFileSync(file, `${lines.join("\n")}\n`);
    expect([...fileLines(file)]).toEqual(lines);
  });

  it("a receipt of 3,000 items of long names reads back item by item exactly as written", () => {
    const rs = new Receipts(tempDir());
    const items = Array.from({ length: 3000 }, (_, i) => item(`dir-é/${"😀".repeat(i % 7)}${"n".repeat(i % 300)}-${i}.txt`, i));
    const full = rs.append(receipt("r-20261201T000000Z-0000000e", items));
    const [lazy] = [...rs.walkLazily()];
    expect(lazy!.head.id).toBe(full.id);
    expect([...lazy!.items()]).toEqual(items);
  });
});

describe("receipts and intents are written a line at a time, never as one string", () => {
  it("a receipt larger than a write's 64 KiB: the same document, its HEAD hashing the bytes on disk", () => {
    const store = tempDir();
    const rs = new Receipts(store);
    const items = Array.from({ length: 3000 }, (_, i) => item(`dir ${i % 7}/é😀 ${i}.txt`, i));
    const full = rs.append(receipt("r-20261201T000000Z-0000000e", items));
    const bytes = readFileSync(rs.fileOf(full.id));
    expect(bytes.length).toBeGreaterThan(4 << 16);
    expect(JSON.parse(bytes.toString("utf8"))).toEqual(full);
    expect(JSON.parse(readFileSync(join(store, "receipts", "HEAD"), "utf8")).sha256).toBe(sha256(bytes));
    expect(rs.verify()).toEqual([]);
  });

  it("writeFileAtomic of pieces writes exactly their concatenation", () => {
    const dir = tempDir();
    const pieces = Array.from({ length: 5000 }, (_, i) => `${"é".repeat(i % 31)}${"😀".repeat(i % 5)}-${i}\n`);
    writeFileAtomic(join(dir, "out"), pieces);
    expect(readFileSync(join(dir, "out"), "utf8")).toBe(pieces.join(""));
    writeFileAtomic(join(dir, "empty"), []);
    expect(readFileSync(join(dir, "empty"))).toHaveLength(0);
  });

  it("an intent is written one item a line and read back whole; one written on one line (earlier versions) reads the same", () => {
    const store = tempDir();
    const items = Array.from({ length: 2000 }, (_, i) => item(`d/${i}.txt`, i));
    const intent: Intent = { v: 1, receipt: "r-20261201T000000Z-0000000f", kind: "undo", at: "2026-12-01T00:00:00.000Z", scope: { kind: "session", id: "s" }, items, keepDirs: ["d"] };
    writeIntent(store, intent);
    const file = join(pendingDir(store), `${intent.receipt}.json`);
    expect(readFileSync(file, "utf8").split("\n")).toHaveLength(items.length + 3);
    expect(pendingIntents(store)).toEqual([intent]);
    writeFileSync(file, `${JSON.stringify(intent)}\n`);
    expect(pendingIntents(store)).toEqual([intent]);
  });
});
