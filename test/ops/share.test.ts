/**
 * push and fetch through the library facade (SPEC sections 11 and 14): the
 * same data `--json` prints, errors as UnwindError with their exit codes.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { open } from "../../src/index.js";
import { git, makeRepo, rejection, tempDir, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";

const S = "lib-share-aaaa-1111";

describe("library: push and fetch", () => {
  it("push resolves, writes and pushes one commit per session; fetch makes it a scope elsewhere", async () => {
    const remote = join(tempDir("unwind-lib-share-"), "r.git");
    git(tempDir(), "init", "-q", "--bare", "-b", "main", remote);
    const a = makeRepo({ "src/a.ts": "1\n" });
    git(a, "remote", "add", "origin", remote);
    git(a, "config", "unwind.origin", "lib-a");
    claudeCall(a, S, "Write", { file_path: join(a, "src/a.ts"), content: "2\n" }, () => write(a, "src/a.ts", "2\n"));
    git(a, "commit", "-qam", "work");
    git(a, "push", "-q", "origin", "main");

    const ua = await open({ root: a });
    expect((await rejection(ua.push({}))).exit).toBe(2);
    expect((await rejection(ua.push({ sessions: ["nope-nope"] }))).exit).toBe(3);
    expect((await rejection(ua.push({ all: true, remote: "nowhere" }))).code).toBe("E_USAGE");
    const dry = await ua.push({ sessions: [S], dryRun: true });
    expect(dry.sessions.map((s) => [s.session, s.status, s.entries])).toEqual([[`claude:${S}`, "new", 1]]);
    expect(git(remote, "for-each-ref", "refs/unwind/")).toBe("");
    const pushed = await ua.push({ sessions: [S] });
    expect(pushed.origin).toBe("lib-a");
    expect(git(remote, "rev-parse", pushed.sessions[0]!.ref).trim()).toBe(pushed.sessions[0]!.commit);
    expect((await ua.push({ all: true })).sessions.map((s) => s.status)).toEqual(["unchanged"]);

    const b = join(tempDir("unwind-lib-share-"), "b");
    git(tempDir(), "clone", "-q", remote, b);
    const ub = await open({ root: b });
    // Named origins: a bad name is a usage error; an origin the remote does not hold brings nothing.
    expect((await rejection(ub.fetch({ origins: ["a/b"] }))).exit).toBe(2);
    expect((await ub.fetch({ origins: ["lib-other"] })).refs).toEqual([]);
    const before = (await ub.stamp()).stamp;
    const f = await ub.fetch({ origins: ["lib-a"] });
    // A live view (unwind ui) polls the stamp: a fetch that brought records changes it, a fetch of nothing does not.
    const fetched = (await ub.stamp()).stamp;
    expect(fetched).not.toBe(before);
    expect(f.refs.map((r) => [r.origin, r.status])).toEqual([["lib-a", "new"]]);
    expect((await ub.sessions()).sessions.map((s) => [s.session, s.origin])).toEqual([[`claude:${S}`, "lib-a"]]);
    const p = await ub.plan({ session: S });
    expect(p.items.map((i) => [i.path, i.action])).toEqual([["src/a.ts", "restore"]]);
    const u = await ub.undo({ session: S }, { expect: p.plan });
    expect(u.counts.restore).toBe(1);
    const afterUndo = (await ub.stamp()).stamp;
    expect((await ub.fetch()).refs.map((r) => r.status)).toEqual(["unchanged"]);
    expect((await ub.stamp()).stamp).toBe(afterUndo);
  });
});
