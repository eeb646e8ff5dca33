/**
 * The domain types every scope shares: a scope resolves to a ChangeSet, a
 * ChangeSet plus the observed work tree becomes a Plan, an applied Plan
 * becomes a Receipt.
 */

declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

/** Repo-relative, `/`-separated, validated once by `toRepoPath`. */
export type RepoPath = Brand<string, "RepoPath">;
export type Sha256 = Brand<string, "Sha256">;
export type GitOid = Brand<string, "GitOid">;

/** "unknown": the record never saw this state (not captured), so it equals nothing. */
export type StateKind = "file" | "symlink" | "gitlink" | "toolarge" | "unknown";

/** A recorded state of one path. `null` (not this type) means the path was absent. */
export interface State {
  kind: StateKind;
  mode?: string;
  size?: number;
  sha256?: Sha256;
  oid?: GitOid;
  /** A `toolarge` file too large to hash, known by its stat data instead: `ino:mtimeMs:ctimeMs` (src/capture/toolarge.ts). */
  stat?: string;
  /**
   * The blob is git's clean form of the file, not its bytes: a snapshot
   * taken before snapshots held bytes as on disk (src/capture/disk-form.ts),
   * in a repository where git converts. It compares only with its own kind.
   */
  clean?: true;
}

export type ChangeKind = "added" | "modified" | "deleted" | "typechange" | "mode";

export interface ChangeEntry {
  path: RepoPath;
  change: ChangeKind;
  /** What undo restores; null: the path did not exist. */
  pre: State | null;
  /** What undo expects to find; null: the scope left the path absent. */
  post: State | null;
  /** Who made the change (sessions, or "snapshot", "receipt"). */
  by: string[];
  /** Calls outside the scope whose windows were open when the change happened: any of them may have made it. */
  shared?: CallRef[];
  /** A call of the scope was closed by something other than its own post capture. */
  unclosed?: true;
}

/** One tool call of one session. */
export interface CallRef {
  session: string;
  call: string;
}

export type ScopeKind = "snapshot" | "session" | "call" | "from-call" | "task" | "run" | "baseline" | "receipt";

export interface Scope {
  kind: ScopeKind;
  id: string;
  /** With `from-call`: how many calls of the session it covers, that one and those after it. */
  calls?: number;
}

/**
 * Who started an undo, restore or redo (SPEC section 13), as its receipt
 * records it: the command line, the web UI, an agent over MCP (with the
 * calling session where the client says), or a program through the library.
 */
export interface StartedBy {
  client: "cli" | "ui" | "mcp" | "library";
  /** The calling agent's session (`claude:<id>`), over MCP when known. */
  session?: string;
}

export interface ChangeSet {
  scope: Scope;
  entries: ChangeEntry[];
  /**
   * Calls of the scope no capture saw (imported shell calls, docs/import.md):
   * what they changed is unknown, so nothing of theirs is in `entries` and
   * nothing of theirs is taken back. Absent when there are none.
   */
  uncaptured?: UncapturedCall[];
}

/** A call of a scope whose effects the record does not hold. */
export interface UncapturedCall {
  session: string;
  call: string;
  tool: string;
  at: string;
  /** What it ran, where the transcript says (a shell command). */
  command?: string;
}

/** What is on disk at a path right now, as the planner needs to know it. */
/**
 * The stat data a file was read with. Equal stat data later proves the file
 * unchanged since, where its times are older than the file system's clock
 * when the read began (git's racy-file rule: a write in the same clock tick
 * could leave them as they were).
 */
export interface Stamp {
  dev: number;
  ino: number;
  mode: number;
  nlink: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

export type Observed =
  | { kind: "absent" }
  | { kind: "file"; mode: string; size: number; nlink: number; sha256: Sha256; oid?: GitOid; cleanOid?: GitOid; text: boolean; stamp?: Stamp }
  | { kind: "symlink"; target: Buffer; sha256: Sha256; oid?: GitOid }
  | { kind: "dir" }
  | { kind: "other" }
  /**
   * A parent of the path is a symlink (the path cannot be reached safely),
   * or, with `file`, a file or other non-directory (nothing is at the path,
   * and nothing can be written there while it stands).
   */
  | { kind: "blocked"; at: string; file?: true };

export type Action = "restore" | "delete" | "merge" | "skip" | "conflict";

export type Reason =
  | "unchanged"
  | "changed-since"
  | "later-write"
  | "unsafe-path"
  | "symlink"
  | "hardlink"
  | "not-regular"
  | "hash-mismatch"
  | "missing-blob"
  | "toolarge"
  /** Calls outside the scope may have made the change (their windows were open too). */
  | "concurrent-call"
  /** The state to go back to was never recorded. */
  | "not-captured"
  /** Git ignores the path here, and the record is another machine's (fetched): it is never written. */
  | "ignored-path"
  /** Not a refusal: writing failed (permissions, a full disk); the path was left as it was. */
  | "io-error"
  /** A run's `allow` path under `--safe-only`: intended work, kept as it is (a skip, not a conflict). */
  | "retained";

export type BlobStatus = "ok" | "missing" | "mismatch";

/** Someone (named, or an unknown writer: by null) changed a path between two of a scope's own changes, or may have made one of them (note). */
export interface Interleaved {
  by: string | null;
  at: string;
  note?: string;
}

export interface LaterWrite {
  /** The session, or null for a writer no call accounts for. */
  by: string | null;
  at: string;
}

/** Everything the planner knows about one path; gathered at the edge. */
export interface PlanInput {
  entry: ChangeEntry;
  current: Observed;
  /** Whether the bytes of `entry.pre` can be read back intact (only asked when pre is a file or symlink). */
  preBlob?: BlobStatus;
  laterWrite?: LaterWrite;
  /**
   * Someone wrote the path between two of this scope's own writes (another
   * session, named, or an unknown writer: by null). The scope's last state
   * then holds their work too, so restoring the scope's first state would
   * take it back with ours.
   */
  interleaved?: Interleaved;
  /** Result of the three-way merge current <- (post -> pre), when `--merge` asked for one. */
  merge?: { clean: boolean; sha256?: Sha256 };
  /** Kept as intended work (a run's `allow` path under `--safe-only`): never touched, reported as a skip. */
  retained?: true;
  /** Git ignores the path in this work tree, and the change set is a fetched record: never written (`ignored-path`). */
  ignored?: true;
  /**
   * Some hunks of the change only (`undo --hunk`): `entry.pre` is the change's
   * result with those hunks taken back, and `merge` the three-way merge of
   * the file as it is now <- (post -> that), which keeps every later edit
   * outside them.
   */
  partial?: true;
}

export interface PlanOptions {
  force: boolean;
  merge: boolean;
  /** Files larger than this cannot be kept for redo, so they are never overwritten or deleted. */
  sizeCap: number;
  /** Repo-relative prefixes that are never written (the store, when it lives inside the root). */
  reserved?: readonly string[];
}

export interface PlanItem {
  path: RepoPath;
  action: Action;
  reason: Reason | null;
  detail?: string;
  pre: State | null;
  post: State | null;
  /** The state the applier must still find right before it writes. */
  expect: Observed;
  merged?: Sha256;
  /** The mode a merge writes: the scope's earlier one where the mode is still the one it left. */
  mergedMode?: string;
}

export interface Plan {
  scope: Scope;
  items: PlanItem[];
}

export type Counts = Record<"restore" | "delete" | "merge" | "skip" | "conflict", number>;
