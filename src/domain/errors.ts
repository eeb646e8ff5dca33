/** Exit codes of SPEC section 4. */
export const Exit = {
  ok: 0,
  partial: 1,
  usage: 2,
  scope: 3,
  damaged: 4,
  internal: 70,
} as const;
export type ExitCode = (typeof Exit)[keyof typeof Exit];

export type ErrorCode =
  | "E_USAGE"
  | "E_NOT_DIR"
  | "E_GIT_MISSING"
  | "E_GIT_OLD"
  | "E_GIT"
  | "E_SCOPE_UNKNOWN"
  | "E_SCOPE_AMBIGUOUS"
  | "E_SCOPE_OTHER_WORKTREE"
  | "E_STORE_DAMAGED"
  | "E_STORE_UNSAFE"
  | "E_STORE_NEWER"
  | "E_LOCKED"
  | "E_PLAN_CHANGED"
  | "E_NOT_BUILT"
  | "E_WATCH"
  | "E_NOT_REVERSIBLE"
  | "E_NOT_ALLOWED"
  | "E_TRANSCRIPT";

const exitFor: Record<ErrorCode, ExitCode> = {
  E_USAGE: Exit.usage,
  E_NOT_DIR: Exit.usage,
  E_GIT_MISSING: Exit.scope,
  E_GIT_OLD: Exit.scope,
  E_GIT: Exit.scope,
  E_SCOPE_UNKNOWN: Exit.scope,
  E_SCOPE_AMBIGUOUS: Exit.scope,
  E_SCOPE_OTHER_WORKTREE: Exit.scope,
  E_STORE_DAMAGED: Exit.damaged,
  // SPEC section 2: a store that is a symlink, another user's, or writable by others is not used; like a damaged one, it needs a person.
  E_STORE_UNSAFE: Exit.damaged,
  // A store a newer unwind wrote: reading it by this format's rules could misread it, so nothing is read; like a damaged one, this unwind cannot use it.
  E_STORE_NEWER: Exit.damaged,
  E_LOCKED: Exit.partial,
  E_PLAN_CHANGED: Exit.scope,
  E_NOT_BUILT: Exit.usage,
  E_WATCH: Exit.scope,
  // SPEC section 9: a run recorded without rollback cannot be taken back; nothing was done.
  E_NOT_REVERSIBLE: Exit.scope,
  // SPEC section 13: over MCP, work that is not the calling session's, unless the person allowed it; nothing was done.
  E_NOT_ALLOWED: Exit.scope,
  // `unwind import`: a client's transcript that cannot be read as one (a line that is no JSON); nothing was imported.
  E_TRANSCRIPT: Exit.scope,
};

/**
 * The one error type that reaches the CLI edge. Everything a person can act
 * on carries a stable code, a one-line message and, where useful, a hint.
 */
export class UnwindError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly exit: ExitCode;

  constructor(code: ErrorCode, message: string, opts: { hint?: string; exit?: ExitCode } = {}) {
    super(message);
    this.name = "UnwindError";
    this.code = code;
    this.hint = opts.hint;
    this.exit = opts.exit ?? exitFor[code];
  }
}

export function usage(message: string, hint?: string): UnwindError {
  return new UnwindError("E_USAGE", message, hint === undefined ? {} : { hint });
}
