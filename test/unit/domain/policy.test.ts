import { describe, expect, it } from "vitest";
import { decider, NO_POLICY, parsePolicy, policyGlob } from "../../../src/domain/policy.js";
import { UnwindError } from "../../../src/domain/errors.js";

const refusal = (text: string) => {
  try {
    parsePolicy(text, "p.json");
  } catch (e) {
    expect(e).toBeInstanceOf(UnwindError);
    expect((e as UnwindError).exit).toBe(2);
    return (e as UnwindError).message;
  }
  throw new Error("expected a refusal");
};

describe("run policy (SPEC section 9)", () => {
  it("parses the documented example, with defaults for what is left out", () => {
    const p = parsePolicy('{ "default": "review", "allow": ["src/**", "test/**"], "review": [], "deny": [".env*", ".github/**", "**/*.pem"], "rollback": true }', "p.json");
    expect(p).toEqual({ default: "review", allow: ["src/**", "test/**"], review: [], deny: [".env*", ".github/**", "**/*.pem"], rollback: true });
    expect(parsePolicy("{}", "p.json")).toEqual(NO_POLICY);
    expect(parsePolicy('{"rollback": false}', "p.json").rollback).toBe(false);
  });
  it("refuses what would quietly leave a path unprotected, naming the file and the key", () => {
    expect(refusal('{"denny": []}')).toMatch(/p\.json: unknown key "denny"/);
    expect(refusal('{"default": "maybe"}')).toMatch(/"default"/);
    expect(refusal('{"deny": ".env"}')).toMatch(/"deny" must be a list/);
    expect(refusal('{"allow": ["!src/x"]}')).toMatch(/negated/);
    expect(refusal('{"allow": ["../x"]}')).toMatch(/leaves the work tree/);
    expect(refusal('{"rollback": "no"}')).toMatch(/"rollback"/);
    expect(refusal("{nope")).toMatch(/not valid JSON/);
    expect(refusal("[]")).toMatch(/JSON object/);
  });
  it("the most protective list wins: deny over review over allow; the default only where none matches", () => {
    const d = decider(parsePolicy('{"default": "review", "allow": ["src/**", "*.pem"], "review": ["src/api/**"], "deny": ["src/api/secret.ts", "**/*.pem"]}', "p"));
    expect(d("src/a.ts")).toBe("allow");
    expect(d("src/api/a.ts")).toBe("review"); // allow and review match: review
    expect(d("src/api/secret.ts")).toBe("deny"); // all three match: deny
    expect(d("keys/x.pem")).toBe("deny");
    expect(d("README.md")).toBe("review"); // nothing matches: the default
    const allowByDefault = decider(parsePolicy('{"default": "allow", "deny": [".env*"]}', "p"));
    expect(allowByDefault("README.md")).toBe("allow");
    expect(allowByDefault(".env.local")).toBe("deny");
  });
  it("globs are gitignore-style: a bare name at any depth, a leading / anchors, a directory takes what is below", () => {
    expect(policyGlob(".env*")("config/.env.prod")).toBe(true);
    expect(policyGlob(".env*")("a/.envelope/x")).toBe(true); // a directory on the way matches too, as in .gitignore
    expect(policyGlob("/.env*")("config/.env.prod")).toBe(false);
    expect(policyGlob("/.env*")(".env")).toBe(true);
    expect(policyGlob(".github")(".github/workflows/ci.yml")).toBe(true);
    expect(policyGlob(".github/")(".github/workflows/ci.yml")).toBe(true);
    expect(policyGlob("docs/*.md")("other/docs/a.md")).toBe(false); // with a slash: from the root
    expect(policyGlob("src/**")("srcx/a.ts")).toBe(false);
  });
});
