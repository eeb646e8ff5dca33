import { callName } from "../domain/call-ref.js";
import { checkRepoPath, sortByPath } from "../domain/paths.js";
import type { Action, LaterWrite, Observed, Plan, PlanInput, PlanItem, PlanOptions, Reason, Scope } from "../domain/types.js";
import { matches, recordsKind } from "../domain/states.js";

/**
 * Turns a change set and the observed work tree into a plan: SPEC section 3,
 * row by row. Pure: no fs, no git, no clock. Safety refusals are checked
 * before anything else and `--force` never overrides them; force only
 * overrides the question "did someone change this since?".
 */
export function plan(scope: Scope, inputs: readonly PlanInput[], opts: PlanOptions): Plan {
  return { scope, items: sortByPath(inputs.map((i) => planOne(i, opts))) };
}

export function planOne(input: PlanInput, opts: PlanOptions): PlanItem {
  const { entry } = input;
  // Under a file nothing is at the path: judged as absent, but nothing can be written there while the file stands.
  const underFile = input.current.kind === "blocked" && input.current.file ? input.current.at : null;
  const current: Observed = underFile === null ? input.current : { kind: "absent" };
  // One literal for every item, never `{ ...base, action }`: V8 gives each object built by a leading spread a
  // hidden class of its own (10,000 items, 10,000 classes: megabytes of heap, measured in docs/design.md).
  const item = (action: Action, reason: Reason | null, more?: Pick<PlanItem, "detail" | "merged" | "mergedMode">): PlanItem => ({
    path: entry.path,
    pre: entry.pre,
    post: entry.post,
    expect: input.current,
    action,
    reason,
    ...more,
  });
  const refuse = (reason: Reason, detail?: string): PlanItem => item("conflict", reason, detail === undefined ? undefined : { detail });
  const laterRefusal = (l: LaterWrite) => (l.by ? refuse("later-write", `${l.by} at ${l.at}`) : refuse("changed-since", `changed at ${l.at}, after this scope`));

  // Kept on purpose: nothing about the path is judged, so nothing about it can stop the rest.
  if (input.retained) return item("skip", "retained");
  const problem = checkRepoPath(entry.path);
  if (problem !== null) return refuse("unsafe-path", problem);
  if (opts.reserved?.some((r) => entry.path === r || entry.path.startsWith(r + "/"))) return refuse("unsafe-path", "store");
  if (current.kind === "blocked") return refuse("symlink", `${current.at} is a symlink`);
  // Another repository's state is not ours to write.
  if (entry.pre?.kind === "gitlink" || entry.post?.kind === "gitlink") return refuse("not-regular", "a submodule (gitlink)");

  if (matches(current, entry.pre)) return item("skip", "unchanged");
  // Another machine's record is trusted as the branch is, and a branch never writes where git ignores: such a
  // write (an executable under node_modules/.bin) is a file no `git status` shows. Force does not override it.
  if (input.ignored) return refuse("ignored-path", "git ignores it here, and the record was fetched from another machine");

  // What is on disk must be something we can safely replace.
  if (current.kind === "other") return refuse("not-regular", "not a regular file, symlink or directory");
  if (current.kind === "dir" && !recordsKind(entry.post, "dir") && !recordsKind(entry.pre, "dir")) {
    return refuse("not-regular", "a directory is where the record has a file");
  }
  if (current.kind === "symlink" && !recordsKind(entry.post, "symlink") && !recordsKind(entry.pre, "symlink")) {
    return refuse("symlink", "a symlink the record does not show");
  }
  if (current.kind === "file" && current.nlink > 1) return refuse("hardlink", `${current.nlink} links`);
  // Undo keeps what each path held so it can be redone; bytes over the cap cannot be kept.
  if (current.kind === "file" && current.size > opts.sizeCap) return refuse("toolarge", `${current.size} bytes`);

  // The state to go back to was never recorded: nothing can be written back, forced or not.
  if (entry.pre?.kind === "unknown") return refuse("not-captured", "the state before the scope was never recorded");
  // Bytes over the cap were hashed, never kept: a change to or from them cannot be taken back (nor deleted).
  if (entry.pre?.kind === "toolarge" || entry.post?.kind === "toolarge") return refuse("toolarge", "over the size cap: recorded by size and hash only");
  if (entry.shared?.length && !opts.force) {
    const names = entry.shared.map(callName);
    return refuse("concurrent-call", `also open: ${names.slice(0, 3).join(", ")}${names.length > 3 ? ` and ${names.length - 3} more` : ""}`);
  }
  if (entry.post?.kind === "unknown" && !opts.force) return refuse("not-captured", "what the scope left was never recorded");

  if (input.interleaved && !opts.force) {
    const { by, at, note } = input.interleaved;
    const where = note ?? "between this scope's own writes";
    return by ? refuse("later-write", `${by} at ${at}, ${where}`) : refuse("changed-since", `changed at ${at}, ${where}`);
  }

  const atPost = matches(current, entry.post);
  if (input.partial) {
    // Some hunks only: always by the merge, which writes exactly the hunks' lines back and keeps the rest as it is now.
    if (atPost && input.laterWrite && !opts.force) return laterRefusal(input.laterWrite);
    if (current.kind === "file" && input.merge?.clean && input.merge.sha256 !== undefined) {
      // The merge leaves the file as it is: those hunks are already gone (taken back before, or edited away).
      if (input.merge.sha256 === current.sha256) return item("skip", "unchanged");
      return item("merge", null, { merged: input.merge.sha256, mergedMode: current.mode });
    }
    if (input.laterWrite) return laterRefusal(input.laterWrite);
    return refuse("changed-since", current.kind === "file" ? "a later edit overlaps the hunk" : "the file is not there to take a hunk out of");
  }
  // The record shows a write after the scope's: what is there is theirs, even where it equals what the scope left.
  if (atPost && input.laterWrite && !opts.force) return laterRefusal(input.laterWrite);
  if (atPost || opts.force) {
    if (entry.pre === null) return item("delete", null);
    const readable = canWrite(input);
    if (readable !== null) return refuse(readable);
    if (underFile !== null) return refuse("not-regular", `${underFile} is a file`);
    return item("restore", null);
  }

  if (opts.merge && current.kind === "file" && current.text && input.merge?.clean && input.merge.sha256 !== undefined) {
    // The scope's mode change goes back too, where the mode is still the one it left (SPEC 3).
    const modeBack = entry.pre?.mode !== undefined && entry.post?.mode !== undefined && current.mode === entry.post.mode ? entry.pre.mode : current.mode;
    return item("merge", null, { merged: input.merge.sha256, mergedMode: modeBack });
  }
  if (input.laterWrite) return laterRefusal(input.laterWrite);
  if (opts.merge && input.merge && !input.merge.clean) return refuse("changed-since", "the three-way merge conflicts");
  return refuse("changed-since");
}

/** Why the pre state cannot be written back, or null when it can. */
function canWrite(input: PlanInput): Reason | null {
  const pre = input.entry.pre;
  if (pre === null) return null;
  if (pre.kind === "toolarge") return "toolarge";
  if (pre.kind === "gitlink") return "not-regular";
  if (input.preBlob === "missing") return "missing-blob";
  if (input.preBlob === "mismatch") return "hash-mismatch";
  if (input.preBlob === undefined) return "missing-blob";
  return null;
}
