import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { deserialize, serialize } from "node:v8";
import { describe, expect, it } from "vitest";
import { dropKeptChangeSets } from "../../src/store/changeset-cache.js";
import { git, makeRepo, tempDir, unwind, unwindAsync, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";

/*
 * A change set kept on disk is carried forward past what other sessions
 * appended since, where that cannot bear on it (src/scope/carry.ts), and
 * folded again where it can. Each test keeps a session's change set, then
 * forges the kept one (a path no call wrote): a look that shows the forged
 * path read what was kept and carried it; one that does not folded again.
 * Each fold-again case also checks the answer a fold from nothing gives,
 * which is what a carried one must equal.
 */

const writeCall = (root: string, session: string, rel: string, text: string) => claudeCall(root, session, "Write", { file_path: join(root, rel), content: text }, () => write(root, rel, text));
const shell = (root: string, session: string, command: string, effect: () => void = () => undefined) => claudeCall(root, session, "Bash", { command, description: "x" }, effect);

const cacheDir = (root: string) => join(root, ".git", "unwind", "cache");
const store = (root: string) => join(root, ".git", "unwind");

type Entry = { change: string; path: string; shared?: unknown[] };

/** The change set's entries, whole (their states, conflicts and later writes): what a carried one must equal. */
function look(root: string, session: string): Entry[] {
  const r = unwind(root, ["changes", "--session", session, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { entries: Entry[] }).entries;
}

const listed = (entries: Entry[]) => entries.map((e) => `${e.change} ${e.path}`);

/** A look with nothing kept: the fold of the whole record. */
function fresh(root: string, session: string): Entry[] {
  dropKeptChangeSets(store(root));
  return look(root, session);
}

/** The change set kept (the only one): all of it, the later writes and interleavings a plan reads too. */
interface KeptSet {
  cs: { entries: Entry[] };
  touched: Set<string>;
  laterWrites: Map<string, unknown>;
  interleaved: Map<string, unknown>;
}

function keptFile(root: string): { file: string; doc: { body: Uint8Array }; value: KeptSet } {
  const names = readdirSync(cacheDir(root)).filter((f) => f.startsWith("changes-"));
  expect(names).toHaveLength(1);
  const file = join(cacheDir(root), names[0]!);
  const doc = deserialize(readFileSync(file).subarray(17)) as { body: Uint8Array };
  return { file, doc, value: deserialize(doc.body) as KeptSet };
}

/** The whole change set a fold from nothing gives (nothing kept before it). */
function folded(root: string, session: string): KeptSet {
  fresh(root, session);
  return keptFile(root).value;
}

/** Keeps `session`'s change set (the only one kept), then forges it: its first path becomes forged.txt. Returns what was kept. */
function keepForged(root: string, session: string): KeptSet {
  dropKeptChangeSets(store(root));
  look(root, session);
  const { file, doc, value: real } = keptFile(root);
  const value = deserialize(doc.body) as KeptSet;
  value.cs.entries[0]!.path = "forged.txt";
  const body = serialize({ ...doc, body: serialize(value) });
  writeFileSync(file, Buffer.concat([Buffer.from(`${createHash("sha256").update(body).digest("hex").slice(0, 16)}\n`), body]));
  return real;
}

/** Every record of the journal, oldest first. */
function journal(root: string): { session: string; call: string; phase: string; at: string }[] {
  const dir = join(store(root), "journal");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n").filter(Boolean))
    .map((l) => JSON.parse(l) as { session: string; call: string; phase: string; at: string })
    .sort((a, b) => (a.at < b.at ? -1 : 1));
}

const snapshotCount = (root: string) => git(root, "for-each-ref", "refs/unwind/snapshots/").split("\n").filter(Boolean).length;

async function until(ok: () => boolean): Promise<void> {
  const end = Date.now() + 30_000;
  while (!ok()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

const forged = (entries: Entry[]) => entries.some((e) => e.path === "forged.txt");

/** A look that must have folded again (the forged path gone), and what it shows is the fold from nothing; returns that. */
function foldedAgain(root: string, session: string): KeptSet {
  const after = look(root, session);
  expect(forged(after)).toBe(false);
  const whole = folded(root, session);
  expect(after).toEqual(whole.cs.entries);
  return whole;
}

describe("a kept change set carried forward", () => {
  it("is carried past another session's Write and shell call on other paths, and kept again under the new record", () => {
    const root = makeRepo({ "a.txt": "a\n", "c.txt": "c\n" });
    writeCall(root, "s1", "a.txt", "A\n");
    // A snapshot after the scope's last capture: a new one then places no change of a path it captured (see below).
    shell(root, "s0", "true");
    expect(listed(keepForged(root, "s1").cs.entries)).toEqual(["modified a.txt"]);
    writeCall(root, "s2", "c.txt", "C\n");
    expect(listed(look(root, "s1"))).toEqual(["modified forged.txt"]);
    shell(root, "s2", "echo d > d.txt", () => write(root, "d.txt", "d\n"));
    expect(listed(look(root, "s1"))).toEqual(["modified forged.txt"]);
    // Kept again under the record's new key: read as it is, no carry asked.
    expect(listed(look(root, "s1"))).toEqual(["modified forged.txt"]);
    // What a fold from nothing gives is what was carried.
    expect(listed(fresh(root, "s1"))).toEqual(["modified a.txt"]);
  });

  it("is folded again when another session writes a path the scope changed", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    writeCall(root, "s1", "a.txt", "A\n");
    const before = keepForged(root, "s1");
    writeCall(root, "s2", "a.txt", "AA\n");
    const whole = foldedAgain(root, "s1");
    // Carried, it would have missed the later write: the undo would take a.txt back over s2's work unwarned.
    expect([...before.laterWrites.values()]).toEqual([]);
    expect([...whole.laterWrites.values()]).toEqual([expect.objectContaining({ by: "claude:s2" })]);
  });

  it("is folded again when another session's shell call changes a path the scope changed", () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    shell(root, "s0", "true");
    writeCall(root, "s1", "a.txt", "A\n");
    shell(root, "s2", "true");
    const before = keepForged(root, "s1");
    // The control: a shell call that changes another path is carried past.
    shell(root, "s2", "echo B > b.txt", () => write(root, "b.txt", "B\n"));
    expect(listed(look(root, "s1"))).toEqual(["modified forged.txt"]);
    shell(root, "s2", "sed -i s/A/X/ a.txt", () => write(root, "a.txt", "X\n"));
    const whole = foldedAgain(root, "s1");
    expect([...before.laterWrites.values()]).toEqual([]);
    expect([...whole.laterWrites.values()]).toEqual([expect.objectContaining({ by: "claude:s2" })]);
  });

  it("is folded again when a new snapshot follows a capture of the scope's past the last snapshot", () => {
    const root = makeRepo({ "d.txt": "d0\n" });
    shell(root, "s0", "true");
    writeCall(root, "s1", "d.txt", "D1\n");
    const before = keepForged(root, "s1");
    expect(listed(before.cs.entries)).toEqual(["modified d.txt"]);
    // A person puts d.txt back as the last snapshot had it: the next snapshot's diff does not show it.
    write(root, "d.txt", "d0\n");
    shell(root, "s2", "true");
    const whole = foldedAgain(root, "s1");
    // The person's edit is a later write: carried, it would have been missed.
    expect([...before.laterWrites.values()]).toEqual([]);
    expect([...whole.laterWrites.values()]).toEqual([expect.objectContaining({ by: null })]);
  });

  it("is carried past a snapshot taken where the scope's last shell call ended, and folded again past one its window reaches across", () => {
    const root = makeRepo({ "b.txt": "b\n", "e.txt": "e\n" });
    shell(root, "s1", "echo B > b.txt", () => write(root, "b.txt", "B\n"));
    const before = keepForged(root, "s1");
    expect(listed(before.cs.entries)).toEqual(["modified b.txt"]);
    // A change after the call's last snapshot: the call's window ends there, so it is no candidate for it (timeline's `meets`).
    write(root, "e.txt", "E\n");
    shell(root, "s2", "true");
    expect(listed(look(root, "s1"))).toEqual(["modified forged.txt"]);
    const carried = keptFile(root).value;
    // A window that ends past the last snapshot the fold read (its post recorded after that snapshot was taken):
    // the pair to the next snapshot meets it, and a change there may be the call's.
    const { file, doc } = keptFile(root);
    const kept = doc as { body: Uint8Array; carry: { wantedEnd: string } };
    kept.carry.wantedEnd = "9999-12-31T00:00:00.000Z";
    const body = serialize(kept);
    writeFileSync(file, Buffer.concat([Buffer.from(`${createHash("sha256").update(body).digest("hex").slice(0, 16)}\n`), body]));
    write(root, "e.txt", "EE\n");
    shell(root, "s2", "true");
    expect(forged(look(root, "s1"))).toBe(false);
    // What was carried is what a fold from nothing gives (its forged path aside).
    carried.cs.entries[0]!.path = "b.txt";
    expect(folded(root, "s1")).toEqual(carried);
  });

  it("read from a window of the record, is folded again when a path captured since is one the window's first snapshot does not hold", async () => {
    const root = makeRepo({ ".gitignore": "*.log\n", "b.txt": "b\n" });
    writeCall(root, "s0", "x.log", "1\n");
    // Settled, the old session's journal is left unread by a fold of a later session (src/store/journal.ts).
    await new Promise((r) => setTimeout(r, 2300));
    shell(root, "s1", "echo B > b.txt", () => write(root, "b.txt", "B\n"));
    // The first fold works out the facts of the settled file; the next leaves it unread.
    look(root, "s1");
    // Who changed the ignored x.log since s0 wrote it, no snapshot can see.
    write(root, "x.log", "h\n");
    const before = keepForged(root, "s1");
    expect(listed(before.cs.entries)).toEqual(["modified b.txt"]);
    // The control: a capture of a path that snapshot holds, and a shell call, are carried past.
    writeCall(root, "s2", "b.txt.orig", "x\n");
    shell(root, "s3", "true");
    expect(listed(look(root, "s1"))).toEqual(["modified forged.txt"]);
    writeCall(root, "s2", "x.log", "2\n");
    const whole = foldedAgain(root, "s1");
    // x.log changed with no capture between s0's and s2's, across s1's window: s1 may have changed it.
    expect(listed(before.cs.entries)).toEqual(["modified b.txt"]);
    expect(listed(whole.cs.entries)).toEqual(["modified b.txt", "modified x.log"]);
  });

  it("is folded again when records are appended with times inside what the fold read (an imported session)", () => {
    const root = makeRepo({ "b.txt": "b\n" });
    shell(root, "s1", "echo B > b.txt", () => write(root, "b.txt", "B\n"));
    const before = keepForged(root, "s1");
    // A session unwind never saw, imported now: its Write of q.md lies inside s1's window, and no snapshot saw q.md.
    const [pre, post] = journal(root)
      .filter((r) => r.session === "claude:s1")
      .map((r) => Date.parse(r.at));
    const at = (k: number) => new Date(pre! + ((post! - pre!) * k) / 3).toISOString();
    const id = "5e55104a-0c1d-4e2f-9a8b-7c6d5e4f3a2b";
    const config = tempDir("unwind-claude-config-");
    const file = join(config, "projects", root.replace(/[^A-Za-z0-9]/g, "-"), `${id}.jsonl`);
    mkdirSync(dirname(file), { recursive: true });
    const use = { type: "tool_use", id: "toolu_q1", name: "Write", input: { file_path: join(root, "q.md"), content: "q\n" } };
    const lines = [
      { type: "assistant", timestamp: at(1), cwd: root, sessionId: id, message: { role: "assistant", content: [use] } },
      {
        type: "user",
        timestamp: at(2),
        cwd: root,
        message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_q1", content: "created" }] },
        toolUseResult: { type: "create", filePath: join(root, "q.md"), content: "q\n", originalFile: null, structuredPatch: [] },
      },
    ];
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const imp = unwind(root, ["import", "--claude", id], { env: { CLAUDE_CONFIG_DIR: config } });
    expect(imp.code, imp.stderr).toBe(0);
    const whole = foldedAgain(root, "s1");
    // The imported Write left q.md inside s1's window, and s1's last snapshot saw none: s1 may have deleted it.
    expect(listed(before.cs.entries)).toEqual(["modified b.txt"]);
    expect(listed(whole.cs.entries)).toEqual(["modified b.txt", "deleted q.md"]);
  });

  it("is folded again when a run that began before the fold ends after it: its window reaches back", async () => {
    const root = makeRepo({ "a.txt": "a\n", "r.txt": "r\n" });
    shell(root, "s0", "true");
    const flag = join(root, ".git", "go");
    const running = unwindAsync(root, ["run", "--", "sh", "-c", `while [ ! -e ${flag} ]; do sleep 0.05; done; echo R > r.txt`]);
    await until(() => snapshotCount(root) >= 3);
    shell(root, "s1", "echo A > a.txt", () => write(root, "a.txt", "A\n"));
    const before = keepForged(root, "s1");
    writeFileSync(flag, "");
    expect((await running).code).toBe(0);
    const whole = foldedAgain(root, "s1");
    // a.txt changed while the run was open: shared with it, which a carried change set would not say.
    expect(before.cs.entries[0]).not.toHaveProperty("shared");
    expect(whole.cs.entries[0]!.shared).toEqual([expect.objectContaining({ session: expect.stringMatching(/^run:/) })]);
  });

  it("is folded again when a call runs on in the background", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    writeCall(root, "s1", "a.txt", "A\n");
    shell(root, "s0", "true");
    keepForged(root, "s1");
    claudeCall(root, "s2", "Bash", { command: "sleep 1", description: "x", run_in_background: true }, () => undefined);
    // The list of open calls beside a session's journal is a cache of what the journal says (src/store/open-calls.ts): lost, the journal still says it.
    const dir = join(store(root), "journal");
    const lists = readdirSync(dir).filter((f) => f.endsWith(".open"));
    expect(lists).toHaveLength(1);
    for (const f of lists) rmSync(join(dir, f));
    const after = look(root, "s1");
    expect(forged(after)).toBe(false);
    // Folded, the look closed the call for good, as a read of the record does (SPEC section 2).
    expect(journal(root).filter((r) => r.session === "claude:s2" && r.phase === "post")).toHaveLength(2);
  });

  it("is folded again when a snapshot the fold read is gone, and refuses as a fold from nothing does", () => {
    const root = makeRepo({ "b.txt": "b\n" });
    shell(root, "s1", "echo B > b.txt", () => write(root, "b.txt", "B\n"));
    keepForged(root, "s1");
    const ref = git(root, "for-each-ref", "--format=%(refname)", "refs/unwind/snapshots/").split("\n")[0]!;
    git(root, "update-ref", "-d", ref);
    const r = unwind(root, ["changes", "--session", "s1", "--json"]);
    expect([r.code, r.stderr]).toEqual([4, expect.stringContaining("is missing")]);
  });

  it("is folded again when a journal file it read is gone", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    writeCall(root, "s1", "a.txt", "A\n");
    writeCall(root, "s2", "a.txt", "AA\n");
    shell(root, "s0", "true");
    const before = keepForged(root, "s1");
    expect([...before.laterWrites.keys()]).toEqual(["a.txt"]);
    const dir = join(store(root), "journal");
    const s2 = readdirSync(dir).find((f) => readFileSync(join(dir, f), "utf8").includes('"session":"claude:s2"'))!;
    rmSync(join(dir, s2));
    expect(forged(look(root, "s1"))).toBe(false);
    expect([...before.laterWrites.values()]).toEqual([expect.objectContaining({ by: "claude:s2" })]);
    expect([...folded(root, "s1").laterWrites.values()]).toEqual([expect.objectContaining({ by: null })]);
  });

  it("is folded again when a post is appended for a call whose pre came before the fold", () => {
    const root = makeRepo({ "a.txt": "a\n", "b.txt": "b\n" });
    shell(root, "s2", "echo B > b.txt", () => write(root, "b.txt", "B\n"));
    shell(root, "s1", "echo A > a.txt", () => write(root, "a.txt", "A\n"));
    const before = keepForged(root, "s1");
    // s2's call posted again: its window now ends later, past s1's Write.
    const dir = join(store(root), "journal");
    const s2 = readdirSync(dir).find((f) => readFileSync(join(dir, f), "utf8").includes('"session":"claude:s2"'))!;
    const last = readFileSync(join(dir, s2), "utf8").trimEnd().split("\n").at(-1)!;
    const { sum: _, ...post } = JSON.parse(last) as Record<string, unknown>;
    const body = JSON.stringify({ ...post, at: new Date(Date.now() + 5).toISOString() });
    appendFileSync(join(dir, s2), `${body.slice(0, -1)},"sum":"${createHash("sha256").update(body).digest("hex").slice(0, 16)}"}\n`);
    const whole = foldedAgain(root, "s1");
    // s2's window now reaches past s1's shell call: what s1 changed meanwhile is shared, which a carried change set would not say.
    expect(before.cs.entries[0]).not.toHaveProperty("shared");
    expect(whole.cs.entries[0]!.shared).toEqual([expect.objectContaining({ session: "claude:s2" })]);
  });

  it("is folded again, not failed, when the carry cannot be worked out (a snapshot tree it names is gone)", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    writeCall(root, "s1", "a.txt", "A\n");
    shell(root, "s0", "true");
    keepForged(root, "s1");
    const { file, doc } = keptFile(root);
    const kept = doc as { body: Uint8Array; carry: { first: { tree: string } | null } };
    kept.carry.first = { ...(kept.carry.first ?? {}), tree: "e".repeat(40) };
    const body = serialize(kept);
    writeFileSync(file, Buffer.concat([Buffer.from(`${createHash("sha256").update(body).digest("hex").slice(0, 16)}\n`), body]));
    // A capture since: the carry asks that tree whether it holds c.txt, and git cannot say.
    writeCall(root, "s2", "c.txt", "c\n");
    expect(listed(foldedAgain(root, "s1").cs.entries)).toEqual(["modified a.txt"]);
  });
});
