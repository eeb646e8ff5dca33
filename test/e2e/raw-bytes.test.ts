import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git, makeRepo, unwind } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";

/**
 * The record holds a file's bytes as they were on disk, wherever git's own
 * conversion (eol, autocrlf, a clean filter) would change them on the way
 * in (issue: a change to line endings alone was invisible, and an untracked
 * CRLF file's bytes were gone for good after its undo). Each test's
 * negative control is git's own view: the clean form is the same before and
 * after, so a record kept in git's form cannot see the change.
 */

const S = "sess-raw-1111";
const bytes = (root: string, rel: string) => readFileSync(join(root, rel), "latin1");
/** git's id of the file as git would store it (through its conversion). */
const cleanId = (root: string, rel: string) => git(root, "hash-object", rel).trim();
const shell = (root: string, command: string, effect: () => void) => claudeCall(root, S, "Bash", { command }, effect);
const paths = (root: string, scope: string[]) => unwind(root, ["changes", ...scope, "--json"]).json.entries.map((e: { path: string }) => e.path);

describe("line endings alone", () => {
  it("a shell call turns a tracked LF file into CRLF under text=auto: changes lists it, undo gives back the LF bytes", () => {
    const root = makeRepo({ ".gitattributes": "* text=auto\n", "a.txt": "one\ntwo\n" });
    const before = cleanId(root, "a.txt");
    shell(root, "unix2dos a.txt", () => writeFileSync(join(root, "a.txt"), "one\r\ntwo\r\n"));
    expect(cleanId(root, "a.txt")).toBe(before); // negative control: git's form did not change

    expect(paths(root, ["--session", S])).toEqual(["a.txt"]);
    const u = unwind(root, ["undo", "--session", S, "--json"]);
    expect([u.code, u.json.counts.restore]).toEqual([0, 1]);
    expect(bytes(root, "a.txt")).toBe("one\ntwo\n");
  });

  it("an untracked CRLF file rewritten with LF: undo gives back the CRLF bytes", () => {
    const root = makeRepo({ ".gitattributes": "* text=auto\n", "README.md": "r\n" });
    writeFileSync(join(root, "notes.txt"), "x\r\ny\r\n");
    unwind(root, ["snapshot"]); // the file is known before the call
    shell(root, "dos2unix notes.txt", () => writeFileSync(join(root, "notes.txt"), "x\ny\n"));
    expect(paths(root, ["--session", S])).toEqual(["notes.txt"]);
    expect(unwind(root, ["undo", "--session", S]).code).toBe(0);
    expect(bytes(root, "notes.txt")).toBe("x\r\ny\r\n");
  });

  it("under core.autocrlf=true, a CRLF file a shell call made LF comes back CRLF", () => {
    const root = makeRepo({ "a.txt": "one\ntwo\n" });
    git(root, "config", "core.autocrlf", "true");
    const before = cleanId(root, "a.txt");
    writeFileSync(join(root, "a.txt"), "one\r\ntwo\r\n"); // as git's own checkout would write it now
    expect(cleanId(root, "a.txt")).toBe(before); // git's form is the same
    unwind(root, ["snapshot"]);
    shell(root, "dos2unix a.txt", () => writeFileSync(join(root, "a.txt"), "one\ntwo\n"));
    expect(paths(root, ["--session", S])).toEqual(["a.txt"]);
    expect(unwind(root, ["undo", "--session", S]).code).toBe(0);
    expect(bytes(root, "a.txt")).toBe("one\r\ntwo\r\n");
  });
});

describe("what a clean filter normalises away", () => {
  function filtered() {
    const root = makeRepo({ "README.md": "r\n" });
    // The filter drops spaces on the way in and gives the bytes back as they are on the way out.
    git(root, "config", "filter.nospace.clean", "tr -d ' '");
    git(root, "config", "filter.nospace.smudge", "cat");
    writeFileSync(join(root, ".gitattributes"), "*.w filter=nospace\n");
    writeFileSync(join(root, "w.w"), "a b c\n");
    git(root, "add", "-A");
    git(root, "commit", "-q", "-m", "filtered");
    return root;
  }

  it("a Write that changes only what the filter drops: listed with two different ids, undone byte for byte", () => {
    const root = filtered();
    const before = cleanId(root, "w.w");
    claudeCall(root, S, "Write", { file_path: join(root, "w.w"), content: "a  b  c\n" }, () => writeFileSync(join(root, "w.w"), "a  b  c\n"));
    expect(cleanId(root, "w.w")).toBe(before); // negative control
    const c = unwind(root, ["changes", "--session", S, "--json"]);
    expect(c.json.entries).toHaveLength(1);
    expect(c.json.entries[0].pre.oid).not.toBe(c.json.entries[0].post.oid);
    expect(unwind(root, ["undo", "--session", S]).code).toBe(0);
    expect(bytes(root, "w.w")).toBe("a b c\n");
  });

  it("a shell call that changes only what the filter drops: listed and undone", () => {
    const root = filtered();
    shell(root, "sed -i 's/ /  /g' w.w", () => writeFileSync(join(root, "w.w"), "a  b  c\n"));
    expect(paths(root, ["--session", S])).toEqual(["w.w"]);
    expect(unwind(root, ["undo", "--session", S]).code).toBe(0);
    expect(bytes(root, "w.w")).toBe("a b c\n");
  });
});

describe("like with like", () => {
  it("an Edit to a file git checks out with CRLF, then a shell call: no conflict, undo gives back the CRLF bytes", () => {
    const crlf = "@echo off\r\necho hi\r\n";
    const root = makeRepo({ ".gitattributes": "*.bat text eol=crlf\n", "run.bat": crlf });
    expect(bytes(root, "run.bat")).toBe(crlf);
    claudeCall(root, S, "Edit", { file_path: join(root, "run.bat"), old_string: "hi", new_string: "ho" }, () => writeFileSync(join(root, "run.bat"), "@echo off\r\necho ho\r\n"));
    claudeCall(root, "sess-other-2222", "Bash", { command: "ls" }, () => undefined);
    const u = unwind(root, ["undo", "--session", S, "--json"]);
    expect(u.json.items).toMatchObject([{ path: "run.bat", action: "restore", reason: null }]);
    expect(bytes(root, "run.bat")).toBe(crlf);
  });

  it("negative control: a person's line-ending change after the Edit is a conflict, not overwritten", () => {
    const crlf = "@echo off\r\necho hi\r\n";
    const root = makeRepo({ ".gitattributes": "*.bat text eol=crlf\n", "run.bat": crlf });
    claudeCall(root, S, "Edit", { file_path: join(root, "run.bat"), old_string: "hi", new_string: "ho" }, () => writeFileSync(join(root, "run.bat"), "@echo off\r\necho ho\r\n"));
    writeFileSync(join(root, "run.bat"), "@echo off\necho ho\n"); // a person: same text, LF
    claudeCall(root, "sess-other-2222", "Bash", { command: "ls" }, () => undefined);
    const u = unwind(root, ["undo", "--session", S, "--json"]);
    expect(u.code).toBe(1);
    expect(u.json.items).toMatchObject([{ path: "run.bat", action: "conflict" }]);
    expect(bytes(root, "run.bat")).toBe("@echo off\necho ho\n");
  });
});

/**
 * A store from before snapshots held bytes as on disk: its snapshots hold
 * git's clean form. Made here as that code made them: the tree git itself
 * writes from its index, named under refs/unwind/snapshots/ with a meta
 * that has no `bytes`.
 */
function legacySnapshot(root: string, id: string): string {
  const idx = join(root, ".git", "legacy-index");
  const env = { GIT_INDEX_FILE: idx };
  const run = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: root,
      env: { ...process.env, ...env, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@u", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@u" },
      encoding: "utf8",
    }).trim();
  run("add", "-A");
  const tree = run("write-tree");
  const meta = { v: 1, id, at: new Date(Date.now() - 60_000).toISOString(), root, parent: null, toolarge: [] };
  const commit = execFileSync("git", ["commit-tree", tree, "-m", JSON.stringify(meta)], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@u", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@u" },
  }).trim();
  git(root, "update-ref", `refs/unwind/snapshots/${id}`, commit);
  return id;
}

describe("snapshots from before, in git's clean form", () => {
  const crlf = "@echo off\r\necho hi\r\n";

  it("from an older snapshot to now: a file that differs only by the form it was kept in is no change", () => {
    const root = makeRepo({ ".gitattributes": "*.bat text eol=crlf\n", "run.bat": crlf, "plain.txt": "p\n" });
    unwind(root, ["snapshot"]); // the store exists
    const old = legacySnapshot(root, "s-20261201T000000000Z-0000aaaa");
    const now = unwind(root, ["snapshot", "--json"]).json.id;
    // Negative control: the two trees differ in run.bat's blob.
    expect(git(root, "diff-tree", "-r", "--name-only", `refs/unwind/snapshots/${old}`, `refs/unwind/snapshots/${now}`)).toContain("run.bat");
    const same = unwind(root, ["restore", old, "--dry-run", "--json"]);
    expect([same.code, same.json.items]).toEqual([0, []]);
    writeFileSync(join(root, "run.bat"), "@echo off\r\necho ho\r\n");
    const changed = unwind(root, ["restore", old, "--dry-run", "--json"]);
    expect(changed.json.items.map((i: { path: string; action: string }) => [i.path, i.action])).toEqual([["run.bat", "restore"]]);
  });

  it("restoring an older snapshot writes what git's checkout would (CRLF), not its clean form", () => {
    const root = makeRepo({ ".gitattributes": "*.bat text eol=crlf\n", "run.bat": crlf });
    unwind(root, ["snapshot"]);
    const old = legacySnapshot(root, "s-20261201T000000000Z-0000bbbb");
    writeFileSync(join(root, "run.bat"), "@echo off\r\necho ho\r\n");
    const r = unwind(root, ["restore", old, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(bytes(root, "run.bat")).toBe(crlf);
  });
});
