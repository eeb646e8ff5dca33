import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git, makeRepo, read, tempDir, unwind, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";

// A repository's git hooks are the person's code for the person's own git
// commands: unwind's ref updates, index writes, commits and pushes are its
// bookkeeping, and run none of them (docs/design.md, "the repository's git
// config"). Each hook appends its name to a marker file outside the repository.

const HOOKS = ["reference-transaction", "pre-commit", "post-commit", "post-checkout", "post-index-change", "pre-push", "pre-auto-gc"];
const SESSION = "hooks-sess-1111";

describe("unwind runs none of the repository's git hooks", () => {
  it("a Bash call captured by the hook, a snapshot, an undo, gc, push and fetch leave no marker; the same repository's own git runs them", () => {
    const base = tempDir("unwind-hooks-");
    const remote = join(base, "remote.git");
    git(base, "init", "-q", "--bare", "-b", "main", remote);
    // The remote's own policy is the remote's: its receive hook runs for unwind's push too.
    const received = join(base, "received");
    writeFileSync(join(remote, "hooks", "pre-receive"), `#!/bin/sh\ncat >> '${received}'\n`);
    chmodSync(join(remote, "hooks", "pre-receive"), 0o755);
    const root = makeRepo({ "src/a.ts": "export const a = 1;\n" });
    git(root, "remote", "add", "origin", remote);
    git(root, "push", "-q", "origin", "main");
    const marker = join(base, "marker");
    for (const h of HOOKS) {
      writeFileSync(join(root, ".git", "hooks", h), `#!/bin/sh\necho ${h} >> '${marker}'\ncat > /dev/null\n`);
      chmodSync(join(root, ".git", "hooks", h), 0o755);
    }
    const ran = () => (existsSync(marker) ? readFileSync(marker, "utf8").split("\n").filter(Boolean) : []);
    const refs = () => git(root, "for-each-ref", "--format=%(objectname) %(refname)", "refs/unwind/");

    // Negative control: git itself runs them in this repository.
    git(root, "update-ref", "refs/control", "HEAD");
    git(root, "push", "-q", "origin", "HEAD:refs/heads/control");
    expect(new Set(ran())).toEqual(new Set(["reference-transaction", "pre-push"]));
    rmSync(marker);

    // Each step changes refs, bar the undo, which changes the work tree: the hooks had something to run for.
    const steps: [string, () => void][] = [
      ["a Bash call through the hook", () => claudeCall(root, SESSION, "Bash", { command: "sed -i s/1/2/ src/a.ts" }, () => write(root, "src/a.ts", "export const a = 2;\n"))],
      ["snapshot", () => expect(unwind(root, ["snapshot", "--json"]).code).toBe(0)],
      [
        "undo",
        () => {
          expect(unwind(root, ["undo", "--session", SESSION, "--json"]).code).toBe(0);
          expect(read(root, "src/a.ts")).toBe("export const a = 1;\n");
        },
      ],
      [
        "push",
        () => {
          expect(unwind(root, ["push", "--all", "--json"]).code).toBe(0);
          expect(readFileSync(received, "utf8")).toMatch(/ refs\/unwind\/shared\//);
        },
      ],
      [
        "fetch",
        () => {
          // Another machine's record to fetch: a clone that recorded a session and pushed it.
          const other = join(base, "other");
          git(base, "clone", "-q", remote, other);
          claudeCall(other, "hooks-sess-2222", "Write", { file_path: join(other, "b.ts"), content: "b\n" }, () => write(other, "b.ts", "b\n"));
          expect(unwind(other, ["push", "--all"]).code).toBe(0);
          expect(unwind(root, ["fetch", "--json"]).code).toBe(0);
        },
      ],
      ["gc", () => expect(unwind(root, ["gc", "--ttl", "1d", "--json"], { env: { UNWIND_NOW: "2100-01-01T00:00:00Z" } }).json.snapshots).toBeGreaterThan(0)],
    ];
    for (const [name, step] of steps) {
      const before = refs();
      step();
      if (name !== "undo") expect(refs(), name).not.toBe(before);
      expect(ran(), name).toEqual([]);
    }
  });
});
