import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { Sha256 } from "../domain/types.js";
import type { Cas } from "../store/cas.js";
import { sha256 } from "../domain/hash.js";
import type { Context } from "../repo/context.js";
import { configFiles } from "./conversion.js";

/**
 * The ignore rules that live outside the work tree: `info/exclude` and the
 * global excludes file. `.gitignore` files are in every snapshot's tree;
 * these are not, so each snapshot keeps their bytes (in the CAS) to say
 * later what was ignored when it was taken (SPEC section 2: ignore rules
 * are not edits).
 */
export interface Excludes {
  info: Sha256 | null;
  global: Sha256 | null;
}

/** The bytes of both files, null where a file is absent. */
export interface ExcludeTexts {
  info: Buffer | null;
  global: Buffer | null;
}

function readOrNull(f: string | null): Buffer | null {
  if (!f) return null;
  try {
    return readFileSync(f);
  } catch {
    return null;
  }
}

/**
 * Where git reads the global excludes: `core.excludesFile` from the last
 * config file that names it (read as text: a snapshot must not spawn git
 * for this), else `$XDG_CONFIG_HOME/git/ignore`.
 */
export function globalExcludesFile(ctx: Context): string | null {
  let named: string | null = null;
  for (const f of configFiles(ctx)) {
    let text: string;
    try {
      text = readFileSync(f, "utf8");
    } catch {
      continue;
    }
    // Only in [core]: a section header on a line of its own sets where the lines below belong.
    let core = false;
    for (const line of text.split(/\r?\n/)) {
      const header = /^\s*\[\s*([A-Za-z0-9.-]+)/.exec(line);
      if (header) core = header[1]!.toLowerCase() === "core";
      const m = core ? /^\s*excludesfile\s*=\s*("?)(.*?)\1\s*$/i.exec(line) : null;
      if (m) named = m[2]!;
    }
  }
  if (named) return named.startsWith("~/") ? join(homedir(), named.slice(2)) : resolve(ctx.root, named);
  const xdg = process.env.XDG_CONFIG_HOME || (process.env.HOME ? join(process.env.HOME, ".config") : null);
  return xdg ? join(xdg, "git", "ignore") : null;
}

export function excludeTexts(ctx: Context): ExcludeTexts {
  return { info: readOrNull(join(ctx.commonDir, "info", "exclude")), global: readOrNull(globalExcludesFile(ctx)) };
}

/** The texts kept in the CAS (deduplicated: unchanged files cost nothing), named by their hashes. */
export function keepExcludes(cas: Cas, t: ExcludeTexts): Excludes {
  return { info: t.info ? cas.put(t.info) : null, global: t.global ? cas.put(t.global) : null };
}

/** The texts a snapshot kept; null where the record cannot say (a snapshot from before they were kept, or content gone). */
export function loadExcludes(cas: Cas, e: Excludes | undefined): ExcludeTexts | null {
  if (!e) return null;
  try {
    return { info: e.info ? cas.get(e.info) : null, global: e.global ? cas.get(e.global) : null };
  } catch {
    return null;
  }
}

/** Whether two sets of rules are the same; unknown rules are never the same. */
export function sameExcludes(a: ExcludeTexts | null, b: ExcludeTexts | null): boolean {
  if (!a || !b) return false;
  const h = (x: Buffer | null) => (x ? sha256(x) : "-");
  return h(a.info) === h(b.info) && h(a.global) === h(b.global);
}
