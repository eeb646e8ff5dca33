// End-to-end demo of `unwind mcp` in a scratch repository: `unwind init
// --claude --mcp` installs the hooks and registers the server; two Claude
// Code sessions work through the real hook (each tool call sends the
// PreToolUse and PostToolUse payloads Claude sends); then agent one, through
// MCP calls only, inspects its work and takes it back. The server is started
// as .mcp.json says, with the environment Claude Code gives it
// (CLAUDE_CODE_SESSION_ID: the calling session), and spoken to by the SDK's
// own client. Each call is printed as `-> tool {arguments}` and its result's
// one-line summary (`<-`), or its error.
//
//   npm run demo:mcp
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const UNWIND = resolve(dirname(fileURLToPath(import.meta.url)), "..", "bin", "unwind");
const demo = mkdtempSync(join(tmpdir(), "unwind-mcp-demo-"));
const sh = (cmd, opts = {}) => execFileSync("sh", ["-c", cmd], { cwd: demo, encoding: "utf8", ...opts });
const file = (p, s) => {
  mkdirSync(dirname(join(demo, p)), { recursive: true });
  writeFileSync(join(demo, p), s);
};
const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const note = (s) => console.log(`\n# ${s}`);

try {
  sh("git init -q -b main && git config user.email demo@example.com && git config user.name demo");
  file("src/answer.ts", "export const answer = 42;\n");
  file("docs/notes.md", "# Notes\n");
  sh("git add -A && git commit -qm initial");

  console.log(bold("$ unwind init --claude --mcp"));
  process.stdout.write(sh(`"${UNWIND}" init --claude --mcp`).replaceAll(demo, "~/project"));
  const hook = JSON.parse(readFileSync(join(demo, ".claude/settings.json"), "utf8")).hooks.PreToolUse[0].hooks[0].command;
  const server = JSON.parse(readFileSync(join(demo, ".mcp.json"), "utf8")).mcpServers.unwind;

  // One tool call as Claude Code makes it: PreToolUse hook, the tool runs, PostToolUse hook.
  const call = (session, id, tool, input, effect) => {
    const payload = (event) => JSON.stringify({ session_id: session, transcript_path: "/tmp/t.jsonl", cwd: demo, permission_mode: "default", hook_event_name: event, tool_name: tool, tool_input: input, tool_use_id: id });
    sh(hook, { input: payload("PreToolUse") });
    effect();
    sh(hook, { input: payload("PostToolUse") });
  };
  note("session 3f2a… edits a file and runs a code generator; session 77aa… writes its own file");
  call("3f2a9c1e-agent-one", "toolu_01", "Edit", { file_path: "src/answer.ts", old_string: "42", new_string: "41" }, () => file("src/answer.ts", "export const answer = 41;\n"));
  call("3f2a9c1e-agent-one", "toolu_02", "Bash", { command: "node gen.js > src/gen/api.ts" }, () => file("src/gen/api.ts", "export {};\n"));
  call("77aa5b2d-agent-two", "toolu_03", "Write", { file_path: "docs/notes.md", content: "# Notes\nfrom agent two\n" }, () => file("docs/notes.md", "# Notes\nfrom agent two\n"));

  note(`agent one's client starts the server as .mcp.json says: ${server.command.replace(/.*\/bin\//, ".../bin/")} ${server.args.join(" ")}`);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("CLAUDE")));
  const client = new Client({ name: "demo", version: "1" });
  await client.connect(new StdioClientTransport({ ...server, cwd: demo, env: { ...env, CLAUDE_CODE_SESSION_ID: "3f2a9c1e-agent-one" }, stderr: "pipe" }));
  const tools = (await client.listTools()).tools.map((t) => t.name);
  console.log(`${bold("-> tools/list")}\n<- ${tools.join(", ")}`);

  const mcp = async (tool, args = {}) => {
    const r = await client.callTool({ name: tool, arguments: args });
    console.log(`${bold(`-> ${tool} ${JSON.stringify(args)}`)}\n<- ${r.isError ? "error: " : ""}${r.content[0].text}`);
    return r.structuredContent;
  };
  await mcp("sessions");
  const cs = await mcp("changes");
  for (const e of cs.entries) console.log(`     ${e.change.padEnd(9)} ${e.path}`);
  const p = await mcp("undo_preview");
  for (const i of p.items) console.log(`     ${i.action.padEnd(9)} ${i.path}`);

  note("before the agent applies it, a person deletes src/gen/api.ts: the plan is no longer the one previewed");
  rmSync(join(demo, "src/gen"), { recursive: true });
  await mcp("undo", { plan: p.plan });
  const p2 = await mcp("undo_preview");
  for (const i of p2.items) console.log(`     ${i.action.padEnd(9)} ${i.path}${i.reason ? `  (${i.reason}${i.detail ? `: ${i.detail}` : ""})` : ""}`);
  const u = await mcp("undo", { plan: p2.plan });
  console.log(`\n$ git status --short; cat src/answer.ts docs/notes.md\n${sh("git status --short; cat src/answer.ts docs/notes.md")}`);
  await mcp("redo", { receipt: u.receipt });
  await client.close();
} finally {
  rmSync(demo, { recursive: true, force: true });
}
