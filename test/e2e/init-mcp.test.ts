/**
 * `unwind init --mcp` through the built CLI: each client's MCP configuration
 * created, merged into an existing file (other servers, keys and comments
 * kept), idempotent, and a file it cannot parse refused with nothing
 * written anywhere. The registered command is started the way a client
 * starts it, through the SDK's own client.
 */
import { existsSync, readFileSync, statSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { BIN, dirFingerprint, makeRepo, read, treeState, unwind, write } from "../helpers.js";

const FILES = [".mcp.json", ".codex/config.toml", ".gemini/settings.json"];

describe("unwind init --mcp", () => {
  it("registers `unwind mcp` in each client's own file, by absolute path; the registered command serves the tools", async () => {
    const root = makeRepo({ "src/a.ts": "a\n" });
    const r = unwind(root, ["init", "--claude", "--codex", "--gemini", "--mcp", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.mcp.map((m: any) => [m.harness, m.file, m.changed, m.action])).toEqual([
      ["claude", ".mcp.json", true, "added"],
      ["codex", ".codex/config.toml", true, "added"],
      ["gemini", ".gemini/settings.json", true, "added"],
    ]);
    const entry = { command: BIN, args: ["mcp"] };
    expect(JSON.parse(read(root, ".mcp.json"))).toEqual({ mcpServers: { unwind: entry } });
    expect(parse(read(root, ".codex/config.toml"))).toEqual({ mcp_servers: { unwind: entry } });
    const gemini = JSON.parse(read(root, ".gemini/settings.json"));
    expect(gemini.mcpServers).toEqual({ unwind: entry });
    expect(Object.keys(gemini.hooks)).toEqual(["BeforeTool", "AfterTool"]); // the hooks, in the same file, kept

    // What a client does with it: run `command` with `args` in the project, and talk MCP to it.
    const client = new Client({ name: "init-test", version: "1" });
    await client.connect(new StdioClientTransport({ ...entry, cwd: root, stderr: "pipe" }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("undo_preview");
    } finally {
      await client.close();
    }

    // Human output names each file.
    const again = unwind(root, ["init", "--claude", "--codex", "--gemini", "--mcp"]);
    expect(again.stdout).toContain("unchanged  .codex/config.toml  (mcp server unwind)");
  });

  it("merges into existing files, keeping other servers, keys and comments; a second run changes nothing", () => {
    const toml = ["# team config", 'model = "gpt-5"', "", "[mcp_servers.docs] # the docs server", 'command = "docs-server"', 'args = ["--port", "8080"]', ""].join("\n");
    const root = makeRepo({
      ".mcp.json": JSON.stringify({ mcpServers: { github: { command: "gh-mcp", args: [], env: { TOKEN: "x" } } }, other: true }, null, 4) + "\n",
      ".codex/config.toml": toml,
      ".gemini/settings.json": JSON.stringify({ theme: "dark", mcpServers: { db: { command: "db-mcp" } } }, null, 2) + "\n",
    });
    const r = unwind(root, ["init", "--claude", "--codex", "--gemini", "--mcp", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const claude = JSON.parse(read(root, ".mcp.json"));
    expect(claude).toEqual({ mcpServers: { github: { command: "gh-mcp", args: [], env: { TOKEN: "x" } }, unwind: { command: BIN, args: ["mcp"] } }, other: true });
    expect(read(root, ".mcp.json")).toContain('\n    "mcpServers"'); // its 4-space indentation kept
    const codex = read(root, ".codex/config.toml");
    expect(codex.startsWith(toml)).toBe(true); // every line it had, comments included, as it was
    expect(parse(codex)).toEqual({ model: "gpt-5", mcp_servers: { docs: { command: "docs-server", args: ["--port", "8080"] }, unwind: { command: BIN, args: ["mcp"] } } });
    const gemini = JSON.parse(read(root, ".gemini/settings.json"));
    expect(gemini.theme).toBe("dark");
    expect(gemini.mcpServers).toEqual({ db: { command: "db-mcp" }, unwind: { command: BIN, args: ["mcp"] } });

    // Idempotent: the second run reports nothing changed and writes no file (bytes and mtimes alike).
    const before = FILES.map((f) => [readFileSync(join(root, f), "utf8"), statSync(join(root, f)).mtimeMs]);
    const again = unwind(root, ["init", "--claude", "--codex", "--gemini", "--mcp", "--json"]);
    expect(again.code).toBe(0);
    expect(again.json.mcp.map((m: any) => [m.changed, m.action])).toEqual([
      [false, "unchanged"],
      [false, "unchanged"],
      [false, "unchanged"],
    ]);
    expect(FILES.map((f) => [readFileSync(join(root, f), "utf8"), statSync(join(root, f)).mtimeMs])).toEqual(before);
  });

  it("a moved binary updates the unwind entry in place, keeping its other fields", () => {
    const root = makeRepo({
      ".mcp.json": JSON.stringify({ mcpServers: { unwind: { command: "/old/bin/unwind", args: ["mcp"], env: { UNWIND_STORE: "/s" } } } }),
      ".codex/config.toml": '[mcp_servers.unwind]\ncommand = "/old/bin/unwind"\nargs = ["mcp"]\n\n[mcp_servers.unwind.env]\nUNWIND_STORE = "/s"\n',
    });
    const r = unwind(root, ["init", "--claude", "--codex", "--mcp", "--json"]);
    expect(r.json.mcp.map((m: any) => m.action)).toEqual(["updated", "updated"]);
    expect(JSON.parse(read(root, ".mcp.json")).mcpServers.unwind).toEqual({ command: BIN, args: ["mcp"], env: { UNWIND_STORE: "/s" } });
    expect((parse(read(root, ".codex/config.toml")) as any).mcp_servers.unwind).toEqual({ command: BIN, args: ["mcp"], env: { UNWIND_STORE: "/s" } });
  });

  it("a file it cannot parse is a usage error naming it, and nothing is written anywhere; once fixed, the same command writes", () => {
    const root = makeRepo({ ".codex/config.toml": "[mcp_servers.unwind\ncommand = 1\n" });
    const before = { tree: treeState(root), git: dirFingerprint(join(root, ".git")) };
    const r = unwind(root, ["init", "--claude", "--codex", "--gemini", "--mcp"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\.codex\/config\.toml: not valid TOML/);
    expect(r.stdout).toBe("");
    // Not the hooks of the clients named before it, not the other clients' MCP files, not the store.
    expect({ tree: treeState(root), git: dirFingerprint(join(root, ".git")) }).toEqual(before);
    expect(existsSync(join(root, ".claude"))).toBe(false);

    // The control: the same command with the file fixed writes every file.
    write(root, ".codex/config.toml", "# fixed\n");
    const ok = unwind(root, ["init", "--claude", "--codex", "--gemini", "--mcp"]);
    expect(ok.code, ok.stderr).toBe(0);
    for (const f of [".claude/settings.json", ...FILES]) expect(existsSync(join(root, f)), f).toBe(true);
  });

  it("a file where a client's directory should be is refused before anything is written; once moved, the same command writes", () => {
    const root = makeRepo({ ".codex": "a file, not a directory\n" });
    const before = { tree: treeState(root), git: dirFingerprint(join(root, ".git")) };
    const r = unwind(root, ["init", "--claude", "--codex", "--mcp"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\.codex is in the way: it is a file, not a directory/);
    expect({ tree: treeState(root), git: dirFingerprint(join(root, ".git")) }).toEqual(before);
    expect(existsSync(join(root, ".claude"))).toBe(false);
    // The control: with the file moved aside, the same command writes every file.
    rmSync(join(root, ".codex"));
    expect(unwind(root, ["init", "--claude", "--codex", "--mcp"]).code).toBe(0);
    expect(existsSync(join(root, ".codex", "config.toml"))).toBe(true);
  });

  it("--mcp without a client is a usage error that creates nothing", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const before = dirFingerprint(join(root, ".git"));
    const r = unwind(root, ["init", "--mcp"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--claude, --codex, --gemini and/or --qwen");
    expect(dirFingerprint(join(root, ".git"))).toEqual(before);
    expect(unwind(root, ["init"]).code).toBe(0); // the control: init alone creates the store
    expect(existsSync(join(root, ".git", "unwind"))).toBe(true);
  });

  it("--mcp-allow own|any sets mcp.allow in the store's config.json, keeping its other keys; another value is a usage error that writes nothing", () => {
    const root = makeRepo({ "a.txt": "a\n" });
    expect(unwind(root, ["init"]).code).toBe(0);
    const config = join(root, ".git", "unwind", "config.json");
    write(root, ".git/unwind/config.json", '{"ttl": "7d"}\n');
    const before = dirFingerprint(join(root, ".git"));
    const bad = unwind(root, ["init", "--claude", "--mcp", "--mcp-allow", "everything"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--mcp-allow everything: expected own or any");
    expect(dirFingerprint(join(root, ".git"))).toEqual(before);
    expect(existsSync(join(root, ".mcp.json"))).toBe(false);

    const any = unwind(root, ["init", "--claude", "--mcp", "--mcp-allow", "any", "--json"]);
    expect(any.code, any.stderr).toBe(0);
    expect(any.json.mcpAllow).toBe("any");
    expect(JSON.parse(readFileSync(config, "utf8"))).toEqual({ ttl: "7d", mcp: { allow: "any" } });
    expect(unwind(root, ["init", "--mcp-allow", "own"]).stdout).toContain("mcp allow own: an agent takes back only its own session's work over MCP");
    expect(JSON.parse(readFileSync(config, "utf8"))).toEqual({ ttl: "7d", mcp: { allow: "own" } });
    // Left alone, the setting stays as it is.
    expect(unwind(root, ["init", "--claude", "--json"]).json.mcpAllow).toBe("own");
  });
});
