import { execFileSync, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { makeRepo, snapshotId, unwind, write } from "../helpers.js";

/* Snapshots at the command line: what only the process shows. The behaviour is in test/ops/snapshot.test.ts. */

describe("snapshot and diff on the command line", () => {
  it("--task defaults to UNWIND_TASK (an orchestrator's agent environment)", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    unwind(root, ["snapshot", "--label", "one"]);
    unwind(root, ["snapshot", "--session", "claude:s1"], { env: { UNWIND_TASK: "T-9" } });
    expect(unwind(root, ["snapshots", "--task", "T-9", "--json"]).json.snapshots.map((s: any) => s.session)).toEqual(["claude:s1"]);
    // Negative control: without the variable a snapshot has no task.
    expect(unwind(root, ["snapshots", "--json"]).json.snapshots.map((s: any) => s.task)).toEqual(["T-9", null]);
  });

  it("diff --patch prints the patch; --stat with --patch is exit 2", () => {
    const root = makeRepo({ "a.txt": "one\n" });
    const s1 = snapshotId(root);
    write(root, "a.txt", "two\n");
    const s2 = snapshotId(root);
    const patch = unwind(root, ["diff", s1, "--patch"]);
    expect(patch.code).toBe(0);
    expect(patch.stdout).toContain("-one\n+two\n");
    expect(unwind(root, ["diff", s1, s2, "--stat", "--patch"]).code).toBe(2);
  });
});

describe("human output", () => {
  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)("is coloured on a terminal, never with NO_COLOR, never in a pipe", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const id = snapshotId(root);
    write(root, "a.txt", "b\n");
    const bin = new URL("../../bin/unwind", import.meta.url).pathname;
    const onTty = (env: string) =>
      execFileSync("script", ["-qec", `${env} ${process.execPath} ${bin} restore ${id} --dry-run`, "/dev/null"], { cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "" } });
    expect(onTty("")).toContain("\u001b[");
    expect(onTty("NO_COLOR=1")).not.toContain("\u001b[");
    expect(unwind(root, ["restore", id, "--dry-run"], { env: { NO_COLOR: "" } }).stdout).not.toContain("\u001b[");
  });
});
