import { describe, expect, it } from "vitest";
import { checkOrigin, hostSlug, leftOutBy, NOT_SENT, planShare, tokenIn, withTokens, type SessionToShare } from "../../../src/domain/share.js";
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
    const why = (p: string) => leftOutBy([], false)(p)?.why ?? null;
    const secret = [".env", ".env.local", "config/.env.production", "certs/server.pem", "keys/deploy.key", "home/.ssh/id_ed25519", "id_rsa.pub"];
    // The usual credential files of package registries, git, clouds, and key stores (SPEC section 14).
    secret.push(".npmrc", "web/.npmrc", ".netrc", "_netrc", ".git-credentials", ".pypirc", ".pgpass", ".htpasswd", ".aws/credentials", "home/.aws/credentials");
    secret.push(
      "credentials.json",
      "gcp/credentials.json",
      "client_secret_123.apps.json",
      "certs/client.p12",
      "sign.pfx",
      "release.jks",
      "app.keystore",
      "infra/terraform.tfstate",
      ".docker/config.json",
    );
    for (const p of secret) expect([p, why(p)]).toEqual([p, "secret"]);
    const plain = [
      "src/env.ts",
      "environment.md",
      "src/keyboard.ts",
      "docs/pem-format.md",
      "src/id.ts",
      "a/b/idx_1",
      "src/npmrc.ts",
      "aws/credentials.md",
      "src/credentials.ts",
      "credentials",
      "docker/config.json",
    ];
    for (const p of plain) expect([p, why(p)]).toEqual([p, null]);
  });

  it("says which rule caught a path: the built-in glob, a configured one, an --exclude", () => {
    const by = leftOutBy(["gen/**"], false, ["*.secret", "config/prod/**"]);
    expect(by(".aws/credentials")).toEqual({ why: "secret", rule: "**/.aws/credentials" });
    expect(by("a/b/db.secret")).toEqual({ why: "secret", rule: "*.secret (share.secretPatterns)" });
    expect(by("config/prod/app.yml")).toEqual({ why: "secret", rule: "config/prod/** (share.secretPatterns)" });
    expect(by("gen/.npmrc")).toEqual({ why: "exclude", rule: "gen/**" });
    // Controls: the same names elsewhere, and with no configured patterns.
    expect([by("config/dev/app.yml"), by("src/secret.ts"), leftOutBy([], false)("a/b/db.secret")]).toEqual([null, null, null]);
  });

  it("--include-secrets sends them; an --exclude still wins over it", () => {
    expect(leftOutBy([], true, ["*.secret"])(".env")).toBe(null);
    expect(leftOutBy([], true, ["*.secret"])("db.secret")).toBe(null);
    const why = leftOutBy(["gen/**", "*.log"], true);
    expect([why("gen/a/b.ts"), why("x/y.log"), why(".env"), why("src/a.ts")].map((l) => l?.why ?? null)).toEqual(["exclude", "exclude", null, null]);
    expect(leftOutBy(["certs"], false)("certs/a.pem")?.why).toBe("exclude");
  });
});

describe("tokenIn", () => {
  // Built from parts, so this file holds no whole token a scanner would flag.
  const x = (n: number, c = "a") => c.repeat(n);
  it("finds each well-known token format in text, and says which", () => {
    const cases: [string, string][] = [
      ["AKIA" + x(16, "Q"), "an AWS access key id"],
      ["ASIA" + x(16, "7"), "an AWS access key id"],
      ["ghp_" + x(36), "a GitHub token"],
      ["gho_" + x(36), "a GitHub token"],
      ["ghs_" + x(40), "a GitHub token"],
      ["github_pat_" + x(22) + "_" + x(59), "a GitHub token"],
      ["glpat-" + x(20), "a GitLab token"],
      ["xoxb-" + x(12, "1") + "-" + x(24), "a Slack token"],
      ["sk-ant-api03-" + x(40), "an Anthropic API key"],
      ["sk-proj-" + x(40), "an OpenAI API key"],
      ["sk-" + x(48), "an OpenAI API key"],
      ["npm_" + x(36), "an npm token"],
      ["-----BEGIN RSA PRIVATE KEY-----", "a private key"],
      ["-----BEGIN OPENSSH PRIVATE KEY-----", "a private key"],
      ["-----BEGIN PRIVATE KEY-----", "a private key"],
      ["AIza" + x(35, "B"), "a Google API key"],
      ["sk_live_" + x(24), "a Stripe live key"],
    ];
    for (const [token, kind] of cases) expect([token, tokenIn(Buffer.from(`export const cfg = {\n  key: "${token}",\n};\n`))]).toEqual([token, kind]);
  });

  it("nothing in ordinary text, a too-short look-alike, a public key, or binary content", () => {
    const plain = [
      "export const a = 1;\n",
      "ghp_short\n",
      "the task-management sk-loading class\n",
      "AKIA" + x(15, "Q") + "\n",
      "-----BEGIN PUBLIC KEY-----\n",
      "npm_config_registry=https://registry.npmjs.org/\n",
    ];
    for (const t of plain) expect([t, tokenIn(Buffer.from(t))]).toEqual([t, null]);
    expect(tokenIn(Buffer.concat([Buffer.from([0, 1, 2]), Buffer.from("ghp_" + x(36))]))).toBe(null);
  });

  it("withTokens leaves out every path one of whose states holds a token, beside what leftOut already does", () => {
    const entries = [entry("src/a.ts", file("11"), file("22")), entry("src/b.ts", file("33"), file("44")), entry(".env", file("55"), file("66"))];
    const by = withTokens(leftOutBy([], false), entries, new Map([["22", "a GitHub token"]]));
    expect(entries.map((e) => by(e.path))).toEqual([{ why: "token", rule: "a GitHub token" }, null, { why: "secret", rule: ".env*" }]);
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
    expect(plan.doc.excluded).toEqual([{ path: ".env", why: "secret", rule: ".env*" }]);
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
      { path: "server.key", why: "secret", rule: "*.key" },
      { path: "x/.env.test", why: "secret", rule: ".env*" },
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
