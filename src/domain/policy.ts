import { usage } from "./errors.js";
import { globToRegExp } from "./glob.js";
import type { ChangeEntry } from "./types.js";

/** What a run's policy says about a path it changed (SPEC section 9). */
export type Decision = "allow" | "review" | "deny";

const DECISIONS: readonly Decision[] = ["allow", "review", "deny"];

/** A run's policy as written in its file, checked. */
export interface Policy {
  default: Decision;
  allow: string[];
  review: string[];
  deny: string[];
  /** false: record hashes only, keep no earlier bytes; undo of the run is refused. */
  rollback: boolean;
}

/** Without a policy file everything is `review`: nothing is taken for intended work unless the person says so. */
export const NO_POLICY: Policy = { default: "review", allow: [], review: [], deny: [], rollback: true };

const KEYS = new Set(["default", "allow", "review", "deny", "rollback"]);

/**
 * Parses a policy file's text. Anything unexpected is a usage error naming
 * the file and the key: a typo (`"denny"`) must not quietly leave a path
 * unprotected. Negated patterns (`!x`) are refused: with "most protective
 * wins" they could never make a path less protected, so they would only
 * mislead.
 */
export function parsePolicy(text: string, source: string): Policy {
  const bad = (what: string) => usage(`policy ${source}: ${what}`, 'a policy is {"default": "review", "allow": [globs], "review": [globs], "deny": [globs], "rollback": true} (docs/policy.md)');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw bad(`not valid JSON (${(e as Error).message})`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw bad("expected a JSON object");
  const obj = raw as Record<string, unknown>;
  for (const k of Object.keys(obj)) if (!KEYS.has(k)) throw bad(`unknown key "${k}"`);
  const def = obj.default ?? "review";
  if (typeof def !== "string" || !DECISIONS.includes(def as Decision)) throw bad(`"default" must be "allow", "review" or "deny"`);
  const list = (k: Decision): string[] => {
    const v = obj[k] ?? [];
    if (!Array.isArray(v) || v.some((g) => typeof g !== "string" || g.trim() === "")) throw bad(`"${k}" must be a list of non-empty glob strings`);
    for (const g of v as string[]) {
      if (g.startsWith("!")) throw bad(`"${k}": negated pattern ${g} is not supported (the most protective list wins; list the path where it belongs)`);
      if (g.split("/").includes("..")) throw bad(`"${k}": ${g} leaves the work tree (globs are relative to the root)`);
    }
    return v as string[];
  };
  const rollback = obj.rollback ?? true;
  if (typeof rollback !== "boolean") throw bad(`"rollback" must be true or false`);
  return { default: def as Decision, allow: list("allow"), review: list("review"), deny: list("deny"), rollback };
}

/**
 * One gitignore-style pattern as a test of a root-relative path: `*` and
 * `?` within a segment, `**` across; a pattern with no `/` (but a trailing
 * one) matches a name at any depth; a leading `/` anchors it to the root; a
 * pattern that names a directory takes everything below it.
 */
export function policyGlob(pattern: string): (path: string) => boolean {
  let g = pattern.trim();
  const anchored = g.startsWith("/");
  g = g.replace(/^\/+/, "").replace(/\/+$/, "");
  const whole = globToRegExp(g);
  const below = globToRegExp(`${g}/**`);
  const anywhere = !anchored && !g.includes("/");
  return (p) => {
    if (whole.test(p) || below.test(p)) return true;
    if (!anywhere) return false;
    // A bare name matches any segment: the file itself, or a directory on its way.
    return p.split("/").some((seg) => whole.test(seg));
  };
}

/** The decision for each path: the most protective list that matches (deny over review over allow), else the default. Pure. */
export function decider(policy: Policy): (path: string) => Decision {
  const tests = DECISIONS.map((d) => ({ d, tests: policy[d].map(policyGlob) }));
  return (path) => {
    let found: Decision | null = null;
    for (const { d, tests: ts } of tests) if (ts.some((t) => t(path))) found = d; // later in DECISIONS is more protective
    return found ?? policy.default;
  };
}

/** Why a run's change to a path cannot be taken back, as far as the record can tell; null when it can. */
export function irreversible(e: Pick<ChangeEntry, "pre" | "post">, rollback: boolean): string | null {
  if (!rollback) return "rollback off: no earlier bytes were kept";
  const states = [e.pre, e.post];
  if (states.some((s) => s?.kind === "toolarge")) return "over the size cap: recorded by size and hash only";
  if (states.some((s) => s?.kind === "gitlink")) return "a submodule: another repository's state";
  if (e.pre?.kind === "unknown") return "its earlier state was never recorded";
  return null;
}
