import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, tempDir, unwind, write } from "../helpers.js";
import { claudePayload, hook } from "../journal-helpers.js";

/*
 * SPEC section 2: the store holds bytes git never stores (an ignored .env a
 * file tool wrote), so it is private to its user, and a store that is a
 * symlink, another user's, or writable by others is refused.
 */

const ROOT_USER = process.getuid?.() === 0;
/** An unprivileged user to read as (running as root only). */
const NOBODY = 65534;

/** Every directory and file under `dir` (itself included), without following links. */
function entries(dir: string): { path: string; dir: boolean; mode: number }[] {
  const st = lstatSync(dir);
  const out = [{ path: dir, dir: st.isDirectory(), mode: st.mode & 0o7777 }];
  if (st.isDirectory()) for (const name of readdirSync(dir)) out.push(...entries(join(dir, name)));
  return out;
}

/** Directories of `store` that group or others may enter, read or write. */
function openDirs(store: string): string[] {
  return entries(store)
    .filter((e) => e.dir && (e.mode & 0o077) !== 0)
    .map((e) => `${e.path.slice(store.length) || "/"} ${e.mode.toString(8)}`);
}

/** Whether `path` can be read by the unprivileged user: a real `cat` as that user. */
function readableByOthers(path: string): boolean {
  return spawnSync("cat", [path], { uid: NOBODY, gid: NOBODY, stdio: "ignore" }).status === 0;
}

/** One Write call's pre hook on `file` (Claude Code, its project named), exit 0 and silent. */
function writeHook(root: string, file: string, id: string, env: Record<string, string> = {}) {
  const r = hook(root, "claude", claudePayload(root, "sess-1", "PreToolUse", "Write", { file_path: join(root, file), content: "x" }, id), { CLAUDE_PROJECT_DIR: root, ...env });
  expect([r.code, r.stdout, r.stderr]).toEqual([0, "", ""]);
}

const journalOf = (store: string) => (existsSync(join(store, "journal")) ? readdirSync(join(store, "journal")).filter((n) => n.endsWith(".jsonl")) : []);

describe("the store is private to its user", () => {
  it("an ignored 0600 .env captured by a hook: every directory of the store is 0700, and no other user can read anything in it", () => {
    const root = makeRepo({ ".gitignore": ".env\n", "a.txt": "a\n" });
    writeFileSync(join(root, ".env"), "API_KEY=secret\n", { mode: 0o600 });
    writeHook(root, ".env", "toolu_env");
    unwind(root, ["snapshot"]); // the private index and what is kept beside it
    const store = join(root, ".git", "unwind");
    expect(readFileSync(join(store, "journal", journalOf(store)[0]!), "utf8")).toContain('"path":".env"'); // captured
    expect(lstatSync(store).mode & 0o777).toBe(0o700);
    expect(openDirs(store)).toEqual([]);
    if (ROOT_USER) {
      chmodSync(root, 0o755); // the temporary directory itself is 0700: open it, as a home directory is
      expect(readableByOthers(join(root, "a.txt")), "control: another user reads the work tree").toBe(true);
      const files = entries(store).filter((e) => !e.dir);
      expect(files.length).toBeGreaterThan(3);
      expect(files.filter((f) => readableByOthers(f.path)).map((f) => f.path)).toEqual([]);
    }
  });

  it("a folder without git: its store, the private git directory included, is 0700 throughout", () => {
    const root = tempDir();
    write(root, "notes.md", "v1\n");
    writeHook(root, "notes.md", "toolu_n1");
    expect(unwind(root, ["snapshot"]).code).toBe(0);
    write(root, "more/new.txt", "n\n");
    expect(unwind(root, ["snapshot"]).code).toBe(0);
    const store = join(root, ".unwind");
    expect(existsSync(join(store, "git", "HEAD"))).toBe(true);
    expect(openDirs(store)).toEqual([]);
  });

  it("a store from before (directories 0755) is made private by the next command, and by the next hook", () => {
    for (const next of ["status", "hook"] as const) {
      const root = makeRepo({ "a.txt": "a\n" });
      writeHook(root, "a.txt", "toolu_a1");
      expect(unwind(root, ["snapshot"]).code).toBe(0);
      const store = join(root, ".git", "unwind");
      for (const e of entries(store)) if (e.dir) chmodSync(e.path, 0o755);
      expect(openDirs(store).length, "control: the store is open as stores were").toBeGreaterThan(3);
      if (next === "status") expect(unwind(root, ["status"]).code).toBe(0);
      else writeHook(root, "a.txt", "toolu_a2");
      expect(openDirs(store), next).toEqual([]);
      expect(lstatSync(store).mode & 0o777).toBe(0o700);
    }
  });

  it("once: the top directory's mode says it was done, so a later call walks nothing", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    writeHook(root, "a.txt", "toolu_a1");
    const store = join(root, ".git", "unwind");
    chmodSync(join(store, "journal"), 0o755); // opened by hand inside a store already private
    expect(unwind(root, ["status"]).code).toBe(0);
    expect(lstatSync(join(store, "journal")).mode & 0o777).toBe(0o755);
  });
});

describe("a store that cannot be trusted is refused", () => {
  it(".git/unwind a symlink to another directory: a command refuses it (exit 4), a hook records nothing; nothing is written where it points", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const elsewhere = tempDir();
    chmodSync(elsewhere, 0o777); // as found: a directory of another user, open to all
    const store = join(root, ".git", "unwind");
    symlinkSync(elsewhere, store);
    for (const args of [["snapshot"], ["status"], ["sessions"], ["undo", "--session", "x", "--dry-run"]]) {
      const r = unwind(root, args);
      expect(r.code, args.join(" ")).toBe(4);
      expect(r.stderr.trim().split("\n")).toEqual([expect.stringMatching(/the store .*\.git\/unwind is a symlink \(to .*\): unwind does not follow it.*remove the link/)]);
    }
    write(root, "a.txt", "changed\n");
    writeHook(root, "a.txt", "toolu_l1");
    const shell = hook(root, "claude", claudePayload(root, "sess-1", "PreToolUse", "Bash", { command: "true" }, "toolu_l2"), { CLAUDE_PROJECT_DIR: root });
    expect([shell.code, shell.stdout, shell.stderr]).toEqual([0, "", ""]);
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(lstatSync(store).isSymbolicLink()).toBe(true);

    // Control: the same directory in place of the link is the store, and is used.
    rmSync(store);
    renameSync(elsewhere, store);
    chmodSync(store, 0o700);
    writeHook(root, "a.txt", "toolu_l3");
    expect(journalOf(store)).toHaveLength(1);
    expect(unwind(root, ["snapshot"]).code).toBe(0);
  });

  it("<root>/.unwind a symlink, in a folder without git: refused the same way", () => {
    const root = tempDir();
    write(root, "a.txt", "a\n");
    const elsewhere = tempDir();
    symlinkSync(elsewhere, join(root, ".unwind"));
    const r = unwind(root, ["snapshot"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/\.unwind is a symlink/);
    writeHook(root, "a.txt", "toolu_p1");
    expect(readdirSync(elsewhere)).toEqual([]);
    // Control: the link gone, the folder gets a store of its own.
    rmSync(join(root, ".unwind"));
    expect(unwind(root, ["snapshot"]).code).toBe(0);
    expect(lstatSync(join(root, ".unwind")).isDirectory()).toBe(true);
  });

  it("UNWIND_STORE through a symlink names the directory it leads to, which is checked (and made private) like any store", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const mine = join(tempDir(), "store");
    mkdirSync(mine, { mode: 0o755 });
    const link = join(tempDir(), "link");
    symlinkSync(mine, link);
    expect(unwind(root, ["snapshot"], { env: { UNWIND_STORE: link } }).code).toBe(0);
    expect(existsSync(join(mine, "VERSION"))).toBe(true);
    expect(lstatSync(mine).mode & 0o777).toBe(0o700);
    chmodSync(mine, 0o770);
    const r = unwind(root, ["snapshot"], { env: { UNWIND_STORE: link } });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`the store ${mine} can be written by other users (mode 0770)`);
  });

  it("a store group- or world-writable is refused (exit 4) and left as it is; private, the same store works", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    expect(unwind(root, ["snapshot"]).code).toBe(0);
    const store = join(root, ".git", "unwind");
    for (const mode of [0o775, 0o757, 0o777]) {
      chmodSync(store, mode);
      const r = unwind(root, ["snapshot", "--json"]);
      expect(r.code, mode.toString(8)).toBe(4);
      expect(r.json.error).toMatchObject({
        code: "E_STORE_UNSAFE",
        message: expect.stringContaining(`can be written by other users (mode 0${mode.toString(8)})`),
        hint: expect.stringContaining("chmod -R go-rwx"),
      });
      writeHook(root, "a.txt", `toolu_w${mode}`);
      expect(journalOf(store)).toEqual([]);
      expect(lstatSync(store).mode & 0o777).toBe(mode);
    }
    chmodSync(store, 0o700);
    expect(unwind(root, ["snapshot"]).code).toBe(0);
    writeHook(root, "a.txt", "toolu_w0");
    expect(journalOf(store)).toHaveLength(1);
  });

  it.skipIf(!ROOT_USER)("a store owned by another user is refused (exit 4); owned by this one, it works", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    expect(unwind(root, ["snapshot"]).code).toBe(0);
    const store = join(root, ".git", "unwind");
    chownSync(store, NOBODY, NOBODY);
    const r = unwind(root, ["snapshot"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`the store ${store} belongs to another user (uid ${NOBODY})`);
    writeHook(root, "a.txt", "toolu_o1");
    expect(journalOf(store)).toEqual([]);
    chownSync(store, 0, 0);
    writeHook(root, "a.txt", "toolu_o2");
    expect(journalOf(store)).toHaveLength(1);
  });
});

describe("a Codex hook outside any repository", () => {
  const codexPayload = (cwd: string) => {
    const p = JSON.parse(readFileSync(new URL("../fixtures/hooks/codex/bash.pre.json", import.meta.url), "utf8"));
    return JSON.stringify({ ...p, cwd });
  };

  it("makes no store where the agent happens to be; in a repository, or where a store already is, it records", () => {
    const home = tempDir();
    write(home, "notes.txt", "n\n");
    const r = hook(home, "codex", codexPayload(home));
    expect([r.code, r.stdout, r.stderr]).toEqual([0, "", ""]);
    expect(hook(home, "codex", "not json").code).toBe(0); // nor to log bad input
    expect(readdirSync(home)).toEqual(["notes.txt"]);

    // Control: the same payloads in a repository record, and log.
    const repo = makeRepo({ "a.txt": "a\n" });
    expect(hook(repo, "codex", codexPayload(repo)).code).toBe(0);
    expect(journalOf(join(repo, ".git", "unwind"))).toHaveLength(1);
    expect(hook(repo, "codex", "not json").code).toBe(0);
    expect(existsSync(join(repo, ".git", "unwind", "errors.jsonl"))).toBe(true);

    // Control: a folder where a person made a store (`unwind init`, a snapshot) records.
    mkdirSync(join(home, "proj"));
    expect(unwind(join(home, "proj"), ["init", "--codex"]).code).toBe(0);
    expect(hook(join(home, "proj"), "codex", codexPayload(join(home, "proj"))).code).toBe(0);
    expect(journalOf(join(home, "proj", ".unwind"))).toHaveLength(1);
  });
});
