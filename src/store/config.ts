import { storePath } from "../domain/store-layout.js";
import { readFileSync } from "node:fs";
import { usage } from "../domain/errors.js";
import { rootGlob } from "../domain/glob.js";
import { writeFileAtomic } from "../sys/atomic.js";

export interface Config {
  /** Files larger than this are recorded as `toolarge`: hash, not bytes. */
  sizeCap: number;
  /** Default retention for gc. */
  ttl: string;
  /** `unwind push`: more root-relative globs whose paths' content is left out as secrets (read by `secretPatterns`). */
  share?: { secretPatterns?: unknown };
}

export const DEFAULTS: Config = { sizeCap: 8 * 1024 * 1024, ttl: "30d" };

/** `<store>/config.json`, then `UNWIND_SIZE_CAP`; absent files mean defaults. */
export function loadConfig(store: string): Config {
  let file: Partial<Config> = {};
  try {
    file = JSON.parse(readFileSync(storePath(store, "config.json"), "utf8")) as Partial<Config>;
  } catch {
    /* no config: defaults */
  }
  const cfg = { ...DEFAULTS, ...file };
  const env = process.env.UNWIND_SIZE_CAP;
  if (env !== undefined && env !== "") {
    const n = Number(env);
    if (!Number.isInteger(n) || n < 0) throw usage(`UNWIND_SIZE_CAP=${env}: expected a whole number of bytes`);
    cfg.sizeCap = n;
  }
  return cfg;
}

/** Parses `30d`, `12h`, `45m`, `90s` into milliseconds. */
export function parseDuration(s: string): number {
  const m = /^(\d+)([smhdw])$/.exec(s.trim());
  if (!m) throw usage(`--ttl ${s}: expected a duration such as 30d, 12h or 90m`);
  const unit = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 }[m[2] as "s" | "m" | "h" | "d" | "w"];
  return Number(m[1]) * unit;
}

/**
 * `share.secretPatterns` of config.json, checked here, where a push reads
 * them, and not by `loadConfig`: a bad setting must never stop a hook.
 */
export function secretPatterns(cfg: Config): string[] {
  const list = cfg.share?.secretPatterns;
  if (list === undefined) return [];
  const bad = Array.isArray(list) ? list.find((g) => typeof g !== "string" || g === "" || rootGlob(g, "") === null) : list;
  if (bad !== undefined || !Array.isArray(list)) {
    throw usage(
      `config.json share.secretPatterns: ${JSON.stringify(bad)} is not a path glob inside the work tree`,
      'give a list of root-relative globs, e.g. {"share": {"secretPatterns": ["*.secret", "config/prod/**"]}}',
    );
  }
  return list.map((g) => rootGlob(g as string, "")!);
}

/**
 * What an agent may take back over MCP (SPEC section 13): `own`, only its
 * own session's work (the default), or `any`, whatever the person could.
 */
export type McpAllow = "own" | "any";

export const MCP_ALLOW: readonly McpAllow[] = ["own", "any"];

/**
 * `mcp.allow` of `<store>/config.json`; `own` when the file or the key is
 * absent. A file that does not parse, or a value that is neither, is an
 * error: read as `own` it would refuse without saying why.
 */
export function loadMcpAllow(store: string): McpAllow {
  const file = storePath(store, "config.json");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return "own";
  }
  const allow = (configObject(text, file).mcp as { allow?: unknown } | undefined)?.allow;
  if (allow === undefined) return "own";
  if (!MCP_ALLOW.includes(allow as McpAllow)) throw usage(`${file}: mcp.allow is ${JSON.stringify(allow)}, not "own" or "any"`, "set it with: unwind init --mcp-allow own|any");
  return allow as McpAllow;
}

/** Sets `mcp.allow` in `<store>/config.json`, keeping every other key; a file that does not parse is left as it is. */
export function saveMcpAllow(store: string, allow: McpAllow): void {
  const file = storePath(store, "config.json");
  let cfg: Record<string, unknown> = {};
  try {
    cfg = configObject(readFileSync(file, "utf8"), file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const mcp = typeof cfg.mcp === "object" && cfg.mcp !== null && !Array.isArray(cfg.mcp) ? cfg.mcp : {};
  writeFileAtomic(file, `${JSON.stringify({ ...cfg, mcp: { ...mcp, allow } }, null, 2)}\n`, { mode: 0o600 });
}

function configObject(text: string, file: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw usage(`${file} is not valid JSON`, "fix or remove it; unwind reads it for its settings");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw usage(`${file} is not a JSON object`, "fix or remove it; unwind reads it for its settings");
  return v as Record<string, unknown>;
}
