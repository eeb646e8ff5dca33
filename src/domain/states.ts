import type { ChangeKind, Observed, State } from "./types.js";

/**
 * Whether what is on disk is the recorded state. Content is compared by
 * SHA-256 where the record has it, else by git oid; a record with neither
 * cannot be proven equal, so it is not.
 */
export function matches(current: Observed, state: State | null): boolean {
  if (state === null) return current.kind === "absent";
  switch (state.kind) {
    case "file":
      if (current.kind !== "file") return false;
      if (state.mode !== undefined && state.mode !== current.mode) return false;
      return sameContent(current, state);
    case "symlink":
      return current.kind === "symlink" && sameContent(current, state);
    case "toolarge":
      return current.kind === "file" && state.sha256 !== undefined && state.sha256 === current.sha256;
    case "gitlink":
      return false; // never compared: the planner refuses gitlinks before asking
    case "unknown":
      return false;
  }
}

function sameContent(current: { sha256: string; oid?: string; cleanOid?: string }, state: State): boolean {
  if (state.clean) return state.oid !== undefined && state.oid === current.cleanOid;
  if (state.sha256 !== undefined) return state.sha256 === current.sha256;
  if (state.oid !== undefined && current.oid !== undefined) return state.oid === current.oid;
  return false;
}

/** Whether a recorded state shows the kind of object now on disk (used to tell a swapped-in symlink from a recorded one). */
export function recordsKind(state: State | null, kind: "symlink" | "dir"): boolean {
  if (state === null) return false;
  if (kind === "symlink") return state.kind === "symlink";
  return state.kind === "gitlink";
}

/** Whether two recorded states hold the same thing: by SHA-256 where both have it, else by git oid; "unknown" when neither can tell. */
export function sameState(a: State | null, b: State | null): boolean | "unknown" {
  if (a?.kind === "unknown" || b?.kind === "unknown") return "unknown";
  if (a === null || b === null) return a === b;
  if (a.kind !== b.kind || (a.mode !== undefined && b.mode !== undefined && a.mode !== b.mode)) return false;
  return sameBytes(a, b);
}

/** Whether two states hold the same bytes: by SHA-256 where both record it, else by git id. */
function sameBytes(a: State, b: State): boolean | "unknown" {
  if (a.sha256 && b.sha256) return a.sha256 === b.sha256;
  // git's clean form against bytes as on disk: where git converts, neither proves the other.
  if (Boolean(a.clean) !== Boolean(b.clean)) return "unknown";
  if (a.oid && b.oid) return a.oid === b.oid;
  // Over-cap files too large to hash: the same stat data (and size) is the same file, other stat data a change.
  if (a.stat && b.stat) return a.stat === b.stat && a.size === b.size;
  return "unknown";
}

/** The one classification of a change from `pre` to `post`, for every scope. */
export function changeKind(pre: State | null, post: State | null): ChangeKind {
  // Not captured: the record cannot say the path was absent, so not "added" (or "deleted").
  if (pre?.kind === "unknown") return post === null ? "deleted" : "modified";
  if (post?.kind === "unknown") return pre === null ? "added" : "modified";
  if (pre === null) return "added";
  if (post === null) return "deleted";
  if (pre.kind !== post.kind) return "typechange";
  if (sameBytes(pre, post) === true) return "mode";
  return "modified";
}
