import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { git, gitsTree, makeRepo, tempDir, unwind } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";

/*
 * The watcher (`unwind watch`, src/watch/): snapshots taken while it is
 * stopped, running, overflowed, restarted and killed each hold exactly the
 * tree git writes from scratch, and each says how it found its changes
 * (the `scan` of the state kept beside the private index): evidence that
 * the watcher was used where it claims, and not where it must not be.
 */

const roots: string[] = [];
afterAll(() => {
  // No daemon outlives the tests: stopped by its own command, then by pid if that failed.
  for (const root of roots) {
    const r = unwind(root, ["--json", "watch", "stop"]);
    const pid = r.json?.pid;
    if (typeof pid === "number") {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone, as it should be */
      }
    }
  }
});

function repo(): string {
  const files: Record<string, string> = { ".gitignore": "*.log\n", "keep.log": "ignored\n" };
  for (let i = 0; i < 8; i++) files[`base/f${i}.txt`] = `base ${i}\n`;
  const root = makeRepo(files);
  roots.push(root);
  return root;
}

function watch(root: string, verb: string, env: Record<string, string> = {}) {
  const r = unwind(root, ["--json", "watch", verb], { env });
  expect(r.code, r.stderr).toBe(0);
  return r.json;
}

const statePath = (root: string) => {
  const dir = join(root, ".git", "unwind", "index");
  const f = existsSync(dir) ? readdirSync(dir).find((n) => n.endsWith(".index.watch")) : undefined;
  return f ? join(dir, f) : null;
};

/** A snapshot, checked against git's own tree of the work tree; returns how it scanned (null: no watcher state written). */
function snapshot(root: string): { scan: string | null; reason: string | null } {
  const before = statePath(root) ? readFileSync(statePath(root)!, "utf8") : null;
  const r = unwind(root, ["--json", "snapshot"]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.json.tree).toBe(gitsTree(root));
  const after = statePath(root) ? readFileSync(statePath(root)!, "utf8") : null;
  if (after === null || after === before) return { scan: null, reason: null };
  const s = JSON.parse(after);
  return { scan: s.scan, reason: s.reason };
}

let n = 0;
/** Changes of every kind, under a fresh directory: create, modify, delete, rename, mode, symlink, directory <-> file, a new directory of files. */
function everyKind(root: string): void {
  const p = `k${n++}`;
  const w = (rel: string, text: string) => {
    mkdirSync(join(root, p, rel, ".."), { recursive: true });
    writeFileSync(join(root, p, rel), text);
  };
  // What the changes act on, snapshotted first.
  w("mod.txt", "1\n");
  w("del.txt", "d\n");
  w("from.txt", "r\n");
  w("exe.sh", "#!/bin/sh\n");
  w("target.txt", "t\n");
  w("dir2file/x.txt", "x\n");
  w("file2dir", "f\n");
  snapshot(root);
  w("new.txt", "new\n");
  w("mod.txt", "2\n");
  rmSync(join(root, p, "del.txt"));
  renameSync(join(root, p, "from.txt"), join(root, p, "to.txt"));
  chmodSync(join(root, p, "exe.sh"), 0o755);
  symlinkSync("target.txt", join(root, p, "link"));
  rmSync(join(root, p, "dir2file"), { recursive: true });
  w("dir2file", "now a file\n");
  rmSync(join(root, p, "file2dir"));
  w("file2dir/y.txt", "now a dir\n");
  w("newdir/a/b.txt", "b\n");
  w("newdir/c.txt", "c\n");
  w("ignored.log", "not in any snapshot\n");
}

/** Only files the private index holds (from the first commit): the case the watcher serves with no git at all. */
function heldOnly(root: string): void {
  writeFileSync(join(root, "base", `f${n % 4}.txt`), `edit ${n++}\n`);
  rmSync(join(root, "base", `f${4 + (n % 4)}.txt`), { force: true });
}

describe("unwind watch", () => {
  it("stopped, running, overflowed, restarted and killed: every snapshot equals git's own tree, and says how it scanned", () => {
    const root = repo();

    // Never started: snapshots are taken as without the feature, and nothing of the watcher appears in the store.
    expect(snapshot(root).scan).toBe(null);
    everyKind(root);
    expect(snapshot(root).scan).toBe(null);
    expect(existsSync(join(root, ".git", "unwind", "watch"))).toBe(false);
    expect(statePath(root)).toBe(null);

    // Running: the first snapshot scans everything and takes a token; then the watcher says what changed.
    const started = watch(root, "start");
    expect(started).toMatchObject({ running: true, started: true, canVouch: false });
    expect(snapshot(root)).toEqual({ scan: "full", reason: "no earlier token" });
    expect(watch(root, "status")).toMatchObject({ running: true, canVouch: true, pid: started.pid });
    everyKind(root);
    expect(snapshot(root).scan).toBe("pathspec");
    heldOnly(root);
    expect(snapshot(root)).toEqual({ scan: "watched", reason: null });
    heldOnly(root);
    expect(snapshot(root)).toEqual({ scan: "watched", reason: null });
    expect(snapshot(root)).toEqual({ scan: "watched", reason: null }); // nothing changed
    // A rule that changes what every path is: all of it again.
    writeFileSync(join(root, ".gitignore"), "");
    expect(snapshot(root)).toEqual({ scan: "full", reason: ".gitignore changed" });
    heldOnly(root); // the edited .gitignore still differs from the index, but nothing changed it since: no full scan
    expect(snapshot(root)).toEqual({ scan: "watched", reason: null });
    writeFileSync(join(root, ".gitignore"), "*.log\n");
    expect(snapshot(root).scan).toBe("full");
    writeFileSync(join(root, ".git", "info", "exclude"), "*.nothing\n");
    expect(snapshot(root)).toEqual({ scan: "full", reason: "git config or ignore rules outside the work tree changed" });
    expect(snapshot(root)).toEqual({ scan: "watched", reason: null });

    // Stopped: snapshots go without it (no state written); what changed meanwhile is found by the full scan after a restart.
    expect(watch(root, "stop")).toMatchObject({ stopped: true, running: false });
    everyKind(root);
    expect(snapshot(root).scan).toBe(null);
    heldOnly(root);
    watch(root, "start");
    expect(snapshot(root)).toEqual({ scan: "full", reason: "the token is from another watcher (restarted since)" });
    heldOnly(root);
    expect(snapshot(root)).toEqual({ scan: "watched", reason: null });
    watch(root, "stop");

    // Overflowed: more changed paths than the daemon keeps (UNWIND_WATCH_MAX_PATHS) means it cannot vouch.
    watch(root, "start", { UNWIND_WATCH_MAX_PATHS: "4" });
    snapshot(root);
    everyKind(root);
    const over = snapshot(root);
    expect(over.scan).toBe("full");
    expect(over.reason).toMatch(/^overflow: more than 4 paths changed/);
    heldOnly(root);
    expect(snapshot(root)).toEqual({ scan: "watched", reason: null });

    // Killed: its files stay behind; snapshots scan everything, status says it is not running, start works again.
    const pid = watch(root, "status").pid as number;
    process.kill(pid, "SIGKILL");
    heldOnly(root);
    const dead = snapshot(root);
    expect(dead.scan).toBe("full");
    expect(dead.reason).toMatch(/^the watcher did not answer/);
    expect(watch(root, "status")).toMatchObject({ running: false, pid: null });
    expect(watch(root, "start")).toMatchObject({ running: true, started: true });
    expect(snapshot(root)).toEqual({ scan: "full", reason: "no earlier token" }); // the last snapshot got none
    everyKind(root);
    expect(snapshot(root).scan).toBe("pathspec");
    watch(root, "stop");
  }, 180_000); // about 30 s on a quiet machine: the 60 s default ran out under load

  it("over rounds of random edits, swaps, symlinks and a fold, every watched snapshot is git's tree", () => {
    const root = repo();
    watch(root, "start");
    snapshot(root);
    let seed = 11;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
    const names = ["base", "base/f0.txt", "base/f1.txt", "base/f2.txt", "a", "a/b", "a/b/c.txt", "a/x.txt", "top.txt", "ü.txt", "link", "d/e/f.txt"];
    const scans = new Set<string | null>();
    for (let round = 0; round < 14; round++) {
      for (let k = 0; k < 3; k++) {
        const p = pick(names);
        const abs = join(root, p);
        const op = pick(["write", "write", "write", "delete", "chmod", "symlink", "dir"]);
        try {
          if (op === "delete") rmSync(abs, { recursive: true, force: true });
          else if (op === "chmod") chmodSync(abs, 0o755);
          else if (op === "symlink") {
            rmSync(abs, { recursive: true, force: true });
            mkdirSync(join(abs, ".."), { recursive: true });
            symlinkSync(`target-${round}`, abs);
          } else if (op === "dir") {
            rmSync(abs, { recursive: true, force: true });
            mkdirSync(abs, { recursive: true });
            writeFileSync(join(abs, `inner-${round}.txt`), `${round}\n`);
          } else {
            rmSync(abs, { recursive: true, force: true });
            mkdirSync(join(abs, ".."), { recursive: true });
            writeFileSync(abs, `round ${round} ${k}\n`);
          }
        } catch {
          /* a parent is a file or symlink: that operation does not apply this round */
        }
      }
      // Once, more changes than a snapshot keeps out of the private index: they are folded in.
      if (round === 7) {
        mkdirSync(join(root, "many"), { recursive: true });
        for (let i = 0; i < 70; i++) writeFileSync(join(root, "many", `f${i}.txt`), `${i}\n`);
      }
      scans.add(snapshot(root).scan);
    }
    expect(scans.has("pathspec")).toBe(true);
    expect(scans.has(null)).toBe(false);
    watch(root, "stop");
  });

  it("new files are checked against the ignore rules without git status; a nested repository made since is left out as git leaves it", () => {
    const root = repo();
    watch(root, "start");
    snapshot(root);
    mkdirSync(join(root, "out"));
    mkdirSync(join(root, "nest"));
    writeFileSync(join(root, ".gitignore"), "*.log\nout/\n");
    snapshot(root); // the rules change: a full scan
    writeFileSync(join(root, "new.txt"), "new\n");
    writeFileSync(join(root, "also.log"), "ignored\n");
    writeFileSync(join(root, "out", "built.js"), "ignored by its directory\n");
    writeFileSync(join(root, "nest", "a.txt"), "untracked, for now\n");
    symlinkSync("new.txt", join(root, "new-link"));
    expect(snapshot(root)).toEqual({ scan: "watched", reason: null });
    // The untracked nest/a.txt is in the record; a .git made beside it turns its directory into a nested repository.
    // (git add -A cannot take a repository without commits: the check is against a scan with no watcher, unwind's own diff.)
    git(join(root, "nest"), "init", "-q");
    const nested = unwind(root, ["--json", "snapshot"]);
    expect(JSON.parse(readFileSync(statePath(root)!, "utf8")).scan).toBe("pathspec");
    expect(git(root, "ls-tree", "-r", "--name-only", nested.json.tree)).not.toContain("nest/");
    expect(unwind(root, ["--json", "diff", "--last"]).json.files).toEqual([]);
    rmSync(join(root, "nest", ".git"), { recursive: true });
    expect(snapshot(root).scan).toBe("pathspec");
    rmSync(join(root, "new.txt"));
    expect(snapshot(root)).toEqual({ scan: "watched", reason: null });
    watch(root, "stop");
  });

  it("a Bash call's hook snapshots are told by the watcher, and the call's changes are exactly what it did", () => {
    const root = repo();
    watch(root, "start");
    snapshot(root); // takes the token
    const call = claudeCall(root, "claude:watched-bash", "Bash", { command: "edit two files" }, () => {
      writeFileSync(join(root, "base", "f1.txt"), "by the agent\n");
      rmSync(join(root, "base", "f2.txt"));
    });
    const kept = JSON.parse(readFileSync(statePath(root)!, "utf8"));
    expect([kept.scan, kept.reason]).toEqual(["watched", null]); // the post's snapshot
    const changes = unwind(root, ["--json", "changes", "--session", "claude:watched-bash", "--call", call]);
    expect(changes.json.entries.map((e: { path: string; change: string }) => [e.path, e.change])).toEqual([
      ["base/f1.txt", "modified"],
      ["base/f2.txt", "deleted"],
    ]);
    expect(snapshot(root).scan).toBe("watched");
    watch(root, "stop");
  });

  it("a watcher that does not answer costs a bounded wait and a full scan, never a wrong or hung snapshot", () => {
    const root = repo();
    const { pid } = watch(root, "start");
    snapshot(root);
    process.kill(pid, "SIGSTOP");
    try {
      writeFileSync(join(root, "base", "f3.txt"), "while it slept\n");
      const t0 = Date.now();
      const r = snapshot(root);
      expect(r.scan).toBe("full");
      expect(r.reason).toMatch(/^the watcher did not answer: no answer from the watcher within \d+ ms/);
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    // Awake again: its token was never kept, so one more full scan, then it is told again.
    expect(snapshot(root).scan).toBe("full");
    writeFileSync(join(root, "base", "f3.txt"), "awake\n");
    expect(snapshot(root).scan).toBe("watched");
    watch(root, "stop");
  });

  it("a plain snapshot finished without the command line prints what the command line prints", () => {
    const root = repo();
    watch(root, "start");
    snapshot(root);
    // Finished early (plain, no terminal) and through the command line (an option), both told by the watcher;
    // which bundles each process loaded is the evidence.
    const dir = tempDir();
    const spy = join(dir, "spy.cjs");
    writeFileSync(
      spy,
      `process.on("exit", () => require("fs").writeFileSync(process.env.SPY_OUT, Object.keys(require.cache).filter((f) => f.includes("dist")).map((f) => require("path").basename(f)).sort().join(" ")));\n`,
    );
    const loaded = (name: string, args: string[], env: Record<string, string> = {}) => {
      const out = join(dir, name);
      const r = unwind(root, args, { env: { ...env, NODE_OPTIONS: `--require ${spy}`, SPY_OUT: out } });
      return { ...r, bundles: readFileSync(out, "utf8") };
    };
    writeFileSync(join(root, "base", "f1.txt"), "one\n");
    const early = loaded("early", ["--json", "snapshot"], { UNWIND_TASK: "T-1" });
    writeFileSync(join(root, "base", "f1.txt"), "two\n");
    const cli = loaded("cli", ["--json", "snapshot", "--task", "T-1"]);
    expect([early.code, cli.code]).toEqual([0, 0]);
    expect(early.bundles).toBe("early-finish.cjs early.cjs");
    expect(cli.bundles).toBe("early.cjs unwind.cjs");
    expect(Object.keys(early.json)).toEqual(Object.keys(cli.json));
    expect({ ...early.json, id: 0, at: 0, parent: 0, commit: 0, tree: 0 }).toEqual({ ...cli.json, id: 0, at: 0, parent: 0, commit: 0, tree: 0 });
    expect(early.json.task).toBe("T-1");
    expect(early.stdout).toBe(JSON.stringify(early.json, null, 2) + "\n");
    const human = unwind(root, ["snapshot"]);
    expect(human.stdout).toMatch(/^s-\d{8}T\d{9}Z-[0-9a-f]{8} {2}tree [0-9a-f]{8}\n$/);
    expect(human.stderr).toBe("");
    // A bad UNWIND_TASK goes the command line's way: its usage error, exit 2.
    const bad = unwind(root, ["snapshot"], { env: { UNWIND_TASK: "bad..name" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^unwind: task name 'bad\.\.name'/);
    watch(root, "stop");
  });

  it("start is idempotent, stop without a watcher is no error, and the human forms say so", () => {
    const root = repo();
    expect(unwind(root, ["watch", "status"]).stdout).toMatch(/^not watching /);
    const first = unwind(root, ["watch", "start"]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^watching .* \(pid \d+\)/);
    const again = unwind(root, ["watch", "start"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^already watching /);
    const status = unwind(root, ["--json", "watch", "status"]).json;
    expect(Object.keys(status).sort()).toEqual(["canVouch", "events", "lastSnapshot", "pending", "pid", "root", "running", "since", "trouble"]);
    expect(unwind(root, ["watch", "stop"]).stdout).toMatch(/^stopped watching /);
    const none = unwind(root, ["watch", "stop"]);
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/^no watcher was running/);
  });
});
