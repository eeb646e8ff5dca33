import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { open } from "../../src/index.js";
import { git, makeRepo, read, tempDir, write } from "../helpers.js";
import { claudeCall, claudePayload, hook } from "../journal-helpers.js";

const A = "safety-aaaa-1";
const B = "safety-bbbb-2";

describe("work written between a session's own calls is never taken back with it", () => {
  it("another session's edit in between is a later-write conflict naming it; --force takes it all back", async () => {
    const root = makeRepo({ "f.txt": "base\n" });
    claudeCall(root, A, "Write", { file_path: "f.txt", content: "A1" }, () => write(root, "f.txt", "base\nA1\n"));
    claudeCall(root, B, "Write", { file_path: "f.txt", content: "B" }, () => write(root, "f.txt", "base\nA1\nB-work\n"));
    claudeCall(root, A, "Write", { file_path: "f.txt", content: "A2" }, () => write(root, "f.txt", "base\nA1\nB-work\nA2\n"));
    const u = await open({ root });
    const r = await u.undo({ session: A });
    expect(r.partial).toBe(true);
    expect(r.items[0]).toMatchObject({ path: "f.txt", action: "conflict", reason: "later-write" });
    expect(r.items[0]!.detail).toContain(`claude:${B}`);
    expect(read(root, "f.txt")).toBe("base\nA1\nB-work\nA2\n");
    expect((await u.undo({ session: A }, { force: true })).items[0]!.action).toBe("restore");
    expect(read(root, "f.txt")).toBe("base\n");
  });

  it("a person's edit in between (no record, only the gap) is changed-since; without the gap the session is undone", async () => {
    const root = makeRepo({ "f.txt": "base\n" });
    claudeCall(root, A, "Write", { file_path: "f.txt", content: "A1" }, () => write(root, "f.txt", "A1\n"));
    write(root, "f.txt", "A1\nhuman\n");
    claudeCall(root, A, "Write", { file_path: "f.txt", content: "A2" }, () => write(root, "f.txt", "A1\nhuman\nA2\n"));
    const r = await (await open({ root })).undo({ session: A });
    expect(r.items[0]).toMatchObject({ action: "conflict", reason: "changed-since" });
    expect(r.items[0]!.detail).toContain("between this scope's own writes");

    const clean = makeRepo({ "f.txt": "base\n" });
    claudeCall(clean, A, "Write", { file_path: "f.txt", content: "A1" }, () => write(clean, "f.txt", "A1\n"));
    claudeCall(clean, A, "Write", { file_path: "f.txt", content: "A2" }, () => write(clean, "f.txt", "A1\nA2\n"));
    expect((await (await open({ root: clean })).undo({ session: A })).items[0]!.action).toBe("restore");
    expect(read(clean, "f.txt")).toBe("base\n");
  });
});

describe("snapshots stay right", () => {
  it("a leftover index.lock from a killed git does not stop snapshots", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const u = await open({ root });
    await u.snapshot();
    const dir = join(root, ".git", "unwind", "index");
    const idx = readdirSync(dir).find((f) => f.endsWith(".index"))!;
    writeFileSync(join(dir, `${idx}.lock`), "");
    write(root, "a.txt", "changed\n");
    const r = await u.snapshot();
    expect(r.id).toMatch(/^s-/);
    expect(existsSync(join(dir, `${idx}.lock`))).toBe(false);
  });

  it("a file the user marked assume-unchanged is still captured", async () => {
    const root = makeRepo({ cfg: "v1\n" });
    git(root, "update-index", "--assume-unchanged", "cfg");
    expect(git(root, "ls-files", "-v", "cfg")).toBe("h cfg\n"); // the control: git itself no longer looks
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    write(root, "cfg", "v2 by the agent\n");
    const r = await u.restore(id);
    expect(r.items).toMatchObject([{ path: "cfg", action: "restore", reason: null }]);
    expect(read(root, "cfg")).toBe("v1\n");
  });

  it("a shell call whose pre capture failed is diffed from the previous snapshot, not lost, and not taken back unforced (a person may have written in the gap)", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    await (await open({ root })).snapshot();
    // The pre capture times out; the post succeeds.
    const payload = (event: "PreToolUse" | "PostToolUse") => claudePayload(root, A, event, "Bash", { command: "echo x > x.txt" }, "toolu_pre_lost");
    expect(hook(root, "claude", payload("PreToolUse"), { UNWIND_HOOK_BUDGET_MS: "1" }).code).toBe(0);
    write(root, "x.txt", "x\n");
    expect(hook(root, "claude", payload("PostToolUse")).code).toBe(0);
    const u = await open({ root });
    expect((await u.changes({ session: A })).entries.map((e) => e.path)).toEqual(["x.txt"]);
    expect((await u.undo({ session: A }, { dryRun: true })).items).toMatchObject([{ path: "x.txt", action: "conflict", reason: "changed-since" }]);
    const r = await u.undo({ session: A }, { force: true });
    expect(r.items).toMatchObject([{ path: "x.txt", action: "delete", reason: null }]);
  });
});

describe("restored files keep their permissions", () => {
  it("a 0600 file stays 0600; an exec bit comes back as recorded", async () => {
    const root = makeRepo({ "run.sh": { content: "#!/bin/sh\n", mode: 0o755 } });
    write(root, ".env", "SECRET=1\n");
    chmodSync(join(root, ".env"), 0o600);
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    write(root, ".env", "SECRET=2\n");
    chmodSync(join(root, "run.sh"), 0o644);
    expect((await u.restore(id)).partial).toBe(false);
    expect(read(root, ".env")).toBe("SECRET=1\n");
    expect(statSync(join(root, ".env")).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, "run.sh")).mode & 0o111).not.toBe(0);
  });
  it("bits the umask would narrow are kept: a 0666 file stays 0666 (the temp file is created under the umask, then set)", async () => {
    const root = makeRepo({ "shared.txt": "v1\n" });
    chmodSync(join(root, "shared.txt"), 0o666);
    const u = await open({ root });
    const id = (await u.snapshot()).id;
    write(root, "shared.txt", "v2\n");
    const old = process.umask(0o022);
    try {
      expect((await u.restore(id)).partial).toBe(false);
    } finally {
      process.umask(old);
    }
    expect(read(root, "shared.txt")).toBe("v1\n");
    expect(statSync(join(root, "shared.txt")).mode & 0o777).toBe(0o666);
  });
});

describe("the store is never captured or restored", () => {
  it("even when UNWIND_STORE names a folder inside the root through a symlink", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const link = join(tempDir(), "link");
    symlinkSync(root, link);
    vi.stubEnv("UNWIND_STORE", join(link, "store-inside"));
    try {
      const u = await open({ root });
      const id = (await u.snapshot()).id;
      write(root, "a.txt", "b\n");
      await u.snapshot();
      const r = await u.restore(id, { dryRun: true });
      expect(r.items.map((i) => i.path)).toEqual(["a.txt"]);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(existsSync(join(root, "store-inside", "receipts"))).toBe(true);
  });
});

describe("the lock", () => {
  it("a lock file left empty by an older crash is taken over once it is clearly stale; a fresh one is waited for", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const store = join(root, ".git", "unwind");
    mkdirSync(store, { recursive: true });
    writeFileSync(join(store, "lock"), "");
    vi.stubEnv("UNWIND_LOCK_TIMEOUT_MS", "300");
    try {
      const u = await open({ root });
      await expect(u.snapshot()).rejects.toMatchObject({ code: "E_LOCKED", exit: 1 });
      const old = new Date(Date.now() - 60_000);
      utimesSync(join(store, "lock"), old, old);
      expect((await u.snapshot()).id).toMatch(/^s-/);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
