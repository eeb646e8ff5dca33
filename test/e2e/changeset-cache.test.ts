import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deserialize, serialize } from "node:v8";
import { describe, expect, it } from "vitest";
import { open } from "../../src/index.js";
import { makeRepo, read, unwind, write } from "../helpers.js";
import { claudeCall, claudePayload, hook } from "../journal-helpers.js";

/*
 * A command keeps the change set it folded on disk, under the record's key
 * (src/store/changeset-cache.ts), and the next command asking for the same
 * scope reads it instead of folding the whole record again. What is kept
 * must never be served once the record has moved on, must never be read
 * damaged, and must never steer what an undo writes.
 */

const write1 = (root: string, session: string, rel: string, text: string) => claudeCall(root, session, "Write", { file_path: join(root, rel), content: text }, () => write(root, rel, text));
const cacheDir = (root: string) => join(root, ".git", "unwind", "cache");
const keptFiles = (root: string) => (existsSync(cacheDir(root)) ? readdirSync(cacheDir(root)).filter((f) => f.startsWith("changes-")) : []);
const changed = (root: string, args: string[]) => {
  const r = unwind(root, ["changes", ...args, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { entries: { change: string; path: string }[] }).entries.map((e) => `${e.change} ${e.path}`);
};

/** The one kept file's document, read past its sum line. */
const keptDoc = (file: string) => deserialize(readFileSync(file).subarray(17)) as { code: string; body: Uint8Array };

/** Writes a kept file's document with a sum that matches: a kept file as unwind would read it. */
const writeKept = (file: string, doc: object) => {
  const body = serialize(doc);
  writeFileSync(file, Buffer.concat([Buffer.from(`${createHash("sha256").update(body).digest("hex").slice(0, 16)}\n`), body]));
};

/** Rewrites the one kept file through `edit` of its change set. */
function forge(root: string, edit: (cs: { cs: { entries: { path: string }[] } }) => void): void {
  const file = join(cacheDir(root), keptFiles(root)[0]!);
  const doc = keptDoc(file);
  const value = deserialize(doc.body) as { cs: { entries: { path: string }[] } };
  edit(value);
  writeKept(file, { ...doc, body: serialize(value) });
}

describe("a change set kept on disk for the next command", () => {
  it("is what the next `changes` reads, and never what an undo writes by", () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    write1(root, "s1", "a.txt", "A\n");
    expect(keptFiles(root)).toEqual([]);
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt"]);
    expect(keptFiles(root)).toHaveLength(1);
    // Read, not folded again: a kept change set that names another path is what the next look lists.
    forge(root, (v) => {
      v.cs.entries[0]!.path = "forged.txt";
    });
    expect(changed(root, ["--session", "s1"])).toEqual(["modified forged.txt"]);
    // The undo folds the record itself under the lock: it takes back a.txt, the path the record names.
    const u = unwind(root, ["undo", "--session", "s1", "--json"]);
    expect(u.code, u.stderr).toBe(0);
    expect((JSON.parse(u.stdout) as { items: { path: string; action: string }[] }).items.map((i) => `${i.action} ${i.path}`)).toEqual(["restore a.txt"]);
    expect(read(root, "a.txt")).toBe("a\n");
    expect(existsSync(join(root, "forged.txt"))).toBe(false);
  });

  it("is folded again once the record moves on: a new call, an undo, a redo", () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    write1(root, "s1", "a.txt", "A\n");
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt"]);
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt"]);
    write1(root, "s1", "b.txt", "B\n");
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt", "modified b.txt"]);
    const u = unwind(root, ["undo", "--session", "s1", "--json"]);
    expect(u.code, u.stderr).toBe(0);
    expect(changed(root, ["--session", "s1"])).toEqual([]);
    expect(unwind(root, ["redo", "--last"]).code).toBe(0);
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt", "modified b.txt"]);
    // Another session's own scope is its own: each look at either gives its own change set.
    write1(root, "s2", "a.txt", "AA\n");
    expect(changed(root, ["--session", "s2"])).toEqual(["modified a.txt"]);
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt", "modified b.txt"]);
  });

  it("is never read damaged, nor folded by another build", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    write1(root, "s1", "a.txt", "A\n");
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt"]);
    const [name] = keptFiles(root);
    const file = join(cacheDir(root), name!);
    // A forged path whose sum no longer matches: the file is folded again, and written anew.
    forge(root, (v) => {
      v.cs.entries[0]!.path = "forged.txt";
    });
    const raw = readFileSync(file);
    raw[0] = raw[0] === 0x30 ? 0x31 : 0x30;
    writeFileSync(file, raw);
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt"]);
    expect(readFileSync(file).equals(raw)).toBe(false);
    // A build of other code: what it kept is not this one's to read.
    forge(root, (v) => {
      v.cs.entries[0]!.path = "forged.txt";
    });
    expect(changed(root, ["--session", "s1"])).toEqual(["modified forged.txt"]); // the control: as kept, it is read
    writeKept(file, { ...keptDoc(file), code: "another" });
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt"]);
  });

  it("is not kept while a call is open", () => {
    const root = makeRepo({ "x.txt": "0\n" });
    write1(root, "s1", "a.txt", "A\n");
    const input = { command: "echo 1 > x.txt", description: "x" };
    expect(hook(root, "claude", claudePayload(root, "shell", "PreToolUse", "Bash", input, "toolu_open1")).code).toBe(0);
    write(root, "x.txt", "1\n");
    expect(changed(root, ["--session", "s1"])).toEqual(["added a.txt"]);
    expect(keptFiles(root)).toEqual([]);
    // The control: once the call is closed by its post, the same look keeps what it folded.
    expect(hook(root, "claude", claudePayload(root, "shell", "PostToolUse", "Bash", input, "toolu_open1")).code).toBe(0);
    expect(changed(root, ["--session", "shell"])).toEqual(["modified x.txt"]);
    expect(keptFiles(root)).toHaveLength(1);
  });

  it("is not kept by a dry run, which changes nothing at all, but is read by one", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    write1(root, "s1", "a.txt", "A\n");
    const dry = (code = 0) => {
      const r = unwind(root, ["undo", "--session", "s1", "--dry-run", "--json"]);
      expect(r.code, r.stderr).toBe(code);
      return (JSON.parse(r.stdout) as { items: { path: string }[] }).items.map((i) => i.path);
    };
    expect(dry()).toEqual(["a.txt"]);
    expect(keptFiles(root)).toEqual([]);
    // The control: `changes` keeps it, and the preview then reads it (a forged one shows).
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt"]);
    expect(keptFiles(root)).toHaveLength(1);
    forge(root, (v) => {
      v.cs.entries[0]!.path = "forged.txt";
    });
    // What the record names is not at forged.txt: the preview plans a conflict there (exit 1). The undo itself folds the record.
    expect(dry(1)).toEqual(["forged.txt"]);
  });

  it("keeps the newest within 64 MiB in all, and gc drops them; a dry run of gc drops none", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    write1(root, "s1", "a.txt", "A\n");
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt"]);
    // The scope's own goes, to be folded and written again; three older kept files of 30 MiB each (sparse: their size is what counts).
    for (const f of keptFiles(root)) rmSync(join(cacheDir(root), f));
    const old = Date.now() / 1000 - 3600;
    for (const k of [1, 2, 3]) {
      const f = join(cacheDir(root), `changes-${String(k).repeat(16)}.bin`);
      writeFileSync(f, "");
      truncateSync(f, 30 * 1024 * 1024);
      utimesSync(f, old + k, old + k);
    }
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt"]);
    // The newest two of 30 MiB fit beside the scope's own; the oldest goes.
    const left = keptFiles(root);
    expect(left.filter((f) => /^changes-(\d)\1{15}\.bin$/.test(f)).sort()).toEqual(["changes-2222222222222222.bin", "changes-3333333333333333.bin"]);
    expect(left).toHaveLength(3);
    expect(unwind(root, ["gc", "--dry-run"]).code).toBe(0);
    expect(keptFiles(root)).toHaveLength(3);
    expect(unwind(root, ["gc"]).code).toBe(0);
    expect(keptFiles(root)).toEqual([]);
    expect(changed(root, ["--session", "s1"])).toEqual(["modified a.txt"]);
  });

  it("keeps the newest few", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const calls = Array.from({ length: 20 }, (_, k) => write1(root, "s1", `f${k}.txt`, `${k}\n`));
    const u = await open({ root });
    for (const call of calls) expect((await u.changes({ session: "s1", call })).entries).toHaveLength(1);
    expect(keptFiles(root)).toHaveLength(16);
  });
});
