import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, makeRepo, read, unwind, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";

/*
 * An undo reads each file it replaces once: the plan reads and hashes it,
 * and before the intent the apply takes what the path holds from that read
 * where the file's stat data proves it unchanged since (src/apply/apply.ts,
 * `currentState`; the rule is `unchangedSince`, src/capture/observe.ts).
 * The files here are too many bytes for the reader's cache (16 MiB), so
 * without the rule each is read a second time.
 */

const FILES = 240;
const SIZE = 96 * 1024;
const name = (i: number) => `src/f${String(i).padStart(3, "0")}.txt`;
const body = (i: number, tag: string) => Buffer.alloc(SIZE, `${tag} ${i}\n`);

/** A repository whose one Claude Bash call rewrote every file (29 MB in all); the session id. */
function rewritten(): { root: string; session: string } {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < FILES; i++) files[name(i)] = body(i, "before");
  const root = makeRepo(files);
  const session = "reads-aaaa-1111";
  claudeCall(root, session, "Bash", { command: "./rewrite-all" }, () => {
    for (let i = 0; i < FILES; i++) write(root, name(i), body(i, "after"));
  });
  return { root, session };
}

/** `unwind undo --session`, and how many times it opened each work-tree file for reading (strace sees every openat). */
function undoCountingReads(root: string, session: string): { code: number | null; opens: Map<string, number> } {
  const log = join(mkdtempSync(join(tmpdir(), "unwind-strace-")), "trace");
  const r = spawnSync("strace", ["-f", "-e", "trace=openat", "-o", log, process.execPath, BIN, "undo", "--session", session, "--json"], { cwd: root, encoding: "utf8", timeout: 120_000 });
  const opens = new Map<string, number>();
  for (const line of readFileSync(log, "utf8").split("\n")) {
    // Opened through the directory it was checked in (/proc/self/fd/N/NAME, src/sys/bound-dir.ts): the names are unique.
    const m = /\/(f\d{3}\.txt)", O_RDONLY/.exec(line);
    if (m) opens.set(m[1]!, (opens.get(m[1]!) ?? 0) + 1);
  }
  return { code: r.status, opens };
}

describe("an undo reads each file it replaces once where its stat data vouches for the plan's read", () => {
  it("every file opened once, and every one restored; control: with times the clock cannot vouch for, each is read again, and restored the same", () => {
    const main = rewritten();
    const once = undoCountingReads(main.root, main.session);
    expect(once.code).toBe(0);
    expect([once.opens.size, Math.max(...once.opens.values())]).toEqual([FILES, 1]);
    for (const i of [0, FILES >> 1, FILES - 1]) expect(read(main.root, name(i))).toBe(body(i, "before").toString());

    // Control: a modification time after the undo's clock (an hour ahead) proves nothing (`unchangedSince`),
    // so the apply reads each file again to know what it holds, and the undo does the same work.
    const control = rewritten();
    const later = Date.now() / 1000 + 3600;
    for (let i = 0; i < FILES; i++) utimesSync(join(control.root, name(i)), later, later);
    const twice = undoCountingReads(control.root, control.session);
    expect(twice.code).toBe(0);
    // The plan's read, the apply's, and the recheck's right before the write, which goes by the same rule.
    expect([twice.opens.size, Math.min(...twice.opens.values())]).toEqual([FILES, 3]);
    for (const i of [0, FILES >> 1, FILES - 1]) expect(read(control.root, name(i))).toBe(body(i, "before").toString());
    expect(unwind(control.root, ["status", "--json"]).code).toBe(0);
  }, 180_000);
});
