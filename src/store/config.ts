import { readFileSync } from "node:fs";
import { join } from "node:path";
import { usage } from "../domain/errors.js";
import { rootGlob } from "../domain/glob.js";

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
    file = JSON.parse(readFileSync(join(store, "config.json"), "utf8")) as Partial<Config>;
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
