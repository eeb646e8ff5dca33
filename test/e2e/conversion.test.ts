import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git, makeRepo, tempDir, unwind, wrappedGit, write } from "../helpers.js";

/*
 * Snapshots taken by the `unwind snapshot` process with its own PATH (a git
 * that logs what it runs) and HOME: which blobs git hashes. The pure reading
 * of config text is in test/unit/capture/conversion.test.ts.
 */

/**
 * A real git behind a wrapper that logs each subcommand it runs, and a home
 * of our own (no global config or attributes unless a test writes them).
 */
function loggedEnv(home = tempDir()): { env: Record<string, string>; home: string; ran: () => string[] } {
  const log = join(tempDir(), "log");
  return {
    env: { PATH: wrappedGit(`echo "$*" >> "${log}"`), HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
    home,
    ran: () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []),
  };
}

const FILTER = ["config", "filter.up.clean", "tr a-z A-Z"] as const;

/** Snapshots after editing `x/y.txt`; returns what the snapshot holds for it and what git ran. */
function snapshotEdit(root: string, logged: ReturnType<typeof loggedEnv>, content = "hello\n") {
  write(root, "x/y.txt", content);
  const r = unwind(root, ["snapshot", "--json"], { env: logged.env });
  expect(r.code, r.stderr).toBe(0);
  return { stored: git(root, "cat-file", "blob", `${r.json.tree}:x/y.txt`), hashedByGit: logged.ran().some((l) => l.includes("hash-object")) };
}

describe("blobs are hashed in-process only where git would store the bytes as they are", () => {
  it("a PATH entry that is a file, or a config git may not read, never fails a snapshot", () => {
    const root = makeRepo({ "x/y.txt": "old\n" });
    const logged = loggedEnv();
    unwind(root, ["snapshot"], { env: logged.env });
    write(root, "x/y.txt", "new\n");
    const notADir = join(tempDir(), "file");
    writeFileSync(notADir, "");
    const r = unwind(root, ["snapshot", "--json"], { env: { ...logged.env, PATH: `${notADir}:${logged.env.PATH}` } });
    expect(r.code, r.stderr).toBe(0);
    expect(git(root, "cat-file", "blob", `${r.json.tree}:x/y.txt`)).toBe("new\n");
  });

  it("a plain repository: no git process hashes them; the blob is the file's bytes and passes fsck", () => {
    const root = makeRepo({ "x/y.txt": "old\n", "z.txt": "z\n" });
    const logged = loggedEnv();
    unwind(root, ["snapshot"], { env: logged.env });
    const { stored, hashedByGit } = snapshotEdit(root, logged);
    expect(stored).toBe("hello\n");
    expect(hashedByGit).toBe(false);
    git(root, "fsck", "--strict", "--no-dangling");
  });

  // Each source of a conversion git reads, each proven live (git's id
  // differs from the raw bytes' id): the snapshot still holds the bytes as
  // they are on disk (src/capture/disk-form.ts), hashed by unwind itself.
  const sources: [string, (root: string, home: string) => void, string?][] = [
    [
      "a .gitattributes at the root",
      (root) => {
        git(root, ...FILTER);
        write(root, ".gitattributes", "*.txt filter=up\n");
      },
    ],
    [
      "an ignored .gitattributes in the file's directory",
      (root) => {
        git(root, ...FILTER);
        write(root, "x/.gitattributes", "*.txt filter=up\n");
        write(root, ".git/info/exclude", "x/.gitattributes\n");
      },
    ],
    [
      "$GIT_DIR/info/attributes",
      (root) => {
        git(root, ...FILTER);
        write(root, ".git/info/attributes", "*.txt filter=up\n");
      },
    ],
    [
      "the global attributes file",
      (root, home) => {
        git(root, ...FILTER);
        write(home, ".config/git/attributes", "*.txt filter=up\n");
      },
    ],
    [
      "core.attributesFile",
      (root, home) => {
        git(root, ...FILTER);
        write(home, "attrs", "*.txt filter=up\n");
        git(root, "config", "core.attributesFile", join(home, "attrs"));
      },
    ],
    ["core.autocrlf in the repository's config", (root) => git(root, "config", "core.autocrlf", "true"), "crlf\r\n"],
    [
      "core.autocrlf in the global config",
      (root, home) => {
        git(root, "config", "--unset", "core.autocrlf");
        write(home, ".gitconfig", "[core]\n\tautocrlf = input\n");
      },
      "crlf\r\n",
    ],
    [
      "core.autocrlf in an included config file",
      (root, home) => {
        write(home, "extra.cfg", "[core]\n\tautocrlf = true\n");
        git(root, "config", "include.path", join(home, "extra.cfg"));
      },
      "crlf\r\n",
    ],
  ];
  for (const [name, setUp, content = "hello\n"] of sources) {
    it(`${name}: the snapshot holds the bytes on disk, not git's converted ones`, () => {
      const root = makeRepo({ "x/y.txt": "old\n" });
      const logged = loggedEnv();
      unwind(root, ["snapshot"], { env: logged.env });
      setUp(root, logged.home);
      write(root, "x/y.txt", content);
      const gitEnv = { HOME: logged.home, XDG_CONFIG_HOME: join(logged.home, ".config") };
      const converted = execGit(root, gitEnv, ["hash-object", "x/y.txt"]);
      expect(converted, "the source is live").not.toBe(execGit(root, gitEnv, ["hash-object", "--no-filters", "x/y.txt"]));
      const { stored, hashedByGit } = snapshotEdit(root, logged, content);
      expect(hashedByGit).toBe(false);
      expect(stored).toBe(content);
    });
  }
});

/** git as our git runs: the test's home, no inherited GIT_* variables. */
function execGit(root: string, env: Record<string, string>, args: string[], input?: string): string {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GIT_")));
  return execFileSync("git", args, { cwd: root, env: { ...clean, ...env }, input, encoding: "utf8" }).trim();
}

/*
 * A plan compares what each path holds with states that carry only git's id
 * (a snapshot's tree entries): the id of the bytes on disk, hashed from the
 * bytes it already read, under a filter as anywhere else.
 */
describe("a plan's git ids of the work tree", () => {
  for (const filtered of [false, true]) {
    it(`${filtered ? "under a clean filter" : "in a plain repository"}: hashed in-process, no git process reads the files again, and the file matches`, () => {
      const root = makeRepo({ "x/y.txt": "old\n", "z.txt": "z\n" });
      if (filtered) {
        git(root, ...FILTER);
        write(root, ".gitattributes", "*.txt filter=up\n");
      }
      const logged = loggedEnv();
      const snap = unwind(root, ["snapshot", "--json"], { env: logged.env });
      expect(snap.code, snap.stderr).toBe(0);
      write(root, "z.txt", "changed\n");
      const before = logged.ran().length;
      const r = unwind(root, ["restore", snap.json.id, "--dry-run", "--json"], { env: logged.env });
      expect(r.code, r.stderr).toBe(0);
      // z.txt holds what the current tree recorded: a restore. Raw bytes' ids under the filter would call it changed since.
      expect(r.json.items.map((i: any) => [i.path, i.action])).toEqual([["z.txt", "restore"]]);
      expect(
        logged
          .ran()
          .slice(before)
          .some((l) => l.includes(" hash-object --stdin-paths")),
      ).toBe(false);
    });
  }
});
