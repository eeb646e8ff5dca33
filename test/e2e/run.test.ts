import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, linkSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, disk, git, makeRepo, read, startOf, tempDir, treeState, unwind, write } from "../helpers.js";
import { claudePayload } from "../journal-helpers.js";

/*
 * Run capsules (SPEC section 9) with real processes in real repositories,
 * modelled on the seed's cases (selective recovery): what a run changed,
 * kept or taken back by policy; what a later person did survives; what is
 * swapped under it is refused; a tampered capsule is refused whole; the
 * processes it leaves are ended by identity and nothing else is.
 */

const roots: string[] = [];

/** Tests leave no process behind: every process a capsule recorded that is still that process is killed. */
afterEach(() => {
  for (const root of roots.splice(0)) {
    const dir = join(root, ".git", "unwind", "runs");
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).filter((n) => n.endsWith(".json"))) {
      try {
        for (const p of JSON.parse(readFileSync(join(dir, f), "utf8")).processes as { pid: number; start: string }[]) {
          if (p.start && startOf(p.pid) === p.start) process.kill(p.pid, "SIGKILL");
        }
      } catch {
        /* a tampered capsule: its processes were killed with the untampered one's */
      }
    }
  }
});

function repo(): string {
  const root = makeRepo({
    "src/a.ts": "a1\n",
    "src/keep.ts": "keep\n",
    ".github/workflows/ci.yml": "name: ci\n",
    "docs/notes.md": "notes\n",
    "old.txt": "old\n",
    ".gitignore": "dist/\n",
  });
  roots.push(root);
  return root;
}

/** allow src/, deny CI and .env files, review the rest. Kept outside the root, so it is no change of the run's. */
function policyFile(text = JSON.stringify({ default: "review", allow: ["src/**"], deny: [".github/**", ".env*"] })): string {
  const f = join(tempDir(), "policy.json");
  writeFileSync(f, text);
  return f;
}

/** The run of most tests: edits src (allow), rewrites CI (deny), adds .env (deny), adds docs/new.md and deletes old.txt (review). */
const WORK = `printf 'a2\\n' > src/a.ts; printf 'pwned\\n' > .github/workflows/ci.yml; printf 'SECRET=1\\n' > .env; printf 'new\\n' > docs/new.md; rm old.txt`;

function run(root: string, args: string[], cmd = WORK, opts: { input?: string; env?: Record<string, string> } = {}) {
  return unwind(root, ["run", ...args, "--", "sh", "-c", cmd], opts);
}

const capsulePath = (root: string, id: string) => join(root, ".git", "unwind", "runs", `${id}.json`);
const show = (root: string, id: string) => unwind(root, ["run", "show", id, "--json"]);

describe("unwind run: the command as it would run without unwind", () => {
  it("stdin, stdout and stderr pass through, the exit code passes through, UNWIND_RUN and UNWIND_TASK are set, and the store lock is free while it runs", () => {
    const root = repo();
    const out = join(tempDir(), "env.txt");
    // `unwind record` inside the run takes the store lock: it would wait 30 s and fail if the run held it.
    const cmd = `cat; env | grep '^UNWIND_' | grep -v '^UNWIND_HOOK_BUDGET_MS=' | sort > ${out}; echo to-stdout; echo to-stderr >&2; ${BIN} record --session orch:inside --phase pre >/dev/null; exit 3`;
    const r = run(root, ["--id", "r1"], cmd, { input: "from-stdin\n", env: { UNWIND_TASK: "" } });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("from-stdin\nto-stdout\n"); // unwind writes nothing there: stdout is the command's
    expect(r.stderr).toContain("to-stderr\n");
    expect(r.stderr).toContain("unwind: run r1: exit 3");
    expect(readFileSync(out, "utf8")).toMatch(/^UNWIND_RUN=r1\nUNWIND_RUN_KEY=[0-9a-f]{32}\nUNWIND_TASK=r1\n$/);
    // A capture inside the run is labelled with it, so `--task r1` finds the sessions the run started.
    expect(unwind(root, ["sessions", "--task", "r1", "--json"]).json.sessions.map((s: { session: string }) => s.session)).toEqual(["orch:inside"]);
    expect(show(root, "r1").json.sessions).toEqual(["orch:inside"]);
    const withTask = run(root, ["--id", "r2", "--task", "T-9"], `env | grep '^UNWIND_' | grep -v '^UNWIND_HOOK_BUDGET_MS=' | sort > ${out}`);
    expect(withTask.code).toBe(0);
    expect(readFileSync(out, "utf8")).toMatch(/^UNWIND_RUN=r2\nUNWIND_RUN_KEY=[0-9a-f]{32}\nUNWIND_TASK=T-9\n$/);
    expect(show(root, "r2").json.record.task).toBe("T-9");
    // Negative control: a capture outside any run is in no run's list.
    expect(unwind(root, ["record", "--session", "orch:outside", "--phase", "pre"]).code).toBe(0);
    expect(show(root, "r1").json.sessions).toEqual(["orch:inside"]);
  });

  it("a Claude Code session inside the run is labelled with it, through the real hook", () => {
    const root = repo();
    const payloads = tempDir();
    const input = { file_path: join(root, "src/a.ts"), content: "a3\n" };
    writeFileSync(join(payloads, "pre.json"), claudePayload(root, "agent-in-run", "PreToolUse", "Write", input, "toolu_1"));
    writeFileSync(join(payloads, "post.json"), claudePayload(root, "agent-in-run", "PostToolUse", "Write", input, "toolu_1"));
    const agent = `${BIN} hook claude < ${payloads}/pre.json && printf 'a3\\n' > src/a.ts && ${BIN} hook claude < ${payloads}/post.json`;
    expect(run(root, ["--id", "headless"], agent).code).toBe(0);
    expect(show(root, "headless").json.sessions).toEqual(["claude:agent-in-run"]);
    // The session and the run name the same change, each in its own scope.
    expect(unwind(root, ["changes", "--session", "agent-in-run", "--json"]).json.entries.map((e: { path: string }) => e.path)).toEqual(["src/a.ts"]);
    expect(unwind(root, ["changes", "--run", "headless", "--json"]).json.entries.map((e: { path: string }) => e.path)).toEqual(["src/a.ts"]);
  });

  it("a command ended by a signal exits 128 + its number; SIGTERM sent to unwind run reaches the command", async () => {
    const root = repo();
    expect(run(root, ["--id", "k1"], "kill -KILL $$").code).toBe(137);
    const flag = join(tempDir(), "started");
    const child = spawn(process.execPath, [BIN, "run", "--id", "s1", "--", "sh", "-c", `trap 'exit 7' TERM; touch ${flag}; while :; do sleep 0.05; done`], { cwd: root, stdio: "ignore" });
    const code = new Promise<number | null>((res) => child.on("exit", (c) => res(c)));
    for (let i = 0; i < 200 && !existsSync(flag); i++) await new Promise((r) => setTimeout(r, 25));
    child.kill("SIGTERM");
    expect(await code).toBe(7); // the command's own answer to the signal, not unwind's death by it
    expect(show(root, "s1").json.record.exit).toMatchObject({ code: 7, signal: null, status: 7 });
  });

  // The flake CI met: a loaded machine let the command start, and be signalled, before Node told `unwind run` it had started,
  // and the signal ended unwind by its default action. strace holds unwind in the return from the clone that starts the
  // command (0.4 s) while the command signals it: before the fix, unwind died by SIGTERM (exit 143) and recorded nothing.
  it("a signal sent the moment the command starts still reaches the command, not unwind's default action", () => {
    const root = repo();
    const r = spawnSync(
      "strace",
      [
        "-f",
        "-qq",
        "-o",
        "/dev/null",
        "-e",
        "trace=clone",
        "-e",
        "inject=clone:delay_exit=400000",
        process.execPath,
        BIN,
        "run",
        "--id",
        "e1",
        "--",
        "sh",
        "-c",
        "trap 'exit 7' TERM; kill -TERM $PPID; sleep 1; exit 3",
      ],
      { cwd: root, encoding: "utf8" },
    );
    expect(r.status).toBe(7);
    expect(show(root, "e1").json.record.exit).toMatchObject({ code: 7, signal: null, status: 7 });
  }, 120_000);
});

describe("undo --run through the one engine", () => {
  it("takes the whole run back, byte for byte; changes --run carries each path's decision; redo brings it back", () => {
    const root = repo();
    const before = treeState(root);
    expect(run(root, ["--id", "full", "--policy", policyFile()]).code).toBe(0);
    const cs = unwind(root, ["changes", "--run", "full", "--json"]);
    expect(cs.code).toBe(0);
    expect(cs.json.scope).toEqual({ kind: "run", id: "full" });
    expect(cs.json.entries.map((e: { path: string; change: string; decision: string }) => [e.path, e.change, e.decision])).toEqual([
      [".env", "added", "deny"],
      [".github/workflows/ci.yml", "modified", "deny"],
      ["docs/new.md", "added", "review"],
      ["old.txt", "deleted", "review"],
      ["src/a.ts", "modified", "allow"],
    ]);
    const u = unwind(root, ["undo", "--run", "full", "--json"]);
    expect(u.code).toBe(0);
    expect(u.json.counts).toEqual({ restore: 3, delete: 2, merge: 0, skip: 0, conflict: 0 });
    expect(treeState(root)).toEqual(before);
    expect(show(root, "full").json.results).toMatchObject([{ kind: "undo", receipt: u.json.receipt, safeOnly: false }]);
    expect(unwind(root, ["redo", u.json.receipt]).code).toBe(0);
    expect(read(root, "src/a.ts")).toBe("a2\n");
    expect(read(root, ".github/workflows/ci.yml")).toBe("pwned\n");
  });

  it("--safe-only keeps the allowed work (skip / retained, exit 0) and a person's later edits elsewhere", () => {
    const root = repo();
    expect(run(root, ["--id", "safe", "--policy", policyFile()]).code).toBe(0);
    write(root, "docs/notes.md", "a person's notes\n");
    write(root, "src/keep.ts", "a person's edit\n");
    // Negative control: without --safe-only the allowed path would be taken back too.
    expect(unwind(root, ["undo", "--run", "safe", "--dry-run", "--json"]).json.items.find((i: { path: string }) => i.path === "src/a.ts")).toMatchObject({ action: "restore" });
    // --path narrows it further; a glob that matches nothing in the run is a usage error.
    expect(unwind(root, ["undo", "--run", "safe", "--path", "docs", "--dry-run", "--json"]).json.items.map((i: { path: string }) => i.path)).toEqual(["docs/new.md"]);
    const u = unwind(root, ["undo", "--run", "safe", "--safe-only", "--json"]);
    expect(u.code).toBe(0);
    expect(u.json.items.map((i: { path: string; action: string; reason: string | null }) => [i.path, i.action, i.reason])).toEqual([
      [".env", "delete", null],
      [".github/workflows/ci.yml", "restore", null],
      ["docs/new.md", "delete", null],
      ["old.txt", "restore", null],
      ["src/a.ts", "skip", "retained"],
    ]);
    expect(read(root, "src/a.ts")).toBe("a2\n");
    expect(read(root, ".github/workflows/ci.yml")).toBe("name: ci\n");
    expect(existsSync(join(root, ".env"))).toBe(false);
    expect(read(root, "docs/notes.md")).toBe("a person's notes\n");
    expect(read(root, "src/keep.ts")).toBe("a person's edit\n");
    // Taken back, docs/new.md is no longer in the change set, but the run did change it: the same --path is nothing to do, not a typo.
    const again = unwind(root, ["undo", "--run", "safe", "--path", "docs", "--dry-run", "--json"]);
    expect([again.code, again.json.items]).toEqual([0, []]);
    expect(unwind(root, ["undo", "--run", "safe", "--path", "nope/**", "--dry-run"]).code).toBe(2);
    const human = unwind(root, ["undo", "--run", "safe", "--safe-only"]);
    expect(human.stdout).toMatch(/^skip +src\/a\.ts .*retained$/m);
    expect(human.code).toBe(0); // everything else is unchanged now, and a retained skip is not a partial result
  });

  it("A -> B by the run, B -> C by a person: a conflict, and C survives (exit 1); the rest is taken back", () => {
    const root = repo();
    expect(run(root, ["--id", "abc"]).code).toBe(0);
    write(root, ".github/workflows/ci.yml", "name: ci\n# C: a person's fix\n");
    const u = unwind(root, ["undo", "--run", "abc", "--json"]);
    expect(u.code).toBe(1);
    expect(u.json.items.find((i: { path: string }) => i.path === ".github/workflows/ci.yml")).toMatchObject({ action: "conflict", reason: "changed-since" });
    expect(read(root, ".github/workflows/ci.yml")).toBe("name: ci\n# C: a person's fix\n");
    expect(read(root, "src/a.ts")).toBe("a1\n"); // the rest went back (at B, it is restored: the negative control)
  });

  it("a symlink swapped in after the run and a hardlink alias are refused; what they point at is untouched", () => {
    const root = repo();
    write(root, "conf/app.cfg", "cfg1\n");
    git(root, "add", "-A");
    git(root, "commit", "-qm", "conf");
    expect(run(root, ["--id", "swap"], `printf 'a2\\n' > src/a.ts; printf 'cfg2\\n' > conf/app.cfg; printf 'n2\\n' > docs/notes.md`).code).toBe(0);
    // Negative control: before the swaps every path would be restored.
    expect(unwind(root, ["undo", "--run", "swap", "--dry-run", "--json"]).json.counts).toMatchObject({ restore: 3, conflict: 0 });
    const outside = tempDir();
    write(outside, "secret", "outside\n");
    linkSync(join(root, "src/a.ts"), join(outside, "alias")); // a second name for the run's file
    renameSync(join(root, "conf"), join(root, "conf.real"));
    symlinkSync("conf.real", join(root, "conf")); // a parent became a symlink
    rmSync(join(root, "docs/notes.md"));
    symlinkSync(join(outside, "secret"), join(root, "docs/notes.md")); // the file became a symlink out of the root
    const u = unwind(root, ["undo", "--run", "swap", "--json"]);
    expect(u.code).toBe(1);
    expect(u.json.items.map((i: { path: string; action: string; reason: string }) => [i.path, i.action, i.reason])).toEqual([
      ["conf/app.cfg", "conflict", "symlink"],
      ["docs/notes.md", "conflict", "symlink"],
      ["src/a.ts", "conflict", "hardlink"],
    ]);
    expect(read(outside, "secret")).toBe("outside\n");
    expect(read(outside, "alias")).toBe("a2\n");
    expect(read(root, "conf.real/app.cfg")).toBe("cfg2\n");
  });

  it("a run in another worktree is taken back only from there (or with --any-worktree)", () => {
    const root = repo();
    const wt = join(tempDir(), "wt");
    git(root, "worktree", "add", "-q", wt);
    roots.push(wt);
    expect(unwind(wt, ["run", "--id", "there", "--", "sh", "-c", "printf 'a2\\n' > src/a.ts"]).code).toBe(0);
    const before = treeState(root);
    const here = unwind(root, ["undo", "--run", "there"]);
    expect(here.code).toBe(3);
    expect(here.stderr).toMatch(/ran in another work tree/);
    expect(treeState(root)).toEqual(before);
    expect(unwind(root, ["changes", "--run", "there"]).code).toBe(0); // reading it is harmless
    expect(unwind(wt, ["undo", "--run", "there"]).code).toBe(0); // negative control: from its own worktree
    expect(read(wt, "src/a.ts")).toBe("a1\n");
  });

  it("--no-rollback records hashes only: changes --run works, undo is refused (exit 3) and nothing is touched", () => {
    const root = repo();
    expect(run(root, ["--id", "norb", "--no-rollback"]).code).toBe(0);
    const cs = unwind(root, ["changes", "--run", "norb", "--json"]);
    expect(cs.json.entries.every((e: { reversible: boolean }) => e.reversible === false)).toBe(true);
    const before = disk(root);
    const u = unwind(root, ["undo", "--run", "norb"]);
    expect(u.code).toBe(3);
    expect(u.stderr).toMatch(/without rollback/);
    expect(disk(root)).toEqual(before);
    // The before snapshot's ref is gone: no earlier bytes are kept alive by the record.
    const snaps = unwind(root, ["snapshots", "--json"]).json.snapshots.map((s: { label: string | null }) => s.label);
    expect(snaps).toEqual(["run norb: after"]);
  });
});

describe("the seal", () => {
  it("a tampered capsule is refused whole (exit 4) by every command that would use it, and nothing is touched", () => {
    const root = repo();
    expect(run(root, ["--id", "sealed", "--policy", policyFile()]).code).toBe(0);
    // Negative control: intact, it verifies and plans.
    expect(unwind(root, ["verify"]).code).toBe(0);
    expect(unwind(root, ["undo", "--run", "sealed", "--safe-only", "--dry-run"]).code).toBe(0);
    const file = capsulePath(root, "sealed");
    writeFileSync(file, readFileSync(file, "utf8").replaceAll('"decision":"deny"', '"decision":"allow"')); // keep the CI change on a safe-only undo
    const before = disk(root);
    for (const args of [["undo", "--run", "sealed"], ["undo", "--run", "sealed", "--safe-only"], ["changes", "--run", "sealed"], ["run", "show", "sealed"], ["cleanup", "sealed"], ["verify"]]) {
      const r = unwind(root, args);
      expect(r.code, args.join(" ")).toBe(4);
      expect(r.stderr + r.stdout).toMatch(/run sealed: the capsule was altered/);
    }
    expect(disk(root)).toEqual(before);
    expect(unwind(root, ["runs"]).stdout).toMatch(/\[SEAL BROKEN\]/);
  });

  it("a hostile child that rewrites the store's bytes and their hash is caught: by the run that watched it, and by the seal kept in git", () => {
    const root = repo();
    expect(run(root, ["--id", "victim", "--policy", policyFile()]).code).toBe(0);
    const store = join(root, ".git", "unwind", "runs");
    // The hostile command turns the victim's deny decisions into allow, and rewrites the chain's head to the new bytes' hash.
    const hostile = `const fs=require("fs"),c=require("crypto");const f=${JSON.stringify(join(store, "victim.json"))};const t=fs.readFileSync(f,"utf8").replaceAll('"decision":"deny"','"decision":"allow"');fs.writeFileSync(f,t);fs.writeFileSync(${JSON.stringify(join(store, "HEAD"))},JSON.stringify({id:"victim",seal:c.createHash("sha256").update(t).digest("hex")})+"\\n")`;
    const r = unwind(root, ["run", "--id", "hostile", "--", process.execPath, "-e", hostile]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("unwind: warning: capsule victim was rewritten while the command ran");
    expect(show(root, "hostile").json.record.tamper).toEqual(["capsule victim was rewritten while the command ran"]);
    // The store alone was fooled: the chain now names the forged bytes ...
    const forged = readFileSync(capsulePath(root, "victim"));
    expect(JSON.parse(readFileSync(capsulePath(root, "hostile"), "utf8")).prev).toEqual({ id: "victim", seal: createHash("sha256").update(forged).digest("hex") });
    // ... and the seal in git catches it.
    const v = unwind(root, ["verify", "--json"]);
    expect(v.code).toBe(4);
    expect(v.json.problems).toEqual([{ kind: "run", id: "victim", message: "run victim: the capsule was altered: its bytes do not match the seal kept in git" }]);
    const before = disk(root);
    expect(unwind(root, ["undo", "--run", "victim", "--safe-only"]).code).toBe(4);
    expect(disk(root)).toEqual(before);
    // Negative control: a command that leaves the store alone is not reported.
    expect(run(root, ["--id", "honest"], "true").stderr).not.toMatch(/warning/);
    expect(show(root, "honest").json.record.tamper).toEqual([]);
  });
});

describe("owned processes", () => {
  const BACKGROUND = `setsid nohup sleep 300 >/dev/null 2>&1 & echo started`;
  // Every process but the child: a background job may be recorded under any name it had (sh, setsid, nohup, sleep) when last seen.
  const sleeps = (root: string, id: string) => (show(root, id).json.processes as { pid: number; start: string; how: string; end: string | null }[]).filter((p) => p.how !== "child");

  it("a background process left by the command (setsid, nohup) is ended when the run ends, by identity", () => {
    const root = repo();
    expect(run(root, ["--id", "bg"], BACKGROUND).code).toBe(0);
    const [p] = sleeps(root, "bg");
    expect(sleeps(root, "bg")).toHaveLength(1);
    expect(p).toMatchObject({ end: "terminated" });
    expect(startOf(p!.pid)).not.toBe(p!.start);
  });

  it("--keep-processes leaves it running; cleanup --dry-run signals nothing (exit 1); cleanup ends it (exit 0) and records the result", () => {
    const root = repo();
    expect(run(root, ["--id", "kept", "--keep-processes"], BACKGROUND).code).toBe(0);
    const [p] = sleeps(root, "kept");
    expect(p!.end).toBeNull();
    expect(startOf(p!.pid)).toBe(p!.start);
    const dry = unwind(root, ["cleanup", "kept", "--dry-run", "--json"]);
    expect(dry.code).toBe(1);
    expect(dry.json.processes.find((x: { pid: number }) => x.pid === p!.pid).outcome).toBe("still-running");
    expect(startOf(p!.pid)).toBe(p!.start); // negative control: still there
    const c = unwind(root, ["cleanup", "kept", "--grace", "2s", "--json"]);
    expect(c.code).toBe(0);
    expect(c.json.processes.find((x: { pid: number }) => x.pid === p!.pid).outcome).toBe("terminated");
    expect(startOf(p!.pid)).not.toBe(p!.start);
    expect(show(root, "kept").json.results).toMatchObject([{ kind: "cleanup", dryRun: false }]);
    // Again: it is gone, and nothing else is looked for.
    expect(unwind(root, ["cleanup", "kept", "--json"]).json.processes.find((x: { pid: number }) => x.pid === p!.pid).outcome).toBe("already-exited");
  });

  it("run show and cleanup name a left-over process by what it runs now, read from the process itself", async () => {
    const root = repo();
    // A server started through setsid and nohup, a script's sleep, and a job that becomes another program after the run.
    const script = join(tempDir(), "job.sh");
    writeFileSync(
      script,
      [
        "setsid nohup /usr/bin/python3 -m http.server 0 --bind 127.0.0.1 >/dev/null 2>&1 &",
        "sleep 301 >/dev/null 2>&1 &",
        "setsid sh -c 'sleep 1; exec sleep 302' >/dev/null 2>&1 &",
        "sleep 0.5",
      ].join("\n"),
    );
    expect(run(root, ["--id", "names", "--keep-processes"], `sh ${script}`).code).toBe(0);
    type Proc = { pid: number; start: string; comm: string; cmd?: string[] };
    const kept = (show(root, "names").json.processes as Proc[]).filter((p) => p.start && startOf(p.pid) === p.start);
    const byCmd = (want: string) => kept.find((p) => p.cmd?.join(" ") === want);
    expect(byCmd("/usr/bin/python3 -m http.server 0 --bind 127.0.0.1"), JSON.stringify(kept)).toBeDefined();
    expect(byCmd("sleep 301"), JSON.stringify(kept)).toBeDefined();
    const later = byCmd("sh -c sleep 1; exec sleep 302");
    expect(later, JSON.stringify(kept)).toBeDefined();
    const human = unwind(root, ["run", "show", "names"]).stdout;
    expect(human).toContain("python3 -m http.server");
    expect(human).toContain("sleep 301");
    expect(human).toMatch(new RegExp(`child +sh -c sh ${script.replace(/[.]/g, "\\.")} +exited`)); // the child: the command the run was given

    // The job execs into its own program after the run ended: cleanup reads it again, from the process.
    const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    for (let i = 0; i < 200 && cmdline(later!.pid) !== "sleep 302"; i++) await new Promise((r) => setTimeout(r, 25));
    const dry = unwind(root, ["cleanup", "names", "--dry-run", "--json"]);
    expect(dry.json.processes.find((x: { pid: number }) => x.pid === later!.pid).cmd).toEqual(["sleep", "302"]);
    const c = unwind(root, ["cleanup", "names", "--grace", "2s"]);
    expect(c.code, c.stderr).toBe(0);
    const rows = c.stdout.split("\n");
    for (const [p, name] of [
      [byCmd("/usr/bin/python3 -m http.server 0 --bind 127.0.0.1")!, "python3 -m http.server"],
      [byCmd("sleep 301")!, "sleep 301"],
      [later!, "sleep 302"],
    ] as const) {
      expect(
        rows.find((l) => l.startsWith(`${p.pid} `)),
        c.stdout,
      ).toMatch(new RegExp(`${name.replace(/\./g, "\\.")}.*terminated`));
      expect(startOf(p.pid)).not.toBe(p.start);
    }
    // Negative control: the name the table first saw for the late job is not what it ran by then.
    expect(later!.comm).not.toBe("sleep");
  });

  it("cleanup never signals a process it did not record, even one that carries the run's variable", async () => {
    const root = repo();
    expect(run(root, ["--id", "own", "--keep-processes"], "true").code).toBe(0);
    const stranger = spawn("sleep", ["300"], { env: { ...process.env, UNWIND_RUN: "own" }, stdio: "ignore" });
    try {
      const c = unwind(root, ["cleanup", "own", "--json"]);
      expect(c.code).toBe(0);
      expect(c.json.processes.map((x: { pid: number }) => x.pid)).not.toContain(stranger.pid);
      expect(startOf(stranger.pid!)).not.toBeNull();
    } finally {
      stranger.kill("SIGKILL");
    }
  });

  it("--timeout ends the whole tree (TERM, grace, KILL), a setsid'd member included; the exit is 128 + SIGTERM", () => {
    const root = repo();
    const t0 = Date.now();
    const r = run(root, ["--id", "slow", "--timeout", "1s"], "sleep 300 & setsid sleep 301 & wait");
    expect(r.code).toBe(143);
    expect(Date.now() - t0).toBeLessThan(15_000);
    const rec = show(root, "slow").json;
    expect(rec.record.exit).toMatchObject({ timedOut: true, signal: "SIGTERM", status: 143 });
    const ps = sleeps(root, "slow");
    expect(ps).toHaveLength(2); // negative control: both were seen running
    for (const p of ps) expect(startOf(p.pid)).not.toBe(p.start);
  });
});

describe("bad input changes nothing", () => {
  it("each is one line, exit 2 (an unknown run: 3), and no capsule claims a run", () => {
    const root = repo();
    const bad = policyFile('{"denny": [".env"]}');
    const before = disk(root);
    const cases: [string[], number, RegExp][] = [
      [["run"], 2, /no command given/],
      [["run", "--", "no-such-command-xyz"], 2, /command not found: no-such-command-xyz/],
      [["run", "--", "show"], 2, /command not found: show/], // after --, `show` is the command
      [["run", "--policy", join(tempDir(), "missing.json"), "--", "true"], 2, /--policy .*cannot read it/],
      [["run", "--policy", bad, "--", "true"], 2, /unknown key "denny"/],
      [["run", "--timeout", "soon", "--", "true"], 2, /--timeout soon/],
      [["run", "--id", "a b", "--", "true"], 2, /run id 'a b'/],
      [["run", "--task", "a..b", "--", "true"], 2, /task name/],
      [["run", "show"], 2, /no run given/],
      [["undo", "--session", "x", "--safe-only"], 2, /--safe-only goes with --run/],
      [["undo", "--run", "nope12", "--dry-run"], 3, /no run nope12/],
      [["cleanup", "nope12"], 3, /no run nope12/],
    ];
    for (const [args, code, msg] of cases) {
      const r = unwind(root, args);
      expect(r.code, args.join(" ")).toBe(code);
      expect(r.stderr, args.join(" ")).toMatch(msg);
      expect(r.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
    }
    expect(disk(root)).toEqual(before);
    // Negative control: a good run is recorded.
    expect(run(root, ["--id", "fine"], "true").code).toBe(0);
    expect(unwind(root, ["runs", "--json"]).json.runs.map((x: { id: string }) => x.id)).toEqual(["fine"]);
    expect(unwind(root, ["run", "--id", "fine", "--", "true"]).stderr).toMatch(/run fine already exists/);
  });
});
