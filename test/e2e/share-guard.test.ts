import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git, makeRepo, read, tempDir, unwind, write } from "../helpers.js";
import { claudeCall } from "../journal-helpers.js";

// SPEC section 14's guards, with real git remotes (a bare repository, clones
// as machines) and sessions recorded by the real `unwind hook claude`
// process: what a push leaves out (credential files, configured patterns,
// content holding a token), that it names each and why, that the recording
// machine's root stays home, and that an undo of a fetched record never
// writes where git ignores.

function bare(): string {
  const dir = join(tempDir("unwind-guard-"), "r.git");
  git(tempDir(), "init", "-q", "--bare", "-b", "main", dir);
  return dir;
}

/** Every object the shared refs of `repo` reach, and the text of every blob among them. */
function sharedObjects(repo: string): { oids: string; text: string } {
  const refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/unwind/shared/").split("\n").filter(Boolean);
  if (refs.length === 0) return { oids: "", text: "" };
  const oids = git(repo, "rev-list", "--objects", ...refs);
  const blobs = oids
    .split("\n")
    .map((l) => l.split(" ")[0]!)
    .filter((o) => o && git(repo, "cat-file", "-t", o).trim() === "blob");
  return { oids, text: blobs.map((o) => git(repo, "cat-file", "blob", o)).join("\n") };
}

const oidOf = (text: string) => execFileSync("git", ["hash-object", "--stdin"], { input: text, encoding: "utf8" }).trim();

function refsOf(repo: string): string {
  return git(repo, "for-each-ref", "--format=%(objectname) %(refname)");
}

// Built from parts, so this file holds no whole token a scanner would flag.
const TOKEN = "ghp_" + "Z9".repeat(18);

/** Credential files by their usual names, and one name only the store's configuration calls secret. */
const SECRETS: Record<string, string> = {
  ".npmrc": "//registry.npmjs.org/:_authToken=abc123\n",
  ".netrc": "machine example.com login me password hunter2\n",
  ".git-credentials": "https://me:pw@example.com\n",
  ".aws/credentials": "[default]\naws_secret_access_key=abc\n",
  "gcp/credentials.json": '{"type":"service_account"}\n',
  "certs/client.p12": "p12 bytes\n",
  "sign.pfx": "pfx bytes\n",
  "db.secret": "db-password-1\n",
};
const TOKEN_FILE = `export const token = "${TOKEN}";\n`;
const NO_TOKEN_FILE = `export const token = "placeholder-value";\n`;

describe("what a push leaves out", () => {
  it("credential files, configured patterns and content holding a token are left out and named; --dry-run says so and pushes nothing; --include-secrets sends them", () => {
    const a = makeRepo({ "README.md": "# p\n" });
    const remote = bare();
    git(a, "remote", "add", "origin", remote);
    git(a, "config", "unwind.origin", "guard-a");
    const S = "6a6a6a6a-5555-4e4e-9f9f-1b1b1b1b1b1b";
    claudeCall(a, S, "Bash", { command: "./setup.sh" }, () => {
      for (const [p, t] of Object.entries(SECRETS)) write(a, p, t);
      write(a, "src/config.ts", TOKEN_FILE);
      write(a, "src/config2.ts", NO_TOKEN_FILE);
      write(a, "src/plain.ts", "export const p = 2;\n");
    });
    writeFileSync(join(a, ".git/unwind/config.json"), JSON.stringify({ share: { secretPatterns: ["*.secret"] } }));

    const expected = [
      { path: ".aws/credentials", why: "secret", rule: "**/.aws/credentials" },
      { path: ".git-credentials", why: "secret", rule: ".git-credentials" },
      { path: ".netrc", why: "secret", rule: ".netrc" },
      { path: ".npmrc", why: "secret", rule: ".npmrc" },
      { path: "certs/client.p12", why: "secret", rule: "*.p12" },
      { path: "db.secret", why: "secret", rule: "*.secret (share.secretPatterns)" },
      { path: "gcp/credentials.json", why: "secret", rule: "credentials.json" },
      { path: "sign.pfx", why: "secret", rule: "*.pfx" },
      { path: "src/config.ts", why: "token", rule: "a GitHub token" },
    ];

    // The dry run: what would be left out and why, and nothing pushed (nor written here).
    const remoteBefore = refsOf(remote);
    const dry = unwind(a, ["push", "--all", "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json.sessions[0].excluded).toEqual(expected);
    const human = unwind(a, ["push", "--all", "--dry-run"]);
    expect(human.stdout).toMatch(/^would leave out \(not-captured on the other side\):$/m);
    expect(human.stdout).toMatch(/^ {2}\.npmrc +secret-looking name: \.npmrc$/m);
    expect(human.stdout).toMatch(/^ {2}db\.secret +secret-looking name: \*\.secret \(share\.secretPatterns\)$/m);
    expect(human.stdout).toMatch(/^ {2}src\/config\.ts +its content holds a GitHub token$/m);
    expect(refsOf(remote)).toBe(remoteBefore);
    expect(refsOf(a)).not.toContain("refs/unwind/shared/");

    const pushed = unwind(a, ["push", "--all", "--json"]);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stderr).toContain("warning: left out the content of secret-looking paths");
    for (const e of expected) expect(pushed.stderr).toContain(e.path);
    expect(pushed.stderr).toContain("src/config.ts (its content holds a GitHub token)");
    expect(pushed.json.secrets).toEqual(expected.map((e) => e.path));
    const sent = sharedObjects(remote);
    for (const [p, t] of [...Object.entries(SECRETS), ["src/config.ts", TOKEN_FILE]]) expect([p, sent.oids.includes(oidOf(t!))]).toEqual([p, false]);
    expect(sent.text).not.toContain(TOKEN);
    // Negative controls: an ordinary file, and the same file without the token, are sent.
    expect(sent.oids).toContain(oidOf("export const p = 2;\n"));
    expect(sent.oids).toContain(oidOf(NO_TOKEN_FILE));

    // --include-secrets sends every one of them.
    const remote2 = bare();
    const all = unwind(a, ["push", remote2, "--all", "--include-secrets", "--json"]);
    expect(all.code, all.stderr).toBe(0);
    expect([all.json.sessions[0].excluded, all.json.secrets, all.stderr]).toEqual([[], [], ""]);
    const sent2 = sharedObjects(remote2);
    for (const [p, t] of [...Object.entries(SECRETS), ["src/config.ts", TOKEN_FILE]]) expect([p, sent2.oids.includes(oidOf(t!))]).toEqual([p, true]);

    // The recording machine's root stays home: no pushed record names it, though the local journal does.
    const journal = readdirSync(join(a, ".git/unwind/journal")).map((f) => readFileSync(join(a, ".git/unwind/journal", f), "utf8"));
    expect(journal.join("")).toContain(`"root":"${a}"`);
    expect(sent.text).not.toContain(a);
    expect(sent2.text).not.toContain(a);
  });

  it("a configured pattern that is not a glob inside the work tree is refused (exit 2), and nothing is pushed", () => {
    const a = makeRepo({ "f.txt": "1\n" });
    const remote = bare();
    git(a, "remote", "add", "origin", remote);
    claudeCall(a, "7b7b7b7b-6666-4c4c-8d8d-2c2c2c2c2c2c", "Write", { file_path: join(a, "f.txt"), content: "2\n" }, () => write(a, "f.txt", "2\n"));
    for (const bad of [{ secretPatterns: "*.secret" }, { secretPatterns: ["../x"] }, { secretPatterns: [3] }]) {
      writeFileSync(join(a, ".git/unwind/config.json"), JSON.stringify({ share: bad }));
      const r = unwind(a, ["push", "--all"]);
      expect([JSON.stringify(bad), r.code]).toEqual([JSON.stringify(bad), 2]);
      expect(r.stderr.trim().split("\n")[0]).toMatch(/^unwind: config\.json share\.secretPatterns: /);
      expect(refsOf(remote)).toBe("");
    }
    // Negative control: a good list, and the push goes.
    writeFileSync(join(a, ".git/unwind/config.json"), JSON.stringify({ share: { secretPatterns: ["*.secret"] } }));
    expect(unwind(a, ["push", "--all"]).code).toBe(0);
    expect(refsOf(remote)).toContain("refs/unwind/shared/");
  });

  it("a pushed run capsule carries no absolute root, directory or policy path; the local capsule keeps them", () => {
    const a = makeRepo({ "src/m.ts": "m1\n", "sub/.keep": "" });
    const remote = bare();
    git(a, "remote", "add", "origin", remote);
    const ran = unwind(join(a, "sub"), ["run", "--id", "guard-run-1", "--", "sh", "-c", "printf 'm2\\n' > ../src/m.ts"]);
    expect(ran.code, ran.stderr).toBe(0);
    const p = unwind(a, ["push", "--run", "guard-run-1", "--json"]);
    expect(p.code, p.stderr).toBe(0);
    const run = JSON.parse(git(remote, "cat-file", "blob", `${p.json.runs[0].ref}:run.json`));
    expect([run.run.root, run.run.cwd]).toEqual([".", "sub"]);
    expect(sharedObjects(remote).text).not.toContain(a);
    // Control: the capsule here names both in full.
    const local = readFileSync(join(a, ".git/unwind/runs/guard-run-1.json"), "utf8");
    expect(local).toContain(`"root":"${a}"`);
    expect(local).toContain(`"cwd":"${join(a, "sub")}"`);
    // The other side reads it as a run, and verifies it.
    const b = join(tempDir("unwind-guard-"), "b");
    git(tempDir(), "clone", "-q", remote, b);
    expect(unwind(b, ["fetch"]).code).toBe(0);
    expect(unwind(b, ["runs", "--json"]).json.runs.map((r: any) => [r.id, r.cwd])).toEqual([["guard-run-1", "sub"]]);
    expect(unwind(b, ["verify"]).code).toBe(0);
  });
});

describe("undo of a fetched record, and fetching named origins", () => {
  it("never writes into a path git ignores here (ignored-path); a path not ignored is written; fetch --origin takes only that origin's refs", () => {
    const remote = bare();
    const a = makeRepo({
      "README.md": "# p\n",
      "node_modules/.bin/jest": { content: "#!/bin/sh\necho jest\n", mode: 0o755 },
      "tools/run.sh": { content: "#!/bin/sh\necho run\n", mode: 0o755 },
    });
    git(a, "remote", "add", "origin", remote);
    git(a, "config", "unwind.origin", "guard-a");
    git(a, "push", "-q", "origin", "main");
    // A session deletes both; node_modules is ignored only afterwards, by a person's commit.
    const S = "8c8c8c8c-7777-4a4a-8b8b-3d3d3d3d3d3d";
    claudeCall(a, S, "Bash", { command: "rm node_modules/.bin/jest tools/run.sh" }, () => {
      execFileSync("rm", [join(a, "node_modules/.bin/jest"), join(a, "tools/run.sh")]);
    });
    write(a, ".gitignore", "node_modules/\n");
    git(a, "add", "-A");
    git(a, "commit", "-q", "-m", "work");
    git(a, "push", "-q", "origin", "main");
    expect(unwind(a, ["push", "--all"]).code).toBe(0);
    // Another machine's record on the same remote.
    const c = join(tempDir("unwind-guard-"), "c");
    git(tempDir(), "clone", "-q", remote, c);
    git(c, "config", "unwind.origin", "guard-c");
    claudeCall(c, "9d9d9d9d-8888-4b4b-8c8c-4e4e4e4e4e4e", "Write", { file_path: join(c, "README.md"), content: "# c\n" }, () => write(c, "README.md", "# c\n"));
    expect(unwind(c, ["push", "--all"]).code).toBe(0);

    const b = join(tempDir("unwind-guard-"), "b");
    git(tempDir(), "clone", "-q", remote, b);
    // Bad origin names, and this store's own, are refused before anything is fetched.
    git(b, "config", "unwind.origin", "guard-b");
    for (const bad of ["no/such", "-x", "guard-b"]) {
      const r = unwind(b, ["fetch", "--origin", bad]);
      expect([bad, r.code]).toEqual([bad, 2]);
      expect(r.stderr.trim().split("\n")[0]).toMatch(/^unwind: --origin /);
    }
    expect(refsOf(b)).not.toContain("refs/unwind/");
    const only = unwind(b, ["fetch", "--origin", "guard-a", "--json"]);
    expect(only.code, only.stderr).toBe(0);
    const fetchedRefs = () => git(b, "for-each-ref", "--format=%(refname)", "refs/unwind/shared/").split("\n").filter(Boolean);
    expect(fetchedRefs().map((r) => r.split("/")[3])).toEqual(["guard-a"]);
    // Negative control: without --origin, every origin's records come.
    expect(unwind(b, ["fetch"]).code).toBe(0);
    expect([...new Set(fetchedRefs().map((r) => r.split("/")[3]))].sort()).toEqual(["guard-a", "guard-c"]);

    expect(git(b, "check-ignore", "node_modules/.bin/jest").trim()).toBe("node_modules/.bin/jest");
    for (const args of [[], ["--force"]]) {
      const dry = unwind(b, ["undo", "--session", S, "--dry-run", "--json", ...args]);
      expect(dry.json.items.map((i: any) => [i.path, i.action, i.reason])).toEqual([
        ["node_modules/.bin/jest", "conflict", "ignored-path"],
        ["tools/run.sh", "restore", null],
      ]);
    }
    const u = unwind(b, ["undo", "--session", S, "--json"]);
    expect(u.code, u.stderr).toBe(1);
    expect(existsSync(join(b, "node_modules/.bin/jest"))).toBe(false);
    expect(existsSync(join(b, "node_modules"))).toBe(false);
    // Negative control: the path git does not ignore is written, executable as recorded.
    expect(read(b, "tools/run.sh")).toBe("#!/bin/sh\necho run\n");
    expect(statSync(join(b, "tools/run.sh")).mode & 0o111).not.toBe(0);
    expect(unwind(b, ["undo", "--session", S]).stdout).toContain("git ignores it here");

    // Negative control: the same session undone where it was recorded (its own record, not a fetched one) writes it back.
    const local = unwind(a, ["undo", "--session", S, "--dry-run", "--json"]);
    expect(local.json.items.map((i: any) => [i.path, i.action])).toEqual([
      ["node_modules/.bin/jest", "restore"],
      ["tools/run.sh", "restore"],
    ]);
  });
});
