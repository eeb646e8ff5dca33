import { existsSync, readdirSync, readFileSync, renameSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeRepo, read, treeState, unwind, write } from "../helpers.js";
import { hook } from "../journal-helpers.js";

/** A real fixture payload, re-pointed at a temporary repository. */
function fixture(harness: string, name: string, root: string, patch: (p: any) => void = () => {}): string {
  const p = JSON.parse(readFileSync(new URL(`../fixtures/hooks/${harness}/${name}.json`, import.meta.url), "utf8"));
  const oldCwd: string = p.cwd;
  p.cwd = root;
  const fix = (v: unknown): unknown =>
    typeof v === "string" ? v.split(oldCwd).join(root) : Array.isArray(v) ? v.map(fix) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fix(x)])) : v;
  p.tool_input = fix(p.tool_input);
  patch(p);
  return JSON.stringify(p);
}

function run(root: string, harness: string, name: string, effect: () => void, patch?: (p: any) => void): void {
  for (const phase of ["pre", "post"] as const) {
    const r = hook(root, harness, fixture(harness, `${name}.${phase}`, root, patch));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    if (phase === "pre") effect();
  }
  expect(existsSync(join(root, ".git", "unwind", "errors.jsonl")), "no capture errors").toBe(false);
}

describe("Codex: apply_patch with Add, Update + Move and Delete, then a shell command", () => {
  it("is taken back exactly, through the real payloads", () => {
    const root = makeRepo({
      "src/utils/format.ts": "export function formatDate(date: Date): string {\n  return date.toISOString();\n}\n",
      "src/utils/legacy.ts": "legacy\n",
      "README.md": "readme\n",
    });
    const before = treeState(root);
    run(root, "codex", "apply-patch", () => {
      write(root, "src/lib/slugify.ts", "export function slugify() {}\n");
      write(root, "src/lib/format.ts", read(root, "src/utils/format.ts").replace("toISOString()", "toISOString().slice(0, 10)"));
      unlinkSync(join(root, "src/utils/format.ts"));
      unlinkSync(join(root, "src/utils/legacy.ts"));
    });
    run(root, "codex", "bash", () => write(root, "generated.txt", "from the shell\n"));
    const sessions = unwind(root, ["sessions", "--json"]).json.sessions;
    expect(sessions).toHaveLength(1);
    expect(sessions[0].harness).toBe("codex");

    const r = unwind(root, ["undo", "--session", sessions[0].session, "--json"]);
    expect(r.code).toBe(0);
    expect(r.json.items.map((i: any) => [i.path, i.action])).toEqual([
      ["generated.txt", "delete"],
      ["src/lib/format.ts", "delete"],
      ["src/lib/slugify.ts", "delete"],
      ["src/utils/format.ts", "restore"],
      ["src/utils/legacy.ts", "restore"],
    ]);
    expect(treeState(root, [".git"])).toEqual(before);
  });
});

describe("Gemini CLI: write_file, replace and run_shell_command", () => {
  it("pairs BeforeTool with AfterTool without a tool-use id and takes the session back", () => {
    const root = makeRepo({ "src/server/routes.ts": 'app.get("/health", (_req, res) => res.send("ok"));\n' });
    const before = treeState(root);
    const wf = JSON.parse(fixture("gemini", "write-file.pre", root));
    run(root, "gemini", "write-file", () => write(root, wf.tool_input.file_path.slice(root.length + 1), wf.tool_input.content));
    run(root, "gemini", "replace", () => write(root, "src/server/routes.ts", 'app.get("/health", (_req, res) => res.json({ status: "ok", uptime: process.uptime() }));\n'));
    run(root, "gemini", "run-shell-command", () => renameSync(join(root, "src/server/routes.ts"), join(root, "src/server/routes.old.ts")));
    const log = unwind(root, ["log", "--json"]).json.calls;
    expect(log.map((c: any) => c.tool)).toEqual(["run_shell_command", "replace", "write_file"]);
    expect(log.every((c: any) => c.call.startsWith("h-"))).toBe(true);
    const r = unwind(root, ["undo", "--session", log[0].session, "--json"]);
    expect(r.code).toBe(0);
    expect(treeState(root, [".git"])).toEqual(before);
  });
});

describe("Gemini CLI: two identical calls one after the other (no tool-use id)", () => {
  const shell = (root: string, phase: "pre" | "post", patch: (p: any) => void = () => {}) =>
    fixture("gemini", `run-shell-command.${phase}`, root, (p) => {
      p.tool_input = { command: "echo hi >> log.txt" };
      patch(p);
    });
  const twice = (root: string, patch?: (p: any) => void) => {
    for (let i = 1; i <= 2; i++) {
      expect(hook(root, "gemini", shell(root, "pre", patch)).code).toBe(0);
      write(root, "log.txt", "hi\n".repeat(i));
      expect(hook(root, "gemini", shell(root, "post", patch)).code).toBe(0);
    }
  };

  it("a command that reads the record while a call runs closes it, and the call's own post still pairs with it: one call, taken back whole (control: the next call of the same key is one of its own)", () => {
    const root = makeRepo({ "README.md": "readme\n" });
    const journal = () =>
      readdirSync(join(root, ".git", "unwind", "journal"))
        .filter((f) => f.endsWith(".jsonl"))
        .flatMap((f) =>
          readFileSync(join(root, ".git", "unwind", "journal", f), "utf8")
            .split("\n")
            .filter(Boolean),
        )
        .map((l) => JSON.parse(l));
    expect(hook(root, "gemini", shell(root, "pre")).code).toBe(0);
    write(root, "log.txt", "hi\n");
    // A person looks while the agent's command runs: reading the record closes the call (SPEC section 2).
    const session = unwind(root, ["sessions", "--json"]).json.sessions[0].session;
    expect(unwind(root, ["changes", "--session", session, "--json"]).code).toBe(0);
    expect(journal().filter((r) => r.closedBy === "read")).toHaveLength(1);
    write(root, "log.txt", "hi\nhi\n"); // the command writes on, after the read
    expect(hook(root, "gemini", shell(root, "post")).code).toBe(0);
    const log = unwind(root, ["log", "--json"]).json.calls;
    expect(log).toHaveLength(1);
    expect(log[0].call).toBe(journal()[0].call);
    const r = unwind(root, ["undo", "--session", session, "--call", log[0].call, "--json"]);
    expect(r.code).toBe(0);
    expect(r.json.items.map((i: any) => [i.path, i.action])).toEqual([["log.txt", "delete"]]);
    expect(existsSync(join(root, "log.txt"))).toBe(false);
    // The closed call was forgotten at that post: the next identical call is a call of its own.
    twice(root);
    expect(new Set(unwind(root, ["log", "--json"]).json.calls.map((c: any) => c.call)).size).toBe(3);
  });

  it("stays two calls, and the second one alone is taken back", () => {
    const root = makeRepo({ "README.md": "readme\n" });
    twice(root);
    const log = unwind(root, ["log", "--json"]).json.calls;
    expect(log).toHaveLength(2);
    expect(log[0].call).not.toBe(log[1].call);
    expect(log.every((c: any) => c.tool === "run_shell_command" && c.paths.join() === "log.txt")).toBe(true);
    // The newest call first: taking it back leaves the first call's line.
    const r = unwind(root, ["undo", "--session", log[0].session, "--call", log[0].call, "--json"]);
    expect(r.code).toBe(0);
    expect(read(root, "log.txt")).toBe("hi\n");
    expect(unwind(root, ["undo", "--session", log[1].session, "--call", log[1].call, "--json"]).code).toBe(0);
    expect(existsSync(join(root, "log.txt"))).toBe(false);
  });

  it("control: the same payloads with a tool-use id are two calls by their ids", () => {
    const root = makeRepo({ "README.md": "readme\n" });
    let n = 0;
    twice(root, (p) => {
      p.tool_use_id = `id-${Math.floor(n++ / 2)}`;
    });
    expect(
      unwind(root, ["log", "--json"])
        .json.calls.map((c: any) => c.call)
        .sort(),
    ).toEqual(["id-0", "id-1"]);
  });
});

describe("journal retention", () => {
  it("gc drops records and content past the TTL, keeps what live records need; a dry run drops nothing", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    run(
      root,
      "claude",
      "write",
      () => {},
      (p) => {
        p.tool_input.file_path = join(root, "a.txt");
      },
    );
    const store = join(root, ".git", "unwind");
    const records = () => unwind(root, ["status", "--json"]).json.records;
    expect(records()).toBe(2);
    // Today nothing is old enough.
    expect(unwind(root, ["gc", "--ttl", "1d", "--json"]).json).toMatchObject({ records: 0, blobs: 0 });
    expect(records()).toBe(2);
    const later = { UNWIND_NOW: new Date(Date.now() + 3 * 86400e3).toISOString() };
    const fingerprint = treeState(store);
    const dry = unwind(root, ["gc", "--ttl", "1d", "--dry-run", "--json"], { env: later });
    expect(dry.json.records).toBe(2);
    expect(treeState(store)).toEqual(fingerprint);
    // Blob files were written now, so they are only past the TTL when judged three days on.
    const real = unwind(root, ["gc", "--ttl", "1d", "--json"], { env: later });
    expect(real.json.records).toBe(2);
    expect(records()).toBe(0);
    expect(unwind(root, ["verify"]).code).toBe(0);
  });
});
