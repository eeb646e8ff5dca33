/**
 * Whether a harness will actually run the hooks `unwind init` wrote. A
 * harness that does not trust the project runs none of them and says
 * nothing (Codex, Gemini CLI), so a person records nothing and does not know
 * it: `init` names the step still missing, and `status` says whether the
 * hooks have fired (docs/clients.md has what each client needs, as seen).
 *
 * Reads the harness's own files under the user's home; writes nothing.
 */
import { accessSync, constants, readFileSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, sep } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { HARNESSES } from "./index.js";
import { isUnwindHookCommand, readSettingsFile } from "./settings.js";
import { isOwnHarness, ownHooks } from "./own-files.js";
import type { Harness } from "./rules.js";

/** The environment the checks read: the user's home and the harnesses' own variables. */
export type Env = Readonly<Record<string, string | undefined>>;

export interface HookCheck {
  harness: Harness;
  /** Repo-relative settings file. */
  file: string;
  /** Events with unwind's hook, in the harness's order. */
  events: string[];
  /** Events unwind handles that have no unwind hook in this file. */
  missing: string[];
  /** unwind's hook command as installed (the first one found). */
  command: string;
  /** The program the command starts: unwind, by name or path (an `env` in front of it is not it). */
  program: string;
  /** Whether that program is there (by path, or found on PATH). */
  commandFound: boolean;
}

/**
 * unwind's hooks in one settings file of `harness`, or null when it has none
 * (no file, no unwind hook, or a file that cannot be read: `init` reports those).
 */
export function checkHooks(root: string, harness: Harness, file: string, env: Env = process.env): HookCheck | null {
  if (isOwnHarness(harness)) {
    const own = ownHooks(root, harness);
    return own === null ? null : { harness, file, ...own, program: programOf(own.command), commandFound: commandFound(own.command, env) };
  }
  let settings: unknown;
  try {
    const f = readSettingsFile(root, file);
    if (f.raw === undefined) return null;
    settings = parseJsonc(f.raw.replace(/^\uFEFF/, ""), [], { allowTrailingComma: true });
  } catch {
    return null;
  }
  const entries = unwindEntries(settings, harness);
  const events = Object.keys(HARNESSES[harness].events).filter((e) => entries.some((x) => x.event === e));
  const missing = Object.keys(HARNESSES[harness].events).filter((e) => !events.includes(e));
  const command = entries[0]?.command;
  if (command === undefined) return null;
  return { harness, file, events, missing, command, program: programOf(command), commandFound: commandFound(command, env) };
}

/** unwind's hook entries in a parsed settings file, in the harness's event order: where each sits, and its command. */
function unwindEntries(settings: unknown, harness: Harness): { event: string; group: number; handler: number; command: string }[] {
  const hooks = isRecord(settings) && isRecord(settings.hooks) ? settings.hooks : {};
  const out: { event: string; group: number; handler: number; command: string }[] = [];
  const flat = HARNESSES[harness].settings.flat;
  for (const event of Object.keys(HARNESSES[harness].events)) {
    const groups = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    groups.forEach((g, group) => {
      // Copilot CLI: the entry itself sits under the event, its command in `bash`.
      if (flat !== undefined && isRecord(g) && g.hooks === undefined) {
        const c = g[flat.command];
        if (typeof c === "string" && isUnwindHookCommand(c, harness)) out.push({ event, group, handler: 0, command: c });
        return;
      }
      if (!isRecord(g) || !Array.isArray(g.hooks)) return;
      g.hooks.forEach((h, handler) => {
        if (isRecord(h) && typeof h.command === "string" && isUnwindHookCommand(h.command, harness)) out.push({ event, group, handler, command: h.command });
      });
    });
  }
  return out;
}

/** Whether the program a hook command starts exists: an absolute path, or a name on PATH. */
export function commandFound(command: string, env: Env = process.env): boolean {
  const program = programOf(command);
  if (program === "") return false;
  if (program.includes("/")) return isAbsolute(program) && executable(program);
  return (env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && executable(join(dir, program)));
}

/** The words of a shell command, with simple quoting taken off. */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? "");
}

/** The program a hook command starts: its first word, past an `env` and that env's `-u NAME` and `NAME=value` words. */
export function programOf(command: string): string {
  const w = words(command);
  let i = 0;
  if (w[0] === "env") {
    i = 1;
    while (i < w.length && (w[i] === "-u" || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[i]!))) i += w[i] === "-u" ? 2 : 1;
  }
  return w[i] ?? "";
}

/**
 * What the installed hook command puts before unwind: the hook never opens a
 * TLS connection, and Node reads the certificate bundle NODE_EXTRA_CA_CERTS
 * names at every start-up (about 40 ms of a 90 ms hook where it is set, as
 * on machines behind a company proxy, which Claude Code's own docs tell to
 * set it). Only the hook's own process goes without it: git, which it
 * runs, does not read it.
 */
export const HOOK_ENV = "env -u NODE_EXTRA_CA_CERTS";

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `unwind` the hook command should name: the bare name when `unwind` on
 * PATH is this very binary (the command then survives the binary moving, an
 * upgrade or a reinstall elsewhere), else this binary by absolute path.
 */
export function hookProgram(binary: string, env: Env = process.env): string {
  const self = real(binary);
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "" || !isAbsolute(dir)) continue;
    const candidate = join(dir, "unwind");
    if (executable(candidate) && self !== null && real(candidate) === self) return "unwind";
  }
  return /^[\w./@+-]+$/.test(binary) ? binary : `'${binary.replace(/'/g, `'\\''`)}'`;
}

function real(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/**
 * What the harness still needs before it runs the project's hooks, as steps
 * a person can take; empty when nothing is missing that unwind can see.
 */
export function nextSteps(root: string, harness: Harness, env: Env = process.env): string[] {
  const home = env.HOME || homedir();
  if (harness === "claude") return ["restart the Claude Code sessions already open in this project: Claude Code reads hooks when a session starts"];
  if (harness === "opencode") return ["restart the OpenCode sessions already open in this project: OpenCode loads plugins when it starts"];
  // Cline CLI 3.0.65 runs the project's hook files from the next tool call on, with no step of trust or approval.
  if (harness === "cline") return [];
  if (harness === "codex") {
    const config = join(env.CODEX_HOME || join(home, ".codex"), "config.toml");
    const steps: string[] = [];
    if (!codexTrusts(config, root))
      steps.push(`trust the project in Codex (it runs project hooks only in a trusted project): answer yes when codex asks, or add [projects."${root}"] trust_level = "trusted" to ${config}`);
    const keys = codexHookKeys(root);
    const approved = codexApprovals(config);
    if (keys.length === 0 || !keys.every((k) => approved.has(k)))
      steps.push("approve unwind's hooks in Codex: start codex here, type /hooks and approve them (until then they do not run; Codex asks again whenever a hook changes)");
    return steps;
  }
  if (harness === "qwen") return ["restart the Qwen Code sessions already open in this project: Qwen Code reads hooks when a session starts"];
  if (harness === "copilot") {
    const config = join(env.COPILOT_HOME || join(home, ".copilot"), "config.json");
    if (env.COPILOT_ALLOW_ALL === "true" || copilotTrusts(config, root)) return [];
    return [`trust this folder in Copilot CLI (until then it silently runs none of its hooks): start copilot here and trust it, or add "${root}" to "trusted_folders" in ${config}`];
  }
  const folders = env.GEMINI_CLI_TRUSTED_FOLDERS_PATH || join(env.GEMINI_CLI_HOME || home, ".gemini", "trustedFolders.json");
  if (env.GEMINI_CLI_TRUST_WORKSPACE === "true" || geminiTrusts(folders, root)) return [];
  return [
    `trust this folder in Gemini CLI (it runs no hooks in an untrusted folder, and gemini -p exits 55 there): start gemini here and choose to trust it, or add "${root}": "TRUST_FOLDER" to ${folders}`,
  ];
}

/**
 * The keys under which Codex keeps its approval of unwind's hooks in the
 * project's `.codex/hooks.json`: `<file>:<event in snake case>:<group>:<handler>`.
 */
export function codexHookKeys(root: string): string[] {
  const file = join(root, ".codex", "hooks.json");
  let settings: unknown;
  try {
    settings = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return [];
  }
  return unwindEntries(settings, "codex").map((e) => `${file}:${e.event.replace(/(?<!^)([A-Z])/g, "_$1").toLowerCase()}:${e.group}:${e.handler}`);
}

/**
 * The hook keys Codex's config.toml holds an approval for: `[hooks.state."<key>"]`
 * with a `trusted_hash`. Whether that hash is still the hook's only Codex
 * can tell (a changed hook needs approving again): `status` shows whether the hooks ran.
 */
export function codexApprovals(configFile: string): Set<string> {
  return tomlKeysWith(configFile, "hooks\\s*\\.\\s*state", /^trusted_hash\s*=\s*["']sha256:[0-9a-f]+["']/);
}

/** Whether Codex's config.toml has `[projects."<root>"]` with `trust_level = "trusted"`. */
export function codexTrusts(configFile: string, root: string): boolean {
  return tomlKeysWith(configFile, "projects", /^trust_level\s*=\s*["']trusted["']/).has(root);
}

/**
 * The keys of the TOML tables `[<table>."<key>"]` in `file` that hold a line
 * matching `line` (a line scan, enough for the two settings read here; a
 * file that cannot be read holds none).
 */
function tomlKeysWith(file: string, table: string, line: RegExp): Set<string> {
  const found = new Set<string>();
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return found;
  }
  const header = new RegExp(`^\\[\\s*${table}\\s*\\.\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|'([^']*)')\\s*\\]`);
  let key: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const l = raw.trim();
    if (l.startsWith("[")) {
      const m = header.exec(l);
      key = m === null ? undefined : m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2];
    } else if (key !== undefined && line.test(l)) found.add(key);
  }
  return found;
}

/**
 * Whether Copilot CLI's config.json trusts `root`: listed in `trusted_folders`
 * (or `trustedFolders`; 1.0.102 runs a folder's hooks with either), itself or
 * a folder above it.
 */
export function copilotTrusts(configFile: string, root: string): boolean {
  let config: unknown;
  try {
    config = parseJsonc(readFileSync(configFile, "utf8"), [], { allowTrailingComma: true });
  } catch {
    return false;
  }
  if (!isRecord(config)) return false;
  const listed = [config.trusted_folders, config.trustedFolders].flatMap((v) => (Array.isArray(v) ? v : []));
  return listed.some((dir) => typeof dir === "string" && dir !== "" && (root === dir || root.startsWith(dir.endsWith(sep) ? dir : dir + sep)));
}

/**
 * Whether Gemini CLI's trusted folders trust `root`: the longest listed path
 * that holds it decides; TRUST_PARENT trusts the listed path's parent.
 */
export function geminiTrusts(foldersFile: string, root: string): boolean {
  let rules: unknown;
  try {
    rules = parseJsonc(readFileSync(foldersFile, "utf8"), [], { allowTrailingComma: true });
  } catch {
    return false;
  }
  if (!isRecord(rules)) return false;
  let best: { length: number; trusted: boolean } | null = null;
  for (const [path, level] of Object.entries(rules)) {
    const dir = level === "TRUST_PARENT" ? dirname(path) : path;
    if (!(root === dir || root.startsWith(dir.endsWith(sep) ? dir : dir + sep))) continue;
    if (best === null || dir.length > best.length) best = { length: dir.length, trusted: level !== "DO_NOT_TRUST" };
  }
  return best?.trusted ?? false;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
