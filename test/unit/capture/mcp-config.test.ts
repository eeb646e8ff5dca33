/**
 * `unwind init --mcp`'s edits of each client's MCP configuration: the pure
 * merges as tables, and the TOML editor against files with other tables,
 * comments, sub-tables, multi-line arrays and an existing unwind table, each
 * result checked by parsing it back.
 */
import { describe, expect, it } from "vitest";
import { parse } from "smol-toml";
import { mergeMcpJson, mergeMcpToml, tableKey } from "../../../src/capture/harness/mcp-config.js";

const E = { command: "/opt/unwind/bin/unwind", args: ["mcp"] };
const MOVED = { command: "/usr/local/bin/unwind", args: ["mcp"] };

describe("mergeMcpJson (Claude Code .mcp.json, Gemini CLI settings.json)", () => {
  it("adds the entry to a missing or empty file", () => {
    expect(mergeMcpJson(undefined, E, "f")).toEqual({ settings: { mcpServers: { unwind: E } }, action: "added" });
    expect(mergeMcpJson({}, E, "f")).toEqual({ settings: { mcpServers: { unwind: E } }, action: "added" });
  });

  it("keeps other servers and unrelated keys, in their order, and does not touch its input", () => {
    const existing = Object.freeze({ theme: "dark", mcpServers: Object.freeze({ other: Object.freeze({ command: "x", args: Object.freeze(["y"]) }) }), hooks: Object.freeze({}) });
    const { settings, action } = mergeMcpJson(existing, E, "f");
    expect(action).toBe("added");
    expect(Object.keys(settings)).toEqual(["theme", "mcpServers", "hooks"]);
    expect(settings.mcpServers).toEqual({ other: { command: "x", args: ["y"] }, unwind: E });
  });

  it("is idempotent, and a moved binary updates the entry in place, keeping its other fields", () => {
    const once = mergeMcpJson(undefined, E, "f").settings;
    expect(mergeMcpJson(once, E, "f")).toEqual({ settings: once, action: "unchanged" });
    const withEnv = { mcpServers: { unwind: { command: E.command, args: ["mcp"], env: { A: "1" } } } };
    expect(mergeMcpJson(withEnv, MOVED, "f")).toEqual({ settings: { mcpServers: { unwind: { command: MOVED.command, args: ["mcp"], env: { A: "1" } } } }, action: "updated" });
  });

  it("refuses shapes it does not understand, naming the file and the key", () => {
    expect(() => mergeMcpJson([], E, ".mcp.json")).toThrow(/\.mcp\.json: the top level is an array/);
    expect(() => mergeMcpJson({ mcpServers: [] }, E, ".mcp.json")).toThrow(/"mcpServers" is an array, expected an object/);
    expect(() => mergeMcpJson({ mcpServers: { unwind: "x" } }, E, ".mcp.json")).toThrow(/"mcpServers.unwind" is a string/);
  });
});

describe("mergeMcpToml (Codex .codex/config.toml)", () => {
  const entryOf = (text: string) => (parse(text) as any).mcp_servers.unwind;

  it("creates the table in a missing or empty file", () => {
    const r = mergeMcpToml(undefined, E, "f");
    expect(r.action).toBe("added");
    expect(r.text).toBe('[mcp_servers.unwind]\ncommand = "/opt/unwind/bin/unwind"\nargs = ["mcp"]\n');
    expect(mergeMcpToml("", E, "f").text).toBe(r.text);
  });

  it("appends to a file with other tables and comments, changing none of its lines", () => {
    const before = [
      "# my Codex config",
      'model = "gpt-5" # inline comment',
      "",
      "[mcp_servers.docs]",
      'command = "docs-server"',
      "args = [",
      '  "--port", # a comment inside an array',
      '  "8080",',
      "]",
      "",
      "[mcp_servers.docs.env]",
      'TOKEN = "x"',
      "",
      "[profiles.fast]",
      'model = "o4-mini"',
      "",
      "",
    ].join("\n");
    const r = mergeMcpToml(before, E, "f");
    expect(r.action).toBe("added");
    expect(r.text.startsWith(before.trimEnd() + "\n\n[mcp_servers.unwind]\n")).toBe(true);
    const doc = parse(r.text) as any;
    expect(doc.mcp_servers.unwind).toEqual(E);
    expect(doc.mcp_servers.docs).toEqual({ command: "docs-server", args: ["--port", "8080"], env: { TOKEN: "x" } });
    expect(doc.profiles).toEqual({ fast: { model: "o4-mini" } });
    expect(mergeMcpToml(r.text, E, "f")).toEqual({ text: r.text, action: "unchanged" });
  });

  it("updates an existing unwind table in place: only its command and args lines change, its env and comments stay", () => {
    const before = [
      "[mcp_servers.unwind] # registered by unwind init --mcp",
      "# the binary",
      'command = "/old/place/unwind"',
      "args = [",
      '  "mcp",',
      "]",
      "startup_timeout_sec = 20",
      "",
      "[mcp_servers.unwind.env]",
      'UNWIND_STORE = "/tmp/s"',
      "",
      "[other]",
      "x = 1",
      "",
    ].join("\n");
    const r = mergeMcpToml(before, E, "f");
    expect(r.action).toBe("updated");
    expect(r.text).toBe(
      [
        "[mcp_servers.unwind] # registered by unwind init --mcp",
        "# the binary",
        'command = "/opt/unwind/bin/unwind"',
        'args = ["mcp"]',
        "startup_timeout_sec = 20",
        "",
        "[mcp_servers.unwind.env]",
        'UNWIND_STORE = "/tmp/s"',
        "",
        "[other]",
        "x = 1",
        "",
      ].join("\n"),
    );
    expect(entryOf(r.text)).toEqual({ ...E, startup_timeout_sec: 20, env: { UNWIND_STORE: "/tmp/s" } });
  });

  it("adds missing keys under an existing header written with quotes and spaces; keeps CRLF line endings", () => {
    const before = '[ mcp_servers . "unwind" ]\r\nenabled = true\r\n';
    const r = mergeMcpToml(before, E, "f");
    expect(r.text).toBe('[ mcp_servers . "unwind" ]\r\ncommand = "/opt/unwind/bin/unwind"\r\nargs = ["mcp"]\r\nenabled = true\r\n');
    expect(entryOf(r.text)).toEqual({ ...E, enabled: true });
  });

  it("quotes a command with spaces, quotes and backslashes so it parses back exactly", () => {
    const odd = { command: '/home/a b/"un"\\wind', args: ["mcp"] };
    expect(entryOf(mergeMcpToml("x = 1\n", odd, "f").text)).toEqual(odd);
  });

  it("never rewrites someone else's server named unwind (another command, a URL); its own entry is updated", () => {
    const theirs = { mcpServers: { unwind: { command: "python3", args: ["-m", "my_unwind"], env: { K: "v" } } } };
    expect(() => mergeMcpJson(theirs, E, ".mcp.json")).toThrow(/someone else's \(python3\)/);
    expect(() => mergeMcpJson({ mcpServers: { unwind: { type: "http", url: "https://x" } } }, E, ".mcp.json")).toThrow(/someone else's/);
    expect(() => mergeMcpToml('[mcp_servers.unwind]\nurl = "https://x"\n', E, "config.toml")).toThrow(/someone else's/);
    expect(() => mergeMcpToml('[mcp_servers.unwind]\ncommand = "node"\nargs = ["server.js"]\n', E, "config.toml")).toThrow(/someone else's \(node\)/);
    // control: unwind's own entry from a binary that moved is updated in place, its env kept
    const ours = mergeMcpJson({ mcpServers: { unwind: { command: "/old/bin/unwind", args: ["mcp"], env: { K: "v" } } } }, E, ".mcp.json");
    expect(ours.action).toBe("updated");
    expect((ours.settings as any).mcpServers.unwind).toEqual({ ...E, env: { K: "v" } });
  });

  it("refuses, writing nothing, what it cannot edit safely", () => {
    expect(() => mergeMcpToml("[broken\n", E, "config.toml")).toThrow(/config\.toml: not valid TOML/);
    expect(() => mergeMcpToml("mcp_servers = 3\n", E, "f")).toThrow(/"mcp_servers" is a number, expected a table/);
    // Defined as an inline table or dotted keys: appending a [mcp_servers.unwind] table would define it twice.
    expect(() => mergeMcpToml('mcp_servers = { unwind = { command = "/old/unwind", args = ["mcp"] } }\n', E, "f")).toThrow(/dotted keys or an inline table/);
    expect(() => mergeMcpToml('[mcp_servers]\nunwind.command = "/old/unwind"\nunwind.args = ["mcp"]\n', E, "f")).toThrow(/dotted keys or an inline table/);
    // A command written as a multi-line string: the line edit would not parse, so the parser's check refuses it.
    expect(() => mergeMcpToml('[mcp_servers.unwind]\ncommand = """\n/old/unwind"""\nargs = ["mcp"]\n', E, "f")).toThrow(/could not edit \[mcp_servers.unwind\] safely/);
  });

  it("reads table headers as TOML writes them, and nothing else as one", () => {
    expect(tableKey("[mcp_servers.unwind]")).toEqual(["mcp_servers", "unwind"]);
    expect(tableKey("  [ mcp_servers . 'unwind' ]  # c")).toEqual(["mcp_servers", "unwind"]);
    expect(tableKey('[[a."b.c"]]')).toEqual(["a", "b.c"]);
    expect(tableKey('args = ["mcp"]')).toBeNull();
    expect(tableKey("[a]]")).toBeNull();
    expect(tableKey("# [mcp_servers.unwind]")).toBeNull();
  });
});
