import type { Action, Reason } from "../../domain/types.js";

/**
 * Every reason of SPEC section 3 in words: what happened to the path, and
 * what the person can do about it. A `Record` over the `Reason` type, so a
 * reason added to the engine without words here fails to compile.
 */
export const REASONS: Record<Reason, { why: string; todo: string }> = {
  retained: {
    why: "The run's policy allows this change: a safe-only undo keeps it.",
    todo: "Nothing to do; undo without --safe-only to take it back too.",
  },
  unchanged: {
    why: "It already holds what it held before this work: nothing to take back.",
    todo: "Nothing to do.",
  },
  "changed-since": {
    why: "Someone changed this file after this work wrote it, and no record says who.",
    todo: "See what changed since, below. Merge takes back only this work's lines and keeps the later edit (text files); Force overwrites it (the receipt keeps it, so Redo brings it back).",
  },
  "later-write": {
    why: "Another session wrote this file later (named below); undoing this work here would throw that session's edit away.",
    todo: "See what changed since, below. Undo that session first, or Merge to keep its lines, or Force to overwrite them (the receipt keeps them).",
  },
  "unsafe-path": {
    why: "The path leads outside the work tree, into .git or into unwind's store: unwind never writes there.",
    todo: "Nothing unwind will do; fix the path by hand if it matters. Force does not override this.",
  },
  symlink: {
    why: "The path, or a directory above it, is now a symbolic link the record does not show: writing would go through the link to somewhere else.",
    todo: "Replace the link with what it should be by hand, then preview again. Force does not override this.",
  },
  hardlink: {
    why: "The file has other hard links: writing it would change those files too.",
    todo: "Break the link (copy the file and move the copy over it), then preview again. Force does not override this.",
  },
  "not-regular": {
    why: "Something other than a file is there now: a directory, a fifo, a socket or a device.",
    todo: "Move it out of the way by hand, then preview again. Force does not override this.",
  },
  "hash-mismatch": {
    why: "The stored bytes to go back to fail their SHA-256 check: the store is damaged.",
    todo: "Run Verify to see the damage. This path cannot be taken back from the record; Force does not override this.",
  },
  "missing-blob": {
    why: "The bytes to go back to are missing from the store (removed by gc, or lost).",
    todo: "Run Verify. This path cannot be taken back from the record; restore it from git or a backup.",
  },
  toolarge: {
    why: "The file is over the size cap: its bytes were recorded as size and hash only, so undo cannot bring them back, and it never deletes such a file.",
    todo: "Restore it by hand (git, a backup). Raise the size cap in unwind's config to keep such files in future.",
  },
  "concurrent-call": {
    why: "Other calls were running at the same time (named below): any of them may have made this change, so unwind does not guess.",
    todo: "Undo a scope that holds them all (their session or task), or Force to take it back anyway (the receipt keeps it).",
  },
  "not-captured": {
    why: "What the path held before this work was never recorded, so there is nothing to go back to.",
    todo: "Restore it by hand, or from a snapshot taken before (restore preview).",
  },
  "ignored-path": {
    why: "Git ignores this path here, and the record came from another machine: a file written there would be one no git status shows (an executable under node_modules/.bin, say).",
    todo: "Check the path and its content by hand; write it yourself if you want it. Force does not override this.",
  },
  "io-error": {
    why: "Writing failed (permissions, a full disk); the path was left as it was.",
    todo: "Fix the cause, then preview and apply again.",
  },
};

export const ACTIONS: Record<Action, string> = {
  restore: "writes back what it held before",
  delete: "deletes it: this work created it",
  merge: "takes back only this work's lines; later edits stay",
  skip: "leaves it alone",
  conflict: "leaves it alone: see why",
};
