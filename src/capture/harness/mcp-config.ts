/**
 * `unwind init --mcp`: register `unwind mcp` in a harness's own MCP
 * configuration, as that client reads it (its rules' `mcp.file`):
 *
 * - Claude Code, `.mcp.json`: `{"mcpServers": {"unwind": {"command", "args"}}}`
 * - Gemini CLI, `.gemini/settings.json`: the same `mcpServers` object, beside its hooks
 * - Codex, `.codex/config.toml`: a `[mcp_servers.unwind]` table with `command` and `args`
 *
 * As with the hooks (settings.ts): nothing the user had is dropped or
 * reordered, a second run changes nothing, a moved binary updates the one
 * `unwind` entry in place (its other fields, such as `env`, kept), and a
 * file that cannot be parsed is left untouched and reported.
 *
 * The TOML file is edited as text, so its comments and layout survive: only
 * the lines of `command` and `args` in `[mcp_servers.unwind]` are written
 * (or the table is appended). The edit is then checked with a real TOML
 * parser: the new text must parse, hold exactly the entry asked for, and
 * hold everything else the old text held. Anything else is refused with
 * nothing written.
 */
import { isDeepStrictEqual } from "node:util";
import { parse as parseToml } from "smol-toml";
import { canonicalJson } from "../../domain/hash.js";
import { HARNESSES } from "./index.js";
import type { Harness } from "./rules.js";
import { jsonText, parseJsonSettings, readSettingsFile, SettingsError, stripBom, writeSettingsFile, type SettingsFile } from "./settings.js";

/** The name the server is registered under: its tools reach Claude Code as `mcp__unwind__<tool>`. */
export const SERVER_NAME = "unwind";

export interface McpInitResult {
  harness: Harness;
  /** Repo-relative configuration file, e.g. ".mcp.json". */
  file: string;
  /** Whether the file was (re)written. */
  changed: boolean;
  /** `added`: a new `unwind` entry; `updated`: the entry's command or args changed (the binary moved); `unchanged`. */
  action: "added" | "updated" | "unchanged";
}

/** What a client runs: `command` with `args`, no shell. */
export interface ServerEntry {
  command: string;
  args: string[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `a ${typeof v}`;
}

/** The file `unwind init --mcp` edits for a harness. */
export function mcpConfigFile(harness: Harness): string {
  const mcp = HARNESSES[harness].mcp;
  if (mcp === undefined) throw new Error(`--mcp: unwind does not register its MCP server with ${harness} yet`);
  return mcp.file;
}

/**
 * A server named `unwind` that is not `unwind mcp` (another command, another
 * transport) is someone else's: init never rewrites it into ours. Ours is a
 * command whose file is named `unwind`, run with `["mcp"]`, and no URL.
 */
function notSomeoneElses(current: Json, label: string, where: string): void {
  const command = typeof current.command === "string" ? current.command.replace(/^['"]|['"]$/g, "") : null;
  // A table with neither a command nor a URL (an `env` or options set ahead) is filled in.
  const empty = current.command === undefined && current.args === undefined;
  const ours = empty || (command !== null && /(^|[\\/])unwind$/.test(command) && isDeepStrictEqual(current.args, ["mcp"]));
  if (current.url !== undefined || current.httpUrl !== undefined || !ours) {
    throw new SettingsError(label, `${where} is a server of someone else's (${command ?? "no command"}), not unwind mcp; unwind does not replace it (rename it, then run unwind init --mcp again)`);
  }
}

/**
 * Pure: a JSON client configuration (parsed, or undefined when there is
 * none) with `mcpServers.unwind` set to `entry`. Never mutates `existing`.
 */
export function mergeMcpJson(existing: unknown, entry: ServerEntry, label: string): { settings: Json; action: McpInitResult["action"] } {
  if (existing !== undefined && !isObject(existing)) throw new SettingsError(label, `the top level is ${describe(existing)}, expected a JSON object`);
  const settings: Json = existing === undefined ? {} : (JSON.parse(JSON.stringify(existing)) as Json);
  if (settings.mcpServers === undefined) settings.mcpServers = {};
  const servers = settings.mcpServers;
  if (!isObject(servers)) throw new SettingsError(label, `"mcpServers" is ${describe(servers)}, expected an object`);
  const current = servers[SERVER_NAME];
  if (current === undefined) {
    servers[SERVER_NAME] = { command: entry.command, args: [...entry.args] };
    return { settings, action: "added" };
  }
  if (!isObject(current)) throw new SettingsError(label, `"mcpServers.${SERVER_NAME}" is ${describe(current)}, expected an object`);
  notSomeoneElses(current, label, `"mcpServers.${SERVER_NAME}"`);
  if (current.command === entry.command && isDeepStrictEqual(current.args, entry.args)) return { settings, action: "unchanged" };
  current.command = entry.command;
  current.args = [...entry.args];
  return { settings, action: "updated" };
}

/**
 * Pure: TOML text (undefined when there is no file) with
 * `[mcp_servers.unwind]` holding `entry`, every other line as it was.
 */
export function mergeMcpToml(raw: string | undefined, entry: ServerEntry, label: string): { text: string; action: McpInitResult["action"] } {
  const { text: body, bom } = stripBom(raw);
  const old = tomlDoc(body ?? "", label);
  const servers = old.mcp_servers;
  if (servers !== undefined && !isObject(servers)) throw new SettingsError(label, `"mcp_servers" is ${describe(servers)}, expected a table`);
  const current = servers?.[SERVER_NAME];
  if (current !== undefined && !isObject(current)) throw new SettingsError(label, `"mcp_servers.${SERVER_NAME}" is ${describe(current)}, expected a table`);
  if (current !== undefined) notSomeoneElses(current, label, `[mcp_servers.${SERVER_NAME}]`);
  if (current && current.command === entry.command && isDeepStrictEqual(current.args, entry.args)) return { text: raw ?? "", action: "unchanged" };

  const eol = body?.includes("\r\n") ? "\r\n" : "\n";
  const lines = (body ?? "").split(/\r?\n/);
  const values = { command: JSON.stringify(entry.command), args: `[${entry.args.map((a) => JSON.stringify(a)).join(", ")}]` };
  const header = lines.findIndex((l) => tableKey(l)?.join("\0") === `mcp_servers\0${SERVER_NAME}`);
  if (header === -1) {
    if (current !== undefined) {
      throw new SettingsError(label, `mcp_servers.${SERVER_NAME} is written as dotted keys or an inline table, which unwind does not edit; make it a [mcp_servers.${SERVER_NAME}] table`);
    }
    while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines.pop();
    if (lines.length > 0) lines.push("");
    lines.push(`[mcp_servers.${SERVER_NAME}]`, `command = ${values.command}`, `args = ${values.args}`, "");
  } else {
    let end = lines.findIndex((l, i) => i > header && tableKey(l) !== null);
    if (end === -1) end = lines.length;
    // The keys are replaced where they stand, bottom up so the indexes above stay right; a missing one goes under the header.
    const found = (["args", "command"] as const).map((key) => ({ key, at: keyLine(lines, header + 1, end, key) }));
    for (const { key, at } of found.filter((f) => f.at !== null).sort((a, b) => b.at!.start - a.at!.start)) {
      lines.splice(at!.start, at!.end - at!.start + 1, `${at!.indent}${key} = ${values[key]}`);
    }
    const missing = (["command", "args"] as const).filter((k) => found.find((f) => f.key === k)!.at === null);
    lines.splice(header + 1, 0, ...missing.map((k) => `${k} = ${values[k]}`));
  }
  const text = (bom ? "\uFEFF" : "") + lines.join(eol);

  // The check: the new text parses, holds the entry asked for, and everything else as it was.
  let fresh: Json;
  try {
    fresh = tomlDoc(stripBom(text).text ?? "", label);
  } catch {
    throw new SettingsError(label, `unwind could not edit [mcp_servers.${SERVER_NAME}] safely (the result would not parse); nothing was written: add it by hand`);
  }
  const want = JSON.parse(plain(old)) as Json;
  const ws = (want.mcp_servers ??= {}) as Json;
  ws[SERVER_NAME] = { ...((ws[SERVER_NAME] as Json | undefined) ?? {}), command: entry.command, args: [...entry.args] };
  if (plain(fresh) !== canonicalJson(want)) {
    throw new SettingsError(label, `unwind could not edit [mcp_servers.${SERVER_NAME}] safely (the result would change other settings); nothing was written: add it by hand`);
  }
  return { text, action: current === undefined ? "added" : "updated" };
}

function tomlDoc(text: string, label: string): Json {
  try {
    return parseToml(text) as Json;
  } catch (e) {
    throw new SettingsError(label, `not valid TOML (${oneLine(e instanceof Error ? e.message : String(e))})`);
  }
}

/** A TOML document as comparable text: dates as their ISO form, keys sorted. */
function plain(doc: Json): string {
  return canonicalJson(JSON.parse(JSON.stringify(doc, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))));
}

function oneLine(s: string): string {
  const line = s.split("\n")[0] ?? "";
  return line.replace(/\s+/g, " ").trim();
}

/**
 * The key of a table header line (`[a.b]`, `[ a . "b" ]`, `[[a.b]]`, with a
 * comment after it), as its parts; null for any other line. A line inside a
 * multi-line string that looks like a header could be taken for one: the
 * parser's check after the edit catches that.
 */
export function tableKey(line: string): string[] | null {
  const m = /^\s*(\[\[?)\s*([^[\]#]+?)\s*(\]\]?)\s*(#.*)?$/.exec(line);
  if (!m || m[1]!.length !== m[3]!.length) return null;
  const parts: string[] = [];
  for (const raw of m[2]!.match(/"(?:[^"\\]|\\.)*"|'[^']*'|[^.]+/g) ?? []) {
    const p = raw.trim();
    if (p === "") continue;
    parts.push(p.startsWith('"') ? (JSON.parse(p) as string) : p.startsWith("'") ? p.slice(1, -1) : p);
  }
  return parts;
}

/** The lines `key = value` spans in lines[from, to) (an array value may run over several), and its indentation. */
function keyLine(lines: readonly string[], from: number, to: number, key: string): { start: number; end: number; indent: string } | null {
  const re = new RegExp(`^(\\s*)(?:${key}|"${key}"|'${key}')\\s*=(.*)$`);
  for (let i = from; i < to; i++) {
    const m = re.exec(lines[i]!);
    if (!m) continue;
    let depth = 0;
    let j = i;
    let rest = m[2]!;
    for (;;) {
      depth += bracketDepth(rest);
      if (depth <= 0 || j + 1 >= to) break;
      rest = lines[++j]!;
    }
    return { start: i, end: j, indent: m[1]! };
  }
  return null;
}

/** Opening minus closing brackets on a line, outside strings and comments. */
function bracketDepth(s: string): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "#") break;
    if (c === '"' || c === "'") {
      const close = s.indexOf(c, i + 1);
      // Escapes in basic strings: skip the escaped quote.
      let k = close;
      while (c === '"' && k > 0 && s[k - 1] === "\\") k = s.indexOf(c, k + 1);
      if (k === -1) break;
      i = k;
      continue;
    }
    if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") depth--;
  }
  return depth;
}

/**
 * Registers `entry` under the `unwind` name in `<root>/<harness's MCP file>`.
 * Creates the directory and file when missing; writes (atomically, keeping
 * the file's mode, and for JSON its indentation and line endings) only when
 * something changed. `write` false: everything is read and checked, nothing
 * is written.
 */
export function installMcpServer(root: string, harness: Harness, entry: ServerEntry, write = true): McpInitResult {
  const file = mcpConfigFile(harness);
  const f: SettingsFile = readSettingsFile(root, file);
  if (file.endsWith(".toml")) {
    const { text, action } = mergeMcpToml(f.raw, entry, f.target);
    if (action !== "unchanged" && write) writeSettingsFile(f, text);
    return { harness, file, changed: action !== "unchanged", action };
  }
  const existing = parseJsonSettings(f, HARNESSES[harness].settings.comments === true);
  const { settings, action } = mergeMcpJson(existing, entry, f.target);
  if (action !== "unchanged" && write) writeSettingsFile(f, jsonText(f, settings, existing));
  return { harness, file, changed: action !== "unchanged", action };
}
