import { appendFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, git, makeRepo, read, snapshotId, spawnSync, treeState, unwind, unwindAsync, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";

// The command line as a new user meets it (SPEC section 4): ids as the
// lists show them, --last, plan digests, lists that say when they are cut,
// colour that follows the usual switches, and errors in one form.

const S = "habits-0001";

function undone(): { root: string; receipts: string[] } {
  const root = makeRepo({ "a.txt": "one\n", "b.txt": "bee\n" });
  claudeCall(root, S, "Edit", { file_path: "a.txt" }, () => write(root, "a.txt", "two\n"));
  const receipts: string[] = [];
  for (let i = 0; i < 2; i++) {
    const r = unwind(root, ["undo", "--session", S, "--json"]);
    expect(r.code).toBe(0);
    receipts.push(r.json.receipt);
    const back = unwind(root, ["redo", r.json.receipt, "--json"]);
    expect(back.code).toBe(0);
    receipts.push(back.json.receipt);
  }
  return { root, receipts };
}

describe("ids", () => {
  it("a receipt by its unique suffix, by its prefix, and --last; a wrong id is exit 3 naming the newest", () => {
    const { root, receipts } = undone();
    expect(read(root, "a.txt")).toBe("two\n");
    const newest = receipts[receipts.length - 1]!;
    // --last takes back the newest receipt (a redo): the undo's effect returns
    const last = unwind(root, ["redo", "--last", "--dry-run", "--json"]);
    expect(last.code).toBe(0);
    expect(last.json.scope).toEqual({ kind: "receipt", id: newest });
    const bySuffix = unwind(root, ["redo", receipts[0]!.slice(-8), "--dry-run", "--json"]);
    expect(bySuffix.json.scope.id).toBe(receipts[0]);
    const wrong = unwind(root, ["redo", "r-nope-nope"]);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain("no receipt r-nope-nope");
    expect(wrong.stderr).toContain(newest); // candidates, newest first
    const none = unwind(root, ["redo"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^unwind: no receipt given \(.*--last\)\n$/);
    expect(read(root, "a.txt")).toBe("two\n"); // nothing of the above wrote
  });

  it("the short ids the lists show are accepted back", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const first = snapshotId(root);
    write(root, "a.txt", "two\n");
    snapshotId(root);
    const list = unwind(root, ["snapshots"]).stdout.trim().split("\n").slice(1);
    const shown = list.map((l) => l.split(/\s+/)[0]!);
    expect(shown).toHaveLength(2);
    for (const id of shown) expect(id.length).toBeLessThan(first.length);
    const r = unwind(root, ["restore", shown[1]!, "--dry-run", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json.scope.id).toBe(first);
  });
});

describe("plan digests", () => {
  it("--expect applies the previewed plan; a changed plan is exit 3 with nothing done; a fresh digest applies", () => {
    const root = makeRepo({ "a.txt": "one\n", "b.txt": "bee\n" });
    claudeCall(root, S, "Edit", { file_path: "a.txt" }, () => write(root, "a.txt", "two\n"));
    claudeCall(root, S, "Edit", { file_path: "b.txt" }, () => write(root, "b.txt", "bee2\n"));
    const preview = unwind(root, ["undo", "--session", S, "--dry-run", "--json"]);
    expect(preview.json.plan).toMatch(/^[0-9a-f]{64}$/);
    expect(unwind(root, ["undo", "--session", S, "--dry-run", "--json"]).json.plan).toBe(preview.json.plan); // stable
    write(root, "b.txt", "a person's edit\n");
    const before = treeState(root);
    const stale = unwind(root, ["undo", "--session", S, "--expect", preview.json.plan.slice(0, 12)]);
    expect(stale.code).toBe(3);
    expect(stale.stderr).toMatch(/no longer the one previewed/);
    expect(treeState(root)).toEqual(before);
    expect(unwind(root, ["receipts", "--json"]).json.receipts).toEqual([]);
    // negative control: the digest of the plan as it is now applies it (the person's edit stays, a conflict)
    const fresh = unwind(root, ["undo", "--session", S, "--dry-run", "--json"]).json.plan;
    expect(fresh).not.toBe(preview.json.plan);
    const ok = unwind(root, ["undo", "--session", S, "--expect", fresh, "--json"]);
    expect(ok.code).toBe(1);
    expect(ok.json.partial).toBe(true);
    expect(read(root, "a.txt")).toBe("one\n");
    expect(read(root, "b.txt")).toBe("a person's edit\n");
  });

  it("a digest that is not one is a usage error before anything is read", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const before = treeState(root);
    const r = unwind(root, ["undo", "--session", S, "--expect", "xyz"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--expect xyz: not a plan digest");
    expect(treeState(root)).toEqual(before);
  });
});

describe("lists", () => {
  it("-n cuts the list and says how many there are; --json carries the total", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    for (let i = 0; i < 3; i++) {
      write(root, "a.txt", `v${i}\n`);
      snapshotId(root);
    }
    const cut = unwind(root, ["snapshots", "-n", "2"]);
    expect(cut.stdout).toContain("showing 2 of 3 snapshots");
    expect(cut.stdout).toMatch(/\d+s ago/); // relative times
    const all = unwind(root, ["snapshots"]);
    expect(all.stdout).not.toContain("showing"); // control: an uncut list says nothing of the kind
    const j = unwind(root, ["snapshots", "--limit", "1", "--json"]).json;
    expect(j.snapshots).toHaveLength(1);
    expect(j.total).toBe(3);
    expect(j.snapshots[0]).not.toHaveProperty("v"); // no internal version field
    expect(j.snapshots[0].label).toBeNull(); // null for absent optional values
    expect(unwind(root, ["snapshots", "--since", "1h", "--json"]).json.total).toBe(3);
    expect(unwind(root, ["snapshots", "--since", "2999-01-01T00:00:00Z", "--json"]).json.total).toBe(0);
  });

  it("a table fits 100 columns when it is not on a terminal", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const long = "x".repeat(150);
    unwind(root, ["snapshot", "--label", long]);
    const lines = unwind(root, ["snapshots"]).stdout.trimEnd().split("\n");
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(100);
    expect(lines[1]).toContain("…");
    expect(unwind(root, ["snapshots", "--json"]).json.snapshots[0].label).toBe(long); // the data is whole
  });
});

describe("colour", () => {
  const painted = (env: Record<string, string>, args: string[] = []) => {
    const root = makeRepo({ "a.txt": "one\n" });
    return unwind(root, [...args, "snapshot"], { env }).stdout.includes("\u001b[");
  };
  it("--color always|never wins; NO_COLOR turns it off and FORCE_COLOR on under auto; a pipe gets none", () => {
    expect(painted({ NO_COLOR: "" }, ["--color", "always"])).toBe(true);
    expect(painted({ NO_COLOR: "", FORCE_COLOR: "1" }, ["--color", "never"])).toBe(false);
    expect(painted({ NO_COLOR: "", FORCE_COLOR: "1" })).toBe(true);
    expect(painted({ NO_COLOR: "1", FORCE_COLOR: "1" })).toBe(false);
    expect(painted({ NO_COLOR: "" })).toBe(false); // stdout is a pipe here
    expect(painted({ NO_COLOR: "", FORCE_COLOR: "0" })).toBe(false);
  });
});

describe("errors and help", () => {
  it("errors from the parser and from unwind read alike: one `unwind:` line with what to do", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    for (const args of [["frobnicate"], ["snapshots", "--bogus"], ["undo"], ["snapshots", "-n", "zero"], ["--color", "purple", "status"]]) {
      const r = unwind(root, args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toMatch(/^unwind: .+\(.+\)\n/);
    }
  });

  it("every command's help describes each option and ends with an example", async () => {
    const root = makeRepo({});
    const top = unwind(root, ["--help"]).stdout;
    const commands = [...top.matchAll(/^ {2}([a-z-]+)(?: \[options\]| <|\s|$)/gm)].map((m) => m[1]!).filter((c) => c !== "help" && !c.startsWith("-"));
    expect(commands).toContain("undo");
    const parents = ["stack", "task", "baseline"];
    expect(commands).toEqual(expect.arrayContaining(parents));
    const all = [...commands.filter((c) => !parents.includes(c)), "baseline capture", "baseline list", "task list"];
    // Some 40 processes: asked all at once, so a loaded machine's start-up cost is paid in parallel, not 40 times over.
    const helps = await Promise.all(all.map((c) => unwindAsync(root, [...c.split(" "), "--help"])));
    for (const [k, c] of all.entries()) {
      const h = helps[k]!.stdout;
      if (h.includes("(not built yet)")) continue;
      expect(h, c).toMatch(/Examples?:\n {2}\$ unwind /);
      if (c !== "hook") expect(h, c).toContain("Global Options:"); // the hook is its own small bundle, not the command line
      for (const line of h.split("\n").filter((l) => /^ {2}-/.test(l))) expect(line.trim(), `${c}: ${line}`).toMatch(/\S\s{2,}\S/);
    }
  });

  it("every command of the contract is built: none is listed as not built, and the last ones to land answer", () => {
    const root = makeRepo({});
    const top = unwind(root, ["--help"]).stdout;
    expect(top).not.toMatch(/not built yet/);
    for (const c of ["push", "fetch", "task"]) expect(top).toMatch(new RegExp(`^ {2}${c}\\b`, "m"));
    expect(unwind(root, ["task", "--help"]).stdout).toMatch(/^ {2}list\b/m);
    // They answer instead of saying "not built yet" (exit 2): an empty store has no tasks, and nothing to push.
    const tasks = unwind(root, ["task", "list", "--json"]);
    expect([tasks.code, tasks.json]).toEqual([0, { tasks: [] }]);
    const push = unwind(root, ["push", "--all", "--dry-run", "--json", root]);
    expect(push.stderr).not.toMatch(/not built yet/);
    expect(push.code).toBe(0);
  });

  it("`unwind hook` run by hand on a terminal says how it is used and logs no error", () => {
    const root = makeRepo({});
    // `script` gives the hook a terminal on stdin, as a person's shell would.
    const r = spawnSync("script", ["-qec", `${process.execPath} ${BIN} hook claude`, "/dev/null"], { cwd: root, encoding: "utf8", input: "", timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("reads one hook event (JSON) from stdin");
    expect(unwind(root, ["status", "--json"]).json.errorCount).toBe(0);
    // control: the same command with a pipe on stdin (as a harness runs it) logs the bad input
    expect(unwind(root, ["hook", "claude"], { input: "not json" }).code).toBe(0);
    expect(unwind(root, ["status", "--json"]).json.errorCount).toBe(1);
  });

  it("status errors can be acknowledged: shown until then, kept in the log after", () => {
    const root = makeRepo({});
    unwind(root, ["hook", "claude"], { input: "not json" });
    expect(unwind(root, ["status"]).stdout).toMatch(/errors\s+1 not yet acknowledged/);
    const ack = unwind(root, ["status", "--ack", "--json"]).json;
    expect(ack.acknowledged).toBe(1);
    expect(unwind(root, ["status"]).stdout).toMatch(/errors\s+none/);
    unwind(root, ["hook", "claude"], { input: "still not json" });
    expect(unwind(root, ["status", "--json"]).json.errorCount).toBe(1); // a new one shows again
  });
});

describe("review fixes", () => {
  it("redo --last is this work tree's newest receipt; another worktree's receipt is refused unless --any-worktree", () => {
    const root = makeRepo({ "x.txt": "committed\n" });
    const wt = `${root}-wt`;
    git(root, "worktree", "add", "-q", "-b", "side", wt);
    claudeCall(wt, "wt-sess", "Edit", { file_path: `${wt}/x.txt` }, () => write(wt, "x.txt", "agent in the worktree\n"));
    const u = unwind(wt, ["undo", "--session", "wt-sess", "--json"]);
    expect(u.code).toBe(0);
    const before = treeState(root);
    const last = unwind(root, ["redo", "--last"]);
    expect(last.code).toBe(3); // this work tree has no receipt of its own
    const byId = unwind(root, ["redo", u.json.receipt]);
    expect(byId.code).toBe(3);
    expect(byId.stderr).toContain("applied in another work tree");
    expect(treeState(root)).toEqual(before); // nothing written here
    // control: in its own worktree, --last is that receipt and redo brings the agent's work back
    expect(unwind(wt, ["redo", "--last"]).code).toBe(0);
    expect(read(wt, "x.txt")).toBe("agent in the worktree\n");
    rmSync(wt, { recursive: true, force: true });
  });

  it("an unreadable error line is acknowledged like any other, and errors after it still show", () => {
    const root = makeRepo({});
    unwind(root, ["hook", "claude"], { input: "not json" }); // creates the store and one error
    appendFileSync(join(root, ".git", "unwind", "errors.jsonl"), "{torn\n");
    expect(unwind(root, ["status", "--json"]).json.errorCount).toBe(2);
    expect(unwind(root, ["status", "--ack", "--json"]).json.acknowledged).toBe(2);
    expect(unwind(root, ["status", "--json"]).json.errorCount).toBe(0);
    unwind(root, ["hook", "claude"], { input: "still not json" });
    const after = unwind(root, ["status", "--json"]).json;
    expect(after.errorCount).toBe(1);
    expect(after.errors[0].kind).toBe("bad-input");
  });

  it("the preview shows every path whole, however long; lists cut only their free text", () => {
    const deep = `src/${"components/authentication/".repeat(4)}oauth-google-callback-handler.ts`;
    const root = makeRepo({ [deep]: "one\n" });
    claudeCall(root, S, "Edit", { file_path: join(root, deep) }, () => write(root, deep, "two\n"));
    const dry = unwind(root, ["undo", "--session", S, "--dry-run"]);
    expect(dry.stdout).toContain(deep);
    expect(unwind(root, ["changes", "--session", S]).stdout).toContain(deep);
    expect(unwind(root, ["log"]).stdout).toContain(deep);
  });
});
