/**
 * `unwind init --claude|--codex|--gemini`: merge unwind's capture hooks into
 * a harness's project settings file, as that harness's rules describe it
 * (its file, its events, the hook entry it takes).
 *
 * The merge is the part that must be right. It never drops or reorders
 * anything the user had (other settings, other events, other matcher groups,
 * other hooks in a group); it is idempotent (a second run changes nothing);
 * a moved binary updates unwind's one entry in place; and a file it does not
 * understand (invalid JSON, `hooks` of the wrong type) is left untouched and
 * reported, one line, naming the file.
 */
import { lstatSync, mkdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { applyEdits, type FormattingOptions, type JSONPath, modify, type ParseError, parse as parseJsonc, printParseErrorCode, visit } from "jsonc-parser";
import { writeFileAtomic } from "../../sys/atomic.js";
import { HARNESSES } from "./index.js";
import type { Harness } from "./rules.js";

export interface InitResult {
  harness: Harness;
  /** Repo-relative settings file, e.g. ".claude/settings.json". */
  file: string;
  /** Whether the file was (re)written. */
  changed: boolean;
  /** Events that got unwind's hook added, e.g. ["PreToolUse", "PostToolUse"]. */
  added: string[];
  /** Events whose existing unwind hook had another command (the binary moved) and was updated in place. */
  updated: string[];
}

export interface MergeResult {
  settings: unknown;
  added: string[];
  updated: string[];
}

type Json = Record<string, unknown>;

/** The repo-relative settings file `unwind init` edits for a harness. */
export function hookSettingsFile(harness: Harness): string {
  return HARNESSES[harness].settings.file;
}

/** The settings file for `harness`: its shared project file, or with `local` its file for this machine only. */
export function settingsFileOf(harness: Harness, local: boolean): string {
  const rules = HARNESSES[harness].settings;
  if (!local) return rules.file;
  if (rules.local === undefined) throw new Error(`--local: ${harness} has no settings file for this machine only; --local is for Claude Code (.claude/settings.local.json)`);
  return rules.local;
}

/**
 * The hook command installed for a harness: `${command} hook <harness>`, and
 * the event after it where the payload does not name it (Copilot CLI).
 */
export function hookCommand(harness: Harness, command: string, event?: string): string {
  return HARNESSES[harness].settings.eventArg && event !== undefined ? `${command} hook ${harness} ${event}` : `${command} hook ${harness}`;
}

/**
 * Whether `cmd` is an unwind hook command for `harness`: it ends with
 * `hook <harness>` and what comes before names unwind as a path segment or a
 * package (`/opt/bin/unwind`, `npx unwind@1.2`, `node .../unwind/dist/cli.js`).
 * `other-tool hook claude` is not unwind's and is never touched.
 */
export function isUnwindHookCommand(cmd: string, harness: Harness): boolean {
  // Copilot CLI's command ends in its event: `unwind hook copilot preToolUse` (one without is a stale one of ours).
  const m = HARNESSES[harness].settings.eventArg ? /^(.*\S)\s+hook\s+(\S+)(?:\s+[A-Za-z]+)?\s*$/s.exec(cmd) : /^(.*\S)\s+hook\s+(\S+)\s*$/s.exec(cmd);
  if (m === null || m[2] !== harness) return false;
  const prefix = m[1] ?? "";
  return prefix
    .replace(/["']/g, " ")
    .split(/\s+/)
    .some((token) => token.split(/[/\\]/).some((seg) => /^unwind(@[^\s]*)?(\.(c|m)?js|\.cmd|\.exe|\.ps1|\.sh)?$/i.test(seg)));
}

export class SettingsError extends Error {
  constructor(label: string, problem: string) {
    super(`${label}: ${problem}; fix it by hand (or move it aside), then run unwind init again`);
    this.name = "SettingsError";
  }
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `a ${typeof v}`;
}

/** A matcher an earlier `unwind init` wrote: none, every tool, or every tool but a list. */
function unwindsMatcher(m: unknown): boolean {
  return m === undefined || m === "*" || m === "" || (typeof m === "string" && /^\^\(\?!\(\?:[\w|\\.-]*\)\$\)(\.\*)?$/.test(m));
}

function merge(harness: Harness, existing: unknown, command: string, label: string): MergeResult {
  const rules = HARNESSES[harness];
  if (existing !== undefined && !isObject(existing)) {
    throw new SettingsError(label, `the top level is ${describe(existing)}, expected a JSON object`);
  }
  // Work on a copy: the caller's value is never mutated. Key order survives a JSON round trip.
  // A file with nothing in it yet starts as the client writes one; a user's file keeps what it says.
  const fresh = existing === undefined || Object.keys(existing).length === 0;
  const settings: Json = fresh ? { ...rules.settings.fresh } : (JSON.parse(JSON.stringify(existing)) as Json);
  if (settings.hooks === undefined) settings.hooks = {};
  const hooks = settings.hooks;
  if (!isObject(hooks)) throw new SettingsError(label, `"hooks" is ${describe(hooks)}, expected an object`);

  const added: string[] = [];
  const updated: string[] = [];
  // Copilot CLI's entries sit right under the event, each with its own matcher, the command in `bash`.
  const flat = rules.settings.flat;
  const field = flat?.command ?? "command";
  for (const event of Object.keys(rules.events)) {
    const full = hookCommand(harness, command, event);
    const groups = hooks[event];
    if (groups === undefined) {
      hooks[event] = [rules.settings.group(full)];
      added.push(event);
      continue;
    }
    if (!Array.isArray(groups)) throw new SettingsError(label, `"hooks.${event}" is ${describe(groups)}, expected an array`);

    // Every hook entry of the event, checked for shape before anything is decided.
    const entries: Json[] = [];
    const groupOf = new Map<Json, Json>();
    groups.forEach((group: unknown, gi) => {
      const where = `hooks.${event}[${gi}]`;
      if (!isObject(group)) throw new SettingsError(label, `"${where}" is ${describe(group)}, expected an object`);
      if (flat !== undefined && group.hooks === undefined) {
        entries.push(group);
        groupOf.set(group, group);
        return;
      }
      if (group.hooks === undefined) return;
      if (!Array.isArray(group.hooks)) throw new SettingsError(label, `"${where}.hooks" is ${describe(group.hooks)}, expected an array`);
      group.hooks.forEach((entry: unknown, hi) => {
        if (!isObject(entry)) throw new SettingsError(label, `"${where}.hooks[${hi}]" is ${describe(entry)}, expected an object`);
        entries.push(entry);
        groupOf.set(entry, group);
      });
    });

    const current = entries.find((e) => e[field] === full);
    const stale = current ?? entries.find((e) => typeof e[field] === "string" && isUnwindHookCommand(e[field], harness));
    if (stale !== undefined) {
      let changed = false;
      if (stale[field] !== full) {
        stale[field] = full; // the binary moved: update the one entry in place, keep its other fields
        changed = true;
      }
      // A group holding unwind's hook alone, under a matcher unwind wrote, follows this version's
      // matcher (which tools start no hook). A matcher the user gave it, or a group they put other
      // hooks in, is theirs and stays. A flat entry is its own group.
      const group = groupOf.get(stale)!;
      const matcher = rules.settings.group(full).matcher;
      const alone = group === stale || (group.hooks as unknown[]).length === 1;
      if (alone && group.matcher !== matcher && unwindsMatcher(group.matcher)) {
        if (matcher === undefined) delete group.matcher;
        else group.matcher = matcher;
        changed = true;
      }
      if (changed) updated.push(event);
      continue;
    }
    groups.push(rules.settings.group(full));
    added.push(event);
  }
  return { settings, added, updated };
}

/**
 * Pure: `existing` (the parsed settings file, or undefined when there is
 * none) with unwind's hooks merged in. Never mutates `existing`. Throws an
 * Error naming the file and the problem when the shape is unexpected.
 */
export function mergeHooks(harness: Harness, existing: unknown | undefined, command: string): MergeResult {
  return merge(harness, existing, command, HARNESSES[harness].settings.file);
}

/** The indentation the file already uses (2 spaces when it has none). */
function detectIndent(raw: string): string | number {
  const m = /\n([ \t]+)\S/.exec(raw);
  if (m === null || m[1] === undefined) return 2;
  if (m[1].startsWith("\t")) return "\t";
  return Math.min(m[1].length, 10);
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

/** A settings file as read: where it really is (a symlink is followed), its text and mode (undefined when missing). */
export interface SettingsFile {
  /** `<root>/<file>`, for messages. */
  label: string;
  /** The file written: the symlink's target when the file is a symlink. */
  target: string;
  raw: string | undefined;
  mode: number | undefined;
}

/**
 * Reads `<root>/<file>` for an edit. A settings file kept as a symlink
 * (dotfile managers) is edited where it points, not replaced; a file that
 * cannot be read is reported, one line, naming it.
 */
export function readSettingsFile(root: string, file: string): SettingsFile {
  const label = join(root, file);
  let target = label;
  let mode: number | undefined;
  let raw: string | undefined;
  let isLink = false;
  try {
    isLink = lstatSync(target).isSymbolicLink();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // A parent that is a file: the file cannot be written later either, so say so now, before anything is written.
    if (code === "ENOTDIR") throw new SettingsError(label, `${dirname(file)} is in the way: it is a file, not a directory`);
    if (code !== "ENOENT") throw new SettingsError(target, `cannot read it (${code ?? oneLine(String(e))})`);
  }
  try {
    if (isLink) target = realpathSync(target);
    const st = statSync(target);
    if (!st.isFile()) throw new SettingsError(target, "not a regular file");
    mode = st.mode & 0o7777;
    raw = readFileSync(target, "utf8");
  } catch (e) {
    if (e instanceof SettingsError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (isLink && code === "ENOENT") throw new SettingsError(label, "a symlink to a missing file");
    if (code !== "ENOENT") throw new SettingsError(target, `cannot read it (${code ?? oneLine(String(e))})`);
  }
  return { label, target, raw, mode };
}

/** The file's text without a byte order mark, and whether it had one. */
export function stripBom(raw: string | undefined): { text: string | undefined; bom: boolean } {
  const bom = raw?.startsWith("\uFEFF") ?? false;
  return { text: bom ? raw!.slice(1) : raw, bom };
}

/**
 * Parses a JSON settings file (undefined when missing or empty). `comments`:
 * the harness reads it as JSON with comments (Gemini CLI), so comments and
 * trailing commas are accepted here too.
 */
export function parseJsonSettings(f: SettingsFile, comments: boolean): unknown {
  const { text } = stripBom(f.raw);
  if (text === undefined || text.trim() === "") return undefined;
  if (comments) {
    const errors: ParseError[] = [];
    const value = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
    const first = errors[0];
    if (first !== undefined) {
      const line = text.slice(0, first.offset).split("\n").length;
      throw new SettingsError(f.target, `not valid JSON with comments (${printParseErrorCode(first.error)} on line ${line})`);
    }
    return value;
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new SettingsError(f.target, `not valid JSON (${oneLine((e as Error).message)})`);
  }
}

/** Whether the text has a comment (outside strings): then it is edited in place, not written anew. */
function hasComments(text: string): boolean {
  let found = false;
  visit(text, { onComment: () => (found = true) }, { disallowComments: false, allowTrailingComma: true });
  return found;
}

/**
 * The file's text with `before` (what it held) turned into `value`: the
 * file's indentation, line endings and byte order mark kept. A file with
 * comments is edited in place, one value at a time, so every comment and
 * every line unwind has no business with stays as it was; one without is
 * written anew, in the file's own indentation (a JSON round trip keeps the
 * order of keys).
 */
export function jsonText(f: SettingsFile, value: unknown, before?: unknown): string {
  const { text, bom } = stripBom(f.raw);
  const indent = f.raw === undefined ? 2 : detectIndent(f.raw);
  const eol = f.raw?.includes("\r\n") ? "\r\n" : "\n";
  let out: string;
  if (text !== undefined && before !== undefined && hasComments(text)) {
    const formatting: FormattingOptions = { insertSpaces: indent !== "\t", tabSize: typeof indent === "number" ? indent : 1, eol };
    out = editInPlace(text, [], before, value, formatting);
  } else {
    out = JSON.stringify(value, null, indent) + "\n";
    if (eol === "\r\n") out = out.replace(/\n/g, "\r\n");
  }
  return bom ? "\uFEFF" + out : out;
}

/** Edits `text` at `path` from `before` to `after`: only what differs, arrays grown by appending. */
function editInPlace(text: string, path: JSONPath, before: unknown, after: unknown, formatting: FormattingOptions): string {
  if (JSON.stringify(before) === JSON.stringify(after)) return text;
  const apply = (at: JSONPath, value: unknown, insert = false) => applyEdits(text, modify(text, at, value, { formattingOptions: formatting, isArrayInsertion: insert }));
  if (isObject(before) && isObject(after)) {
    for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) text = apply([...path, key], undefined);
    for (const key of Object.keys(after)) text = editInPlace(text, [...path, key], before[key], after[key], formatting);
    return text;
  }
  if (Array.isArray(before) && Array.isArray(after) && after.length >= before.length) {
    for (let i = 0; i < before.length; i++) text = editInPlace(text, [...path, i], before[i], after[i], formatting);
    for (let i = before.length; i < after.length; i++) text = apply([...path, -1], after[i], true);
    return text;
  }
  return apply(path, after);
}

/** Writes the file atomically, keeping its mode; creates its directory when missing. */
export function writeSettingsFile(f: SettingsFile, text: string): void {
  try {
    mkdirSync(dirname(f.target), { recursive: true });
  } catch (e) {
    throw new SettingsError(dirname(f.target), `cannot create the directory (${(e as NodeJS.ErrnoException).code ?? oneLine(String(e))})`);
  }
  writeFileAtomic(f.target, text, f.mode === undefined ? {} : { mode: f.mode });
}

/**
 * Merges unwind's hooks into `<root>/<settings file>` for `harness`. Creates
 * the directory and file when missing; writes (atomically, keeping the
 * file's mode, indentation and line endings) only when something changed.
 * `write` false: everything is read and checked, nothing is written.
 */
export function installHooks(root: string, harness: Harness, command: string, write = true, local = false): InitResult {
  const file = settingsFileOf(harness, local);
  const f = readSettingsFile(root, file);
  const existing = parseJsonSettings(f, HARNESSES[harness].settings.comments === true);
  const { settings, added, updated } = merge(harness, existing, command, f.target);
  const changed = added.length > 0 || updated.length > 0;
  if (changed && write) writeSettingsFile(f, jsonText(f, settings, existing));
  return { harness, file, changed, added, updated };
}
