import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, makeRepo, read, snapshotId, write } from "../helpers.js";

/*
 * A reader that goes away (`unwind … | head -1`, a pager quit early): the
 * command still does all it was asked, exits with its own code, and prints
 * no stack trace about the closed pipe.
 */

/** Runs the CLI with its standard output's reader gone before it writes; `keep` leaves the reader there (the control). */
function run(root: string, args: string[], keep = false): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    let stdout = "";
    let stderr = "";
    if (keep) child.stdout.on("data", (d) => (stdout += d));
    else child.stdout.destroy(); // our end closed now, long before the child has started Node: its writes fail with EPIPE
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("standard output closed by its reader", () => {
  it("a restore still restores and keeps its receipt, exits 0, and says nothing of the pipe (control: the same with a reader prints its summary)", async () => {
    for (const keep of [false, true]) {
      const root = makeRepo({ "a.txt": "one\n" });
      const id = snapshotId(root);
      write(root, "a.txt", "two\n");
      const r = await run(root, ["restore", id], keep);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe("");
      expect(read(root, "a.txt")).toBe("one\n");
      if (keep) expect(r.stdout).toContain("1 restored");
      else expect(r.stdout).toBe("");
      const receipts = await run(root, ["receipts", "--json"], true);
      expect(JSON.parse(receipts.stdout).receipts).toHaveLength(1);
    }
  });

  it("a read-only command with a lot to say exits 0 without a stack trace", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`d/f${i}.txt`] = `${i}\n`;
    const root = makeRepo(files);
    const id = snapshotId(root);
    for (let i = 0; i < 300; i++) write(root, `d/f${i}.txt`, `${i} changed\n`);
    const r = await run(root, ["--json", "restore", id, "--dry-run"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(read(root, "d/f0.txt")).toBe("0 changed\n");
  });
});
