/**
 * The scope kinds (SPEC section 4), declared once. The command line's
 * options, the library's and the UI's accepted keys, the messages that list
 * the kinds and the resolver table (src/scope/resolve.ts) all read this
 * table, so a kind added here is a flag, a key and a resolver everywhere, and
 * one left out of the resolver table fails to compile.
 */

/** A scope as a caller names it: exactly one kind, except that `session` beside `call` or `fromCall` narrows it. */
export type ScopeInput =
  | { session: string }
  | { call: string; session?: string }
  | { fromCall: string; session?: string }
  | { task: string }
  | { snapshot: string; to?: string }
  | { run: string }
  | { baseline: string };

/** Every key a scope may have: what a JavaScript caller or a command line hands in, checked by `checkScope`. */
export interface ScopeFields {
  session?: string | undefined;
  call?: string | undefined;
  /** Call C and every later call of its session. */
  fromCall?: string | undefined;
  task?: string | undefined;
  snapshot?: string | undefined;
  to?: string | undefined;
  run?: string | undefined;
  baseline?: string | undefined;
}

/** How lists show ids that the command line takes back. */
export const ID_HELP = "an id, or a unique prefix or suffix of 6+ characters (as the lists show them)";

interface KindSpec {
  /** The key in ScopeFields (and the library's, the UI's and MCP's argument name). */
  key: keyof ScopeFields;
  /** The command-line option, with its argument. */
  flag: string;
  help: string;
  /** The keys that may go beside this one, narrowing it (not a second scope). */
  with?: readonly (keyof ScopeFields)[];
}

export const SCOPE_KINDS = {
  session: { key: "session", flag: "--session <id>", help: "a session: full name, bare id, or unique prefix of 6+ characters" },
  call: { key: "call", flag: "--call <id>", help: "one tool call (with --session to pick among sessions that share the id)", with: ["session"] },
  "from-call": { key: "fromCall", flag: "--from-call <id>", help: "this tool call and every later call of its session", with: ["session"] },
  task: { key: "task", flag: "--task <name>", help: "a task: its sessions, or its branch when bound with `unwind task start`" },
  snapshot: { key: "snapshot", flag: "--snapshot <id>", help: `changes since this snapshot (${ID_HELP})`, with: ["to"] },
  run: { key: "run", flag: "--run <id>", help: `a run capsule: ${ID_HELP}` },
  baseline: { key: "baseline", flag: "--baseline <key>", help: "a stage baseline: each governed path from the state the stage found to now" },
} as const satisfies Record<string, KindSpec>;

export type ScopeKind = keyof typeof SCOPE_KINDS;

export const KINDS = Object.keys(SCOPE_KINDS) as ScopeKind[];

/** The narrowing options that are not kinds of their own, with their command-line form. */
export const NARROWING = { to: { flag: "--to <id>", help: "with --snapshot: up to this snapshot (default: the work tree now)" } } as const;

/** Every key a scope may carry, kinds and narrowing. */
export const SCOPE_KEYS: readonly (keyof ScopeFields)[] = [...KINDS.map((k) => SCOPE_KINDS[k].key), ...(Object.keys(NARROWING) as (keyof ScopeFields)[])];

/** The command-line flag of a kind or a narrowing key: `--from-call`, `--to`. */
export const flagOf = (k: ScopeKind | keyof typeof NARROWING): string => (k in SCOPE_KINDS ? SCOPE_KINDS[k as ScopeKind].flag : NARROWING[k as "to"].flag).split(" ")[0]!;

/** The key a kind's id is under. */
export const keyOf = (k: ScopeKind | keyof typeof NARROWING): keyof ScopeFields => (k in SCOPE_KINDS ? SCOPE_KINDS[k as ScopeKind].key : (k as "to"));

/** "--session, --call, … or --baseline": what a message lists as the ways to name a scope. */
export const kindFlags = (): string => {
  const flags = KINDS.map(flagOf);
  return `${flags.slice(0, -1).join(", ")} or ${flags.at(-1)}`;
};

/** "{ session }, { call, session? }, …": the shapes a library caller may hand in. */
export const kindShapes = (): string => KINDS.map((k) => `{ ${[SCOPE_KINDS[k].key, ...withKeys(k).map((w) => `${w}?`)].join(", ")} }`).join(", ");

/** The keys that may go beside a kind, narrowing it. */
export const withKeys = (k: ScopeKind): readonly (keyof ScopeFields)[] => (SCOPE_KINDS[k] as KindSpec).with ?? [];
