import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { open } from "../../src/index.js";
import { dropKeptChangeSets } from "../../src/store/changeset-cache.js";
import { makeRepo, unwind, write } from "../helpers.js";
import { claudePayload, hook } from "../journal-helpers.js";

/*
 * The diffs of snapshot pairs a long fold asks git for are kept in
 * `cache/pair-diffs.jsonl` (src/store/pair-diffs.ts) and read back by the
 * next fold; a line whose sum fails is asked of git again, and gc drops the
 * file with the snapshots it may name.
 */

const SNAPSHOTS = 33; // with the call's own two, 34 snapshots and 35 pairs: over the 32 from which diffs are kept

/** A shell call during which a person edits b.txt and takes a snapshot, again and again. */
async function setup(): Promise<{ root: string; cache: string }> {
  const root = makeRepo({ "a.txt": "a\n", "b.txt": "0\n" });
  const input = { command: "make", description: "build" };
  expect(hook(root, "claude", claudePayload(root, "s-cache", "PreToolUse", "Bash", input, "toolu_c1")).code).toBe(0);
  // Taken in this process, as `unwind snapshot` takes them: quicker.
  const u = await open({ root });
  for (let i = 1; i <= SNAPSHOTS; i++) {
    write(root, "b.txt", `${i}\n`);
    await u.snapshot();
  }
  expect(hook(root, "claude", claudePayload(root, "s-cache", "PostToolUse", "Bash", input, "toolu_c1")).code).toBe(0);
  return { root, cache: join(root, ".git", "unwind", "cache", "pair-diffs.jsonl") };
}

/** The session's paths as a fold reads them: no change set kept by the `changes` before (src/store/changeset-cache.ts). */
const paths = (root: string) => {
  dropKeptChangeSets(join(root, ".git", "unwind"));
  return unwind(root, ["changes", "--session", "s-cache", "--json"]).json.entries.map((e: { path: string }) => e.path);
};
const plan = (root: string) => unwind(root, ["undo", "--session", "s-cache", "--dry-run", "--json"]).json;
const sum = (body: string) => createHash("sha256").update(body).digest("hex").slice(0, 16);

/**
 * The cache with one pair's diff (one where b.txt changed) made to say a.txt changed too, its sum made right or
 * not; every line of that pair is replaced (a line that failed its sum was asked of git again and appended).
 */
function forge(cache: string, sumRight: boolean): void {
  const lines = readFileSync(cache, "utf8").trimEnd().split("\n");
  const [key, fields] = JSON.parse(lines[5]!.slice(17)) as [string, string[]];
  const body = JSON.stringify([key, [...fields.slice(0, 2), `:100644 100644 ${"1".repeat(40)} ${"2".repeat(40)} M`, "a.txt"]]);
  const forged = `${sumRight ? sum(body) : "0".repeat(16)} ${body}`;
  writeFileSync(cache, `${lines.map((l) => (l.startsWith(`${l.slice(0, 16)} ["${key}"`) ? forged : l)).join("\n")}\n`);
}

describe("the cache of snapshot pairs' diffs", () => {
  // One repository for the three steps: its 35 snapshots are most of the file's time.
  it("is written by a long fold and read by the next; a line that fails its sum is asked of git again (control: with its sum right, it is believed); gc drops it", async () => {
    const { root, cache } = await setup();
    expect(existsSync(cache)).toBe(false);
    const first = plan(root);
    expect(first.counts).toMatchObject({ restore: 1, conflict: 0 });
    expect(readFileSync(cache, "utf8").trimEnd().split("\n")).toHaveLength(SNAPSHOTS + 1);
    expect(plan(root).plan).toBe(first.plan);
    expect(paths(root)).toEqual(["b.txt"]);

    forge(cache, false);
    expect(paths(root)).toEqual(["b.txt"]);
    expect(plan(root).plan).toBe(first.plan);
    // Control: the forged diff, its sum made right, is read: a.txt now seems changed inside the shell call's window.
    forge(cache, true);
    expect(paths(root)).toEqual(["a.txt", "b.txt"]);

    expect(unwind(root, ["gc", "--ttl", "0s", "--dry-run"]).code).toBe(0);
    expect(existsSync(cache)).toBe(true); // a dry run drops nothing
    expect(unwind(root, ["gc", "--ttl", "0s"]).code).toBe(0);
    expect(existsSync(cache)).toBe(false);
  });

  it("is read once by a long fold for all it asks: a scope's own few windows come from it too", async () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "0\n", "c.txt": "0\n" });
    const input = { command: "echo B > b.txt", description: "build" };
    expect(hook(root, "claude", claudePayload(root, "s-few", "PreToolUse", "Bash", input, "toolu_f1")).code).toBe(0);
    write(root, "b.txt", "B\n");
    expect(hook(root, "claude", claudePayload(root, "s-few", "PostToolUse", "Bash", input, "toolu_f1")).code).toBe(0);
    // A person's work after it: snapshot pairs enough for the fold to keep and read them (taken in this process: quicker).
    const u = await open({ root });
    for (let i = 1; i <= SNAPSHOTS; i++) {
      write(root, "c.txt", `${i}\n`);
      await u.snapshot();
    }
    const cache = join(root, ".git", "unwind", "cache", "pair-diffs.jsonl");
    const fold = () => {
      dropKeptChangeSets(join(root, ".git", "unwind"));
      return unwind(root, ["changes", "--session", "s-few", "--json"]).json.entries.map((e: { path: string }) => e.path);
    };
    expect(fold()).toEqual(["b.txt"]);
    // The call's own pair, one of its window's, kept with the rest.
    const lines = readFileSync(cache, "utf8").trimEnd().split("\n");
    const own = lines.find((l) => JSON.parse(l.slice(17))[1].includes("b.txt"))!;
    expect(own).toBeDefined();
    // Made to say a.txt changed too, its sum right: the next fold reads it rather than asking git.
    const [key, fields] = JSON.parse(own.slice(17)) as [string, string[]];
    const body = JSON.stringify([key, [...fields, `:100644 100644 ${"1".repeat(40)} ${"2".repeat(40)} M`, "a.txt"]]);
    writeFileSync(cache, `${lines.map((l) => (l === own ? `${sum(body)} ${body}` : l)).join("\n")}\n`);
    expect(fold()).toEqual(["a.txt", "b.txt"]);
  });
});
