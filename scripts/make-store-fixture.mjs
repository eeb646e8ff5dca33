#!/usr/bin/env node
// Makes test/fixtures/store-v<format>.tar.gz: a scratch repository whose store
// this release wrote through its real entry points (two Claude sessions by
// `unwind hook claude`, a run, an undo's receipt). Committed once per format,
// never remade for the same one: later releases must read exactly these bytes
// (test/e2e/store-format.test.ts). Run after `npm run build`:
//   node scripts/make-store-fixture.mjs [out.tar.gz]
//
// The store names its work tree by absolute path (journal records, snapshot
// metadata, run capsules): a session is refused in any other work tree. So the
// repository is made at one fixed path, and the test unpacks it there again,
// under a lock (FIXTURE_TOP below, the same in the test).
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, realpathSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const bin = resolve(here, "..", "bin", "unwind");
const out = resolve(process.argv[2] ?? join(here, "..", "test", "fixtures", "store-v1.tar.gz"));

const env = { ...process.env, NO_COLOR: "1", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" };
for (const k of Object.keys(env)) if (k.startsWith("GIT_DIR") || k === "GIT_INDEX_FILE" || k === "GIT_WORK_TREE" || k === "UNWIND_STORE") delete env[k];

const FIXTURE_TOP = "/tmp/unwind-store-fixture-v1";
rmSync(FIXTURE_TOP, { recursive: true, force: true });
mkdirSync(FIXTURE_TOP, { mode: 0o700 });
const top = realpathSync(FIXTURE_TOP);
if (top !== FIXTURE_TOP) throw new Error(`${FIXTURE_TOP} resolves to ${top}: make the fixture where it is not a link`);
const root = join(top, "repo");
mkdirSync(root);
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { cwd: root, env, encoding: "utf8", ...opts });
const unwind = (args, input = "") => sh(process.execPath, [bin, ...args], { input });

const write = (rel, text) => {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
};

let seq = 0;
/** One Claude Code tool call: PreToolUse, the tool's effect, PostToolUse, each through `unwind hook claude`. */
function claudeCall(session, tool, input, effect) {
  const id = `toolu_fixture_${++seq}`;
  const payload = (event) =>
    JSON.stringify({
      session_id: session,
      transcript_path: `/home/dev/.claude/projects/fixture/${session}.jsonl`,
      cwd: root,
      permission_mode: "default",
      hook_event_name: event,
      tool_name: tool,
      tool_input: input,
      tool_use_id: id,
      ...(event === "PostToolUse" ? { tool_response: { success: true } } : {}),
    });
  unwind(["hook", "claude"], payload("PreToolUse"));
  effect();
  unwind(["hook", "claude"], payload("PostToolUse"));
}

sh("git", ["init", "-q", "-b", "main"]);
sh("git", ["config", "core.autocrlf", "false"]);
write("a.txt", "alpha 1\n");
write("b.txt", "bravo 1\n");
write("docs/readme.md", "# fixture\n");
sh("git", ["add", "-A"]);
sh("git", ["commit", "-q", "-m", "init"]);

const A = "aaaaaaaa-1111-4111-8111-000000000001";
const B = "bbbbbbbb-2222-4222-8222-000000000002";
claudeCall(A, "Write", { file_path: join(root, "src/new.ts"), content: "export const n = 1;\n" }, () => write("src/new.ts", "export const n = 1;\n"));
claudeCall(A, "Edit", { file_path: join(root, "a.txt"), old_string: "alpha 1", new_string: "alpha 2" }, () => write("a.txt", "alpha 2\n"));
claudeCall(B, "Bash", { command: "rm b.txt && echo gen > gen.txt", description: "generate" }, () => {
  unlinkSync(join(root, "b.txt"));
  write("gen.txt", "gen\n");
});
claudeCall(B, "Write", { file_path: join(root, "docs/readme.md"), content: "# fixture, edited\n" }, () => write("docs/readme.md", "# fixture, edited\n"));
unwind(["run", "--", "sh", "-c", "echo ran > run.txt"]);
// The receipt: session B taken back (the test redoes it).
unwind(["undo", "--session", B, "-q"]);

for (const f of readdirSync(join(root, ".git", "hooks"))) rmSync(join(root, ".git", "hooks", f));
mkdirSync(dirname(out), { recursive: true });
execFileSync("tar", ["-czf", out, "-C", top, "repo"], { env });
rmSync(top, { recursive: true, force: true });
process.stdout.write(`${out}\n`);
