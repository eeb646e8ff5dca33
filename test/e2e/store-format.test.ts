import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dirFingerprint, makeRepo, read, unwind, write, alive } from "../helpers.js";
import { claudePayload, hook } from "../journal-helpers.js";

/*
 * docs/format.md, "Format versions": a store this release wrote is read by
 * every later one, and a store a newer unwind wrote is refused, never misread.
 */

const FIXTURE = resolve(fileURLToPath(new URL(".", import.meta.url)), "..", "fixtures", "store-v1.tar.gz");
/**
 * Where scripts/make-store-fixture.mjs made the fixture: the store names its
 * work tree by absolute path, so it is read there. Fixed, so held under a
 * lock: two suites on one machine must not unpack over each other.
 */
const TOP = "/tmp/unwind-store-fixture-v1";
const LOCK = `${TOP}.lock`;
const ROOT = join(TOP, "repo");
const A = "claude:aaaaaaaa-1111-4111-8111-000000000001";
const B = "claude:bbbbbbbb-2222-4222-8222-000000000002";

/** mkdir is atomic: whoever made the lock directory holds it; one left by a dead process is taken over. */
async function lock(): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, "pid"), String(process.pid));
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    let holder = Number.NaN;
    try {
      holder = Number(readFileSync(join(LOCK, "pid"), "utf8"));
    } catch {
      /* being written: wait */
    }
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) rmSync(LOCK, { recursive: true, force: true });
    else if (Date.now() > deadline) throw new Error(`${LOCK} held by ${holder} for 5 minutes`);
    else await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  await lock();
  rmSync(TOP, { recursive: true, force: true });
  mkdirSync(TOP, { mode: 0o700 });
  execFileSync("tar", ["-xzf", FIXTURE, "-C", TOP]);
}, 320_000);

afterAll(() => {
  rmSync(TOP, { recursive: true, force: true });
  if (existsSync(join(LOCK, "pid")) && readFileSync(join(LOCK, "pid"), "utf8") === String(process.pid)) rmSync(LOCK, { recursive: true, force: true });
});

const ok = (args: string[]) => {
  const r = unwind(ROOT, args);
  expect(r.stderr.includes("internal error"), r.stderr).toBe(false);
  expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r;
};
const pathsOf = (json: { entries: { path: string; change: string }[] }) => json.entries.map((e) => `${e.change} ${e.path}`).sort();

describe("a store written by format 1 (the committed fixture)", () => {
  it("is read whole: sessions, runs, changes, undo, redo and verify", () => {
    expect(read(join(ROOT, ".git", "unwind"), "VERSION")).toBe("1\n");
    ok(["verify"]);

    const sessions = ok(["sessions", "--json"]).json.sessions.map((s: { session: string; calls: number }) => `${s.session} ${s.calls}`);
    expect(sessions.sort()).toEqual([`${A} 2`, `${B} 2`]);
    expect(pathsOf(ok(["changes", "--session", A, "--json"]).json)).toEqual(["added src/new.ts", "modified a.txt"]);
    const runs = ok(["runs", "--json"]).json.runs;
    expect(runs.map((r: { command: string[]; exit: number }) => [r.command.join(" "), r.exit])).toEqual([["sh -c echo ran > run.txt", 0]]);
    const receipts = ok(["receipts", "--json"]).json.receipts;
    expect(receipts.map((r: { kind: string; scope: { id: string } }) => `${r.kind} ${r.scope.id}`)).toEqual([`undo ${B}`]);

    // The fixture's own receipt (session B taken back) is redone: B's work returns byte for byte.
    expect([existsSync(join(ROOT, "b.txt")), existsSync(join(ROOT, "gen.txt")), read(ROOT, "docs/readme.md")]).toEqual([true, false, "# fixture\n"]);
    ok(["redo", receipts[0].id, "-q"]);
    expect([existsSync(join(ROOT, "b.txt")), read(ROOT, "gen.txt"), read(ROOT, "docs/readme.md")]).toEqual([false, "gen\n", "# fixture, edited\n"]);
    expect(pathsOf(ok(["changes", "--session", B, "--json"]).json)).toEqual(["added gen.txt", "deleted b.txt", "modified docs/readme.md"]);

    // Session A taken back, then redone; the run taken back.
    ok(["undo", "--session", A, "-q"]);
    expect([read(ROOT, "a.txt"), existsSync(join(ROOT, "src/new.ts"))]).toEqual(["alpha 1\n", false]);
    ok(["redo", "--last", "-q"]);
    expect([read(ROOT, "a.txt"), read(ROOT, "src/new.ts")]).toEqual(["alpha 2\n", "export const n = 1;\n"]);
    ok(["undo", "--run", runs[0].id, "-q"]);
    expect(existsSync(join(ROOT, "run.txt"))).toBe(false);

    // What this release adds to the old store stays format 1, and verifies with it.
    expect(ok(["receipts", "--json"]).json.receipts).toHaveLength(5);
    expect(read(join(ROOT, ".git", "unwind"), "VERSION")).toBe("1\n");
    ok(["verify"]);
    // Sixteen commands in a row, each a process: on a loaded machine that is over the suite's default minute.
  }, 300_000);
});

describe("a store of a format this unwind does not know", () => {
  /** A repository with one file capture recorded and a store made by a command. */
  function repoWithStore(): { root: string; store: string } {
    const root = makeRepo({ "a.txt": "1\n" });
    ok2(root, ["snapshot"]);
    return { root, store: join(root, ".git", "unwind") };
  }
  const ok2 = (root: string, args: string[]) => expect(unwind(root, args).code).toBe(0);
  const writeHook = (root: string, id: string) =>
    hook(root, "claude", claudePayload(root, "sess-v", "PreToolUse", "Write", { file_path: join(root, "a.txt"), content: "2\n" }, id), { CLAUDE_PROJECT_DIR: root });
  const journal = (store: string) => (existsSync(join(store, "journal")) ? readdirSync(join(store, "journal")).filter((f) => f.endsWith(".jsonl")) : []);

  it("a newer one: every command exits 4 with one line saying to upgrade, and reads or writes nothing", () => {
    const { root, store } = repoWithStore();
    expect(read(store, "VERSION")).toBe("1\n");
    write(store, "VERSION", "2\n");
    write(root, "a.txt", "changed\n");
    const before = dirFingerprint(store);
    for (const args of [["sessions"], ["undo", "--session", "x"], ["snapshot"], ["verify"]]) {
      const r = unwind(root, args);
      expect([args.join(" "), r.code, r.stdout]).toEqual([args.join(" "), 4, ""]);
      expect(r.stderr).toBe("unwind: the store is format 2, newer than this unwind reads (1): upgrade unwind\n");
    }
    const j = unwind(root, ["--json", "status"]);
    expect([j.code, j.json.error.code]).toEqual([4, "E_STORE_NEWER"]);
    expect(dirFingerprint(store)).toEqual(before);
    expect(read(root, "a.txt")).toBe("changed\n");
  });

  it("a newer one: the hook exits 0 silently, records nothing and logs the refusal; format 1 records (negative control)", () => {
    const { root, store } = repoWithStore();
    const r1 = writeHook(root, "toolu_v1");
    expect([r1.code, r1.stdout]).toEqual([0, ""]);
    expect(journal(store)).toHaveLength(1); // the control: the same call is recorded under format 1
    const j1 = readFileSync(join(store, "journal", journal(store)[0]!));

    write(store, "VERSION", "3\n");
    const r = writeHook(root, "toolu_v3");
    expect([r.code, r.stdout, r.stderr]).toEqual([0, "", ""]);
    expect(readFileSync(join(store, "journal", journal(store)[0]!))).toEqual(j1);
    const logged = read(store, "errors.jsonl")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(logged.map((e) => [e.kind, e.harness, e.message])).toEqual([["capture-failed", "claude", "the store is format 3, newer than this unwind reads (1): upgrade unwind"]]);
  });

  it("a VERSION that is not a number is damage (exit 4), not format 1", () => {
    const { root, store } = repoWithStore();
    write(store, "VERSION", "1.5-beta\n");
    const r = unwind(root, ["sessions"]);
    expect([r.code, r.stderr]).toEqual([4, "unwind: the store's VERSION reads '1.5-beta', not a format unwind knows (run unwind verify)\n"]);
  });

  it("a store without VERSION (only hooks wrote it) is format 1, and the first command writes VERSION", () => {
    const root = makeRepo({ "a.txt": "1\n" });
    const store = join(root, ".git", "unwind");
    expect(writeHook(root, "toolu_nv").code).toBe(0);
    expect([existsSync(join(store, "VERSION")), journal(store).length]).toEqual([false, 1]);
    expect(unwind(root, ["sessions", "--json"]).json.sessions.map((s: { session: string }) => s.session)).toEqual(["claude:sess-v"]);
    ok2(root, ["snapshot"]);
    expect(read(store, "VERSION")).toBe("1\n");
  });
});
