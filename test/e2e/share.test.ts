import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { dirFingerprint, git, makeRepo, read, tempDir, treeState, unwind, write } from "../helpers.js";
import { claudeCall, claudeCallEnv } from "../journal-helpers.js";

// SPEC section 14 with real git remotes: a bare repository on disk, two
// clones as two machines. Clone A records two agent sessions (through the
// real `unwind hook claude` process, Claude's own payload shapes) and a
// person's edit, pushes its branch and its record; clone B pulls, fetches,
// and takes back exactly one session.

const S1 = "5b1e0c2a-1111-4c6e-9a55-0f3d2b7c9e01";
const S2 = "9d4f7a3b-2222-4b1d-8e66-1a2b3c4d5e6f";

/** Every ref and what it names, and the object count: what "nothing changed" means for a repository. */
function repoState(gitDir: string): { refs: string; objects: string } {
  const refs = git(gitDir, "for-each-ref", "--format=%(objectname) %(refname)");
  const objects = git(gitDir, "count-objects", "-v")
    .split("\n")
    .filter((l) => /^(count|in-pack|packs|size-pack|size):/.test(l))
    .join("\n");
  return { refs, objects };
}

function sharedRefs(gitDir: string): string[] {
  return git(gitDir, "for-each-ref", "--format=%(refname)", "refs/unwind/shared/").split("\n").filter(Boolean);
}

/** A forged copy of a shared commit: `edit` rewrites one file of its tree; the commit message (and so the seal) is kept. */
function forge(repo: string, ref: string, file: string, edit: (text: string) => string): string {
  const commit = git(repo, "rev-parse", ref).trim();
  const text = git(repo, "cat-file", "blob", `${commit}:${file}`);
  const blobFile = join(tempDir("unwind-forge-"), "blob");
  writeFileSync(blobFile, edit(text));
  const blob = git(repo, "hash-object", "-w", blobFile).trim();
  const tree = git(repo, "ls-tree", commit)
    .split("\n")
    .filter(Boolean)
    .map((l) => (l.endsWith(`\t${file}`) ? l.replace(/blob [0-9a-f]+/, `blob ${blob}`) : l))
    .join("\n");
  const newTree = spawnGit(repo, ["mktree"], tree + "\n").trim();
  const message = git(repo, "log", "-1", "--format=%B", commit).trim();
  const forged = git(repo, "commit-tree", newTree, "-m", message).trim();
  git(repo, "update-ref", ref, forged);
  return commit;
}

function spawnGit(cwd: string, args: string[], input: string): string {
  return execFileSync("git", args, { cwd, input, encoding: "utf8" });
}

interface World {
  remote: string;
  a: string;
  b: string;
  origin: string;
  s1: string;
  s2: string;
  /** B's work tree right after the pull: every file at the sessions' post states. */
  pulled: Record<string, string>;
  /** B's shared refs right after its fetch. */
  fetchedRefs: string;
}

let w: World;

beforeAll(() => {
  const base = tempDir("unwind-share-");
  const remote = join(base, "remote.git");
  git(base, "init", "-q", "--bare", "-b", "main", remote);
  const a = makeRepo({
    "README.md": "# project\n",
    "src/a.ts": "export const a = 1;\n",
    "src/b.ts": "export const b = 1;\n",
    "src/c.ts": "export const c = 'old';\n",
    ".env": "TOKEN=first\n",
  });
  git(a, "remote", "add", "origin", remote);
  git(a, "push", "-q", "origin", "main");

  // Session 1: an Edit through the file tool, and a shell command (tree snapshots) that rewrites src/c.ts.
  claudeCall(a, S1, "Write", { file_path: join(a, "src/a.ts"), content: "export const a = 2;\n" }, () => write(a, "src/a.ts", "export const a = 2;\n"));
  claudeCall(a, S1, "Bash", { command: "sed -i s/old/new/ src/c.ts" }, () => write(a, "src/c.ts", "export const c = 'new';\n"));
  // Session 2: a source file, a new file, and a secret.
  claudeCall(a, S2, "Write", { file_path: join(a, "src/b.ts"), content: "export const b = 2;\n" }, () => write(a, "src/b.ts", "export const b = 2;\n"));
  claudeCall(a, S2, "Write", { file_path: join(a, "src/d.ts"), content: "export const d = 1;\n" }, () => write(a, "src/d.ts", "export const d = 1;\n"));
  claudeCall(a, S2, "Write", { file_path: join(a, ".env"), content: "TOKEN=second-secret\n" }, () => write(a, ".env", "TOKEN=second-secret\n"));
  // A person's edit, recorded by no session.
  write(a, "README.md", "# project\n\nedited by a person\n");
  git(a, "add", "-A");
  git(a, "commit", "-q", "-m", "agent work");
  git(a, "push", "-q", "origin", "main");

  // A default push never carries the record.
  expect(git(remote, "for-each-ref", "refs/unwind/")).toBe("");

  const pushed = unwind(a, ["push", "--all", "--json"]);
  expect(pushed.code, pushed.stderr).toBe(0);
  expect(pushed.stderr).toContain("secret-looking paths");
  expect(pushed.stderr).toContain(".env");
  const origin = pushed.json.origin as string;
  const names = pushed.json.sessions.map((s: any) => s.session).sort();
  expect(names).toEqual([`claude:${S1}`, `claude:${S2}`].sort());

  const b = join(base, "b");
  git(base, "clone", "-q", remote, b);
  // A plain clone brings no record either.
  expect(git(b, "for-each-ref", "refs/unwind/")).toBe("");
  const pulled = treeState(b);
  const f = unwind(b, ["fetch", "--json"]);
  expect(f.code, f.stderr).toBe(0);
  w = { remote, a, b, origin, s1: `claude:${S1}`, s2: `claude:${S2}`, pulled, fetchedRefs: git(b, "for-each-ref", "refs/unwind/shared/") };
});

describe("unwind push and fetch through a bare repository", () => {
  it("status counts the records fetched from other machines, not this store's own pushed ones", () => {
    expect(unwind(w.b, ["status", "--json"]).json.fetched).toBe(2);
    expect(unwind(w.b, ["status"]).stdout).toMatch(/^fetched +2 record\(s\) from other machines/m);
    // Control: the clone that pushed them holds the same refs as its own.
    expect(git(w.a, "for-each-ref", "refs/unwind/shared/").trim().split("\n")).toHaveLength(2);
    expect(unwind(w.a, ["status", "--json"]).json.fetched).toBe(0);
  });

  it("fetch makes both sessions visible with their origin, calls and change sets", () => {
    const s = unwind(w.b, ["sessions", "--json"]);
    expect(s.code).toBe(0);
    const list = s.json.sessions.map((x: any) => [x.session, x.origin, x.calls]).sort();
    expect(list).toEqual([
      [w.s1, w.origin, 2],
      [w.s2, w.origin, 3],
    ]);
    expect(unwind(w.b, ["sessions"]).stdout).toContain("ORIGIN");

    const log = unwind(w.b, ["log", "--session", S1.slice(0, 8), "--json"]);
    expect(log.code).toBe(0);
    expect(log.json.calls.map((c: any) => [c.tool, c.paths, c.origin])).toEqual([
      ["Bash", ["src/c.ts"], w.origin],
      ["Write", ["src/a.ts"], w.origin],
    ]);

    const cs = unwind(w.b, ["changes", "--session", w.s2, "--json"]);
    expect(cs.code).toBe(0);
    expect(cs.json.entries.map((e: any) => [e.path, e.change])).toEqual([
      [".env", "modified"],
      ["src/b.ts", "modified"],
      ["src/d.ts", "added"],
    ]);
    // The secret's states travel without content and without a hash.
    const env = cs.json.entries.find((e: any) => e.path === ".env");
    expect([env.pre, env.post]).toEqual([{ kind: "unknown" }, { kind: "unknown" }]);
  });

  it("the secret's bytes are not in the pushed record, and another file's are (negative control)", () => {
    const shared = sharedRefs(w.remote);
    expect(shared).toHaveLength(2);
    const reachable = git(w.remote, "rev-list", "--objects", ...shared);
    const oidOf = (text: string) => spawnGit(w.remote, ["hash-object", "--stdin"], text).trim();
    expect(reachable).not.toContain(oidOf("TOKEN=second-secret\n"));
    expect(reachable).not.toContain(oidOf("TOKEN=first\n"));
    expect(reachable).toContain(oidOf("export const b = 2;\n"));
    expect(reachable).toContain(oidOf("export const b = 1;\n"));
    // Nor its hash: no line of the records names the secret's SHA-256.
    const sha = createHash("sha256").update("TOKEN=second-secret\n").digest("hex");
    for (const ref of shared) {
      expect(git(w.remote, "cat-file", "blob", `${ref}:records.jsonl`)).not.toContain(sha);
      expect(git(w.remote, "cat-file", "blob", `${ref}:session.json`)).not.toContain(sha);
    }
  });

  it("takes back exactly one fetched session on the pulled branch, and redoes it", () => {
    expect(treeState(w.b)).toEqual(w.pulled);
    const dry = unwind(w.b, ["undo", "--session", w.s1, "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    expect(treeState(w.b)).toEqual(w.pulled);

    const u = unwind(w.b, ["undo", "--session", w.s1, "--json"]);
    expect(u.code, u.stderr).toBe(0);
    expect(u.json.items.map((i: any) => [i.path, i.action])).toEqual([
      ["src/a.ts", "restore"],
      ["src/c.ts", "restore"],
    ]);
    expect(read(w.b, "src/a.ts")).toBe("export const a = 1;\n");
    expect(read(w.b, "src/c.ts")).toBe("export const c = 'old';\n");
    // Exactly that session: the other session's files and the person's edit are as pulled.
    const now = treeState(w.b);
    for (const p of Object.keys(w.pulled)) if (p !== "src/a.ts" && p !== "src/c.ts") expect([p, now[p]]).toEqual([p, w.pulled[p]]);
    expect(read(w.b, "README.md")).toContain("edited by a person");
    expect(git(w.b, "status", "--porcelain")).toBe(" M src/a.ts\n M src/c.ts\n");

    const r = unwind(w.b, ["redo", u.json.receipt, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(treeState(w.b)).toEqual(w.pulled);
    // Nothing was written into the fetched record, nor a local journal for it.
    expect(git(w.b, "for-each-ref", "refs/unwind/shared/")).toBe(w.fetchedRefs);
    expect(existsSync(join(w.b, ".git/unwind/journal")) ? readdirSync(join(w.b, ".git/unwind/journal")) : []).toEqual([]);
  });

  it("a local edit since is a conflict and the secret is not-captured, each left untouched", () => {
    write(w.b, "src/b.ts", "export const b = 'mine';\n");
    const before = treeState(w.b);
    const u = unwind(w.b, ["undo", "--session", w.s2, "--json"]);
    expect(u.code).toBe(1);
    expect(u.json.items.map((i: any) => [i.path, i.action, i.reason])).toEqual([
      [".env", "conflict", "not-captured"],
      ["src/b.ts", "conflict", "changed-since"],
      ["src/d.ts", "delete", null],
    ]);
    expect(read(w.b, "src/b.ts")).toBe("export const b = 'mine';\n");
    expect(read(w.b, ".env")).toBe("TOKEN=second-secret\n");
    expect(existsSync(join(w.b, "src/d.ts"))).toBe(false);
    // Negative control: the delete did happen, so the untouched paths above are the planner's refusals.
    expect(treeState(w.b)).not.toEqual(before);
    const back = unwind(w.b, ["redo", u.json.receipt, "--json"]);
    expect(back.code).toBe(0);
    write(w.b, "src/b.ts", "export const b = 2;\n");
    expect(treeState(w.b)).toEqual(w.pulled);
  });

  it("pushing twice and fetching twice change nothing; new work moves the ref fast-forward", () => {
    const remoteBefore = repoState(w.remote);
    const again = unwind(w.a, ["push", "--all", "--json"]);
    expect(again.code).toBe(0);
    expect(again.json.sessions.map((s: any) => s.status)).toEqual(["unchanged", "unchanged"]);
    expect(repoState(w.remote)).toEqual(remoteBefore);

    const bBefore = repoState(w.b);
    const f = unwind(w.b, ["fetch", "--json"]);
    expect(f.code).toBe(0);
    expect(f.json.refs.every((r: any) => r.status === "unchanged")).toBe(true);
    expect(repoState(w.b)).toEqual(bBefore);
    expect(existsSync(join(w.b, ".git/FETCH_HEAD"))).toBe(false);

    // Negative control: new work in session 1 is pushed as a child of the last push, and fetched.
    const ref = git(w.a, "for-each-ref", "--format=%(refname)", `refs/unwind/shared/${w.origin}/`).split("\n").filter(Boolean);
    const s1Ref = unwind(w.a, ["push", "--session", S1, "--dry-run", "--json"]).json.sessions[0].ref as string;
    expect(ref).toContain(s1Ref);
    const old = git(w.a, "rev-parse", s1Ref).trim();
    claudeCall(w.a, S1, "Write", { file_path: join(w.a, "src/e.ts"), content: "e\n" }, () => write(w.a, "src/e.ts", "e\n"));
    const moved = unwind(w.a, ["push", "--session", S1, "--json"]);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.json.sessions[0].status).toBe("updated");
    expect(git(w.remote, "rev-parse", `${s1Ref}^`).trim()).toBe(old);
    expect(repoState(w.remote)).not.toEqual(remoteBefore);
    const f2 = unwind(w.b, ["fetch", "--json"]);
    expect(f2.json.refs.find((r: any) => r.ref === s1Ref).status).toBe("updated");
    expect(repoState(w.b)).not.toEqual(bBefore);
  });

  it("a tampered fetched record is refused by verify and by undo; the untampered one passes", () => {
    const ok = unwind(w.b, ["verify", "--json"]);
    expect(ok.code, JSON.stringify(ok.json?.problems)).toBe(0);
    expect(ok.json.shared).toBe(2);
    const s2Ref = sharedRefs(w.b).find((r) => git(w.b, "cat-file", "blob", `${r}:session.json`).includes(S2))!;

    // session.json edited, the seal in the commit message left as it was.
    const original = forge(w.b, s2Ref, "session.json", (t) => t.replace('"src/d.ts","change":"added"', '"README.md","change":"added"'));
    const v = unwind(w.b, ["verify", "--json"]);
    expect(v.code).toBe(4);
    expect(v.json.problems.map((p: any) => p.kind)).toEqual(["shared"]);
    expect(v.json.problems[0].message).toContain("seal");
    const before = treeState(w.b);
    const u = unwind(w.b, ["undo", "--session", w.s2]);
    expect(u.code).toBe(4);
    expect(u.stderr).toContain("fails its check");
    expect(treeState(w.b)).toEqual(before);

    // records.jsonl edited: session.json's hash of it no longer holds.
    git(w.b, "update-ref", s2Ref, original);
    forge(w.b, s2Ref, "records.jsonl", (t) => t.replace("src/d.ts", "src/x.ts"));
    const v2 = unwind(w.b, ["verify", "--json"]);
    expect(v2.code).toBe(4);
    expect(v2.json.problems[0].message).toContain("records.jsonl");
    expect(unwind(w.b, ["undo", "--session", w.s2, "--dry-run"]).code).toBe(4);

    // Put back: verify passes again and the session can be planned (negative control for the refusals).
    git(w.b, "update-ref", s2Ref, original);
    expect(unwind(w.b, ["verify"]).code).toBe(0);
    expect(unwind(w.b, ["undo", "--session", w.s2, "--dry-run"]).code).toBe(1);
  });

  it("bad input is one line, the usage or not-found exit code, and changes nothing", () => {
    const fresh = makeRepo({ "f.txt": "1\n" });
    git(fresh, "remote", "add", "origin", w.remote);
    claudeCall(fresh, "7e7e7e7e-3333-4c4c-8d8d-9f9f9f9f9f9f", "Write", { file_path: join(fresh, "f.txt"), content: "2\n" }, () => write(fresh, "f.txt", "2\n"));
    const store = dirFingerprint(join(fresh, ".git/unwind"));
    const remote = repoState(w.remote);
    const cases: [string[], number, RegExp][] = [
      [["push"], 2, /nothing chosen to push/],
      [["push", "--all", "--session", "7e7e7e7e"], 2, /one choice at a time/],
      [["push", "no-such-remote", "--all"], 2, /no remote 'no-such-remote'/],
      [["push", "--session", "nosuchsession"], 3, /no session 'nosuchsession'/],
      [["push", "--task", "no-task"], 3, /no session was recorded with task/],
      [["push", "--run", "run-x"], 3, /no run run-x/],
      [["push", "--all", "--exclude", "../x"], 2, /--exclude/],
      [["fetch", "no-such-remote"], 2, /no remote 'no-such-remote'/],
      [["push", "--all", "--dry-run"], 0, /would push 1 session/],
    ];
    for (const [args, code, message] of cases) {
      const r = unwind(fresh, args);
      expect([args.join(" "), r.code]).toEqual([args.join(" "), code]);
      expect(r.stdout + r.stderr).toMatch(message);
      if (code !== 0) expect(r.stderr.trim().split("\n")[0]).toMatch(/^unwind: /);
    }
    expect(dirFingerprint(join(fresh, ".git/unwind"))).toEqual(store);
    expect(sharedRefs(fresh)).toEqual([]);
    expect(repoState(w.remote)).toEqual(remote);
    // Nothing recorded: `--all` is nothing to do (exit 0), and writes nothing, not even a store.
    const empty = makeRepo({ "x.txt": "x\n" });
    git(empty, "remote", "add", "origin", w.remote);
    const none = unwind(empty, ["push", "--all"]);
    expect([none.code, none.stdout.trim()]).toEqual([0, "nothing to push"]);
    expect(existsSync(join(empty, ".git/unwind"))).toBe(false);
    expect(repoState(w.remote)).toEqual(remote);
    // Negative control: the same push for real writes the origin, the ref, and the remote's ref.
    expect(unwind(fresh, ["push", "--all"]).code).toBe(0);
    expect(sharedRefs(fresh)).toHaveLength(1);
    expect(repoState(w.remote)).not.toEqual(remote);
  });

  it("--exclude leaves a path's content out; on the other side it is not-captured", () => {
    const a2 = makeRepo({ "gen/out.txt": "v1\n", "keep.txt": "k1\n" });
    const bare = join(tempDir("unwind-share-x-"), "r.git");
    git(a2, "init", "-q", "--bare", "-b", "main", bare);
    git(a2, "remote", "add", "origin", bare);
    git(a2, "config", "unwind.origin", "ci-runner-7");
    const S = "abababab-4444-4e4e-9f9f-0a0a0a0a0a0a";
    claudeCallEnv(a2, S, "Write", { file_path: join(a2, "gen/out.txt"), content: "v2\n" }, () => write(a2, "gen/out.txt", "v2\n"), { UNWIND_TASK: "ci-7" });
    claudeCallEnv(a2, S, "Write", { file_path: join(a2, "keep.txt"), content: "k2\n" }, () => write(a2, "keep.txt", "k2\n"), { UNWIND_TASK: "ci-7" });
    git(a2, "commit", "-qam", "work");
    git(a2, "push", "-q", "origin", "main");
    const dry = unwind(a2, ["push", "--session", S, "--exclude", "gen/**", "--dry-run", "--json"]);
    expect(dry.json.origin).toBe("ci-runner-7");
    expect(dry.json.sessions[0].excluded).toEqual([{ path: "gen/out.txt", why: "exclude", rule: "gen/**" }]);
    expect(dry.json.sessions[0].bytes).toBeGreaterThan(0);
    expect(unwind(a2, ["push", "--session", S, "--exclude", "gen/**"]).code).toBe(0);
    expect(sharedRefs(bare)[0]).toMatch(/^refs\/unwind\/shared\/ci-runner-7\/sessions\/claude-[0-9a-f]{16}$/);
    const b2 = join(tempDir("unwind-share-x-"), "b");
    git(a2, "clone", "-q", bare, b2);
    expect(unwind(b2, ["fetch"]).code).toBe(0);
    // A fetched task is not folded from its sessions' change sets: refused, naming them.
    const task = unwind(b2, ["undo", "--task", "ci-7", "--dry-run"]);
    expect(task.code).toBe(3);
    expect(task.stderr).toContain(`only fetched sessions here (claude:${S})`);
    expect(unwind(b2, ["sessions", "--task", "ci-7", "--json"]).json.sessions.map((x: any) => x.session)).toEqual([`claude:${S}`]);
    const u = unwind(b2, ["undo", "--session", S, "--json"]);
    expect(u.code).toBe(1);
    expect(u.json.items.map((i: any) => [i.path, i.action, i.reason])).toEqual([
      ["gen/out.txt", "conflict", "not-captured"],
      ["keep.txt", "restore", null],
    ]);
    expect(read(b2, "gen/out.txt")).toBe("v2\n");
    expect(read(b2, "keep.txt")).toBe("k1\n");
  });

  it("neither push nor fetch is forced: a ref rewritten on the remote is refused, and nothing local moves", () => {
    const s2Ref = unwind(w.a, ["push", "--session", S2, "--dry-run", "--json"]).json.sessions[0].ref as string;
    const original = git(w.remote, "rev-parse", s2Ref).trim();
    const emptyTree = spawnGit(w.remote, ["mktree"], "").trim();
    const stranger = git(w.remote, "commit-tree", emptyTree, "-m", "not a descendant").trim();
    git(w.remote, "update-ref", s2Ref, stranger);

    // Push: new work in session 2, but the remote's ref is not an ancestor of the new commit.
    claudeCall(w.a, S2, "Write", { file_path: join(w.a, "src/f.ts"), content: "f\n" }, () => write(w.a, "src/f.ts", "f\n"));
    const localBefore = git(w.a, "rev-parse", s2Ref).trim();
    const p = unwind(w.a, ["push", "--session", S2]);
    expect(p.code).toBe(3);
    expect(p.stderr).toContain("refused");
    expect(git(w.a, "rev-parse", s2Ref).trim()).toBe(localBefore);
    expect(git(w.remote, "rev-parse", s2Ref).trim()).toBe(stranger);

    // Fetch: B holds the original; the remote's rewrite is not taken.
    const bBefore = git(w.b, "rev-parse", s2Ref).trim();
    const f = unwind(w.b, ["fetch"]);
    expect(f.code).toBe(3);
    expect(f.stderr).toContain("rejected");
    expect(git(w.b, "rev-parse", s2Ref).trim()).toBe(bBefore);

    // Negative control: with the remote's ref put back, both go through, fast-forward.
    git(w.remote, "update-ref", s2Ref, original);
    const again = unwind(w.a, ["push", "--session", S2, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(git(w.remote, "rev-parse", `${s2Ref}^`).trim()).toBe(localBefore);
    expect(unwind(w.b, ["fetch"]).code).toBe(0);
    expect(git(w.b, "rev-parse", s2Ref).trim()).toBe(git(w.remote, "rev-parse", s2Ref).trim());
  });

  it("a fetch never moves this store's own records, whatever the remote holds under its origin", () => {
    const s1Ref = unwind(w.a, ["push", "--session", S1, "--dry-run", "--json"]).json.sessions[0].ref as string;
    const mine = git(w.a, "rev-parse", s1Ref).trim();
    // Someone appends a commit to A's record on the remote (a fast-forward).
    const child = git(w.remote, "commit-tree", `${mine}^{tree}`, "-p", mine, "-m", "appended by someone else").trim();
    git(w.remote, "update-ref", s1Ref, child);
    const f = unwind(w.a, ["fetch", "--json"]);
    expect(f.code, f.stderr).toBe(0);
    expect(git(w.a, "rev-parse", s1Ref).trim()).toBe(mine);
    // Negative control: another store takes the same fast-forward.
    expect(unwind(w.b, ["fetch"]).code).toBe(0);
    expect(git(w.b, "rev-parse", s1Ref).trim()).toBe(child);
  });

  it("a run capsule travels too: listed with its origin, taken back on the pulled branch, its secret not-captured, a tampered one refused", () => {
    const a3 = makeRepo({ "src/m.ts": "m1\n" });
    const bare = join(tempDir("unwind-share-run-"), "r.git");
    git(a3, "init", "-q", "--bare", "-b", "main", bare);
    git(a3, "remote", "add", "origin", bare);
    git(a3, "config", "unwind.origin", "ci-run-host");
    const ran = unwind(a3, ["run", "--id", "fmt-1", "--", "sh", "-c", "printf 'gen\\n' > gen.txt; printf 'm2\\n' > src/m.ts; printf 'K=1\\n' > deploy.key"]);
    expect(ran.code, ran.stderr).toBe(0);
    git(a3, "add", "-A");
    git(a3, "commit", "-qm", "run");
    git(a3, "push", "-q", "origin", "main");
    const store = dirFingerprint(join(a3, ".git/unwind"));
    expect(unwind(a3, ["push", "--run", "no-such-run"]).code).toBe(3);
    expect(dirFingerprint(join(a3, ".git/unwind"))).toEqual(store);
    const p = unwind(a3, ["push", "--run", "fmt-1", "--json"]);
    expect(p.code, p.stderr).toBe(0);
    expect([p.json.runs[0].ref, p.json.runs[0].excluded, p.json.secrets]).toEqual([
      "refs/unwind/shared/ci-run-host/runs/fmt-1",
      [{ path: "deploy.key", why: "secret", rule: "*.key" }],
      ["deploy.key"],
    ]);
    expect(unwind(a3, ["push", "--run", "fmt-1", "--json"]).json.runs[0].status).toBe("unchanged");

    const b3 = join(tempDir("unwind-share-run-"), "b");
    git(a3, "clone", "-q", bare, b3);
    const f = unwind(b3, ["fetch", "--json"]);
    expect([f.code, f.json.runs]).toEqual([0, 1]);
    const runs = unwind(b3, ["runs", "--json"]);
    expect(runs.json.runs.map((r: any) => [r.id, r.origin])).toEqual([["fmt-1", "ci-run-host"]]);
    const cs = unwind(b3, ["changes", "--run", "fmt-1", "--json"]);
    expect(cs.json.entries.map((e: any) => [e.path, e.change, e.decision])).toEqual([
      ["deploy.key", "added", "review"],
      ["gen.txt", "added", "review"],
      ["src/m.ts", "modified", "review"],
    ]);
    expect(cs.json.entries[0].post).toEqual({ kind: "unknown" });

    // Tampered run.json (seal kept): verify and undo refuse it, nothing is touched.
    const ref = "refs/unwind/shared/ci-run-host/runs/fmt-1";
    const original = forge(b3, ref, "run.json", (t) => t.replace('"path":"gen.txt"', '"path":"src/m.ts.bak"'));
    expect(unwind(b3, ["verify"]).code).toBe(4);
    const pulled = treeState(b3);
    const refused = unwind(b3, ["undo", "--run", "fmt-1"]);
    expect([refused.code, treeState(b3)]).toEqual([4, pulled]);
    expect(refused.stderr).toContain("fails its check");
    git(b3, "update-ref", ref, original);
    expect(unwind(b3, ["verify"]).code).toBe(0);

    const u = unwind(b3, ["undo", "--run", "fmt-1", "--json"]);
    expect(u.code).toBe(1);
    expect(u.json.items.map((i: any) => [i.path, i.action, i.reason])).toEqual([
      ["deploy.key", "conflict", "not-captured"],
      ["gen.txt", "delete", null],
      ["src/m.ts", "restore", null],
    ]);
    expect([read(b3, "src/m.ts"), existsSync(join(b3, "gen.txt")), read(b3, "deploy.key")]).toEqual(["m1\n", false, "K=1\n"]);
    // The undo's receipt is B's record; nothing is written for the fetched capsule.
    expect(existsSync(join(b3, ".git/unwind/runs"))).toBe(false);
    expect(unwind(b3, ["redo", "--last"]).code).toBe(0);
    expect(treeState(b3)).toEqual(pulled);

    // A capsule tampered where it was recorded is never shared (exit 4, nothing pushed).
    const capsule = join(a3, ".git/unwind/runs/fmt-1.json");
    chmodSync(capsule, 0o644);
    writeFileSync(capsule, readFileSync(capsule, "utf8").replace('"path":"gen.txt"', '"path":"gen.tx2"'));
    const remoteBefore = repoState(bare);
    expect(unwind(a3, ["push", "--run", "fmt-1"]).code).toBe(4);
    expect(repoState(bare)).toEqual(remoteBefore);
  });
});
