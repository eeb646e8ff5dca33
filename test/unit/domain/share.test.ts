import { describe, expect, it } from "vitest";
import { checkOrigin, hostSlug, leftOutBy, NOT_SENT, planShare, type SessionToShare } from "../../../src/domain/share.js";
import type { ChangeEntry, RepoPath, State } from "../../../src/domain/types.js";

const file = (sha: string, oid = `o${sha}`): State => ({ kind: "file", mode: "100644", size: 3, sha256: sha, oid }) as State;
const entry = (path: string, pre: State | null, post: State | null): ChangeEntry => ({ path: path as RepoPath, change: pre === null ? "added" : "modified", pre, post, by: ["claude:s"] });

function session(entries: ChangeEntry[], extra: Partial<SessionToShare> = {}): SessionToShare {
  return {
    session: "claude:s",
    harness: "claude",
    summary: { agents: [], tasks: [], first: "2026-12-01T00:00:00.000Z", last: "2026-12-01T00:01:00.000Z", calls: 1, paths: entries.length },
    calls: [{ call: "c1", tool: "Write", at: "2026-12-01T00:00:00.000Z", capture: "file", paths: entries.map((e) => e.path) }],
    entries,
    laterWrites: new Map(),
    interleaved: new Map(),
    recordPaths: entries.map((e) => e.path),
    ...extra,
  };
}

describe("leftOutBy", () => {
  it("names secret-looking files at any depth, and nothing else", () => {
    const why = leftOutBy([], false);
    for (const p of [".env", ".env.local", "config/.env.production", "certs/server.pem", "keys/deploy.key", "home/.ssh/id_ed25519", "id_rsa.pub"]) expect([p, why(p)]).toEqual([p, "secret"]);
    for (const p of ["src/env.ts", "environment.md", "src/keyboard.ts", "docs/pem-format.md", "src/id.ts", "a/b/idx_1"]) expect([p, why(p)]).toEqual([p, null]);
  });

  it("--include-secrets sends them; an --exclude still wins over it", () => {
    expect(leftOutBy([], true)(".env")).toBe(null);
    const why = leftOutBy(["gen/**", "*.log"], true);
    expect([why("gen/a/b.ts"), why("x/y.log"), why(".env"), why("src/a.ts")]).toEqual(["exclude", "exclude", null, null]);
    expect(leftOutBy(["certs"], false)("certs/a.pem")).toBe("exclude");
  });
});

describe("planShare", () => {
  it("left-out paths travel as unknown states (no hash) and their bytes stay home", () => {
    const plan = planShare(session([entry(".env", file("aa"), file("bb")), entry("src/new.ts", null, file("cc")), entry("src/a.ts", file("dd"), file("ee"))]), "ci-1", leftOutBy([], false));
    expect(plan.doc.entries.map((e) => [e.path, e.pre, e.post])).toEqual([
      [".env", NOT_SENT, NOT_SENT],
      ["src/new.ts", null, file("cc")],
      ["src/a.ts", file("dd"), file("ee")],
    ]);
    expect(plan.content.map((s) => s.sha256)).toEqual(["cc", "dd", "ee"]);
    expect(plan.doc.excluded).toEqual([{ path: ".env", why: "secret" }]);
    expect([...plan.redact]).toEqual([".env"]);
    expect(JSON.stringify(plan.doc)).not.toContain('"aa"');
    expect(JSON.stringify(plan.doc)).not.toContain('"bb"');
  });

  it("an absent side stays absent: a left-out file the session created is not-captured, not 'deleted'", () => {
    const plan = planShare(session([entry("id_rsa", null, file("ff"))]), "o", leftOutBy([], false));
    expect([plan.doc.entries[0]!.pre, plan.doc.entries[0]!.post]).toEqual([null, NOT_SENT]);
    expect(plan.content).toEqual([]);
  });

  it("each content once, whatever the number of states naming it; toolarge and gitlink states have none", () => {
    const big = { kind: "toolarge", size: 9e6, sha256: "99" } as State;
    const plan = planShare(session([entry("a", file("11"), file("22")), entry("b", file("22"), file("11")), entry("c", file("33"), big)]), "o", leftOutBy([], false));
    expect(plan.content.map((s) => s.sha256)).toEqual(["11", "22", "33"]);
  });

  it("a path only a record or a call names is left out too", () => {
    const plan = planShare(
      session([entry("src/a.ts", file("1"), file("2"))], { recordPaths: ["src/a.ts", "server.key"], calls: [{ call: "c", tool: "Bash", at: "t", capture: "tree", paths: ["x/.env.test"] }] }),
      "o",
      leftOutBy([], false),
    );
    expect(plan.doc.excluded).toEqual([
      { path: "server.key", why: "secret" },
      { path: "x/.env.test", why: "secret" },
    ]);
  });

  it("later writers and interleaved writers go along by path, in path order", () => {
    const plan = planShare(
      session([entry("b", file("1"), file("2")), entry("a", file("3"), file("4"))], {
        laterWrites: new Map([
          ["b" as RepoPath, { by: "claude:x", at: "t2" }],
          ["a" as RepoPath, { by: null, at: "t1" }],
        ]),
      }),
      "o",
      leftOutBy([], false),
    );
    expect(plan.doc.laterWrites).toEqual([
      { path: "a", by: null, at: "t1" },
      { path: "b", by: "claude:x", at: "t2" },
    ]);
  });
});

describe("origin names", () => {
  it("one ref component; anything else is refused with why", () => {
    for (const ok of ["ci-runner-7", "laptop.home-1a2b3c4d", "A_b"]) expect(checkOrigin(ok)).toBe(null);
    for (const bad of ["", "a/b", "-x", "x.lock", "a..b", "has space", "x".repeat(65)]) expect([bad, typeof checkOrigin(bad)]).toEqual([bad, "string"]);
  });

  it("a host name becomes a slug", () => {
    expect(hostSlug("Build-Host.example.COM")).toBe("build-host-example-com");
    expect(hostSlug("!!!")).toBe("host");
  });
});
