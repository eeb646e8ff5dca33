/**
 * The two library methods the web UI added (docs/design.md, "unwind ui"):
 * `content`, a recorded state's bytes by hash (never by path), verified;
 * and `stamp`, the record's cheap fingerprint behind the live timeline.
 */
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { open } from "../../src/index.js";
import { disk, git, rejection, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";
import { A_TS, A_TS2, twoSessions } from "../session-fixture.js";

const A = "content-aaaa-1111";
const B = "content-bbbb-2222";

describe("library: content by hash", () => {
  it("reads a file capture's pre and post from the CAS and a tree snapshot's from git, verified, writing nothing", async () => {
    const root = twoSessions(A, B);
    const u = await open({ root });
    // `changes` may keep its change set (src/store/changeset-cache.ts): what is read here is content alone.
    const entries = (await u.changes({ session: A })).entries;
    const before = disk(root);
    const edit = entries.find((e) => e.path === "src/a.ts")!;
    expect((await u.content(edit.pre!)).bytes.toString()).toBe(A_TS);
    expect((await u.content({ sha256: edit.post!.sha256 })).bytes.toString()).toBe(A_TS2);
    const gen = entries.find((e) => e.path === "gen/out.txt")!;
    const byOid = await u.content({ oid: gen.post!.oid });
    expect([byOid.bytes.toString(), byOid.size]).toEqual(["generated\n", 10]);
    expect(disk(root)).toEqual(before);
  });

  it("refuses what is not a hash (exit 2), names what is not stored (exit 3), and a damaged blob is E_STORE_DAMAGED (exit 4)", async () => {
    const root = twoSessions(A, B);
    const u = await open({ root });
    for (const ref of [{}, { sha256: "../../etc/passwd" }, { sha256: "A".repeat(64) }, { oid: "src/a.ts" }]) {
      expect((await rejection(u.content(ref))).exit, JSON.stringify(ref)).toBe(2);
    }
    const missing = await rejection(u.content({ sha256: "0".repeat(64) }));
    expect([missing.code, missing.exit]).toEqual(["E_SCOPE_UNKNOWN", 3]);
    const edit = (await u.changes({ session: A })).entries.find((e) => e.path === "src/a.ts")!;
    const sha = edit.pre!.sha256!;
    const blob = findBlob(join(root, ".git", "unwind", "cas"), sha);
    writeFileSync(blob, "tampered");
    const damaged = await rejection(u.content({ sha256: sha }));
    expect([damaged.code, damaged.exit]).toEqual(["E_STORE_DAMAGED", 4]);
  });
});

describe("library: what a work tree path holds now", () => {
  it("reads a file and a symlink's target without following links, refuses paths outside the root, in .git or in the store, and writes nothing", async () => {
    const root = twoSessions(A, B);
    mkdirSync(join(root, "real"));
    write(root, "real/x.txt", "through a link\n");
    symlinkSync("real", join(root, "linked"));
    symlinkSync("src/a.ts", join(root, "to-a"));
    const u = await open({ root });
    const before = disk(root);
    const a = u.current("src/a.ts");
    expect([(await a).kind, (await a).bytes?.toString(), (await a).size]).toEqual(["file", A_TS2, A_TS2.length]);
    expect(await u.current("./src//b.ts")).toMatchObject({ path: "src/b.ts", kind: "file", oid: git(root, "hash-object", "src/b.ts").trim() });
    expect(await u.current("to-a")).toMatchObject({ kind: "symlink", bytes: Buffer.from("src/a.ts") });
    expect(await u.current("linked/x.txt")).toMatchObject({ kind: "blocked", bytes: null });
    expect(await u.current("nope.txt")).toMatchObject({ kind: "absent", bytes: null });
    expect(await u.current("src")).toMatchObject({ kind: "dir", bytes: null });
    for (const bad of ["../outside", "/etc/passwd", ".git/config", "sub/.git/HEAD", ".", "a\0b"]) {
      expect((await rejection(u.current(bad))).exit, bad).toBe(2);
    }
    expect(disk(root)).toEqual(before);
  });
});

describe("library: the record's stamp", () => {
  it("stays while nothing is recorded (reads included) and changes with a capture, a snapshot and a receipt", async () => {
    const root = twoSessions(A, B);
    const u = await open({ root });
    const s0 = (await u.stamp()).stamp;
    await u.changes({ session: B });
    await u.plan({ session: B });
    write(root, "README.md", "# a person's edit: not a record\n");
    expect((await u.stamp()).stamp).toBe(s0);
    claudeCall(root, B, "Write", { file_path: join(root, "src/c.ts"), content: "c\n" }, () => write(root, "src/c.ts", "c\n"));
    const s1 = (await u.stamp()).stamp;
    expect(s1).not.toBe(s0);
    await u.snapshot({ label: "x" });
    const s2 = (await u.stamp()).stamp;
    expect(s2).not.toBe(s1);
    await u.undo({ session: B });
    expect((await u.stamp()).stamp).not.toBe(s2);
  });
});

function findBlob(dir: string, sha: string): string {
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) if (e.isFile() && e.name.includes(sha.slice(2))) return join(e.parentPath, e.name);
  throw new Error(`no blob ${sha} under ${dir}`);
}
